#include "compiler/passes/gpu_mapping.hpp"

#include "compiler/ir/visitor.hpp"
#include "compiler/passes/simplify.hpp"

#include <loom/errors.hpp>

#include <algorithm>
#include <vector>

namespace loom::ir {

std::array<int, 3> thread_axes(const FieldInfo& primary) {
    std::array<int, 3> axes{-1, -1, -1};
    std::vector<int> order = primary.spatial_axes_fastest_first();
    for (std::size_t dim = 0; dim < 3 && dim < order.size(); ++dim) axes[dim] = order[dim];
    return axes;
}

ThreadMapping plan_thread_mapping(const FieldInfo& primary, const Schedule& schedule) {
    ThreadMapping m;
    m.axis_of_dim = thread_axes(primary);
    m.tiles = schedule.shared_tiles;
    m.block_per_cell = schedule.reduce_in_block.value_or(false);
    m.warp_per_cell = schedule.reduce_in_warp.value_or(false);
    if (schedule.block) m.block = *schedule.block;
    if (schedule.cells_per_thread <= 1) return m;
    const auto& a = m.axis_of_dim;
    auto it = schedule.cells_axis ? std::find(a.begin(), a.end(), *schedule.cells_axis) : a.end();
    if (it == a.end())
        throw InternalError("plan_thread_mapping needs a resolved schedule whose cells_axis is a "
                            "mapped axis; run choose_schedule first");
    m.cells_per_thread[std::size_t(it - a.begin())] = schedule.cells_per_thread;
    return m;
}

namespace {
Expr add(Expr a, Expr b) { return BinaryNode::make(BinaryOp::Add, a, b); }
Expr mul(Expr a, Expr b) { return BinaryNode::make(BinaryOp::Mul, a, b); }
/// ceil((f.stop - f.start) / d): the blocks a loop needs when each covers d of its values.
Expr blocks_for(const ForNode* f, const Expr& d) {
    Expr span = BinaryNode::make(BinaryOp::Sub, f->stop, f->start);
    if (is_const_value(d, 1)) return simplify(span);
    Expr d_minus_1 = BinaryNode::make(BinaryOp::Sub, d, ConstNode::make_int(d.type(), 1));
    return simplify(BinaryNode::make(BinaryOp::Div, add(span, d_minus_1), d));
}
} // namespace

namespace {

/// The tiled form (ThreadMapping::tiles): blocks of tiles, threads within, one guard.
GpuMapped map_tiles(const std::vector<const ForNode*>& loops, const Stmt& inner,
                    const ThreadMapping& mapping, const std::vector<int>& dims) {
    GpuMapped out;
    const ScalarType t = loops[0]->var.type();
    auto idx = [t](std::int64_t v) { return ConstNode::make_int(t, v); };
    const char* names = "xyz";
    // The thread's cells: an unrolled loop along the cells dimension.
    int cells_dim = -1, cells = 1;
    for (int d = 0; d < 3; ++d)
        if (mapping.cells_per_thread[std::size_t(d)] > 1) {
            cells_dim = d;
            cells = mapping.cells_per_thread[std::size_t(d)];
        }
    Expr cell = VarNode::make(t, "cell", VarRole::Counter, nullptr, -1);

    std::vector<Stmt> counters, origins;
    std::vector<Expr> threads(loops.size()), tiles(loops.size());
    Expr guard;
    for (std::size_t i = 0; i < loops.size(); ++i) {
        const ForNode* f = loops[i];
        const int d = dims[i];
        if (!is_const_value(f->step, 1))
            throw InternalError("map_to_gpu: tiles need unit steps (check_shared_tiles)");
        const std::string axis = f->axis < 3 ? std::string(1, names[f->axis]) : std::to_string(f->axis);
        const int k = d == cells_dim ? cells : 1;
        const std::int64_t span = std::int64_t(mapping.block[std::size_t(d)]) * k;
        threads[i] = VarNode::make(t, "thread_" + axis, VarRole::Counter, nullptr, -1);
        tiles[i] = VarNode::make(t, "tile_" + axis, VarRole::Counter, nullptr, -1);
        Expr origin = VarNode::make(t, axis + "_origin", VarRole::Counter, nullptr, -1);
        origins.push_back(DeclareNode::make(origin, simplify(add(f->start, mul(tiles[i], idx(span))))));
        // Consecutive cells per thread, as without tiles: thread r computes r * k + cell.
        Expr local = k > 1 ? add(mul(threads[i], idx(k)), cell) : threads[i];
        counters.push_back(DeclareNode::make(f->var, add(origin, local)));
        Expr inside = BinaryNode::make(BinaryOp::Lt, f->var, f->stop);
        guard = guard.defined() ? BinaryNode::make(BinaryOp::And, guard, inside) : inside;
        out.tiles.push_back({f->axis, d, f->var, origin, local, span, f->stop, f->start});
    }
    // Innermost first: the guarded body, the cells, the threads, the origins, the blocks.
    std::vector<Stmt> cell_body = counters;
    cell_body.push_back(IfThenNode::make(guard, inner));
    Stmt body = BlockNode::make(std::move(cell_body));
    if (cells > 1) body = ForNode::make(cell, idx(0), idx(cells), idx(1), body, -1, ForKind::Unrolled);
    for (std::size_t i = loops.size(); i-- > 0;) {
        const int d = dims[i];
        body = ForNode::make(threads[i], idx(0), idx(mapping.block[std::size_t(d)]), idx(1), body,
                             -1, ForKind::GpuThread, d);
    }
    std::vector<Stmt> block = origins;
    block.push_back(body);
    body = BlockNode::make(std::move(block));
    for (std::size_t i = loops.size(); i-- > 0;) {
        const ForNode* f = loops[i];
        Expr count = blocks_for(f, idx(out.tiles[i].span));
        body = ForNode::make(tiles[i], idx(0), count, idx(1), body, f->axis, ForKind::GpuBlock, dims[i]);
    }
    out.body = body;
    return out;
}


/// The statements of one cell, shared by the threads of its block (see map_to_gpu).
Stmt share_among_threads(const Stmt& s) {
    if (auto b = s.as<BlockNode>()) {
        std::vector<Stmt> out;
        for (const Stmt& x : b->stmts) out.push_back(share_among_threads(x));
        return BlockNode::make(std::move(out));
    }
    if (!stores_to_a_field(s)) return s;
    auto f = s.as<ForNode>();
    if (f && f->var.as<VarNode>()->role == VarRole::Index)
        return ForNode::make(f->var, f->start, f->stop, f->step, f->body, f->axis, ForKind::Cooperative);
    const ScalarType t = ScalarType::Int32;
    Expr one = VarNode::make(t, "thread", VarRole::Counter, nullptr, -1);
    return ForNode::make(one, ConstNode::make_int(t, 0), ConstNode::make_int(t, 1),
                         ConstNode::make_int(t, 1), s, -1, ForKind::GpuThread, 0);
}

/// One block per cell (ThreadMapping::block_per_cell).
GpuMapped map_cells_to_blocks(const std::vector<const ForNode*>& loops, const Stmt& inner,
                              const std::vector<int>& dims) {
    const ScalarType t = loops[0]->var.type();
    const char* names = "xyz";
    std::vector<Stmt> cell;
    std::vector<Expr> blocks;
    for (const ForNode* f : loops) {
        const std::string axis = f->axis < 3 ? std::string(1, names[f->axis]) : std::to_string(f->axis);
        blocks.push_back(VarNode::make(t, "block_" + axis, VarRole::Counter, nullptr, -1));
        Expr at = is_const_value(f->step, 1) ? blocks.back() : mul(blocks.back(), f->step);
        cell.push_back(DeclareNode::make(f->var, simplify(add(f->start, at))));
    }
    cell.push_back(share_among_threads(inner));
    Stmt body = BlockNode::make(std::move(cell));
    for (std::size_t i = loops.size(); i-- > 0;) {
        const ForNode* f = loops[i];
        body = ForNode::make(blocks[i], ConstNode::make_int(t, 0), blocks_for(f, f->step),
                             ConstNode::make_int(t, 1), body, f->axis, ForKind::GpuBlock, dims[i]);
    }
    return {body, {}};
}

/// The statements of one cell, shared by the lanes of its warp (see map_to_gpu).
Stmt share_among_lanes(const Stmt& s, const Expr& lane) {
    if (auto b = s.as<BlockNode>()) {
        std::vector<Stmt> out;
        for (const Stmt& x : b->stmts) out.push_back(share_among_lanes(x, lane));
        return BlockNode::make(std::move(out));
    }
    if (!stores_to_a_field(s)) return s;
    auto f = s.as<ForNode>();
    if (f && f->var.as<VarNode>()->role == VarRole::Index) return lane_strided_loop(f, lane, f->body);
    return IfThenNode::make(BinaryNode::make(BinaryOp::Eq, lane, ConstNode::make_int(lane.type(), 0)), s);
}

/// One warp per cell (ThreadMapping::warp_per_cell): the axis on dimension x in blocks of
/// `warps` cells, one per warp; the others one cell per block.
GpuMapped map_cells_to_warps(const std::vector<const ForNode*>& loops, const Stmt& inner,
                             const std::vector<int>& dims, int warps) {
    const ScalarType t = loops[0]->var.type();
    const ScalarType i32 = ScalarType::Int32;
    const char* names = "xyz";
    Expr warp = VarNode::make(i32, "warp", VarRole::Counter, nullptr, -1);
    Expr lane = VarNode::make(i32, "lane", VarRole::Counter, nullptr, -1);
    std::vector<Stmt> cell;
    std::vector<Expr> blocks;
    Expr inside; // the warp's cell lies in the space along x
    for (std::size_t i = 0; i < loops.size(); ++i) {
        const ForNode* f = loops[i];
        const std::string axis = f->axis < 3 ? std::string(1, names[f->axis]) : std::to_string(f->axis);
        blocks.push_back(VarNode::make(t, "block_" + axis, VarRole::Counter, nullptr, -1));
        Expr n = blocks.back();
        if (dims[i] == 0) {
            Expr w = warp.type() == t ? warp : CastNode::make(t, warp);
            n = add(mul(n, ConstNode::make_int(t, warps)), w);
            inside = BinaryNode::make(BinaryOp::Lt, n, blocks_for(f, f->step));
        }
        Expr at = is_const_value(f->step, 1) ? n : mul(n, f->step);
        cell.push_back(DeclareNode::make(f->var, simplify(add(f->start, at))));
    }
    cell.push_back(ForNode::make(lane, ConstNode::make_int(i32, 0), ConstNode::make_int(i32, kWarpSize),
                                 ConstNode::make_int(i32, 1), share_among_lanes(inner, lane), -1,
                                 ForKind::WarpLane, 0));
    if (!inside.defined()) throw InternalError("map_to_gpu: a warp per cell needs an axis along x");
    Stmt body = IfThenNode::make(inside, BlockNode::make(std::move(cell)));
    body = ForNode::make(warp, ConstNode::make_int(i32, 0), ConstNode::make_int(i32, warps),
                         ConstNode::make_int(i32, 1), body, -1, ForKind::GpuWarp, 0);
    for (std::size_t i = loops.size(); i-- > 0;) {
        const ForNode* f = loops[i];
        Expr count = blocks_for(f, f->step);
        if (dims[i] == 0) {
            Expr per = ConstNode::make_int(t, warps);
            count = simplify(BinaryNode::make(BinaryOp::Div, add(count, ConstNode::make_int(t, warps - 1)), per));
        }
        body = ForNode::make(blocks[i], ConstNode::make_int(t, 0), count, ConstNode::make_int(t, 1), body,
                             f->axis, ForKind::GpuBlock, dims[i]);
    }
    return {body, {}};
}

} // namespace

GpuMapped map_to_gpu(const Stmt& loop_nest, const ThreadMapping& mapping) {
    // Peel the perfect nest: one For per spatial axis, axis 0 outermost.
    std::vector<const ForNode*> loops;
    Stmt inner = loop_nest;
    while (auto f = inner.as<ForNode>()) {
        loops.push_back(f);
        inner = f->body;
    }
    if (loops.empty())
        throw InternalError("map_to_gpu expects a loop nest; run lower_iteration_space first");
    auto dim_of_axis = [&](int axis) {
        const auto& a = mapping.axis_of_dim;
        auto it = std::find(a.begin(), a.end(), axis);
        return it == a.end() ? -1 : int(it - a.begin());
    };
    if (mapping.tiles || mapping.block_per_cell || mapping.warp_per_cell) {
        std::vector<int> dims;
        for (const ForNode* f : loops) {
            dims.push_back(dim_of_axis(f->axis));
            if (dims.back() < 0)
                throw InternalError("map_to_gpu: blocks need every axis on the grid (check_schedule)");
        }
        if (mapping.warp_per_cell) return map_cells_to_warps(loops, inner, dims, mapping.block[0] / kWarpSize);
        return mapping.tiles ? map_tiles(loops, inner, mapping, dims)
                             : map_cells_to_blocks(loops, inner, dims);
    }

    Stmt body = inner;
    // Unmapped axes (only in 4D) stay serial loops, innermost.
    for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
        const ForNode* f = *it;
        if (dim_of_axis(f->axis) >= 0) continue;
        body = ForNode::make(f->var, f->start, f->stop, f->step, body, f->axis);
    }
    // A thread that computes K cells along one axis: an unrolled loop over its cells, each a
    // grid loop that starts `cell` steps later and strides K steps, so that thread g computes
    // cells g * K + cell. The loop sits inside the other axes' grid loops.
    const ForNode* coarse = nullptr;
    int coarse_k = 1;
    for (const ForNode* f : loops)
        if (int dim = dim_of_axis(f->axis); dim >= 0 && mapping.cells_per_thread[dim] > 1) {
            coarse = f;
            coarse_k = mapping.cells_per_thread[dim];
        }
    if (coarse) {
        ScalarType t = coarse->var.type();
        Expr cell = VarNode::make(t, "cell", VarRole::Counter, nullptr, -1);
        Expr k = ConstNode::make_int(t, coarse_k);
        Expr offset = is_const_value(coarse->step, 1) ? cell : mul(cell, coarse->step);
        Expr start = is_const_value(coarse->start, 0) ? offset : add(offset, coarse->start);
        Stmt cells = ForNode::make(coarse->var, start, coarse->stop, simplify(mul(k, coarse->step)),
                                   body, coarse->axis, ForKind::GpuGrid, dim_of_axis(coarse->axis));
        body = ForNode::make(cell, ConstNode::make_int(t, 0), k, ConstNode::make_int(t, 1), cells, -1);
    }
    // The other mapped axes: one grid loop each, axis 0 outermost (a bound may read the counter
    // of an enclosing axis).
    for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
        const ForNode* f = *it;
        int dim = dim_of_axis(f->axis);
        if (dim < 0 || f == coarse) continue;
        body = ForNode::make(f->var, f->start, f->stop, f->step, body, f->axis, ForKind::GpuGrid, dim);
    }
    return {body, {}};
}

Stmt lane_strided_loop(const ForNode* f, const Expr& lane, const Stmt& body) {
    const ScalarType t = f->var.type();
    Expr own = lane.type() == t ? lane : CastNode::make(t, lane);
    if (!is_const_value(f->step, 1)) own = mul(own, f->step);
    Expr first = is_const_value(f->start, 0) ? own : add(f->start, own);
    Expr stride = simplify(mul(ConstNode::make_int(t, kWarpSize), f->step));
    return ForNode::make(f->var, first, f->stop, stride, body, f->axis, f->kind);
}

} // namespace loom::ir
