#include "compiler/passes/warp_lockstep.hpp"

#include "compiler/ir/printer.hpp"
#include "compiler/ir/visitor.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>

#include <functional>
#include <map>
#include <set>
#include <utility>

namespace loom::ir {

namespace {

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
    for (int distance = kWarpSize / 2; distance >= 1; distance /= 2) {
        // i xor distance, distance a power of two: i + distance where that bit of i is 0
        Expr bit = distance > 1 ? bin(BinaryOp::Div, i, i32(distance)) : i;
        Expr low = bin(BinaryOp::Eq, bin(BinaryOp::Mod, bit, i32(2)), i32(0));
        Expr other = SelectNode::make(low, bin(BinaryOp::Add, i, i32(distance)), bin(BinaryOp::Sub, i, i32(distance)));
        Expr combined = bin(op, BufferLoadNode::make(*from, i), BufferLoadNode::make(*from, other));
        rounds.push_back(ForNode::make(i, i32(0), i32(kWarpSize), i32(1), BufferStoreNode::make(*to, i, combined), -1));
        std::swap(from, to);
    }
    result = *from;
    return rounds;
}

/// Local arrays allocated around a lane loop and used in it (cache_rows' rows): on the GPU each
/// lane's own registers; here one array of 32 times the size, lane l's part from l * size.
class LaneArrays : public IRMutator {
protected:
    Stmt visit_Allocate(const AllocateNode* a, const Stmt& self) override {
        const BufferInfo& b = *a->buffer;
        if (b.scope != Scope::Local || !used_in_lanes(a->body, a->buffer)) return IRMutator::visit_Allocate(a, self);
        const std::int64_t size = b.size();
        BufferPtr wide = make_buffer(b.name, b.type, Scope::Local, {kWarpSize * size});
        wide_[a->buffer.get()] = {wide, size};
        Stmt body = mutate(a->body);
        wide_.erase(a->buffer.get());
        return AllocateNode::make(wide, body);
    }
    Stmt visit_For(const ForNode* f, const Stmt& self) override {
        if (f->kind != ForKind::WarpLane) return IRMutator::visit_For(f, self);
        Expr outer = lane_;
        lane_ = f->var;
        Stmt s = IRMutator::visit_For(f, self);
        lane_ = outer;
        return s;
    }
    Expr visit_BufferLoad(const BufferLoadNode* l, const Expr& self) override {
        Expr e = IRMutator::visit_BufferLoad(l, self);
        auto n = e.as<BufferLoadNode>();
        auto it = wide_.find(n->buffer.get());
        return it == wide_.end() ? e : BufferLoadNode::make(it->second.first, {at(it->second.second, n->indices)});
    }
    Stmt visit_BufferStore(const BufferStoreNode* s, const Stmt& self) override {
        Stmt st = IRMutator::visit_BufferStore(s, self);
        auto n = st.as<BufferStoreNode>();
        auto it = wide_.find(n->buffer.get());
        return it == wide_.end() ? st
                                 : BufferStoreNode::make(it->second.first, {at(it->second.second, n->indices)}, n->value);
    }

private:
    static bool used_in_lanes(const Stmt& body, const BufferPtr& buffer) {
        struct Find : IRVisitor {
            const BufferInfo* buffer;
            int lanes = 0;
            bool found = false;
            void visit_For(const ForNode* f) override {
                lanes += f->kind == ForKind::WarpLane;
                IRVisitor::visit_For(f);
                lanes -= f->kind == ForKind::WarpLane;
            }
            void visit_BufferLoad(const BufferLoadNode* l) override {
                found |= lanes > 0 && l->buffer.get() == buffer;
                IRVisitor::visit_BufferLoad(l);
            }
            void visit_BufferStore(const BufferStoreNode* s) override {
                found |= lanes > 0 && s->buffer.get() == buffer;
                IRVisitor::visit_BufferStore(s);
            }
        } f;
        f.buffer = buffer.get();
        f.visit(body);
        return f.found;
    }
    Expr at(std::int64_t size, const std::vector<Expr>& indices) const {
        if (!lane_.defined() || indices.size() != 1)
            throw InternalError("warp_lockstep: a lane's own array used outside its lane loop, or not 1-D");
        Expr base = BinaryNode::make(BinaryOp::Mul, lane_, i32(size));
        Expr i = indices[0].type() == ScalarType::Int32 ? indices[0] : CastNode::make(ScalarType::Int32, indices[0]);
        return BinaryNode::make(BinaryOp::Add, base, i);
    }

    Expr lane_;
    std::map<const BufferInfo*, std::pair<BufferPtr, std::int64_t>> wide_;
};

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
        // The lane's statements, blocks within blocks flattened (a warp per cell's reductions
        // stand in their assignments' blocks).
        std::vector<Stmt> stmts;
        std::function<void(const Stmt&)> flatten = [&](const Stmt& s) {
            if (auto b = s.as<BlockNode>())
                for (const Stmt& x : b->stmts) flatten(x);
            else
                stmts.push_back(s);
        };
        flatten(loop->body);
        std::size_t r = 0;
        const DeclareNode* reduce = nullptr;
        for (; r < stmts.size() && !reduce; ++r)
            if (auto d = stmts[r].as<DeclareNode>(); d && d->value.is<WarpReduceNode>()) reduce = d;
        if (!reduce) return self;
        --r;
        std::vector<Stmt> before(stmts.begin(), stmts.begin() + std::ptrdiff_t(r));
        std::vector<Stmt> after(stmts.begin() + std::ptrdiff_t(r) + 1, stmts.end());
        // What a lane declares before the reduction and reads after it (a LayerNorm's mean in
        // its later passes) waits in an array of 32, one element per lane.
        std::set<const ExprNode*> top;
        for (const Stmt& s : before)
            if (auto d = s.as<DeclareNode>()) top.insert(d->var.get());
        const std::set<const ExprNode*> inside = declared_variables(BlockNode::make(before));
        const std::set<const ExprNode*> own = declared_variables(BlockNode::make(after)); // its loops' c
        std::vector<Expr> kept;
        std::set<const ExprNode*> seen;
        for (const Expr& e : subexpressions(BlockNode::make(after))) {
            if (!inside.count(e.get()) || own.count(e.get()) || !seen.insert(e.get()).second) continue;
            if (!top.count(e.get()))
                throw InternalError(fmt::format("warp_lockstep: the statements after `{}` read `{}`, which the "
                                                "statements before it declare in a nested scope",
                                                to_string(stmts[r]), to_string(e)));
            kept.push_back(e);
        }
        std::vector<BufferPtr> waiting;
        for (const Expr& v : kept) {
            waiting.push_back(make_buffer(v.as<VarNode>()->name + "_of_lanes", v.type(), Scope::Local, {kWarpSize}));
            before.push_back(BufferStoreNode::make(waiting.back(), loop->var, v));
            after.insert(after.begin(), DeclareNode::make(v, BufferLoadNode::make(waiting.back(), loop->var)));
        }
        auto w = reduce->value.as<WarpReduceNode>();
        const std::string& name = reduce->var.as<VarNode>()->name;
        BufferPtr lanes = make_buffer(name + "_lanes", w->type, Scope::Local, {kWarpSize});
        BufferPtr swap = make_buffer(name + "_swap", w->type, Scope::Local, {kWarpSize});
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
        for (const BufferPtr& b : waiting) out.allocate(b);
        out.allocate(lanes);
        out.add(lane_loop(std::move(before)));
        out.allocate(swap);
        out.add(rounds);
        out.add(split(rest));
        return out.build();
    }
};

} // namespace

Stmt warp_lockstep(const Stmt& body) { return Lockstep().mutate(LaneArrays().mutate(body)); }

} // namespace loom::ir
