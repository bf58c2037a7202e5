#include "compiler/passes/launch_grid.hpp"

#include "compiler/ir/visitor.hpp"
#include "compiler/passes/simplify.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace loom::ir {

namespace {

bool reads_counter(const Expr& e) {
    for (const Expr& s : subexpressions(e))
        if (auto v = s.as<VarNode>(); v && v->role == VarRole::Counter) return true;
    return false;
}

bool reads(const Expr& e, const Expr& var) {
    for (const Expr& s : subexpressions(e))
        if (s.same_as(var)) return true;
    return false;
}

/// The grid loops of a mapped body, with the loops around each, and its shared allocations.
class FindBound : public IRVisitor {
public:
    struct Grid {
        const ForNode* loop;
        std::vector<const ForNode*> enclosing; ///< the loops around it, outermost first
    };
    std::vector<Grid> grids;
    std::array<const ForNode*, 3> blocks{}; ///< the GpuBlock loop per dimension
    std::array<std::int64_t, 3> threads{}; ///< the largest GpuThread loop per dimension
    std::size_t dynamic_end = 0; ///< the end of the last dynamic shared array, in bytes
    std::size_t static_bytes = 0; ///< all static shared arrays, each 16-byte aligned

    void visit_For(const ForNode* f) override {
        if (f->kind == ForKind::GpuGrid) grids.push_back({f, enclosing_});
        if (f->kind == ForKind::GpuBlock) {
            auto& slot = blocks[std::size_t(f->dim)];
            if (slot)
                throw InternalError(fmt::format("infer_launch_grid: two gpu block loops along "
                                                "dimension {}", "xyz"[f->dim]));
            slot = f;
        }
        if (f->kind == ForKind::GpuThread) {
            auto n = f->stop.as<ConstNode>();
            if (!n) throw InternalError("infer_launch_grid: a GpuThread loop of variable extent");
            auto& most = threads[std::size_t(f->dim)];
            most = std::max(most, n->int_value);
        }
        if (f->kind == ForKind::GpuWarp) // W warps of 32 threads along x (For::make checks)
            threads[0] = std::max(threads[0], f->stop.as<ConstNode>()->int_value * 32);
        if (f->kind == ForKind::WarpLane) threads[0] = std::max<std::int64_t>(threads[0], 32);
        enclosing_.push_back(f);
        IRVisitor::visit_For(f);
        enclosing_.pop_back();
    }
    void visit_Allocate(const AllocateNode* a) override {
        IRVisitor::visit_Allocate(a);
        const BufferInfo& buffer = *a->buffer;
        if (buffer.scope != Scope::Shared) return;
        const std::size_t bytes = std::size_t(buffer.size()) * std::size_t(bit_width(buffer.type) / 8);
        if (buffer.static_shared)
            static_bytes += (bytes + 15) / 16 * 16;
        else
            dynamic_end = std::max(dynamic_end, buffer.shared_offset + bytes);
    }

private:
    std::vector<const ForNode*> enclosing_;
};

/// `e` with the counters of `loops` replaced by their first values.
Expr at_first_iteration(const Expr& e, const std::vector<const ForNode*>& loops) {
    struct Substitute : IRMutator {
        std::map<const VarNode*, Expr> first;
        Expr visit_Var(const VarNode* v, const Expr& self) override {
            auto it = first.find(v);
            return it == first.end() ? self : it->second;
        }
    } s;
    for (const ForNode* f : loops) s.first[f->var.as<VarNode>()] = f->start;
    return s.mutate(e);
}

/// The launch of a body bound to blocks and threads: exactly the schedule's block along each
/// dimension with a GpuBlock or GpuThread loop (every GpuThread loop within it; the block's
/// cooperative loops use all of its threads), one thread along the others, and the GpuBlock
/// loops' extents of blocks.
LaunchDescription block_launch(const FindBound& found, const std::array<int, 3>& block,
                               ScalarType index_type, LaunchDescription L) {
    L.exact_block = true;
    for (int d = 0; d < 3; ++d) {
        const ForNode* b = found.blocks[std::size_t(d)];
        const bool used = b || found.threads[std::size_t(d)] > 0;
        const int threads = used ? block[std::size_t(d)] : 1;
        if (found.threads[std::size_t(d)] > threads)
            throw InternalError(fmt::format("infer_launch_grid: a GpuThread loop of {} iterations "
                                            "in a block of {} threads along {}",
                                            found.threads[std::size_t(d)], threads, "xyz"[d]));
        L.default_block[std::size_t(d)] = threads;
        if (!b) {
            L.extents[std::size_t(d)] = ConstNode::make_int(index_type, threads);
            continue;
        }
        L.axis_of_dim[std::size_t(d)] = b->axis;
        Expr blocks = b->stop.type() == index_type ? b->stop : CastNode::make(index_type, b->stop);
        L.extents[std::size_t(d)] =
            simplify(BinaryNode::make(BinaryOp::Mul, blocks, ConstNode::make_int(index_type, threads)));
    }
    L.max_threads_per_block = L.default_block[0] * L.default_block[1] * L.default_block[2];
    return L;
}

} // namespace

LaunchDescription infer_launch_grid(const Stmt& body, const Schedule& schedule,
                                    ScalarType index_type) {
    if (!schedule.block)
        throw InternalError("infer_launch_grid needs a resolved schedule (a block); run "
                            "choose_schedule first");
    FindBound found;
    found.visit(body);
    LaunchDescription L;
    L.shared_bytes = found.dynamic_end;
    L.static_shared_bytes = found.static_bytes;
    if (found.blocks[0] || found.blocks[1] || found.blocks[2]) {
        if (!found.grids.empty())
            throw InternalError("infer_launch_grid: grid loops beside block loops");
        return block_launch(found, *schedule.block, index_type, L);
    }
    std::array<int, 3> block = *schedule.block;
    std::array<const FindBound::Grid*, 3> grid_of_dim{};
    for (const auto& g : found.grids) {
        if (grid_of_dim[std::size_t(g.loop->dim)])
            throw InternalError(fmt::format("infer_launch_grid: two grid loops along dimension {}",
                                            "xyz"[g.loop->dim]));
        grid_of_dim[std::size_t(g.loop->dim)] = &g;
    }
    for (int dim = 0; dim < 3; ++dim) {
        const FindBound::Grid* g = grid_of_dim[std::size_t(dim)];
        if (!g) {
            L.extents[dim] = ConstNode::make_int(index_type, 1);
            block[dim] = 1;
            continue;
        }
        const ForNode* f = g->loop;
        L.axis_of_dim[dim] = f->axis;
        // The loops around a grid loop inside one thread (its cells) start it later; the first
        // cell needs the most threads.
        std::vector<const ForNode*> cells;
        for (const ForNode* e : g->enclosing)
            if (e->kind != ForKind::GpuGrid) cells.push_back(e);
        Expr start = at_first_iteration(f->start, cells);
        for (const ForNode* c : cells) // the loop over the thread's cells
            if (auto n = c->stop.as<ConstNode>(); n && reads(f->start, c->var))
                L.cells_per_thread[dim] = int(n->int_value);
        // A loop over groups of a thread's cells (no cell loop sets its start): its step is the group,
        // lanes along x (vectorize_lanes) or streamed cells along cells_axis (stream_cells).
        const int group = dim == 0 && schedule.vector_width > 1 ? schedule.vector_width
                        : schedule.stream_cells.value_or(false) && schedule.cells_axis == f->axis
                            ? schedule.cells_per_thread
                            : 1;
        if (L.cells_per_thread[dim] == 1 && group > 1 && is_const_value(f->step, group))
            L.cells_per_thread[dim] = group;
        if (reads_counter(start) || reads_counter(f->stop) || reads_counter(f->step)) {
            L.manual = true;
            L.manual_reason = "the iteration bounds depend on another counter";
        }
        Expr span = BinaryNode::make(BinaryOp::Sub, f->stop, start);
        if (!is_const_value(f->step, 1)) {
            Expr step_minus_1 = BinaryNode::make(BinaryOp::Sub, f->step, ConstNode::make_int(f->step.type(), 1));
            span = BinaryNode::make(BinaryOp::Div, BinaryNode::make(BinaryOp::Add, span, step_minus_1), f->step);
        }
        L.extents[dim] = simplify(span);
    }
    if (schedule.manual_launch_grid && !L.manual) {
        L.manual = true;
        L.manual_reason = "manual_launch_grid is set";
    }
    L.default_block = block;
    if (L.manual)
        for (auto& e : L.extents) e = Expr();
    return L;
}

} // namespace loom::ir
