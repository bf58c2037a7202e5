// Whole warps for tensor-core layers (CUDA): an MmaChain statement needs all 32 lanes of a warp,
// but a bounds guard would leave the lanes past the last cell out of it.
#pragma once

#include "compiler/ir/ir.hpp"

namespace loom::ir {

/// For each GpuGrid loop along x (dim 0) whose body holds an MmaChain statement: the loop runs
/// over whole warps (its extent rounded up to 32 threads, which with a block whose x is a multiple
/// of 32 are whole warps), each thread past the last cell computes the last cell again (its
/// counter clamped to the last cell: what it reads is in bounds), and only the threads within the
/// range store to fields (each Global store under a guard). The guards along y and z stay: a
/// warp lies in one row of the block.
Stmt converge_warps(const Stmt& body);

} // namespace loom::ir
