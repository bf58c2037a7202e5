// Guide, "DLPack": the C++ side of handing tensors between loom and another framework (PyTorch,
// CuPy, ...). twice() is what a Python binding would call with two tensors it received;
// make_ramp() returns a loom array for the framework to take over. main() plays the framework:
// it exports loom arrays itself, hands them over, and checks the results against a plain loop
// (host tensors always, device tensors where cuda_available()).
#include <loom/loom.hpp>

#include <cmath>
#include <cstdio>
#include <numeric>
#include <vector>

// [guide:dlpack_in]
// y = 2 x on two tensors another framework handed over: the DLManagedTensorVersioned pointers
// inside two "dltensor_versioned" capsules. `k` is built for the device the tensors are on.
void twice(loom::KernelFunction& k, DLManagedTensorVersioned* x, DLManagedTensorVersioned* y) {
    loom::DLPackTensor in(x), out(y); // owns both now: each deleter runs at the end of scope
    k(loom::args("x", in, "y", out));  // checked like any array: dtype, shape, strides, device
    k.synchronize();                   // finished with the memory before the deleters run
}
// [/guide:dlpack_in]

// [guide:dlpack_out]
// A loom array handed to another framework: the memory moves into the tensor, and the
// framework frees it by calling the tensor's deleter once.
DLManagedTensorVersioned* make_ramp(std::int64_t n) {
    std::vector<float> values(static_cast<std::size_t>(n));
    std::iota(values.begin(), values.end(), 0.0f);
    return loom::to_dlpack(loom::DeviceArray<float>::from_host(values, {n}));
}
// [/guide:dlpack_out]

int main() {
    using namespace loom;
    const std::int64_t n = 10000;
    auto [x, y] = fields<2>("x, y: float32[1D]");
    Assignment doubling(y.center(), 2 * x.center());
    int failures = 0;

    // Host tensors: what torch.from_dlpack would see of two CPU tensors.
    KernelFunction on_cpu =
        create_kernel(doubling, {.target = Target::CPU, .name = "twice"}).compile();
    // [guide:dlpack_host]
    auto xs = HostArray<float>::random({n}, /*seed=*/1);
    auto ys = HostArray<float>::zeros({n});
    // These exports borrow (only a DeviceArray moved in is owned): xs, ys must outlive them.
    twice(on_cpu, to_dlpack(xs), to_dlpack(ys));
    // [/guide:dlpack_host]
    const std::vector<float> in = xs.to_host(), out = ys.to_host();
    for (std::int64_t i = 0; i < n; ++i) failures += out[i] != 2 * in[i];
    std::printf("dlpack: host tensors: %s\n", failures == 0 ? "ok" : "MISMATCH");

    if (!cuda_available()) {
        std::printf("dlpack: no GPU here, device tensors skipped (%s)\n",
                    cuda_unavailable_reason().c_str());
        return failures == 0 ? 0 : 1;
    }
    KernelFunction on_gpu = create_kernel(doubling, {.name = "twice"}).compile();
    auto dx = DeviceArray<float>::random({n}, /*seed=*/2);
    auto dy = DeviceArray<float>::zeros({n});
    twice(on_gpu, to_dlpack(dx.view()), to_dlpack(dy.view()));
    const std::vector<float> din = dx.to_host(), dout = dy.to_host();
    for (std::int64_t i = 0; i < n; ++i) failures += dout[i] != 2 * din[i];

    // The framework's side of make_ramp(): read the tensor, then call its deleter once.
    DLPackTensor ramp(make_ramp(n));
    const std::vector<float> r = DeviceView<float>(ramp.ref()).to_host();
    for (std::int64_t i = 0; i < n; ++i) failures += r[i] != float(i);
    std::printf("dlpack: device tensors: %s\n", failures == 0 ? "ok" : "MISMATCH");
    return failures == 0 ? 0 : 1;
}
