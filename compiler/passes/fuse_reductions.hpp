// Independent reductions over the same range, computed in one loop: column sums and maxima read
// each element once instead of twice.
#pragma once

#include "compiler/ir/ir.hpp"

#include <vector>

namespace loom::ir {

/// In every list of statements, an accumulator loop (accumulators' declarations, then a serial
/// loop ending with their updates: one from lower_reductions, two from online_softmax) joins an earlier one of the same
/// list over the same range (start, stop and step structurally equal) when nothing between them
/// computes what it reads (no variable declared there, no field stored there) and it reads
/// nothing the earlier loop accumulates: the declarations together, then one loop whose body
/// is the earlier body's work, the later body's work (its loop variable renamed), and both
/// updates last. The warp and block reductions share such a loop at once (AccumulatorLoop).
/// Returns `body` itself when nothing joins.
Stmt fuse_reductions(const Stmt& body);

/// Whether `moved` may run before stmts[from, to) (those marked `gone` do not count): none of
/// them declares a variable it reads, and each is a declaration, a comment, or a store to an
/// array and fields it does not read.
bool may_move_up(const std::vector<Stmt>& stmts, const std::vector<bool>& gone, std::size_t from, std::size_t to,
                 const Stmt& moved);

} // namespace loom::ir
