// The expression DSL: typing rules, accesses, vector assignments and assignment collections.
// Expected IR is built by hand with the checking ir::*Node::make functions and compared
// structurally, so a test fails on any change of operand order, cast placement or type.
#include "compiler/ir/equality.hpp"
#include "compiler/ir/ir.hpp"
#include "loom/loom.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

using namespace loom;
using namespace loom::ir;

namespace {

/// Debug text plus the type, so that a failure shows where a cast went missing.
std::string show(const Expr& e) {
    return e.defined() ? to_string(e) + "  : " + std::string(type_name(e.type())) : "<undefined>";
}

testing::AssertionResult same_ir(const Expr& actual, const Expr& expected) {
    if (structurally_equal(actual, expected))
        return testing::AssertionSuccess();
    return testing::AssertionFailure()
           << "\n  actual:   " << show(actual) << "\n  expected: " << show(expected);
}

Expr access(const Field& f, std::vector<int> offsets, std::vector<int> components = {}) {
    return FieldAccessNode::make(f.ptr(), std::move(offsets), std::move(components));
}
Expr f32(double v) {
    return ConstNode::make(ScalarType::Float32, v);
}
Expr f64(double v) {
    return ConstNode::make(ScalarType::Float64, v);
}
Expr i32(std::int64_t v) {
    return ConstNode::make_int(ScalarType::Int32, v);
}
Expr i64(std::int64_t v) {
    return ConstNode::make_int(ScalarType::Int64, v);
}
Expr bin(BinaryOp op, Expr a, Expr b) {
    return BinaryNode::make(op, std::move(a), std::move(b));
}
Expr to(ScalarType t, Expr e) {
    return CastNode::make(t, std::move(e));
}

const ScalarType F32 = ScalarType::Float32, F64 = ScalarType::Float64, I32 = ScalarType::Int32,
                 I64 = ScalarType::Int64, Bool = ScalarType::Bool;

/// Whether `e` is a weak (plain C++ number) constant of type `t` with value `v`.
testing::AssertionResult is_weak(const Expr& e, ScalarType t, double v) {
    auto c = e.as<ConstNode>();
    if (c && c->weak && c->type == t && c->as_double() == v)
        return testing::AssertionSuccess();
    return testing::AssertionFailure() << show(e) << (c && c->weak ? " (weak)" : " (not weak)")
                                       << " is not the weak " << type_name(t) << " " << v;
}

class DslTyping : public testing::Test {
protected:
    Field s = field("s: float32[2D]");
    Field d = field("d: float64[2D]");
    Field i = field("i: int32[2D]");
    Field l = field("l: int64[2D]");
    Expr S = access(s, {0, 0}), D = access(d, {0, 0}), I = access(i, {0, 0}), L = access(l, {0, 0});
};

} // namespace

// ---- weak literals ----

TEST_F(DslTyping, WeakFloatAdoptsFloat32) {
    Expr e = 0.25 * s.center();
    EXPECT_EQ(e.type(), F32);
    EXPECT_TRUE(same_ir(e, bin(BinaryOp::Mul, f32(0.25), S)));
}

TEST_F(DslTyping, WeakIntAdoptsFloat32) {
    EXPECT_TRUE(same_ir(s.center() + 1, bin(BinaryOp::Add, S, f32(1.0))));
}

TEST_F(DslTyping, WeakIntAdoptsInt32) {
    Expr e = i.center() * 2;
    EXPECT_EQ(e.type(), I32);
    EXPECT_TRUE(same_ir(e, bin(BinaryOp::Mul, I, i32(2))));
}

TEST_F(DslTyping, WeakIntTooLargeForInt32Widens) {
    // 3e9 does not fit int32, so the field widens to int64 rather than the literal wrapping.
    Expr e = i.center() + std::int64_t(3000000000);
    EXPECT_TRUE(same_ir(e, bin(BinaryOp::Add, to(I64, I), i64(3000000000))));
}

TEST_F(DslTyping, WeakFloatWithIntFieldGivesFloat64) {
    Expr e = i.center() * 0.5;
    EXPECT_EQ(e.type(), F64);
    EXPECT_TRUE(same_ir(e, bin(BinaryOp::Mul, to(F64, I), f64(0.5))));
}

TEST_F(DslTyping, WeakFloat32LiteralIsRoundedToFloat) {
    Expr e = 0.1 * s.center();
    auto c = e.as<BinaryNode>()->a.as<ConstNode>();
    ASSERT_NE(c, nullptr);
    EXPECT_FALSE(c->weak);
    EXPECT_EQ(c->float_value, double(0.1f));
}

TEST(DslWeak, TwoPlainNumbersFoldAndStayWeak) {
    EXPECT_TRUE(is_weak(Expr(1) + Expr(2), I64, 3));
    EXPECT_TRUE(is_weak(Expr(1) + 0.5, F64, 1.5));
    EXPECT_TRUE(is_weak(Expr(3) * Expr(4), I64, 12));
}

TEST(DslWeak, IntegerFoldingFollowsC) {
    // Division truncates toward zero; the remainder takes the sign of the dividend.
    EXPECT_TRUE(is_weak(Expr(7) / Expr(2), I64, 3));
    EXPECT_TRUE(is_weak(Expr(-7) / Expr(2), I64, -3));
    EXPECT_TRUE(is_weak(Expr(-7) % Expr(2), I64, -1));
    EXPECT_TRUE(is_weak(Expr(1.0) / 4, F64, 0.25));
}

TEST(DslWeak, NegationOfPlainNumber) {
    EXPECT_TRUE(is_weak(-Expr(2), I64, -2));
    EXPECT_TRUE(is_weak(-Expr(0.5), F64, -0.5));
}

// ---- strong types ----

TEST_F(DslTyping, Float32PlusFloat64Promotes) {
    Expr e = s.center() + d.center();
    EXPECT_EQ(e.type(), F64);
    EXPECT_TRUE(same_ir(e, bin(BinaryOp::Add, to(F64, S), D)));
    // The order of operands is kept; only the narrower side gets the cast.
    EXPECT_TRUE(same_ir(d.center() - s.center(), bin(BinaryOp::Sub, D, to(F64, S))));
}

TEST_F(DslTyping, IntWithFloatGivesTheFloat) {
    EXPECT_TRUE(same_ir(i.center() * s.center(), bin(BinaryOp::Mul, to(F32, I), S)));
    EXPECT_TRUE(same_ir(l.center() + d.center(), bin(BinaryOp::Add, to(F64, L), D)));
}

TEST_F(DslTyping, Int32WithInt64Widens) {
    EXPECT_TRUE(same_ir(i.center() + l.center(), bin(BinaryOp::Add, to(I64, I), L)));
}

TEST_F(DslTyping, SameTypesNeedNoCast) {
    Field s2 = field("s2: float32[2D]");
    EXPECT_TRUE(same_ir(s.center() / s2.center(), bin(BinaryOp::Div, S, access(s2, {0, 0}))));
}

TEST_F(DslTyping, StrongConstantDoesNotAdopt) {
    // constant<float>(0.1) is float32 0.1f whatever it meets: against float64 it is promoted.
    Expr c = constant<float>(0.1);
    EXPECT_TRUE(same_ir(c, f32(0.1)));
    EXPECT_FALSE(c.as<ConstNode>()->weak);
    EXPECT_TRUE(same_ir(c * d.center(), bin(BinaryOp::Mul, to(F64, f32(0.1)), D)));
    // ...while a plain number next to it adopts float32.
    EXPECT_TRUE(same_ir(c + 1, bin(BinaryOp::Add, f32(0.1), f32(1.0))));
}

TEST_F(DslTyping, Parameters) {
    Expr alpha = param<float>("alpha");
    auto v = alpha.as<VarNode>();
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->name, "alpha");
    EXPECT_EQ(v->role, VarRole::Parameter);
    EXPECT_EQ(alpha.type(), F32);
    EXPECT_TRUE(same_ir(alpha * s.center(), bin(BinaryOp::Mul, alpha, S)));
    EXPECT_TRUE(same_ir(alpha * d.center(), bin(BinaryOp::Mul, to(F64, alpha), D)));
}

TEST_F(DslTyping, Counters) {
    using namespace loom::counters;
    EXPECT_TRUE(same_ir(x, CounterNode::make(0)));
    EXPECT_TRUE(same_ir(z, CounterNode::make(2)));
    EXPECT_EQ(y.type(), I64);
    EXPECT_TRUE(same_ir(x + 1, bin(BinaryOp::Add, CounterNode::make(0), i64(1))));
    EXPECT_TRUE(same_ir(d.center() * y, bin(BinaryOp::Mul, D, to(F64, CounterNode::make(1)))));
}

// ---- comparisons and logic ----

TEST_F(DslTyping, ComparisonsGiveBool) {
    Expr gt = d.center() > 0;
    EXPECT_EQ(gt.type(), Bool);
    EXPECT_TRUE(same_ir(gt, bin(BinaryOp::Gt, D, f64(0.0))));
    EXPECT_TRUE(same_ir(i.center() <= s.center(), bin(BinaryOp::Le, to(F32, I), S)));
    EXPECT_TRUE(same_ir(i.center() == 3, bin(BinaryOp::Eq, I, i32(3))));
    EXPECT_TRUE(same_ir(i.center() != 3, bin(BinaryOp::Ne, I, i32(3))));
}

TEST_F(DslTyping, LogicalOperators) {
    Expr a = d.center() > 0, b = s.center() < 1;
    EXPECT_TRUE(same_ir(a && b, bin(BinaryOp::And, a, b)));
    EXPECT_TRUE(same_ir(a || b, bin(BinaryOp::Or, a, b)));
    EXPECT_TRUE(same_ir(!a, UnaryNode::make(UnaryOp::Not, a)));
}

TEST_F(DslTyping, BoolEqualityIsSpelledWithLogic) {
    Expr a = d.center() > 0, b = s.center() < 1;
    Expr eq =
        bin(BinaryOp::Or, bin(BinaryOp::And, a, b),
            bin(BinaryOp::And, UnaryNode::make(UnaryOp::Not, a), UnaryNode::make(UnaryOp::Not, b)));
    EXPECT_TRUE(same_ir(a == b, eq));
    EXPECT_TRUE(same_ir(a != b, UnaryNode::make(UnaryOp::Not, eq)));
}

TEST_F(DslTyping, SelectUnifiesBranches) {
    Expr c = d.center() > 0;
    EXPECT_TRUE(same_ir(select(c, d.center(), 0), SelectNode::make(c, D, f64(0.0))));
    EXPECT_TRUE(same_ir(select(c, s.center(), d.center()), SelectNode::make(c, to(F64, S), D)));
}

// ---- math functions ----

TEST_F(DslTyping, MathOnFloatKeepsType) {
    EXPECT_TRUE(same_ir(loom::sqrt(s.center()), CallNode::make(MathFn::Sqrt, {S})));
    EXPECT_TRUE(same_ir(loom::pow(s.center(), 2), CallNode::make(MathFn::Pow, {S, f32(2.0)})));
    EXPECT_TRUE(same_ir(loom::fma(s.center(), s.center(), 1),
                        CallNode::make(MathFn::Fma, {S, S, f32(1.0)})));
}

TEST_F(DslTyping, MathOnIntConvertsToFloat64) {
    Expr e = loom::sqrt(i.center());
    EXPECT_EQ(e.type(), F64);
    EXPECT_TRUE(same_ir(e, CallNode::make(MathFn::Sqrt, {to(F64, I)})));
    EXPECT_TRUE(
        same_ir(loom::pow(i.center(), 2), CallNode::make(MathFn::Pow, {to(F64, I), f64(2.0)})));
    EXPECT_TRUE(same_ir(loom::exp(l.center()), CallNode::make(MathFn::Exp, {to(F64, L)})));
}

TEST_F(DslTyping, MathPromotesMixedArguments) {
    EXPECT_TRUE(
        same_ir(loom::pow(s.center(), d.center()), CallNode::make(MathFn::Pow, {to(F64, S), D})));
}

TEST_F(DslTyping, AbsMinMaxKeepInt) {
    Expr a = loom::abs(i.center());
    EXPECT_EQ(a.type(), I32);
    EXPECT_TRUE(same_ir(a, CallNode::make(MathFn::Abs, {I})));
    EXPECT_TRUE(same_ir(loom::min(i.center(), 2), bin(BinaryOp::Min, I, i32(2))));
    EXPECT_TRUE(same_ir(loom::max(i.center(), l.center()), bin(BinaryOp::Max, to(I64, I), L)));
    // ...but a float argument still makes them float.
    EXPECT_TRUE(same_ir(loom::min(i.center(), 0.5), bin(BinaryOp::Min, to(F64, I), f64(0.5))));
}

TEST(DslWeak, MathOnPlainNumbersFolds) {
    EXPECT_TRUE(is_weak(loom::sqrt(Expr(4)), F64, 2.0));
    EXPECT_TRUE(is_weak(loom::abs(Expr(-3)), I64, 3)); // abs keeps int, as for fields
    EXPECT_TRUE(is_weak(loom::abs(Expr(-2.5)), F64, 2.5));
}

// ---- casts ----

TEST_F(DslTyping, Casts) {
    EXPECT_TRUE(same_ir(cast<float>(d.center()), to(F32, D)));
    // A cast to the type it already has is the value itself.
    Expr dc = d.center();
    EXPECT_TRUE(cast<double>(dc).same_as(dc));
    // A cast of a plain number is a strong constant.
    Expr c = cast<float>(0.5);
    EXPECT_TRUE(same_ir(c, f32(0.5)));
    EXPECT_FALSE(c.as<ConstNode>()->weak);
    EXPECT_TRUE(same_ir(cast<double>(3), f64(3.0)));
}

TEST_F(DslTyping, CastOfPlainFloatToIntTruncates) {
    // C semantics, as cast() documents: toward zero.
    EXPECT_TRUE(same_ir(cast<std::int32_t>(2.9), i32(2)));
    EXPECT_TRUE(same_ir(cast<std::int64_t>(-2.9), i64(-2)));
}

TEST_F(DslTyping, Negation) {
    EXPECT_TRUE(same_ir(-d.center(), UnaryNode::make(UnaryOp::Neg, D)));
    EXPECT_TRUE(same_ir(-i.center(), UnaryNode::make(UnaryOp::Neg, I)));
}

// ---- accesses ----

TEST(DslAccess, CenterAndOffsets) {
    Field f = field("f: float64[3D]");
    EXPECT_TRUE(same_ir(f.center(), access(f, {0, 0, 0})));
    EXPECT_TRUE(same_ir(f[{1, 0, -1}], access(f, {1, 0, -1})));
    EXPECT_TRUE(same_ir(f[std::vector<int>{0, -2, 0}], access(f, {0, -2, 0})));
    // f(0) on a scalar field is its center.
    EXPECT_TRUE(same_ir(f(0), access(f, {0, 0, 0})));
}

TEST(DslAccess, Components) {
    auto [u, m] = fields<2>("u(3), m(2, 3): float64[2D]");
    EXPECT_TRUE(same_ir(u(1), access(u, {0, 0}, {1})));
    EXPECT_TRUE(same_ir(u.center(2), access(u, {0, 0}, {2})));
    EXPECT_TRUE(same_ir(u[{1, 0}](2), access(u, {1, 0}, {2})));
    EXPECT_TRUE(same_ir(m(1, 2), access(m, {0, 0}, {1, 2})));
    EXPECT_TRUE(same_ir(m[{0, -1}](0, 1), access(m, {0, -1}, {0, 1})));
}

TEST(DslAccess, AccessTypeIsFieldType) {
    Field f = field("f(2): int64[2D]");
    EXPECT_EQ(Expr(f(1)).type(), ScalarType::Int64);
}

TEST(DslAccess, VecOfVectorField) {
    Field u = field("u(3): float32[2D]");
    Vec v = u[{0, 1}].vec();
    ASSERT_EQ(v.size(), 3);
    for (int c = 0; c < 3; ++c)
        EXPECT_TRUE(same_ir(v[c], access(u, {0, 1}, {c}))) << c;
}

TEST(DslAccess, VecOfMatrixFieldIsRowMajor) {
    Field m = field("m(2, 3): float64[2D]");
    Vec v = m.vec();
    ASSERT_EQ(v.size(), 6);
    const std::vector<std::vector<int>> order = {{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}};
    for (int n = 0; n < 6; ++n)
        EXPECT_TRUE(same_ir(v[n], access(m, {0, 0}, order[n]))) << n;
}

// ---- vectors and assignments ----

TEST(DslAssignment, ScalarAssignment) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    Assignment a(f.center(), g[{1, 0}] + 1);
    ASSERT_EQ(a.parts().size(), 1u);
    EXPECT_TRUE(same_ir(a.parts()[0].first, access(f, {0, 0})));
    EXPECT_TRUE(same_ir(a.parts()[0].second, bin(BinaryOp::Add, access(g, {1, 0}), f64(1.0))));
    EXPECT_EQ(a.to_string(), "f[0, 0] = g[1, 0] + 1.0");
}

TEST(DslAssignment, VectorAssignmentIsComponentWise) {
    auto [u, v] = fields<2>("u(3), v(3): float64[2D]");
    Assignment a(u.vec(), 2.0 * v.vec());
    ASSERT_EQ(a.parts().size(), 3u);
    for (int c = 0; c < 3; ++c) {
        EXPECT_TRUE(same_ir(a.parts()[c].first, access(u, {0, 0}, {c}))) << c;
        EXPECT_TRUE(
            same_ir(a.parts()[c].second, bin(BinaryOp::Mul, f64(2.0), access(v, {0, 0}, {c}))))
            << c;
    }
    EXPECT_EQ(a.to_string(), "u[0, 0](0) = 2.0 * v[0, 0](0); u[0, 0](1) = 2.0 * v[0, 0](1); "
                             "u[0, 0](2) = 2.0 * v[0, 0](2)");
}

TEST(DslAssignment, VecArithmetic) {
    auto [u, v] = fields<2>("u(2), v(2): float32[2D]");
    Vec sum = u.vec() + v.vec();
    Vec scaled = v.vec() / 2;
    Vec neg = -u.vec();
    ASSERT_EQ(sum.size(), 2);
    EXPECT_TRUE(
        same_ir(sum[1], bin(BinaryOp::Add, access(u, {0, 0}, {1}), access(v, {0, 0}, {1}))));
    EXPECT_TRUE(same_ir(scaled[0], bin(BinaryOp::Div, access(v, {0, 0}, {0}), f32(2.0))));
    EXPECT_TRUE(same_ir(neg[0], UnaryNode::make(UnaryOp::Neg, access(u, {0, 0}, {0}))));
}

TEST(DslAssignment, TemporaryAsTarget) {
    Field g = field("g: float64[2D]");
    Expr t = temp<double>("t");
    Assignment a(t, g.center());
    EXPECT_TRUE(a.parts()[0].first.same_as(t));
    EXPECT_EQ(t.as<VarNode>()->role, VarRole::Temporary);
}

TEST(DslCollection, SubexpressionTyping) {
    Field s = field("s: float32[2D]");
    AssignmentCollection ac;
    Expr t = ac.subexpression("t", s.center() * 2);
    auto v = t.as<VarNode>();
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->name, "t");
    EXPECT_EQ(v->role, VarRole::Temporary);
    EXPECT_EQ(t.type(), ScalarType::Float32); // typed like its value
    Expr k = ac.subexpression("k", 3);
    EXPECT_EQ(k.type(), ScalarType::Int64); // a plain integer gives an int64 temporary
    Expr h = ac.subexpression("h", 0.5);
    EXPECT_EQ(h.type(), ScalarType::Float64);
}

TEST(DslCollection, SubexpressionsComeFirst) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    AssignmentCollection ac;
    ac.add(Assignment(f.center(), g.center()));
    Expr a = ac.subexpression("a", g[{1, 0}] + g[{-1, 0}]);
    Expr b = ac.subexpression("b", a * 0.5);
    ac.add(Assignment(f.center(), b));

    ASSERT_EQ(ac.subexpressions().size(), 2u);
    EXPECT_TRUE(ac.subexpressions()[0].parts()[0].first.same_as(a));
    EXPECT_TRUE(ac.subexpressions()[1].parts()[0].first.same_as(b));
    EXPECT_TRUE(same_ir(ac.subexpressions()[1].parts()[0].second, bin(BinaryOp::Mul, a, f64(0.5))));
    ASSERT_EQ(ac.main_assignments().size(), 2u);

    // all(): subexpressions in definition order, then the main assignments in order.
    auto all = ac.all();
    ASSERT_EQ(all.size(), 4u);
    EXPECT_TRUE(all[0].parts()[0].first.same_as(a));
    EXPECT_TRUE(all[1].parts()[0].first.same_as(b));
    EXPECT_TRUE(same_ir(all[2].parts()[0].second, access(g, {0, 0})));
    EXPECT_TRUE(same_ir(all[3].parts()[0].second, b));
}

TEST(DslCollection, Constructors) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    Assignment a(f.center(), g.center());
    AssignmentCollection one = a;
    EXPECT_EQ(one.main_assignments().size(), 1u);
    AssignmentCollection list{a, Assignment(g.center(), 1.0)};
    EXPECT_EQ(list.main_assignments().size(), 2u);
    Expr t = temp<double>("t");
    AssignmentCollection split({a}, {Assignment(t, 2.0)});
    ASSERT_EQ(split.all().size(), 2u);
    EXPECT_TRUE(split.all()[0].parts()[0].first.same_as(t));
}
