// Guide, "Launch configuration": the block and cells per thread from a Schedule, the schedule
// loom chose, the block and grid a KernelFunction launches with, and a manual grid for a
// triangular iteration space. The CUDA launches run where cuda_available(); the CPU target runs
// the same assignments everywhere, and every result is checked against a plain loop.
#include <loom/loom.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <vector>

int main() {
    using namespace loom;
    using namespace loom::counters; // x, y, z: the counters of axes 0, 1, 2
    int failures = 0;
    auto expect = [&failures](bool ok, const char* what) {
        if (!ok) {
            std::fprintf(stderr, "launch_config: check failed: %s\n", what);
            ++failures;
        }
    };
    const std::int64_t n = 300;

    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    Assignment avg(dst.center(), 0.25 * (src[{1, 0}] + src[{-1, 0}] + src[{0, 1}] + src[{0, -1}]));

    // [guide:config_block]
    KernelConfig cfg{.name = "avg"};
    Schedule schedule{.block = std::array<int, 3>{128, 2, 1}, .cells_per_thread = 2};
    Kernel kernel = create_kernel(avg, cfg, schedule);
    std::cout << kernel.launch().describe() << "\n";
    // block (128, 2, 1) by default; grid = ceil((size_1 - 2, (size_0 - 1) / 2, 1) / block); ...
    // [/guide:config_block]
    const LaunchDescription& launch = kernel.launch();
    expect(launch.default_block == std::array<int, 3>{128, 2, 1}, "default block (128, 2, 1)");
    expect(launch.cells_per_thread[1] == 2 && launch.axis_of_dim[0] == 1, "2 cells along y");

    // [guide:chosen]
    Kernel chosen = create_kernel(avg, {.name = "avg_chosen"}); // no schedule: loom chooses
    std::cout << chosen.schedule().describe(chosen.requested_schedule()) << "\n";
    // block = (64, 4, 1) (chosen), cells_per_thread = 4 (chosen), cells_axis = 0 (chosen), ...
    // [/guide:chosen]
    expect(chosen.schedule().block == std::array<int, 3>{64, 4, 1}, "chosen block (64, 4, 1)");
    expect(chosen.schedule().cells_per_thread == 4 && chosen.schedule().cells_axis == 0,
           "4 cells along axis 0 chosen");

    auto a = HostArray<float>::random({n, n}, /*seed=*/5);
    std::vector<float> expected(static_cast<std::size_t>(n * n), 0.0f);
    const std::vector<float> in = a.to_host();
    for (std::int64_t i = 1; i < n - 1; ++i)
        for (std::int64_t j = 1; j < n - 1; ++j)
            expected[i * n + j] = 0.25f * (in[(i + 1) * n + j] + in[(i - 1) * n + j] +
                                           in[i * n + j + 1] + in[i * n + j - 1]);
    auto max_difference = [](const std::vector<float>& got, const std::vector<float>& want) {
        double worst = 0.0;
        for (std::size_t k = 0; k < got.size(); ++k)
            worst = std::isnan(got[k]) ? INFINITY
                                        : std::fmax(worst, std::fabs(double(got[k]) - want[k]));
        return worst;
    };

    // The same config and schedule for the CPU: create_kernel ignores the schedule there.
    cfg.target = Target::CPU;
    auto b = HostArray<float>::zeros({n, n});
    create_kernel(avg, cfg, schedule).compile()(args("src", a, "dst", b));
    expect(max_difference(b.to_host(), expected) < 1e-6, "CPU result");

    // The triangle [:, x:]: axis 1 starts at the counter of axis 0. No grid can be inferred.
    // [guide:manual_grid]
    auto t = field("t: float64[2D]");
    KernelConfig tri{.name = "upper", .iteration_slice = Slice{all(), from(x)}}; // [:, x:]
    Schedule manual{.manual_launch_grid = true}; // the caller sizes the grid
    Kernel upper = create_kernel(Assignment(t.center(), 1.0), tri, manual);
    std::cout << upper.launch().describe() << "\n";
    // [/guide:manual_grid]
    expect(upper.launch().manual, "the triangle's grid is manual");

    // On the CPU the loops cover the triangle; there is no grid to set.
    tri.target = Target::CPU;
    auto on_cpu = HostArray<double>::zeros({n, n});
    create_kernel(Assignment(t.center(), 1.0), tri).compile()(args("t", on_cpu));
    int wrong = 0;
    for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < n; ++j) wrong += on_cpu.at({i, j}) != (j >= i ? 1.0 : 0.0);
    expect(wrong == 0, "CPU triangle");

    if (!cuda_available()) {
        std::printf("launch_config: no GPU here, launches skipped (%s)\n",
                    cuda_unavailable_reason().c_str());
        std::printf("launch_config: %s\n", failures == 0 ? "ok" : "FAILED");
        return failures == 0 ? 0 : 1;
    }

    auto d_src = DeviceArray<float>::from_host(in, {n, n});
    auto d_dst = DeviceArray<float>::zeros({n, n});
    // [guide:launch]
    KernelFunction k = kernel.compile();
    k(args("src", d_src, "dst", d_dst)); // block (128, 2, 1); grid from the array sizes
    k.block_size = {32, 8, 1};           // used as it is from the next call on
    k(args("src", d_src, "dst", d_dst));
    std::cout << "block " << k.last_block()[0] << " x " << k.last_block()[1] << ", grid "
              << k.last_grid()[0] << " x " << k.last_grid()[1] << "\n";
    // [/guide:launch]
    expect(k.last_block() == Dim3{32, 8, 1}, "block (32, 8, 1) used as set");
    expect(k.last_grid() == Dim3{(n - 2 + 31) / 32, ((n - 1) / 2 + 7) / 8, 1}, "inferred grid");
    expect(max_difference(d_dst.to_host(), expected) < 1e-6, "GPU result");

    auto d_t = DeviceArray<double>::zeros({n, n});
    // [guide:manual_launch]
    KernelFunction tk = upper.compile();
    tk.block_size = {32, 8, 1}; // x walks axis 1, y walks axis 0 (C layout); one cell each
    tk.num_blocks = {(n + 31) / 32, (n + 7) / 8, 1}; // must cover every cell to compute
    tk(args("t", d_t));
    // [/guide:manual_launch]
    const std::vector<double> tri_gpu = d_t.to_host();
    wrong = 0;
    for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < n; ++j) wrong += tri_gpu[i * n + j] != (j >= i ? 1.0 : 0.0);
    expect(wrong == 0, "GPU triangle");
    std::printf("launch_config: %s\n", failures == 0 ? "ok" : "FAILED");
    return failures == 0 ? 0 : 1;
}
