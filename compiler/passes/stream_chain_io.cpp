#include "compiler/passes/stream_chain_io.hpp"

#include "compiler/ir/equality.hpp"
#include "compiler/ir/visitor.hpp"
#include "compiler/passes/simplify.hpp"

#include <algorithm>

namespace loom::ir {

namespace {

/// Whether `e` reads variable `v`.
bool uses_var(const Expr& e, const VarNode* v) {
    for (const Expr& s : subexpressions(e))
        if (s.get() == v) return true;
    return false;
}

/// A field's element, as a load or a store names it.
struct Access {
    BufferPtr buffer;
    std::vector<Expr> indices;
};

/// Whether `by_k` (one access per component k, in order) are `X[..., cell, ..., k]`: one 16-bit
/// field X of type `t`, the same indices but the last, which is k, `cell` (the loop's counter)
/// indexing an axis of element stride 1 and no other.
bool rows_along_cells(const std::vector<Access>& by_k, const VarNode* cell, ScalarType t) {
    if (by_k.empty()) return false;
    const Access& a0 = by_k.front();
    if (!a0.buffer || a0.buffer->scope != Scope::Global || !a0.buffer->field || a0.buffer->type != t ||
        a0.indices.size() < 2)
        return false;
    int at = -1; // the axis the cell indexes
    for (std::size_t i = 0; i + 1 < a0.indices.size(); ++i)
        if (a0.indices[i].get() == cell) at = int(i);
    if (at < 0 || !is_const_value(a0.buffer->strides[std::size_t(at)], 1.0)) return false;
    for (std::size_t k = 0; k < by_k.size(); ++k) {
        const Access& a = by_k[k];
        if (a.buffer.get() != a0.buffer.get() || a.indices.size() != a0.indices.size() ||
            !is_const_value(a.indices.back(), double(k)))
            return false;
        for (std::size_t i = 0; i + 1 < a.indices.size(); ++i) {
            if (!structurally_equal(a.indices[i], a0.indices[i])) return false;
            if (int(i) != at && uses_var(a.indices[i], cell)) return false;
        }
    }
    return true;
}

/// `s`'s literal index into a local array, or -1.
std::int64_t literal_index(const std::vector<Expr>& indices) {
    return indices.size() == 1 && is_const(indices[0]) ? indices[0].as<ConstNode>()->int_value : -1;
}

/// The chain's input fills, when they are `in[k] = X[..., cell, ..., k]` once per k (see
/// rows_along_cells); empty otherwise.
std::vector<Access> input_rows(const Stmt& body, const MmaChainNode& chain, const VarNode* cell) {
    struct Stores : IRVisitor {
        const BufferInfo* in;
        std::vector<const BufferStoreNode*> out;
        void visit_BufferStore(const BufferStoreNode* s) override {
            if (s->buffer.get() == in) out.push_back(s);
            IRVisitor::visit_BufferStore(s);
        }
    } stores;
    stores.in = chain.input.get();
    stores.visit(body);
    std::vector<Access> by_k(std::size_t(chain.layers.front().inputs));
    if (stores.out.size() != by_k.size()) return {};
    for (const BufferStoreNode* s : stores.out) {
        const std::int64_t k = literal_index(s->indices);
        auto l = s->value.as<BufferLoadNode>();
        if (k < 0 || k >= std::int64_t(by_k.size()) || by_k[std::size_t(k)].buffer || !l) return {};
        by_k[std::size_t(k)] = {l->buffer, l->indices};
    }
    return rows_along_cells(by_k, cell, chain.operand) ? by_k : std::vector<Access>{};
}

/// The chain's output stores, when they are `Y[..., cell, ..., n] = out[n]` once per n (see
/// rows_along_cells), statements of the chain's own block after it, and `out` read nowhere
/// else; empty otherwise.
std::vector<Access> output_rows(const Stmt& body, const MmaChainNode& chain, const VarNode* cell) {
    struct Find : IRVisitor {
        const MmaChainNode* chain;
        const BlockNode* block = nullptr;
        int reads = 0;
        void visit_Block(const BlockNode* b) override {
            for (const Stmt& s : b->stmts)
                if (s.get() == chain) block = b;
            IRVisitor::visit_Block(b);
        }
        void visit_BufferLoad(const BufferLoadNode* l) override {
            reads += l->buffer.get() == chain->output.get();
            IRVisitor::visit_BufferLoad(l);
        }
    } find;
    find.chain = &chain;
    find.visit(body);
    const int n = chain.layers.back().outputs;
    if (!find.block || find.reads != n) return {};
    std::vector<Access> by_n(static_cast<std::size_t>(n));
    bool after = false;
    for (const Stmt& s : find.block->stmts) {
        after = after || s.get() == &chain;
        auto st = s.as<BufferStoreNode>();
        auto l = st ? st->value.as<BufferLoadNode>() : nullptr;
        if (!after || !l || l->buffer.get() != chain.output.get()) continue;
        const std::int64_t k = literal_index(l->indices);
        if (k < 0 || k >= n || by_n[std::size_t(k)].buffer) return {};
        by_n[std::size_t(k)] = {st->buffer, st->indices};
    }
    for (const Access& a : by_n)
        if (!a.buffer) return {};
    return rows_along_cells(by_n, cell, chain.operand) ? by_n : std::vector<Access>{};
}

/// `body` without the arrays the stream replaces (their allocations, their stores and the
/// comments that name them), its chain given `stream`.
class Stream : public IRMutator {
public:
    Stream(const MmaChainNode& chain, std::shared_ptr<const ChainStream> stream)
        : in_(chain.input.get()), out_(stream->outputs() ? chain.output.get() : nullptr), stream_(std::move(stream)) {}

protected:
    bool gone(const BufferInfo* b) const { return b == in_ || b == out_; }
    Stmt visit_Allocate(const AllocateNode* a, const Stmt& self) override {
        return gone(a->buffer.get()) ? mutate(a->body) : IRMutator::visit_Allocate(a, self);
    }
    // The input fills, and the output stores with the comment before each.
    Stmt visit_Block(const BlockNode* b, const Stmt&) override {
        std::vector<Stmt> out;
        for (const Stmt& s : b->stmts) {
            if (auto st = s.as<BufferStoreNode>()) {
                auto l = st->value.as<BufferLoadNode>();
                if (gone(st->buffer.get()) || (out_ && l && l->buffer.get() == out_)) {
                    if (!out.empty() && out.back().is<CommentNode>() && !gone(st->buffer.get())) out.pop_back();
                    continue;
                }
            }
            if (auto c = s.as<CommentNode>(); c && c->text.rfind(in_->name + ":", 0) == 0) continue;
            out.push_back(mutate(s));
        }
        return BlockNode::make(std::move(out));
    }
    Stmt visit_MmaChain(const MmaChainNode* n, const Stmt&) override {
        return MmaChainNode::make(n->output, n->input, n->layers, n->operand, n->weights, n->biases, n->tile, stream_);
    }

private:
    const BufferInfo* in_;
    const BufferInfo* out_;
    std::shared_ptr<const ChainStream> stream_;
};

/// Whether `chain` lies in `s` through blocks, allocations, conditions that do not read the cell
/// and the grid loops along y and z (the same for all the warp's tiles), so that it runs once in
/// every tile of a warp or in none; `before` gets the statements that run before it.
bool reaches_directly(const Stmt& s, const MmaChainNode* chain, const VarNode* cell, std::vector<Stmt>& before) {
    if (s.get() == chain) return true;
    if (auto a = s.as<AllocateNode>()) return reaches_directly(a->body, chain, cell, before);
    if (auto i = s.as<IfThenNode>(); i && !uses_var(i->cond, cell))
        return reaches_directly(i->then_case, chain, cell, before);
    // The grid loops along y and z: each thread runs its row once (at most), the same in every tile.
    if (auto f = s.as<ForNode>(); f && f->kind == ForKind::GpuGrid && !uses_var(f->start, cell) &&
                                  !uses_var(f->stop, cell))
        return reaches_directly(f->body, chain, cell, before);
    if (auto b = s.as<BlockNode>())
        for (const Stmt& x : b->stmts) {
            if (reaches_directly(x, chain, cell, before)) return true;
            before.push_back(x);
        }
    return false;
}

const MmaChainNode* only_chain(const Stmt& body) {
    struct Find : IRVisitor {
        std::vector<const MmaChainNode*> chains;
        void visit_MmaChain(const MmaChainNode* n) override { chains.push_back(n); }
    } f;
    f.visit(body);
    return f.chains.size() == 1 ? f.chains[0] : nullptr;
}

} // namespace

Stmt stream_chain_io(const ForNode* loop, const Expr& first, const Expr& warps, const Expr& tile, int tiles) {
    const ScalarType t = loop->var.type();
    const MmaChainNode* chain = only_chain(loop->body);
    if (!chain || !chain->streamable() || !is_const_value(loop->step, 1.0)) return loop->body;
    const VarNode* cell = loop->var.as<VarNode>();
    const std::vector<Access> in = input_rows(loop->body, *chain, cell);
    if (in.empty()) return loop->body;
    // The copy of a tile is issued a tile ahead: nothing in the tile may write the inputs' field
    // before the chain reads them, and the chain runs once in each of the warp's tiles (not in a
    // loop, nor under a condition on the cell).
    std::vector<Stmt> before;
    if (!reaches_directly(loop->body, chain, cell, before)) return loop->body;
    for (const Stmt& s : before)
        if (written_fields(s).count(in.front().buffer->field_of())) return loop->body;
    const std::vector<Access> out = output_rows(loop->body, *chain, cell);
    auto op = [](BinaryOp o, Expr a, Expr b) { return BinaryNode::make(o, std::move(a), std::move(b)); };
    auto i32 = [](std::int64_t v) { return ConstNode::make_int(ScalarType::Int32, v); };
    // Component 0 or 1 (0 if it is the only one) of the rows at cell `c`, as a load.
    auto load_at = [&](const std::vector<Access>& rows, int k, const Expr& c) {
        const Access& a = rows[std::size_t(std::min<std::size_t>(std::size_t(k), rows.size() - 1))];
        std::vector<Expr> idx;
        for (const Expr& i : a.indices) idx.push_back(simplify(replace_var(i, loop->var, c)));
        return BufferLoadNode::make(a.buffer, std::move(idx));
    };
    // The warp's next tile starts 32 G cells further (G warps), if it has one.
    const Expr next = simplify(op(BinaryOp::Add, first, op(BinaryOp::Mul, warps, ConstNode::make_int(t, 32))));
    // Cells in range from `c` on, at most 32 (an int32 even where the counter is int64).
    auto remaining = [&](const Expr& c) {
        Expr left = op(BinaryOp::Min, op(BinaryOp::Sub, loop->stop, c), ConstNode::make_int(t, 32));
        return simplify(t == ScalarType::Int32 ? left : CastNode::make(ScalarType::Int32, left));
    };
    Expr next_valid = tiles > 1 ? SelectNode::make(op(BinaryOp::Lt, tile, i32(tiles - 1)), remaining(next), i32(0)) : i32(0);
    Expr starts = tiles > 1 ? op(BinaryOp::Eq, tile, i32(0)) : ConstNode::make_bool(true);
    auto stream = std::make_shared<const ChainStream>(ChainStream{
        load_at(in, 0, first), load_at(in, 1, first), remaining(first), load_at(in, 0, next), simplify(next_valid),
        simplify(starts), out.empty() ? Expr() : load_at(out, 0, first), out.empty() ? Expr() : load_at(out, 1, first)});
    return Stream(*chain, std::move(stream)).mutate(loop->body);
}

} // namespace loom::ir
