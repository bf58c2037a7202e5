// Constants that do not fit the type they become (issue 11, weak spots): `f32 * 1e300` used to
// turn 1e300 into inf silently, as did constant<float>(1e300) and cast<float> of a double
// constant; a float or an int64 constant cast to a narrower integer wrapped or was undefined.
// Each is a UserError naming the value, the type and the fix. inf and NaN written on purpose
// still convert, and values that round to float32's largest finite value still fit.
#include "tests/support/expect_error.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace {
using namespace loom;

TEST(ConstantRangeErrors, PlainNumberAdoptingFloat32) {
    auto [s, g] = fields<2>("s, g: float32[1D]");
    LOOM_EXPECT_ERROR(Assignment(s.center(), g.center() * 1e300), UserError,
                      {"in `g[0] * 1e+300`", "the plain number 1e+300 takes the type float32",
                       "does not fit float32", "3.4028235e+38", "would become inf",
                       "Compute in float64", "std::numeric_limits<float>::infinity()"});
    LOOM_EXPECT_ERROR(g.center() + (-1e39), UserError, {"-1e+39", "does not fit float32"});
}

TEST(ConstantRangeErrors, UntypedCompoundAdoptingFloat32) {
    // An untyped parameter times a plain number adopts float32 as a whole, the number included.
    auto g = field("g: float32[1D]");
    Expr scaled = param("a") * 1e300;
    LOOM_EXPECT_ERROR(scaled * g.center(), UserError,
                      {"the plain number 1e+300 takes the type float32", "does not fit float32"});
}

TEST(ConstantRangeErrors, PlainNumberTypedByDefaultTypeFloat32) {
    auto [s, g] = fields<2>("s, g: float64[1D]");
    AssignmentCollection ac;
    Expr t = ac.subexpression("t", param("a") * 1e300);
    ac.add(Assignment(s.center(), g.center() + 1.0));
    KernelConfig cfg;
    cfg.default_type = ScalarType::Float32;
    LOOM_EXPECT_ERROR(create_kernel(ac, cfg), UserError, {"1e+300", "does not fit float32"});
    (void)t;
}

TEST(ConstantRangeErrors, TypedFloat32Constant) {
    LOOM_EXPECT_ERROR(constant<float>(1e300), UserError,
                      {"constant(float32, 1e+300)", "does not fit float32", "would become inf",
                       "constant<double>(v)"});
    LOOM_EXPECT_ERROR(constant(ScalarType::Float32, -3.5e38), UserError, {"-3.5e+38", "inf"});
}

TEST(ConstantRangeErrors, CastOfAConstantToFloat32) {
    LOOM_EXPECT_ERROR(cast<float>(constant<double>(1e300)), UserError,
                      {"cast(float32, 1e+300)", "the constant 1e+300 does not fit float32",
                       "would become inf"});
    LOOM_EXPECT_ERROR(cast<float>(Expr(1e300)), UserError,
                      {"cast(float32, 1e+300)", "does not fit float32"});
}

TEST(ConstantRangeErrors, ConstantsCastToANarrowerInteger) {
    LOOM_EXPECT_ERROR(cast<std::int32_t>(Expr(std::int64_t(3000000000))), UserError,
                      {"cast(int32, 3000000000)", "does not fit int32",
                       "int32 holds -2147483648..2147483647", "constant<std::int64_t>"});
    // A typed int64 constant cast to int32 wraps, as C++ and the same cast at run time do: the
    // explicit cast says so (the generated-code fuzzers rely on it).
    EXPECT_NO_THROW(cast<std::int32_t>(constant<std::int64_t>(-3000000000)));
    LOOM_EXPECT_ERROR(cast<std::int32_t>(Expr(3e9)), UserError,
                      {"cast(int32, 3000000000.0)", "does not fit int32"});
    LOOM_EXPECT_ERROR(cast<std::int64_t>(constant<double>(1e300)), UserError,
                      {"cast(int64, 1e+300)", "int64 holds"});
    LOOM_EXPECT_ERROR(cast<std::int64_t>(constant<double>(std::nan(""))), UserError,
                      {"does not fit int64"});
}

TEST(ConstantRangeAccepted, InfinityAndNaNWrittenOnPurpose) {
    auto [s, g] = fields<2>("s, g: float32[1D]");
    const double inf = std::numeric_limits<double>::infinity();
    EXPECT_NO_THROW(create_kernel(Assignment(s.center(), g.center() * inf)));
    EXPECT_NO_THROW(create_kernel(Assignment(s.center(), min(g.center(), -inf))));
    EXPECT_NO_THROW(constant<float>(std::numeric_limits<float>::infinity()));
    EXPECT_NO_THROW(cast<float>(constant<double>(std::nan(""))));
    EXPECT_NO_THROW(cast<float>(constant<double>(-inf)));
    EXPECT_NO_THROW(create_kernel(
        Assignment(s.center(), g.center() + std::numeric_limits<float>::infinity())));
}

TEST(ConstantRangeAccepted, ValuesThatRoundToTheLargestFloat32) {
    auto [s, g] = fields<2>("s, g: float32[1D]");
    // 3.4028235e38 is float32's largest finite value as printed: it rounds to it, not to inf.
    EXPECT_NO_THROW(create_kernel(Assignment(s.center(), g.center() * 3.4028235e38)));
    EXPECT_NO_THROW(constant<float>(-3.4028235e38));
    EXPECT_NO_THROW(cast<float>(constant<double>(std::numeric_limits<float>::max())));
    // Small numbers round to zero or a subnormal as in C++: not an overflow, no error.
    EXPECT_NO_THROW(create_kernel(Assignment(s.center(), g.center() * 1e-50)));
    // Integers that fit.
    EXPECT_NO_THROW(cast<std::int32_t>(Expr(std::int64_t(-2147483648LL))));
    EXPECT_NO_THROW(cast<std::int64_t>(Expr(-9.2e18)));
}

} // namespace
