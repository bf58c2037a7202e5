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
        auto counter = [](const Expr& v) {
            auto var = v.as<VarNode>();
            return var && var->role == VarRole::Counter ? v.get() : nullptr;
        };
        if (const ExprNode* c = counter(e)) {
            p.counters.push_back(c);
            p.offsets.push_back(0);
            continue;
        }
        auto b = e.as<BinaryNode>();
        auto k = b ? b->b.as<ConstNode>() : nullptr;
        const ExprNode* c = b ? counter(b->a) : nullptr;
        if (!k || !c || (b->op != BinaryOp::Add && b->op != BinaryOp::Sub)) return false;
        p.counters.push_back(c);
        p.offsets.push_back(b->op == BinaryOp::Add ? k->int_value : -k->int_value);
    }
    return true;
}

/// One field at one cell: the places it is accessed at, and its pointer once it has one.
struct Group {
    FieldPtr field;
    std::vector<const ExprNode*> counters;
    std::vector<Expr> cell;                   ///< the counters (literal 0 on index axes)
    std::set<std::vector<std::int64_t>> places;
    std::size_t first = 0;                    ///< the first statement that accesses it
    std::size_t order = 0;                    ///< found as the order-th group of the block
    std::shared_ptr<FieldInfo> pointer;
};

using Groups = std::map<std::pair<const FieldInfo*, std::vector<const ExprNode*>>, Group>;

/// The Loads of an expression, with the field and place of each that fits.
struct Collect : IRVisitor {
    Groups& groups;
    std::size_t stmt = 0;
    explicit Collect(Groups& g) : groups(g) {}
    void add(const FieldPtr& f, const std::vector<Expr>& indices) {
        Place p;
        if (!place_of(*f, indices, p)) return;
        auto [it, fresh] = groups.try_emplace({f.get(), p.counters});
        Group& g = it->second;
        if (fresh) {
            g.order = groups.size() - 1;
            g.field = f;
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
    void visit_Load(const LoadNode* l) override {
        IRVisitor::visit_Load(l);
        add(l->field, l->indices);
    }
};

/// Accesses of the groups with pointers become accesses of the pointer at the offsets.
struct Rewrite : IRMutator {
    const Groups& groups;
    explicit Rewrite(const Groups& g) : groups(g) {}
    const Group* pointer_of(const FieldInfo& f, const std::vector<Expr>& indices, Place& p) const {
        if (!place_of(f, indices, p)) return nullptr;
        auto it = groups.find({&f, p.counters});
        return it != groups.end() && it->second.pointer ? &it->second : nullptr;
    }
    static std::vector<Expr> offsets(const std::vector<Expr>& indices, const Place& p) {
        std::vector<Expr> out;
        for (std::size_t a = 0; a < indices.size(); ++a)
            out.push_back(ConstNode::make_int(indices[a].type(), p.offsets[a]));
        return out;
    }
    Expr visit_Load(const LoadNode* l, const Expr& self) override {
        Place p;
        const Group* g = pointer_of(*l->field, l->indices, p);
        return g ? LoadNode::make(g->pointer, offsets(l->indices, p)) : IRMutator::visit_Load(l, self);
    }
    Stmt visit_Store(const StoreNode* s, const Stmt& self) override {
        Place p;
        const Group* g = pointer_of(*s->field, s->indices, p);
        if (!g) return IRMutator::visit_Store(s, self);
        return StoreNode::make(g->pointer, offsets(s->indices, p), mutate(s->value));
    }
};

/// Whether a statement's own expressions are what this block's accesses are: a store, a
/// declaration, an assignment, an array store. Loops, conditions, blocks and vector accesses
/// are not looked into (they get their own blocks).
bool direct(const Stmt& s) {
    switch (s.kind()) {
    case StmtKind::Store:
    case StmtKind::Declare:
    case StmtKind::Assign:
    case StmtKind::BufferStore: return true;
    default: return false;
    }
}

class PointAtCells : public IRMutator {
public:
    PointAtCells(FieldStrides& strides, std::set<const FieldInfo*> written)
        : strides_(strides), written_(std::move(written)) {}

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
            if (auto st = s.as<StoreNode>()) collect.add(st->field, st->indices);
        }
        // In the order the block first accesses them, never the map's (addresses): the source,
        // and so the cache key, must be the same on every run.
        std::vector<Group*> found(groups.size());
        for (auto& entry : groups) found[entry.second.order] = &entry.second;
        std::map<std::size_t, std::vector<const Group*>> before;
        for (Group* gp : found) {
            Group& g = *gp;
            if (g.places.size() < 2) continue; // one place: the whole address reads as well
            auto copy = std::make_shared<FieldInfo>(*g.field);
            copy->name = g.field->name + "_c";
            g.pointer = copy;
            strides_[copy.get()] = strides_.at(g.field.get());
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
                    out.push_back(BasePointerNode::make(g->field, g->pointer, g->cell,
                                                        written_.count(g->field.get()) > 0));
            out.push_back(direct(block->stmts[i]) ? rewrite.mutate(block->stmts[i]) : block->stmts[i]);
        }
        return BlockNode::make(std::move(out));
    }

private:
    FieldStrides& strides_;
    const std::set<const FieldInfo*> written_; ///< fields the kernel stores to anywhere
};

} // namespace

Stmt point_at_cells(const Stmt& body, FieldStrides& strides) {
    struct Written : IRVisitor {
        std::set<const FieldInfo*> fields;
        void visit_Store(const StoreNode* s) override {
            fields.insert(s->field.get());
            IRVisitor::visit_Store(s);
        }
        void visit_VectorStore(const VectorStoreNode* s) override {
            fields.insert(s->first.as<LoadNode>()->field.get());
            IRVisitor::visit_VectorStore(s);
        }
    } written;
    written.visit(body);
    return PointAtCells(strides, std::move(written.fields)).mutate(body);
}

} // namespace loom::ir
