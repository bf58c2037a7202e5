// fuse(k1, k2): two existing kernels as one, on the CPU target (which runs the fused form block by
// block, halos and tiles included) against hand-written double loops that run the two kernels one
// after the other; the CUDA form is compiled by NVRTC for sm_90. Then each refusal, by its message.
#include "tests/support/nvrtc_check.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace loom {
namespace {

struct Pair {
    Field u, t, v;
    Kernel smooth, laplace;
};

/// t = a 5-point smoothing of u; v = a 5-point Laplacian of t (reads t at neighbours).
Pair smooth_then_laplace(Target target, const GhostLayers& ghost = {}) {
    auto [u, t, v] = fields<3>("u, t, v: float64[2D]");
    Kernel smooth = create_kernel(
        {Assignment(t.center(), 0.5 * u.center() + 0.125 * (u[{1, 0}] + u[{-1, 0}] + u[{0, 1}] +
                                                            u[{0, -1}]))},
        {.target = target, .name = "smooth", .ghost_layers = ghost});
    Kernel laplace = create_kernel(
        {Assignment(v.center(), t[{1, 0}] + t[{-1, 0}] + t[{0, 1}] + t[{0, -1}] - 4.0 * t.center())},
        {.target = target, .name = "laplace", .ghost_layers = ghost});
    return {u, t, v, smooth, laplace};
}

/// The message of the UserError `make` throws ("" when it throws none).
template <typename Make>
std::string refusal(Make&& make) {
    try {
        make();
    } catch (const UserError& e) {
        return e.what();
    }
    return "";
}

TEST(Fuse, TwoKernelsAsOneComputeWhatTheyComputeOneAfterTheOther) {
    for (int g : {1, 2}) {
        SCOPED_TRACE(::testing::Message() << "ghost layers " << g);
        const Pair p = smooth_then_laplace(Target::CPU, g);
        const Kernel fused = fuse(p.smooth, p.laplace, "", {.block = std::array<int, 3>{16, 4, 1}});
        EXPECT_EQ(fused.name(), "smooth_laplace");
        const std::int64_t n0 = 37, n1 = 53;
        auto u = HostArray<double>::random({n0, n1}, 3, Uniform(-1, 1));
        auto t = HostArray<double>::random({n0, n1}, 4, Uniform(-1, 1)); // its ring is read
        auto v = HostArray<double>::zeros({n0, n1});
        v.fill(std::nan(""));
        const std::vector<double> u0 = u.to_host(), t0 = t.to_host();
        fused.compile()(args("u", u, "t", t, "v", v));

        // The two kernels one after the other, in double: t over the interior, then v from it
        // (the ring of t keeps what it held).
        auto at = [n1](std::int64_t i, std::int64_t j) { return std::size_t(i * n1 + j); };
        std::vector<double> tt = t0, vv(std::size_t(n0 * n1), NAN);
        for (std::int64_t i = g; i < n0 - g; ++i)
            for (std::int64_t j = g; j < n1 - g; ++j)
                tt[at(i, j)] = 0.5 * u0[at(i, j)] + 0.125 * (u0[at(i + 1, j)] + u0[at(i - 1, j)] +
                                                             u0[at(i, j + 1)] + u0[at(i, j - 1)]);
        for (std::int64_t i = g; i < n0 - g; ++i)
            for (std::int64_t j = g; j < n1 - g; ++j)
                vv[at(i, j)] = tt[at(i + 1, j)] + tt[at(i - 1, j)] + tt[at(i, j + 1)] +
                               tt[at(i, j - 1)] - 4.0 * tt[at(i, j)];
        const std::vector<double> got_t = t.to_host(), got_v = v.to_host();
        int bad = 0;
        for (std::size_t k = 0; k < vv.size(); ++k) {
            const bool v_ok = std::isnan(vv[k]) ? std::isnan(got_v[k])
                                                : std::fabs(got_v[k] - vv[k]) <= 1e-12;
            const bool t_ok = std::fabs(got_t[k] - tt[k]) <= 1e-12;
            if (!(v_ok && t_ok) && bad++ < 3)
                ADD_FAILURE() << "cell " << k / n1 << ", " << k % n1 << ": v " << got_v[k]
                              << " (expected " << vv[k] << "), t " << got_t[k] << " (expected "
                              << tt[k] << ")";
        }
        EXPECT_EQ(bad, 0);
    }
}

TEST(Fuse, TheCudaFormTilesTheFirstKernelAndCompiles) {
    const Pair p = smooth_then_laplace(Target::CUDA);
    const Kernel fused = fuse(p.smooth, p.laplace, "fused");
    EXPECT_TRUE(fused.schedule().shared_tiles); // the stages' halos need the tiled form
    EXPECT_NE(fused.source().find("__shared__"), std::string::npos);
    ASSERT_EQ(fused.fields().size(), 3u);
    test::expect_compiles_for_sm90(fused);
}

TEST(Fuse, AParameterOfOneNameIsOneArgument) {
    auto [u, t, v] = fields<3>("u, t, v: float64[2D]");
    Expr dt = param("dt"); // untyped: each create_kernel types its own copy
    Kernel first = create_kernel({Assignment(t.center(), dt * u.center())},
                                 {.target = Target::CPU, .name = "first", .ghost_layers = 1});
    Kernel second = create_kernel({Assignment(v.center(), dt * (t[{1, 0}] - t[{-1, 0}]))},
                                  {.target = Target::CPU, .name = "second", .ghost_layers = 1});
    const Kernel fused = fuse(first, second);
    int scalars = 0;
    for (const KernelParam& p : fused.parameters()) scalars += p.role == ParamRole::Scalar;
    EXPECT_EQ(scalars, 1);
    auto hu = HostArray<double>::random({12, 9}, 1, Uniform(-1, 1));
    auto ht = HostArray<double>::random({12, 9}, 2, Uniform(-1, 1));
    auto hv = HostArray<double>::zeros({12, 9});
    const std::vector<double> u0 = hu.to_host(), t0 = ht.to_host();
    fused.compile()(args("u", hu, "t", ht, "v", hv, "dt", 0.5));
    const std::vector<double> got = hv.to_host();
    auto tt = [&](std::int64_t i, std::int64_t j) { // t after the first kernel: its ring as it was
        const bool inside = i >= 1 && i < 11 && j >= 1 && j < 8;
        return inside ? 0.5 * u0[std::size_t(i * 9 + j)] : t0[std::size_t(i * 9 + j)];
    };
    for (std::int64_t i = 1; i < 11; ++i)
        for (std::int64_t j = 1; j < 8; ++j)
            EXPECT_NEAR(got[std::size_t(i * 9 + j)], 0.5 * (tt(i + 1, j) - tt(i - 1, j)), 1e-12)
                << i << ", " << j;

    Kernel typed = create_kernel({Assignment(v.center(), param<float>("dt") * t[{1, 0}])},
                                 {.target = Target::CPU, .name = "typed", .ghost_layers = 1});
    const std::string m = refusal([&] { fuse(first, typed); });
    EXPECT_NE(m.find("both take a scalar parameter 'dt', as float64 in 'first' and float32 in "
                     "'typed'"), std::string::npos) << m;
}

TEST(Fuse, AnEarlierStageReadOfWhatTheLaterOneOverwritesIsRefusedEvenAtTheCell) {
    // t = u * u, then u from t's neighbours: the first kernel runs over a halo in each block,
    // whose cells the neighbouring blocks own and may already have overwritten.
    auto [u, t] = fields<2>("u, t: float64[2D]");
    Kernel square = create_kernel({Assignment(t.center(), u.center() * u.center())},
                                  {.name = "square", .ghost_layers = 1});
    Kernel update = create_kernel(
        {Assignment(u.center(), u.center() + 0.1 * (t[{1, 0}] + t[{-1, 0}] - 2.0 * t.center()))},
        {.name = "update", .ghost_layers = 1});
    const std::string m = refusal([&] { fuse(square, update); });
    EXPECT_NE(m.find("reads field u at [0, 0] in stage 1"), std::string::npos) << m;
    EXPECT_NE(m.find("writes it in the later stage 2"), std::string::npos) << m;
    EXPECT_NE(m.find("the earlier stages run over a halo of cells that neighbouring blocks own"),
              std::string::npos) << m;
}

TEST(Fuse, KernelsThatCannotBeOneAreRefusedWithTheReason) {
    const Pair cuda = smooth_then_laplace(Target::CUDA);
    const Pair cpu = smooth_then_laplace(Target::CPU);
    std::string m = refusal([&] { fuse(cuda.smooth, cpu.laplace); });
    EXPECT_NE(m.find("fuse('smooth', 'laplace'): 'smooth' is for Target::CUDA and 'laplace' for "
                     "Target::CPU"), std::string::npos) << m;

    const Pair wide = smooth_then_laplace(Target::CUDA, 2);
    m = refusal([&] { fuse(cuda.smooth, wide.laplace); });
    EXPECT_NE(m.find("'smooth' iterates over ghost layers ((1, 1), (1, 1)) and 'laplace' over "
                     "ghost layers ((2, 2), (2, 2))"), std::string::npos) << m;
    EXPECT_NE(m.find("give both kernels the same ghost_layers"), std::string::npos) << m;

    // Same names, other Fields: another pair's laplace reads its own t, not cuda.smooth's.
    const Pair other = smooth_then_laplace(Target::CUDA);
    m = refusal([&] { fuse(cuda.smooth, other.laplace); });
    EXPECT_NE(m.find("field named 't'"), std::string::npos) << m;

    auto [u, w] = fields<2>("u, w: float64[2D]");
    Kernel wide_index = create_kernel({Assignment(w.center(), u.center())},
                                      {.name = "copy", .index_type = ScalarType::Int64});
    Kernel narrow = create_kernel({Assignment(u.center(), 2.0 * w.center())}, {.name = "scale"});
    m = refusal([&] { fuse(wide_index, narrow); });
    EXPECT_NE(m.find("index type int64 and 'scale' int32 (automatic)"), std::string::npos) << m;

    // The second writes what the first reads at neighbouring cells: a race once fused.
    Kernel overwrite = create_kernel({Assignment(cuda.u.center(), cuda.v.center())},
                                     {.name = "overwrite", .ghost_layers = 1});
    m = refusal([&] { fuse(cuda.smooth, overwrite); });
    EXPECT_NE(m.find("kernel 'smooth_overwrite' reads field u at [1, 0] in stage 1"),
              std::string::npos) << m;
    EXPECT_NE(m.find("writes it in the later stage 2"), std::string::npos) << m;
    EXPECT_NE(m.find("(a race)"), std::string::npos) << m;
}

} // namespace
} // namespace loom
