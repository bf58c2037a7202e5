// Cells in registers: a thread's consecutive cells along one axis computed as one group, so that
// what two of them read of the same element is loaded once (register streaming along the
// cells' axis: a 27-point stencil reads each of its planes once per thread, not three times).
#pragma once

#include "compiler/ir/ir.hpp"

namespace loom::ir {

/// For each loop over a thread's cells (`for cell in [0, C)` around the grid loop of the cells'
/// axis, `for x in [cell + s, stop) step C`, from map_to_gpu) whose cells read some element of a
/// field the kernel does not write at two or more of them: the grid loop runs over groups,
/// `for x_cells in [s, stop) step C`, and
///   - where the whole group lies before `stop`, its C cells one after the other (each with x =
///     x_cells + c substituted and its own locals), every element of a read-only field read at
///     `counter + constant` coordinates by two or more of them loaded once, at the top of the
///     group, into a local (`<field>_r`) that every cell reads;
///   - elsewhere (the last, partial group), the cells one by one as before.
/// Loads at other coordinates (gathers, an IndexVar's element) stay where they are. Cells that
/// share less than `min_saving` of their reads (counting each element once per cell that reads
/// it: 1 - distinct elements / reads), and so those of pointwise kernels, are left as they are.
/// CUDA only; runs on coordinates, before point_at_cells gives the shared loads a base pointer.
Stmt stream_cells(const Stmt& body, double min_saving);

} // namespace loom::ir
