// A consumer of loom: builds a CPU-target kernel from the public API only, runs it on host
// arrays and checks it against a plain loop. Exits 0 on success.
#include <loom/loom.hpp>

#include <cmath>
#include <cstdio>
#include <vector>

#ifdef LOOM_VERSION
#error "loom must not leak a LOOM_VERSION definition into its consumers"
#endif

int main() {
    using namespace loom;
    auto [src, dst] = fields<2>("src, dst: float64[2D]");
    auto avg = Assignment(dst.center(),
                          0.25 * (src[{1, 0}] + src[{-1, 0}] + src[{0, 1}] + src[{0, -1}]));
    Kernel kernel = create_kernel({avg}, {.target = Target::CPU, .name = "consumer_avg"});

    const std::int64_t n = 64;
    auto a = HostArray<double>::random({n, n}, /*seed=*/7);
    auto b = HostArray<double>::zeros({n, n});
    b.fill(-1.0); // poison: every interior cell must be overwritten
    kernel.compile()(args("src", a, "dst", b));

    std::vector<double> in = a.to_vector(), out = b.to_vector(); // C order: (i, j) at i * n + j
    auto at = [n](const std::vector<double>& v, std::int64_t i, std::int64_t j) { return v[i * n + j]; };

    double worst = 0.0;
    for (std::int64_t i = 1; i + 1 < n; ++i)
        for (std::int64_t j = 1; j + 1 < n; ++j) {
            double ref = 0.25 * (at(in, i + 1, j) + at(in, i - 1, j) + at(in, i, j + 1) +
                                 at(in, i, j - 1));
            worst = std::fmax(worst, std::fabs(at(out, i, j) - ref));
        }
    std::printf("loom %s (library %s): consumer kernel on the CPU target, max error %.3g\n",
                version_string, library_version(), worst);
    return worst < 1e-12 ? 0 : 1;
}
