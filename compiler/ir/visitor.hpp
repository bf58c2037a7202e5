// Traversal of the IR: a read-only visitor and a rebuilding mutator.
//
// IRMutator returns the original node when no child changed, so a pass that changes nothing
// returns an identical handle (same_as) and the pipeline log can say "unchanged".
#pragma once

#include "compiler/ir/ir.hpp"

#include <set>
#include <vector>

namespace loom::ir {

class IRVisitor {
public:
    virtual ~IRVisitor() = default;
    void visit(const Expr& e);
    void visit(const Stmt& s);

protected:
    // Defaults visit every child in evaluation order.
#define LOOM_X(N) virtual void visit_##N(const ir::N##Node* node);
    LOOM_FOR_EACH_EXPR_NODE(LOOM_X)
    LOOM_FOR_EACH_STMT_NODE(LOOM_X)
#undef LOOM_X
};

class IRMutator {
public:
    virtual ~IRMutator() = default;
    Expr mutate(const Expr& e);
    Stmt mutate(const Stmt& s);
    /// Each of `exprs` mutated; `changed` is set when one of them changed.
    std::vector<Expr> mutate_each(const std::vector<Expr>& exprs, bool& changed);

protected:
    // Defaults mutate every child and rebuild the node only if a child changed. `self` is the
    // handle of `node`, returned as is when nothing changed.
#define LOOM_X(N) virtual Expr visit_##N(const ir::N##Node* node, const Expr& self);
    LOOM_FOR_EACH_EXPR_NODE(LOOM_X)
#undef LOOM_X
#define LOOM_X(N) virtual Stmt visit_##N(const ir::N##Node* node, const Stmt& self);
    LOOM_FOR_EACH_STMT_NODE(LOOM_X)
#undef LOOM_X
};

/// The expression handles of a tree in pre-order, each occurrence once (shared nodes repeat).
/// For analyses that need handles rather than nodes.
std::vector<Expr> subexpressions(const Expr& root);
std::vector<Expr> subexpressions(const Stmt& root);
/// Whether `s` stores to a field (a Global buffer) anywhere.
bool stores_to_a_field(const Stmt& s);

/// The fields `root` stores to: through their buffers, views of them and vector stores.
std::set<const FieldInfo*> written_fields(const Stmt& root);

/// The variables `root` declares: its declarations' and its loops' (at any depth).
std::set<const ExprNode*> declared_variables(const Stmt& root);

/// `root` with every use of variable `from` replaced by `to`.
Stmt replace_var(const Stmt& root, const Expr& from, const Expr& to);
Expr replace_var(const Expr& root, const Expr& from, const Expr& to);

/// The statements of `block` with nested blocks spliced in (a Block is no scope), each other
/// statement mutated by `m` and appended to `out`; `changed` is set when one of them changed.
/// For passes that rewrite a list of statements as a whole (fuse_reductions, online_softmax).
void splice_mutated(const BlockNode* block, IRMutator& m, std::vector<Stmt>& out, bool& changed);

/// The direct expression children of a node, in evaluation order.
std::vector<Expr> children(const Expr& e);

} // namespace loom::ir
