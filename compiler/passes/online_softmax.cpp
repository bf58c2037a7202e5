#include "compiler/passes/online_softmax.hpp"

#include "compiler/ir/equality.hpp"
#include "compiler/ir/visitor.hpp"
#include "compiler/passes/fuse_reductions.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace loom::ir {

Expr online_rescale(const Expr& from, const Expr& to) {
    const ScalarType t = from.type();
    Expr empty = BinaryNode::make(BinaryOp::Eq, from, ConstNode::make(t, -INFINITY));
    return SelectNode::make(empty, ConstNode::make(t, 0.0),
                            CallNode::make(MathFn::Exp, {BinaryNode::make(BinaryOp::Sub, from, to)}));
}

const VarNode* rescaled_by(const Stmt& update, const Expr& acc) {
    // acc = term > m ? acc * scale + 1 : acc + scale
    auto a = update.as<AssignNode>();
    auto pick = a && a->lhs.same_as(acc) ? a->rhs.as<SelectNode>() : nullptr;
    auto grows = pick ? pick->cond.as<BinaryNode>() : nullptr;
    if (!grows || grows->op != BinaryOp::Gt) return nullptr;
    auto rescaled = pick->if_true.as<BinaryNode>(), added = pick->if_false.as<BinaryNode>();
    if (!rescaled || rescaled->op != BinaryOp::Add || !added || added->op != BinaryOp::Add || !added->a.same_as(acc))
        return nullptr;
    auto scaled = rescaled->a.as<BinaryNode>();
    if (!scaled || scaled->op != BinaryOp::Mul || !scaled->a.same_as(acc)) return nullptr;
    auto m = grows->b.as<VarNode>();
    return m && m->role == VarRole::Accumulator ? m : nullptr;
}

namespace {

Expr bin(BinaryOp op, Expr a, Expr b) { return BinaryNode::make(op, std::move(a), std::move(b)); }

/// An accumulator loop of one accumulator whose body is nothing but its update
/// `acc = acc op term`, as lower_reductions makes one: the pieces, or no loop.
struct Simple {
    const DeclareNode* declaration = nullptr;
    const ForNode* loop = nullptr;
    BinaryOp op = BinaryOp::Add;
    Expr term;
};

Simple simple_loop(const std::vector<Stmt>& stmts, std::size_t i) {
    Simple s;
    auto d = stmts[i].as<DeclareNode>();
    auto loop = i + 1 < stmts.size() ? stmts[i + 1].as<ForNode>() : nullptr;
    if (!d || d->var.as<VarNode>()->role != VarRole::Accumulator || !loop || loop->kind != ForKind::Serial) return s;
    auto b = loop->body.as<BlockNode>();
    auto update = b && b->stmts.size() == 1 ? b->stmts[0].as<AssignNode>() : loop->body.as<AssignNode>();
    auto rhs = update && update->lhs.same_as(d->var) ? update->rhs.as<BinaryNode>() : nullptr;
    if (!rhs || !rhs->a.same_as(d->var)) return s;
    s.declaration = d;
    s.loop = loop;
    s.op = rhs->op;
    s.term = rhs->b;
    return s;
}

bool same_range(const ForNode* a, const ForNode* b) {
    return structurally_equal(a->start, b->start) && structurally_equal(a->stop, b->stop) &&
           structurally_equal(a->step, b->step) && a->var.type() == b->var.type();
}

class Online : public IRMutator {
public:
    explicit Online(std::int64_t min_row_bytes) : min_row_bytes_(min_row_bytes) {}
    bool applied = false;

protected:
    Stmt visit_Block(const BlockNode* b, const Stmt& self) override {
        // The list with nested lists spliced in (a statement and the reductions before it form
        // one: a Block is no scope).
        std::vector<Stmt> stmts;
        bool changed = false;
        splice_mutated(b, *this, stmts, changed);
        std::vector<bool> gone(stmts.size(), false);
        for (std::size_t i = 0; i < stmts.size(); ++i) {
            if (gone[i]) continue;
            Simple top = simple_loop(stmts, i);
            if (!top.loop || top.op != BinaryOp::Max || !is_float(top.term.type()) ||
                !long_enough(top.loop, top.term.type())) continue;
            // The maximum's names: its accumulator and the variables declared as it.
            std::vector<const ExprNode*> names{top.declaration->var.get()};
            for (std::size_t j = i + 2; j < stmts.size(); ++j) {
                if (gone[j]) continue;
                if (auto d = stmts[j].as<DeclareNode>(); d && d->value.is<VarNode>()) {
                    if (std::find(names.begin(), names.end(), d->value.get()) != names.end())
                        names.push_back(d->var.get());
                    continue;
                }
                Simple sum = simple_loop(stmts, j);
                if (!sum.loop || sum.op != BinaryOp::Add || !same_range(top.loop, sum.loop)) continue;
                Expr term = sum.term;
                if (!sum.loop->var.same_as(top.loop->var)) {
                    Stmt renamed = replace_var(stmts[j + 1], sum.loop->var, top.loop->var);
                    term = simple_loop({stmts[j], renamed}, 0).term;
                }
                if (!is_exp_relative_to(term, top.term, names)) continue;
                // The sum moves up to the maximum's loop, its terms computed from the maximum's:
                // nothing between may change what those read (a store to the row).
                if (!may_move_up(stmts, gone, i + 2, j, stmts[i + 1])) continue;
                stmts[i] = pair(top, sum.declaration->var);
                gone[i + 1] = gone[j] = gone[j + 1] = true;
                changed = applied = true;
                break;
            }
        }
        if (!changed) return self;
        std::vector<Stmt> out;
        for (std::size_t i = 0; i < stmts.size(); ++i)
            if (!gone[i]) out.push_back(stmts[i]);
        return BlockNode::make(std::move(out));
    }

private:
    /// Whether the row (terms times the element's size) has at least min_row_bytes_ bytes; a
    /// range that is not a constant may be long.
    bool long_enough(const ForNode* loop, ScalarType t) const {
        auto start = loop->start.as<ConstNode>(), stop = loop->stop.as<ConstNode>(), step = loop->step.as<ConstNode>();
        if (!start || !stop || !step || step->int_value <= 0) return true;
        const std::int64_t terms = (stop->int_value - start->int_value + step->int_value - 1) / step->int_value;
        return terms * (bit_width(t) / 8) >= min_row_bytes_;
    }

    /// Whether `term` is exp(e - m) with `e` structurally `top` and m one of the maximum's names.
    static bool is_exp_relative_to(const Expr& term, const Expr& top, const std::vector<const ExprNode*>& names) {
        auto exp = term.as<CallNode>();
        auto diff = exp && exp->fn == MathFn::Exp ? exp->args[0].as<BinaryNode>() : nullptr;
        if (!diff || diff->op != BinaryOp::Sub || !structurally_equal(diff->a, top)) return false;
        for (const ExprNode* n : names)
            if (diff->b.get() == n) return true;
        return false;
    }

    /// The declarations of the maximum and the sum, then the loop that computes both (as a
    /// Block: the list it stands in is spliced by the passes that read it).
    static Stmt pair(const Simple& top, const Expr& sum) {
        const Expr& max = top.declaration->var;
        const std::string& name = max.as<VarNode>()->name;
        Expr term = VarNode::make(max.type(), name + "_term", VarRole::Temporary);
        Expr next = VarNode::make(max.type(), name + "_next", VarRole::Temporary);
        Expr scale = VarNode::make(max.type(), name + "_scale", VarRole::Temporary);
        // One exp per term: exp(old max - term) where the term is a new maximum (the sum
        // rescaled, the term's own exp(term - next) = 1 added, spelled 1 + (term - next) so that
        // a +inf term makes it NaN as exp(inf - inf) does in two passes and in the warps'
        // combine), else exp(term - max). A NaN term is no new maximum, and its exp makes the
        // sum NaN, as in two passes.
        auto grows = [&] { return bin(BinaryOp::Gt, term, max); };
        std::vector<Stmt> body{
            DeclareNode::make(term, top.term),
            DeclareNode::make(next, bin(BinaryOp::Max, max, term)),
            DeclareNode::make(scale, online_rescale(SelectNode::make(grows(), max, term), next)),
            AssignNode::make(sum, SelectNode::make(grows(),
                                                   bin(BinaryOp::Add, bin(BinaryOp::Mul, sum, scale),
                                                       bin(BinaryOp::Add, ConstNode::make(sum.type(), 1.0),
                                                           bin(BinaryOp::Sub, term, next))),
                                                   bin(BinaryOp::Add, sum, scale))),
            AssignNode::make(max, bin(BinaryOp::Max, max, term)),
        };
        const ForNode* loop = top.loop;
        return BlockNode::make({
            CommentNode::make(sum.as<VarNode>()->name + ": online, rescaled whenever " + name +
                              " grows (one pass over the row for both)"),
            DeclareNode::make(max, top.declaration->value),
            DeclareNode::make(sum, ConstNode::make(sum.type(), 0.0)),
            ForNode::make(loop->var, loop->start, loop->stop, loop->step, BlockNode::make(std::move(body)), loop->axis,
                          loop->kind, loop->dim),
        });
    }

    std::int64_t min_row_bytes_;
};

} // namespace

OnlineSoftmax online_softmax(const Stmt& body, std::int64_t min_row_bytes) {
    Online pass(min_row_bytes);
    OnlineSoftmax out;
    out.body = pass.mutate(body);
    out.applied = pass.applied;
    return out;
}

} // namespace loom::ir
