#include "compiler/ir/visitor.hpp"

#include <loom/errors.hpp>

namespace loom::ir {

void IRVisitor::visit(const Expr& e) {
    switch (e.kind()) {
#define LOOM_X(N)                                                                                  \
    case ExprKind::N: return visit_##N(static_cast<const N##Node*>(e.get()));
        LOOM_FOR_EACH_EXPR_NODE(LOOM_X)
#undef LOOM_X
    }
}

void IRVisitor::visit(const Stmt& s) {
    switch (s.kind()) {
#define LOOM_X(N)                                                                                  \
    case StmtKind::N: return visit_##N(static_cast<const N##Node*>(s.get()));
        LOOM_FOR_EACH_STMT_NODE(LOOM_X)
#undef LOOM_X
    }
}

void IRVisitor::visit_Const(const ConstNode*) {}
void IRVisitor::visit_Var(const VarNode*) {}
void IRVisitor::visit_Counter(const CounterNode*) {}
void IRVisitor::visit_FieldAccess(const FieldAccessNode* n) {
    for (auto& i : n->indices) visit(i);
    for (auto& i : n->component_indices) visit(i);
}
void IRVisitor::visit_ThreadIndex(const ThreadIndexNode*) {}
void IRVisitor::visit_BlockThread(const BlockThreadNode*) {}
void IRVisitor::visit_BufferLoad(const BufferLoadNode* n) {
    for (auto& i : n->indices) visit(i);
}
void IRVisitor::visit_Unary(const UnaryNode* n) { visit(n->a); }
void IRVisitor::visit_Binary(const BinaryNode* n) {
    visit(n->a);
    visit(n->b);
}
void IRVisitor::visit_Select(const SelectNode* n) {
    visit(n->cond);
    visit(n->if_true);
    visit(n->if_false);
}
void IRVisitor::visit_Call(const CallNode* n) {
    for (auto& a : n->args) visit(a);
}
void IRVisitor::visit_Cast(const CastNode* n) { visit(n->value); }
void IRVisitor::visit_WarpReduce(const WarpReduceNode* n) { visit(n->value); }
void IRVisitor::visit_Reduce(const ReduceNode* n) {
    visit(n->var);
    visit(n->start);
    visit(n->stop);
    visit(n->body);
}
void IRVisitor::visit_Assign(const AssignNode* n) {
    visit(n->lhs);
    visit(n->rhs);
}
void IRVisitor::visit_Declare(const DeclareNode* n) {
    visit(n->var);
    visit(n->value);
}
void IRVisitor::visit_BufferStore(const BufferStoreNode* n) {
    for (auto& i : n->indices) visit(i);
    visit(n->value);
}
void IRVisitor::visit_Allocate(const AllocateNode* n) { visit(n->body); }
void IRVisitor::visit_Barrier(const BarrierNode*) {}
void IRVisitor::visit_Block(const BlockNode* n) {
    for (auto& s : n->stmts) visit(s);
}
void IRVisitor::visit_For(const ForNode* n) {
    visit(n->var);
    visit(n->start);
    visit(n->stop);
    visit(n->step);
    visit(n->body);
}
void IRVisitor::visit_IfThen(const IfThenNode* n) {
    visit(n->cond);
    visit(n->then_case);
}
void IRVisitor::visit_Comment(const CommentNode*) {}
void IRVisitor::visit_Stage(const StageNode* n) { visit(n->body); }
void IRVisitor::visit_LastBlock(const LastBlockNode* n) {
    visit(n->blocks);
    visit(n->body);
}
void IRVisitor::visit_VectorLoad(const VectorLoadNode* n) { visit(n->first); }
void IRVisitor::visit_BasePointer(const BasePointerNode* n) {
    for (auto& e : n->at) visit(e);
}
void IRVisitor::visit_VectorStore(const VectorStoreNode* n) { visit(n->first); }
void IRVisitor::visit_MmaChain(const MmaChainNode* n) {
    if (n->stream)
        for (const Expr& e : n->stream->exprs())
            if (e.defined()) visit(e);
    for (const DenseLayer& l : n->layers) {
        if (l.activation.identity()) continue;
        visit(l.activation.input);
        visit(l.activation.value);
    }
}
void IRVisitor::visit_Dense(const DenseNode* n) {
    if (n->layer.activation.identity()) return;
    visit(n->layer.activation.input);
    visit(n->layer.activation.value);
}

// ---- mutator ----

Expr IRMutator::mutate(const Expr& e) {
    if (!e.defined()) return e;
    switch (e.kind()) {
#define LOOM_X(N)                                                                                  \
    case ExprKind::N: return visit_##N(static_cast<const N##Node*>(e.get()), e);
        LOOM_FOR_EACH_EXPR_NODE(LOOM_X)
#undef LOOM_X
    }
    throw InternalError("IRMutator: unknown expression kind");
}

Stmt IRMutator::mutate(const Stmt& s) {
    if (!s.defined()) return s;
    switch (s.kind()) {
#define LOOM_X(N)                                                                                  \
    case StmtKind::N: return visit_##N(static_cast<const N##Node*>(s.get()), s);
        LOOM_FOR_EACH_STMT_NODE(LOOM_X)
#undef LOOM_X
    }
    throw InternalError("IRMutator: unknown statement kind");
}

std::vector<Expr> IRMutator::mutate_each(const std::vector<Expr>& exprs, bool& changed) {
    std::vector<Expr> out;
    out.reserve(exprs.size());
    for (const Expr& e : exprs) {
        out.push_back(mutate(e));
        changed |= !out.back().same_as(e);
    }
    return out;
}

Expr IRMutator::visit_Const(const ConstNode*, const Expr& self) { return self; }
Expr IRMutator::visit_Var(const VarNode*, const Expr& self) { return self; }
Expr IRMutator::visit_Counter(const CounterNode*, const Expr& self) { return self; }
Expr IRMutator::visit_FieldAccess(const FieldAccessNode* n, const Expr& self) {
    if (!n->absolute() && !n->indexed_components()) return self;
    bool changed = false;
    std::vector<Expr> indices = mutate_each(n->indices, changed);
    std::vector<Expr> vars = mutate_each(n->component_indices, changed);
    if (!changed) return self;
    Expr e = n->absolute() ? FieldAccessNode::make_absolute(n->field, std::move(indices), n->components)
                           : FieldAccessNode::make(n->field, n->offsets, n->components);
    return vars.empty() ? e : FieldAccessNode::make_indexed(e.as<FieldAccessNode>(), std::move(vars));
}
Expr IRMutator::visit_ThreadIndex(const ThreadIndexNode*, const Expr& self) { return self; }
Expr IRMutator::visit_BlockThread(const BlockThreadNode*, const Expr& self) { return self; }
Expr IRMutator::visit_BufferLoad(const BufferLoadNode* n, const Expr& self) {
    bool changed = false;
    std::vector<Expr> indices = mutate_each(n->indices, changed);
    return changed ? BufferLoadNode::make(n->buffer, std::move(indices)) : self;
}

Expr IRMutator::visit_Unary(const UnaryNode* n, const Expr& self) {
    Expr a = mutate(n->a);
    return a.same_as(n->a) ? self : UnaryNode::make(n->op, a);
}
Expr IRMutator::visit_Binary(const BinaryNode* n, const Expr& self) {
    Expr a = mutate(n->a), b = mutate(n->b);
    return a.same_as(n->a) && b.same_as(n->b) ? self : BinaryNode::make(n->op, a, b);
}
Expr IRMutator::visit_Select(const SelectNode* n, const Expr& self) {
    Expr c = mutate(n->cond), t = mutate(n->if_true), f = mutate(n->if_false);
    if (c.same_as(n->cond) && t.same_as(n->if_true) && f.same_as(n->if_false)) return self;
    return SelectNode::make(c, t, f);
}
Expr IRMutator::visit_Call(const CallNode* n, const Expr& self) {
    bool changed = false;
    std::vector<Expr> args = mutate_each(n->args, changed);
    return changed ? CallNode::make(n->fn, std::move(args)) : self;
}
Expr IRMutator::visit_WarpReduce(const WarpReduceNode* n, const Expr& self) {
    Expr v = mutate(n->value);
    return v.same_as(n->value) ? self : WarpReduceNode::make(n->op, v);
}
Expr IRMutator::visit_Cast(const CastNode* n, const Expr& self) {
    Expr v = mutate(n->value);
    return v.same_as(n->value) ? self : CastNode::make(n->type, v);
}
Expr IRMutator::visit_Reduce(const ReduceNode* n, const Expr& self) {
    Expr v = mutate(n->var), a = mutate(n->start), s = mutate(n->stop), b = mutate(n->body);
    if (v.same_as(n->var) && a.same_as(n->start) && s.same_as(n->stop) && b.same_as(n->body))
        return self;
    return ReduceNode::make(n->op, v, a, s, b);
}

Stmt IRMutator::visit_Assign(const AssignNode* n, const Stmt& self) {
    Expr l = mutate(n->lhs), r = mutate(n->rhs);
    return l.same_as(n->lhs) && r.same_as(n->rhs) ? self : AssignNode::make(l, r);
}
Stmt IRMutator::visit_Declare(const DeclareNode* n, const Stmt& self) {
    Expr v = mutate(n->var), x = mutate(n->value);
    return v.same_as(n->var) && x.same_as(n->value) ? self : DeclareNode::make(v, x);
}
Stmt IRMutator::visit_BufferStore(const BufferStoreNode* n, const Stmt& self) {
    bool changed = false;
    std::vector<Expr> indices = mutate_each(n->indices, changed);
    Expr v = mutate(n->value);
    return !changed && v.same_as(n->value) ? self : BufferStoreNode::make(n->buffer, std::move(indices), v);
}
Stmt IRMutator::visit_Allocate(const AllocateNode* n, const Stmt& self) {
    Stmt b = mutate(n->body);
    return b.same_as(n->body) ? self : AllocateNode::make(n->buffer, b);
}
Stmt IRMutator::visit_Barrier(const BarrierNode*, const Stmt& self) { return self; }
Stmt IRMutator::visit_VectorLoad(const VectorLoadNode* n, const Stmt& self) {
    Expr f = mutate(n->first);
    return f.same_as(n->first) ? self : VectorLoadNode::make(n->lanes, f, n->offset, n->width);
}
Stmt IRMutator::visit_VectorStore(const VectorStoreNode* n, const Stmt& self) {
    Expr f = mutate(n->first);
    return f.same_as(n->first) ? self : VectorStoreNode::make(f, n->lanes);
}
Stmt IRMutator::visit_BasePointer(const BasePointerNode* n, const Stmt& self) {
    bool changed = false;
    std::vector<Expr> at;
    for (auto& e : n->at) {
        at.push_back(mutate(e));
        changed = changed || !at.back().same_as(e);
    }
    return changed ? BasePointerNode::make(n->buffer, n->view, std::move(at), n->writes) : self;
}
Stmt IRMutator::visit_LastBlock(const LastBlockNode* n, const Stmt& self) {
    Expr blocks = mutate(n->blocks);
    Stmt b = mutate(n->body);
    return blocks.same_as(n->blocks) && b.same_as(n->body) ? self : LastBlockNode::make(blocks, n->ticket, b);
}

Stmt IRMutator::visit_Stage(const StageNode* n, const Stmt& self) {
    Stmt b = mutate(n->body);
    return b.same_as(n->body) ? self : StageNode::make(n->index, b);
}
Stmt IRMutator::visit_Block(const BlockNode* n, const Stmt& self) {
    std::vector<Stmt> stmts;
    bool changed = false;
    for (auto& s : n->stmts) {
        stmts.push_back(mutate(s));
        changed |= !stmts.back().same_as(s);
    }
    return changed ? BlockNode::make(std::move(stmts)) : self;
}
Stmt IRMutator::visit_For(const ForNode* n, const Stmt& self) {
    Expr v = mutate(n->var), a = mutate(n->start), o = mutate(n->stop), s = mutate(n->step);
    Stmt b = mutate(n->body);
    if (v.same_as(n->var) && a.same_as(n->start) && o.same_as(n->stop) && s.same_as(n->step) &&
        b.same_as(n->body))
        return self;
    return ForNode::make(v, a, o, s, b, n->axis, n->kind, n->dim);
}
Stmt IRMutator::visit_IfThen(const IfThenNode* n, const Stmt& self) {
    Expr c = mutate(n->cond);
    Stmt t = mutate(n->then_case);
    return c.same_as(n->cond) && t.same_as(n->then_case) ? self : IfThenNode::make(c, t);
}
Stmt IRMutator::visit_Comment(const CommentNode*, const Stmt& self) { return self; }
Stmt IRMutator::visit_MmaChain(const MmaChainNode* n, const Stmt& self) {
    std::vector<DenseLayer> layers = n->layers;
    bool changed = false;
    for (DenseLayer& l : layers) {
        if (l.activation.identity()) continue;
        Expr input = mutate(l.activation.input), value = mutate(l.activation.value);
        changed = changed || !input.same_as(l.activation.input) || !value.same_as(l.activation.value);
        l.activation.input = input;
        l.activation.value = value;
    }
    std::shared_ptr<const ChainStream> stream = n->stream;
    if (stream) {
        bool moved = false;
        std::vector<Expr> e = mutate_each(stream->exprs(), moved);
        if (moved) stream = std::make_shared<const ChainStream>(ChainStream{e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7]});
        changed = changed || moved;
    }
    return changed ? MmaChainNode::make(n->output, n->input, std::move(layers), n->operand, n->weights,
                                        n->biases, n->tile, std::move(stream))
                   : self;
}
Stmt IRMutator::visit_Dense(const DenseNode* n, const Stmt& self) {
    const LayerActivation& a = n->layer.activation;
    Expr input = mutate(a.input), value = mutate(a.value);
    if (input.same_as(a.input) && value.same_as(a.value)) return self;
    DenseLayer layer = n->layer;
    layer.activation.input = input;
    layer.activation.value = value;
    return DenseNode::make(n->output, n->input, std::move(layer));
}

// ---- helpers ----

std::vector<Expr> children(const Expr& e) {
    switch (e.kind()) {
    case ExprKind::BufferLoad: return e.as<BufferLoadNode>()->indices;
    case ExprKind::FieldAccess: {
        auto n = e.as<FieldAccessNode>();
        std::vector<Expr> out = n->indices;
        out.insert(out.end(), n->component_indices.begin(), n->component_indices.end());
        return out;
    }
    case ExprKind::Reduce: {
        auto n = e.as<ReduceNode>();
        return {n->var, n->start, n->stop, n->body};
    }
    case ExprKind::Unary: return {e.as<UnaryNode>()->a};
    case ExprKind::Binary: return {e.as<BinaryNode>()->a, e.as<BinaryNode>()->b};
    case ExprKind::Select: {
        auto n = e.as<SelectNode>();
        return {n->cond, n->if_true, n->if_false};
    }
    case ExprKind::Call: return e.as<CallNode>()->args;
    case ExprKind::Cast: return {e.as<CastNode>()->value};
    case ExprKind::WarpReduce: return {e.as<WarpReduceNode>()->value};
    default: return {};
    }
}

namespace {
void collect(const Expr& e, std::vector<Expr>& out) {
    out.push_back(e);
    for (const Expr& c : children(e)) collect(c, out);
}

class StmtExprCollector : public IRMutator {
public:
    std::vector<Expr> out;
    Expr visit_root(const Expr& e) {
        collect(e, out);
        return e;
    }

protected:
    // Collect top-level expressions of each statement; `collect` walks below them.
#define LOOM_X(N)                                                                                  \
    Expr visit_##N(const ir::N##Node*, const Expr& self) override { return visit_root(self); }
    LOOM_FOR_EACH_EXPR_NODE(LOOM_X)
#undef LOOM_X
};
} // namespace

std::vector<Expr> subexpressions(const Expr& root) {
    std::vector<Expr> out;
    collect(root, out);
    return out;
}

std::set<const FieldInfo*> written_fields(const Stmt& root) {
    struct Written : IRVisitor {
        std::set<const FieldInfo*> fields;
        void visit_BufferStore(const BufferStoreNode* s) override {
            if (const FieldInfo* f = s->buffer->field_of()) fields.insert(f);
            IRVisitor::visit_BufferStore(s);
        }
        void visit_VectorStore(const VectorStoreNode* s) override {
            if (auto l = s->first.as<BufferLoadNode>(); l && l->buffer->field_of()) fields.insert(l->buffer->field_of());
            IRVisitor::visit_VectorStore(s);
        }
        // A chain whose outputs stream stores them to the field itself.
        void visit_MmaChain(const MmaChainNode* n) override {
            if (n->stream && n->stream->outputs())
                if (auto l = n->stream->out_first.as<BufferLoadNode>(); l && l->buffer->field_of())
                    fields.insert(l->buffer->field_of());
            IRVisitor::visit_MmaChain(n);
        }
    } written;
    written.visit(root);
    return std::move(written.fields);
}

namespace {
struct ReplaceVar : IRMutator {
    const ExprNode* from;
    Expr to;
    ReplaceVar(const Expr& f, const Expr& t) : from(f.get()), to(t) {}
    Expr visit_Var(const VarNode* v, const Expr& self) override { return v == from ? to : self; }
};
} // namespace

Stmt replace_var(const Stmt& root, const Expr& from, const Expr& to) { return ReplaceVar(from, to).mutate(root); }
Expr replace_var(const Expr& root, const Expr& from, const Expr& to) { return ReplaceVar(from, to).mutate(root); }

void splice_mutated(const BlockNode* block, IRMutator& m, std::vector<Stmt>& out, bool& changed) {
    for (const Stmt& s : block->stmts) {
        if (auto inner = s.as<BlockNode>()) {
            splice_mutated(inner, m, out, changed);
            continue;
        }
        Stmt mutated = m.mutate(s);
        changed = changed || !mutated.same_as(s);
        out.push_back(mutated);
    }
}

std::set<const ExprNode*> declared_variables(const Stmt& root) {
    struct Declared : IRVisitor {
        std::set<const ExprNode*> vars;
        void visit_Declare(const DeclareNode* d) override {
            vars.insert(d->var.get());
            IRVisitor::visit_Declare(d);
        }
        void visit_For(const ForNode* f) override {
            vars.insert(f->var.get());
            IRVisitor::visit_For(f);
        }
    } d;
    d.visit(root);
    return std::move(d.vars);
}

bool stores_to_a_field(const Stmt& s) {
    struct Find : IRVisitor {
        bool found = false;
        void visit_BufferStore(const BufferStoreNode* n) override { found |= n->buffer->scope == Scope::Global; }
        void visit_MmaChain(const MmaChainNode* n) override { found |= n->stream && n->stream->outputs(); }
    } f;
    f.visit(s);
    return f.found;
}

std::vector<Expr> subexpressions(const Stmt& root) {
    StmtExprCollector c;
    c.mutate(root);
    return std::move(c.out);
}

} // namespace loom::ir
