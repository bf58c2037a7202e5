#include "compiler/passes/warp_lockstep.hpp"

#include "compiler/ir/printer.hpp"
#include "compiler/ir/visitor.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>

#include <set>
#include <utility>

namespace loom::ir {

namespace {

constexpr int kLanes = 32;

Expr i32(std::int64_t v) { return ConstNode::make_int(ScalarType::Int32, v); }
Expr bin(BinaryOp op, Expr a, Expr b) { return BinaryNode::make(op, std::move(a), std::move(b)); }

/// The rounds of the shuffles over `lanes`: for each distance 16 ... 1, every element i combined
/// with element i xor distance, `mine op other`, from one array into the other, so every round
/// reads the previous round's values. Returns the array that holds the result (the fifth round
/// writes `swap`).
std::vector<Stmt> butterfly(const BufferPtr& lanes, const BufferPtr& swap, BinaryOp op, BufferPtr& result) {
    Expr i = VarNode::make(ScalarType::Int32, "i", VarRole::LoopIndex);
    std::vector<Stmt> rounds;
    const BufferPtr* from = &lanes;
    const BufferPtr* to = &swap;
    for (int distance = kLanes / 2; distance >= 1; distance /= 2) {
        // i xor distance, distance a power of two: i + distance where that bit of i is 0
        Expr bit = distance > 1 ? bin(BinaryOp::Div, i, i32(distance)) : i;
        Expr low = bin(BinaryOp::Eq, bin(BinaryOp::Mod, bit, i32(2)), i32(0));
        Expr other = SelectNode::make(low, bin(BinaryOp::Add, i, i32(distance)), bin(BinaryOp::Sub, i, i32(distance)));
        Expr combined = bin(op, BufferLoadNode::make(*from, i), BufferLoadNode::make(*from, other));
        rounds.push_back(ForNode::make(i, i32(0), i32(kLanes), i32(1), BufferStoreNode::make(*to, i, combined), -1));
        std::swap(from, to);
    }
    result = *from;
    return rounds;
}

class Lockstep : public IRMutator {
protected:
    Stmt visit_For(const ForNode* f, const Stmt& self) override {
        Stmt s = IRMutator::visit_For(f, self);
        auto loop = s.as<ForNode>();
        return loop->kind == ForKind::WarpLane ? split(s) : s;
    }

private:
    /// The lane loop `loop` split at its first top-level warp reduction, and what follows
    /// split in turn.
    Stmt split(const Stmt& self) {
        auto loop = self.as<ForNode>();
        auto block = loop->body.as<BlockNode>();
        std::vector<Stmt> stmts = block ? block->stmts : std::vector<Stmt>{loop->body};
        std::size_t r = 0;
        const DeclareNode* reduce = nullptr;
        for (; r < stmts.size() && !reduce; ++r)
            if (auto d = stmts[r].as<DeclareNode>(); d && d->value.is<WarpReduceNode>()) reduce = d;
        if (!reduce) return self;
        --r;
        std::vector<Stmt> before(stmts.begin(), stmts.begin() + std::ptrdiff_t(r));
        std::vector<Stmt> after(stmts.begin() + std::ptrdiff_t(r) + 1, stmts.end());
        const std::set<const ExprNode*> inside = declared_variables(BlockNode::make(before));
        for (const Expr& e : subexpressions(BlockNode::make(after)))
            if (inside.count(e.get()))
                throw InternalError(fmt::format("warp_lockstep: the statements after `{}` read `{}`, which the "
                                                "statements before it declare",
                                                to_string(stmts[r]), to_string(e)));
        auto w = reduce->value.as<WarpReduceNode>();
        const std::string& name = reduce->var.as<VarNode>()->name;
        BufferPtr lanes = make_buffer(name + "_lanes", w->type, Scope::Local, {kLanes});
        BufferPtr swap = make_buffer(name + "_swap", w->type, Scope::Local, {kLanes});
        before.push_back(BufferStoreNode::make(lanes, loop->var, w->value));
        BufferPtr result;
        std::vector<Stmt> rounds = butterfly(lanes, swap, w->op, result);
        after.insert(after.begin(), DeclareNode::make(reduce->var, BufferLoadNode::make(result, loop->var)));
        auto lane_loop = [&](std::vector<Stmt> body) {
            return ForNode::make(loop->var, loop->start, loop->stop, loop->step, BlockNode::make(std::move(body)),
                                 loop->axis, loop->kind, loop->dim);
        };
        Stmt rest = lane_loop(std::move(after));
        StmtList out;
        out.allocate(lanes);
        out.add(lane_loop(std::move(before)));
        out.allocate(swap);
        out.add(rounds);
        out.add(split(rest));
        return out.build();
    }
};

} // namespace

Stmt warp_lockstep(const Stmt& body) { return Lockstep().mutate(body); }

} // namespace loom::ir
