#include "compiler/passes/block_reductions.hpp"

#include "compiler/ir/visitor.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>

#include <map>

namespace loom::ir {

namespace {

Expr i32(std::int64_t v) { return ConstNode::make_int(ScalarType::Int32, v); }

} // namespace

namespace {

/// The operator an accumulator loop combines with: its body is `acc = acc op term`, or a block
/// ending so (the terms' own reductions first); else null.
const BinaryNode* accumulator_update(const Stmt& body, const Expr& acc) {
    Stmt last = body;
    if (auto b = body.as<BlockNode>(); b && !b->stmts.empty()) last = b->stmts.back();
    auto a = last.as<AssignNode>();
    if (!a || !a->lhs.same_as(acc)) return nullptr;
    auto op = a->rhs.as<BinaryNode>();
    return op && op->a.same_as(acc) ? op : nullptr;
}

} // namespace

Stmt share_reductions(const Stmt& s, const ShareReduction& share) {
    if (auto a = s.as<AllocateNode>()) return AllocateNode::make(a->buffer, share_reductions(a->body, share));
    auto b = s.as<BlockNode>();
    if (!b) return s;
    StmtList out;
    for (std::size_t i = 0; i < b->stmts.size(); ++i) {
        const Stmt& st = b->stmts[i];
        auto d = st.as<DeclareNode>();
        auto loop = i + 1 < b->stmts.size() ? b->stmts[i + 1].as<ForNode>() : nullptr;
        const BinaryNode* op = nullptr;
        if (d && loop && d->var.as<VarNode>()->role == VarRole::Accumulator && loop->kind == ForKind::Serial)
            op = accumulator_update(loop->body, d->var);
        if (!op) {
            out.add(share_reductions(st, share));
            continue;
        }
        share(st, b->stmts[i + 1], op->op, out);
        ++i; // the loop is done
    }
    return out.build();
}

namespace {

class Share {
public:
    explicit Share(int threads) : threads_(threads) {}

    /// The statements of a cell at block level, with their accumulator loops shared.
    Stmt cell(const Stmt& s) {
        return share_reductions(s, [this](const Stmt& d, const Stmt& loop, BinaryOp op, StmtList& out) {
            if (is_const_value(loop.as<ForNode>()->step, 1))
                return reduce(d.as<DeclareNode>(), loop.as<ForNode>(), op, out);
            out.add(d); // a stepped loop stays the thread's own
            out.add(loop);
        });
    }

private:
    /// Thread t's share of the terms (t, t + threads, ...) into its own accumulator `mine`.
    std::vector<Stmt> own_share(const DeclareNode* d, const ForNode* loop, const Expr& t, const Expr& mine) const {
        const Expr& acc = d->var;
        Expr k = loop->var;
        Expr mine_first = loop->start.type() == t.type() ? t : CastNode::make(loop->start.type(), t);
        Expr first = is_const_value(loop->start, 0) ? mine_first
                                                    : BinaryNode::make(BinaryOp::Add, loop->start, mine_first);
        Stmt terms = ForNode::make(k, first, loop->stop, ConstNode::make_int(k.type(), threads_),
                                   replace_var(loop->body, acc, mine), loop->axis, loop->kind);
        return {DeclareNode::make(mine, d->value), terms};
    }

    /// The block's threads as warps: each combines its threads' accumulators by shuffles
    /// (WarpReduce) and its lane 0 writes the warp's result to partial[warp]; a barrier; then,
    /// with several warps, the first warp combines those (lanes past the warps take the
    /// identity) into partial[warps]; a barrier; every thread reads the result. The partials
    /// live from here to the end of the cell's list (the accumulator reads them).
    void reduce(const DeclareNode* d, const ForNode* loop, BinaryOp op, StmtList& out) {
        const Expr& acc = d->var;
        const std::string& name = acc.as<VarNode>()->name;
        const int warps = threads_ / kWarpSize;
        auto partial = make_buffer(name + "_partial", acc.type(), Scope::Shared, {warps > 1 ? warps + 1 : 1});
        partial->static_shared = true;
        BufferPtr array = partial;
        out.add(CommentNode::make(fmt::format(
            "{}: thread t of {} combines terms t, t + {}, ...; each warp its threads' by shuffles{}",
            name, threads_, threads_, warps > 1 ? fmt::format(", then the first warp the {} warps'", warps) : "")));
        out.allocate(array);
        Expr warp = VarNode::make(ScalarType::Int32, "warp", VarRole::Counter, nullptr, -1);
        Expr lane = VarNode::make(ScalarType::Int32, "lane", VarRole::Counter, nullptr, -1);
        auto in_warps = [&](const Expr& warp, int n, std::vector<Stmt> body) {
            Stmt lanes = ForNode::make(lane, i32(0), i32(kWarpSize), i32(1), BlockNode::make(std::move(body)), -1,
                                       ForKind::WarpLane, 0);
            return ForNode::make(warp, i32(0), i32(n), i32(1), lanes, -1, ForKind::GpuWarp, 0);
        };
        auto first_lane = [&](const Expr& slot, const Expr& value) {
            return IfThenNode::make(BinaryNode::make(BinaryOp::Eq, lane, i32(0)), BufferStoreNode::make(array, slot, value));
        };
        Expr t = VarNode::make(ScalarType::Int32, "thread", VarRole::Counter, nullptr, -1);
        Expr mine = VarNode::make(acc.type(), name, VarRole::Accumulator);
        Expr of_warp = VarNode::make(acc.type(), name + "_warp", VarRole::Temporary);
        std::vector<Stmt> share{DeclareNode::make(t, BinaryNode::make(BinaryOp::Add, BinaryNode::make(BinaryOp::Mul, warp, i32(kWarpSize)), lane))};
        for (Stmt& s : own_share(d, loop, t, mine)) share.push_back(std::move(s));
        share.push_back(DeclareNode::make(of_warp, WarpReduceNode::make(op, mine)));
        share.push_back(first_lane(warp, of_warp));
        out.add(in_warps(warp, warps, std::move(share)));
        out.add(BarrierNode::make());
        Expr result = i32(0);
        if (warps > 1) {
            Expr part = VarNode::make(acc.type(), name + "_part", VarRole::Temporary);
            Expr all = VarNode::make(acc.type(), name + "_all", VarRole::Temporary);
            // Lanes past the warps read the last warp's slot and take the identity instead.
            Expr read = BufferLoadNode::make(array, BinaryNode::make(BinaryOp::Min, lane, i32(warps - 1)));
            Expr value = SelectNode::make(BinaryNode::make(BinaryOp::Lt, lane, i32(warps)), read, d->value);
            // A warp variable of its own: this loop does not read it (the printer marks it so).
            Expr first_warp = VarNode::make(ScalarType::Int32, "warp", VarRole::Counter, nullptr, -1);
            out.add(in_warps(first_warp, 1, {DeclareNode::make(part, value), DeclareNode::make(all, WarpReduceNode::make(op, part)),
                                 first_lane(i32(warps), all)}));
            out.add(BarrierNode::make());
            result = i32(warps);
        }
        out.add(DeclareNode::make(acc, BufferLoadNode::make(array, result)));
    }

    int threads_;
};

class InBlocks : public IRMutator {
public:
    explicit InBlocks(int threads) : share_(threads) {}

protected:
    Stmt visit_For(const ForNode* f, const Stmt& self) override {
        if (f->kind != ForKind::GpuBlock) return IRMutator::visit_For(f, self);
        if (f->body.is<ForNode>()) return IRMutator::visit_For(f, self); // an outer block loop
        Stmt body = share_.cell(f->body);
        return ForNode::make(f->var, f->start, f->stop, f->step, body, f->axis, f->kind, f->dim);
    }

private:
    Share share_;
};

} // namespace

Stmt reduce_in_blocks(const Stmt& body, int threads) {
    if (threads < kWarpSize || (threads & (threads - 1)) != 0)
        throw InternalError(fmt::format("reduce_in_blocks: {} threads, not a power of two of at least a warp "
                                        "(check_schedule)", threads));
    return InBlocks(threads).mutate(body);
}

} // namespace loom::ir
