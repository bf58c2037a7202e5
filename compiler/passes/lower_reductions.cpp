#include "compiler/passes/lower_reductions.hpp"

#include "compiler/ir/visitor.hpp"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace loom::ir {

Expr reduction_identity(ReduceOp op, ScalarType t) {
    if (op == ReduceOp::Sum)
        return is_float(t) ? ConstNode::make(t, 0.0) : ConstNode::make_int(t, 0);
    const bool max = op == ReduceOp::Max;
    if (is_float(t)) return ConstNode::make(t, max ? -INFINITY : INFINITY);
    const bool wide = t == ScalarType::Int64;
    const std::int64_t lo = wide ? std::numeric_limits<std::int64_t>::min() : INT32_MIN;
    const std::int64_t hi = wide ? std::numeric_limits<std::int64_t>::max() : INT32_MAX;
    return ConstNode::make_int(t, max ? lo : hi);
}

BinaryOp reduction_combine(ReduceOp op) {
    switch (op) {
    case ReduceOp::Sum: return BinaryOp::Add;
    case ReduceOp::Max: return BinaryOp::Max;
    case ReduceOp::Min: return BinaryOp::Min;
    }
    return BinaryOp::Add;
}

namespace {

class Lowering;

/// Replaces each outermost Reduce of an expression by its accumulator; the statements that
/// compute the accumulators go to `pre`, in order.
class Hoist : public IRMutator {
public:
    Hoist(Lowering& owner, std::vector<Stmt>& pre) : owner_(owner), pre_(pre) {}

protected:
    Expr visit_Reduce(const ReduceNode* n, const Expr& self) override;

private:
    Lowering& owner_;
    std::vector<Stmt>& pre_;
};

class Lowering : public IRMutator {
public:
    /// The statements that compute reduction `n` into a new accumulator, appended to `pre`.
    Expr reduce(const ReduceNode* n, std::vector<Stmt>& pre) {
        const std::string name = std::string(reduce_op_name(n->op)) + "_" +
                                 n->var.as<VarNode>()->name;
        Expr acc = VarNode::make(n->type, name, VarRole::Accumulator);
        pre.push_back(DeclareNode::make(acc, reduction_identity(n->op, n->type)));
        Stmt update = AssignNode::make(acc, BinaryNode::make(reduction_combine(n->op), acc, n->body));
        // The body may hold reductions of its own: they run inside this loop.
        Stmt body = mutate(update);
        pre.push_back(ForNode::make(n->var, n->start, n->stop,
                                    ConstNode::make_int(n->var.type(), 1), body, -1));
        return acc;
    }

protected:
    // Statements whose expressions may hold reductions: the accumulators are computed first.
    Stmt visit_Declare(const DeclareNode* n, const Stmt& self) override {
        return with_hoisted(self, [&](Hoist& h) {
            Expr v = h.mutate(n->value);
            return v.same_as(n->value) ? self : DeclareNode::make(n->var, v);
        });
    }
    Stmt visit_Assign(const AssignNode* n, const Stmt& self) override {
        return with_hoisted(self, [&](Hoist& h) {
            Expr v = h.mutate(n->rhs);
            return v.same_as(n->rhs) ? self : AssignNode::make(n->lhs, v);
        });
    }
    Stmt visit_BufferStore(const BufferStoreNode* n, const Stmt& self) override {
        return with_hoisted(self, [&](Hoist& h) {
            bool changed = false;
            std::vector<Expr> indices = h.mutate_each(n->indices, changed);
            Expr v = h.mutate(n->value);
            return !changed && v.same_as(n->value) ? self : BufferStoreNode::make(n->buffer, std::move(indices), v);
        });
    }
    Stmt visit_IfThen(const IfThenNode* n, const Stmt& self) override {
        Stmt then_case = mutate(n->then_case);
        return with_hoisted(self, [&](Hoist& h) {
            Expr c = h.mutate(n->cond);
            return c.same_as(n->cond) && then_case.same_as(n->then_case)
                       ? self
                       : IfThenNode::make(c, then_case);
        });
    }

private:
    template <typename Rebuild>
    Stmt with_hoisted(const Stmt& self, Rebuild rebuild) {
        std::vector<Stmt> pre;
        Hoist h(*this, pre);
        Stmt s = rebuild(h);
        if (pre.empty()) return s;
        pre.push_back(s);
        return BlockNode::make(std::move(pre));
    }
};

Expr Hoist::visit_Reduce(const ReduceNode* n, const Expr&) { return owner_.reduce(n, pre_); }

} // namespace

bool contains_reductions(const Stmt& body) {
    struct Find : IRVisitor {
        bool found = false;
        void visit_Reduce(const ReduceNode*) override { found = true; }
    } f;
    f.visit(body);
    return f.found;
}

Stmt lower_reductions(const Stmt& body) {
    if (!contains_reductions(body)) return body;
    return Lowering().mutate(body);
}

} // namespace loom::ir
