#include "compiler/passes/stream_cells.hpp"

#include "compiler/ir/equality.hpp"
#include "compiler/ir/visitor.hpp"

#include <map>
#include <set>
#include <unordered_map>

namespace loom::ir {

namespace {

/// `v`, `v + k` or `v - k` (or a chain of such sums) with v a counter: v and the total k.
bool counter_offset(const Expr& e, Expr& counter, std::int64_t& k) {
    const Offset at = split_offset(e);
    auto v = at.base.as<VarNode>();
    if (!v || v->role != VarRole::Counter) return false;
    counter = at.base;
    k = at.k;
    return true;
}

/// `counter + k`, `counter - k` or `counter`.
Expr at_offset(const Expr& counter, std::int64_t k) {
    if (k == 0) return counter;
    Expr n = ConstNode::make_int(counter.type(), k < 0 ? -k : k);
    return BinaryNode::make(k < 0 ? BinaryOp::Sub : BinaryOp::Add, counter, n);
}

/// Coordinates with each `counter +- k` chain folded into one `counter + k`.
std::vector<Expr> folded(const std::vector<Expr>& indices) {
    std::vector<Expr> out;
    for (const Expr& i : indices) {
        Expr counter;
        std::int64_t k = 0;
        out.push_back(counter_offset(i, counter, k) ? at_offset(counter, k) : i);
    }
    return out;
}

/// A load of a field the kernel does not write at `counter + constant` on every spatial axis
/// and literals on the others: inside a whole group, an element any of its cells may read.
bool stencil_load(const BufferLoadNode* l, const std::set<const FieldInfo*>& written) {
    const FieldInfo* f = l->buffer->scope == Scope::Global ? l->buffer->field.get() : nullptr;
    if (!f || written.count(f) || int(l->indices.size()) != f->array_dims()) return false;
    for (std::size_t a = 0; a < l->indices.size(); ++a) {
        Expr counter;
        std::int64_t k = 0;
        if (int(a) < f->spatial_dims ? !counter_offset(l->indices[a], counter, k) : !l->indices[a].is<ConstNode>())
            return false;
    }
    return true;
}

/// One cell of a group: the cells' counter `x` replaced by `first + c`, coordinates folded to
/// `first + k`, and every local the cell declares a fresh variable of its own.
class OneCell : public IRMutator {
public:
    OneCell(const Expr& x, const Expr& first, std::int64_t c) : x_(x.as<VarNode>()), first_(first), c_(c) {}

protected:
    Expr visit_Var(const VarNode* v, const Expr& self) override {
        if (v == x_) return at_offset(first_, c_);
        auto it = fresh_.find(v);
        return it == fresh_.end() ? self : it->second;
    }
    Expr visit_BufferLoad(const BufferLoadNode* n, const Expr& self) override {
        Expr e = IRMutator::visit_BufferLoad(n, self);
        auto l = e.as<BufferLoadNode>();
        return BufferLoadNode::make(l->buffer, folded(l->indices));
    }
    Stmt visit_BufferStore(const BufferStoreNode* n, const Stmt& self) override {
        Stmt s = IRMutator::visit_BufferStore(n, self);
        auto st = s.as<BufferStoreNode>();
        return BufferStoreNode::make(st->buffer, folded(st->indices), st->value);
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
    const VarNode* x_;
    Expr first_;
    std::int64_t c_;
    std::map<const VarNode*, Expr> fresh_;
};

/// The cells' statements with the loads that two or more of them make loaded once, first.
class ShareLoads : public IRMutator {
public:
    ShareLoads(const std::vector<Stmt>& cells, const std::set<const FieldInfo*>& written) {
        // Which cells read each element, in the order of first reads.
        std::unordered_map<Expr, std::set<std::size_t>, ExprHash, ExprEqual> readers;
        std::vector<Expr> order;
        for (std::size_t c = 0; c < cells.size(); ++c)
            for (const Expr& e : subexpressions(cells[c])) {
                auto l = e.as<BufferLoadNode>();
                if (!l || !stencil_load(l, written)) continue;
                auto [it, fresh] = readers.try_emplace(e);
                if (fresh) order.push_back(e);
                it->second.insert(c);
            }
        elements = order.size();
        for (const Expr& e : order) {
            reads += readers.at(e).size();
            if (readers.at(e).size() < 2) continue;
            const BufferInfo& b = *e.as<BufferLoadNode>()->buffer;
            Expr reg = VarNode::make(b.type, b.name + "_r", VarRole::CseTemp);
            shared_.emplace(e, reg);
            loads.push_back(DeclareNode::make(reg, e));
        }
    }
    std::vector<Stmt> loads; ///< the shared loads' declarations, in the order of first reads
    std::size_t elements = 0; ///< distinct elements the cells read at counter + constant
    std::size_t reads = 0;    ///< their reads, cell by cell (an element once per cell)
    /// The share of the cells' reads that sharing saves.
    double saving() const { return reads ? 1.0 - double(elements) / double(reads) : 0.0; }

protected:
    Expr visit_BufferLoad(const BufferLoadNode* n, const Expr& self) override {
        auto it = shared_.find(self);
        return it == shared_.end() ? IRMutator::visit_BufferLoad(n, self) : it->second;
    }

private:
    std::unordered_map<Expr, Expr, ExprHash, ExprEqual> shared_;
};

class StreamCells : public IRMutator {
public:
    StreamCells(std::set<const FieldInfo*> written, double min_saving)
        : written_(std::move(written)), min_saving_(min_saving) {}

protected:
    Stmt visit_For(const ForNode* f, const Stmt& self) override {
        Stmt grouped = group(f);
        return grouped.defined() ? grouped : IRMutator::visit_For(f, self);
    }

private:
    /// The cells of `cell_loop` as groups (see stream_cells), or nothing where the loop is not
    /// a thread's cells around their grid loop, or its cells share no load.
    Stmt group(const ForNode* cell_loop) {
        auto count = cell_loop->stop.as<ConstNode>();
        auto grid = cell_loop->body.as<ForNode>();
        if (cell_loop->kind != ForKind::Serial || cell_loop->axis != -1 || !is_const_value(cell_loop->start, 0) ||
            !is_const_value(cell_loop->step, 1) || !count || count->int_value < 2 || !grid ||
            grid->kind != ForKind::GpuGrid || !is_const_value(grid->step, double(count->int_value)))
            return Stmt();
        // The grid loop starts at `cell + s` (a stepped slice's cells are not consecutive).
        Expr first_start;
        if (grid->start.same_as(cell_loop->var)) {
            first_start = ConstNode::make_int(grid->var.type(), 0);
        } else {
            auto start = grid->start.as<BinaryNode>();
            if (!start || start->op != BinaryOp::Add || !start->a.same_as(cell_loop->var)) return Stmt();
            first_start = start->b;
        }
        for (const Expr& e : subexpressions(grid->body))
            if (e.is<WarpReduceNode>()) return Stmt();
        struct Bound : IRVisitor {
            bool found = false;
            void visit_For(const ForNode* f) override {
                found |= is_gpu_bound(f->kind);
                IRVisitor::visit_For(f);
            }
            void visit_Allocate(const AllocateNode*) override { found = true; }
            void visit_VectorLoad(const VectorLoadNode*) override { found = true; }
        } bound;
        bound.visit(grid->body);
        if (bound.found) return Stmt(); // only plain cells are copied

        const std::int64_t C = count->int_value;
        const Expr& x = grid->var;
        const ScalarType t = x.type();
        auto x_var = x.as<VarNode>();
        Expr first = VarNode::make(t, x_var->name + "_cells", VarRole::Counter, nullptr, x_var->axis);
        std::vector<Stmt> cells;
        for (std::int64_t c = 0; c < C; ++c) cells.push_back(OneCell(x, first, c).mutate(grid->body));
        ShareLoads share(cells, written_);
        if (share.loads.empty() || share.saving() < min_saving_) return Stmt();
        // One block of statements, so that point_at_cells gives each field one pointer for all.
        std::vector<Stmt> whole = share.loads;
        for (const Stmt& c : cells) {
            Stmt shared = share.mutate(c);
            if (auto b = shared.as<BlockNode>())
                whole.insert(whole.end(), b->stmts.begin(), b->stmts.end());
            else
                whole.push_back(shared);
        }

        // The last group, cell by cell as before.
        Expr cell_x = BinaryNode::make(BinaryOp::Add, first, cell_loop->var);
        Stmt one = BlockNode::make({DeclareNode::make(x, cell_x),
                                    IfThenNode::make(BinaryNode::make(BinaryOp::Lt, x, grid->stop), grid->body)});
        Stmt partial = ForNode::make(cell_loop->var, cell_loop->start, cell_loop->stop, cell_loop->step, one, -1,
                                     ForKind::Unrolled);
        Expr inside = BinaryNode::make(BinaryOp::Le, BinaryNode::make(BinaryOp::Add, first, ConstNode::make_int(t, C)),
                                       grid->stop);
        Stmt body = BlockNode::make({IfThenNode::make(inside, BlockNode::make(std::move(whole))),
                                     IfThenNode::make(UnaryNode::make(UnaryOp::Not, inside), partial)});
        return ForNode::make(first, first_start, grid->stop, grid->step, body, grid->axis, ForKind::GpuGrid, grid->dim);
    }

    const std::set<const FieldInfo*> written_;
    const double min_saving_;
};

} // namespace

Stmt stream_cells(const Stmt& body, double min_saving) {
    return StreamCells(written_fields(body), min_saving).mutate(body);
}

} // namespace loom::ir
