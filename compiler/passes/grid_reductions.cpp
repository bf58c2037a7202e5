#include "compiler/passes/grid_reductions.hpp"

#include "compiler/passes/lower_reductions.hpp"
#include "compiler/passes/simplify.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace loom::ir {

namespace {

Expr bin(BinaryOp op, const Expr& a, const Expr& b) { return simplify(BinaryNode::make(op, a, b)); }

ReduceOp reduce_op(CellReduction op) {
    switch (op) {
    case CellReduction::Max: return ReduceOp::Max;
    case CellReduction::Min: return ReduceOp::Min;
    case CellReduction::Sum:
    case CellReduction::Mean: return ReduceOp::Sum;
    }
    return ReduceOp::Sum;
}

/// Whether `s` stores the value of `t`: into its field's buffer, at its element.
bool stores_target(const Stmt& s, const CellReductionTarget& t) {
    auto st = s.as<BufferStoreNode>();
    if (!st || st->buffer->field_of() != t.field || st->indices.size() != t.element.size()) return false;
    for (std::size_t i = 0; i < t.element.size(); ++i) {
        Expr at = simplify(st->indices[i]); // (int32) 0 from the frontend's int64 literal
        auto c = at.as<ConstNode>();
        if (!c || c->int_value != t.element[i]) return false;
    }
    return true;
}

class AcrossBlocks {
public:
    AcrossBlocks(const std::vector<CellReductionTarget>& targets, int threads, const std::vector<int>& fastest_first)
        : targets_(targets), threads_(threads), fastest_first_(fastest_first) {}

    Stmt run(const Stmt& nest) {
        // The loops over the spatial axes, outermost first, and the cell's statements.
        Stmt s = nest;
        for (;;) {
            if (auto b = s.as<BlockNode>(); b && b->stmts.size() == 1) {
                s = b->stmts[0];
            } else if (auto f = s.as<ForNode>(); f && f->axis >= 0) {
                loops_.push_back(f);
                s = f->body;
            } else {
                break;
            }
        }
        if (loops_.empty()) throw InternalError("reduce_across_blocks: no loop over the cells");
        cell_ = flatten(inside_allocations(s, arrays_));
        type_ = loops_.front()->var.type();
        for (const ForNode* f : loops_)
            if (f->var.type() != type_ || !f->step.is<ConstNode>())
                throw InternalError("reduce_across_blocks: loops of mixed types or run-time steps");

        // The cells, counted along each axis and in all; the blocks and each one's chunk.
        Expr cells = idx(1);
        for (const ForNode* f : loops_) cells = bin(BinaryOp::Mul, cells, trips(f));
        Expr blocks = blocks_for(cells);
        Expr block = VarNode::make(type_, "block", VarRole::Counter, nullptr, -1);
        // Named in the block (the grid loop keeps the expression: the launch evaluates it).
        Expr cells_var = VarNode::make(type_, "cells", VarRole::Temporary);
        Expr blocks_var = VarNode::make(type_, "blocks", VarRole::Temporary);
        Expr chunk_var = VarNode::make(type_, "chunk", VarRole::Temporary);
        Expr first = VarNode::make(type_, "first", VarRole::Temporary);
        Expr last = VarNode::make(type_, "last", VarRole::Temporary);
        StmtList in_block;
        in_block.add(CommentNode::make(
            "block b reduces cells [b * chunk, (b + 1) * chunk); the last block to finish combines "
            "the blocks' partials in a fixed order"));
        in_block.add(DeclareNode::make(cells_var, cells));
        in_block.add(DeclareNode::make(blocks_var, blocks_for(cells_var)));
        in_block.add(DeclareNode::make(chunk_var, chunk_for(cells_var, blocks_var)));
        in_block.add(DeclareNode::make(first, bin(BinaryOp::Mul, block, chunk_var)));
        in_block.add(DeclareNode::make(last, bin(BinaryOp::Min, cells_var, bin(BinaryOp::Add, first, chunk_var))));

        std::vector<BufferPtr> scratch;
        std::vector<Stmt> partial_stores, finals;
        Expr blocks32 = type_ == ScalarType::Int32 ? blocks_var : CastNode::make(ScalarType::Int32, blocks_var);
        StmtList combine;
        std::vector<Expr> accumulators;
        std::vector<Stmt> declarations;
        std::vector<std::string> names;
        for (const CellReductionTarget& t : targets_) {
            auto st = find_store(t).as<BufferStoreNode>(); // checked: every target has its store
            const ScalarType vt = st->value.type();
            const ReduceOp op = reduce_op(t.op);
            const std::string name = fmt::format("{}_{}", t.field->name, fmt::join(t.element, "_"));
            names.push_back(fmt::format("{} ({})", name, cell_reduction_name(t.op)));
            auto partials = make_buffer(name + "_partials", vt, Scope::Global, {kMaxReductionBlocks});
            partials->grid_scratch = true;
            scratch.push_back(partials);
            accumulators.push_back(VarNode::make(vt, name, VarRole::Accumulator));
            declarations.push_back(DeclareNode::make(accumulators.back(), reduction_identity(op, vt)));
            partial_stores.push_back(BufferStoreNode::make(partials, block, accumulators.back()));

            // The last block's: the partials in a fixed order.
            Expr all = VarNode::make(vt, name + "_all", VarRole::Accumulator);
            Expr j = VarNode::make(ScalarType::Int32, "partial", VarRole::LoopIndex);
            combine.add(DeclareNode::make(all, reduction_identity(op, vt)));
            combine.add(ForNode::make(j, ConstNode::make_int(ScalarType::Int32, 0), blocks32,
                                      ConstNode::make_int(ScalarType::Int32, 1),
                                      AssignNode::make(all, BinaryNode::make(reduction_combine(op), all,
                                                                             BufferLoadNode::make(partials, {j}))),
                                      -1));
            Expr result = all;
            if (t.op == CellReduction::Mean)
                result = BinaryNode::make(BinaryOp::Div, all, CastNode::make(vt, cells_var));
            std::vector<Expr> at;
            for (const Expr& x : st->indices) at.push_back(simplify(x));
            finals.push_back(BufferStoreNode::make(st->buffer, at, result));
        }
        // This block's share: one loop over its cells that updates every accumulator, so each
        // cell is read once (the shape reduce_in_blocks shares).
        Expr i = VarNode::make(type_, "cell", VarRole::LoopIndex);
        in_block.add(CommentNode::make(fmt::format("{} over the block's cells", fmt::join(names, ", "))));
        in_block.add(declarations);
        in_block.add(ForNode::make(i, first, last, idx(1), cell_body(i, accumulators), -1));
        in_block.add(one_thread(std::move(partial_stores)));
        combine.add(one_thread(std::move(finals)));
        auto ticket = make_buffer("loom_ticket", ScalarType::Int32, Scope::Global, {1});
        ticket->grid_scratch = true;
        in_block.add(LastBlockNode::make(blocks32, ticket, combine.build()));
        scratch.push_back(ticket);

        Stmt grid = ForNode::make(block, idx(0), blocks, idx(1), in_block.build(), -1, ForKind::GpuBlock, 0);
        return allocate_all(scratch, grid);
    }

private:
    Expr idx(std::int64_t v) const { return ConstNode::make_int(type_, v); }

    /// The cell as one list: lower_reductions puts a statement and the reductions it uses in a
    /// nested list of their own (a Block is no scope).
    static Stmt flatten(const Stmt& s) {
        auto b = s.as<BlockNode>();
        if (!b) return s;
        std::vector<Stmt> out;
        for (const Stmt& x : b->stmts) {
            Stmt f = flatten(x);
            if (auto inner = f.as<BlockNode>())
                out.insert(out.end(), inner->stmts.begin(), inner->stmts.end());
            else
                out.push_back(f);
        }
        return BlockNode::make(std::move(out));
    }

    /// The blocks for `cells`: one per kReductionCellsPerThread rounds of the block's threads,
    /// from 1 to kMaxReductionBlocks.
    Expr blocks_for(const Expr& cells) const {
        const std::int64_t per_block = std::int64_t(threads_) * kReductionCellsPerThread;
        Expr wanted = bin(BinaryOp::Div, bin(BinaryOp::Add, cells, idx(per_block - 1)), idx(per_block));
        return bin(BinaryOp::Max, idx(1), bin(BinaryOp::Min, wanted, idx(kMaxReductionBlocks)));
    }
    /// Each block's cells: its share, rounded up to whole rounds of its threads, so that every
    /// block's first cell is aligned alike.
    Expr chunk_for(const Expr& cells, const Expr& blocks) const {
        Expr share = bin(BinaryOp::Div, bin(BinaryOp::Add, cells, bin(BinaryOp::Sub, blocks, idx(1))), blocks);
        return bin(BinaryOp::Mul, bin(BinaryOp::Div, bin(BinaryOp::Add, share, idx(threads_ - 1)), idx(threads_)),
                   idx(threads_));
    }

    /// The number of iterations of a loop over a spatial axis.
    Expr trips(const ForNode* f) const {
        const std::int64_t step = f->step.as<ConstNode>()->int_value;
        Expr span = bin(BinaryOp::Sub, f->stop, f->start);
        if (step == 1) return bin(BinaryOp::Max, span, idx(0));
        return bin(BinaryOp::Max, bin(BinaryOp::Div, bin(BinaryOp::Add, span, idx(step - 1)), idx(step)), idx(0));
    }

    const Stmt& find_store(const CellReductionTarget& t) const {
        auto b = cell_.as<BlockNode>();
        if (b)
            for (const Stmt& s : b->stmts)
                if (stores_target(s, t)) return s;
        if (stores_target(cell_, t)) return cell_;
        throw InternalError(fmt::format("reduce_across_blocks: no store of {} in the cell", t.field->name));
    }

    /// The cell numbered `i`: its counters, its statements with each target's store turned into
    /// a local holding the value, then `acc = acc op value` per target, last.
    Stmt cell_body(const Expr& i, const std::vector<Expr>& accumulators) const {
        StmtList out;
        // Counters from the cell's number, the fastest axis varying fastest.
        Expr rest = i;
        std::vector<Stmt> counters(loops_.size());
        for (std::size_t n = 0; n < fastest_first_.size(); ++n) {
            const ForNode* f = loop_of(fastest_first_[n]);
            const bool slowest = n + 1 == fastest_first_.size();
            Expr along = slowest ? rest : bin(BinaryOp::Mod, rest, trips(f));
            if (!slowest) rest = bin(BinaryOp::Div, rest, trips(f));
            Expr at = bin(BinaryOp::Add, f->start, bin(BinaryOp::Mul, along, f->step));
            counters[std::size_t(std::find(loops_.begin(), loops_.end(), f) - loops_.begin())] =
                DeclareNode::make(f->var, at);
        }
        for (Stmt& c : counters) out.add(c);
        StmtList work;
        std::vector<Stmt> updates;
        auto b = cell_.as<BlockNode>();
        for (const Stmt& s : b ? b->stmts : std::vector<Stmt>{cell_}) {
            bool stored = false;
            for (std::size_t t = 0; t < targets_.size() && !stored; ++t) {
                if (!stores_target(s, targets_[t])) continue;
                stored = true;
                auto st = s.as<BufferStoreNode>();
                Expr value = VarNode::make(st->value.type(), "value", VarRole::Temporary);
                work.add(DeclareNode::make(value, st->value));
                const Expr& acc = accumulators[t];
                updates.push_back(AssignNode::make(acc, BinaryNode::make(reduction_combine(reduce_op(targets_[t].op)), acc, value)));
            }
            if (!stored) work.add(s);
        }
        out.add(allocate_all(arrays_, work.build()));
        out.add(updates);
        return out.build();
    }

    const ForNode* loop_of(int axis) const {
        for (const ForNode* f : loops_)
            if (f->axis == axis) return f;
        throw InternalError(fmt::format("reduce_across_blocks: no loop over axis {}", axis));
    }

    /// Statements one thread of the block runs.
    static Stmt one_thread(std::vector<Stmt> body) {
        Expr t = VarNode::make(ScalarType::Int32, "thread", VarRole::Counter, nullptr, -1);
        return ForNode::make(t, ConstNode::make_int(ScalarType::Int32, 0), ConstNode::make_int(ScalarType::Int32, 1),
                             ConstNode::make_int(ScalarType::Int32, 1), BlockNode::make(std::move(body)), -1,
                             ForKind::GpuThread, 0);
    }

    const std::vector<CellReductionTarget>& targets_;
    int threads_;
    std::vector<int> fastest_first_;
    std::vector<const ForNode*> loops_;
    std::vector<BufferPtr> arrays_;
    Stmt cell_;
    ScalarType type_ = ScalarType::Int64;
};

} // namespace

Stmt reduce_across_blocks(const Stmt& nest, const std::vector<CellReductionTarget>& targets, int threads,
                          const std::vector<int>& fastest_first) {
    if (targets.empty()) return nest;
    return AcrossBlocks(targets, threads, fastest_first).run(nest);
}

} // namespace loom::ir
