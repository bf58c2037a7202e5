// Base pointers: where a cell reads or writes one field at several neighbouring elements, a
// pointer at the field's cell and small offsets from it (`src_c[src_stride_0] + src_c[-1]`)
// instead of the whole address at every access (`src[src_stride_0 * (x + 1) + y]`).
#pragma once

#include "compiler/ir/ir.hpp"

namespace loom::ir {

/// In every block of statements (the cell's, inside its loops and guard), each field accessed
/// directly by those statements (not inside a nested loop, condition or block) at two or more
/// distinct places of the form `counter + constant` on every spatial axis and a literal on every
/// index axis, with the same counters, gets a BasePointer at its cell (the counters, literals 0)
/// just before the first statement that accesses it (above that statement's DSL comments), and
/// those accesses become loads and stores of the pointer (a view of the field's buffer named
/// `<field>_c`, with its strides, so that flatten_addresses flattens the offsets and the pointer
/// alike) at the constants. Runs on coordinates, before flatten_addresses; CUDA only. Lanes'
/// vector accesses stay as they are.
Stmt point_at_cells(const Stmt& body);

} // namespace loom::ir
