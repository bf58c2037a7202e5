#include "compiler/passes/gpu_mapping.hpp"

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
} // namespace

Stmt map_to_gpu(const Stmt& loop_nest, const ThreadMapping& mapping) {
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
    return body;
}

} // namespace loom::ir
