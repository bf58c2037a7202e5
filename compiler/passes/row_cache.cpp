#include "compiler/passes/row_cache.hpp"

#include "compiler/ir/equality.hpp"
#include "compiler/ir/visitor.hpp"

#include <fmt/format.h>

#include <deque>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>

namespace loom::ir {

namespace {

/// A coordinate of a row that is valid whatever the cell computes: the cell's own counters and
/// literals (and casts of them). Not a parameter, a sum or a field's value: a condition may guard
/// such a read (`select(p >= 0, E.at({p})(k), 0)`), and the row is loaded before any condition.
bool at_the_cell(const Expr& e) {
    for (const Expr& s : subexpressions(e)) {
        if (s.is<ConstNode>() || s.is<CastNode>()) continue;
        auto v = s.as<VarNode>();
        if (!v || v->role != VarRole::Counter || v->axis < 0) return false;
    }
    return true;
}

bool is_lane(const Expr& e, const Expr& lane) {
    if (e.same_as(lane)) return true;
    auto c = e.as<CastNode>();
    return c && c->value.same_as(lane);
}

/// K / 32 for a loop `for k in [lane, K) step 32` with K a constant multiple of 32; else 0.
std::int64_t lane_elements(const ForNode* f, const Expr& lane) {
    auto stop = f->stop.as<ConstNode>();
    if (f->kind != ForKind::Serial || !is_lane(f->start, lane) || !is_const_value(f->step, double(kWarpSize)) || !stop ||
        stop->int_value <= 0 || stop->int_value % kWarpSize != 0)
        return 0;
    return stop->int_value / kWarpSize;
}

/// A row: a field's buffer read at fixed coordinates but one, the loop's index (`place`).
struct Row {
    BufferPtr buffer;
    std::vector<Expr> indices; ///< with the index axis at `place` (read there as `placeholder`)
    std::size_t place = 0;
    std::int64_t n = 0; ///< elements per lane
    BufferPtr array;    ///< set once the row is kept
};

class RowsOfLane {
public:
    RowsOfLane(const ForNode* lane_loop, const std::set<const FieldInfo*>& written)
        : lane_(lane_loop->var), written_(written) {
        cell_vars_ = declared_variables(lane_loop->body);
    }

    /// The lane loop with its rows in registers, or nothing when it reads no row.
    Stmt run(const ForNode* lane_loop) {
        // The rows that two or more loops read, in the order of first reads, while they fit.
        std::vector<const ForNode*> loops;
        top_loops(lane_loop->body, loops);
        std::map<const Row*, int> readers;
        for (const ForNode* f : loops) {
            std::set<const Row*> read;
            for (const Expr& e : subexpressions(f->body))
                if (const Row* row = row_of(e, f->var, lane_elements(f, lane_))) read.insert(row);
            for (const Row* row : read) ++readers[row];
        }
        std::int64_t held = 0;
        for (Row& row : rows_) {
            if (readers[&row] < 2 || held + row.n > kMaxRowRegisters) continue;
            held += row.n;
            row.array = make_buffer(row.buffer->name + "_row", row.buffer->type, Scope::Local, {row.n});
        }
        bool any = false;
        for (const Row& r : rows_) any = any || r.array;
        if (!any) return Stmt();

        const ScalarType t = lane_.type();
        Expr c = VarNode::make(t, "c", VarRole::LoopIndex);
        auto lane_plus = [&](const Expr& var, const Expr& c) {
            Expr k = BinaryNode::make(BinaryOp::Add, lane_, BinaryNode::make(BinaryOp::Mul, ConstNode::make_int(t, kWarpSize), c));
            return var.type() == t ? k : CastNode::make(var.type(), k);
        };
        StmtList body;
        for (const Row& r : rows_) {
            if (!r.array) continue;
            std::vector<Expr> at = r.indices;
            at[r.place] = lane_plus(r.indices[r.place], c);
            body.add(ForNode::make(c, ConstNode::make_int(t, 0), ConstNode::make_int(t, r.n), ConstNode::make_int(t, 1),
                                   BufferStoreNode::make(r.array, {c}, BufferLoadNode::make(r.buffer, at)), -1,
                                   ForKind::Unrolled));
        }
        std::function<Stmt(const Stmt&)> rewrite = [&](const Stmt& s) -> Stmt {
            if (auto b = s.as<BlockNode>()) {
                std::vector<Stmt> out;
                for (const Stmt& x : b->stmts) out.push_back(rewrite(x));
                return BlockNode::make(std::move(out));
            }
            auto f = s.as<ForNode>();
            const std::int64_t n = f ? lane_elements(f, lane_) : 0;
            Stmt rewritten = n ? unrolled(f, n, c, lane_plus(f->var, c)) : Stmt();
            return rewritten.defined() ? rewritten : s;
        };
        body.add(rewrite(lane_loop->body));
        Stmt lanes = ForNode::make(lane_loop->var, lane_loop->start, lane_loop->stop, lane_loop->step, body.build(),
                                   lane_loop->axis, lane_loop->kind, lane_loop->dim);
        StmtList out;
        for (const Row& r : rows_)
            if (r.array) out.allocate(r.array);
        out.add(lanes);
        return out.build();
    }

private:
    /// The lane-strided loops among `s`'s statements and the blocks of statements in it.
    void top_loops(const Stmt& s, std::vector<const ForNode*>& loops) const {
        if (auto b = s.as<BlockNode>())
            for (const Stmt& x : b->stmts) top_loops(x, loops);
        else if (auto f = s.as<ForNode>(); f && lane_elements(f, lane_))
            loops.push_back(f);
    }

    /// The row `e` reads in a loop over `k` with n elements per lane, or null.
    Row* row_of(const Expr& e, const Expr& k, std::int64_t n) {
        auto l = e.as<BufferLoadNode>();
        const FieldInfo* f = l && l->buffer->scope == Scope::Global ? l->buffer->field.get() : nullptr;
        if (!f || written_.count(f)) return nullptr;
        std::size_t place = l->indices.size();
        for (std::size_t i = 0; i < l->indices.size(); ++i) {
            if (l->indices[i].same_as(k)) {
                if (place != l->indices.size()) return nullptr; // k twice
                place = i;
                continue;
            }
            // Not a gather (`E.at({tok})(k)` under `tok >= 0`): the row is loaded before any
            // condition of the loop, so its coordinates must be valid whatever the cell computes.
            if (!at_the_cell(l->indices[i])) return nullptr;
            for (const Expr& s : subexpressions(l->indices[i]))
                if (s.same_as(k) || s.same_as(lane_) || cell_vars_.count(s.get()) || s.is<BufferLoadNode>())
                    return nullptr;
        }
        if (place == l->indices.size()) return nullptr;
        std::vector<Expr> key = l->indices;
        Expr& p = placeholders_[k.type()];
        if (!p.defined()) p = VarNode::make(k.type(), "row_k", VarRole::Placeholder);
        key[place] = p;
        for (Row& r : rows_)
            if (r.buffer == l->buffer && r.place == place && r.n == n && structurally_equal(BufferLoadNode::make(r.buffer, r.indices), BufferLoadNode::make(l->buffer, key)))
                return &r;
        rows_.push_back({l->buffer, key, place, n, nullptr});
        return &rows_.back();
    }

    /// The loop `f` unrolled over the lane's n elements, its loads of kept rows reading their
    /// arrays; nothing where it reads none.
    Stmt unrolled(const ForNode* f, std::int64_t n, const Expr& c, const Expr& k_of_c) {
        struct Read : IRMutator {
            RowsOfLane* self;
            const ForNode* loop;
            std::int64_t n;
            Expr c;
            bool used = false;
            Expr visit_BufferLoad(const BufferLoadNode* l, const Expr& e) override {
                Row* row = self->row_of(e, loop->var, n);
                if (!row || !row->array) return IRMutator::visit_BufferLoad(l, e);
                used = true;
                return BufferLoadNode::make(row->array, {c});
            }
        } read;
        read.self = this;
        read.loop = f;
        read.n = n;
        read.c = c;
        Stmt body = read.mutate(f->body);
        if (!read.used) return Stmt();
        const ScalarType t = c.type();
        bool reads_k = false; // the element's index, where the body still reads it (w[k])
        for (const Expr& e : subexpressions(body)) reads_k = reads_k || e.same_as(f->var);
        Stmt each = reads_k ? BlockNode::make({DeclareNode::make(f->var, k_of_c), body}) : body;
        return ForNode::make(c, ConstNode::make_int(t, 0), ConstNode::make_int(t, n), ConstNode::make_int(t, 1), each,
                             -1, ForKind::Unrolled);
    }

    Expr lane_;
    const std::set<const FieldInfo*>& written_;
    std::set<const ExprNode*> cell_vars_;
    std::map<ScalarType, Expr> placeholders_; ///< what a row reads at the index, by its type
    std::deque<Row> rows_; ///< a deque: a row's address stays as more come
};

class CacheRows : public IRMutator {
public:
    explicit CacheRows(std::set<const FieldInfo*> written) : written_(std::move(written)) {}

protected:
    Stmt visit_For(const ForNode* f, const Stmt& self) override {
        if (f->kind != ForKind::WarpLane) return IRMutator::visit_For(f, self);
        Stmt cached = RowsOfLane(f, written_).run(f);
        return cached.defined() ? cached : self;
    }

private:
    std::set<const FieldInfo*> written_;
};

/// A row in shared memory: a field read at fixed coordinates but one, an IndexVar's loop
/// index over [0, extent).
struct SharedRow {
    BufferPtr buffer;
    std::vector<Expr> indices; ///< with the index axis at `place` (read there as a placeholder)
    std::size_t place = 0;
    std::int64_t extent = 0;
    std::set<const ForNode*> loops; ///< the loops that read it
    BufferPtr array;                ///< set once the row is kept
};

/// One cell of a block-per-cell body (its block's statements): the rows two or more of its
/// loops read, kept in shared memory.
class RowsOfBlock {
public:
    RowsOfBlock(const Stmt& cell, const std::set<const FieldInfo*>& written, std::size_t budget)
        : written_(written), budget_(budget) {
        // The cell's coordinates (declared at its top) are the same for all its threads;
        // every other variable it declares may differ between them or between passes.
        for (const ExprNode* v : declared_variables(cell)) {
            auto var = static_cast<const VarNode*>(v);
            if (!(var->role == VarRole::Counter && var->axis >= 0)) varying_.insert(v);
        }
    }

    Stmt run(const Stmt& cell) {
        struct Collect : IRVisitor {
            RowsOfBlock* self;
            std::vector<const ForNode*> loops;
            void visit_For(const ForNode* f) override {
                loops.push_back(f);
                IRVisitor::visit_For(f);
                loops.pop_back();
            }
            void visit_BufferLoad(const BufferLoadNode* l) override {
                IRVisitor::visit_BufferLoad(l);
                if (auto [row, loop] = self->row_of(l, loops); row) row->loops.insert(loop);
            }
        } collect;
        collect.self = this;
        collect.visit(cell);
        std::size_t used = 0;
        for (SharedRow& row : rows_) {
            const std::size_t bytes = std::size_t(row.extent) * std::size_t(bit_width(row.buffer->type) / 8);
            if (row.loops.size() < 2 || used + bytes > budget_) continue;
            used += (bytes + 15) / 16 * 16;
            auto array = make_buffer(row.buffer->name + "_row", row.buffer->type, Scope::Shared, {row.extent});
            array->static_shared = true;
            row.array = array;
        }
        // The cell's coordinates first: the rows are read at them.
        StmtList out;
        std::vector<Stmt> rest{cell};
        if (auto b = cell.as<BlockNode>()) {
            rest = b->stmts;
            while (!rest.empty() && is_coordinate(rest.front())) {
                out.add(rest.front());
                rest.erase(rest.begin());
            }
        }
        bool any = false;
        for (const SharedRow& r : rows_) {
            if (!r.array) continue;
            any = true;
            const ScalarType t = r.indices[r.place].type();
            Expr c = VarNode::make(t, "k", VarRole::LoopIndex);
            std::vector<Expr> at = r.indices;
            at[r.place] = c;
            out.add(CommentNode::make(fmt::format("the row of {} that {} passes read, once ({} bytes)",
                                                  r.buffer->name, r.loops.size(),
                                                  r.extent * bit_width(r.buffer->type) / 8)));
            out.allocate(r.array);
            out.add(ForNode::make(c, ConstNode::make_int(t, 0), ConstNode::make_int(t, r.extent),
                                  ConstNode::make_int(t, 1), BufferStoreNode::make(r.array, {c}, BufferLoadNode::make(r.buffer, at)),
                                  -1, ForKind::Cooperative));
        }
        if (!any) return Stmt();
        out.add(BarrierNode::make());
        struct Read : IRMutator {
            RowsOfBlock* self;
            std::vector<const ForNode*> loops;
            Stmt visit_For(const ForNode* f, const Stmt& s) override {
                loops.push_back(f);
                Stmt r = IRMutator::visit_For(f, s);
                loops.pop_back();
                return r;
            }
            Expr visit_BufferLoad(const BufferLoadNode* l, const Expr& e) override {
                auto [row, loop] = self->row_of(l, loops);
                if (!row || !row->array) return IRMutator::visit_BufferLoad(l, e);
                return BufferLoadNode::make(row->array, {loop->var});
            }
        } read;
        read.self = this;
        for (const Stmt& s : rest) out.add(read.mutate(s));
        return out.build();
    }

    static bool is_coordinate(const Stmt& s) {
        auto d = s.as<DeclareNode>();
        auto v = d ? d->var.as<VarNode>() : nullptr;
        return v && v->role == VarRole::Counter && v->axis >= 0;
    }

private:
    /// The row `l` reads and the loop whose index it reads it at, or nulls.
    std::pair<SharedRow*, const ForNode*> row_of(const BufferLoadNode* l, const std::vector<const ForNode*>& loops) {
        const FieldInfo* f = l->buffer->scope == Scope::Global ? l->buffer->field.get() : nullptr;
        if (!f || written_.count(f)) return {};
        const ForNode* loop = nullptr;
        std::size_t place = l->indices.size();
        for (std::size_t i = 0; i < l->indices.size(); ++i) {
            const ForNode* of_index = nullptr;
            auto cast = l->indices[i].as<CastNode>(); // an int64 variant's coordinate
            const Expr& bare = cast ? cast->value : l->indices[i];
            for (const ForNode* enclosing : loops) {
                auto v = enclosing->var.as<VarNode>();
                if (bare.same_as(enclosing->var) && v->role == VarRole::Index && enclosing->stop.is<ConstNode>())
                    of_index = enclosing;
            }
            if (of_index) {
                if (loop) return {}; // two index axes
                loop = of_index;
                place = i;
                continue;
            }
            // Every other coordinate the same for the whole cell and valid whatever it computes
            // (not a gather that a condition may guard): the row is loaded before anything else.
            if (!at_the_cell(l->indices[i])) return {};
            for (const Expr& s : subexpressions(l->indices[i]))
                if (varying_.count(s.get()) || s.is<BufferLoadNode>()) return {};
        }
        if (!loop) return {};
        const std::int64_t extent = loop->stop.as<ConstNode>()->int_value;
        std::vector<Expr> key = l->indices;
        Expr& p = placeholders_[key[place].type()];
        if (!p.defined()) p = VarNode::make(key[place].type(), "row_k", VarRole::Placeholder);
        key[place] = p;
        for (SharedRow& r : rows_)
            if (r.buffer == l->buffer && r.place == place && r.extent == extent &&
                structurally_equal(BufferLoadNode::make(r.buffer, r.indices), BufferLoadNode::make(l->buffer, key)))
                return {&r, loop};
        rows_.push_back({l->buffer, key, place, extent, {}, nullptr});
        return {&rows_.back(), loop};
    }

    const std::set<const FieldInfo*>& written_;
    std::size_t budget_;
    std::set<const ExprNode*> varying_;
    std::map<ScalarType, Expr> placeholders_;
    std::deque<SharedRow> rows_; ///< a deque: a row's address stays as more come
};

class CacheRowsInShared : public IRMutator {
public:
    CacheRowsInShared(std::set<const FieldInfo*> written, std::size_t budget)
        : written_(std::move(written)), budget_(budget) {}

protected:
    Stmt visit_For(const ForNode* f, const Stmt& self) override {
        if (f->kind != ForKind::GpuBlock) return IRMutator::visit_For(f, self);
        if (auto inner = f->body.as<ForNode>(); inner && inner->kind == ForKind::GpuBlock)
            return IRMutator::visit_For(f, self); // an outer block loop
        Stmt cached = RowsOfBlock(f->body, written_, budget_).run(f->body);
        if (!cached.defined()) return self;
        return ForNode::make(f->var, f->start, f->stop, f->step, cached, f->axis, f->kind, f->dim);
    }

private:
    std::set<const FieldInfo*> written_;
    std::size_t budget_;
};

} // namespace

Stmt cache_rows(const Stmt& body) { return CacheRows(written_fields(body)).mutate(body); }

Stmt cache_rows_in_shared(const Stmt& body, std::size_t budget) {
    return CacheRowsInShared(written_fields(body), budget).mutate(body);
}

} // namespace loom::ir
