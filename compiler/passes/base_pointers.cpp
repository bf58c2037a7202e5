#include "compiler/passes/base_pointers.hpp"

#include "compiler/ir/equality.hpp"
#include "compiler/ir/visitor.hpp"

#include <map>
#include <set>

namespace loom::ir {

namespace {

/// Where an access lies relative to its cell: per array axis, the counter (null on an index
/// axis) and the constant beside it.
struct Place {
    std::vector<const ExprNode*> counters;
    std::vector<std::int64_t> offsets;
};

/// `counter`, `counter + k` or `counter - k` on each spatial axis, a literal on each index axis;
/// false for anything else.
bool place_of(const FieldInfo& f, const std::vector<Expr>& indices, Place& p) {
    if (int(indices.size()) != f.array_dims()) return false;
    for (std::size_t a = 0; a < indices.size(); ++a) {
        const Expr& e = indices[a];
        if (int(a) >= f.spatial_dims) {
            auto k = e.as<ConstNode>();
            if (!k) return false;
            p.counters.push_back(nullptr);
            p.offsets.push_back(k->int_value);
            continue;
        }
        const Offset at = split_offset(e);
        auto var = at.base.as<VarNode>();
        if (!var || var->role != VarRole::Counter) return false;
        p.counters.push_back(at.base.get());
        p.offsets.push_back(at.k);
    }
    return true;
}

/// One field at one cell: the places it is accessed at, and its pointer once it has one.
struct Group {
    BufferPtr buffer; ///< the field's
    std::vector<const ExprNode*> counters;
    std::vector<Expr> cell;                   ///< the counters (literal 0 on index axes)
    std::set<std::vector<std::int64_t>> places;
    std::size_t first = 0;                    ///< the first statement that accesses it
    std::size_t order = 0;                    ///< found as the order-th group of the block
    BufferPtr pointer; ///< a view of the buffer
};

using Groups = std::map<std::pair<const BufferInfo*, std::vector<const ExprNode*>>, Group>;

/// The field's buffer a load or store accesses, if it is one (not a view, not an array).
const FieldInfo* field_buffer(const BufferPtr& b) {
    return b->scope == Scope::Global && b->field ? b->field.get() : nullptr;
}

/// The Loads of an expression, with the field and place of each that fits.
struct Collect : IRVisitor {
    Groups& groups;
    std::size_t stmt = 0;
    explicit Collect(Groups& g) : groups(g) {}
    void add(const BufferPtr& b, const std::vector<Expr>& indices) {
        Place p;
        const FieldInfo* f = field_buffer(b);
        if (!f || !place_of(*f, indices, p)) return;
        auto [it, fresh] = groups.try_emplace({b.get(), p.counters});
        Group& g = it->second;
        if (fresh) {
            g.order = groups.size() - 1;
            g.buffer = b;
            g.counters = p.counters;
            for (std::size_t a = 0; a < indices.size(); ++a) {
                const Expr& e = indices[a];
                g.cell.push_back(!p.counters[a] ? ConstNode::make_int(e.type(), 0)
                                 : e.as<VarNode>() ? e
                                                   : e.as<BinaryNode>()->a);
            }
            g.first = stmt;
        }
        g.places.insert(p.offsets);
    }
    void visit_BufferLoad(const BufferLoadNode* l) override {
        IRVisitor::visit_BufferLoad(l);
        add(l->buffer, l->indices);
    }
};

/// Accesses of the groups with pointers become accesses of the pointer at the offsets.
struct Rewrite : IRMutator {
    const Groups& groups;
    explicit Rewrite(const Groups& g) : groups(g) {}
    const Group* pointer_of(const BufferPtr& b, const std::vector<Expr>& indices, Place& p) const {
        const FieldInfo* f = field_buffer(b);
        if (!f || !place_of(*f, indices, p)) return nullptr;
        auto it = groups.find({b.get(), p.counters});
        return it != groups.end() && it->second.pointer ? &it->second : nullptr;
    }
    static std::vector<Expr> offsets(const std::vector<Expr>& indices, const Place& p) {
        std::vector<Expr> out;
        for (std::size_t a = 0; a < indices.size(); ++a)
            out.push_back(ConstNode::make_int(indices[a].type(), p.offsets[a]));
        return out;
    }
    Expr visit_BufferLoad(const BufferLoadNode* l, const Expr& self) override {
        Place p;
        const Group* g = pointer_of(l->buffer, l->indices, p);
        return g ? BufferLoadNode::make(g->pointer, offsets(l->indices, p)) : IRMutator::visit_BufferLoad(l, self);
    }
    Stmt visit_BufferStore(const BufferStoreNode* s, const Stmt& self) override {
        Place p;
        const Group* g = pointer_of(s->buffer, s->indices, p);
        if (!g) return IRMutator::visit_BufferStore(s, self);
        return BufferStoreNode::make(g->pointer, offsets(s->indices, p), mutate(s->value));
    }
};

/// Whether a statement's own expressions are what this block's accesses are: a store, a
/// declaration, an assignment. Loops, conditions, blocks and vector accesses are not looked
/// into (they get their own blocks).
bool direct(const Stmt& s) {
    switch (s.kind()) {
    case StmtKind::Declare:
    case StmtKind::Assign:
    case StmtKind::BufferStore: return true;
    default: return false;
    }
}

class PointAtCells : public IRMutator {
public:
    explicit PointAtCells(std::set<const FieldInfo*> written) : written_(std::move(written)) {}

protected:
    Stmt visit_Block(const BlockNode* b, const Stmt& self) override {
        Stmt inner = IRMutator::visit_Block(b, self); // nested blocks first
        auto block = inner.as<BlockNode>();
        Groups groups;
        Collect collect(groups);
        for (std::size_t i = 0; i < block->stmts.size(); ++i) {
            const Stmt& s = block->stmts[i];
            if (!direct(s)) continue;
            collect.stmt = i;
            collect.visit(s);
            if (auto st = s.as<BufferStoreNode>()) collect.add(st->buffer, st->indices);
        }
        // In the order the block first accesses them, never the map's (addresses): the source,
        // and so the cache key, must be the same on every run.
        std::vector<Group*> found(groups.size());
        for (auto& entry : groups) found[entry.second.order] = &entry.second;
        std::map<std::size_t, std::vector<const Group*>> before;
        for (Group* gp : found) {
            Group& g = *gp;
            if (g.places.size() < 2) continue; // one place: the whole address reads as well
            g.pointer = make_view(g.buffer, g.buffer->name + "_c");
            // Above the DSL comments of the statement that first needs it: they belong to it.
            std::size_t at = g.first;
            while (at > 0 && block->stmts[at - 1].kind() == StmtKind::Comment) --at;
            before[at].push_back(&g);
        }
        if (before.empty()) return inner;
        Rewrite rewrite(groups);
        std::vector<Stmt> out;
        for (std::size_t i = 0; i < block->stmts.size(); ++i) {
            if (auto it = before.find(i); it != before.end())
                for (const Group* g : it->second)
                    out.push_back(BasePointerNode::make(g->buffer, g->pointer, g->cell,
                                                        written_.count(g->buffer->field.get()) > 0));
            out.push_back(direct(block->stmts[i]) ? rewrite.mutate(block->stmts[i]) : block->stmts[i]);
        }
        return BlockNode::make(std::move(out));
    }

private:
    const std::set<const FieldInfo*> written_; ///< fields the kernel stores to anywhere
};

} // namespace

Stmt point_at_cells(const Stmt& body) { return PointAtCells(written_fields(body)).mutate(body); }

} // namespace loom::ir
