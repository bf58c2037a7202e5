// Online softmax (Schedule::online_softmax, compiler/passes/online_softmax.hpp): a row's maximum
// and its sum of exp(x - max) in one loop, the sum rescaled whenever the maximum grows. On the
// CPU target, which runs the same loops as the GPU (a thread per row, a warp's lanes one after
// the other, a block's threads between its barriers), against double-precision loops on fresh
// random data: rows whose maximum grows at every term, rows that start with -inf (a mask), rows
// with -inf scattered; outputs poisoned first. The CUDA source of each is compiled by NVRTC.
#include "tests/support/layer_norm.hpp"
#include "tests/support/nvrtc_check.hpp"
#include "tests/support/row_kernels.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace loom {
namespace {

using test::blocks;
using test::warps;

Schedule online(Schedule s) {
    s.online_softmax = true;
    return s;
}

Schedule thread_per_row() {
    Schedule s;
    s.reduce_in_warp = false;
    s.reduce_in_block = false;
    return s;
}

std::size_t count(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
}

void check_softmax(int rows, int width, const Schedule& s, std::uint64_t seed, bool want_online = true) {
    const std::string name = "online_softmax_" + std::to_string(width);
    const Kernel gpu = test::softmax_kernel(width, Target::CUDA, name, s);
    test::expect_compiles_for_sm90(gpu);
    const Kernel cpu = test::softmax_kernel(width, Target::CPU, name, s);
    EXPECT_EQ(cpu.schedule().online_softmax.value_or(false), want_online) << cpu.schedule().describe();
    EXPECT_EQ(gpu.schedule().online_softmax.value_or(false), want_online) << gpu.schedule().describe();
    const std::vector<float> xv = test::softmax_rows(rows, width, seed);
    auto y = HostArray<float>::from_host(std::vector<float>(xv.size(), std::nanf("")), {rows, width});
    cpu.compile()(args("x", HostArray<float>::from_host(xv, {rows, width}), "y", y));
    EXPECT_TRUE(test::rows_close(y.to_host(), test::softmax_reference(xv, rows, width), width, 1e-5))
        << "width " << width << ", " << s.describe();
}

TEST(OnlineSoftmax, MatchesAReferenceWithAThreadAWarpOrABlockPerRow) {
    for (int width : {768, 100, 1}) check_softmax(9, width, online(warps(128)), 10 + width);
    for (int width : {2048, 1000, 3}) check_softmax(6, width, online(blocks(256)), 20 + width);
    check_softmax(7, 333, online(blocks(32)), 31); // one warp: no second round across warps
    for (int width : {40, 7}) check_softmax(11, width, online(thread_per_row()), 40 + width);
}

// Rows of more than 32 KiB stay on chip in no schedule: there the online form is the default
// (a block per row past 2048 terms), and its row is read twice instead of three times.
TEST(OnlineSoftmax, IsTheDefaultForRowsTooLongToStayOnChip) {
    check_softmax(5, 9000, {}, 51);
    check_softmax(4, 16384, {}, 52);
    const std::string src = test::softmax_kernel(16384, Target::CUDA, "softmax_long", {}).source();
    EXPECT_NE(src.find("sum_k: online, rescaled whenever max_k grows"), std::string::npos) << src;
    EXPECT_EQ(count(src, "x[x_stride_0"), 2u) << src; // the online loop, then the output's
    EXPECT_EQ(count(src, "__syncthreads()"), 2u) << src; // maxima and sums combined together

    Schedule off;
    off.online_softmax = false;
    const std::string two_pass = test::softmax_kernel(16384, Target::CUDA, "softmax_two_pass", off).source();
    EXPECT_EQ(two_pass.find("online"), std::string::npos) << two_pass;
    EXPECT_EQ(count(two_pass, "x[x_stride_0"), 3u) << two_pass;
    check_softmax(3, 16384, off, 53, false);

    // 2048 floats (8 KiB) stay in shared memory: read once from memory, the passes from there.
    check_softmax(3, 2048, {}, 54, false);
    const std::string kept = test::softmax_kernel(2048, Target::CUDA, "softmax_kept", {}).source();
    EXPECT_EQ(kept.find("online"), std::string::npos) << kept;
}

TEST(OnlineSoftmax, LogSumExpInDoubleAndFloat) {
    const int rows = 8, width = 5000; // 40,000 bytes of double: online by default
    const std::vector<float> xf = test::softmax_rows(rows, width, 61);
    {
        const Kernel gpu = test::log_sum_exp_kernel(width, Target::CUDA, "lse_f64", {}, ScalarType::Float64);
        test::expect_compiles_for_sm90(gpu);
        EXPECT_TRUE(gpu.schedule().online_softmax.value_or(false)) << gpu.schedule().describe();
        const Kernel cpu = test::log_sum_exp_kernel(width, Target::CPU, "lse_f64", {}, ScalarType::Float64);
        std::vector<double> xd(xf.begin(), xf.end());
        auto out = HostArray<double>::from_host(std::vector<double>(rows, std::nan("")), {rows});
        cpu.compile()(args("x", HostArray<double>::from_host(xd, {rows, width}), "lse", out));
        const std::vector<double> want = test::log_sum_exp_reference(xf, rows, width);
        const std::vector<double> got = out.to_host();
        for (std::size_t r = 0; r < std::size_t(rows); ++r)
            EXPECT_NEAR(got[r], want[r], 1e-12 * (1 + std::abs(want[r]))) << "row " << r;
    }
    for (const Schedule& s : {online(warps(64)), online(blocks(128)), online(thread_per_row())}) {
        test::expect_compiles_for_sm90(test::log_sum_exp_kernel(width, Target::CUDA, "lse", s));
        const Kernel cpu = test::log_sum_exp_kernel(width, Target::CPU, "lse", s);
        EXPECT_TRUE(cpu.schedule().online_softmax.value_or(false)) << s.describe();
        auto lse = HostArray<float>::from_host(std::vector<float>(rows, std::nanf("")), {rows});
        cpu.compile()(args("x", HostArray<float>::from_host(xf, {rows, width}), "lse", lse));
        EXPECT_TRUE(test::rows_close(lse.to_host(), test::log_sum_exp_reference(xf, rows, width), 1, 1e-5))
            << s.describe();
    }
}

// A +inf term makes the sum NaN in two passes (exp(inf - inf)); the online loop, a thread's,
// a warp's or a block's, does the same, whichever thread or lane holds the +inf. A row of -inf
// only has a log-sum-exp of -inf online (its sum stays 0).
TEST(OnlineSoftmax, InfiniteTermsGiveTheSameResultOnEverySchedule) {
    const int rows = 3, width = 300;
    std::vector<float> xv = test::uniform_floats(std::size_t(rows) * width, 95);
    xv[7] = INFINITY;                                                       // row 0: one +inf
    for (int k = 0; k < width; ++k) xv[std::size_t(width) + std::size_t(k)] = -INFINITY; // row 1
    xv[2 * std::size_t(width) + 40] = INFINITY;                             // row 2: +inf, later
    for (const Schedule& s : {online(thread_per_row()), online(warps(64)), online(blocks(128)), online(blocks(32))}) {
        const Kernel cpu = test::log_sum_exp_kernel(width, Target::CPU, "lse_inf", s);
        auto lse = HostArray<float>::from_host(std::vector<float>(rows, 0.5f), {rows});
        cpu.compile()(args("x", HostArray<float>::from_host(xv, {rows, width}), "lse", lse));
        const std::vector<float> got = lse.to_host();
        EXPECT_TRUE(std::isnan(got[0])) << got[0] << ", " << s.describe();
        EXPECT_EQ(got[1], -INFINITY) << s.describe();
        EXPECT_TRUE(std::isnan(got[2])) << got[2] << ", " << s.describe();
    }
}

// fuse_reductions joins an independent reduction over the same row into the online pair's loop
// (a group of two declarations): log-sum-exp and the mean of each row read x once between them.
TEST(OnlineSoftmax, AnIndependentReductionJoinsThePairsLoop) {
    const int width = 3000;
    Field x = make_field("x", ScalarType::Float32, 1, {{width}});
    Field out = make_field("out", ScalarType::Float32, 1, {{2}});
    IndexVar k("k", width);
    AssignmentCollection c;
    Expr m = c.subexpression("row_max", max(k, x(k)));
    c.add({out(0), m + log(sum(k, exp(x(k) - m)))});
    c.add({out(1), mean(k, x(k))});
    for (const Schedule& s : {online(warps(64)), online(blocks(256)), online(thread_per_row())}) {
        const Kernel gpu = create_kernel(c, test::row_config(Target::CUDA, "lse_and_mean"), s);
        test::expect_compiles_for_sm90(gpu);
        EXPECT_EQ(count(gpu.source(), "for (int k"), 1u) << gpu.source(); // one loop for all three
        const Kernel cpu = create_kernel(c, test::row_config(Target::CPU, "lse_and_mean"), s);
        const std::vector<float> xv = test::softmax_rows(2, width, 91);
        // Rows of kind 0 and 1 only: -inf terms would make the mean -inf.
        const std::vector<float>& finite = xv;
        auto o = HostArray<float>::from_host(std::vector<float>(4, std::nanf("")), {2, 2});
        cpu.compile()(args("x", HostArray<float>::from_host(finite, {2, width}), "out", o));
        const std::vector<double> lse = test::log_sum_exp_reference(finite, 2, width);
        const std::vector<float> got = o.to_host();
        for (std::size_t r = 0; r < 2; ++r) {
            double mean_r = 0;
            for (int j = 0; j < width; ++j) mean_r += finite[r * std::size_t(width) + std::size_t(j)];
            mean_r /= width;
            EXPECT_NEAR(got[r * 2], lse[r], 1e-5 * (1 + std::abs(lse[r]))) << s.describe();
            EXPECT_NEAR(got[r * 2 + 1], mean_r, 1e-5 * (1 + std::abs(mean_r))) << s.describe();
        }
    }
}

// The pair is recognised by meaning, not by names: the maximum over one IndexVar, the sum over
// another of the same extent. A sum of anything but exp(e - max) keeps its own loop, even when
// the online form is asked for, and the schedule says so.
TEST(OnlineSoftmax, RewritesOnlyASumOfExpRelativeToTheMaximumOfTheSameTerms) {
    const int width = 300, rows = 5;
    Field x = make_field("x", ScalarType::Float32, 1, {{width}});
    Field y = make_field("y", ScalarType::Float32, 1, {{width}});
    Field w = make_field("w", ScalarType::Float32, std::vector<std::int64_t>{width});
    IndexVar j("j", width), k("k", width);
    {
        AssignmentCollection c;
        Expr m = c.subexpression("row_max", max(j, x(j)));
        Expr total = c.subexpression("total", sum(k, exp(x(k) - m)));
        c.add({y(k), exp(x(k) - m) / total});
        const Kernel cpu = create_kernel(c, test::row_config(Target::CPU, "two_vars"), online(warps()));
        EXPECT_TRUE(cpu.schedule().online_softmax.value_or(false)) << cpu.schedule().describe();
        const std::vector<float> xv = test::softmax_rows(rows, width, 71);
        auto out = HostArray<float>::from_host(std::vector<float>(xv.size(), std::nanf("")), {rows, width});
        cpu.compile()(args("x", HostArray<float>::from_host(xv, {rows, width}), "y", out));
        EXPECT_TRUE(test::rows_close(out.to_host(), test::softmax_reference(xv, rows, width), width, 1e-5));
    }
    {
        AssignmentCollection c;
        Expr m = c.subexpression("row_max", max(k, x(k)));
        Expr total = c.subexpression("total", sum(k, exp(x(k) - m) * w.at({k}))); // weighted
        c.add({y(k), exp(x(k) - m) / total});
        EXPECT_FALSE(create_kernel(c, test::row_config(Target::CUDA, "weighted"), online(warps())).schedule().online_softmax.value_or(true));
    }
    {
        AssignmentCollection c;
        Expr m = c.subexpression("row_max", max(k, x(k)));
        Expr total = c.subexpression("total", sum(k, exp(2.0f * x(k) - m))); // other terms
        c.add({y(k), exp(x(k) - m) / total});
        EXPECT_FALSE(create_kernel(c, test::row_config(Target::CUDA, "other_terms"), online(warps())).schedule().online_softmax.value_or(true));
    }
    {
        AssignmentCollection c;
        Expr m = c.subexpression("row_min", min(k, x(k)));
        Expr total = c.subexpression("total", sum(k, exp(x(k) - m))); // a minimum
        c.add({y(k), exp(x(k) - m) / total});
        EXPECT_FALSE(create_kernel(c, test::row_config(Target::CUDA, "minimum"), online(warps())).schedule().online_softmax.value_or(true));
    }
}

} // namespace
} // namespace loom
