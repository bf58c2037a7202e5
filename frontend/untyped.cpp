#include "frontend/untyped.hpp"

#include "compiler/ir/printer.hpp"

#include <loom/errors.hpp>
#include <loom/half.hpp>

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>

namespace loom {
using namespace ir;

std::string constant_misfit(const ConstNode& c, ScalarType to) {
    const double v = c.as_double();
    std::string why;
    if (to == ScalarType::Float32 && is_float(c.type) && std::isfinite(v) &&
        std::isinf(static_cast<float>(v))) {
        why = fmt::format("float32's largest finite value is {}, so it would become inf",
                          std::numeric_limits<float>::max());
    } else if ((to == ScalarType::Float16 || to == ScalarType::BFloat16) && std::isfinite(v) &&
               std::isinf(round_to_type(v, to))) {
        why = fmt::format("{}'s largest finite value is {}, so it would become inf", type_name(to),
                          to == ScalarType::Float16 ? "65504" : "3.39e38");
    } else if (is_int(to) && is_float(c.type)) {
        // -2^63 <= v < 2^63, or the int32 range; NaN fails both comparisons.
        const bool i32 = to == ScalarType::Int32;
        const double lo = i32 ? -2147483648.0 : -9223372036854775808.0;
        const double hi = i32 ? 2147483648.0 : 9223372036854775808.0;
        if (!(v >= lo && v < hi))
            why = fmt::format("{} holds {}..{}", type_name(to), i32 ? INT32_MIN : INT64_MIN,
                              i32 ? INT32_MAX : INT64_MAX);
    } else if (to == ScalarType::Int32 && is_int(c.type) &&
               (c.int_value < INT32_MIN || c.int_value > INT32_MAX)) {
        why = fmt::format("int32 holds {}..{}", INT32_MIN, INT32_MAX);
    }
    if (why.empty()) return why;
    std::string fix =
        to == ScalarType::Float32
            ? "Compute in float64 instead (a float64 field, param<double>, cast<double>(...) of "
              "the other operand, or constant<double>(...)), or use a number within float32's "
              "range; std::numeric_limits<float>::infinity() is accepted where inf is meant"
        : to == ScalarType::Int32
            ? "Use int64 instead (an int64 field, param<std::int64_t> or "
              "constant<std::int64_t>(...)), or a number within int32's range"
        : to == ScalarType::Int64
            ? "Use a number within int64's range"
            : "Store it in a float32 field, or use a number within the type's range";
    return fmt::format("does not fit {}: {}. {}", type_name(to), why, fix);
}

bool is_weak_constant(const Expr& e) {
    auto c = e.as<ConstNode>();
    return c && c->weak;
}

bool is_weak_variable(const Expr& e) {
    auto v = e.as<VarNode>();
    return v && v->weak;
}

bool is_untyped(const Expr& e) {
    if (!e.defined()) return false;
    if (e.is<ConstNode>()) return is_weak_constant(e);
    if (e.is<VarNode>()) return is_weak_variable(e);
    // Compounds are nominally float64, which rejects most typed trees at once. The right operand
    // is checked first: sums built with + lean left, so it is usually a leaf.
    if (e.type() != ScalarType::Float64) return false;
    switch (e.kind()) {
    case ExprKind::Unary: {
        auto u = e.as<UnaryNode>();
        return u->op == UnaryOp::Neg && is_untyped(u->a);
    }
    case ExprKind::Binary: {
        auto b = e.as<BinaryNode>();
        return is_untyped(b->b) && is_untyped(b->a);
    }
    case ExprKind::Call:
        for (auto& a : e.as<CallNode>()->args)
            if (!is_untyped(a)) return false;
        return true;
    case ExprKind::Select: {
        auto s = e.as<SelectNode>();
        return is_untyped(s->if_false) && is_untyped(s->if_true);
    }
    default: return false;
    }
}

Expr adopt(const Expr& e, ScalarType t) {
    if (!is_untyped(e) || !is_numeric(t) || (!is_float(t) && !e.is<ConstNode>()) || t == ScalarType::Float16 ||
        t == ScalarType::BFloat16)
        throw InternalError("adopt: expected an untyped value and a float type of 32 bits or more "
                            "(or an integer type for a plain number)");
    switch (e.kind()) {
    case ExprKind::Const: {
        auto c = e.as<ConstNode>();
        if (std::string misfit = constant_misfit(*c, t); !misfit.empty())
            throw UserError(fmt::format("the plain number {} takes the type {} here (a plain "
                                        "number adopts the type of what it meets), but it {}",
                                        to_string(e), type_name(t), misfit));
        if (is_float(t)) return ConstNode::make(t, c->as_double());
        if (is_float(c->type)) return ConstNode::make(t, c->float_value); // truncates toward zero
        return ConstNode::make_int(t, c->int_value);
    }
    case ExprKind::Var: return CastNode::make(t, e); // the use, recorded for create_kernel
    case ExprKind::Unary: return UnaryNode::make(UnaryOp::Neg, adopt(e.as<UnaryNode>()->a, t));
    case ExprKind::Binary: {
        auto b = e.as<BinaryNode>();
        return BinaryNode::make(b->op, adopt(b->a, t), adopt(b->b, t));
    }
    case ExprKind::Call: {
        std::vector<Expr> args;
        for (auto& a : e.as<CallNode>()->args) args.push_back(adopt(a, t));
        return CallNode::make(e.as<CallNode>()->fn, std::move(args));
    }
    case ExprKind::Select: {
        auto s = e.as<SelectNode>();
        return SelectNode::make(s->cond, adopt(s->if_true, t), adopt(s->if_false, t));
    }
    default: throw InternalError("adopt: unexpected node in an untyped value");
    }
}

Expr weak_variable(const std::string& name, VarRole role) {
    return VarNode::make(ScalarType::Float64, name, role, nullptr, -1, /*weak=*/true);
}

} // namespace loom
