#include "compiler/ir/evaluate.hpp"

#include "compiler/ir/printer.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace loom::ir {

namespace {

bool is_half(ScalarType t) { return t == ScalarType::Float16 || t == ScalarType::BFloat16; }

/// Keeps the low bits of `v` that fit the type: int32 wraps like 32-bit hardware arithmetic.
std::int64_t wrap(ScalarType t, std::int64_t v) {
    if (t == ScalarType::Int32) return static_cast<std::int32_t>(v);
    if (t == ScalarType::Bool) return v != 0;
    return v;
}

/// Two's-complement arithmetic without the undefined behaviour of signed overflow.
std::int64_t wrapping(std::uint64_t bits) { return static_cast<std::int64_t>(bits); }

/// Float to int conversion as the GPU does it (cvt.rzi): truncate, saturate, NaN gives 0.
/// C leaves out-of-range conversions undefined; saturating keeps the host deterministic.
std::int64_t float_to_int(ScalarType t, double v) {
    if (t == ScalarType::Bool) return v != 0.0;
    if (std::isnan(v)) return 0;
    if (t == ScalarType::Int32) {
        if (v <= -2147483648.0) return std::numeric_limits<std::int32_t>::min();
        if (v >= 2147483648.0) return std::numeric_limits<std::int32_t>::max();
        return static_cast<std::int32_t>(v);
    }
    if (v <= -9223372036854775808.0) return std::numeric_limits<std::int64_t>::min();
    if (v >= 9223372036854775808.0) return std::numeric_limits<std::int64_t>::max();
    return static_cast<std::int64_t>(v);
}

template <typename T>
T float_arith(BinaryOp op, T a, T b) {
    switch (op) {
    case BinaryOp::Add: return a + b;
    case BinaryOp::Sub: return a - b;
    case BinaryOp::Mul: return a * b;
    case BinaryOp::Div: return a / b;
    case BinaryOp::Mod: return std::fmod(a, b);
    // CUDA's min/max on floats are fmin/fmax: a NaN operand yields the other one.
    case BinaryOp::Min: return std::fmin(a, b);
    case BinaryOp::Max: return std::fmax(a, b);
    default: break;
    }
    throw InternalError(fmt::format("evaluate: {} is not arithmetic", op_name(op)));
}

template <typename T>
T float_math(MathFn fn, T x, T y, T z) {
    switch (fn) {
    case MathFn::Sqrt: return std::sqrt(x);
    case MathFn::Rsqrt: return T(1) / std::sqrt(x);
    case MathFn::Exp: return std::exp(x);
    case MathFn::Log: return std::log(x);
    case MathFn::Pow: return std::pow(x, y);
    case MathFn::Sin: return std::sin(x);
    case MathFn::Cos: return std::cos(x);
    case MathFn::Tan: return std::tan(x);
    case MathFn::Tanh: return std::tanh(x);
    case MathFn::Erf: return std::erf(x);
    case MathFn::Abs: return std::fabs(x);
    case MathFn::Floor: return std::floor(x);
    case MathFn::Ceil: return std::ceil(x);
    case MathFn::Fma: return std::fma(x, y, z);
    }
    throw InternalError("evaluate: unknown math function");
}

template <typename T>
bool compare(BinaryOp op, T a, T b) {
    switch (op) {
    case BinaryOp::Eq: return a == b;
    case BinaryOp::Ne: return a != b;
    case BinaryOp::Lt: return a < b;
    case BinaryOp::Le: return a <= b;
    case BinaryOp::Gt: return a > b;
    case BinaryOp::Ge: return a >= b;
    default: break;
    }
    throw InternalError(fmt::format("evaluate: {} is not a comparison", op_name(op)));
}

Value cast_value(ScalarType t, const Value& v) {
    if (v.type == t) return v;
    if (is_half(t) || is_half(v.type))
        throw InternalError(fmt::format("evaluate: conversion between {} and {} is not supported",
                                        type_name(v.type), type_name(t)));
    if (!is_float(t)) {
        if (is_float(v.type)) return Value::of_int(t, float_to_int(t, v.f));
        return Value::of_int(t, v.i);
    }
    if (is_float(v.type)) return Value::of_float(t, v.f);
    return Value::of_int(t, v.i);
}

class Evaluator {
public:
    Evaluator(const Bindings& vars, const std::function<Value(const Expr&)>& loads)
        : vars_(vars), loads_(loads) {}

    Value eval(const Expr& e) {
        if (is_half(e.type()))
            throw InternalError(fmt::format("evaluate: {} values are not supported ('{}')",
                                            type_name(e.type()), to_string(e)));
        switch (e.kind()) {
        case ExprKind::Const: {
            auto c = e.as<ConstNode>();
            return is_float(c->type) ? Value::of_float(c->type, c->float_value)
                                     : Value::of_int(c->type, c->int_value);
        }
        case ExprKind::Var: {
            auto v = e.as<VarNode>();
            auto it = vars_.find(v);
            if (it == vars_.end())
                throw InternalError(fmt::format("evaluate: variable '{}' ({}) has no value",
                                                v->name, type_name(v->type)));
            return cast_value(v->type, it->second);
        }
        case ExprKind::Counter:
        case ExprKind::ThreadIndex:
        case ExprKind::BlockThread:
        case ExprKind::WarpReduce:
            throw InternalError(fmt::format(
                "evaluate: '{}' has a value only inside a running kernel", to_string(e)));
        case ExprKind::FieldAccess:
        case ExprKind::BufferLoad:
            if (!loads_)
                throw InternalError(
                    fmt::format("evaluate: no memory to read '{}' from", to_string(e)));
            return cast_value(e.type(), loads_(e));
        case ExprKind::Unary: return unary(e.as<UnaryNode>());
        case ExprKind::Binary: return binary(e, e.as<BinaryNode>());
        case ExprKind::Select: {
            auto s = e.as<SelectNode>();
            // Like C's ?:, only the chosen branch is evaluated.
            return eval(s->cond).i ? eval(s->if_true) : eval(s->if_false);
        }
        case ExprKind::Call: return call(e.as<CallNode>());
        case ExprKind::Cast: {
            auto c = e.as<CastNode>();
            return cast_value(c->type, eval(c->value));
        }
        }
        throw InternalError("evaluate: unknown expression kind");
    }

private:
    const Bindings& vars_;
    const std::function<Value(const Expr&)>& loads_;

    Value unary(const UnaryNode* n) {
        Value a = eval(n->a);
        if (n->op == UnaryOp::Not) return Value::of_bool(a.i == 0);
        if (is_float(n->type)) return Value::of_float(n->type, -a.f);
        return Value::of_int(n->type, wrapping(0 - static_cast<std::uint64_t>(a.i)));
    }

    Value binary(const Expr& e, const BinaryNode* n) {
        if (is_logical(n->op)) {
            // Short-circuit like C.
            bool a = eval(n->a).i != 0;
            if (n->op == BinaryOp::And ? !a : a) return Value::of_bool(a);
            return Value::of_bool(eval(n->b).i != 0);
        }
        Value a = eval(n->a), b = eval(n->b);
        ScalarType t = a.type;
        if (is_comparison(n->op))
            return Value::of_bool(is_float(t) ? compare(n->op, a.f, b.f)
                                              : compare(n->op, a.i, b.i));
        if (t == ScalarType::Float32)
            return Value::of_float(t, float_arith(n->op, float(a.f), float(b.f)));
        if (is_float(t)) return Value::of_float(t, float_arith(n->op, a.f, b.f));
        return Value::of_int(t, int_arith(e, n->op, a.i, b.i));
    }

    /// Computes in 64 bits; of_int then wraps int32 results.
    static std::int64_t int_arith(const Expr& e, BinaryOp op, std::int64_t a, std::int64_t b) {
        auto ua = static_cast<std::uint64_t>(a), ub = static_cast<std::uint64_t>(b);
        switch (op) {
        case BinaryOp::Add: return wrapping(ua + ub);
        case BinaryOp::Sub: return wrapping(ua - ub);
        case BinaryOp::Mul: return wrapping(ua * ub);
        case BinaryOp::Div:
        case BinaryOp::Mod:
            if (b == 0)
                throw UserError(fmt::format(
                    "integer {} by zero while evaluating '{}'; check the sizes and scalar "
                    "arguments it depends on",
                    op == BinaryOp::Div ? "division" : "modulo", to_string(e)));
            // INT64_MIN / -1 overflows: wrap it like the hardware instead of trapping.
            if (b == -1) return op == BinaryOp::Div ? wrapping(0 - ua) : 0;
            return op == BinaryOp::Div ? a / b : a % b;
        case BinaryOp::Min: return std::min(a, b);
        case BinaryOp::Max: return std::max(a, b);
        default: break;
        }
        throw InternalError(fmt::format("evaluate: {} is not arithmetic", op_name(op)));
    }

    Value call(const CallNode* n) {
        Value args[3];
        for (std::size_t k = 0; k < n->args.size() && k < 3; ++k) args[k] = eval(n->args[k]);
        ScalarType t = n->type;
        if (is_int(t)) {
            switch (n->fn) {
            case MathFn::Abs:
                return Value::of_int(
                    t, args[0].i < 0 ? wrapping(0 - static_cast<std::uint64_t>(args[0].i))
                                     : args[0].i);
            case MathFn::Floor:
            case MathFn::Ceil: return args[0];
            default:
                throw InternalError(
                    fmt::format("evaluate: {} on {}", fn_name(n->fn), type_name(t)));
            }
        }
        if (t == ScalarType::Float32)
            return Value::of_float(
                t, float_math(n->fn, float(args[0].f), float(args[1].f), float(args[2].f)));
        return Value::of_float(t, float_math(n->fn, args[0].f, args[1].f, args[2].f));
    }
};

} // namespace

Value Value::of_int(ScalarType t, std::int64_t v) {
    // Straight to float: going through double could round twice.
    if (t == ScalarType::Float32) return of_float(t, static_cast<float>(v));
    if (is_float(t)) return of_float(t, static_cast<double>(v));
    Value r;
    r.type = t;
    r.i = wrap(t, v);
    return r;
}

Value Value::of_float(ScalarType t, double v) {
    if (!is_float(t)) return of_int(t, float_to_int(t, v));
    Value r;
    r.type = t;
    r.f = t == ScalarType::Float32 ? static_cast<double>(static_cast<float>(v)) : v;
    return r;
}

Value evaluate(const Expr& e, const Bindings& vars,
               const std::function<Value(const Expr&)>& loads) {
    if (!e.defined()) throw InternalError("evaluate: undefined expression");
    return Evaluator(vars, loads).eval(e);
}

std::string integer_division_by_zero_advice(BinaryOp op) {
    const char* x = op == BinaryOp::Mod ? "x % d" : "x / d";
    return fmt::format("Integer {} by zero is undefined (the CPU target traps, a GPU gives "
                       "garbage); float division by zero is not (it gives inf or nan). Use a "
                       "nonzero divisor, guard one that can be zero, e.g. select(d != 0, {}, 0), "
                       "or compute in floating point, e.g. cast<double>(x) {} d",
                       op == BinaryOp::Mod ? "modulo" : "division", x,
                       op == BinaryOp::Mod ? "%" : "/");
}

} // namespace loom::ir
