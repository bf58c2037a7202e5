#include "compiler/passes/gpu_mapping.hpp"

#include "compiler/passes/simplify.hpp"
#include "runtime/errors.hpp"

#include <algorithm>
#include <vector>

namespace loom {
using namespace ir;

Stmt map_to_gpu(const Stmt& loop_nest, const FieldInfo& primary, std::array<int, 3>& axis_of_dim) {
    // Peel the perfect nest: one For per spatial axis, axis 0 outermost.
    std::vector<const ForNode*> loops;
    Stmt inner = loop_nest;
    while (auto f = inner.as<ForNode>()) {
        loops.push_back(f);
        inner = f->body;
    }
    if (int(loops.size()) != primary.spatial_dims)
        throw InternalError("map_to_gpu expects one loop per spatial axis; run "
                            "lower_iteration_space first");

    std::vector<int> order = primary.spatial_axes_fastest_first();
    axis_of_dim = {-1, -1, -1};
    for (int dim = 0; dim < 3 && dim < int(order.size()); ++dim) axis_of_dim[dim] = order[dim];
    auto dim_of_axis = [&](int axis) {
        auto it = std::find(axis_of_dim.begin(), axis_of_dim.end(), axis);
        return it == axis_of_dim.end() ? -1 : int(it - axis_of_dim.begin());
    };

    std::vector<Stmt> decls;
    Expr guard;
    Stmt body = inner;
    // Unmapped axes (only in 4D) stay loops, innermost first, inside the guard.
    for (auto it = loops.rbegin(); it != loops.rend(); ++it) {
        const ForNode* f = *it;
        if (dim_of_axis(f->axis) >= 0) continue;
        body = ForNode::make(f->var, f->start, f->stop, f->step, body, f->axis);
    }
    for (const ForNode* f : loops) {
        int dim = dim_of_axis(f->axis);
        if (dim < 0) continue;
        ScalarType t = f->var.type();
        Expr pos = ThreadIndexNode::make(t, dim);
        if (!is_const_value(f->step, 1)) pos = BinaryNode::make(BinaryOp::Mul, pos, f->step);
        if (!is_const_value(f->start, 0)) pos = BinaryNode::make(BinaryOp::Add, pos, f->start);
        decls.push_back(DeclareNode::make(f->var, pos));
        Expr in_range = BinaryNode::make(BinaryOp::Lt, f->var, f->stop);
        guard = guard.defined() ? BinaryNode::make(BinaryOp::And, guard, in_range) : in_range;
    }
    decls.push_back(IfThenNode::make(guard, body));
    return BlockNode::make(std::move(decls));
}

} // namespace loom
