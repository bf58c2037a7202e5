#include "compiler/passes/tile_layout.hpp"

#include "compiler/ir/visitor.hpp"
#include "compiler/passes/simplify.hpp"

#include <loom/errors.hpp>

#include <algorithm>
#include <cstdlib>
#include <map>

namespace loom::ir {

std::optional<TileAccess> match_tile_access(const BufferLoadNode* load, const std::vector<BlockTileAxis>& axes,
                                            const std::vector<Expr>& counters) {
    if (load->buffer->scope != Scope::Global || !load->buffer->field) return std::nullopt;
    const FieldInfo& f = *load->buffer->field;
    if (load->flat() && f.array_dims() != 1) return std::nullopt;
    if (f.spatial_dims != int(axes.size())) return std::nullopt;
    TileAccess out;
    out.offsets.assign(axes.size(), 0);
    for (std::size_t i = 0; i < axes.size(); ++i) {
        const Offset at = split_offset(load->indices[std::size_t(axes[i].axis)]);
        if (!at.base.same_as(counters[i]) || std::abs(at.k) > 1024) return std::nullopt;
        out.offsets[i] = int(at.k);
    }
    for (std::size_t c = std::size_t(f.spatial_dims); c < load->indices.size(); ++c) {
        auto k = load->indices[c].as<ConstNode>();
        if (!k) return std::nullopt;
        out.components.push_back(k->int_value);
    }
    return out;
}

std::vector<Expr> tile_counters(const std::vector<BlockTileAxis>& axes) {
    std::vector<Expr> out;
    for (const BlockTileAxis& a : axes) out.push_back(a.counter);
    return out;
}

std::vector<std::size_t> slowest_first(const std::vector<BlockTileAxis>& axes) {
    std::vector<std::size_t> order(axes.size());
    for (std::size_t i = 0; i < axes.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return axes[a].dim > axes[b].dim; });
    return order;
}

TileLayout lay_out_tile(const std::string& name, ScalarType type, const std::vector<BlockTileAxis>& axes,
                        std::vector<int> below, std::vector<int> above) {
    TileLayout t;
    t.below = std::move(below);
    t.above = std::move(above);
    t.extent.assign(axes.size(), 0);
    t.stride.assign(axes.size(), 0);
    const std::vector<std::size_t> order = slowest_first(axes);
    std::int64_t n = 1;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
        t.extent[*it] = axes[*it].span + t.below[*it] + t.above[*it];
        t.stride[*it] = n;
        n *= t.extent[*it];
    }
    std::vector<std::int64_t> shape;
    for (std::size_t i : order) shape.push_back(t.extent[i]);
    auto buffer = make_buffer(name, type, Scope::Shared, shape);
    buffer->static_shared = true;
    t.buffer = buffer;
    t.bytes = std::size_t(n) * std::size_t(bit_width(type) / 8);
    return t;
}

Expr tile_element(const TileLayout& tile, const std::vector<Expr>& position, const std::vector<int>& offsets) {
    const ScalarType type = position[0].type();
    Expr index;
    for (std::size_t i = 0; i < position.size(); ++i) {
        Expr at = BinaryNode::make(BinaryOp::Add, position[i],
                                   ConstNode::make_int(type, offsets[i] + tile.below[i]));
        if (tile.stride[i] != 1) at = BinaryNode::make(BinaryOp::Mul, ConstNode::make_int(type, tile.stride[i]), at);
        index = index.defined() ? BinaryNode::make(BinaryOp::Add, index, at) : at;
    }
    return simplify(index);
}

namespace {
/// The rows form of tile_loop: the tile's rows (along its fastest axis) are split into
/// `row_slots` runs of consecutive rows; each thread keeps one column of one run and walks it in
/// groups of kRowGroup rows, written out one after another, so that its cells come from additions
/// (no division per element) and what neighbouring rows of a group read alike is loaded once
/// (NVRTC merges the equal loads of a group's straight-line code: a 3 x 3 stencil reads 3 x 6
/// elements for 4 rows instead of 36).
constexpr std::int64_t kRowGroup = 4;

/// A copy of a statement whose declared variables (and loop variables) are new ones, so that a
/// group's rows, written out one after another, each declare their own.
class FreshLocals : public IRMutator {
protected:
    Expr visit_Var(const VarNode* v, const Expr& self) override {
        auto it = fresh_.find(v);
        return it == fresh_.end() ? self : it->second;
    }
    Stmt visit_Declare(const DeclareNode* d, const Stmt&) override {
        Expr value = mutate(d->value); // before the variable is renamed: it may not read itself
        return DeclareNode::make(renamed(d->var), value);
    }
    Stmt visit_For(const ForNode* f, const Stmt&) override {
        Expr start = mutate(f->start), stop = mutate(f->stop), step = mutate(f->step);
        Expr var = renamed(f->var);
        return ForNode::make(var, start, stop, step, mutate(f->body), f->axis, f->kind, f->dim);
    }

private:
    Expr renamed(const Expr& var) {
        auto v = var.as<VarNode>();
        Expr fresh = VarNode::make(v->type, v->name, v->role, v->field, v->axis, v->weak);
        fresh_[v] = fresh;
        return fresh;
    }
    std::map<const VarNode*, Expr> fresh_;
};

Stmt tile_rows(const TileLayout& t, const std::vector<BlockTileAxis>& axes, std::int64_t row_slots,
               const std::function<Stmt(const std::vector<Expr>&, const std::vector<Expr>&, const Expr&)>& body) {
    const ScalarType type = axes[0].origin.type();
    auto idx = [type](std::int64_t v) { return ConstNode::make_int(type, v); };
    auto bin = [](BinaryOp op, const Expr& a, const Expr& b) { return BinaryNode::make(op, a, b); };
    const std::vector<std::size_t> order = slowest_first(axes);
    const std::size_t fast = order.back();
    const std::int64_t width = t.extent[fast], rows = t.buffer->size() / width;
    const std::int64_t slots = std::min(rows, row_slots), run = (rows + slots - 1) / slots;
    const std::int64_t group = std::min(run, kRowGroup);
    // One iteration per thread on the GPU (slots * width threads take part); the CPU runs them
    // one after the other, as every cooperative loop.
    Expr k = VarNode::make(type, "k", VarRole::LoopIndex);
    Expr column = VarNode::make(type, "column", VarRole::LoopIndex);
    Expr first = VarNode::make(type, "first_row", VarRole::LoopIndex);
    Expr end = VarNode::make(type, "end_row", VarRole::LoopIndex);
    Expr rows_at = VarNode::make(type, "row", VarRole::LoopIndex);
    // Row `row` of the group at `rows_at`: its cells, and the body there.
    auto cell_at = [&](const Expr& row) {
        std::vector<Expr> position(axes.size());
        position[fast] = column;
        Expr rest = row; // the row's coordinates along the other axes, slowest first
        for (std::size_t o = order.size() - 1; o-- > 0;) {
            const std::size_t i = order[o];
            const bool slowest = o == 0;
            position[i] = simplify(slowest ? rest : bin(BinaryOp::Mod, rest, idx(t.extent[i])));
            if (!slowest) rest = bin(BinaryOp::Div, rest, idx(t.extent[i]));
        }
        std::vector<Stmt> stmts;
        std::vector<Expr> cells, positions;
        for (std::size_t i = 0; i < axes.size(); ++i) {
            Expr cell = VarNode::make(type, axes[i].counter.as<VarNode>()->name, VarRole::LoopIndex);
            Expr start = bin(BinaryOp::Sub, axes[i].origin, idx(t.below[i]));
            stmts.push_back(DeclareNode::make(cell, simplify(bin(BinaryOp::Add, start, position[i]))));
            cells.push_back(cell);
            positions.push_back(simplify(bin(BinaryOp::Sub, position[i], idx(t.below[i]))));
        }
        stmts.push_back(body(cells, positions, simplify(bin(BinaryOp::Add, bin(BinaryOp::Mul, row, idx(width)), column))));
        return FreshLocals().mutate(BlockNode::make(std::move(stmts)));
    };
    // A whole group: its rows one after another; the run's last, partial group: each row guarded.
    std::vector<Stmt> whole, partial;
    for (std::int64_t g = 0; g < group; ++g) {
        Expr row = simplify(bin(BinaryOp::Add, rows_at, idx(g)));
        whole.push_back(cell_at(row));
        partial.push_back(IfThenNode::make(bin(BinaryOp::Lt, row, end), cell_at(row)));
    }
    Expr past = simplify(bin(BinaryOp::Add, rows_at, idx(group)));
    Stmt step = group == 1 ? whole.front()
                           : BlockNode::make({IfThenNode::make(bin(BinaryOp::Le, past, end), BlockNode::make(std::move(whole))),
                                              IfThenNode::make(bin(BinaryOp::Gt, past, end), BlockNode::make(std::move(partial)))});
    Stmt walk = ForNode::make(rows_at, first, end, idx(group), step, -1, ForKind::Serial);
    Stmt per_thread = BlockNode::make(
        {DeclareNode::make(column, bin(BinaryOp::Mod, k, idx(width))),
         DeclareNode::make(first, simplify(bin(BinaryOp::Mul, bin(BinaryOp::Div, k, idx(width)), idx(run)))),
         DeclareNode::make(end, bin(BinaryOp::Min, bin(BinaryOp::Add, first, idx(run)), idx(rows))), walk});
    return ForNode::make(k, idx(0), idx(slots * width), idx(1), per_thread, -1, ForKind::Cooperative);
}
} // namespace

Stmt tile_loop(const TileLayout& t, const std::vector<BlockTileAxis>& axes,
               const std::function<Stmt(const std::vector<Expr>&, const std::vector<Expr>&, const Expr&)>& body,
               int threads) {
    const ScalarType type = axes[0].origin.type();
    auto idx = [type](std::int64_t v) { return ConstNode::make_int(type, v); };
    // Rows where they keep at least 3/4 of the block's threads busy (a row as wide as 70 cells
    // keeps 3 x 70 = 210 of 256), else the flat form.
    if (threads > 0) {
        const std::int64_t width = t.extent[slowest_first(axes).back()];
        const std::int64_t per_pass = threads / width;
        if (per_pass >= 1 && t.buffer->size() > width && 4 * per_pass * width >= 3 * std::int64_t(threads))
            return tile_rows(t, axes, per_pass, body);
    }
    Expr k = VarNode::make(type, "k", VarRole::LoopIndex);
    std::vector<Stmt> stmts;
    std::vector<Expr> cells, positions;
    for (std::size_t i = 0; i < axes.size(); ++i) {
        Expr position = t.stride[i] == 1 ? k : BinaryNode::make(BinaryOp::Div, k, idx(t.stride[i]));
        // the slowest tile axis needs no modulo: k / stride is below its extent
        const bool slowest = std::all_of(t.stride.begin(), t.stride.end(),
                                         [&](std::int64_t s) { return s <= t.stride[i]; });
        if (!slowest) position = BinaryNode::make(BinaryOp::Mod, position, idx(t.extent[i]));
        Expr cell = VarNode::make(type, axes[i].counter.as<VarNode>()->name, VarRole::LoopIndex);
        Expr first = BinaryNode::make(BinaryOp::Sub, axes[i].origin, idx(t.below[i]));
        stmts.push_back(DeclareNode::make(cell, simplify(BinaryNode::make(BinaryOp::Add, first, position))));
        cells.push_back(cell);
        positions.push_back(simplify(BinaryNode::make(BinaryOp::Sub, position, idx(t.below[i]))));
    }
    stmts.push_back(body(cells, positions, k));
    return ForNode::make(k, idx(0), idx(t.buffer->size()), idx(1), BlockNode::make(std::move(stmts)), -1,
                         ForKind::Cooperative);
}

namespace {
/// The body of the innermost GpuBlock loop: its origin declarations, then `before` and the
/// thread loops, inside the allocations of earlier passes (stage tiles) where those hold them.
class InsertBeforeThreads : public IRMutator {
public:
    InsertBeforeThreads(const StmtList& before, const std::function<Stmt(const Stmt&)>& threads,
                        const char* pass)
        : before_(before), threads_(threads), pass_(pass) {}
    bool done = false;

protected:
    Stmt visit_For(const ForNode* f, const Stmt& self) override {
        if (f->kind != ForKind::GpuBlock) return IRMutator::visit_For(f, self);
        if (f->body.is<ForNode>()) return IRMutator::visit_For(f, self); // an outer block loop
        if (!f->body.is<BlockNode>()) throw InternalError(std::string(pass_) + ": a block loop without origins");
        done = true;
        return ForNode::make(f->var, f->start, f->stop, f->step, place(f->body), f->axis, f->kind, f->dim);
    }

private:
    Stmt place(const Stmt& s) {
        if (auto a = s.as<AllocateNode>()) return AllocateNode::make(a->buffer, place(a->body));
        auto block = s.as<BlockNode>();
        if (!block) return s;
        StmtList out;
        for (const Stmt& c : block->stmts) {
            if (has_threads(c)) {
                if (!placed_) out.add(before_); // once, before the first thread loop
                placed_ = true;
                out.add(rewrite_threads(c));
            } else {
                out.add(c.is<AllocateNode>() ? place(c) : c);
            }
        }
        return out.build();
    }

    static bool is_thread_loop(const Stmt& s) {
        auto loop = s.as<ForNode>();
        return loop && loop->kind == ForKind::GpuThread;
    }
    /// A thread loop, or a branch or block of them (fuse_stages' `tile_inside` branches).
    static bool has_threads(const Stmt& s) {
        if (is_thread_loop(s)) return true;
        if (auto i = s.as<IfThenNode>()) return has_threads(i->then_case);
        if (auto b = s.as<BlockNode>())
            return std::any_of(b->stmts.begin(), b->stmts.end(), [](const Stmt& c) { return has_threads(c); });
        return false;
    }
    Stmt rewrite_threads(const Stmt& s) {
        if (is_thread_loop(s)) {
            ++rewritten_;
            return threads_(s);
        }
        if (auto i = s.as<IfThenNode>()) return IfThenNode::make(i->cond, rewrite_threads(i->then_case));
        if (auto b = s.as<BlockNode>()) {
            std::vector<Stmt> out;
            for (const Stmt& c : b->stmts) out.push_back(has_threads(c) ? rewrite_threads(c) : c);
            return BlockNode::make(std::move(out));
        }
        return s;
    }

public:
    int rewritten_ = 0;

private:
    bool placed_ = false;

    const StmtList& before_;
    const std::function<Stmt(const Stmt&)>& threads_;
    const char* pass_;
};
} // namespace

Stmt insert_before_threads(const Stmt& body, const StmtList& before,
                           const std::function<Stmt(const Stmt&)>& threads, const char* pass) {
    InsertBeforeThreads insert(before, threads, pass);
    Stmt out = insert.mutate(body);
    if (!insert.done) throw InternalError(std::string(pass) + ": no GpuBlock loop to fill tiles in");
    if (insert.rewritten_ == 0) throw InternalError(std::string(pass) + ": no thread loop in the block loop");
    return out;
}

std::size_t rounded_shared_bytes(std::size_t bytes) { return (bytes + 15) / 16 * 16; }

} // namespace loom::ir
