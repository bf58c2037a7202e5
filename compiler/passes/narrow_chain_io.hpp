// Tensor-core chains whose inputs are read from fields of the operand type, or whose outputs
// are stored to such fields: the arrays between the fields and the chain take the operand type,
// so that the values are not widened to float32 only to be rounded back (an exact round trip:
// 64 conversions a cell each way at width 64; on an H200 the width-64 chain ran 5% faster).
#pragma once

#include "compiler/ir/ir.hpp"

namespace loom::ir {

/// Per MmaChain: its input array, when every store to it is `in[k] = (float32) X[...]` with X of
/// the chain's operand type and only the chain reads it, becomes an array of the operand type
/// filled with `X[...]`; its output array, when every read of it is `(operand) out[n]`, becomes
/// an array of the operand type read as `out[n]` (the chain rounds to it, as the cast did).
Stmt narrow_chain_io(const Stmt& body);

} // namespace loom::ir
