// Lanes: a thread computes several consecutive cells along the fields' unit-stride axis and
// loads and stores them as one vector (float4, float2, double2, ...).
#pragma once

#include "compiler/ir/ir.hpp"

#include <cstddef>
#include <set>
#include <utility>
#include <vector>

namespace loom::ir {

/// Gives the GpuGrid loop bound to hardware dimension x (the fastest memory axis) `width` cells
/// per thread (2, 4, or 8 for 16-bit floats): its counter steps by `width` (`x_lanes`) from the multiple of `width` at
/// or below the loop's start (so that the groups of aligned rows are aligned). Where all `width`
/// cells of a group lie in the loop's range, each row the cells read of a field (at `x + d`,
/// d within the kernel's relative reach below and above along that axis, and 8; any
/// other coordinates that do not change from cell to cell) becomes a local array: one
/// VectorLoad of the `width` elements at x_lanes into its middle and the neighbours before the
/// first lane and after the last that the cells read, loaded one by one; each store of a field
/// at `x` at the top of the cell's statements becomes one VectorStore after them; the cells
/// themselves are an unrolled loop over the lanes. The partial groups at either end take the
/// same lanes where the lanes touch nothing but their arrays (their rows still vectors where
/// the group lies within the kernel's reach, the neighbours guarded, the stores lane by lane),
/// elsewhere the cells run one by one, guarded. An if/else on what all lanes share (stream_cells' whole
/// group of cells and its last one) is taken branch by branch, so a streamed group loads each
/// row once. Fields whose lanes would exceed 16 bytes, whose unit-stride axis is another (a
/// component axis), or that the cell both reads and writes keep scalar accesses. A body
/// without such a loop, or with nothing to load or store in lanes, is returned as it is. The
/// CUDA printer prints the lanes as loom::load_lanes and store_lanes, which fall back to
/// elements where an address is not aligned to the lanes.
/// What keeps a row of lanes inside its array: per spatial axis, how far the kernel's relative
/// reads reach below and above the cell (KernelAnalysis::reach), and the buffers (fields read only
/// at absolute positions, of their own shape). A read under a guard (a select's value, an if's
/// body) goes into lanes only where these say it lies inside for every cell of the range.
struct LaneBounds {
    std::vector<std::pair<int, int>> reach;
    std::set<const FieldInfo*> buffers;
};

/// A cell's statements that read more than `max_rows_at_once` rows of lanes (a streamed group
/// of a 27-point box reads 18) roll where they can: cut after each store of lanes (one cell of
/// the group), each run of them with its own unrolled loop over the lanes, its stores after it,
/// and each row loaded just before the first run that reads it, so a thread holds about one
/// cell's rows at a time, not the group's. Runs that share a local (other than stream_cells'
/// shared loads, which then read the rows in place: a cell's outputs with a common
/// subexpression) run as one. Where each run is a
/// store of a chain of sums whose terms each read one plane along the cells' axis, in planes
/// that never go back, the group rolls plane by plane: each plane's rows once, every cell that
/// reads it continuing its sum there (`<store>_sum`, one element per lane) in its own order. A
/// group past `max_rows_at_once` that cannot roll gets no lanes (the loop comes back as it is).
Stmt vectorize_lanes(const Stmt& body, int width, const LaneBounds& bounds,
                     std::size_t max_rows_at_once = std::size_t(-1));

} // namespace loom::ir
