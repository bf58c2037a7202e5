// GPU mapping: loops become thread indices.
#pragma once

#include "compiler/ir/ir.hpp"
#include "compiler/ir/field.hpp"

#include <array>

namespace loom {

/// Replaces the loops of the nest built by lower_iteration_space by thread indices: the fastest-
/// varying memory axis of `primary` goes to threadIdx.x, the next to y, the next to z. Each
/// mapped counter is declared from its thread index (axis order, so a bound may use an earlier
/// counter), and one guard keeps threads outside the iteration space idle. A fourth spatial axis
/// stays a loop inside each thread. `axis_of_dim` receives the axis each block dimension walks.
Stmt map_to_gpu(const Stmt& loop_nest, const FieldInfo& primary, std::array<int, 3>& axis_of_dim);

} // namespace loom
