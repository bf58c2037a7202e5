// Reductions across cells (sum_over_cells, max_over_cells, min_over_cells, mean_over_cells) on the
// CPU target, which runs the same blocks as the GPU (the chunks, the threads' rounds, the warps'
// butterflies, the last block's combination in a fixed order), against hand-written
// double-precision loops on fresh random data with the results poisoned; the CUDA source of each
// is compiled by NVRTC.
#include "tests/support/cell_reductions.hpp"
#include "tests/support/cpu_config.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/nvrtc_check.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

namespace loom {
namespace {

using test::cpu;

std::vector<float> poisoned(std::size_t n) { return std::vector<float>(n, std::nanf("")); }

// Sizes from one cell to many blocks: 1, a partial warp, a partial block, exactly one block's
// share, one past it, and 300001 (147 blocks, the last one's chunk short).
TEST(CellReductions, SumMaxMinAndMeanOfAnArrayMatchDoubleLoops) {
    test::expect_compiles_for_sm90(test::array_stats_kernel(Target::CUDA, "array_stats"));
    KernelFunction f = test::array_stats_kernel(Target::CPU, "array_stats").compile();
    std::uint64_t seed = 300;
    for (std::int64_t n : {1, 7, 1000, 2048, 2049, 300001}) {
        std::vector<float> xv = test::uniform_values(std::size_t(n), ++seed);
        auto stats = HostArray<float>::from_host(poisoned(4), {4});
        f(args("x", HostArray<float>::from_host(xv, {n}), "stats", stats));
        const std::vector<float> got = stats.to_host();
        test::expect_array_stats(got, xv);
    }
}

// The same bits on every call: the order of the additions depends only on the number of cells,
// not on which OpenMP thread (or GPU block) finishes first.
TEST(CellReductions, ASumHasTheSameBitsOnEveryCall) {
    KernelFunction f = test::array_sum_kernel(Target::CPU, "array_sum_bits").compile();
    const std::int64_t n = 1 << 20;
    auto x = HostArray<float>::from_host(test::uniform_values(std::size_t(n), 41), {n});
    std::vector<float> first;
    for (int run = 0; run < 5; ++run) {
        auto total = HostArray<float>::from_host(poisoned(1), {1});
        f(args("x", x, "total", total));
        if (run == 0) first = total.to_host();
        const float got = total.to_host()[0];
        EXPECT_EQ(std::memcmp(&got, &first[0], sizeof got), 0) << "run " << run << ": " << got << " vs " << first[0];
    }
}

// Two fields over a 2D interior (ghost layers from the reads at offsets), a dot product with its
// neighbour along each axis, and an exact int32 count; C and Fortran layouts (the blocks take
// the cells in memory order either way).
TEST(CellReductions, A2DInteriorWithNeighboursAndIntegersMatchesTheLoops) {
    for (Layout layout : {Layout::C, Layout::Fortran}) {
        const std::string name = layout == Layout::C ? "dot_2d_c" : "dot_2d_f";
        auto build = [&](Target target) {
            auto [u, v] = fields<2>("u, v: float64[2D]", layout);
            Field n = make_field("n", ScalarType::Int32, 2, {.layout = layout});
            Field out = field<double>("out", std::vector<std::int64_t>{2});
            Field count = field<std::int32_t>("count", std::vector<std::int64_t>{1});
            return create_kernel(AssignmentCollection{
                                     sum_over_cells(out.at({0}), u.center() * v[{1, 0}] + u[{0, -1}]),
                                     max_over_cells(out.at({1}), abs(u.center() - v.center())),
                                     sum_over_cells(count.at({0}), n.center())},
                                 test::row_config(target, name));
        };
        test::expect_compiles_for_sm90(build(Target::CUDA));
        KernelFunction f = build(Target::CPU).compile();
        const std::int64_t rows = 37, cols = 203; // 35 x 201 interior cells
        const MemoryOrder order = layout == Layout::C ? MemoryOrder::C : MemoryOrder::Fortran;
        std::vector<float> a = test::uniform_values(std::size_t(rows * cols), 7), b = test::uniform_values(std::size_t(rows * cols), 8);
        std::vector<double> uv(a.begin(), a.end()), vv(b.begin(), b.end());
        std::vector<std::int32_t> nv(std::size_t(rows * cols));
        for (std::size_t i = 0; i < nv.size(); ++i) nv[i] = std::int32_t(i % 1013) - 500;
        // from_host takes values in logical C order; `order` is only where they lie in memory.
        auto at = [&](const std::vector<double>& f, std::int64_t i, std::int64_t j) { return f[std::size_t(i * cols + j)]; };
        double dot = 0, gap = -INFINITY;
        std::int64_t total = 0;
        for (std::int64_t i = 1; i < rows - 1; ++i)
            for (std::int64_t j = 1; j < cols - 1; ++j) {
                dot += at(uv, i, j) * at(vv, i + 1, j) + at(uv, i, j - 1);
                gap = std::max(gap, std::abs(at(uv, i, j) - at(vv, i, j)));
                total += nv[std::size_t(i * cols + j)];
            }
        auto out = HostArray<double>::from_host(std::vector<double>(2, std::nan("")), {2});
        auto count = HostArray<std::int32_t>::from_host({-7}, {1});
        f(args("u", HostArray<double>::from_host(uv, {rows, cols}, order), "v",
               HostArray<double>::from_host(vv, {rows, cols}, order), "n",
               HostArray<std::int32_t>::from_host(nv, {rows, cols}, order), "out", out, "count", count));
        EXPECT_NEAR(out.to_host()[0], dot, 1e-9) << name;
        EXPECT_EQ(out.to_host()[1], gap) << name;
        EXPECT_EQ(count.to_host()[0], total) << name;
    }
}

// A value that reduces over an index axis itself (each cell's row sum, then their maximum and
// their total), and a vector field's components as targets.
TEST(CellReductions, RowReductionsInsideAndComponentsAsTargets) {
    const int width = 5;
    auto build = [&](Target target) {
        Field v = make_field("v", ScalarType::Float64, 1, {{width}});
        Field pair = field("pair(2): float64[1]");
        IndexVar k("k", width);
        return create_kernel(AssignmentCollection{sum_over_cells(pair.at({0})(0), sum(k, v(k))),
                                                  max_over_cells(pair.at({0})(1), sum(k, v(k) * v(k)))},
                             test::row_config(target, "row_sums_across_cells"));
    };
    test::expect_compiles_for_sm90(build(Target::CUDA));
    const std::int64_t n = 3001;
    std::vector<float> f = test::uniform_values(std::size_t(n * width), 5);
    std::vector<double> vv(f.begin(), f.end());
    auto pair = HostArray<double>::from_host({std::nan(""), std::nan("")}, {1, 2});
    build(Target::CPU).compile()(args("v", HostArray<double>::from_host(vv, {n, width}), "pair", pair));
    double total = 0, top = -INFINITY;
    for (std::int64_t i = 0; i < n; ++i) {
        double s = 0, q = 0;
        for (int j = 0; j < width; ++j) s += vv[std::size_t(i * width + j)], q += vv[std::size_t(i * width + j)] * vv[std::size_t(i * width + j)];
        total += s;
        top = std::max(top, q);
    }
    EXPECT_NEAR(pair.to_host()[0], total, 1e-9);
    EXPECT_EQ(pair.to_host()[1], top);
}

// No cells: the sum is 0, the maximum -inf, the mean NaN (0 / 0), as the loops give.
TEST(CellReductions, AnEmptyArrayGivesTheIdentities) {
    KernelFunction f = test::array_stats_kernel(Target::CPU, "array_stats_empty").compile();
    auto stats = HostArray<float>::from_host({5, 5, 5, 5}, {4});
    f(args("x", HostArray<float>::from_host({}, {0}), "stats", stats));
    const std::vector<float> got = stats.to_host();
    EXPECT_EQ(got[0], 0.0f);
    EXPECT_EQ(got[1], -INFINITY);
    EXPECT_EQ(got[2], INFINITY);
    EXPECT_TRUE(std::isnan(got[3]));
}

// The kernel's shape: a block loop over chunks, partials in module scratch, the last block's
// combination, and a grid no launch may change.
TEST(CellReductions, TheKernelCombinesItsBlocksInTheLastOne) {
    Kernel k = test::array_sum_kernel(Target::CUDA, "array_sum_shape");
    const std::string src = k.source();
    EXPECT_NE(src.find("__device__ float total_0_partials[1024];"), std::string::npos) << src;
    EXPECT_NE(src.find("if (loom::last_block(loom_ticket[0], blocks))"), std::string::npos) << src;
    EXPECT_NE(src.find("__ldcg(&total_0_partials[partial])"), std::string::npos) << src;
    EXPECT_TRUE(k.launch().exact_grid);
    EXPECT_TRUE(k.launch().exact_block);
    EXPECT_EQ(k.schedule().block, (std::array<int, 3>{1024, 1, 1}));
    // Four reductions, one pass over the cells: one loop updates the four accumulators.
    const std::string stats = test::array_stats_kernel(Target::CUDA, "array_stats_shape").source();
    std::size_t loops = 0;
    for (std::size_t at = stats.find("for (int cell = "); at != std::string::npos; at = stats.find("for (int cell = ", at + 1)) ++loops;
    EXPECT_EQ(loops, 1u) << stats;
    EXPECT_NE(stats.find("stats_0 (sum), stats_1 (max), stats_2 (min), stats_3 (mean) over the block's cells"), std::string::npos) << stats;
    Schedule s;
    s.block = std::array<int, 3>{256, 1, 1};
    Kernel narrow = test::array_sum_kernel(Target::CUDA, "array_sum_256", s);
    test::expect_compiles_for_sm90(narrow);
    EXPECT_NE(narrow.source().find("__launch_bounds__(256)"), std::string::npos) << narrow.source();
}

TEST(CellReductions, BadReductionsAreRefusedWithTheFix) {
    Field x = make_field("x", ScalarType::Float32, 1);
    Field y = make_field("y", ScalarType::Float32, 1);
    Field total = field<float>("total", std::vector<std::int64_t>{2});
    Field loose = make_field("loose", ScalarType::Float32, 1);
    auto make = [&](AssignmentCollection c, const Schedule& s = {}) { create_kernel(c, cpu("bad_reduction"), s); };
    LOOM_EXPECT_ERROR(make(sum_over_cells(loose.at({0}), x.center())), UserError, {"reduces across cells into field loose", "shape is not fixed",
                                   "std::vector<std::int64_t>{1}"});
    LOOM_EXPECT_ERROR(make(sum_over_cells(total.at({cast<int>(ctr(0)) % 2}), x.center())), UserError, {"at the computed index", "an integer literal"});
    LOOM_EXPECT_ERROR(sum_over_cells(total[{0}], x.center()), UserError, {"sum_over_cells: the target `total[0]` is a field access at the cell",
                                   "total.at({0})"});
    LOOM_EXPECT_ERROR(make({sum_over_cells(total.at({0}), x.center()), {y.center(), x.center()}}), UserError, {"writes field y per cell", "computes only reductions", "a kernel of its own"});
    LOOM_EXPECT_ERROR(make({sum_over_cells(total.at({0}), x.center()),
                                              sum_over_cells(total.at({1}), x.center() + total.at({0}))}), UserError, {"reads field total in assignment 2", "the target of a reduction across cells"});
    LOOM_EXPECT_ERROR(make({sum_over_cells(total.at({1}), x.center()),
                                              max_over_cells(total.at({1}), x.center())}), UserError, {"into `total.at(1)` twice", "assignments 1", "an element of its own"});
    LOOM_EXPECT_ERROR(mean_over_cells(total.at({0}), cast<int>(x.center())), UserError, {"mean_over_cells", "needs a floating-point value"});
    LOOM_EXPECT_ERROR(make(sum_over_cells(total.at({0}), x.at({0}))), UserError, {"reads no field at the cell", "x.center()"});
    Field plane = make_field("plane", ScalarType::Float32, 2);
    LOOM_EXPECT_ERROR(create_kernel(sum_over_cells(total.at({0}), plane.center()),
                                    KernelConfig{.target = Target::CPU, .name = "triangle_sum",
                                                 .iteration_slice = Slice{all(), from(ctr(0))}}),
                      UserError, {"over an iteration slice whose bounds use another counter", "select(condition, value, 0)"});
    Schedule tall;
    tall.block = std::array<int, 3>{128, 2, 1};
    LOOM_EXPECT_ERROR(make(sum_over_cells(total.at({0}), x.center()), tall), UserError, {"kernel 'bad_reduction' reduces across cells, where Schedule::block is (128, 2, 1)",
                                   "a power of two from 32 to 1024"});
    Schedule warp;
    warp.reduce_in_warp = true;
    LOOM_EXPECT_ERROR(make(sum_over_cells(total.at({0}), x.center()), warp), UserError, {"Schedule::reduce_in_warp is set"});
}

} // namespace
} // namespace loom
