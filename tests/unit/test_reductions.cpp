// Reductions over IndexVars (sum, max, min, mean) and assignments that write every element of an
// index axis, on the CPU target against hand-written double-precision loops; the CUDA source of
// each is compiled by NVRTC. Inputs are fresh random values, outputs start poisoned.
#include "tests/support/cpu_config.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/layer_norm.hpp"
#include "tests/support/nvrtc_check.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace loom {
namespace {

using test::cpu;

void check_layer_norm(int rows, int width, std::uint64_t seed, const Schedule& schedule = {}) {
    const std::string name = "layer_norm_" + std::to_string(width) + (schedule.reduce_in_block.value_or(false) ? "_block" : "");
    KernelFunction f = test::layer_norm_kernel(width, Target::CPU, name, schedule).compile();
    const std::size_t n = std::size_t(rows) * width;
    std::vector<float> xv = test::uniform_floats(n, seed), wv = test::uniform_floats(width, seed + 1),
                       bv = test::uniform_floats(width, seed + 2);
    const float eps = 1e-5f;
    auto y = HostArray<float>::from_host(std::vector<float>(n, std::nanf("")), {rows, width});
    f(args("x", HostArray<float>::from_host(xv, {rows, width}), "y", y, "w",
           HostArray<float>::from_host(wv, {width}), "b", HostArray<float>::from_host(bv, {width}),
           "eps", eps));
    std::vector<float> got = y.to_host();
    EXPECT_TRUE(test::layer_norm_close(got, test::layer_norm_reference(xv, wv, bv, rows, width, eps), width));
}

TEST(Reductions, LayerNormMatchesAReferenceOnTheCpu) {
    check_layer_norm(37, 768, 11);
    check_layer_norm(5, 1, 12);   // one element: the variance is 0
    check_layer_norm(9, 100, 13); // not a power of two
}

// Schedule::reduce_in_block on the CPU: each row a block, its reductions per-thread partial
// sums and a tree in a shared array, run thread after thread; the same code the GPU runs.
TEST(Reductions, LayerNormWithBlockReductionsMatchesAReferenceOnTheCpu) {
    Schedule s;
    s.reduce_in_block = true;
    s.block = std::array<int, 3>{128, 1, 1};
    check_layer_norm(37, 768, 14, s);
    check_layer_norm(5, 1, 15, s);   // one element: 127 threads have no term
    s.block = std::array<int, 3>{32, 1, 1};
    check_layer_norm(9, 100, 16, s); // not a multiple of the block
}

// max and min as block reductions, and a 2D iteration space (a block per cell of a grid).
TEST(Reductions, MaxAndMinInBlocksOverA2DGridMatchTheLoops) {
    Field u = make_field("u", ScalarType::Float64, 2, {{300}});
    Field out = make_field("out", ScalarType::Float64, 2);
    IndexVar k("k", 300);
    Schedule s;
    s.reduce_in_block = true;
    s.block = std::array<int, 3>{64, 1, 1};
    Kernel kernel = create_kernel(Assignment(out.center(), max(k, u(k)) - 2.0 * min(k, u(k)) + sum(k, u(k))),
                                  cpu("block_max_min"), s);
    // Two warps: each combines its lanes (on the CPU in lockstep, the shuffles' rounds), then
    // the first warp the two warps' results.
    EXPECT_NE(kernel.source().find("max_k_partial[warp] = max_k_warp;"), std::string::npos) << kernel.source();
    EXPECT_NE(kernel.source().find("max_k_partial[2] = max_k_all;"), std::string::npos) << kernel.source();
    KernelFunction f = kernel.compile();
    const std::int64_t rows = 7, cols = 5;
    std::mt19937_64 rng(17);
    std::uniform_real_distribution<double> d(-3, 3);
    std::vector<double> uv(std::size_t(rows * cols * 300));
    for (double& v : uv) v = d(rng);
    auto o = HostArray<double>::from_host(std::vector<double>(std::size_t(rows * cols), std::nan("")), {rows, cols});
    f(args("u", HostArray<double>::from_host(uv, {rows, cols, 300}), "out", o));
    std::vector<double> got = o.to_host();
    for (std::int64_t i = 0; i < rows * cols; ++i) {
        double hi = -INFINITY, lo = INFINITY, sum = 0;
        for (int j = 0; j < 300; ++j) {
            const double v = uv[std::size_t(i * 300 + j)];
            hi = std::max(hi, v);
            lo = std::min(lo, v);
            sum += v;
        }
        EXPECT_NEAR(got[std::size_t(i)], hi - 2 * lo + sum, 1e-12) << "cell " << i;
    }
}

// By default a LayerNorm row gets a warp (its reductions run over 768 >= kMinWarpReduction
// terms): each lane loads its 24 elements once, then two reductions and the output each loop
// over them, unrolled 24 times, not 768. With a thread per row (asked for with another block
// shape) each is a loop over all 768.
TEST(Reductions, LayerNormIsAShortKernelWithLoopsNotUnrolledSums) {
    auto loops = [](const std::string& src, const std::string& head) {
        std::size_t n = 0;
        for (std::size_t at = src.find(head); at != std::string::npos; at = src.find(head, at + 1)) ++n;
        return n;
    };
    Kernel k = test::layer_norm_kernel(768, Target::CUDA, "layer_norm");
    EXPECT_EQ(k.schedule().reduce_in_warp, std::optional<bool>(true)) << k.schedule().describe();
    const std::string src = k.source();
    EXPECT_LE(std::count(src.begin(), src.end(), '\n'), 150) << src;
    EXPECT_EQ(loops(src, "for (int c = 0; c < 24; ++c)"), 4u) << src; // load, 2 reductions, output
    EXPECT_LE(loops(src, "x_row["), 6u) << src;
    test::expect_compiles_for_sm90(k);

    Schedule threads;
    threads.block = std::array<int, 3>{64, 2, 1}; // not whole warps in a row: a thread per row
    Kernel t = test::layer_norm_kernel(768, Target::CUDA, "layer_norm_threads", threads);
    EXPECT_EQ(t.schedule().reduce_in_warp, std::optional<bool>(false));
    const std::string tsrc = t.source();
    EXPECT_EQ(loops(tsrc, "for (int k = 0; k < 768; ++k)"), 3u) << tsrc;
    EXPECT_EQ(tsrc.find("#pragma unroll"), std::string::npos) << tsrc;
    EXPECT_NE(tsrc.find("float sum_k = 0.0f;"), std::string::npos) << tsrc;
    test::expect_compiles_for_sm90(t);
}

// A reduction over fewer than kMinWarpReduction terms (a lattice Boltzmann cell's density over
// 19 populations) stays in the cell's thread.
TEST(Reductions, ShortReductionsStayInTheirThreadByDefault) {
    Field f = make_field("f", ScalarType::Float32, 2, {{19}});
    Field rho = make_field("rho", ScalarType::Float32, 2);
    IndexVar q("q", 19), p("p", 32);
    Kernel k = create_kernel(Assignment(rho.center(), sum(q, f(q))), {.name = "density"});
    EXPECT_EQ(k.schedule().reduce_in_warp, std::optional<bool>(false)) << k.schedule().describe();
    EXPECT_EQ(k.schedule().cells_per_thread, 1) << "pointwise: no two cells share a read";
    // 32 terms in a 1D kernel (rows): a warp per row. In 2D a thread per cell stays (a block
    // per cell along y would bound the grid at 65535 cells there).
    Field g = make_field("g", ScalarType::Float32, 1, {{32}});
    Field r1 = make_field("r1", ScalarType::Float32, 1);
    Kernel wide = create_kernel(Assignment(r1.center(), sum(p, g(p))), {.name = "sum32"});
    EXPECT_EQ(wide.schedule().reduce_in_warp, std::optional<bool>(true)) << wide.schedule().describe();
    EXPECT_EQ(wide.schedule().cells_per_thread, 1);
    test::expect_compiles_for_sm90(wide);
    Field g2 = make_field("g2", ScalarType::Float32, 2, {{32}});
    Kernel grid = create_kernel(Assignment(rho.center(), sum(p, g2(p))), {.name = "sum32_2d"});
    EXPECT_EQ(grid.schedule().reduce_in_warp, std::optional<bool>(false)) << grid.schedule().describe();
    // Components slowest (SoA): neighbouring cells lie together, so a thread per cell reads
    // coalesced and a warp per cell would not: no warp by default.
    FieldOptions soa;
    soa.index_shape = {32};
    soa.layout = Layout::SoA;
    Field s = make_field("s", ScalarType::Float32, 2, soa);
    Kernel columns = create_kernel(Assignment(rho.center(), sum(p, s(p))), {.name = "sum_soa"});
    EXPECT_EQ(columns.schedule().reduce_in_warp, std::optional<bool>(false)) << columns.schedule().describe();
}

// reduce_in_warp = false is a thread per row, as asked; a cell that stores a row's mean and
// reads it back gets no warp by default, and asking for one is an error that says why.
TEST(Reductions, AWarpPerRowCanBeTurnedOffAndIsNotChosenWhereLanesWouldReadEachOthersStores) {
    Schedule off;
    off.reduce_in_warp = false;
    Kernel t = test::layer_norm_kernel(768, Target::CUDA, "ln_off", off);
    EXPECT_EQ(t.schedule().reduce_in_warp, std::optional<bool>(false));
    EXPECT_EQ(t.source().find("warp_reduce"), std::string::npos) << t.source();

    auto saved_mean = [](const Schedule& s) {
        Field x = make_field("x", ScalarType::Float32, 1, {{256}});
        Field y = make_field("y", ScalarType::Float32, 1, {{256}});
        Field mu = make_field("mu", ScalarType::Float32, 1);
        IndexVar k("k", 256);
        AssignmentCollection c;
        c.add({mu.center(), mean(k, x(k))});
        c.add({y(k), x(k) - mu.center()});
        return create_kernel(c, {.name = "saved_mean"}, s);
    };
    EXPECT_EQ(saved_mean({}).schedule().reduce_in_warp, std::optional<bool>(false));
    Schedule on;
    on.reduce_in_warp = true;
    LOOM_EXPECT_ERROR(saved_mean(on), UserError,
                      {"kernel 'saved_mean' has Schedule::reduce_in_warp = true, but its cell reads a field it writes",
                       "keep the value in a subexpression instead of a field, or set reduce_in_warp to false"});
    // A block per cell alike: one thread stores the mean, every thread reads it, unordered.
    Schedule block;
    block.reduce_in_block = true;
    LOOM_EXPECT_ERROR(saved_mean(block), UserError,
                      {"kernel 'saved_mean' has Schedule::reduce_in_block = true, but its cell reads a field it writes",
                       "a block's threads would read what another thread stored", "set reduce_in_block to false"});
    EXPECT_EQ(saved_mean({}).schedule().reduce_in_block, std::optional<bool>(false));
}

TEST(Reductions, MaxMinAndSumOfIntegersAndNestedReductions) {
    const int rows = 23, width = 17;
    Field x = make_field("x", ScalarType::Int32, 1, {{width}});
    Field u = make_field("u", ScalarType::Float64, 1, {{width}});
    auto [hi, lo, total] = fields<3>("hi, lo, total: int32[1D]");
    Field spread = field("spread: float64[1D]");
    IndexVar k("k", width), j("j", width);
    // spread: the largest |u(j) - u(k)| over all pairs, a reduction inside a reduction's body.
    KernelFunction f = create_kernel({{hi.center(), max(k, x(k))},
                                      {lo.center(), min(k, x(k))},
                                      {total.center(), sum(k, x(k) * 2)},
                                      {spread.center(), max(j, max(k, abs(u(j) - u(k))))}},
                                     cpu("integer_reductions"))
                           .compile();
    std::mt19937_64 rng(21);
    std::vector<std::int32_t> xv(std::size_t(rows) * width);
    for (auto& v : xv) v = std::int32_t(rng() % 2001) - 1000;
    std::vector<double> uv(xv.size());
    for (auto& v : uv) v = std::uniform_real_distribution<double>(-3, 3)(rng);
    const std::int32_t poison = -77777;
    auto h = HostArray<std::int32_t>::from_host(std::vector<std::int32_t>(rows, poison), {rows});
    auto l = HostArray<std::int32_t>::from_host(std::vector<std::int32_t>(rows, poison), {rows});
    auto t = HostArray<std::int32_t>::from_host(std::vector<std::int32_t>(rows, poison), {rows});
    auto s = HostArray<double>::from_host(std::vector<double>(rows, -1.0), {rows});
    f(args("x", HostArray<std::int32_t>::from_host(xv, {rows, width}), "u",
           HostArray<double>::from_host(uv, {rows, width}), "hi", h, "lo", l, "total", t,
           "spread", s));
    for (int r = 0; r < rows; ++r) {
        std::int32_t mx = INT32_MIN, mn = INT32_MAX, sm = 0;
        double sp = -INFINITY;
        for (int a = 0; a < width; ++a) {
            const std::int32_t v = xv[std::size_t(r) * width + a];
            mx = std::max(mx, v), mn = std::min(mn, v), sm += 2 * v;
            for (int c = 0; c < width; ++c)
                sp = std::max(sp, std::abs(uv[std::size_t(r) * width + a] -
                                           uv[std::size_t(r) * width + c]));
        }
        EXPECT_EQ(h.to_host()[r], mx) << "row " << r;
        EXPECT_EQ(l.to_host()[r], mn) << "row " << r;
        EXPECT_EQ(t.to_host()[r], sm) << "row " << r;
        EXPECT_EQ(s.to_host()[r], sp) << "row " << r;
    }
}

TEST(Reductions, AnIndexedAssignmentWritesEveryElementAndReadsNeighbours) {
    // y(k) = x[-1](k) + x[1](k) - mean over the cell's own row: a stencil over rows with a
    // reduction per cell, so offsets, ghost layers and index variables meet.
    const int rows = 19, width = 13;
    Field x = make_field("x", ScalarType::Float64, 1, {{width}});
    Field y = make_field("y", ScalarType::Float64, 1, {{width}});
    IndexVar k("k", width), j("j", width);
    const Assignment update{y(k), x[{-1}](k) + x[{1}](k) - mean(j, x(j))};
    Kernel kernel = create_kernel({update}, cpu("neighbour_rows"));
    KernelFunction f = kernel.compile();
    std::mt19937_64 rng(31);
    std::vector<double> xv(std::size_t(rows) * width);
    for (auto& v : xv) v = std::uniform_real_distribution<double>(-1, 1)(rng);
    auto y_arr = HostArray<double>::from_host(std::vector<double>(xv.size(), 1e300), {rows, width});
    f(args("x", HostArray<double>::from_host(xv, {rows, width}), "y", y_arr));
    std::vector<double> got = y_arr.to_host();
    for (int r = 0; r < rows; ++r)
        for (int e = 0; e < width; ++e) {
            const std::size_t at = std::size_t(r) * width + e;
            if (r == 0 || r == rows - 1) {
                EXPECT_EQ(got[at], 1e300) << "a ghost row was written: " << r;
                continue;
            }
            double m = 0;
            for (int c = 0; c < width; ++c) m += xv[std::size_t(r) * width + c];
            m /= width;
            EXPECT_NEAR(got[at], xv[at - width] + xv[at + width] - m, 1e-12) << r << ", " << e;
        }
    KernelConfig cuda;
    cuda.name = "neighbour_rows";
    test::expect_compiles_for_sm90(create_kernel({update}, cuda));
}

TEST(Reductions, ErrorsNameTheIndexVariableAndTheFix) {
    Field x = make_field("x", ScalarType::Float32, 1, {{8}});
    Field y = make_field("y", ScalarType::Float32, 1, {{8}});
    Field m = make_field("m", ScalarType::Float32, 1, {{2, 4}});
    auto [s] = fields<1>("s: float32[1D]");
    auto [n] = fields<1>("n: int32[1D]");
    IndexVar k("k", 8), big("big", 9);
    LOOM_EXPECT_ERROR(create_kernel({{s.center(), x(k)}}, cpu("free_k")), UserError,
                      {"index variable k outside anything that binds it", "assignment 1",
                       "sum(k, ...)", "y(k) = ..."});
    AssignmentCollection temp_use;
    temp_use.subexpression("t", x(k) * 2);
    temp_use.add({s.center(), constant(ScalarType::Float32, 1.0)});
    LOOM_EXPECT_ERROR(create_kernel(temp_use, cpu("temp_k")), UserError,
                      {"index variable k", "a temporary holds one value per cell"});
    LOOM_EXPECT_ERROR(create_kernel({{y(k), sum(k, x(k))}}, cpu("rebound")), UserError,
                      {"reduces over the index variable k inside something that binds k already",
                       "second IndexVar"});
    LOOM_EXPECT_ERROR(x(big), UserError, {"x[{0}](big)", "big runs over [0, 9)", "8 elements"});
    LOOM_EXPECT_ERROR(m(k), UserError, {"field m has 2 index dimension(s)", "exactly one index axis"});
    LOOM_EXPECT_ERROR(mean(k, n.center() + 0 * k), UserError,
                      {"mean(k, ...)", "int32", "would truncate", "cast<float>"});
    LOOM_EXPECT_ERROR(sum(k, x(k) > 0.0), UserError, {"sum(k, ...)", "condition (bool)"});
    LOOM_EXPECT_ERROR(sum(k, Expr(1.5)), UserError, {"sum(k, ...)", "has no type"});
    LOOM_EXPECT_ERROR(IndexVar("2k", 4), UserError, {"'2k' is not an identifier"});
    LOOM_EXPECT_ERROR(IndexVar("k", 0), UserError, {"extent 0", "1 <= extent"});
    LOOM_EXPECT_ERROR(create_kernel({{y(k), x(k)}, {y(3), x(3)}}, cpu("twice")), UserError,
                      {"writes field y in assignment 1", "every element of its index axis",
                       "again in assignment 2"});
}

} // namespace
} // namespace loom
