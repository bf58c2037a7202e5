// Guide, "Arrays": host arrays and views, shapes, strides and memory orders, the layouts of
// fields, and device arrays (the device part runs only where cuda_available()). Every kernel
// runs on the CPU target and is checked against a plain loop.
#include <loom/loom.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <vector>

int main() {
    using namespace loom;
    int failures = 0;
    auto expect = [&failures](bool ok, const char* what) {
        if (!ok) {
            std::fprintf(stderr, "arrays: check failed: %s\n", what);
            ++failures;
        }
    };

    // [guide:host_arrays]
    auto a = HostArray<float>::zeros({3, 4});   // C order (row-major): strides {4, 1}
    auto f = HostArray<float>::fortran({3, 4}); // column-major: strides {1, 3}
    auto r = HostArray<double>::random({3, 4}, /*seed=*/7, Normal(0.0, 1.0));
    auto v = HostArray<float>::from_host({1, 2, 3, 4, 5, 6}, {2, 3}); // values in C order
    std::cout << shape_string(f.shape()) << " strides " << shape_string(f.strides()) << "\n";
    v.at({1, 2}) = 60;                      // one element, bounds-checked
    std::vector<float> values = v.to_host(); // logical C order, whatever the memory order
    // [/guide:host_arrays]
    expect(a.strides() == Shape{4, 1} && f.strides() == Shape{1, 3}, "strides");
    expect(r.size() == 12 && r.to_host() == HostArray<double>::random({3, 4}, 7, Normal(0.0, 1.0))
                                                .to_host(),
           "random is deterministic");
    expect(values == std::vector<float>{1, 2, 3, 4, 5, 60}, "from_host, at and to_host");

    // [guide:host_view]
    std::vector<double> mine(64 * 64, 1.0);
    HostView<double> whole = host_view(mine, {64, 64});     // no copy: `mine` must outlive it
    HostView<double> inner = whole.view({8, 8}, {48, 48});  // a sub-box; strides stay {64, 1}

    auto g = field("g: float64[2D]");
    Kernel twice = create_kernel(Assignment(g.center(), 2 * g.center()),
                                 {.target = Target::CPU, .name = "twice"});
    twice.compile()(args("g", inner)); // doubles the 48 x 48 box inside `mine` only
    // [/guide:host_view]
    int doubled = 0;
    for (double value : mine) doubled += value == 2.0;
    expect(doubled == 48 * 48 && inner.strides() == Shape{64, 1}, "kernel on a sub-box view");

    // [guide:layouts]
    // A vector field in SoA layout (fzyx: components slowest, axis 0 fastest) is an array of
    // shape {nx, ny, 2} in Fortran order; the scalar field in the same layout, {nx, ny}.
    auto [vel, speed] = fields<2>("vel(2), speed: float64[2D]", Layout::SoA);
    Assignment norm(speed.center(), sqrt(vel(0) * vel(0) + vel(1) * vel(1)));
    KernelFunction k = create_kernel(norm, {.target = Target::CPU, .name = "norm"}).compile();

    auto vel_a = HostArray<double>::random({40, 30, 2}, 1, Uniform(), MemoryOrder::Fortran);
    auto speed_a = HostArray<double>::fortran({40, 30});
    k(args("vel", vel_a, "speed", speed_a));
    // [/guide:layouts]
    double worst = 0.0;
    for (std::int64_t i = 0; i < 40; ++i)
        for (std::int64_t j = 0; j < 30; ++j) {
            const double v0 = vel_a.at({i, j, 0}), v1 = vel_a.at({i, j, 1});
            worst = std::fmax(worst, std::fabs(speed_a.at({i, j}) - std::sqrt(v0 * v0 + v1 * v1)));
        }
    expect(worst < 1e-12, "SoA vector field against a loop");

    // A C-order array for the Fortran-order field is refused before the launch.
    bool refused = false;
    try {
        k(args("vel", HostArray<double>::zeros({40, 30, 2}), "speed", speed_a));
    } catch (const UserError&) {
        refused = true;
    }
    expect(refused, "a C-order array for a SoA field is a UserError");

    {
        // [guide:half_fields]
        // Stored in 16 bits, computed with in float32: reads widen, stores round to nearest even.
        auto [xh, yh] = fields<2>("xh, yh: float16[1D]");
        auto axpy = create_kernel(Assignment(yh.center(), param<float>("alpha") * xh.center() + yh.center()),
                                  {.target = Target::CPU, .name = "axpy_half"});
        auto xs = HostArray<half>::from_host({0.5f, 1.0f, -2.0f, 3.0f}, {4});
        auto ys = HostArray<half>::from_host({1.0f, 1.0f, 1.0f, 1.0f}, {4});
        axpy.compile()(args("xh", xs, "yh", ys, "alpha", 0.1));
        float y0 = ys.at({0}); // 1.05 rounded to float16: 1.0498046875
        // [/guide:half_fields]
        expect(y0 == float(half(0.1f * 0.5f + 1.0f)) && std::fabs(y0 - 1.05f) < 1e-3f, "float16 axpy on the CPU");
    }

    if (cuda_available()) {
        // [guide:device_arrays]
        auto d = DeviceArray<float>::from_host(values, {2, 3}); // upload
        DeviceView<float> row = d.view({1, 0}, {1, 3});         // no copy, no driver call
        row.fill(0.0f);                                         // the viewed elements only
        std::vector<float> back = d.to_host();                  // download, logical C order
        // [/guide:device_arrays]
        expect(back == std::vector<float>{1, 2, 3, 0, 0, 0}, "device view fill");
        auto dg = DeviceArray<double>::from_host(std::vector<double>(64 * 64, 1.0), {64, 64});
        create_kernel(Assignment(g.center(), 2 * g.center()), {.name = "twice"}).compile()(
            args("g", dg.view({8, 8}, {48, 48})));
        int on_gpu = 0;
        for (double value : dg.to_host()) on_gpu += value == 2.0;
        expect(on_gpu == 48 * 48, "CUDA kernel on a device sub-box view");
    } else {
        std::printf("arrays: no GPU here, device arrays skipped (%s)\n",
                    cuda_unavailable_reason().c_str());
    }
    std::printf("arrays: %s\n", failures == 0 ? "ok" : "FAILED");
    return failures == 0 ? 0 : 1;
}
