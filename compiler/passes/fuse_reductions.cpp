#include "compiler/passes/fuse_reductions.hpp"

#include "compiler/ir/equality.hpp"
#include "compiler/ir/visitor.hpp"

#include <set>
#include <vector>

namespace loom::ir {

namespace {

/// An accumulator loop in a list: its declarations' and its loop's positions.
struct Group {
    std::vector<std::size_t> declarations;
    std::size_t loop = 0;
};

/// The variables `root` reads, and the fields and buffers (a layer's local arrays too) it loads.
struct Reads : IRVisitor {
    std::set<const VarNode*> vars;
    std::set<const FieldInfo*> fields;
    std::set<const BufferInfo*> buffers;
    void visit_Var(const VarNode* v) override { vars.insert(v); }
    void visit_BufferLoad(const BufferLoadNode* l) override {
        if (const FieldInfo* f = l->buffer->field_of()) fields.insert(f);
        buffers.insert(l->buffer.get());
        IRVisitor::visit_BufferLoad(l);
    }
};

/// The last statements of a loop body that update accumulators (`acc = acc op term`), and the
/// work before them.
void split_body(const Stmt& body, std::vector<Stmt>& work, std::vector<Stmt>& updates) {
    auto b = body.as<BlockNode>();
    std::vector<Stmt> stmts = b ? b->stmts : std::vector<Stmt>{body};
    std::size_t first_update = stmts.size();
    while (first_update > 0) {
        auto a = stmts[first_update - 1].as<AssignNode>();
        auto v = a ? a->lhs.as<VarNode>() : nullptr;
        if (!v || v->role != VarRole::Accumulator) break;
        --first_update;
    }
    work.assign(stmts.begin(), stmts.begin() + std::ptrdiff_t(first_update));
    updates.assign(stmts.begin() + std::ptrdiff_t(first_update), stmts.end());
}

} // namespace

bool may_move_up(const std::vector<Stmt>& stmts, const std::vector<bool>& gone, std::size_t from, std::size_t to,
                 const Stmt& moved) {
    Reads reads;
    reads.visit(moved);
    for (std::size_t k = from; k < to; ++k) {
        if (gone[k]) continue;
        if (auto d = stmts[k].as<DeclareNode>(); d && reads.vars.count(d->var.as<VarNode>())) return false;
        if (!stmts[k].is<DeclareNode>() && !stmts[k].is<CommentNode>()) {
            // Anything but a store between (a loop, a condition, an allocation) may compute
            // what the loop reads; a store may fill a field or an array (a layer's input) it
            // reads.
            auto st = stmts[k].as<BufferStoreNode>();
            if (!st || reads.buffers.count(st->buffer.get())) return false;
            for (const FieldInfo* f : written_fields(stmts[k]))
                if (reads.fields.count(f)) return false;
        }
    }
    return true;
}

namespace {

class Fuse : public IRMutator {
protected:
    Stmt visit_Block(const BlockNode* b, const Stmt& self) override {
        // The list with nested lists spliced in (a statement and the reductions before it
        // form one: a Block is no scope).
        std::vector<Stmt> stmts;
        bool changed = false;
        splice_mutated(b, *this, stmts, changed);
        // Join each accumulator loop into the first earlier one it may join.
        std::vector<Group> groups;
        std::vector<bool> gone(stmts.size(), false);
        bool joined_any = false;
        for (std::size_t i = 0; i < stmts.size(); ++i) {
            // Accumulator declarations (several for an online softmax's pair), then their loop.
            Group later;
            std::size_t j = i;
            for (; j < stmts.size(); ++j) {
                auto d = stmts[j].as<DeclareNode>();
                if (!d || d->var.as<VarNode>()->role != VarRole::Accumulator) break;
                later.declarations.push_back(j);
            }
            auto loop = j < stmts.size() ? stmts[j].as<ForNode>() : nullptr;
            if (later.declarations.empty() || !loop || loop->kind != ForKind::Serial) continue;
            later.loop = j;
            bool joined = false;
            for (Group& g : groups) {
                if (!may_join(stmts, gone, g, later)) continue;
                join(stmts, g, later.loop);
                for (std::size_t d : later.declarations) gone[d] = true;
                gone[later.loop] = true;
                g.declarations.insert(g.declarations.end(), later.declarations.begin(), later.declarations.end());
                joined = changed = joined_any = true;
                break;
            }
            if (!joined) groups.push_back(later);
            i = j;
        }
        if (!changed) return self;
        if (!joined_any) return BlockNode::make(std::move(stmts));
        // The joined groups' declarations together, right before their loop.
        std::vector<Stmt> out;
        std::set<std::size_t> moved;
        for (const Group& g : groups)
            if (g.declarations.size() > 1)
                for (std::size_t d : g.declarations) moved.insert(d);
        for (std::size_t i = 0; i < stmts.size(); ++i) {
            if (gone[i] || moved.count(i)) continue;
            for (const Group& g : groups)
                if (g.loop == i && g.declarations.size() > 1)
                    for (std::size_t d : g.declarations) out.push_back(stmts[d]);
            out.push_back(stmts[i]);
        }
        return BlockNode::make(std::move(out));
    }

private:
    /// Whether the group `next` (after g in the list) may join group g.
    static bool may_join(const std::vector<Stmt>& stmts, const std::vector<bool>& gone, const Group& g,
                         const Group& next) {
        auto first = stmts[g.loop].as<ForNode>(), later = stmts[next.loop].as<ForNode>();
        if (!structurally_equal(first->start, later->start) || !structurally_equal(first->stop, later->stop) ||
            !structurally_equal(first->step, later->step) || first->var.type() != later->var.type())
            return false;
        Reads reads;
        reads.visit(stmts[next.loop]);
        // Renamed to the first loop's variable, the later one's must not meet it (an inner
        // loop over it: max(j, max(k, ...)) beside max(k, ...)).
        if (!later->var.same_as(first->var) && reads.vars.count(first->var.as<VarNode>())) return false;
        for (std::size_t d : g.declarations)
            if (reads.vars.count(stmts[d].as<DeclareNode>()->var.as<VarNode>())) return false;
        return may_move_up(stmts, gone, g.loop + 1, next.declarations.front(), stmts[next.loop]);
    }

    /// stmts[g.loop] becomes one loop doing both: the first's work, the later's (its variable
    /// renamed), then every update.
    static void join(std::vector<Stmt>& stmts, const Group& g, std::size_t later_loop) {
        auto first = stmts[g.loop].as<ForNode>(), later = stmts[later_loop].as<ForNode>();
        std::vector<Stmt> work, updates, later_work, later_updates;
        split_body(first->body, work, updates);
        split_body(replace_var(later->body, later->var, first->var), later_work, later_updates);
        std::vector<Stmt> body = work;
        body.insert(body.end(), later_work.begin(), later_work.end());
        body.insert(body.end(), updates.begin(), updates.end());
        body.insert(body.end(), later_updates.begin(), later_updates.end());
        stmts[g.loop] = ForNode::make(first->var, first->start, first->stop, first->step, BlockNode::make(std::move(body)),
                                      first->axis, first->kind, first->dim);
    }
};

} // namespace

Stmt fuse_reductions(const Stmt& body) { return Fuse().mutate(body); }

} // namespace loom::ir
