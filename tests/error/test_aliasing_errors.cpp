// Arrays that overlap where the kernel cannot survive it (issue 11, defect 4): the same array as
// the input and the output of a stencil, overlapping views, two outputs in one memory, and
// written arrays with a zero stride. Each is a UserError before anything runs; the very same
// array read only at the cell it writes is an in-place update and runs.
#include "tests/support/cpu_config.hpp"
#include "tests/support/expect_error.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <vector>

namespace {

using namespace loom;
using loom::test::cpu;

TEST(AliasingErrors, AStencilReadingAndWritingOneArray) {
    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    KernelFunction k =
        create_kernel({Assignment(dst.center(), 0.25 * (src[{1, 0}] + src[{-1, 0}] +
                                                        src[{0, 1}] + src[{0, -1}]))},
                      cpu("alias_jacobi"))
            .compile();
    auto a = HostArray<float>::random({64, 64}, 5);
    const std::vector<float> before = a.to_vector();
    LOOM_EXPECT_ERROR(k(args("src", a, "dst", a)), UserError,
                      {"kernel 'alias_jacobi'", "arguments 'dst'", "and 'src'",
                       "overlap in memory", "reads src at offsets from the cells it writes to dst",
                       "Pass separate arrays"});
    EXPECT_EQ(a.to_vector(), before) << "nothing ran";
    // A view of the same memory shifted by one row is caught the same way.
    auto big = HostArray<float>::random({65, 64}, 6);
    LOOM_EXPECT_ERROR(k(args("src", big.view({0, 0}, {64, 64}), "dst", big.view({1, 0}, {64, 64}))),
                      UserError, {"overlap in memory"});
    // Disjoint views of one allocation are fine.
    auto both = HostArray<float>::random({128, 64}, 7);
    k(args("src", both.view({0, 0}, {64, 64}), "dst", both.view({64, 0}, {64, 64})));
}

TEST(AliasingErrors, InPlacePointwiseUpdatesRun) {
    auto [in, out] = fields<2>("in, out: float64[1D]");
    KernelFunction k =
        create_kernel({Assignment(out.center(), 2.0 * in.center() + 1.0)}, cpu("alias_inplace"))
            .compile();
    auto a = HostArray<double>::random({100}, 8);
    std::vector<double> want = a.to_vector();
    for (double& v : want) v = 2.0 * v + 1.0;
    k(args("in", a, "out", a));
    EXPECT_EQ(a.to_vector(), want);
    // Overlapping but shifted views are not an in-place update.
    auto b = HostArray<double>::random({110}, 9);
    LOOM_EXPECT_ERROR(k(args("in", b.view({0}, {100}), "out", b.view({10}, {100}))), UserError,
                      {"arguments 'out'", "and 'in'", "overlap without being the same view"});
}

TEST(AliasingErrors, TwoOutputsInOneArray) {
    auto [x, y, z] = fields<3>("x, y, z: float32[1D]");
    AssignmentCollection ac;
    ac.add(Assignment(y.center(), 2.0 * x.center()));
    ac.add(Assignment(z.center(), 3.0 * x.center()));
    KernelFunction k = create_kernel(ac, cpu("alias_two_outputs")).compile();
    auto xs = HostArray<float>::random({32}, 10);
    auto out = HostArray<float>::zeros({32});
    LOOM_EXPECT_ERROR(k(args("x", xs, "y", out, "z", out)), UserError,
                      {"overlap in memory", "both are written"});
}

TEST(AliasingErrors, WrittenArraysWithAZeroStride) {
    auto [in, out] = fields<2>("in, out: float32[1D]");
    KernelFunction k =
        create_kernel({Assignment(out.center(), in.center() + 1.0)}, cpu("alias_stride0"))
            .compile();
    auto xs = HostArray<float>::random({16}, 11);
    std::vector<float> one(1, 0.0f);
    LOOM_EXPECT_ERROR(k(args("in", xs, "out", HostView<float>(one.data(), {16}, {0}))), UserError,
                      {"argument 'out'", "is written, but has stride 0 along axis 0",
                       "memory of its own for every cell"});
    EXPECT_EQ(one[0], 0.0f) << "nothing ran";
}

} // namespace

namespace {

// Strided views that interleave share no element: the columns of one matrix as two fields.
TEST(AliasingErrors, InterleavedColumnsOfOneMatrixRun) {
    auto [in, out] = loom::fields<2>("in, out: float32[2D]");
    loom::KernelFunction k =
        loom::create_kernel({loom::Assignment(out.center(), 3.0 * in.center())},
                            loom::test::cpu("alias_columns"))
            .compile();
    auto m = loom::HostArray<float>::random({40, 2}, 12);
    std::vector<float> before = m.to_vector();
    k(loom::args("in", loom::HostView<float>(m.data(), {40, 1}, {2, 1}), "out",
                 loom::HostView<float>(m.data() + 1, {40, 1}, {2, 1})));
    std::vector<float> after = m.to_vector();
    for (int i = 0; i < 40; ++i) {
        EXPECT_EQ(after[2 * i], before[2 * i]);
        EXPECT_EQ(after[2 * i + 1], 3.0f * before[2 * i]);
    }
}

} // namespace
