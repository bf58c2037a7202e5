#include "frontend/untyped.hpp"

#include <loom/errors.hpp>

namespace loom {
using namespace ir;

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
    if (!is_untyped(e) || !is_numeric(t) || (!is_float(t) && !e.is<ConstNode>()))
        throw InternalError("adopt: expected an untyped value and a float type (or an integer "
                            "type for a plain number)");
    switch (e.kind()) {
    case ExprKind::Const: {
        auto c = e.as<ConstNode>();
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
