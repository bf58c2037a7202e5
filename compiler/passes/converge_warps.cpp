#include "compiler/passes/converge_warps.hpp"

#include "compiler/ir/visitor.hpp"
#include "compiler/passes/simplify.hpp"

namespace loom::ir {

namespace {

bool contains_mma_chain(const Stmt& s) {
    struct Find : IRVisitor {
        bool found = false;
        void visit_MmaChain(const MmaChainNode*) override { found = true; }
    } f;
    f.visit(s);
    return f.found;
}

bool stores_to_a_field(const Stmt& s) {
    struct Find : IRVisitor {
        bool found = false;
        void visit_BufferStore(const BufferStoreNode* n) override { found |= n->buffer->scope == Scope::Global; }
    } f;
    f.visit(s);
    return f.found;
}

/// Every store to a field under `cond`: a run of statements that store (a field's elements after
/// the chain, with their comments) under one guard, any other such store under its own.
class GuardStores : public IRMutator {
public:
    explicit GuardStores(Expr cond) : cond_(std::move(cond)) {}

protected:
    Stmt visit_Block(const BlockNode* n, const Stmt&) override {
        std::vector<Stmt> out, run;
        bool stores = false;
        auto flush = [&] {
            if (stores) out.push_back(IfThenNode::make(cond_, BlockNode::make(std::move(run))));
            else out.insert(out.end(), run.begin(), run.end());
            run.clear();
            stores = false;
        };
        for (const Stmt& s : n->stmts) {
            const bool guarded = s.is<CommentNode>() || ((s.is<BufferStoreNode>() || s.is<ForNode>()) &&
                                                         stores_to_a_field(s) && !contains_mma_chain(s));
            if (guarded) {
                run.push_back(s);
                stores |= !s.is<CommentNode>();
                continue;
            }
            flush();
            out.push_back(mutate(s));
        }
        flush();
        return BlockNode::make(std::move(out));
    }
    Stmt visit_BufferStore(const BufferStoreNode* n, const Stmt& self) override {
        return n->buffer->scope == Scope::Global ? IfThenNode::make(cond_, self) : self;
    }

private:
    Expr cond_;
};

class Converge : public IRMutator {
protected:
    Stmt visit_For(const ForNode* f, const Stmt& self) override {
        if (f->kind != ForKind::GpuGrid || f->dim != 0 || !contains_mma_chain(f->body))
            return IRMutator::visit_For(f, self);
        auto v = f->var.as<VarNode>();
        const ScalarType t = v->type;
        auto c = [&](std::int64_t x) { return ConstNode::make_int(t, x); };
        auto op = [](BinaryOp o, Expr a, Expr b) { return BinaryNode::make(o, std::move(a), std::move(b)); };
        Expr thread = VarNode::make(t, v->name + "_thread", v->role, v->field, v->axis);
        // start + ceil((stop - start) / (32 step)) * 32 step: whole warps of threads.
        Expr warp = op(BinaryOp::Mul, c(32), f->step);
        Expr span = op(BinaryOp::Sub, f->stop, f->start);
        Expr stop = op(BinaryOp::Add, f->start,
                       op(BinaryOp::Mul, op(BinaryOp::Div, op(BinaryOp::Add, span, op(BinaryOp::Sub, warp, c(1))), warp), warp));
        // The last cell: start + ((stop - start - 1) / step) * step.
        Expr last = op(BinaryOp::Add, f->start,
                       op(BinaryOp::Mul, op(BinaryOp::Div, op(BinaryOp::Sub, span, c(1)), f->step), f->step));
        Stmt body = GuardStores(op(BinaryOp::Lt, thread, f->stop)).mutate(f->body);
        body = BlockNode::make({DeclareNode::make(f->var, op(BinaryOp::Min, thread, simplify(last))), body});
        return ForNode::make(thread, f->start, simplify(stop), f->step, body, f->axis, f->kind, f->dim);
    }
};

} // namespace

Stmt converge_warps(const Stmt& body) { return Converge().mutate(body); }

} // namespace loom::ir
