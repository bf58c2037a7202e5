// The tests' own reference evaluator (tests/support/reference_evaluator.hpp) on values worked out
// by hand: what the fuzzers accept as right must be right, and no looser than the rounding of
// the operations involved.
#include "tests/support/reference_evaluator.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace loom {
namespace {

using namespace loom::stencil_test;

constexpr std::int32_t kI32Max = std::numeric_limits<std::int32_t>::max();
constexpr std::int32_t kI32Min = std::numeric_limits<std::int32_t>::min();
constexpr std::int64_t kI64Min = std::numeric_limits<std::int64_t>::min();

/// One candidate expected: its value.
const RVal& only(const RCands& c) {
    EXPECT_EQ(c.n, 1);
    return c.v[0];
}

TEST(ReferenceEvaluator, SignedOverflowWrapsAndIsFlagged) {
    RefAst ast;
    const int max32 = ast.const_int(RType::I32, kI32Max), one = ast.const_int(RType::I32, 1);
    const int min32 = ast.const_int(RType::I32, kI32Min);
    const int sum = ast.binary(ROp::Add, max32, one);
    const int neg = ast.unary(ROp::Neg, min32);
    const int abs = ast.unary(ROp::Abs, min32);
    const int min64 = ast.const_int(RType::I64, kI64Min);
    const int product = ast.binary(ROp::Mul, min64, ast.const_int(RType::I64, -1));
    const int fine = ast.binary(ROp::Sub, ast.const_int(RType::I32, -7), one);
    const int later = ast.binary(ROp::Max, sum, one); // the flag travels on
    RefEvaluator ev(ast, 2.0);
    EXPECT_EQ(only(ev.eval(sum)).i, kI32Min);
    EXPECT_TRUE(only(ev.eval(sum)).overflow);
    EXPECT_EQ(only(ev.eval(neg)).i, kI32Min);
    EXPECT_TRUE(only(ev.eval(neg)).overflow);
    EXPECT_TRUE(only(ev.eval(abs)).overflow);
    EXPECT_EQ(only(ev.eval(product)).i, kI64Min);
    EXPECT_TRUE(only(ev.eval(product)).overflow);
    EXPECT_EQ(only(ev.eval(fine)).i, -8);
    EXPECT_FALSE(only(ev.eval(fine)).overflow);
    EXPECT_EQ(only(ev.eval(later)).i, 1);
    EXPECT_TRUE(only(ev.eval(later)).overflow);
}

TEST(ReferenceEvaluator, IntegerDivisionTruncatesAndItsFaultsAreUndefined) {
    RefAst ast;
    const int m7 = ast.const_int(RType::I32, -7), two = ast.const_int(RType::I32, 2);
    const int q = ast.binary(ROp::Div, m7, two), r = ast.binary(ROp::Mod, m7, two);
    const int by_zero = ast.binary(ROp::Div, m7, ast.const_int(RType::I32, 0));
    const int min_by_m1 =
        ast.binary(ROp::Div, ast.const_int(RType::I32, kI32Min), ast.const_int(RType::I32, -1));
    RefEvaluator ev(ast, 2.0);
    EXPECT_EQ(only(ev.eval(q)).i, -3);
    EXPECT_EQ(only(ev.eval(r)).i, -1);
    EXPECT_THROW(ev.eval(by_zero), RefUndefined);
    EXPECT_THROW(ev.eval(min_by_m1), RefUndefined);
}

TEST(ReferenceEvaluator, StepsWithinRoundingGiveEveryCandidate) {
    // (0.1 + 0.2) * 10 is 3.0000000000000004 in double, within rounding of 3: another order of
    // operations (or a fused multiply-add) may land below 3, so floor and a conversion to int may
    // rightly give 2 or 3. Evaluated exactly (factor 0), one answer.
    RefAst ast;
    const int x = ast.binary(
        ROp::Mul,
        ast.binary(ROp::Add, ast.constant(RType::F64, 0.1), ast.constant(RType::F64, 0.2)),
        ast.constant(RType::F64, 10.0));
    const int fl = ast.unary(ROp::Floor, x);
    const int to_int = ast.cast(RType::I32, x);
    const int clear = ast.unary(ROp::Floor, ast.constant(RType::F64, 2.5));
    RefEvaluator loose(ast, 2.0), exact(ast, 0.0);
    EXPECT_EQ(loose.eval(fl).n, 2);
    EXPECT_TRUE(matches_value(RType::F64, loose.eval(fl), 2.0, 0, 2.0));
    EXPECT_TRUE(matches_value(RType::F64, loose.eval(fl), 3.0, 0, 2.0));
    EXPECT_FALSE(matches_value(RType::F64, loose.eval(fl), 4.0, 0, 2.0));
    EXPECT_EQ(loose.eval(to_int).n, 2);
    EXPECT_TRUE(matches_value(RType::I32, loose.eval(to_int), 0.0, 2, 2.0));
    EXPECT_FALSE(matches_value(RType::I32, loose.eval(to_int), 0.0, 4, 2.0));
    EXPECT_EQ(only(exact.eval(fl)).f, 3.0);
    EXPECT_EQ(only(loose.eval(clear)).f, 2.0);
}

TEST(ReferenceEvaluator, DivisorsAndArgumentsWithinRoundingOfZeroAreWild) {
    // 0.1 + 0.2 - 0.3 is 5.6e-17, within rounding of 0: dividing by it, or taking its root, may
    // give anything (even the sign of the infinity of 1 / +-0 is the sign of a rounding).
    RefAst ast;
    const int tiny = ast.binary(
        ROp::Sub,
        ast.binary(ROp::Add, ast.constant(RType::F64, 0.1), ast.constant(RType::F64, 0.2)),
        ast.constant(RType::F64, 0.3));
    const int one = ast.constant(RType::F64, 1.0), zero = ast.constant(RType::F64, 0.0);
    const int q = ast.binary(ROp::Div, one, tiny);
    const int by_zero = ast.binary(ROp::Div, one, zero);
    const int root = ast.unary(ROp::Sqrt, tiny);
    const int neg_root = ast.unary(ROp::Sqrt, ast.constant(RType::F64, -4.0));
    const int neg_log = ast.unary(ROp::Log, ast.constant(RType::F64, -1.0));
    const int log_zero = ast.unary(ROp::Log, zero);
    const int exact_root = ast.unary(ROp::Sqrt, ast.constant(RType::F64, 2.25));
    RefEvaluator ev(ast, 2.0);
    EXPECT_TRUE(ev.eval(q).wild());
    EXPECT_TRUE(ev.eval(by_zero).wild());
    EXPECT_TRUE(ev.eval(root).wild());
    // Certainly negative: NaN, and only NaN.
    EXPECT_TRUE(std::isnan(only(ev.eval(neg_root)).f));
    EXPECT_TRUE(matches_value(RType::F64, ev.eval(neg_root), std::nan(""), 0, 2.0));
    EXPECT_FALSE(matches_value(RType::F64, ev.eval(neg_root), 0.0, 0, 2.0));
    EXPECT_TRUE(std::isnan(only(ev.eval(neg_log)).f));
    EXPECT_EQ(only(ev.eval(log_zero)).f, -HUGE_VAL);
    EXPECT_EQ(only(ev.eval(exact_root)).f, 1.5);
    EXPECT_FALSE(ev.eval(exact_root).wild());
}

TEST(ReferenceEvaluator, AValueComparedWithItselfIsNeverATie) {
    // x = 0.1 * 3 carries a rounding error: against 0.3 it is a tie (either answer), against
    // itself it is not (one computation on both sides).
    RefAst ast;
    const int x =
        ast.binary(ROp::Mul, ast.constant(RType::F64, 0.1), ast.constant(RType::F64, 3.0));
    const int lt_self = ast.binary(ROp::Lt, x, x), le_self = ast.binary(ROp::Le, x, x);
    const int lt_other = ast.binary(ROp::Lt, x, ast.constant(RType::F64, 0.3));
    const int exact_lt =
        ast.binary(ROp::Lt, ast.constant(RType::F64, 0.25), ast.constant(RType::F64, 0.25));
    RefEvaluator ev(ast, 2.0);
    EXPECT_EQ(only(ev.eval(lt_self)).i, 0);
    EXPECT_EQ(only(ev.eval(le_self)).i, 1);
    EXPECT_EQ(ev.eval(lt_other).n, 2);
    EXPECT_EQ(only(ev.eval(exact_lt)).i, 0); // exact operands: no tie either
}

TEST(ReferenceEvaluator, TolerancesFollowTheRoundingOfEachOperation) {
    RefAst ast;
    const int s = ast.unary(ROp::Sin, ast.constant(RType::F32, 1.0));
    const int sum =
        ast.binary(ROp::Add, ast.constant(RType::F32, 1.0), ast.constant(RType::F32, 1e-3));
    RefEvaluator ev(ast, 2.0);
    const float sinf1 = std::sin(1.0f);
    // A few ulps off (CUDA's sinf is within 2) passes; a hundred do not.
    const float near = std::nextafter(std::nextafter(sinf1, 2.0f), 2.0f);
    float far = sinf1;
    for (int k = 0; k < 100; ++k) far = std::nextafter(far, 2.0f);
    EXPECT_TRUE(matches_value(RType::F32, ev.eval(s), near, 0, 2.0));
    EXPECT_FALSE(matches_value(RType::F32, ev.eval(s), far, 0, 2.0));
    // A float32 sum is allowed its own rounding, not float32's whole range of error.
    const double want = static_cast<double>(1.0f + 1e-3f);
    EXPECT_TRUE(matches_value(RType::F32, ev.eval(sum), want + 1.2e-7, 0, 2.0));
    EXPECT_FALSE(matches_value(RType::F32, ev.eval(sum), want + 1e-5, 0, 2.0));
}

TEST(ReferenceEvaluator, MatchingIgnoresTheSignOfZeroAndTakesNanForNan) {
    RCands zero, nan, wild, ints;
    RVal v;
    zero.add(RType::F64, v);
    v.f = std::nan("");
    nan.add(RType::F64, v);
    RVal w;
    w.wild = true;
    wild.add(RType::F64, w);
    RVal i;
    i.i = 5;
    ints.add(RType::I64, i);
    EXPECT_TRUE(matches_value(RType::F64, zero, -0.0, 0, 2.0));
    EXPECT_FALSE(matches_value(RType::F64, zero, 1e-300, 0, 2.0));
    EXPECT_TRUE(matches_value(RType::F64, nan, std::nan(""), 0, 2.0));
    EXPECT_FALSE(matches_value(RType::F64, nan, 0.0, 0, 2.0));
    EXPECT_FALSE(matches_value(RType::F64, zero, std::nan(""), 0, 2.0));
    EXPECT_TRUE(matches_value(RType::F64, wild, 12345.0, 0, 2.0));
    EXPECT_TRUE(matches_value(RType::I64, ints, 0.0, 5, 2.0));
    EXPECT_FALSE(matches_value(RType::I64, ints, 0.0, 6, 2.0));
}

TEST(ReferenceEvaluator, TooManyCandidatesBecomeWild) {
    RCands c;
    for (int k = 0; k < RCands::kMax; ++k) {
        RVal v;
        v.i = k;
        c.add(RType::I32, v);
    }
    EXPECT_EQ(c.n, RCands::kMax);
    EXPECT_FALSE(c.wild());
    RVal one_more;
    one_more.i = 100;
    c.add(RType::I32, one_more);
    EXPECT_TRUE(c.wild());
}

} // namespace
} // namespace loom
