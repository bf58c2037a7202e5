#include "frontend/resolve_types.hpp"

#include "compiler/ir/printer.hpp"
#include "compiler/ir/visitor.hpp"
#include "frontend/untyped.hpp"

#include <loom/errors.hpp>
#include <loom/expr.hpp>

#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>

namespace loom {
using namespace ir;

namespace {

/// The C++ spelling of param<T> for a fix-it hint.
std::string cpp_type(ScalarType t) { return t == ScalarType::Float32 ? "float" : "double"; }

/// A plain number, or a select between such values: analyze_kernel types these by their target
/// and checks that the numbers fit it, so they are left to it.
bool typed_by_analysis(const Expr& e) {
    if (is_weak_constant(e)) return true;
    auto s = e.as<SelectNode>();
    return s && typed_by_analysis(s->if_true) && typed_by_analysis(s->if_false);
}

bool holds_weak_variable(const Expr& e) {
    for (const Expr& x : subexpressions(e))
        if (is_weak_variable(x)) return true;
    return false;
}

/// The type a store into `lhs` gives a plain number; nothing for an untyped temporary.
std::optional<ScalarType> target_type(const Expr& lhs) {
    if (is_weak_variable(lhs)) return std::nullopt;
    // A 16-bit float field stores in 16 bits what the kernel computes in its compute type.
    if (auto fa = lhs.as<FieldAccessNode>()) return fa->field->compute_type();
    return lhs.type();
}

/// The frontend operator or function for a node of an untyped value, so that a value rebuilt
/// from typed leaves is typed exactly as if it had been written with them.
Expr arithmetic(BinaryOp op, const Expr& a, const Expr& b) {
    switch (op) {
    case BinaryOp::Add: return a + b;
    case BinaryOp::Sub: return a - b;
    case BinaryOp::Mul: return a * b;
    case BinaryOp::Div: return a / b;
    case BinaryOp::Mod: return a % b;
    case BinaryOp::Min: return min(a, b);
    case BinaryOp::Max: return max(a, b);
    case BinaryOp::Eq: return a == b;
    case BinaryOp::Ne: return a != b;
    case BinaryOp::Lt: return a < b;
    case BinaryOp::Le: return a <= b;
    case BinaryOp::Gt: return a > b;
    case BinaryOp::Ge: return a >= b;
    case BinaryOp::And: return a && b;
    case BinaryOp::Or: return a || b;
    }
    throw InternalError("resolve_types: unknown binary operator");
}

Expr call(MathFn fn, const std::vector<Expr>& a) {
    switch (fn) {
    case MathFn::Sqrt: return sqrt(a[0]);
    case MathFn::Rsqrt: return rsqrt(a[0]);
    case MathFn::Exp: return exp(a[0]);
    case MathFn::Log: return log(a[0]);
    case MathFn::Pow: return pow(a[0], a[1]);
    case MathFn::Sin: return sin(a[0]);
    case MathFn::Cos: return cos(a[0]);
    case MathFn::Tan: return tan(a[0]);
    case MathFn::Tanh: return tanh(a[0]);
    case MathFn::Erf: return erf(a[0]);
    case MathFn::Abs: return abs(a[0]);
    case MathFn::Floor: return floor(a[0]);
    case MathFn::Ceil: return ceil(a[0]);
    case MathFn::Fma: return fma(a[0], a[1], a[2]);
    }
    throw InternalError("resolve_types: unknown math function");
}

class Resolver : public IRMutator {
public:
    Resolver(const std::vector<std::pair<Expr, Expr>>& in, const KernelConfig& cfg) : in_(in), cfg_(cfg) {}

    std::vector<std::pair<Expr, Expr>> run() {
        check_default_type();
        check_slice_bounds();
        for (auto& [lhs, rhs] : in_) rhs_.push_back(rhs);
        // A typed target types an untyped right side, as it types a plain number.
        for (std::size_t i = 0; i < in_.size(); ++i) {
            auto t = target_type(in_[i].first);
            if (t && is_float(*t) && is_untyped(rhs_[i]) && !typed_by_analysis(rhs_[i]))
                rhs_[i] = adopt(rhs_[i], *t);
        }
        for (std::size_t i = 0; i < in_.size(); ++i) collect_uses(rhs_[i], i);
        decide_temporaries();
        decide_parameters();
        return rebuild();
    }

protected:
    Expr visit_Var(const VarNode* v, const Expr& self) override {
        return v->weak ? typed(self) : self;
    }

    /// Cast(float type, weak variable) is a use that adopted a type; other casts of untyped
    /// values convert the value once it is typed.
    Expr visit_Cast(const CastNode* n, const Expr& self) override {
        if (is_weak_variable(n->value) && is_float(n->type)) {
            Expr v = typed(n->value);
            return v.type() == n->type ? v : CastNode::make(n->type, v);
        }
        if (is_untyped(n->value)) return cast(n->type, defaulted(retype_free(n->value)));
        return IRMutator::visit_Cast(n, self);
    }

    /// Both sides of a comparison between untyped values type each other, and default_type the
    /// plain numbers left.
    Expr visit_Binary(const BinaryNode* n, const Expr& self) override {
        if (!is_comparison(n->op) || !is_untyped(n->a) || !is_untyped(n->b))
            return IRMutator::visit_Binary(n, self);
        Expr a = retype_free(n->a), b = retype_free(n->b);
        if (is_untyped(a) && is_untyped(b)) a = defaulted(a), b = defaulted(b);
        return arithmetic(n->op, a, b);
    }

    /// A layer's array is defined by its input values, which may hold untyped values too.
    Expr visit_BufferLoad(const BufferLoadNode* n, const Expr& self) override {
        Expr e = IRMutator::visit_BufferLoad(n, self);
        auto l = e.as<BufferLoadNode>();
        BufferPtr a = resolved(l->buffer);
        return a == l->buffer ? e : BufferLoadNode::make(a, l->indices);
    }

private:
    struct Use {
        ScalarType type;
        std::size_t stmt;
    };

    [[noreturn]] void fail(const std::string& what) const {
        throw UserError(fmt::format("kernel '{}' {}", cfg_.name, what));
    }

    /// `a`, or once its inputs changed, a new array with the new inputs, made once and read by
    /// all the loads of `a`.
    BufferPtr resolved(const BufferPtr& a) {
        if (!a->definition) return a;
        auto [it, fresh] = arrays_.try_emplace(a.get(), a);
        if (!fresh) return it->second;
        const ArrayDefinition& d = *a->definition;
        std::vector<Expr> inputs;
        bool changed = false;
        for (const Expr& x : d.inputs) {
            inputs.push_back(mutate(x));
            changed |= !inputs.back().same_as(x);
        }
        if (changed) it->second = make_layer_array(a->name, std::move(inputs), d.layer);
        return it->second;
    }

    std::string text(std::size_t stmt) const {
        return to_string(in_[stmt].first) + " = " + to_string(in_[stmt].second);
    }

    void check_default_type() const {
        if (cfg_.default_type != ScalarType::Float32 && cfg_.default_type != ScalarType::Float64)
            fail(fmt::format("has default_type {}; default_type is the type of floating-point "
                             "values nothing else types (plain numbers, untyped param(\"name\")), "
                             "so it must be float32 or float64",
                             type_name(cfg_.default_type)));
    }

    void check_slice_bounds() const {
        if (!cfg_.iteration_slice) return;
        const Slice& s = *cfg_.iteration_slice;
        for (std::size_t d = 0; d < s.dims.size(); ++d)
            for (const Bound* b : {&s.dims[d].start, &s.dims[d].stop}) {
                if (b->kind() != Bound::Kind::Expression) continue;
                for (const Expr& e : subexpressions(b->expr()))
                    if (auto v = e.as<VarNode>(); v && v->weak && v->role == VarRole::Parameter)
                        fail(fmt::format("uses the untyped parameter '{}' in a bound of axis {} of "
                                         "the iteration slice {}; bounds are integers and an "
                                         "untyped parameter is floating-point, so declare it "
                                         "with param<std::int64_t>(\"{}\")",
                                         v->name, d, s.describe(), v->name));
            }
    }

    /// Records every Cast(float type, weak variable) under `root`, layers' inputs included, and
    /// the order in which weak variables first appear.
    void collect_uses(const Expr& root, std::size_t stmt) { collect_uses(subexpressions(root), stmt); }

    void collect_uses(const std::vector<Expr>& nodes, std::size_t stmt) {
        for (const Expr& e : nodes) {
            if (auto c = e.as<CastNode>(); c && is_weak_variable(c->value) && is_float(c->type))
                uses_[c->value.get()].push_back({c->type, stmt});
            if (is_weak_variable(e) && seen_.insert(e.get()).second) order_.push_back(e);
            if (auto l = e.as<BufferLoadNode>(); l && l->buffer->definition &&
                                                walked_arrays_.insert(l->buffer.get()).second)
                for (const Expr& x : l->buffer->definition->inputs) collect_uses(x, stmt);
        }
    }

    /// The distinct types of the uses of `v`, each with its first use.
    std::map<ScalarType, std::size_t> use_types(const Expr& v) const {
        std::map<ScalarType, std::size_t> types;
        auto it = uses_.find(v.get());
        if (it != uses_.end())
            for (const Use& u : it->second) types.try_emplace(u.type, u.stmt);
        return types;
    }

    /// Untyped temporaries, last defined first (a value reads only earlier ones): when all typed
    /// uses agree, the temporary has that type and its value is stored into it, which in turn is
    /// a use of the untyped variables in the value.
    void decide_temporaries() {
        std::set<const ExprNode*> done;
        for (std::size_t i = in_.size(); i-- > 0;) {
            const Expr& x = in_[i].first;
            if (!is_weak_variable(x) || !done.insert(x.get()).second) continue;
            auto types = use_types(x);
            if (types.size() != 1) continue; // the value's type, decided while rebuilding
            ScalarType t = types.begin()->first;
            decided_[x.get()] = t;
            if (is_untyped(rhs_[i]) && !is_weak_constant(rhs_[i])) {
                rhs_[i] = adopt(rhs_[i], t);
                collect_uses(rhs_[i], i);
            }
        }
    }

    /// Untyped parameters: the one type of their uses, else default_type.
    void decide_parameters() {
        for (const Expr& p : order_) {
            auto v = p.as<VarNode>();
            if (v->role != VarRole::Parameter) continue;
            auto types = use_types(p);
            if (types.size() > 1) {
                auto a = types.begin(), b = std::next(a);
                fail(fmt::format(
                    "uses the untyped parameter '{}' as {} in assignment {} (`{}`) and as {} in "
                    "assignment {} (`{}`); a parameter has one type. Give it one with "
                    "param<{}>(\"{}\") or param<{}>(\"{}\"), or convert one use with cast<T>(...)",
                    v->name, type_name(a->first), a->second + 1, text(a->second),
                    type_name(b->first), b->second + 1, text(b->second), cpp_type(a->first),
                    v->name, cpp_type(b->first), v->name));
            }
            ScalarType t = types.empty() ? cfg_.default_type : types.begin()->first;
            typed_[p.get()] = VarNode::make(t, v->name, VarRole::Parameter);
        }
    }

    /// The typed variable standing for the weak variable `v`. A temporary read before its
    /// definition gets its nominal type here; analyze_kernel then reports the order.
    Expr typed(const Expr& v) {
        auto it = typed_.find(v.get());
        if (it != typed_.end()) return it->second;
        auto n = v.as<VarNode>();
        auto d = decided_.find(v.get());
        Expr t = VarNode::make(d != decided_.end() ? d->second : n->type, n->name, n->role);
        typed_.emplace(v.get(), t);
        return t;
    }

    /// An untyped value in a place that does not type it, rebuilt from its typed variables with
    /// the frontend's operators: typed like their types say, or still untyped if it holds only
    /// plain numbers.
    Expr retype_free(const Expr& e) {
        if (!is_untyped(e) || !holds_weak_variable(e)) return mutate(e); // nothing to rebuild
        switch (e.kind()) {
        case ExprKind::Const: return e;
        case ExprKind::Var: return typed(e);
        case ExprKind::Unary: return -retype_free(e.as<UnaryNode>()->a);
        case ExprKind::Binary: {
            auto b = e.as<BinaryNode>();
            return arithmetic(b->op, retype_free(b->a), retype_free(b->b));
        }
        case ExprKind::Call: {
            std::vector<Expr> args;
            for (auto& a : e.as<CallNode>()->args) args.push_back(retype_free(a));
            return call(e.as<CallNode>()->fn, args);
        }
        case ExprKind::Select: {
            auto s = e.as<SelectNode>();
            return select(mutate(s->cond), retype_free(s->if_true), retype_free(s->if_false));
        }
        default: return mutate(e);
        }
    }

    /// Plain floating-point numbers nothing typed take default_type; plain integers stay.
    Expr defaulted(const Expr& e) const {
        return is_untyped(e) && is_float(e.type()) ? adopt(e, cfg_.default_type) : e;
    }

    std::vector<std::pair<Expr, Expr>> rebuild() {
        std::vector<std::pair<Expr, Expr>> out;
        for (std::size_t i = 0; i < in_.size(); ++i) {
            const Expr& lhs = in_[i].first;
            Expr rhs = is_untyped(rhs_[i]) ? retype_free(rhs_[i]) : mutate(rhs_[i]);
            if (is_weak_variable(lhs) && !typed_.count(lhs.get()) && !decided_.count(lhs.get())) {
                // An undecided temporary has its value's type; plain numbers default_type.
                ScalarType t = is_untyped(rhs) ? cfg_.default_type : rhs.type();
                if (is_untyped(rhs) && !is_weak_constant(rhs)) rhs = adopt(rhs, t);
                decided_[lhs.get()] = t;
            }
            out.emplace_back(is_weak_variable(lhs) ? typed(lhs) : lhs, rhs);
        }
        return out;
    }

    const std::vector<std::pair<Expr, Expr>>& in_;
    const KernelConfig& cfg_;
    std::vector<Expr> rhs_;                                  ///< right sides as they are retyped
    std::map<const ExprNode*, std::vector<Use>> uses_;       ///< weak variable -> typed uses
    std::vector<Expr> order_;                                ///< weak variables, first use first
    std::set<const ExprNode*> seen_;
    std::set<const BufferInfo*> walked_arrays_;
    std::map<const ExprNode*, ScalarType> decided_;          ///< temporaries typed by their uses
    std::map<const ExprNode*, Expr> typed_;                  ///< weak variable -> typed variable
    std::map<const BufferInfo*, BufferPtr> arrays_;            ///< layer arrays, as resolved
};

} // namespace

std::vector<std::pair<Expr, Expr>> resolve_types(const std::vector<std::pair<Expr, Expr>>& assignments,
                                                 const KernelConfig& config) {
    return Resolver(assignments, config).run();
}

} // namespace loom
