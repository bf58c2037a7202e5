#include "compiler/passes/warp_reductions.hpp"

#include "compiler/ir/visitor.hpp"
#include "compiler/passes/block_reductions.hpp"

namespace loom::ir {

namespace {

constexpr int kLanes = 32;

class InWarps : public IRMutator {
protected:
    Stmt visit_For(const ForNode* f, const Stmt& self) override {
        if (f->kind != ForKind::WarpLane) return IRMutator::visit_For(f, self);
        return ForNode::make(f->var, f->start, f->stop, f->step, cell(f->body, f->var), f->axis, f->kind, f->dim);
    }

private:
    /// The lane's statements with their accumulator loops shared among the warp's lanes.
    static Stmt cell(const Stmt& s, const Expr& lane) {
        return share_reductions(s, [&lane](const Stmt& decl, const Stmt& for_loop, BinaryOp op, StmtList& out) {
            auto d = decl.as<DeclareNode>();
            auto loop = for_loop.as<ForNode>();
            // Lane l's share: terms l, l + 32, ... of the loop, into its own accumulator.
            const Expr& acc = d->var;
            Expr mine = VarNode::make(acc.type(), acc.as<VarNode>()->name + "_lane", VarRole::Accumulator);
            const ScalarType t = loop->var.type();
            Expr own = lane.type() == t ? lane : CastNode::make(t, lane);
            if (!is_const_value(loop->step, 1)) own = BinaryNode::make(BinaryOp::Mul, own, loop->step);
            Expr first = is_const_value(loop->start, 0) ? own : BinaryNode::make(BinaryOp::Add, loop->start, own);
            Expr stride = is_const_value(loop->step, 1)
                              ? ConstNode::make_int(t, kLanes)
                              : BinaryNode::make(BinaryOp::Mul, ConstNode::make_int(t, kLanes), loop->step);
            out.add(DeclareNode::make(mine, d->value));
            out.add(ForNode::make(loop->var, first, loop->stop, stride, replace_var(loop->body, acc, mine), loop->axis,
                                  loop->kind));
            out.add(DeclareNode::make(acc, WarpReduceNode::make(op, mine)));
        });
    }
};

} // namespace

Stmt reduce_in_warps(const Stmt& body) { return InWarps().mutate(body); }

} // namespace loom::ir
