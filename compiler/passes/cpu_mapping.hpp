// CPU mapping: the loop nest stays loops, ordered for memory and marked for OpenMP.
//
// The CPU target shares the pipeline with CUDA up to lower_iteration_space's target-neutral
// nest (one For per spatial axis, axis 0 outermost). Where the GPU turns the loops into thread
// indices, the CPU keeps them and decides two things:
//
// - Order. The innermost loop should walk the fastest memory axis of the primary field (the
//   first field written), so that consecutive iterations touch consecutive elements: that is
//   what the compiler vectorizes and what the cache likes. The planned order is the primary
//   field's memory order, slowest axis outermost: for the C layout that is axis order and the
//   nest is unchanged; for Fortran, SoA (fzyx) and AoS (zyxf) the nest is reversed (axis 0, the
//   fastest there, becomes innermost). A slice bound may use the counters of earlier axes
//   (Slice{all(), from(x)}), and a loop's bounds can only read counters of loops outside it, so
//   the order is built from the inside out: each step takes, among the loops no other remaining
//   loop's bounds depend on, the fastest in memory. Without such bounds this is exactly the
//   memory order; with them it is the closest legal one (the Fortran triangle keeps axis order).
// - Kinds. The outermost loop is Parallel (`#pragma omp parallel for`), the innermost Vectorized
//   (`#pragma omp simd`), and a single loop (1D) both (`#pragma omp parallel for simd`); loops in
//   between stay Serial. Both pragmas assert that iterations are independent; analyze_kernel
//   guarantees it (no in-place stencils, one write per cell, temporaries per iteration), as it
//   does for GPU threads.
//
// There are no thread indices, guards or cells per thread, and no launch grid: bounds that
// depend on another counter need no manual grid on the CPU, in any dimension.
#pragma once

#include "compiler/ir/ir.hpp"

#include <loom/field_info.hpp>

#include <vector>

namespace loom::ir {

/// The loop order for the CPU, as spatial axes, outermost first (see above). `loop_nest` is the
/// output of lower_iteration_space; `primary` the field whose layout decides.
std::vector<int> plan_cpu_loop_order(const Stmt& loop_nest, const FieldInfo& primary);

/// Rebuilds the perfect nest of lower_iteration_space in `order` (spatial axes, outermost first)
/// and marks the outermost loop Parallel and the innermost Vectorized. The body is unchanged.
/// Throws InternalError if `order` is not a permutation of the nest's axes or puts a loop outside
/// a loop whose counter its bounds read.
Stmt map_to_cpu(const Stmt& loop_nest, const std::vector<int>& order);

} // namespace loom::ir
