// Lanes: a thread computes several consecutive cells along the fields' unit-stride axis and
// loads and stores them as one vector (float4, float2, double2, ...).
#pragma once

#include "compiler/ir/ir.hpp"

#include <utility>

namespace loom::ir {

/// Gives the GpuGrid loop bound to hardware dimension x (the fastest memory axis) `width` cells
/// per thread (2, 4, or 8 for 16-bit floats): its counter steps by `width` (`x_lanes`) from the multiple of `width` at
/// or below the loop's start (so that the groups of aligned rows are aligned). Where all `width`
/// cells of a group lie in the loop's range, each row the cells read of a field (at `x + d`,
/// d within `reach`, the kernel's relative reach below and above along that axis, and 8; any
/// other coordinates that do not change from cell to cell) becomes a local array: one
/// VectorLoad of the `width` elements at x_lanes into its middle and the neighbours before the
/// first lane and after the last that the cells read, loaded one by one; each store of a field
/// at `x` at the top of the cell's statements becomes one VectorStore after them; the cells
/// themselves are an unrolled loop over the lanes. Elsewhere (the partial groups at either end)
/// the cells run one by one, guarded. An if/else on what all lanes share (stream_cells' whole
/// group of cells and its last one) is taken branch by branch, so a streamed group loads each
/// row once. Fields whose lanes would exceed 16 bytes, whose unit-stride axis is another (a
/// component axis), or that the cell both reads and writes keep scalar accesses. A body
/// without such a loop, or with nothing to load or store in lanes, is returned as it is. The
/// CUDA printer prints the lanes as loom::load_lanes and store_lanes, which fall back to
/// elements where an address is not aligned to the lanes.
Stmt vectorize_lanes(const Stmt& body, int width, std::pair<int, int> reach);

} // namespace loom::ir
