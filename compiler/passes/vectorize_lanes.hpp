// Lanes: a thread computes several consecutive cells along the fields' unit-stride axis and
// loads and stores them as one vector (float4, float2, double2, ...).
#pragma once

#include "compiler/ir/ir.hpp"

namespace loom::ir {

/// Gives the GpuGrid loop bound to hardware dimension x (the fastest memory axis) `width` cells
/// per thread (2 or 4): its counter steps by `width` (`x_lanes`) from the multiple of `width` at
/// or below the loop's start (so that the groups of aligned rows are aligned), and where all
/// `width` cells of a group lie in the loop's range, each read of a field at `x` (any other coordinates that do not change
/// from cell to cell) becomes one VectorLoad into a local array of lanes before the cells, and
/// each store of a field at `x` at the top of the cell's statements one VectorStore after them;
/// the cells themselves are an unrolled loop over the lanes. Elsewhere (the partial groups at
/// either end) the cells run one by one, guarded. Fields whose lanes would exceed 16 bytes, whose
/// unit-stride axis is another (a component axis), or that the cell both reads and writes keep
/// scalar accesses. A body without such a loop, or with nothing to load or store in lanes, is
/// returned as it is. The CUDA printer prints the lanes as loom::load_lanes and store_lanes,
/// which fall back to elements where an address is not aligned to the lanes.
Stmt vectorize_lanes(const Stmt& body, int width);

} // namespace loom::ir
