#include "compiler/passes/launch_grid.hpp"

#include "compiler/ir/visitor.hpp"
#include "compiler/passes/simplify.hpp"

#include <loom/errors.hpp>

#include <map>

namespace loom::ir {

namespace {

bool uses_counter(const Expr& e) {
    for (const Expr& s : subexpressions(e))
        if (auto v = s.as<VarNode>(); v && v->role == VarRole::Counter) return true;
    return false;
}

} // namespace

LaunchDescription infer_launch_grid(const Stmt& loop_nest, const ThreadMapping& mapping,
                                    const Schedule& schedule, ScalarType index_type) {
    LaunchDescription L;
    const auto& axis_of_dim = mapping.axis_of_dim;
    L.axis_of_dim = axis_of_dim;
    L.cells_per_thread = mapping.cells_per_thread;
    std::map<int, const ForNode*> loop_of_axis;
    for (Stmt s = loop_nest; auto f = s.as<ForNode>(); s = f->body) loop_of_axis[f->axis] = f;

    if (!schedule.block)
        throw InternalError("infer_launch_grid needs a resolved schedule (a block); run "
                            "choose_schedule first");
    std::array<int, 3> block = *schedule.block;

    for (int dim = 0; dim < 3; ++dim) {
        if (axis_of_dim[dim] < 0) {
            L.extents[dim] = ConstNode::make_int(index_type, 1);
            block[dim] = 1;
            continue;
        }
        const ForNode* f = loop_of_axis.at(axis_of_dim[dim]);
        if (uses_counter(f->start) || uses_counter(f->stop)) {
            L.manual = true;
            L.manual_reason = "the iteration bounds depend on another counter";
        }
        Expr span = BinaryNode::make(BinaryOp::Sub, f->stop, f->start);
        if (!is_const_value(f->step, 1)) {
            Expr step_minus_1 = BinaryNode::make(BinaryOp::Sub, f->step, ConstNode::make_int(f->step.type(), 1));
            span = BinaryNode::make(BinaryOp::Div, BinaryNode::make(BinaryOp::Add, span, step_minus_1), f->step);
        }
        if (int k = mapping.cells_per_thread[dim]; k > 1) {
            Expr kk = ConstNode::make_int(span.type(), k);
            Expr k_minus_1 = ConstNode::make_int(span.type(), k - 1);
            span = BinaryNode::make(BinaryOp::Div, BinaryNode::make(BinaryOp::Add, span, k_minus_1), kk);
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
