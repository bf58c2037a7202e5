// Structural equality and hashing of IR trees.
//
// Variables compare by identity, not by name (a name is only a hint), so equal variables always
// agree on role, type and the weak flag of untyped parameters; fields by identity too.
// Everything else compares by kind, type and children.
#pragma once

#include "compiler/ir/ir.hpp"

#include <cstddef>

namespace loom::ir {

bool structurally_equal(const Expr& a, const Expr& b);
bool structurally_equal(const Stmt& a, const Stmt& b);
std::size_t structural_hash(const Expr& e);
std::size_t structural_hash(const Stmt& s);

/// For unordered containers keyed by expression structure.
struct ExprHash {
    std::size_t operator()(const Expr& e) const { return structural_hash(e); }
};
struct ExprEqual {
    bool operator()(const Expr& a, const Expr& b) const { return structurally_equal(a, b); }
};

} // namespace loom::ir
