#include "compiler/passes/cse.hpp"

#include "compiler/ir/equality.hpp"
#include "compiler/ir/printer.hpp"
#include "compiler/ir/visitor.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

namespace loom::ir {

namespace {

/// A Reduce is a leaf too: its body reads a variable it binds, so nothing inside it may move
/// out (lower_reductions computes it, after this pass).
bool is_leaf(ExprKind k) {
    return k == ExprKind::Const || k == ExprKind::Var || k == ExprKind::Counter ||
           k == ExprKind::FieldAccess || k == ExprKind::ThreadIndex || k == ExprKind::Reduce;
}

/// The operands of an interior node in evaluation order, without allocating (at most three:
/// select and fma).
struct Operands {
    static constexpr int kMax = 8; // a load's coordinates: array axes of a field
    const Expr* at[kMax] = {};
    int count = 0;
};

Operands operands_of(const Expr& e) {
    Operands o;
    auto add = [&o](const Expr& x) {
        if (o.count == Operands::kMax) throw InternalError("CSE: an expression with over 8 operands");
        o.at[o.count++] = &x;
    };
    switch (e.kind()) {
    case ExprKind::BufferLoad:
        for (const Expr& i : e.as<BufferLoadNode>()->indices) add(i);
        break;
    case ExprKind::Unary: add(e.as<UnaryNode>()->a); break;
    case ExprKind::Binary:
        add(e.as<BinaryNode>()->a);
        add(e.as<BinaryNode>()->b);
        break;
    case ExprKind::Select: {
        auto n = e.as<SelectNode>();
        add(n->cond);
        add(n->if_true);
        add(n->if_false);
        break;
    }
    case ExprKind::Call:
        for (const Expr& a : e.as<CallNode>()->args) add(a);
        break;
    case ExprKind::Cast: add(e.as<CastNode>()->value); break;
    case ExprKind::WarpReduce: add(e.as<WarpReduceNode>()->value); break;
    default: break;
    }
    return o;
}

/// `e` with its operands replaced (same count and order as operands_of).
Expr with_operands(const Expr& e, const Expr* ops) {
    switch (e.kind()) {
    case ExprKind::BufferLoad: {
        auto l = e.as<BufferLoadNode>();
        return BufferLoadNode::make(l->buffer, std::vector<Expr>(ops, ops + l->indices.size()));
    }
    case ExprKind::Unary: return UnaryNode::make(e.as<UnaryNode>()->op, ops[0]);
    case ExprKind::Binary: return BinaryNode::make(e.as<BinaryNode>()->op, ops[0], ops[1]);
    case ExprKind::Select: return SelectNode::make(ops[0], ops[1], ops[2]);
    case ExprKind::Call: {
        auto n = e.as<CallNode>();
        return CallNode::make(n->fn, std::vector<Expr>(ops, ops + n->args.size()));
    }
    case ExprKind::Cast: return CastNode::make(e.type(), ops[0]);
    case ExprKind::WarpReduce: return WarpReduceNode::make(e.as<WarpReduceNode>()->op, ops[0]);
    default: return e;
    }
}

// ---- names ----

std::string_view op_word(const Expr& e) {
    switch (e.kind()) {
    case ExprKind::Binary:
        switch (e.as<BinaryNode>()->op) {
        case BinaryOp::Add: return "sum";
        case BinaryOp::Sub: return "diff";
        case BinaryOp::Mul: return "prod";
        case BinaryOp::Div: return "quot";
        case BinaryOp::Mod: return "rem";
        case BinaryOp::Min: return "min";
        case BinaryOp::Max: return "max";
        // Not "and"/"or": those are C++ keywords.
        case BinaryOp::And: return "all";
        case BinaryOp::Or: return "any";
        default: return "cmp";
        }
    case ExprKind::Unary: return e.as<UnaryNode>()->op == UnaryOp::Neg ? "neg" : "inv";
    case ExprKind::Call: return fn_name(e.as<CallNode>()->fn);
    case ExprKind::Select: return "sel";
    case ExprKind::Cast: return "conv";
    case ExprKind::BufferLoad: return e.as<BufferLoadNode>()->buffer->name;
    default: return "";
    }
}

/// The word an operand contributes to a name; empty for constants.
std::string_view word_of(const Expr& e) {
    switch (e.kind()) {
    case ExprKind::FieldAccess: return e.as<FieldAccessNode>()->field->name;
    case ExprKind::Var: {
        auto v = e.as<VarNode>();
        std::string_view name = v->name;
        // Another temp stands for its operation: "sum_src" contributes "sum".
        return v->role == VarRole::CseTemp ? name.substr(0, name.find('_')) : name;
    }
    case ExprKind::Counter: {
        int axis = e.as<CounterNode>()->axis;
        return axis < 3 ? std::string_view("xyz").substr(axis, 1) : "ctr";
    }
    case ExprKind::ThreadIndex: return "tid";
    case ExprKind::Const: return "";
    default: return op_word(e);
    }
}

/// Words of the operands of a chain of `op` (a + b + c gives the words of a, b and c).
void collect_words(const Expr& e, const Expr& chain, std::vector<std::string_view>& words) {
    auto b = e.as<BinaryNode>();
    auto top = chain.as<BinaryNode>();
    if (words.size() == 2) return;
    if (b && top && b->op == top->op) {
        collect_words(b->a, chain, words);
        collect_words(b->b, chain, words);
        return;
    }
    std::string_view w = word_of(e);
    if (!w.empty() && std::find(words.begin(), words.end(), w) == words.end()) words.push_back(w);
}

std::string name_for(const Expr& e) {
    std::vector<std::string_view> words;
    if (e.is<BinaryNode>()) {
        collect_words(e.as<BinaryNode>()->a, e, words);
        collect_words(e.as<BinaryNode>()->b, e, words);
    } else if (auto s = e.as<SelectNode>()) {
        collect_words(s->if_true, e, words);
        collect_words(s->if_false, e, words);
    } else if (!e.is<BufferLoadNode>()) {
        Operands ops = operands_of(e);
        for (int k = 0; k < ops.count; ++k) collect_words(*ops.at[k], e, words);
    }
    std::string name(op_word(e));
    // Never a bare function name: `double sqrt = sqrt(x);` would not compile.
    if (words.empty()) name += "_val";
    for (std::string_view w : words) name += fmt::format("_{}", w);
    for (char& c : name)
        if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') c = '_';
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) name.insert(0, "t");
    return name;
}

// ---- value numbering ----

/// An interior node up to its operands' value numbers.
struct NodeKey {
    ExprKind kind;
    ScalarType type;
    int op;            ///< unary/binary operator or math function
    const void* field; ///< for Load
    int child[Operands::kMax];
    bool operator==(const NodeKey& o) const {
        return kind == o.kind && type == o.type && op == o.op && field == o.field &&
               std::equal(child, child + Operands::kMax, o.child);
    }
};

struct NodeKeyHash {
    std::size_t operator()(const NodeKey& k) const {
        std::size_t h = std::size_t(k.kind) * 31 + std::size_t(k.type);
        auto mix = [&h](std::size_t v) { h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2); };
        mix(std::size_t(k.op));
        mix(std::hash<const void*>{}(k.field));
        for (int c : k.child) mix(std::size_t(c));
        return h;
    }
};

struct PairHash {
    std::size_t operator()(const std::pair<int, int>& p) const {
        return std::hash<std::int64_t>{}((std::int64_t(p.first) << 32) ^ p.second);
    }
};

/// The eliminator. Every subtree gets a value number: equal numbers mean structurally equal
/// trees that read the same versions of variables and fields, i.e. the same value. A write to a
/// variable or field between two reads starts a new version, so a Temporary assigned twice or
/// a field read after it is written never merges with the earlier reads.
///
/// The values are numbered once. Then, largest first (earliest among equals), every non-trivial
/// value that still occurs at least twice is extracted into a temporary: its occurrences become
/// the temporary and one copy of its tree becomes the definition, so each value inside it now
/// occurs (count - 1) times its multiplicity in it fewer. That bookkeeping gives the counts a
/// renumbering of the rewritten trees would give: a value that contains an extracted one and
/// occurs twice is larger, so it was extracted first, and equal-sized values are disjoint, so
/// their order changes nothing. The work is linear in the size of the trees (renumbering after
/// each extraction was quadratic for many repeated values).
class Eliminator {
public:
    explicit Eliminator(const BlockNode* block) : stmts_(block->stmts) {
        roots_.resize(stmts_.size());
        written_arrays_.resize(stmts_.size());
        for (std::size_t i = 0; i < stmts_.size(); ++i) {
            const Stmt& s = stmts_[i];
            if (auto a = s.as<AssignNode>())
                roots_[i].expr = a->rhs;
            else if (auto d = s.as<DeclareNode>())
                roots_[i].expr = d->value;
            else if (auto st = s.as<BufferStoreNode>(); st && st->buffer->scope != Scope::Global)
                roots_[i].expr = st->value; // a layer's array (fields are written by Assign here)
            else if (s.is<ForNode>() || s.is<AllocateNode>() || s.is<MmaChainNode>())
                ; // a layer's loops or chain: opaque, their values are not shared with other statements
            else if (!s.is<CommentNode>())
                throw InternalError(fmt::format(
                    "common-subexpression elimination expects only comments, assignments, "
                    "declarations and layer statements, found: {}",
                    to_string(s)));
            written_arrays_[i] = arrays_written_by(s);
        }
    }

    Stmt run(const Stmt& self) {
        number_all();
        choose();
        if (temps_.empty()) return self;
        for (Root& r : roots_)
            if (r.expr.defined()) r.expr = replace(r.expr, r.id, true);
        // A definition keeps its own root: it is what the temp stands for.
        for (Temp& t : temps_) t.def.expr = replace(t.def.expr, t.def.id, false);
        return assemble();
    }

private:
    struct Root {
        Expr expr;
        int id = -1; ///< value number of expr
    };
    struct Temp {
        Expr var;
        Root def;
    };
    struct Info {
        Expr rep;  ///< an expression with this number
        int size;  ///< its node count
        bool leaf; ///< a leaf kind
        bool trivial; ///< never extracted (too cheap, or it traps)
        bool traps = false; ///< contains an integer division or modulo
        int children = 0;   ///< operand value numbers (interior nodes)
        int child[Operands::kMax] = {-1, -1, -1, -1, -1, -1, -1, -1};
        int count = 0;      ///< occurrences in all trees, with multiplicity
        int first = 0;      ///< order of the first occurrence
    };

    std::vector<Stmt> stmts_;
    std::vector<Root> roots_; ///< per statement; no expression for comments
    std::vector<Temp> temps_;
    std::vector<Expr> var_of_; ///< per value number: the temp it was extracted into, if any

    std::unordered_map<Expr, int, ExprHash, ExprEqual> leaf_ids_;
    std::unordered_map<std::pair<int, int>, int, PairHash> versioned_ids_;
    std::unordered_map<NodeKey, int, NodeKeyHash> node_ids_;
    std::vector<Info> info_;

    /// Arrays each statement writes: a load after a write reads a new version of the array.
    std::vector<std::vector<const BufferInfo*>> written_arrays_;
    static std::vector<const BufferInfo*> arrays_written_by(const Stmt& s) {
        struct Collect : IRVisitor {
            std::vector<const BufferInfo*> out;
            void visit_BufferStore(const BufferStoreNode* n) override { out.push_back(n->buffer.get()); }
            void visit_MmaChain(const MmaChainNode* n) override { out.push_back(n->output.get()); }
        } c;
        c.visit(s);
        return c.out;
    }

    std::unordered_map<const BufferInfo*, int> array_version_;
    std::unordered_map<const VarNode*, int> var_version_;
    std::unordered_map<const FieldInfo*, int> field_version_;
    int order_ = 0;

    int new_id(const Expr& rep, int size, bool leaf, bool trivial) {
        info_.push_back({rep, size, leaf, trivial});
        return int(info_.size()) - 1;
    }

    int leaf_id(const Expr& e) {
        auto [it, added] = leaf_ids_.try_emplace(e, int(info_.size()));
        if (added) {
            new_id(e, 1, true, true);
            // A gather reads wherever its index points. Computed early, out of a select that
            // guards the index, it could read out of bounds: like a division, it stays put.
            auto a = e.as<FieldAccessNode>();
            // A reduction is a loop: it stays where it is, and so does what contains it.
            info_.back().traps = (a && a->absolute()) || e.is<ReduceNode>();
        }
        int base = it->second;
        int version = 0;
        if (auto v = e.as<VarNode>(); v && !var_version_.empty()) {
            auto f = var_version_.find(v);
            if (f != var_version_.end()) version = f->second;
        } else if (auto a = e.as<FieldAccessNode>(); a && !field_version_.empty()) {
            auto f = field_version_.find(a->field.get());
            if (f != field_version_.end()) version = f->second;
        }
        if (version == 0) return base;
        auto [vit, vadded] = versioned_ids_.try_emplace({base, version}, int(info_.size()));
        if (vadded) {
            new_id(e, 1, true, true);
            info_.back().traps = info_[base].traps;
        }
        return vit->second;
    }

    int visit(const Expr& e) {
        int id;
        if (is_leaf(e.kind())) {
            id = leaf_id(e);
        } else {
            NodeKey key{e.kind(), e.type(), 0, nullptr, {-1, -1, -1, -1, -1, -1, -1, -1}};
            if (auto u = e.as<UnaryNode>()) key.op = int(u->op);
            if (auto b = e.as<BinaryNode>()) key.op = int(b->op);
            if (auto c = e.as<CallNode>()) key.op = int(c->fn);
            if (auto l = e.as<BufferLoadNode>()) {
                key.field = l->buffer.get();
                auto v = array_version_.find(l->buffer.get());
                key.op = v == array_version_.end() ? 0 : v->second;
            }
            Operands ops = operands_of(e);
            for (int k = 0; k < ops.count; ++k) key.child[k] = visit(*ops.at[k]);
            auto [it, added] = node_ids_.try_emplace(key, int(info_.size()));
            if (added) {
                int size = 1;
                for (int k = 0; k < ops.count; ++k) size += info_[key.child[k]].size;
                // A negated or converted leaf is as cheap as the leaf itself.
                bool trivial = (e.is<UnaryNode>() || e.is<CastNode>() || e.is<BufferLoadNode>()) &&
                               info_[key.child[0]].leaf;
                // Integer division can trap (by zero). Computed into a temporary it would run
                // even where a select meant to guard it, so values containing one stay put.
                auto b = e.as<BinaryNode>();
                bool traps = b && is_int(b->type) && (b->op == BinaryOp::Div || b->op == BinaryOp::Mod);
                for (int k = 0; k < ops.count; ++k) traps |= info_[key.child[k]].traps;
                new_id(e, size, false, trivial || traps);
                Info& info = info_.back();
                info.traps = traps;
                info.children = ops.count;
                for (int k = 0; k < ops.count; ++k) info.child[k] = key.child[k];
                info.first = order_++; // after the operands: the post-order of first occurrences
            }
            id = it->second;
        }
        ++info_[id].count;
        return id;
    }

    /// Numbers every tree in statement order, counting each value's occurrences.
    void number_all() {
        for (std::size_t i = 0; i < stmts_.size(); ++i) {
            if (roots_[i].expr.defined()) roots_[i].id = visit(roots_[i].expr);
            if (auto a = stmts_[i].as<AssignNode>()) {
                if (auto v = a->lhs.as<VarNode>()) ++var_version_[v];
                if (auto f = a->lhs.as<FieldAccessNode>()) ++field_version_[f->field.get()];
            } else if (auto d = stmts_[i].as<DeclareNode>()) {
                ++var_version_[d->var.as<VarNode>()];
            }
            for (const BufferInfo* a : written_arrays_[i]) ++array_version_[a];
            // A loop that writes every element of a field's index axis (y(k) = ...).
            if (auto f = stmts_[i].as<ForNode>()) {
                struct Writes : IRVisitor {
                    std::vector<const FieldInfo*> out;
                    void visit_Assign(const AssignNode* n) override {
                        if (auto fa = n->lhs.as<FieldAccessNode>()) out.push_back(fa->field.get());
                    }
                } w;
                w.visit(f->body);
                for (const FieldInfo* field : w.out) ++field_version_[field];
            }
        }
    }

    /// Extracts, largest first and the earliest among equals, every non-trivial value that still
    /// occurs at least twice.
    void choose() {
        std::vector<int> candidates;
        for (int id = 0; id < int(info_.size()); ++id)
            if (info_[id].count >= 2 && !info_[id].trivial) candidates.push_back(id);
        std::sort(candidates.begin(), candidates.end(), [this](int a, int b) {
            return info_[a].size != info_[b].size ? info_[a].size > info_[b].size
                                                  : info_[a].first < info_[b].first;
        });
        var_of_.assign(info_.size(), Expr());
        std::vector<int> stack;
        for (int id : candidates) {
            const int count = info_[id].count;
            if (count < 2) continue;
            const Expr& rep = info_[id].rep;
            var_of_[id] = VarNode::make(rep.type(), name_for(rep), VarRole::CseTemp);
            temps_.push_back({var_of_[id], {rep, id}});
            // Its occurrences become one: every value inside occurs count - 1 times fewer per
            // occurrence inside it.
            stack.assign(info_[id].child, info_[id].child + info_[id].children);
            while (!stack.empty()) {
                Info& inner = info_[stack.back()];
                stack.pop_back();
                inner.count -= count - 1;
                stack.insert(stack.end(), inner.child, inner.child + inner.children);
            }
        }
    }

    /// `e` (value number `id`) with every extracted value inside replaced by its temp; `e`
    /// itself too when `allow_here`.
    Expr replace(const Expr& e, int id, bool allow_here) {
        if (allow_here && var_of_[id].defined()) return var_of_[id];
        const Info& info = info_[id];
        if (info.leaf) return e;
        Operands ops = operands_of(e);
        Expr replaced[Operands::kMax];
        bool changed = false;
        for (int k = 0; k < ops.count; ++k) {
            replaced[k] = replace(*ops.at[k], info.child[k], true);
            changed |= !replaced[k].same_as(*ops.at[k]);
        }
        return changed ? with_operands(e, replaced) : e;
    }

    // ---- output ----

    std::unordered_map<const VarNode*, int> temp_index_;
    std::vector<bool> declared_;

    /// Declares the temps `e` uses that are not declared yet, dependencies first, in the order
    /// in which `e` evaluates them.
    void declare_used(const Expr& e, std::vector<Stmt>& out) {
        if (auto v = e.as<VarNode>()) {
            auto it = temp_index_.find(v);
            if (it == temp_index_.end() || declared_[it->second]) return;
            declared_[it->second] = true;
            const Temp& t = temps_[it->second];
            declare_used(t.def.expr, out);
            out.push_back(DeclareNode::make(t.var, t.def.expr));
            return;
        }
        Operands ops = operands_of(e);
        for (int k = 0; k < ops.count; ++k) declare_used(*ops.at[k], out);
    }

    Stmt assemble() {
        for (std::size_t i = 0; i < temps_.size(); ++i)
            temp_index_[temps_[i].var.as<VarNode>()] = int(i);
        declared_.assign(temps_.size(), false);
        std::vector<Stmt> out;
        out.reserve(stmts_.size() + temps_.size());
        std::size_t comments_start = 0; // where the comments right before this statement begin
        bool after_comment = false;
        for (std::size_t i = 0; i < stmts_.size(); ++i) {
            const Stmt& s = stmts_[i];
            if (s.is<CommentNode>()) {
                if (!after_comment) comments_start = out.size();
                after_comment = true;
                out.push_back(s);
                continue;
            }
            std::vector<Stmt> decls;
            const Expr& root = roots_[i].expr;
            if (root.defined()) declare_used(root, decls);
            // Keep a statement's comment next to it: the declarations go above the comment.
            out.insert(out.begin() + std::ptrdiff_t(after_comment ? comments_start : out.size()),
                       decls.begin(), decls.end());
            after_comment = false;
            if (auto a = s.as<AssignNode>())
                out.push_back(root.same_as(a->rhs) ? s : AssignNode::make(a->lhs, root));
            else if (auto d = s.as<DeclareNode>())
                out.push_back(root.same_as(d->value) ? s : DeclareNode::make(d->var, root));
            else if (auto st = s.as<BufferStoreNode>())
                out.push_back(root.same_as(st->value) ? s : BufferStoreNode::make(st->buffer, st->indices, root));
            else
                out.push_back(s);
        }
        return BlockNode::make(std::move(out));
    }
};

} // namespace

Stmt eliminate_common_subexpressions(const Stmt& body) {
    // Stages: each on its own, as each runs in a loop of its own once fused (fuse_stages).
    if (auto b = body.as<BlockNode>(); b && !b->stmts.empty() && b->stmts[0].is<StageNode>()) {
        std::vector<Stmt> stages;
        bool changed = false;
        for (const Stmt& s : b->stmts) {
            auto stage = s.as<StageNode>();
            if (!stage) throw InternalError("common-subexpression elimination: a stage next to a statement");
            Stmt e = eliminate_common_subexpressions(stage->body);
            changed |= !e.same_as(stage->body);
            stages.push_back(e.same_as(stage->body) ? s : StageNode::make(stage->index, e));
        }
        return changed ? BlockNode::make(std::move(stages)) : body;
    }
    // A cell's statements inside the arrays of its layers.
    std::vector<BufferPtr> arrays;
    Stmt list = inside_allocations(body, arrays);
    auto block = list.as<BlockNode>();
    if (!block)
        throw InternalError(fmt::format(
            "common-subexpression elimination expects a block of statements, found: {}",
            to_string(body)));
    Stmt out = Eliminator(block).run(list);
    return out.same_as(list) ? body : allocate_all(arrays, out);
}

} // namespace loom::ir
