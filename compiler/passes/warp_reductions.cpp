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
        return share_reductions(s, [&lane](const AccumulatorLoop& found, StmtList& out) {
            // Lane l's share: terms l, l + 32, ... of the loop, into accumulators of its own.
            std::vector<Expr> mine;
            Stmt body = found.loop->body;
            for (const DeclareNode* d : found.declarations) {
                const Expr& acc = d->var;
                mine.push_back(VarNode::make(acc.type(), acc.as<VarNode>()->name + "_lane", VarRole::Accumulator));
                out.add(DeclareNode::make(mine.back(), d->value));
                body = replace_var(body, acc, mine.back());
            }
            out.add(lane_strided_loop(found.loop, lane, body));
            std::vector<Expr> combined;
            for (std::size_t k = 0; k < mine.size(); ++k) {
                combined.push_back(found.declarations[k]->var);
                out.add(DeclareNode::make(combined[k], WarpReduceNode::make(found.ops[k], rescaled(found, k, mine, combined))));
            }
        });
    }
};

} // namespace

Stmt reduce_in_warps(const Stmt& body) { return InWarps().mutate(body); }

} // namespace loom::ir
