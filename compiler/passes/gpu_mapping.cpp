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
    // Unmapped axes (only in 4D) stay loops, innermost first, inside the guard.
    for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
        const ForNode* f = *it;
        if (dim_of_axis(f->axis) >= 0) continue;
        body = ForNode::make(f->var, f->start, f->stop, f->step, body, f->axis);
    }

    std::vector<Stmt> decls;
    Expr guard;
    const ForNode* coarse = nullptr;
    int coarse_k = 1;
    for (const ForNode* f : loops) {
        int dim = dim_of_axis(f->axis);
        if (dim < 0) continue;
        ScalarType t = f->var.type();
        int k = mapping.cells_per_thread[dim];
        if (k > 1) { // declared per cell inside the unrolled loop below
            coarse = f;
            coarse_k = k;
            continue;
        }
        Expr pos = ThreadIndexNode::make(t, dim);
        if (!is_const_value(f->step, 1)) pos = mul(pos, f->step);
        if (!is_const_value(f->start, 0)) pos = add(pos, f->start);
        decls.push_back(DeclareNode::make(f->var, pos));
        Expr in_range = BinaryNode::make(BinaryOp::Lt, f->var, f->stop);
        guard = guard.defined() ? BinaryNode::make(BinaryOp::And, guard, in_range) : in_range;
    }
    if (coarse) {
        // for (cell = 0; cell < K; ++cell) { ctr = index * (K * step) + cell * step + start;
        //                                    if (ctr < stop) body }
        ScalarType t = coarse->var.type();
        Expr cell = VarNode::make(t, "cell", VarRole::Counter, nullptr, -1);
        Expr k = ConstNode::make_int(t, coarse_k);
        Expr first = mul(ThreadIndexNode::make(t, dim_of_axis(coarse->axis)), simplify(mul(k, coarse->step)));
        Expr offset = is_const_value(coarse->step, 1) ? cell : mul(cell, coarse->step);
        Expr pos = add(first, offset);
        if (!is_const_value(coarse->start, 0)) pos = add(pos, coarse->start);
        Stmt per_cell = BlockNode::make(
            {DeclareNode::make(coarse->var, pos),
             IfThenNode::make(BinaryNode::make(BinaryOp::Lt, coarse->var, coarse->stop), body)});
        body = ForNode::make(cell, ConstNode::make_int(t, 0), k, ConstNode::make_int(t, 1), per_cell, -1);
    }
    decls.push_back(guard.defined() ? IfThenNode::make(guard, body) : body);
    return BlockNode::make(std::move(decls));
}

} // namespace loom::ir
