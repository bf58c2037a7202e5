// Reductions across cells (sum_over_cells, ...) and their double-precision references: shared by
// the CPU tests (tests/unit/test_cell_reductions.cpp) and the GPU tests
// (tests/gpu/test_cell_reductions_gpu.cpp).
#pragma once

#include "tests/support/row_kernels.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace loom::test {

/// stats = {sum, max, min, mean} of a 1D float32 array x over all its cells.
inline Kernel array_stats_kernel(Target target, const std::string& name, const Schedule& s = {}) {
    Field x = make_field("x", ScalarType::Float32, 1);
    Field stats = field<float>("stats", std::vector<std::int64_t>{4});
    return create_kernel(AssignmentCollection{sum_over_cells(stats.at({0}), x.center()),
                                              max_over_cells(stats.at({1}), x.center()),
                                              min_over_cells(stats.at({2}), x.center()),
                                              mean_over_cells(stats.at({3}), x.center())},
                         row_config(target, name), s);
}

/// The same in double precision, by hand: sum, max, min, mean (mean of no cells: NaN).
inline std::array<double, 4> array_stats_reference(const std::vector<float>& x) {
    double sum = 0, hi = -INFINITY, lo = INFINITY;
    for (float v : x) sum += v, hi = std::max(hi, double(v)), lo = std::min(lo, double(v));
    return {sum, hi, lo, x.empty() ? NAN : sum / double(x.size())};
}

/// The sum of |x|, the scale a float sum's rounding error grows with.
inline double abs_sum(const std::vector<float>& x) {
    double s = 0;
    for (float v : x) s += std::abs(double(v));
    return s;
}

/// `got` (sum, max, min, mean of x) against the loops: the sums within their rounding scale,
/// max and min exactly.
inline void expect_array_stats(const std::vector<float>& got, const std::vector<float>& x) {
    const auto want = array_stats_reference(x);
    const double scale = abs_sum(x), n = double(x.size());
    EXPECT_NEAR(got[0], want[0], 1e-6 * scale + 1e-6) << "sum of " << n;
    EXPECT_EQ(got[1], float(want[1])) << "max of " << n;
    EXPECT_EQ(got[2], float(want[2])) << "min of " << n;
    EXPECT_NEAR(got[3], want[3], (1e-6 * scale + 1e-6) / n) << "mean of " << n;
}

/// `n` floats uniform in [-1, 1), from `seed`.
inline std::vector<float> uniform_values(std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (float& x : v) x = d(rng);
    return v;
}

/// The whole-array sum of 1D float32 x alone: the benchmark's kernel.
inline Kernel array_sum_kernel(Target target, const std::string& name, const Schedule& s = {}) {
    Field x = make_field("x", ScalarType::Float32, 1);
    Field total = field<float>("total", std::vector<std::int64_t>{1});
    return create_kernel(sum_over_cells(total.at({0}), x.center()), row_config(target, name), s);
}

} // namespace loom::test
