// evaluate_interval: the launch bounds counter-dependent slice bounds with it, so every value an
// expression takes while its counters range over their intervals must lie inside the result.
// Checked against brute force (evaluate() at every point) on random expressions, plus the
// exact results of the usual triangle bounds and the cases it must refuse.
#include "compiler/ir/evaluate.hpp"
#include "compiler/ir/interval.hpp"
#include "compiler/ir/ir.hpp"

#include <loom/errors.hpp>

#include <gtest/gtest.h>

#include <limits>
#include <random>

namespace loom {
namespace {
using namespace ir;

Expr i64(std::int64_t v) { return ConstNode::make_int(ScalarType::Int64, v); }
Expr bin(BinaryOp op, Expr a, Expr b) { return BinaryNode::make(op, a, b); }

struct Vars {
    Expr x = VarNode::make(ScalarType::Int64, "ctr_0", VarRole::Counter, nullptr, 0);
    Expr y = VarNode::make(ScalarType::Int64, "ctr_1", VarRole::Counter, nullptr, 1);
    Expr n = VarNode::make(ScalarType::Int64, "n", VarRole::Parameter);
};

/// A random integer expression over x, y and n, `depth` levels deep.
Expr random_expr(std::mt19937_64& rng, const Vars& v, int depth) {
    auto pick = [&](int k) { return int(rng() % std::uint64_t(k)); };
    if (depth == 0 || pick(4) == 0) {
        switch (pick(4)) {
        case 0: return v.x;
        case 1: return v.y;
        case 2: return v.n;
        default: return i64(pick(15) - 7);
        }
    }
    Expr a = random_expr(rng, v, depth - 1), b = random_expr(rng, v, depth - 1);
    switch (pick(12)) {
    case 0: return bin(BinaryOp::Add, a, b);
    case 1: return bin(BinaryOp::Sub, a, b);
    case 2: return bin(BinaryOp::Mul, a, b);
    case 3: return bin(BinaryOp::Div, a, b);
    case 4: return bin(BinaryOp::Mod, a, b);
    case 5: return bin(BinaryOp::Min, a, b);
    case 6: return bin(BinaryOp::Max, a, b);
    case 7: return UnaryNode::make(UnaryOp::Neg, a);
    case 8: return CallNode::make(MathFn::Abs, {a});
    case 9: {
        static const BinaryOp cmp[] = {BinaryOp::Lt, BinaryOp::Le, BinaryOp::Gt,
                                       BinaryOp::Ge, BinaryOp::Eq, BinaryOp::Ne};
        Expr c = bin(cmp[pick(6)], a, b);
        if (pick(2)) c = bin(pick(2) ? BinaryOp::And : BinaryOp::Or, c, bin(BinaryOp::Lt, b, a));
        return SelectNode::make(c, a, b);
    }
    case 10: return CastNode::make(ScalarType::Int64, CastNode::make(ScalarType::Int32, a));
    default: return bin(BinaryOp::Div, a, i64(pick(5) + 1));
    }
}

TEST(Interval, EnclosesEveryValueOfRandomExpressions) {
    std::mt19937_64 rng(20240611);
    Vars v;
    int bounded = 0;
    for (int trial = 0; trial < 3000; ++trial) {
        Expr e = random_expr(rng, v, 1 + int(rng() % 4));
        const std::int64_t n = std::int64_t(rng() % 21) - 10;
        const std::int64_t x0 = std::int64_t(rng() % 21) - 10, x1 = x0 + std::int64_t(rng() % 6);
        const std::int64_t y0 = std::int64_t(rng() % 21) - 10, y1 = y0 + std::int64_t(rng() % 6);
        Bindings points{{v.n.as<VarNode>(), Value::of_int(ScalarType::Int64, n)}};
        IntervalBindings ranges{{v.x.as<VarNode>(), {x0, x1}}, {v.y.as<VarNode>(), {y0, y1}}};
        std::optional<Interval> r = evaluate_interval(e, points, ranges);
        if (!r) continue;
        ++bounded;
        for (std::int64_t xi = x0; xi <= x1; ++xi)
            for (std::int64_t yi = y0; yi <= y1; ++yi) {
                Bindings b = points;
                b[v.x.as<VarNode>()] = Value::of_int(ScalarType::Int64, xi);
                b[v.y.as<VarNode>()] = Value::of_int(ScalarType::Int64, yi);
                std::int64_t got = 0;
                ASSERT_NO_THROW(got = evaluate(e, b).i)
                    << to_string(e) << ": bounded, yet a division by zero at x = " << xi
                    << ", y = " << yi;
                ASSERT_TRUE(got >= r->lo && got <= r->hi)
                    << to_string(e) << " = " << got << " at x = " << xi << ", y = " << yi
                    << ", n = " << n << ", outside [" << r->lo << ", " << r->hi << "]";
            }
    }
    EXPECT_GT(bounded, 1500) << "most random expressions should be bounded";
}

TEST(Interval, TriangleBoundsAreExact) {
    Vars v;
    Bindings points{{v.n.as<VarNode>(), Value::of_int(ScalarType::Int64, 10)}};
    IntervalBindings x{{v.x.as<VarNode>(), {0, 7}}};
    auto check = [&](const Expr& e, std::int64_t lo, std::int64_t hi) {
        auto r = evaluate_interval(e, points, x);
        ASSERT_TRUE(r) << to_string(e);
        EXPECT_EQ(r->lo, lo) << to_string(e);
        EXPECT_EQ(r->hi, hi) << to_string(e);
    };
    check(v.x, 0, 7);
    check(bin(BinaryOp::Add, v.x, i64(1)), 1, 8);
    check(bin(BinaryOp::Sub, v.n, v.x), 3, 10);
    check(bin(BinaryOp::Add, v.x, v.n), 10, 17);
    check(bin(BinaryOp::Div, v.x, i64(2)), 0, 3);
    check(bin(BinaryOp::Min, v.x, i64(4)), 0, 4);
    check(bin(BinaryOp::Mod, v.x, i64(3)), 0, 2);
    check(bin(BinaryOp::Mul, v.n, i64(3)), 30, 30); // no counter: exact
}

TEST(Interval, RefusesWhatItCannotBound) {
    Vars v;
    Bindings points{{v.n.as<VarNode>(), Value::of_int(ScalarType::Int64, 10)}};
    IntervalBindings x{{v.x.as<VarNode>(), {0, 7}}};
    // A divisor range holding 0.
    EXPECT_FALSE(evaluate_interval(bin(BinaryOp::Div, v.n, v.x), points, x));
    // A float computation of a counter.
    auto sqrt_of = [](const Expr& e) {
        return CastNode::make(ScalarType::Int64,
                              CallNode::make(MathFn::Sqrt, {CastNode::make(ScalarType::Float64, e)}));
    };
    Expr root = sqrt_of(v.x);
    EXPECT_FALSE(evaluate_interval(root, points, x));
    // A result that overflows (the kernel would wrap).
    IntervalBindings huge{{v.x.as<VarNode>(), {0, std::numeric_limits<std::int64_t>::max()}}};
    EXPECT_FALSE(evaluate_interval(bin(BinaryOp::Add, v.x, i64(1)), points, huge));
    EXPECT_FALSE(evaluate_interval(CastNode::make(ScalarType::Int32, v.x), points, huge));
    // Floats of parameters alone are exact.
    auto r = evaluate_interval(bin(BinaryOp::Add, v.x, sqrt_of(v.n)), points, x);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->lo, 3);
    EXPECT_EQ(r->hi, 10);
}

} // namespace
} // namespace loom
