#include "compiler/passes/block_reductions.hpp"

#include "compiler/ir/visitor.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>

#include <functional>
#include <map>

namespace loom::ir {

namespace {

constexpr int kWarp = 32;

Expr i32(std::int64_t v) { return ConstNode::make_int(ScalarType::Int32, v); }

/// A loop over the block's threads along x, from 0 to `n`.
Stmt over_threads(int n, const std::function<Stmt(const Expr&)>& body) {
    Expr t = VarNode::make(ScalarType::Int32, "thread", VarRole::Counter, nullptr, -1);
    return ForNode::make(t, i32(0), i32(n), i32(1), body(t), -1, ForKind::GpuThread, 0);
}

/// `e` with variable `from` replaced by `to`.
template <typename Node>
Node replace_var(const Node& e, const Expr& from, const Expr& to) {
    struct Replace : IRMutator {
        const VarNode* from;
        Expr to;
        Expr visit_Var(const VarNode* v, const Expr& self) override { return v == from ? to : self; }
    } r;
    r.from = from.as<VarNode>();
    r.to = to;
    return r.mutate(e);
}

/// The operator an accumulator loop combines with: its body is `acc = acc op term`, or a block
/// ending so (the terms' own reductions first).
const BinaryNode* update_of(const Stmt& body, const Expr& acc) {
    Stmt last = body;
    if (auto b = body.as<BlockNode>(); b && !b->stmts.empty()) last = b->stmts.back();
    auto a = last.as<AssignNode>();
    if (!a || !a->lhs.same_as(acc)) return nullptr;
    auto op = a->rhs.as<BinaryNode>();
    return op && op->a.same_as(acc) ? op : nullptr;
}

class Share {
public:
    explicit Share(int threads) : threads_(threads) {}

    /// The statements of a cell at block level, with their accumulator loops shared.
    Stmt cell(const Stmt& s) {
        if (auto a = s.as<AllocateNode>()) return AllocateNode::make(a->buffer, cell(a->body));
        auto b = s.as<BlockNode>();
        if (!b) return s;
        StmtList out;
        for (std::size_t i = 0; i < b->stmts.size(); ++i) {
            const Stmt& st = b->stmts[i];
            auto d = st.as<DeclareNode>();
            auto loop = i + 1 < b->stmts.size() ? b->stmts[i + 1].as<ForNode>() : nullptr;
            const BinaryNode* op = nullptr;
            if (d && loop && d->var.as<VarNode>()->role == VarRole::Accumulator &&
                loop->kind == ForKind::Serial && is_const_value(loop->step, 1))
                op = update_of(loop->body, d->var);
            if (!op) {
                out.add(cell(st));
                continue;
            }
            reduce(d, loop, op->op, out);
            ++i; // the loop is done
        }
        return out.build();
    }

private:
    /// The partials live from here to the end of the cell's list (the accumulator reads them).
    void reduce(const DeclareNode* d, const ForNode* loop, BinaryOp op, StmtList& out) {
        const Expr& acc = d->var;
        const std::string& name = acc.as<VarNode>()->name;
        auto partial = make_buffer(name + "_partial", acc.type(), Scope::Shared, {threads_});
        partial->static_shared = true;
        BufferPtr array = partial;
        out.add(CommentNode::make(fmt::format(
            "{}: thread t of {} combines terms t, t + {}, ...; then a tree in shared memory",
            name, threads_, threads_)));
        out.allocate(array);
        // Each thread's share of the terms, into its own accumulator.
        out.add(over_threads(threads_, [&](const Expr& t) {
            Expr mine = VarNode::make(acc.type(), name, VarRole::Accumulator);
            Expr k = loop->var;
            Expr mine_first = loop->start.type() == t.type() ? t : CastNode::make(loop->start.type(), t);
            Expr first = is_const_value(loop->start, 0) ? mine_first
                                                        : BinaryNode::make(BinaryOp::Add, loop->start, mine_first);
            Stmt terms = ForNode::make(k, first, loop->stop, ConstNode::make_int(k.type(), threads_),
                                       replace_var(loop->body, acc, mine), loop->axis, loop->kind);
            return BlockNode::make({DeclareNode::make(mine, d->value), terms,
                                    BufferStoreNode::make(array, t, mine)});
        }));
        out.add(BarrierNode::make());
        // The tree: the upper half onto the lower half, until one value is left. Once the
        // writers (t < s) and the next step's readers all lie in the first warp, a warp
        // barrier orders them; the last step's result is read by the whole block.
        for (int s = threads_ / 2; s >= 1; s /= 2) {
            out.add(over_threads(s, [&](const Expr& t) {
                Expr sum = BinaryNode::make(op, BufferLoadNode::make(array, t),
                                            BufferLoadNode::make(array, BinaryNode::make(BinaryOp::Add, t, i32(s))));
                return BufferStoreNode::make(array, t, sum);
            }));
            out.add(BarrierNode::make(s > 1 && s <= kWarp));
        }
        out.add(DeclareNode::make(acc, BufferLoadNode::make(array, i32(0))));
    }

    int threads_;
};

class InBlocks : public IRMutator {
public:
    explicit InBlocks(int threads) : share_(threads) {}

protected:
    Stmt visit_For(const ForNode* f, const Stmt& self) override {
        if (f->kind != ForKind::GpuBlock) return IRMutator::visit_For(f, self);
        if (f->body.is<ForNode>()) return IRMutator::visit_For(f, self); // an outer block loop
        Stmt body = share_.cell(f->body);
        return ForNode::make(f->var, f->start, f->stop, f->step, body, f->axis, f->kind, f->dim);
    }

private:
    Share share_;
};

} // namespace

Stmt reduce_in_blocks(const Stmt& body, int threads) {
    if (threads < 1 || (threads & (threads - 1)) != 0)
        throw InternalError(fmt::format("reduce_in_blocks: {} threads, not a power of two", threads));
    return InBlocks(threads).mutate(body);
}

} // namespace loom::ir
