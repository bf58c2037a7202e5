// Names the user gives (fields, scalar parameters, the kernel) against the names the generated
// code needs for itself and the names the included headers own (issue 11, defects 5, 6 and 7):
// a launch passes every argument by the user's name, whatever the printed code calls it; a
// Target::CPU kernel may be named like any C library or OpenMP symbol; fields and scalars named
// like C macros compile. Each kernel runs on the CPU target against a plain reference loop, and
// its CUDA version compiles with NVRTC.
#include "tests/support/cpu_config.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/nvrtc_check.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace loom {
namespace {

const Shape kShape{13, 17};

/// Deterministic, never zero, different per seed.
std::vector<double> values(std::size_t n, int seed) {
    std::vector<double> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] = 0.25 + 0.5 * double((i * 7 + std::size_t(seed) * 13) % 11) / 11.0;
    return v;
}

template <typename T>
HostArray<T> array_of(const std::vector<double>& v) {
    return HostArray<T>::from_host(std::vector<T>(v.begin(), v.end()), kShape);
}

KernelConfig config(const std::string& name, Target target) {
    KernelConfig c = test::cpu(name);
    c.target = target;
    return c;
}

// ---- Defect 5: scalar parameters named like loom's own names keep their names -----------------

Kernel user_names_kernel(Target target) {
    // Fields named like a stride of another field; scalars named like sizes, a counter, the
    // kernel and a function the printer reserves.
    auto [u, u_stride_0, dst] = fields<3>("u, u_stride_0, dst: float64[2D]");
    Expr size_0 = param<double>("size_0"), size_1 = param<double>("size_1");
    Expr x = param<double>("x"), mix = param<double>("mix"), min = param<double>("min");
    return create_kernel(Assignment(dst.center(), u[{1, 0}] * size_0 + u_stride_0[{0, -1}] * size_1 +
                                                      x * ctr(0) - mix * min * ctr(1)),
                         config("mix", target));
}

TEST(Naming, ScalarsNamedLikeSizesStridesCountersAndTheKernelArePassedByTheirNames) {
    const Kernel k = user_names_kernel(Target::CPU);
    std::vector<std::string> scalars;
    for (const KernelParam& p : k.parameters())
        if (p.role == ParamRole::Scalar) scalars.push_back(p.name);
    // The printed names are the user's where C allows it ("min" is a function in C).
    EXPECT_EQ(scalars, (std::vector<std::string>{"size_0", "size_1", "x", "mix", "min_"}))
        << k.source();

    const std::size_t n = std::size_t(kShape[0] * kShape[1]);
    const std::vector<double> u = values(n, 1), s = values(n, 2);
    HostArray<double> dst = HostArray<double>::from_host(std::vector<double>(n, -7.0), kShape);
    KernelFunction f = k.compile();
    f(args("u", array_of<double>(u), "u_stride_0", array_of<double>(s), "dst", dst, "size_0", 2.0,
           "size_1", 3.0, "x", 5.0, "mix", 0.5, "min", 0.25));
    const std::vector<double> out = dst.to_host();
    for (std::int64_t i = 0; i < kShape[0]; ++i)
        for (std::int64_t j = 0; j < kShape[1]; ++j) {
            const std::size_t at = std::size_t(i * kShape[1] + j);
            // Ghost layers are symmetric: one on each side of both axes.
            const bool inside = i >= 1 && i + 1 < kShape[0] && j >= 1 && j + 1 < kShape[1];
            const double expect =
                inside ? u[at + std::size_t(kShape[1])] * 2.0 + s[at - 1] * 3.0 + 5.0 * double(i) -
                             0.5 * 0.25 * double(j)
                       : -7.0;
            EXPECT_DOUBLE_EQ(out[at], expect) << "at (" << i << ", " << j << ")\n" << k.source();
        }
}

TEST(Naming, ArgumentMessagesUseTheUsersNamesNotThePrintedOnes) {
    KernelFunction f = user_names_kernel(Target::CPU).compile();
    const std::size_t n = std::size_t(kShape[0] * kShape[1]);
    HostArray<double> u = array_of<double>(values(n, 1)), s = array_of<double>(values(n, 2));
    HostArray<double> dst = array_of<double>(values(n, 3));
    // The printed name of `min` is min_, but a launch knows only `min`.
    LOOM_EXPECT_ERROR(f(args("u", u, "u_stride_0", s, "dst", dst, "size_0", 2.0, "size_1", 3.0,
                             "x", 5.0, "mix", 0.5, "min_", 0.25)),
                      UserError,
                      {"kernel 'mix'", "has no argument named 'min_'",
                       "its arguments are: dst, u, u_stride_0, size_0, size_1, x, mix, min"});
    LOOM_EXPECT_ERROR(f(args("u", u, "u_stride_0", s, "dst", dst, "size_1", 3.0, "x", 5.0,
                             "mix", 0.5, "min", 0.25)),
                      UserError, {"kernel 'mix'", "missing argument(s): size_0"});
}

TEST(Naming, ScalarsNamedLikeSizesStridesCountersAndTheKernelCompileForCuda) {
    test::expect_compiles_for_sm90(user_names_kernel(Target::CUDA));
}

// ---- Defect 6: CPU kernels named like library symbols -----------------------------------------

TEST(Naming, CpuKernelsNamedLikeLibrarySymbolsRunCorrectly) {
    for (const char* name : {"memcpy", "GOMP_parallel", "omp_get_num_threads", "tanhf", "powf",
                             "expf", "exp", "malloc", "free", "main", "memset", "loom_min"}) {
        SCOPED_TRACE(name);
        auto [src, dst] = fields<2>("src, dst: float32[2D]");
        Kernel k = create_kernel(Assignment(dst.center(), 2.0f * src[{-1, 0}] + 1.0f +
                                                              tanh(src[{0, 1}]) * 0.0f),
                                 test::cpu(name));
        const std::size_t n = std::size_t(kShape[0] * kShape[1]);
        const std::vector<double> in = values(n, 3);
        HostArray<float> out = HostArray<float>::from_host(std::vector<float>(n, -7.0f), kShape);
        KernelFunction f = k.compile();
        f(args("src", array_of<float>(in), "dst", out));
        const std::vector<float> got = out.to_host();
        for (std::int64_t i = 0; i < kShape[0]; ++i)
            for (std::int64_t j = 0; j < kShape[1]; ++j) {
                const std::size_t at = std::size_t(i * kShape[1] + j);
                const bool inside = i >= 1 && i + 1 < kShape[0] && j >= 1 && j + 1 < kShape[1];
                const float expect =
                    inside ? 2.0f * float(in[at - std::size_t(kShape[1])]) + 1.0f : -7.0f;
                ASSERT_FLOAT_EQ(got[at], expect) << "at (" << i << ", " << j << ")\n" << k.source();
            }
    }
}

// ---- Defect 7: fields and scalars named like C macros -----------------------------------------

Kernel macro_names_kernel(Target target) {
    auto [null, nan, infinity, m_pi, rand_max] =
        fields<5>("NULL, NAN, INFINITY, M_PI, RAND_MAX: float64[2D]");
    auto [int32_max, exit_success] = fields<2>("INT32_MAX, EXIT_SUCCESS: float64[2D]");
    Expr huge_val = param<double>("HUGE_VAL"), eof = param<double>("EOF");
    Expr m_e = param<double>("M_E"), openmp = param<double>("_OPENMP");
    return create_kernel(
        {Assignment(int32_max.center(), null.center() + nan.center() * huge_val +
                                            infinity[{0, 1}] * m_e - m_pi.center() * eof),
         Assignment(exit_success.center(), rand_max.center() * openmp)},
        config("macros", target));
}

TEST(Naming, FieldsAndScalarsNamedLikeMacrosRunOnTheCpuByTheirNames) {
    const Kernel k = macro_names_kernel(Target::CPU);
    const std::size_t n = std::size_t(kShape[0] * kShape[1]);
    const std::vector<double> a = values(n, 4), b = values(n, 5), c = values(n, 6),
                              d = values(n, 7), e = values(n, 8);
    HostArray<double> out = HostArray<double>::from_host(std::vector<double>(n, -7.0), kShape);
    HostArray<double> out2 = HostArray<double>::from_host(std::vector<double>(n, -7.0), kShape);
    KernelFunction f = k.compile();
    f(args("NULL", array_of<double>(a), "NAN", array_of<double>(b), "INFINITY",
           array_of<double>(c), "M_PI", array_of<double>(d), "RAND_MAX", array_of<double>(e),
           "INT32_MAX", out, "EXIT_SUCCESS", out2, "HUGE_VAL", 2.0, "EOF", 3.0, "M_E", 5.0,
           "_OPENMP", 0.5));
    const std::vector<double> got = out.to_host(), got2 = out2.to_host();
    for (std::int64_t i = 0; i < kShape[0]; ++i)
        for (std::int64_t j = 0; j < kShape[1]; ++j) {
            const std::size_t at = std::size_t(i * kShape[1] + j);
            const bool inside = i >= 1 && i + 1 < kShape[0] && j >= 1 && j + 1 < kShape[1];
            EXPECT_DOUBLE_EQ(got[at], inside ? a[at] + b[at] * 2.0 + c[at + 1] * 5.0 - d[at] * 3.0
                                             : -7.0)
                << "at (" << i << ", " << j << ")\n" << k.source();
            EXPECT_DOUBLE_EQ(got2[at], inside ? e[at] * 0.5 : -7.0)
                << "at (" << i << ", " << j << ")\n" << k.source();
        }
}

TEST(Naming, FieldsAndScalarsNamedLikeMacrosCompileForCuda) {
    test::expect_compiles_for_sm90(macro_names_kernel(Target::CUDA));
}

} // namespace
} // namespace loom
