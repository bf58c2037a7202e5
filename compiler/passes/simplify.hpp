// Constant folding and algebraic simplification.
#pragma once

#include "compiler/ir/ir.hpp"

namespace loom::ir {

/// Folds constants and applies identities that keep values exact:
///   ints:   all folding, x+0, x*1, x*0, x-x, x/1, (x+c1)+c2, ...
///   floats: folding of constant operands (rounded to the type), x+(-0.0), x-(+0.0), x*1, x/1, -(-x),
///           a + (-b) -> a - b, a - (-b) -> a + b; never reassociation (it changes rounding).
///   logic:  true && x -> x, false || x -> x, !!x -> x, comparisons of constants,
///           select with a constant condition, select(c, a, a) -> a.
///   casts:  of constants folded; to the same type removed.
/// Returns the same handle when nothing changed.
Expr simplify(const Expr& e);
Stmt simplify(const Stmt& s);

/// The first integer Div or Mod in `s` whose divisor folds (as simplify folds it) to the constant
/// 0, as written (unsimplified); an undefined Expr when there is none. Found even where simplify
/// would then drop the division ((x / 0) * 0, q - q).
Expr find_division_by_zero(const Stmt& s);

} // namespace loom::ir
