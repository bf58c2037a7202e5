#include "compiler/ir/interval.hpp"

#include "compiler/ir/visitor.hpp"

#include <loom/errors.hpp>

#include <algorithm>
#include <limits>

namespace loom::ir {

namespace {

using Wide = __int128; // products and sums of two int64 bounds never overflow it

using Range = std::optional<Interval>;

class IntervalEvaluator {
public:
    IntervalEvaluator(const Bindings& points, const IntervalBindings& ranges)
        : points_(points), ranges_(ranges) {}

    Range eval(const Expr& e) {
        if (!ranges_over(e)) { // exact, whatever the types inside
            Value v;
            try {
                v = evaluate(e, points_);
            } catch (const UserError&) { // an integer division by zero
                return std::nullopt;
            }
            if (is_float(v.type)) return std::nullopt;
            return Interval{v.i, v.i};
        }
        if (!is_int(e.type()) && e.type() != ScalarType::Bool) return std::nullopt;
        switch (e.kind()) {
        case ExprKind::Var: return ranges_.at(e.as<VarNode>());
        case ExprKind::Cast: return cast(e.as<CastNode>());
        case ExprKind::Unary: return unary(e.as<UnaryNode>());
        case ExprKind::Binary: return binary(e.as<BinaryNode>());
        case ExprKind::Select: return select(e.as<SelectNode>());
        case ExprKind::Call: return call(e.as<CallNode>());
        default: return std::nullopt;
        }
    }

private:
    const Bindings& points_;
    const IntervalBindings& ranges_;

    bool ranges_over(const Expr& e) const {
        for (const Expr& s : subexpressions(e))
            if (auto v = s.as<VarNode>(); v && ranges_.count(v)) return true;
        return false;
    }

    /// [lo, hi] if it fits `t` (int32 wraps, int64 overflows: either way the kernel's value
    /// would differ from the mathematical one).
    static Range fit(ScalarType t, Wide lo, Wide hi) {
        Wide min = t == ScalarType::Int32 ? Wide(std::numeric_limits<std::int32_t>::min())
                                          : Wide(std::numeric_limits<std::int64_t>::min());
        Wide max = t == ScalarType::Int32 ? Wide(std::numeric_limits<std::int32_t>::max())
                                          : Wide(std::numeric_limits<std::int64_t>::max());
        if (t == ScalarType::Bool) min = 0, max = 1;
        if (lo < min || hi > max) return std::nullopt;
        return Interval{std::int64_t(lo), std::int64_t(hi)};
    }

    static Range boolean(bool can_be_false, bool can_be_true) {
        return Interval{can_be_false ? 0 : 1, can_be_true ? 1 : 0};
    }

    Range cast(const CastNode* c) {
        if (!is_int(c->value.type()) && c->value.type() != ScalarType::Bool) return std::nullopt;
        Range v = eval(c->value);
        if (!v) return v;
        return fit(c->type, v->lo, v->hi);
    }

    Range unary(const UnaryNode* n) {
        Range a = eval(n->a);
        if (!a) return a;
        if (n->op == UnaryOp::Not) return boolean(a->hi != 0, a->lo == 0);
        return fit(n->type, -Wide(a->hi), -Wide(a->lo));
    }

    Range select(const SelectNode* s) {
        Range c = eval(s->cond);
        if (!c) return c;
        Range t = c->hi != 0 ? eval(s->if_true) : Range(Interval{});
        Range f = c->lo == 0 ? eval(s->if_false) : Range(Interval{});
        if (!t || !f) return std::nullopt;
        if (c->lo != 0) return t; // always true
        if (c->hi == 0) return f; // always false
        return Interval{std::min(t->lo, f->lo), std::max(t->hi, f->hi)};
    }

    Range call(const CallNode* n) {
        if (n->args.size() != 1) return std::nullopt;
        Range a = eval(n->args[0]);
        if (!a) return a;
        switch (n->fn) {
        case MathFn::Floor:
        case MathFn::Ceil: return a; // integers already
        case MathFn::Abs:
            if (a->lo >= 0) return a;
            if (a->hi <= 0) return fit(n->type, -Wide(a->hi), -Wide(a->lo));
            return fit(n->type, 0, std::max(-Wide(a->lo), Wide(a->hi)));
        default: return std::nullopt;
        }
    }

    Range binary(const BinaryNode* n) {
        Range a = eval(n->a);
        if (!a) return a;
        if (is_logical(n->op)) {
            // Short-circuit: the right side counts only where the left does not decide.
            bool can_decide = n->op == BinaryOp::And ? a->lo == 0 : a->hi != 0;
            bool can_defer = n->op == BinaryOp::And ? a->hi != 0 : a->lo == 0;
            Range b = can_defer ? eval(n->b) : Range(Interval{});
            if (!b) return b;
            bool can_be_true, can_be_false;
            if (n->op == BinaryOp::And) {
                can_be_true = can_defer && b->hi != 0;
                can_be_false = can_decide || b->lo == 0;
            } else {
                can_be_true = can_decide || b->hi != 0;
                can_be_false = can_defer && b->lo == 0;
            }
            return boolean(can_be_false, can_be_true);
        }
        Range b = eval(n->b);
        if (!b) return b;
        if (is_float(n->a.type())) return std::nullopt;
        const Wide al = a->lo, ah = a->hi, bl = b->lo, bh = b->hi;
        const bool one_value = al == ah && bl == bh, overlap = !(ah < bl || bh < al);
        switch (n->op) {
        case BinaryOp::Eq: return boolean(!(one_value && al == bl), overlap);
        case BinaryOp::Ne: return boolean(overlap, !(one_value && al == bl));
        case BinaryOp::Lt: return boolean(ah >= bl, al < bh);
        case BinaryOp::Le: return boolean(ah > bl, al <= bh);
        case BinaryOp::Gt: return boolean(al <= bh, ah > bl);
        case BinaryOp::Ge: return boolean(al < bh, ah >= bl);
        case BinaryOp::Add: return fit(n->type, al + bl, ah + bh);
        case BinaryOp::Sub: return fit(n->type, al - bh, ah - bl);
        case BinaryOp::Min: return fit(n->type, std::min(al, bl), std::min(ah, bh));
        case BinaryOp::Max: return fit(n->type, std::max(al, bl), std::max(ah, bh));
        case BinaryOp::Mul: {
            Wide c[] = {al * bl, al * bh, ah * bl, ah * bh};
            return fit(n->type, *std::min_element(c, c + 4), *std::max_element(c, c + 4));
        }
        case BinaryOp::Div: {
            // C truncates; for a divisor of one sign the quotient is monotone in each operand,
            // so the extremes lie at the corners.
            if (bl <= 0 && bh >= 0) return std::nullopt;
            Wide c[] = {al / bl, al / bh, ah / bl, ah / bh};
            return fit(n->type, *std::min_element(c, c + 4), *std::max_element(c, c + 4));
        }
        case BinaryOp::Mod: {
            // C's remainder has the dividend's sign and a magnitude below the divisor's.
            if (bl <= 0 && bh >= 0) return std::nullopt;
            const Wide m = std::max(bl < 0 ? -bl : bl, bh < 0 ? -bh : bh) - 1;
            return fit(n->type, al >= 0 ? 0 : std::max(al, -m), ah <= 0 ? 0 : std::min(ah, m));
        }
        default: return std::nullopt;
        }
    }
};

} // namespace

std::optional<Interval> evaluate_interval(const Expr& e, const Bindings& points,
                                          const IntervalBindings& ranges) {
    return IntervalEvaluator(points, ranges).eval(e);
}

} // namespace loom::ir
