#include "compiler/passes/warp_reductions.hpp"

#include "compiler/ir/visitor.hpp"
#include "compiler/passes/block_reductions.hpp"
#include "compiler/passes/gpu_mapping.hpp"

namespace loom::ir {

namespace {

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
            out.add(DeclareNode::make(mine, d->value));
            out.add(lane_strided_loop(loop, lane, replace_var(loop->body, acc, mine)));
            out.add(DeclareNode::make(acc, WarpReduceNode::make(op, mine)));
        });
    }
};

} // namespace

Stmt reduce_in_warps(const Stmt& body) { return InWarps().mutate(body); }

} // namespace loom::ir
