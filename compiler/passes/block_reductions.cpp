#include "compiler/passes/block_reductions.hpp"

#include "compiler/ir/visitor.hpp"
#include "compiler/passes/online_softmax.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>

#include <fmt/ranges.h>

#include <map>
#include <optional>

namespace loom::ir {

namespace {

Expr i32(std::int64_t v) { return ConstNode::make_int(ScalarType::Int32, v); }

} // namespace

namespace {

/// The operator of `update` if it is `acc = acc op term` for `acc`; else null.
const BinaryNode* update_of(const Stmt& update, const Expr& acc) {
    auto a = update.as<AssignNode>();
    if (!a || !a->lhs.same_as(acc)) return nullptr;
    auto op = a->rhs.as<BinaryNode>();
    return op && op->a.same_as(acc) ? op : nullptr;
}

/// The accumulator loop that starts at stmts[i], if one does: accumulator declarations, then a
/// serial loop whose body ends with one update of each (the terms' own work first).
std::optional<AccumulatorLoop> accumulator_loop(const std::vector<Stmt>& stmts, std::size_t i) {
    AccumulatorLoop found;
    std::size_t j = i;
    for (; j < stmts.size(); ++j) {
        auto d = stmts[j].as<DeclareNode>();
        if (!d || d->var.as<VarNode>()->role != VarRole::Accumulator) break;
        found.declarations.push_back(d);
    }
    found.loop = j < stmts.size() ? stmts[j].as<ForNode>() : nullptr;
    if (found.loop) found.loop_stmt = stmts[j];
    if (found.declarations.empty() || !found.loop || found.loop->kind != ForKind::Serial) return std::nullopt;
    auto b = found.loop->body.as<BlockNode>();
    const std::vector<Stmt> body = b ? b->stmts : std::vector<Stmt>{found.loop->body};
    const std::size_t n = found.declarations.size();
    if (body.size() < n) return std::nullopt;
    // The body's trailing accumulator updates are exactly those of the declared accumulators.
    std::size_t trailing = 0;
    while (trailing < body.size()) {
        auto a = body[body.size() - 1 - trailing].as<AssignNode>();
        auto v = a ? a->lhs.as<VarNode>() : nullptr;
        if (!v || v->role != VarRole::Accumulator) break;
        ++trailing;
    }
    if (trailing != n) return std::nullopt;
    for (std::size_t k = 0; k < n; ++k) {
        const Expr& acc = found.declarations[k]->var;
        const BinaryNode* op = nullptr;
        const VarNode* max = nullptr;
        for (std::size_t u = body.size() - n; u < body.size() && !op && !max; ++u) {
            op = update_of(body[u], acc);
            max = op ? nullptr : rescaled_by(body[u], acc);
        }
        int by = -1;
        for (std::size_t m = 0; m < k && max; ++m)
            if (found.declarations[m]->var.get() == max && found.ops[m] == BinaryOp::Max) by = int(m);
        if (!op && by < 0) return std::nullopt;
        found.ops.push_back(op ? op->op : BinaryOp::Add);
        found.rescaled_by.push_back(by);
    }
    return found;
}

} // namespace

Stmt share_reductions(const Stmt& s, const ShareReduction& share) {
    if (auto a = s.as<AllocateNode>()) return AllocateNode::make(a->buffer, share_reductions(a->body, share));
    // The last block of a reduction across blocks combines the partials with all its threads.
    if (auto l = s.as<LastBlockNode>()) return LastBlockNode::make(l->blocks, l->ticket, share_reductions(l->body, share));
    auto b = s.as<BlockNode>();
    if (!b) return s;
    StmtList out;
    for (std::size_t i = 0; i < b->stmts.size(); ++i) {
        if (auto found = accumulator_loop(b->stmts, i)) {
            share(*found, out);
            i += found->declarations.size(); // the declarations and the loop are done
            continue;
        }
        out.add(share_reductions(b->stmts[i], share));
    }
    return out.build();
}

namespace {

class Share {
public:
    explicit Share(int threads) : threads_(threads) {}

    /// The statements of a cell at block level, with their accumulator loops shared.
    Stmt cell(const Stmt& s) {
        return share_reductions(s, [this](const AccumulatorLoop& found, StmtList& out) {
            if (is_const_value(found.loop->step, 1)) return reduce(found, out);
            for (const DeclareNode* d : found.declarations) out.add(DeclareNode::make(d->var, d->value));
            out.add(found.loop_stmt); // a stepped loop stays the thread's own
        });
    }

private:
    /// The block's threads as warps: thread t combines terms t, t + threads, ... into its own
    /// accumulators; each warp combines its threads' by shuffles (WarpReduce) and its lane 0
    /// writes the warp's results to partial[warp]; a barrier; then, with several warps, the
    /// first warp combines those (lanes past the warps take the identity) into
    /// partial[warps]; a barrier; every thread reads the results. One shared array per
    /// accumulator, living from here to the end of the cell's list (the accumulators read them).
    void reduce(const AccumulatorLoop& found, StmtList& out) {
        const int warps = threads_ / kWarpSize;
        const std::size_t n = found.declarations.size();
        std::vector<std::string> names;
        std::vector<BufferPtr> partials;
        for (const DeclareNode* d : found.declarations) {
            names.push_back(d->var.as<VarNode>()->name);
            auto partial = make_buffer(names.back() + "_partial", d->var.type(), Scope::Shared, {warps > 1 ? warps + 1 : 1});
            partial->static_shared = true;
            partials.push_back(partial);
        }
        out.add(CommentNode::make(fmt::format(
            "{}: thread t of {} combines terms t, t + {}, ...; each warp its threads' by shuffles{}",
            fmt::join(names, ", "), threads_, threads_,
            warps > 1 ? fmt::format(", then the first warp the {} warps'", warps) : "")));
        for (const BufferPtr& p : partials) out.allocate(p);
        Expr warp = VarNode::make(ScalarType::Int32, "warp", VarRole::Counter, nullptr, -1);
        Expr lane = VarNode::make(ScalarType::Int32, "lane", VarRole::Counter, nullptr, -1);
        auto in_warps = [&](const Expr& warp, int count, std::vector<Stmt> body) {
            Stmt lanes = ForNode::make(lane, i32(0), i32(kWarpSize), i32(1), BlockNode::make(std::move(body)), -1,
                                       ForKind::WarpLane, 0);
            return ForNode::make(warp, i32(0), i32(count), i32(1), lanes, -1, ForKind::GpuWarp, 0);
        };
        auto first_lane = [&](const BufferPtr& array, const Expr& slot, const Expr& value) {
            return IfThenNode::make(BinaryNode::make(BinaryOp::Eq, lane, i32(0)), BufferStoreNode::make(array, slot, value));
        };
        Expr t = VarNode::make(ScalarType::Int32, "thread", VarRole::Counter, nullptr, -1);
        std::vector<Stmt> share{DeclareNode::make(t, BinaryNode::make(BinaryOp::Add, BinaryNode::make(BinaryOp::Mul, warp, i32(kWarpSize)), lane))};
        // Thread t's share of the terms into accumulators of its own.
        std::vector<Expr> mine;
        Stmt body = found.loop->body;
        for (std::size_t k = 0; k < n; ++k) {
            const Expr& acc = found.declarations[k]->var;
            mine.push_back(VarNode::make(acc.type(), names[k], VarRole::Accumulator));
            share.push_back(DeclareNode::make(mine[k], found.declarations[k]->value));
            body = replace_var(body, acc, mine[k]);
        }
        const ForNode* loop = found.loop;
        Expr k = loop->var;
        Expr mine_first = loop->start.type() == t.type() ? t : CastNode::make(loop->start.type(), t);
        Expr first = is_const_value(loop->start, 0) ? mine_first : BinaryNode::make(BinaryOp::Add, loop->start, mine_first);
        share.push_back(ForNode::make(k, first, loop->stop, ConstNode::make_int(k.type(), threads_), body, loop->axis, loop->kind));
        std::vector<Expr> of_warps;
        for (std::size_t j = 0; j < n; ++j) {
            of_warps.push_back(VarNode::make(mine[j].type(), names[j] + "_warp", VarRole::Temporary));
            Expr value = rescaled(found, j, mine, of_warps);
            share.push_back(DeclareNode::make(of_warps[j], WarpReduceNode::make(found.ops[j], value)));
            share.push_back(first_lane(partials[j], warp, of_warps[j]));
        }
        out.add(in_warps(warp, warps, std::move(share)));
        out.add(BarrierNode::make());
        Expr result = i32(0);
        if (warps > 1) {
            // A warp variable of its own: this loop does not read it (the printer marks it so).
            Expr first_warp = VarNode::make(ScalarType::Int32, "warp", VarRole::Counter, nullptr, -1);
            std::vector<Stmt> combine;
            std::vector<Expr> parts, alls;
            for (std::size_t j = 0; j < n; ++j) {
                Expr part = parts.emplace_back(VarNode::make(mine[j].type(), names[j] + "_part", VarRole::Temporary));
                Expr all = alls.emplace_back(VarNode::make(mine[j].type(), names[j] + "_all", VarRole::Temporary));
                // Lanes past the warps read the last warp's slot and take the identity instead.
                Expr read = BufferLoadNode::make(partials[j], BinaryNode::make(BinaryOp::Min, lane, i32(warps - 1)));
                Expr value = SelectNode::make(BinaryNode::make(BinaryOp::Lt, lane, i32(warps)), read,
                                              found.declarations[j]->value);
                combine.push_back(DeclareNode::make(part, value));
                combine.push_back(DeclareNode::make(all, WarpReduceNode::make(found.ops[j], rescaled(found, j, parts, alls))));
                combine.push_back(first_lane(partials[j], i32(warps), all));
            }
            out.add(in_warps(first_warp, 1, std::move(combine)));
            out.add(BarrierNode::make());
            result = i32(warps);
        }
        for (std::size_t j = 0; j < n; ++j)
            out.add(DeclareNode::make(found.declarations[j]->var, BufferLoadNode::make(partials[j], result)));
    }

    int threads_;
};

} // namespace

Expr rescaled(const AccumulatorLoop& found, std::size_t j, const std::vector<Expr>& shares,
              const std::vector<Expr>& combined) {
    const int m = found.rescaled_by[j];
    if (m < 0) return shares[j];
    return BinaryNode::make(BinaryOp::Mul, shares[j], online_rescale(shares[std::size_t(m)], combined[std::size_t(m)]));
}

namespace {

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
