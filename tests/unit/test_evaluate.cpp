#include "compiler/ir/evaluate.hpp"
#include "compiler/ir/ir.hpp"

#include <loom/errors.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace loom {
namespace {
using namespace ir;

Expr i32(std::int64_t v) { return ConstNode::make_int(ScalarType::Int32, v); }
Expr i64(std::int64_t v) { return ConstNode::make_int(ScalarType::Int64, v); }
Expr f32(double v) { return ConstNode::make(ScalarType::Float32, v); }
Expr f64(double v) { return ConstNode::make(ScalarType::Float64, v); }
Expr bin(BinaryOp op, Expr a, Expr b) { return BinaryNode::make(op, a, b); }
Expr call(MathFn fn, std::vector<Expr> args) { return CallNode::make(fn, std::move(args)); }

Value eval(const Expr& e) { return evaluate(e, {}); }

TEST(Evaluate, Int32ArithmeticWraps) {
    constexpr auto max = std::numeric_limits<std::int32_t>::max();
    constexpr auto min = std::numeric_limits<std::int32_t>::min();
    Value v = eval(bin(BinaryOp::Add, i32(max), i32(1)));
    EXPECT_EQ(v.type, ScalarType::Int32);
    EXPECT_EQ(v.i, min);
    EXPECT_EQ(eval(bin(BinaryOp::Mul, i32(65536), i32(65537))).i, 65536);
    EXPECT_EQ(eval(bin(BinaryOp::Sub, i32(min), i32(1))).i, max);
    EXPECT_EQ(eval(UnaryNode::make(UnaryOp::Neg, i32(min))).i, min);
    EXPECT_EQ(eval(bin(BinaryOp::Div, i32(min), i32(-1))).i, min);
}

TEST(Evaluate, Int64ArithmeticWraps) {
    constexpr auto max = std::numeric_limits<std::int64_t>::max();
    constexpr auto min = std::numeric_limits<std::int64_t>::min();
    EXPECT_EQ(eval(bin(BinaryOp::Add, i64(max), i64(1))).i, min);
    EXPECT_EQ(eval(bin(BinaryOp::Mul, i64(max), i64(2))).i, -2);
    EXPECT_EQ(eval(bin(BinaryOp::Div, i64(min), i64(-1))).i, min);
    EXPECT_EQ(eval(bin(BinaryOp::Mod, i64(min), i64(-1))).i, 0);
}

TEST(Evaluate, IntDivisionTruncatesAndModTakesTheDividendsSign) {
    EXPECT_EQ(eval(bin(BinaryOp::Div, i64(-7), i64(2))).i, -3);
    EXPECT_EQ(eval(bin(BinaryOp::Div, i64(7), i64(-2))).i, -3);
    EXPECT_EQ(eval(bin(BinaryOp::Mod, i64(-7), i64(2))).i, -1);
    EXPECT_EQ(eval(bin(BinaryOp::Mod, i64(7), i64(-2))).i, 1);
    EXPECT_EQ(eval(bin(BinaryOp::Min, i64(-7), i64(2))).i, -7);
    EXPECT_EQ(eval(bin(BinaryOp::Max, i64(-7), i64(2))).i, 2);
}

TEST(Evaluate, Float32RoundsEveryOperation) {
    Value v = eval(bin(BinaryOp::Add, f32(0.1), f32(0.2)));
    EXPECT_EQ(v.type, ScalarType::Float32);
    EXPECT_EQ(v.f, double(0.1f + 0.2f));
    EXPECT_NE(v.f, 0.1 + 0.2);
    // 1e8 + 1 is not representable in float: the sum rounds back to 1e8.
    Expr big = bin(BinaryOp::Add, f32(1e8), f32(1.0));
    EXPECT_EQ(eval(bin(BinaryOp::Sub, big, f32(1e8))).f, 0.0);
    EXPECT_EQ(eval(bin(BinaryOp::Div, f32(1.0), f32(3.0))).f, double(1.0f / 3.0f));
    EXPECT_EQ(eval(bin(BinaryOp::Div, f64(1.0), f64(3.0))).f, 1.0 / 3.0);
}

TEST(Evaluate, FloatModIsFmodAndDivisionByZeroIsIeee) {
    EXPECT_EQ(eval(bin(BinaryOp::Mod, f64(-7.5), f64(2.0))).f, -1.5);
    EXPECT_EQ(eval(bin(BinaryOp::Div, f64(1.0), f64(0.0))).f,
              std::numeric_limits<double>::infinity());
    EXPECT_TRUE(std::isnan(eval(bin(BinaryOp::Mod, f64(1.0), f64(0.0))).f));
}

TEST(Evaluate, IntDivisionByZeroIsAUserError) {
    EXPECT_THROW(eval(bin(BinaryOp::Div, i64(1), i64(0))), UserError);
    EXPECT_THROW(eval(bin(BinaryOp::Mod, i32(1), i32(0))), UserError);
    try {
        eval(bin(BinaryOp::Div, i64(5), bin(BinaryOp::Sub, i64(2), i64(2))));
        FAIL() << "no exception";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("division by zero"), std::string::npos) << e.what();
    }
}

TEST(Evaluate, UnboundVariableIsAnInternalErrorNamingIt) {
    Expr n = VarNode::make(ScalarType::Int64, "n_cells", VarRole::Parameter);
    try {
        eval(bin(BinaryOp::Add, n, i64(1)));
        FAIL() << "no exception";
    } catch (const InternalError& e) {
        EXPECT_NE(std::string(e.what()).find("n_cells"), std::string::npos) << e.what();
    }
}

TEST(Evaluate, VariablesAreLookedUpByObjectNotName) {
    Expr a = VarNode::make(ScalarType::Int64, "n", VarRole::Size, nullptr, 0);
    Expr b = VarNode::make(ScalarType::Int64, "n", VarRole::Size, nullptr, 1);
    Bindings vars{{a.as<VarNode>(), Value::of_int(ScalarType::Int64, 10)},
                  {b.as<VarNode>(), Value::of_int(ScalarType::Int64, 3)}};
    EXPECT_EQ(evaluate(bin(BinaryOp::Sub, a, b), vars).i, 7);
}

TEST(Evaluate, KernelOnlyNodesAreInternalErrors) {
    EXPECT_THROW(eval(CounterNode::make(0)), InternalError);
    EXPECT_THROW(eval(ThreadIndexNode::make(ScalarType::Int64, 1)), InternalError);
}

TEST(Evaluate, FieldReadsGoThroughTheLoadsCallback) {
    auto info = std::make_shared<FieldInfo>();
    info->name = "u";
    info->type = ScalarType::Float64;
    info->spatial_dims = 1;
    FieldPtr u = info;
    Expr access = FieldAccessNode::make(u, {1}, {});
    Expr e = bin(BinaryOp::Mul, access, f64(2.0));
    EXPECT_THROW(eval(e), InternalError);
    auto loads = [&](const Expr& x) {
        EXPECT_TRUE(x.is<FieldAccessNode>());
        return Value::of_float(ScalarType::Float64, 1.25);
    };
    EXPECT_EQ(evaluate(e, {}, loads).f, 2.5);
    auto memory = [](const Expr&) { return Value::of_float(ScalarType::Float64, 4); };
    BufferPtr global = make_global_buffer(u, {Expr()}, {i64(1)});
    EXPECT_EQ(evaluate(BufferLoadNode::make(global, i64(3)), {}, memory).f, 4.0);
}

TEST(Evaluate, ComparisonsLogicAndSelect) {
    Expr t = ConstNode::make_bool(true), f = ConstNode::make_bool(false);
    Value lt = eval(bin(BinaryOp::Lt, f64(1.0), f64(2.0)));
    EXPECT_EQ(lt.type, ScalarType::Bool);
    EXPECT_EQ(lt.i, 1);
    EXPECT_EQ(eval(bin(BinaryOp::Ge, i32(1), i32(2))).i, 0);
    double nan = std::numeric_limits<double>::quiet_NaN();
    EXPECT_EQ(eval(bin(BinaryOp::Eq, f64(nan), f64(nan))).i, 0);
    EXPECT_EQ(eval(bin(BinaryOp::Ne, f64(nan), f64(nan))).i, 1);
    EXPECT_EQ(eval(bin(BinaryOp::And, t, f)).i, 0);
    EXPECT_EQ(eval(bin(BinaryOp::Or, t, f)).i, 1);
    EXPECT_EQ(eval(UnaryNode::make(UnaryOp::Not, f)).i, 1);
    // Like C, && short-circuits and ?: evaluates only the chosen branch.
    Expr boom = bin(BinaryOp::Div, i64(1), i64(0));
    EXPECT_EQ(eval(bin(BinaryOp::And, f, bin(BinaryOp::Eq, boom, i64(1)))).i, 0);
    EXPECT_EQ(eval(SelectNode::make(t, i64(4), boom)).i, 4);
    EXPECT_EQ(eval(SelectNode::make(f, boom, i64(5))).i, 5);
}

TEST(Evaluate, Casts) {
    EXPECT_EQ(eval(CastNode::make(ScalarType::Int32, f64(-2.7))).i, -2);
    EXPECT_EQ(eval(CastNode::make(ScalarType::Int64, f32(2.7))).i, 2);
    EXPECT_EQ(eval(CastNode::make(ScalarType::Int32, i64(0x100000005))).i, 5);
    EXPECT_EQ(eval(CastNode::make(ScalarType::Float32, f64(0.1))).f, double(0.1f));
    EXPECT_EQ(eval(CastNode::make(ScalarType::Float64, i32(-3))).f, -3.0);
    EXPECT_EQ(eval(CastNode::make(ScalarType::Bool, f64(0.5))).i, 1);
    EXPECT_EQ(eval(CastNode::make(ScalarType::Int64, ConstNode::make_bool(true))).i, 1);
    // Int64 to float32 rounds once, not via double.
    std::int64_t odd = (std::int64_t(1) << 60) + (std::int64_t(1) << 36) + 1;
    EXPECT_EQ(eval(CastNode::make(ScalarType::Float32, i64(odd))).f, double(float(odd)));
    // Out of range saturates like the GPU; NaN gives 0.
    EXPECT_EQ(eval(CastNode::make(ScalarType::Int32, f64(1e20))).i,
              std::numeric_limits<std::int32_t>::max());
    EXPECT_EQ(eval(CastNode::make(ScalarType::Int32, f64(std::nan("")))).i, 0);
}

TEST(Evaluate, MathFunctionsUseTheTypesPrecision) {
    EXPECT_EQ(eval(call(MathFn::Sqrt, {f32(2.0)})).f, double(std::sqrt(2.0f)));
    EXPECT_EQ(eval(call(MathFn::Sqrt, {f64(2.0)})).f, std::sqrt(2.0));
    EXPECT_EQ(eval(call(MathFn::Rsqrt, {f64(4.0)})).f, 0.5);
    volatile float one = 1.0f; // computed at run time, as evaluate does, not folded by gcc
    EXPECT_EQ(eval(call(MathFn::Exp, {f32(1.0)})).f, double(std::exp(float(one))));
    EXPECT_EQ(eval(call(MathFn::Pow, {f64(2.0), f64(10.0)})).f, 1024.0);
    EXPECT_EQ(eval(call(MathFn::Fma, {f64(2.0), f64(3.0), f64(1.0)})).f, 7.0);
    EXPECT_EQ(eval(call(MathFn::Floor, {f64(-1.5)})).f, -2.0);
    EXPECT_EQ(eval(call(MathFn::Ceil, {f32(-1.5)})).f, -1.0);
    EXPECT_EQ(eval(call(MathFn::Abs, {i64(-4)})).i, 4);
    EXPECT_EQ(eval(call(MathFn::Abs, {f64(-0.25)})).f, 0.25);
    EXPECT_EQ(eval(bin(BinaryOp::Min, f64(std::nan("")), f64(1.0))).f, 1.0);
}

TEST(Evaluate, ValueConstructorsApplyTheType) {
    EXPECT_EQ(Value::of_int(ScalarType::Int32, 0x1'0000'0001).i, 1);
    EXPECT_EQ(Value::of_float(ScalarType::Float32, 0.1).f, double(0.1f));
    EXPECT_EQ(Value::of_bool(true).type, ScalarType::Bool);
    Value converted = Value::of_int(ScalarType::Float64, 3);
    EXPECT_EQ(converted.f, 3.0);
    EXPECT_EQ(converted.as_double(), 3.0);
    std::int64_t odd = (std::int64_t(1) << 60) + (std::int64_t(1) << 36) + 1;
    EXPECT_EQ(Value::of_int(ScalarType::Float32, odd).f, double(float(odd)));
}

} // namespace
} // namespace loom
