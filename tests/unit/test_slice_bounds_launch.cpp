// Slices that stay inside the arrays run, right up to their edges (the launch's bounds check,
// issue 11, must refuse only what leaves them): parameter stops equal to the size, a stencil of
// reach 1 over [1, n - 1), step slices whose stop lies past the end but whose last cell does not,
// the diagonal of a triangle, and empty ranges, which run nothing. Target::CPU on fresh random
// data; outputs start poisoned and the reference is a hand-written loop in double precision.
// The refusals are in tests/error/test_slice_bounds_launch.cpp.
#include "tests/support/cpu_config.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

namespace {

using namespace loom;
using namespace loom::counters;

constexpr double kPoison = -7777.0;

KernelConfig sliced(const std::string& name, Slice s) {
    KernelConfig c = loom::test::cpu(name);
    c.iteration_slice = std::move(s);
    return c;
}

HostArray<double> poisoned(const Shape& shape) {
    auto a = HostArray<double>::zeros(shape);
    a.fill(kPoison);
    return a;
}

using Want = std::function<std::optional<double>(std::int64_t, std::int64_t)>;

/// Every cell of a 1D or 2D output against `want` (nullopt: must still hold the poison).
::testing::AssertionResult cells_match(const HostArray<double>& out, const Want& want) {
    const Shape& s = out.shape();
    std::vector<double> v = out.to_vector();
    const std::int64_t n1 = s.size() > 1 ? s[1] : 1;
    for (std::int64_t i = 0; i < s[0]; ++i)
        for (std::int64_t j = 0; j < n1; ++j) {
            double got = v[std::size_t(i * n1 + j)];
            std::optional<double> w = want(i, j);
            double expected = w ? *w : kPoison;
            if (std::abs(got - expected) > 1e-12 * std::max(1.0, std::abs(expected)))
                return ::testing::AssertionFailure()
                       << "cell (" << i << ", " << j << "): got " << got << ", expected "
                       << (w ? "" : "the poison ") << expected;
        }
    return ::testing::AssertionSuccess();
}

TEST(SliceBoundsLaunchRuns, ParameterStopEqualToTheSize) {
    auto [src, dst] = fields<2>("src, dst: float64[1D]");
    Expr n = param<std::int64_t>("n");
    KernelFunction k = create_kernel(Assignment(dst.center(), 2.0 * src.center() + 1.0),
                                     sliced("bounds_stop_eq_size", Slice{range(0, n)}))
                           .compile();
    const std::int64_t size = 37;
    auto a = HostArray<double>::random({size}, 101);
    std::vector<double> in = a.to_vector();
    for (std::int64_t stop : {size, size - 3}) {
        SCOPED_TRACE("n = " + std::to_string(stop));
        HostArray<double> b = poisoned({size});
        k(args("src", a, "dst", b, "n", stop));
        EXPECT_TRUE(cells_match(b, [&](std::int64_t i, std::int64_t) -> std::optional<double> {
            if (i >= stop) return std::nullopt;
            return 2.0 * in[std::size_t(i)] + 1.0;
        }));
    }
}

TEST(SliceBoundsLaunchRuns, StencilOfReachOneOverOneToNMinusOne) {
    // The widest slice a reach of 1 allows: [1, n - 1) on both axes, n given as parameters.
    auto [src, dst] = fields<2>("src, dst: float64[2D]");
    Expr n0 = param<std::int64_t>("n0"), n1 = param<std::int64_t>("n1");
    KernelFunction k =
        create_kernel(Assignment(dst.center(), src[{-1, 0}] + src[{1, 0}] + src[{0, -1}] +
                                                   src[{0, 1}] - 4.0 * src.center()),
                      sliced("bounds_reach_one", Slice{range(1, n0 - 1), range(1, n1 - 1)}))
            .compile();
    const Shape shape{19, 23};
    auto a = HostArray<double>::random(shape, 102);
    std::vector<double> in = a.to_vector();
    auto s = [&](std::int64_t i, std::int64_t j) { return in[std::size_t(i * shape[1] + j)]; };
    HostArray<double> b = poisoned(shape);
    k(args("src", a, "dst", b, "n0", shape[0], "n1", shape[1]));
    EXPECT_TRUE(cells_match(b, [&](std::int64_t i, std::int64_t j) -> std::optional<double> {
        if (i < 1 || i >= shape[0] - 1 || j < 1 || j >= shape[1] - 1) return std::nullopt;
        return s(i - 1, j) + s(i + 1, j) + s(i, j - 1) + s(i, j + 1) - 4.0 * s(i, j);
    }));
}

TEST(SliceBoundsLaunchRuns, StepSliceWhoseStopLiesPastTheEnd) {
    // range(0, 10, 4) on 9 cells visits 0, 4 and 8: the stop is past the end, no cell is.
    auto [src, dst] = fields<2>("src, dst: float64[1D]");
    Expr n = param<std::int64_t>("n");
    KernelFunction k = create_kernel(Assignment(dst.center(), src.center() * src.center()),
                                     sliced("bounds_step", Slice{range(0, n, 4)}))
                           .compile();
    auto a = HostArray<double>::random({9}, 103);
    std::vector<double> in = a.to_vector();
    HostArray<double> b = poisoned({9});
    k(args("src", a, "dst", b, "n", 10));
    EXPECT_TRUE(cells_match(b, [&](std::int64_t i, std::int64_t) -> std::optional<double> {
        if (i % 4 != 0) return std::nullopt;
        return in[std::size_t(i)] * in[std::size_t(i)];
    }));
}

TEST(SliceBoundsLaunchRuns, LiteralNegativeStartInsideTheArray) {
    auto [src, dst] = fields<2>("src, dst: float64[1D]");
    KernelFunction k = create_kernel(Assignment(dst.center(), -src.center()),
                                     sliced("bounds_neg_literal", Slice{range(-3, end)}))
                           .compile();
    auto a = HostArray<double>::random({8}, 104);
    std::vector<double> in = a.to_vector();
    HostArray<double> b = poisoned({8});
    k(args("src", a, "dst", b));
    EXPECT_TRUE(cells_match(b, [&](std::int64_t i, std::int64_t) -> std::optional<double> {
        if (i < 5) return std::nullopt;
        return -in[std::size_t(i)];
    }));
}

TEST(SliceBoundsLaunchRuns, TheDiagonalOfATriangle) {
    // range(x, x + w) with w = 1 visits (i, i): row 7 ends exactly at the last cell.
    auto [src, dst] = fields<2>("src, dst: float64[2D]");
    Expr w = param<std::int64_t>("w");
    KernelFunction k = create_kernel(Assignment(dst.center(), src.center() + 3.0),
                                     sliced("bounds_diagonal", Slice{all(), range(x, x + w)}))
                           .compile();
    const Shape shape{8, 8};
    auto a = HostArray<double>::random(shape, 105);
    std::vector<double> in = a.to_vector();
    HostArray<double> b = poisoned(shape);
    k(args("src", a, "dst", b, "w", 1));
    EXPECT_TRUE(cells_match(b, [&](std::int64_t i, std::int64_t j) -> std::optional<double> {
        if (i != j) return std::nullopt;
        return in[std::size_t(i * 8 + j)] + 3.0;
    }));
}

TEST(SliceBoundsLaunchRuns, EmptyRangesRunNothing) {
    auto [src, dst] = fields<2>("src, dst: float64[2D]");
    Expr s = param<std::int64_t>("s"), n = param<std::int64_t>("n"), m = param<std::int64_t>("m");
    KernelFunction k = create_kernel(Assignment(dst.center(), src.center()),
                                     sliced("bounds_empty", Slice{range(s, n), range(0, m)}))
                           .compile();
    const Shape shape{6, 8};
    auto a = HostArray<double>::random(shape, 106);
    HostArray<double> b = poisoned(shape);
    Want untouched = [](std::int64_t, std::int64_t) -> std::optional<double> {
        return std::nullopt;
    };
    k(args("src", a, "dst", b, "s", 5, "n", 2, "m", 8)); // start > stop
    EXPECT_TRUE(cells_match(b, untouched));
    k(args("src", a, "dst", b, "s", 3, "n", 3, "m", 8)); // start == stop
    EXPECT_TRUE(cells_match(b, untouched));
    // An empty axis means no cell runs at all, so axis 1 reaching past the array touches nothing.
    k(args("src", a, "dst", b, "s", 9, "n", 9, "m", 100));
    EXPECT_TRUE(cells_match(b, untouched));
    k(args("src", a, "dst", b, "s", 0, "n", 6, "m", -4));
    EXPECT_TRUE(cells_match(b, untouched));
    EXPECT_THROW(k(args("src", a, "dst", b, "s", 0, "n", 1, "m", 100)), UserError);
}

TEST(SliceBoundsLaunchRuns, SliceEntriesAreNamedAsTheDslSpellsThem) {
    EXPECT_EQ(range(0, param<std::int64_t>("n")).as_written(), "range(0, n)");
    EXPECT_EQ(range(1, -1, 2).as_written(), "range(1, -1, 2)");
    EXPECT_EQ(from(x).as_written(), "range(x, end)");
    EXPECT_EQ(until(x + 1).as_written(), "range(0, x + 1)");
    EXPECT_EQ(at(5).as_written(), "at(5)");
    EXPECT_EQ(all().as_written(), "all()");
}

} // namespace
