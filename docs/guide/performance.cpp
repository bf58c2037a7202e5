// Guide, "Performance tips": the KernelConfig fields that change the generated code, and
// constant against runtime weights for a layer. Everything runs on the CPU target and is
// checked against a plain loop; the CUDA variants are generated (and compiled by NVRTC for
// sm_90) to check what the options print. The GPU timings are in docs/performance.md.
#include <loom/loom.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

int main() {
    using namespace loom;
    int failures = 0;
    auto expect = [&failures](bool ok, const char* what) {
        if (!ok) {
            std::fprintf(stderr, "performance: check failed: %s\n", what);
            ++failures;
        }
    };
    auto contains = [](const std::string& text, const char* part) {
        return text.find(part) != std::string::npos;
    };

    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    Assignment avg(dst.center(), 0.25 * (src[{1, 0}] + src[{-1, 0}] + src[{0, 1}] + src[{0, -1}]));

    // [guide:perf_config]
    KernelConfig cfg{.name = "avg",
                     .index_type = ScalarType::Int32, // one variant, 32-bit indices
                     .fast_math = true};              // --use_fast_math
    Schedule schedule{.block = std::array<int, 3>{128, 2, 1}, // x: a multiple of 32
                      .cells_per_thread = 4};                 // along y, the slowest axis
    Kernel kernel = create_kernel(avg, cfg, schedule);
    // [/guide:perf_config]
    expect(contains(kernel.source(), "// options: index type int32, fast math on"), "options");
    expect(!kernel.cubin(90).empty(), "NVRTC compiles the tuned kernel");

    // [guide:weights]
    // Constant weights: numbers in the generated code, unrolled into the expressions.
    nn::Dense fixed(nn::glorot_uniform(8, 4, /*seed=*/1), nn::relu);
    // Runtime weights: the arguments l0_W (8 x 4) and l0_b (8), the same code for any values.
    nn::Dense runtime = nn::Dense::runtime("l0", 8, 4, nn::relu);
    // [/guide:weights]

    auto [x, y] = fields<2>("x(4), y(8): float32[1D]");
    // [guide:max_registers]
    Schedule mlp_schedule{.shared_memory_budget = 0, // read the weights from global memory
                          .max_registers = 96};      // __maxnreg__(96): try it, measure it
    Kernel layer = create_kernel(Assignment(y.vec(), runtime(x.vec())), {.name = "layer"},
                                 mlp_schedule);
    // [/guide:max_registers]
    expect(contains(layer.source(), "__maxnreg__(96)"), "__maxnreg__ printed");
    expect(!contains(layer.source(), "__shared__"), "no staging with a zero budget");
    expect(!layer.cubin(90).empty(), "NVRTC compiles the layer");

    // [guide:tensor_cores]
    auto [p, q] = fields<2>("p(64), q(64): float16[1D]", Layout::SoA);
    const nn::Chain mlp(nn::Dense::runtime("t0", 64, 64, nn::relu), nn::Dense::runtime("t1", 64, 64));
    AssignmentCollection net;
    mlp.assign(net, q.vec(), p.vec());
    Kernel on_tensor_cores = create_kernel(net, {.name = "mlp64"},
                                           Schedule{.tensor_cores = TensorCores::Float16});
    // [/guide:tensor_cores]
    expect(contains(on_tensor_cores.source(), "loom::mma::hidden<64, 64, 72, false>"), "the chain on tensor cores");
    expect(!on_tensor_cores.cubin(90).empty(), "NVRTC compiles the tensor-core chain");

    // Both layers on the CPU target, with the same weights, against a plain loop.
    const std::int64_t n = 2000;
    const nn::Matrix& w = fixed.weights();
    auto xs = HostArray<float>::random({n, 4}, /*seed=*/3, Uniform(-1, 1));
    const std::vector<float> in = xs.to_host();
    std::vector<float> expected(static_cast<std::size_t>(n * 8));
    for (std::int64_t e = 0; e < n; ++e)
        for (int i = 0; i < 8; ++i) {
            float z = 0.0f;
            for (int j = 0; j < 4; ++j) z += float(w(i, j)) * in[e * 4 + j];
            expected[e * 8 + i] = std::max(z, 0.0f);
        }
    auto max_difference = [&expected](const std::vector<float>& got) {
        double worst = 0.0;
        for (std::size_t k = 0; k < got.size(); ++k)
            worst = std::isnan(got[k]) ? INFINITY
                                       : std::fmax(worst, std::fabs(double(got[k]) - expected[k]));
        return worst;
    };

    auto ys = HostArray<float>::zeros({n, 8});
    create_kernel(Assignment(y.vec(), fixed(x.vec())), {.target = Target::CPU, .name = "fixed"})
        .compile()(args("x", xs, "y", ys));
    const double fixed_error = max_difference(ys.to_host());

    nn::Chain chain(runtime);
    nn::Weights<HostArray<float>> weights(chain, {w}, {std::vector<double>(8, 0.0)});
    Args a = args("x", xs, "y", ys);
    weights.add_to(a); // l0_W, l0_b
    ys.fill(std::nanf(""));
    create_kernel(Assignment(y.vec(), runtime(x.vec())), {.target = Target::CPU, .name = "rt"})
        .compile()(a);
    const double runtime_error = max_difference(ys.to_host());
    std::printf("performance: max |loom - loop| constant %.3g, runtime %.3g\n", fixed_error,
                runtime_error);
    expect(fixed_error < 1e-5 && runtime_error < 1e-5, "both layers against the loop");
    // Autotuning times schedules on a GPU; the CPU target has nothing to tune and says so.
    auto a_host = HostArray<float>::random({64, 64}, 5), b_host = HostArray<float>::zeros({64, 64});
    KernelFunction cpu_avg = create_kernel(avg, {.target = Target::CPU, .name = "avg_cpu"}).compile();
    expect(!cpu_avg.autotune(args("src", a_host, "dst", b_host)).nothing_to_tune.empty(),
           "the CPU target has nothing to tune");
    if (cuda_available()) {
        auto a = DeviceArray<float>::random({4096, 4096}, 6);
        auto b = DeviceArray<float>::zeros({4096, 4096});
        // [guide:autotune]
        KernelFunction tuned = create_kernel(avg, {.name = "avg_tuned"}).compile();
        AutotuneResult result = tuned.autotune(args("src", a, "dst", b));
        std::cout << result.report();  // every schedule tried, its time, the winner
        tuned(args("src", a, "dst", b)); // runs the winner from now on
        // [/guide:autotune]
        expect(result.ms <= result.default_ms, "the winner is no slower than the default");
    }
    std::printf("performance: %s\n", failures == 0 ? "ok" : "FAILED");
    return failures == 0 ? 0 : 1;
}
