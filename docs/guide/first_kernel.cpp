// Guide, "A first kernel": one explicit diffusion step on a 2D field, built for the CPU target,
// run on host arrays and checked against a plain loop. Needs no GPU.
#include <loom/loom.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

int main() {
    using namespace loom;

    // [guide:first_kernel]
    // Two float32 fields with two spatial axes; their sizes come from the arrays at call time.
    auto [u, u_new] = fields<2>("u, u_new: float32[2D]");
    Expr nu = param<float>("nu"); // a scalar argument, passed by name at call time

    // One explicit diffusion step: every cell moves towards the mean of its four neighbours.
    Assignment step(u_new.center(),
                    u.center() + nu * (u[{1, 0}] + u[{-1, 0}] + u[{0, 1}] + u[{0, -1}] -
                                       4 * u.center()));

    // Target::CPU: C++ with OpenMP, built by the host compiler and loaded with dlopen.
    Kernel kernel = create_kernel(step, {.target = Target::CPU, .name = "diffuse"});
    KernelFunction diffuse = kernel.compile();

    auto a = HostArray<float>::random({512, 512}, /*seed=*/1); // uniform in [0, 1)
    auto b = HostArray<float>::zeros({512, 512});
    diffuse(args("u", a, "u_new", b, "nu", 0.1));
    // [/guide:first_kernel]

    // The check: the same step as a plain loop. The stencil reaches one cell out, so the ghost
    // layers are 1 wide: the border of u_new is not written and keeps its zeros.
    const std::int64_t n = 512;
    std::vector<float> in = a.to_host(), out = b.to_host();
    double worst = 0.0;
    for (std::int64_t i = 0; i < n; ++i)
        for (std::int64_t j = 0; j < n; ++j) {
            const float got = out[i * n + j];
            if (i == 0 || j == 0 || i == n - 1 || j == n - 1) {
                if (got != 0.0f) worst = INFINITY;
                continue;
            }
            const float c = in[i * n + j];
            const float ref = c + 0.1f * (in[(i + 1) * n + j] + in[(i - 1) * n + j] +
                                          in[i * n + j + 1] + in[i * n + j - 1] - 4 * c);
            worst = std::fmax(worst, std::fabs(double(got) - ref));
            if (std::isnan(got)) worst = INFINITY;
        }
    std::printf("first kernel: max |loom - loop| = %.3g (%s)\n", worst,
                worst < 1e-5 ? "ok" : "MISMATCH");
    return worst < 1e-5 ? 0 : 1;
}
