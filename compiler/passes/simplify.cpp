#include "compiler/passes/simplify.hpp"

#include "compiler/ir/equality.hpp"
#include "compiler/ir/evaluate.hpp"
#include "compiler/ir/visitor.hpp"

#include <cmath>
#include <cstdint>
#include <limits>

namespace loom::ir {

namespace {

/// evaluate() has no half-precision arithmetic, so those are never folded.
bool foldable(ScalarType t) { return t != ScalarType::Float16 && t != ScalarType::BFloat16; }

const ConstNode* constant(const Expr& e) { return e.as<ConstNode>(); }

// is_const_value compares as double, so both +0.0 and -0.0 count as zero.
bool is_zero(const Expr& e) { return is_const_value(e, 0.0); }
/// Float zeros by sign: the exact identities differ for +0.0 and -0.0.
bool is_pos_zero(const Expr& e) { return is_zero(e) && !std::signbit(e.as<ConstNode>()->float_value); }
bool is_neg_zero(const Expr& e) { return is_zero(e) && std::signbit(e.as<ConstNode>()->float_value); }
bool is_one(const Expr& e) { return is_const_value(e, 1.0); }
bool is_minus_one(const Expr& e) { return is_const_value(e, -1.0); }
bool is_bool(const Expr& e, bool value) {
    auto c = constant(e);
    return c && c->type == ScalarType::Bool && (c->int_value != 0) == value;
}

bool foldable_constant(const Expr& e) { return constant(e) && foldable(e.type()); }

/// Evaluates a node whose operands are all constants into a (strong) constant. Going through
/// the interpreter gives exactly the C semantics of the type, float32 rounding included.
Expr fold(const Expr& e) {
    static const Bindings no_vars;
    Value v = evaluate(e, no_vars);
    if (v.type == ScalarType::Bool) return ConstNode::make_bool(v.i != 0);
    if (is_float(v.type)) return ConstNode::make(v.type, v.f);
    return ConstNode::make_int(v.type, v.i);
}

/// Math functions whose host result is the correctly rounded one, as on the GPU. The others
/// (exp, sin, pow, ...) differ between libm and CUDA's libdevice in the last bits; folding them
/// would change the values the kernel computes.
bool exactly_foldable(MathFn fn) {
    return fn == MathFn::Sqrt || fn == MathFn::Abs || fn == MathFn::Floor ||
           fn == MathFn::Ceil || fn == MathFn::Fma;
}

Expr rewrite(const Expr& e);

Expr unary(UnaryOp op, const Expr& a) { return rewrite(UnaryNode::make(op, a)); }
Expr binary(BinaryOp op, const Expr& a, const Expr& b) {
    return rewrite(BinaryNode::make(op, a, b));
}

// ---- integer arithmetic: wraps, so it is associative and these rewrites are exact ----

std::int64_t wrap(ScalarType t, std::uint64_t bits) {
    return Value::of_int(t, static_cast<std::int64_t>(bits)).i;
}

/// Matches x + c, c + x and x - c with constant c: gives x and the offset as an addend.
bool split_offset(const Expr& e, Expr& x, std::int64_t& offset) {
    auto n = e.as<BinaryNode>();
    if (!n || !is_int(n->type)) return false;
    auto ca = constant(n->a), cb = constant(n->b);
    if (ca && cb) return false;
    if (n->op == BinaryOp::Add && (ca || cb)) {
        x = cb ? n->a : n->b;
        offset = cb ? cb->int_value : ca->int_value;
        return true;
    }
    if (n->op == BinaryOp::Sub && cb) {
        x = n->a;
        offset = wrap(n->type, 0 - static_cast<std::uint64_t>(cb->int_value));
        return true;
    }
    return false;
}

/// x + k, spelled x - |k| for negative k.
Expr add_offset(const Expr& x, std::uint64_t k_bits) {
    ScalarType t = x.type();
    std::int64_t k = wrap(t, k_bits);
    std::int64_t min = t == ScalarType::Int32 ? std::numeric_limits<std::int32_t>::min()
                                              : std::numeric_limits<std::int64_t>::min();
    if (k < 0 && k != min) return binary(BinaryOp::Sub, x, ConstNode::make_int(t, -k));
    return binary(BinaryOp::Add, x, ConstNode::make_int(t, k));
}

/// Matches x * c and c * x with constant c.
bool split_scale(const Expr& e, Expr& x, std::int64_t& scale) {
    auto n = e.as<BinaryNode>();
    if (!n || n->op != BinaryOp::Mul || !is_int(n->type)) return false;
    auto ca = constant(n->a), cb = constant(n->b);
    if ((ca != nullptr) == (cb != nullptr)) return false;
    x = cb ? n->a : n->b;
    scale = cb ? cb->int_value : ca->int_value;
    return true;
}

Expr int_rules(const Expr& e, const BinaryNode* n) {
    const Expr &a = n->a, &b = n->b;
    ScalarType t = n->type;
    auto ca = constant(a), cb = constant(b);
    auto bits = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
    Expr x;
    std::int64_t c = 0;
    switch (n->op) {
    case BinaryOp::Add:
        if (is_zero(b)) return a;
        if (is_zero(a)) return b;
        if (auto u = b.as<UnaryNode>(); u && u->op == UnaryOp::Neg)
            return binary(BinaryOp::Sub, a, u->a);
        if (cb && split_offset(a, x, c)) return add_offset(x, bits(c) + bits(cb->int_value));
        if (ca && split_offset(b, x, c)) return add_offset(x, bits(ca->int_value) + bits(c));
        break;
    case BinaryOp::Sub:
        if (is_zero(b)) return a;
        if (structurally_equal(a, b)) return ConstNode::make_int(t, 0);
        if (is_zero(a)) return unary(UnaryOp::Neg, b);
        if (auto u = b.as<UnaryNode>(); u && u->op == UnaryOp::Neg)
            return binary(BinaryOp::Add, a, u->a);
        if (cb && split_offset(a, x, c)) return add_offset(x, bits(c) - bits(cb->int_value));
        break;
    case BinaryOp::Mul:
        if (is_one(b)) return a;
        if (is_one(a)) return b;
        if (is_zero(a) || is_zero(b)) return ConstNode::make_int(t, 0);
        if (is_minus_one(b)) return unary(UnaryOp::Neg, a);
        if (is_minus_one(a)) return unary(UnaryOp::Neg, b);
        if ((cb && split_scale(a, x, c)) || (ca && split_scale(b, x, c))) {
            std::uint64_t k = bits(c) * bits(cb ? cb->int_value : ca->int_value);
            return binary(BinaryOp::Mul, x, ConstNode::make_int(t, wrap(t, k)));
        }
        break;
    case BinaryOp::Div:
        if (is_one(b)) return a;
        if (is_minus_one(b)) return unary(UnaryOp::Neg, a);
        break;
    case BinaryOp::Mod:
        if (is_one(b) || is_minus_one(b)) return ConstNode::make_int(t, 0);
        break;
    case BinaryOp::Min:
    case BinaryOp::Max:
        if (structurally_equal(a, b)) return a;
        break;
    default: break;
    }
    return e;
}

// ---- floats: only rewrites that give the same bits (up to the sign of zero for x + 0) ----

Expr float_rules(const Expr& e, const BinaryNode* n) {
    const Expr &a = n->a, &b = n->b;
    auto negated = [](const Expr& x) {
        auto u = x.as<UnaryNode>();
        return u && u->op == UnaryOp::Neg ? u->a : Expr();
    };
    // -c, or (-c) * x, or x * (-c) for a negative constant c, as c, c * x, x * c: negating a
    // float is exact, so a + (-c) * x is a - c * x bit for bit, and reads as people write it.
    auto negative_term = [](const Expr& x) -> Expr {
        auto flip = [](const Expr& k) -> Expr {
            auto c = k.as<ConstNode>();
            if (!c || !is_float(c->type) || std::isnan(c->float_value) || !std::signbit(c->float_value) ||
                c->float_value == 0.0)
                return Expr();
            return ConstNode::make(c->type, -c->float_value);
        };
        if (Expr c = flip(x); c.defined()) return c;
        auto m = x.as<BinaryNode>();
        if (!m || m->op != BinaryOp::Mul) return Expr();
        if (Expr c = flip(m->a); c.defined()) return binary(BinaryOp::Mul, c, m->b);
        if (Expr c = flip(m->b); c.defined()) return binary(BinaryOp::Mul, m->a, c);
        return Expr();
    };
    switch (n->op) {
    case BinaryOp::Add:
        // x + (-0.0) is x for every x, -0.0 included; x + 0.0 turns -0.0 into +0.0, so it stays.
        if (is_neg_zero(b)) return a;
        if (is_neg_zero(a)) return b;
        // IEEE defines a - b as a + (-b), so both directions are exact.
        if (Expr y = negated(b); y.defined()) return binary(BinaryOp::Sub, a, y);
        if (Expr y = negative_term(b); y.defined()) return binary(BinaryOp::Sub, a, y);
        break;
    case BinaryOp::Sub:
        // x - 0.0 is x for every x; x - (-0.0) turns -0.0 into +0.0, so it stays.
        if (is_pos_zero(b)) return a;
        if (Expr y = negated(b); y.defined()) return binary(BinaryOp::Add, a, y);
        if (Expr y = negative_term(b); y.defined()) return binary(BinaryOp::Add, a, y);
        break;
    case BinaryOp::Mul:
        if (is_one(b)) return a;
        if (is_one(a)) return b;
        break;
    case BinaryOp::Div:
        if (is_one(b)) return a;
        break;
    default: break;
    }
    return e;
}

Expr rewrite_binary(const Expr& e, const BinaryNode* n) {
    const Expr &a = n->a, &b = n->b;
    ScalarType t = a.type();
    if (foldable_constant(a) && foldable_constant(b)) {
        bool int_div = is_int(t) && (n->op == BinaryOp::Div || n->op == BinaryOp::Mod);
        // Integer division by zero is undefined: leave it for the user to see.
        if (!(int_div && constant(b)->int_value == 0)) return fold(e);
    }
    switch (n->op) {
    case BinaryOp::And:
        if (is_bool(a, true)) return b;
        if (is_bool(b, true)) return a;
        if (is_bool(a, false) || is_bool(b, false)) return ConstNode::make_bool(false);
        return e;
    case BinaryOp::Or:
        if (is_bool(a, false)) return b;
        if (is_bool(b, false)) return a;
        if (is_bool(a, true) || is_bool(b, true)) return ConstNode::make_bool(true);
        return e;
    default: break;
    }
    if (is_comparison(n->op)) {
        // Not for floats: NaN != NaN.
        if (is_int(t) && structurally_equal(a, b))
            return ConstNode::make_bool(n->op == BinaryOp::Eq || n->op == BinaryOp::Le ||
                                        n->op == BinaryOp::Ge);
        return e;
    }
    if (is_int(t)) return int_rules(e, n);
    if (is_float(t)) return float_rules(e, n);
    return e;
}

/// `(int) (long long) a` as `a`, and `(int) ((long long) a op c)` as `a op c`, for an int `a` (any narrower integer type) and a
/// constant `c` that fits it: a quotient by c (not 0 or -1), a remainder, a min or a max of such
/// operands always fits the narrow type and is the same there, so the widening only costs
/// 64-bit arithmetic and casts (a counter divided in an int32 kernel, `(int) (ctr_0 / 4)`).
/// Undefined where no rule applies.
Expr narrowed(const CastNode* n) {
    // (int) (long long) a: an integer widened and narrowed back is itself.
    if (auto inner = n->value.as<CastNode>(); inner && is_int(n->type) && is_int(inner->type) &&
                                              inner->value.type() == n->type &&
                                              bit_width(inner->type) >= bit_width(n->type))
        return inner->value;
    auto b = n->value.as<BinaryNode>();
    if (!b || !is_int(n->type) || !is_int(b->type) || bit_width(n->type) >= bit_width(b->type))
        return Expr();
    auto widened = b->a.as<CastNode>();
    auto c = b->b.as<ConstNode>();
    if (!widened || widened->value.type() != n->type || !c) return Expr();
    const std::int64_t lo = n->type == ScalarType::Int32 ? INT32_MIN : INT64_MIN;
    const std::int64_t hi = n->type == ScalarType::Int32 ? INT32_MAX : INT64_MAX;
    if (c->int_value < lo || c->int_value > hi) return Expr();
    switch (b->op) {
    case BinaryOp::Div:
    case BinaryOp::Mod:
        if (c->int_value == 0 || c->int_value == -1) return Expr();
        break;
    case BinaryOp::Min:
    case BinaryOp::Max: break;
    default: return Expr();
    }
    return BinaryNode::make(b->op, widened->value, ConstNode::make_int(n->type, c->int_value));
}

Expr rewrite(const Expr& e) {
    switch (e.kind()) {
    case ExprKind::Unary: {
        auto n = e.as<UnaryNode>();
        if (foldable_constant(n->a)) return fold(e);
        if (auto inner = n->a.as<UnaryNode>(); inner && inner->op == n->op) return inner->a;
        return e;
    }
    case ExprKind::Binary: return rewrite_binary(e, e.as<BinaryNode>());
    case ExprKind::Select: {
        auto n = e.as<SelectNode>();
        if (is_bool(n->cond, true)) return n->if_true;
        if (is_bool(n->cond, false)) return n->if_false;
        if (structurally_equal(n->if_true, n->if_false)) return n->if_true;
        return e;
    }
    case ExprKind::Call: {
        auto n = e.as<CallNode>();
        if (!exactly_foldable(n->fn) && !is_int(n->type)) return e;
        for (const Expr& a : n->args)
            if (!foldable_constant(a)) return e;
        return fold(e);
    }
    case ExprKind::Cast: {
        auto n = e.as<CastNode>();
        if (n->value.type() == n->type) return n->value;
        if (foldable(n->type) && foldable_constant(n->value)) return fold(e);
        if (Expr narrow = narrowed(n); narrow.defined()) return narrow;
        // A 16-bit float widened and stored back into its type is itself (every float16 and
        // bfloat16 is exact in float32): a copy between float16 fields moves 16 bits.
        if (auto wide = n->value.as<CastNode>(); wide && !foldable(n->type) && wide->value.type() == n->type &&
                                                 bit_width(wide->type) >= 32 && is_float(wide->type))
            return wide->value;
        return e;
    }
    default: return e;
    }
}

/// Bottom-up: the default traversal simplifies the operands, then the rules look at the node.
class Simplifier : public IRMutator {
protected:
    Expr visit_Unary(const UnaryNode* n, const Expr& self) override {
        return rewrite(IRMutator::visit_Unary(n, self));
    }
    Expr visit_Binary(const BinaryNode* n, const Expr& self) override {
        return rewrite(IRMutator::visit_Binary(n, self));
    }
    Expr visit_Select(const SelectNode* n, const Expr& self) override {
        return rewrite(IRMutator::visit_Select(n, self));
    }
    Expr visit_Call(const CallNode* n, const Expr& self) override {
        return rewrite(IRMutator::visit_Call(n, self));
    }
    Expr visit_Cast(const CastNode* n, const Expr& self) override {
        return rewrite(IRMutator::visit_Cast(n, self));
    }
};

/// Simplifies like Simplifier and notes the first integer division or modulo whose divisor,
/// simplified, is the constant 0: operands are simplified before the node is looked at, so the
/// divisor is as folded as it gets, and the division is found before a rule could drop it.
class DivisionByZeroFinder : public Simplifier {
public:
    Expr found;

protected:
    Expr visit_Binary(const BinaryNode* n, const Expr& self) override {
        Expr e = IRMutator::visit_Binary(n, self);
        auto b = e.as<BinaryNode>();
        if (!found.defined() && b && is_int(b->type) &&
            (b->op == BinaryOp::Div || b->op == BinaryOp::Mod))
            if (auto c = constant(b->b); c && c->int_value == 0) found = self;
        return rewrite(e);
    }
};

} // namespace

Expr simplify(const Expr& e) { return Simplifier().mutate(e); }
Stmt simplify(const Stmt& s) { return Simplifier().mutate(s); }

Expr find_division_by_zero(const Stmt& s) {
    DivisionByZeroFinder f;
    f.mutate(s);
    return f.found;
}

} // namespace loom::ir
