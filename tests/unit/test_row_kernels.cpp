// Row kernels with a warp per row (Schedule::reduce_in_warp) on the CPU target, which runs the
// same loops as the GPU (its lanes one after the other between the warp reductions, each lane's
// registers an array of its own), against hand-written double-precision loops on fresh random
// data with the outputs poisoned; the CUDA source of each is compiled by NVRTC.
#include "tests/support/cpu_config.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/layer_norm.hpp"
#include "tests/support/nvrtc_check.hpp"
#include "tests/support/row_kernels.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace loom {
namespace {

using test::blocks;
using test::warps;

using test::cpu;

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

void check_layer_norm(int rows, int width, std::uint64_t seed, const Schedule& s) {
    const std::string name = "warp_layer_norm_" + std::to_string(width);
    Kernel gpu = test::layer_norm_kernel(width, Target::CUDA, name, s);
    test::expect_compiles_for_sm90(gpu);
    KernelFunction f = test::layer_norm_kernel(width, Target::CPU, name, s).compile();
    const std::size_t n = std::size_t(rows) * width;
    std::vector<float> xv = test::uniform_floats(n, seed), wv = test::uniform_floats(width, seed + 1),
                       bv = test::uniform_floats(width, seed + 2);
    const float eps = 1e-5f;
    auto y = HostArray<float>::from_host(std::vector<float>(n, std::nanf("")), {rows, width});
    f(args("x", HostArray<float>::from_host(xv, {rows, width}), "y", y, "w", HostArray<float>::from_host(wv, {width}),
           "b", HostArray<float>::from_host(bv, {width}), "eps", eps));
    EXPECT_TRUE(test::layer_norm_close(y.to_host(), test::layer_norm_reference(xv, wv, bv, rows, width, eps), width))
        << "width " << width;
}

// 37 rows: the last block of 8 warps has 5 rows. Widths: 768 and 4096 rows kept in registers
// (24 and 128 per lane), 100 (not a multiple of the warp) and 8192 (256 per lane, past the
// limit) read from memory in each pass, 1 (31 lanes without a term).
TEST(RowKernels, LayerNormWithAWarpPerRowMatchesAReferenceOnTheCpu) {
    check_layer_norm(37, 768, 61, warps());
    check_layer_norm(37, 100, 62, warps());
    check_layer_norm(5, 1, 63, warps(32));
    check_layer_norm(9, 4096, 64, warps(128));
    check_layer_norm(3, 8192, 65, warps(64));
}

// The kernel a user reads: rows in registers, loaded once; each reduction a lane's share and
// one warp_reduce; no shared memory for the reductions and no barrier after the weights'.
TEST(RowKernels, LayerNormKeepsItsRowInRegistersAndReducesByShuffles) {
    const std::string src = test::layer_norm_kernel(768, Target::CUDA, "ln_warp", warps()).source();
    EXPECT_NE(src.find("float x_row[24];"), std::string::npos) << src;
    EXPECT_EQ(count(src, "x_row[c] = x["), 1u) << src;             // x read from memory once
    EXPECT_EQ(count(src, "x[x_stride_0"), 1u) << src;
    EXPECT_EQ(count(src, "loom::warp_reduce("), 2u) << src;        // mean and variance
    EXPECT_EQ(count(src, "__syncthreads()"), 1u) << src;           // the staged weights' only
    EXPECT_EQ(src.find("_partial"), std::string::npos) << src;     // no shared partial sums
    EXPECT_EQ(src.find("w_row"), std::string::npos) << src;        // weights read once: not kept
    EXPECT_NE(src.find("w_shared[k]"), std::string::npos) << src;  // every row reads all of w
    EXPECT_NE(src.find("if (block_x * 8 + warp < size_0)"), std::string::npos) << src;
    // 8192 per row is 256 per lane, past kMaxRowRegisters: each pass reads x again.
    const std::string wide = test::layer_norm_kernel(8192, Target::CUDA, "ln_wide", warps()).source();
    EXPECT_EQ(wide.find("x_row"), std::string::npos) << wide;
    EXPECT_EQ(count(wide, "x[x_stride_0"), 4u) << wide; // the variance reads it twice
}

TEST(RowKernels, SoftmaxWithTheMaximumSubtractedMatchesAReferenceOnTheCpu) {
    for (int width : {768, 128, 50}) {
        const int rows = 21;
        const std::string name = "softmax_" + std::to_string(width);
        test::expect_compiles_for_sm90(test::softmax_kernel(width, Target::CUDA, name, warps()));
        KernelFunction f = test::softmax_kernel(width, Target::CPU, name, warps()).compile();
        std::vector<float> xv = test::uniform_floats(std::size_t(rows) * width, 70 + width);
        for (float& v : xv) v *= 20; // exp would overflow without the maximum subtracted
        auto y = HostArray<float>::from_host(std::vector<float>(xv.size(), std::nanf("")), {rows, width});
        f(args("x", HostArray<float>::from_host(xv, {rows, width}), "y", y));
        EXPECT_TRUE(test::rows_close(y.to_host(), test::softmax_reference(xv, rows, width), width, 1e-5));
    }
}

TEST(RowKernels, RmsNormLogSumExpAndResidualLayerNormMatchReferencesOnTheCpu) {
    const int rows = 19, width = 256;
    const std::size_t n = std::size_t(rows) * width;
    std::vector<float> xv = test::uniform_floats(n, 81), rv = test::uniform_floats(n, 82),
                       wv = test::uniform_floats(width, 83), bv = test::uniform_floats(width, 84);
    const float eps = 1e-6f;
    auto x = HostArray<float>::from_host(xv, {rows, width});
    {
        test::expect_compiles_for_sm90(test::rms_norm_kernel(width, Target::CUDA, "rms", warps(128)));
        auto y = HostArray<float>::from_host(std::vector<float>(n, std::nanf("")), {rows, width});
        test::rms_norm_kernel(width, Target::CPU, "rms", warps(128))
            .compile()(args("x", x, "y", y, "w", HostArray<float>::from_host(wv, {width}), "eps", eps));
        EXPECT_TRUE(test::rows_close(y.to_host(), test::rms_norm_reference(xv, wv, rows, width, eps), width));
    }
    {
        test::expect_compiles_for_sm90(test::log_sum_exp_kernel(width, Target::CUDA, "lse", warps(64)));
        auto lse = HostArray<float>::from_host(std::vector<float>(rows, std::nanf("")), {rows});
        test::log_sum_exp_kernel(width, Target::CPU, "lse", warps(64)).compile()(args("x", x, "lse", lse));
        EXPECT_TRUE(test::rows_close(lse.to_host(), test::log_sum_exp_reference(xv, rows, width), 1));
    }
    {
        test::expect_compiles_for_sm90(test::add_layer_norm_kernel(width, Target::CUDA, "add_ln", warps()));
        auto h = HostArray<float>::from_host(std::vector<float>(n, std::nanf("")), {rows, width});
        auto y = HostArray<float>::from_host(std::vector<float>(n, std::nanf("")), {rows, width});
        test::add_layer_norm_kernel(width, Target::CPU, "add_ln", warps())
            .compile()(args("x", x, "r", HostArray<float>::from_host(rv, {rows, width}), "h", h, "y", y, "w",
                            HostArray<float>::from_host(wv, {width}), "b", HostArray<float>::from_host(bv, {width}),
                            "eps", eps));
        std::vector<float> sum(n);
        for (std::size_t i = 0; i < n; ++i) sum[i] = xv[i] + rv[i];
        std::vector<double> want_h(sum.begin(), sum.end());
        EXPECT_TRUE(test::rows_close(h.to_host(), want_h, width, 0));
        EXPECT_TRUE(test::rows_close(y.to_host(), test::layer_norm_reference(sum, wv, bv, rows, width, eps), width));
    }
}

// A block per row (Schedule::reduce_in_block) keeps each row two or more passes read in shared
// memory: filled once by the block's threads, then read by every pass. On the CPU the block's
// threads run one after the other between its barriers, over the same shared array.
TEST(RowKernels, ABlockPerRowKeepsItsRowsInSharedMemory) {
    check_layer_norm(7, 4096, 91, blocks(256));
    check_layer_norm(5, 1000, 92, blocks(128)); // not a multiple of the block
    check_layer_norm(2, 16384, 93, blocks(1024)); // 64 KiB: past kMaxRowSharedBytes, read per pass
    const std::string src = test::layer_norm_kernel(4096, Target::CUDA, "ln_block", blocks(256)).source();
    EXPECT_NE(src.find("__shared__ __align__(16) float x_row[4096];"), std::string::npos) << src;
    EXPECT_EQ(count(src, "x[x_stride_0"), 1u) << src; // the fill: x read from memory once
    EXPECT_EQ(src.find("w_shared"), std::string::npos) << src; // one row per block: w not staged
    EXPECT_NE(src.find("(x_row[k] - mean) * rstd * w[k] + b[k]"), std::string::npos) << src;
    const std::string wide = test::layer_norm_kernel(16384, Target::CUDA, "ln_block_wide", blocks(256)).source();
    EXPECT_EQ(wide.find("x_row"), std::string::npos) << wide;
    // The default past 2048 terms: a block of 256 per row; at 2048 a warp.
    const Kernel chosen = test::layer_norm_kernel(4096, Target::CUDA, "ln_default", {});
    EXPECT_TRUE(chosen.schedule().reduce_in_block.value_or(false)) << chosen.schedule().describe();
    EXPECT_FALSE(chosen.schedule().reduce_in_warp.value_or(true));
    EXPECT_NE(chosen.schedule().describe(chosen.requested_schedule()).find("reduce_in_block = true (chosen)"),
              std::string::npos);
    EXPECT_NE(chosen.source().find("float x_row[4096];"), std::string::npos);
    const Kernel warp = test::layer_norm_kernel(2048, Target::CUDA, "ln_default_2048", {});
    EXPECT_TRUE(warp.schedule().reduce_in_warp.value_or(false)) << warp.schedule().describe();
    EXPECT_FALSE(warp.schedule().reduce_in_block.value_or(true));

    // Softmax and residual add + LayerNorm: each of x and r kept; RMSNorm with a block of 1024.
    const int rows = 6, width = 2048;
    const std::size_t n = std::size_t(rows) * width;
    std::vector<float> xv = test::uniform_floats(n, 94), rv = test::uniform_floats(n, 95),
                       wv = test::uniform_floats(width, 96), bv = test::uniform_floats(width, 97);
    for (float& v : xv) v *= 20;
    auto x = HostArray<float>::from_host(xv, {rows, width});
    auto y = HostArray<float>::from_host(std::vector<float>(n, std::nanf("")), {rows, width});
    test::expect_compiles_for_sm90(test::softmax_kernel(width, Target::CUDA, "softmax_block", blocks(512)));
    test::softmax_kernel(width, Target::CPU, "softmax_block", blocks(512)).compile()(args("x", x, "y", y));
    EXPECT_TRUE(test::rows_close(y.to_host(), test::softmax_reference(xv, rows, width), width, 1e-5));

    y = HostArray<float>::from_host(std::vector<float>(n, std::nanf("")), {rows, width});
    test::expect_compiles_for_sm90(test::rms_norm_kernel(width, Target::CUDA, "rms_block", blocks(1024)));
    test::rms_norm_kernel(width, Target::CPU, "rms_block", blocks(1024))
        .compile()(args("x", x, "y", y, "w", HostArray<float>::from_host(wv, {width}), "eps", 1e-6f));
    EXPECT_TRUE(test::rows_close(y.to_host(), test::rms_norm_reference(xv, wv, rows, width, 1e-6f), width));

    const Kernel add_ln = test::add_layer_norm_kernel(width, Target::CUDA, "add_ln_block", blocks(256));
    test::expect_compiles_for_sm90(add_ln);
    EXPECT_NE(add_ln.source().find("float x_row[2048];"), std::string::npos) << add_ln.source();
    EXPECT_NE(add_ln.source().find("float r_row[2048];"), std::string::npos) << add_ln.source();
    auto h = HostArray<float>::from_host(std::vector<float>(n, std::nanf("")), {rows, width});
    y = HostArray<float>::from_host(std::vector<float>(n, std::nanf("")), {rows, width});
    test::add_layer_norm_kernel(width, Target::CPU, "add_ln_block", blocks(256))
        .compile()(args("x", x, "r", HostArray<float>::from_host(rv, {rows, width}), "h", h, "y", y, "w",
                        HostArray<float>::from_host(wv, {width}), "b", HostArray<float>::from_host(bv, {width}),
                        "eps", 1e-5f));
    std::vector<float> sum(n);
    for (std::size_t i = 0; i < n; ++i) sum[i] = xv[i] + rv[i];
    EXPECT_TRUE(test::rows_close(h.to_host(), std::vector<double>(sum.begin(), sum.end()), width, 0));
    EXPECT_TRUE(test::rows_close(y.to_host(), test::layer_norm_reference(sum, wv, bv, rows, width, 1e-5f), width));
}

// An in-place LayerNorm (x(k) = (x(k) - mean) * rstd): each element is read and stored by the
// lane or thread that owns it in every pass, so a warp or a block per row may take it (the
// default too); storing a value per row and reading it back stays an error (test_reductions).
TEST(RowKernels, AnInPlaceNormalisationTakesAWarpOrABlockPerRow) {
    const auto in_place = test::in_place_layer_norm_kernel;
    EXPECT_TRUE(in_place(768, Target::CUDA, "in_place", {}).schedule().reduce_in_warp.value_or(false));
    EXPECT_TRUE(in_place(4096, Target::CUDA, "in_place_4096", {}).schedule().reduce_in_block.value_or(false));
    for (const auto& [width, s] : {std::pair{768, warps()}, std::pair{2048, blocks(256)}, std::pair{100, blocks(64)}}) {
        const int rows = 9;
        const std::string name = "in_place_" + std::to_string(width);
        test::expect_compiles_for_sm90(in_place(width, Target::CUDA, name, s));
        std::vector<float> xv = test::uniform_floats(std::size_t(rows) * width, 120 + width);
        auto x = HostArray<float>::from_host(xv, {rows, width});
        in_place(width, Target::CPU, name, s).compile()(args("x", x));
        const std::vector<float> ones(std::size_t(width), 1.0f), zeros(std::size_t(width), 0.0f);
        EXPECT_TRUE(test::layer_norm_close(x.to_host(), test::layer_norm_reference(xv, ones, zeros, rows, width, 1e-5f), width))
            << "width " << width;
    }
}

// Column sums of a row-major matrix with a literal number of rows: the columns are cells, the
// rows an index axis stored components slowest (SoA), a thread per column by default.
TEST(RowKernels, ColumnSumsAndMaximaOfAMatrixMatchTheLoops) {
    const int rows = 300, columns = 1001;
    const Kernel gpu = test::column_sums_kernel(rows, Target::CUDA, "column_sums");
    test::expect_compiles_for_sm90(gpu);
    EXPECT_FALSE(gpu.schedule().reduce_in_warp.value_or(true)) << gpu.schedule().describe();
    EXPECT_FALSE(gpu.schedule().reduce_in_block.value_or(true)) << gpu.schedule().describe();
    EXPECT_NE(gpu.source().find("m[x + m_stride_1 * r]"), std::string::npos) << gpu.source();
    // The sum and the maximum are independent: one loop reads each element once for both; a
    // thread per column, no lanes (each thread would run its lanes' loops one after another).
    EXPECT_EQ(count(gpu.source(), "for (int r = 0; r < 300; ++r)"), 1u) << gpu.source();
    EXPECT_EQ(gpu.schedule().vector_width, 1) << gpu.schedule().describe();
    std::vector<float> mv = test::uniform_floats(std::size_t(rows) * columns, 99);
    auto m = HostArray<float>::from_host(test::as_columns_by_rows(mv, rows, columns), {columns, rows}, MemoryOrder::Fortran);
    auto total = HostArray<float>::from_host(std::vector<float>(columns, std::nanf("")), {columns});
    auto top = HostArray<float>::from_host(std::vector<float>(columns, std::nanf("")), {columns});
    test::column_sums_kernel(rows, Target::CPU, "column_sums").compile()(args("m", m, "total", total, "top", top));
    const auto [want_total, want_top] = test::column_sums_reference(mv, rows, columns);
    EXPECT_TRUE(test::rows_close(total.to_host(), want_total, columns, 1e-4));
    EXPECT_TRUE(test::rows_close(top.to_host(), want_top, columns, 0));
}

// Independent reductions of a row (its sum, its maximum, its sum of squares) share one loop
// with a warp or a block per row: each element is read once for all three, and each comes out
// of its own shuffle reduction.
TEST(RowKernels, IndependentReductionsOfARowShareOneLoop) {
    const int width = 1000;
    auto build = [&](Target target, const std::string& name, const Schedule& s) {
        Field x = make_field("x", ScalarType::Float32, 1, {{width}});
        auto [total, top, squares] = fields<3>("total, top, squares: float32[1D]");
        IndexVar k("k", width);
        return create_kernel({{total.center(), sum(k, x(k))}, {top.center(), max(k, x(k))},
                              {squares.center(), sum(k, x(k) * x(k))}},
                             test::row_config(target, name), s);
    };
    for (const auto& [name, s] : {std::pair{std::string("row_stats_warp"), warps()}, {"row_stats_block", blocks(128)}}) {
        Kernel gpu = build(Target::CUDA, name, s);
        test::expect_compiles_for_sm90(gpu);
        EXPECT_EQ(count(gpu.source(), "for (int k = "), 1u) << gpu.source();
        const int rows = 37;
        std::vector<float> xv = test::uniform_floats(std::size_t(rows) * width, 17);
        auto t = HostArray<float>::from_host(std::vector<float>(rows, std::nanf("")), {rows});
        auto m = HostArray<float>::from_host(std::vector<float>(rows, std::nanf("")), {rows});
        auto q = HostArray<float>::from_host(std::vector<float>(rows, std::nanf("")), {rows});
        build(Target::CPU, name, s).compile()(args("x", HostArray<float>::from_host(xv, {rows, width}), "total", t,
                                                   "top", m, "squares", q));
        for (int r = 0; r < rows; ++r) {
            double st = 0, sm = -INFINITY, sq = 0;
            for (int i = 0; i < width; ++i) {
                const double v = xv[std::size_t(r) * width + std::size_t(i)];
                st += v, sm = std::max(sm, v), sq += v * v;
            }
            EXPECT_NEAR(t.to_host()[std::size_t(r)], st, 1e-3) << name << " row " << r;
            EXPECT_EQ(m.to_host()[std::size_t(r)], float(sm)) << name << " row " << r;
            EXPECT_NEAR(q.to_host()[std::size_t(r)], sq, 1e-3) << name << " row " << r;
        }
    }
}

// A 2D grid of cells (a warp per cell along x, a block row per y), max and min, and a reduction
// nested in another's body, which stays a loop of its lane.
TEST(RowKernels, MaxMinAndNestedReductionsInWarpsOverA2DGrid) {
    const int width = 64;
    Field u = make_field("u", ScalarType::Float64, 2, {{width}});
    Field out = make_field("out", ScalarType::Float64, 2);
    IndexVar k("k", width), j("j", 8);
    Expr spread = max(j, abs(u(j) - min(k, u(k))));
    Kernel gpu = create_kernel(Assignment(out.center(), max(k, u(k)) - 2.0 * min(k, u(k)) + spread),
                               test::row_config(Target::CUDA, "warp_max_min"), warps(64));
    test::expect_compiles_for_sm90(gpu);
    KernelFunction f = create_kernel(Assignment(out.center(), max(k, u(k)) - 2.0 * min(k, u(k)) + spread),
                                     cpu("warp_max_min"), warps(64))
                           .compile();
    const std::int64_t rows = 5, cols = 7;
    std::mt19937_64 rng(91);
    std::uniform_real_distribution<double> d(-3, 3);
    std::vector<double> uv(std::size_t(rows * cols * width));
    for (double& v : uv) v = d(rng);
    auto o = HostArray<double>::from_host(std::vector<double>(std::size_t(rows * cols), std::nan("")), {rows, cols});
    f(args("u", HostArray<double>::from_host(uv, {rows, cols, width}), "out", o));
    std::vector<double> got = o.to_host();
    for (std::int64_t i = 0; i < rows * cols; ++i) {
        const double* cell = &uv[std::size_t(i * width)];
        double hi = -INFINITY, lo = INFINITY, sp = -INFINITY;
        for (int a = 0; a < width; ++a) hi = std::max(hi, cell[a]), lo = std::min(lo, cell[a]);
        for (int a = 0; a < 8; ++a) sp = std::max(sp, std::abs(cell[a] - lo));
        EXPECT_NEAR(got[std::size_t(i)], hi - 2 * lo + sp, 1e-12) << "cell " << i;
    }
}

TEST(RowKernels, AWarpPerRowNeedsABlockOfWholeWarpsAndNoOtherCooperation) {
    auto ln = [](const Schedule& s) { test::layer_norm_kernel(64, Target::CPU, "bad_rows", s); };
    Schedule both = warps();
    both.reduce_in_block = true;
    LOOM_EXPECT_ERROR(ln(both), UserError, {"kernel 'bad_rows' has Schedule::reduce_in_warp = true with reduce_in_block = true",
                             "a cell belongs to one warp or to a whole block, not both",
                             "set one of them to false"});
    Schedule tiles = warps();
    tiles.shared_tiles = true;
    LOOM_EXPECT_ERROR(ln(tiles), UserError, {"reduce_in_warp = true with shared_tiles = true"});
    LOOM_EXPECT_ERROR(ln(warps(48)), UserError, {"kernel 'bad_rows' has Schedule::block (48, 1, 1) with reduce_in_warp = true",
                             "the block is (32 w, 1, 1) for w warps from 1 to 32", "e.g. (256, 1, 1)"});
    Schedule flat = warps();
    flat.block = std::array<int, 3>{64, 4, 1};
    LOOM_EXPECT_ERROR(ln(flat), UserError, {"Schedule::block (64, 4, 1) with reduce_in_warp = true"});
    Schedule lanes = warps();
    lanes.vector_width = 4;
    LOOM_EXPECT_ERROR(ln(lanes), UserError, {"vector_width = 4 with reduce_in_warp = true"});
}

} // namespace
} // namespace loom

namespace loom {
namespace {

// GELU (tanh approximation) and bias + GELU, pointwise over a 2D field, the bias read at the
// column: against double-precision loops, the CUDA source compiled by NVRTC.
// A row of 2^31 - 1 elements: a warp's or a block's int32 counter would step past 2^31 - 1 after
// its last element (asked for, a UserError: tests/error/error_rows_schedule.cpp), so the
// default is a thread per row, whose counter stops at the end.
TEST(RowKernels, ARowOfTwoToThe31ElementsTakesAThreadPerRow) {
    const int width = 2147483647;
    Field x = make_field("x", ScalarType::Float32, 1, {{width}});
    Field total = make_field("total", ScalarType::Float32, 1);
    IndexVar k("k", width);
    const Kernel gpu = create_kernel(Assignment(total.center(), sum(k, x(k))), test::row_config(Target::CUDA, "long_row"));
    EXPECT_FALSE(gpu.schedule().reduce_in_warp.value_or(true)) << gpu.schedule().describe();
    EXPECT_FALSE(gpu.schedule().reduce_in_block.value_or(true)) << gpu.schedule().describe();
    EXPECT_NE(gpu.source().find("for (int k = 0; k < 2147483647; ++k)"), std::string::npos) << gpu.source();
    test::expect_compiles_for_sm90(gpu);
}

TEST(RowKernels, GeluAndBiasGeluMatchAReferenceOnTheCpu) {
    const int rows = 37, cols = 96;
    std::vector<float> xv = test::uniform_floats(std::size_t(rows) * cols, 101), bv = test::uniform_floats(cols, 102);
    for (float& v : xv) v *= 3;
    for (bool bias : {false, true}) {
        const std::string name = bias ? "bias_gelu" : "gelu";
        Kernel gpu = test::gelu_kernel(cols, bias, Target::CUDA, name);
        // Lanes of 4 for GELU; the bias is read at an absolute position (a gather): scalar.
        EXPECT_EQ(gpu.schedule().vector_width, bias ? 1 : 4) << gpu.schedule().describe();
        // Each thread reads the bias at its own column: not copied whole into shared memory.
        EXPECT_EQ(gpu.source().find("b_shared"), std::string::npos) << gpu.source();
        test::expect_compiles_for_sm90(gpu);
        KernelFunction f = test::gelu_kernel(cols, bias, Target::CPU, name).compile();
        auto y = HostArray<float>::from_host(std::vector<float>(xv.size(), std::nanf("")), {rows, cols});
        auto x = HostArray<float>::from_host(xv, {rows, cols});
        if (bias)
            f(args("x", x, "y", y, "b", HostArray<float>::from_host(bv, {cols})));
        else
            f(args("x", x, "y", y));
        std::vector<double> want(xv.size());
        for (std::size_t i = 0; i < xv.size(); ++i)
            want[i] = test::gelu_reference(double(xv[i]) + (bias ? double(bv[i % cols]) : 0.0));
        EXPECT_TRUE(test::rows_close(y.to_host(), want, cols, 1e-5)) << name;
    }
}

} // namespace
} // namespace loom
