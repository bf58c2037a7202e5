// The launch description: how many threads a kernel needs and how they are grouped in blocks.
//
// The grid is data, not code: per block dimension, the number of threads needed (the extent) is
// an expression over the kernel's size and scalar arguments, evaluated at call time, and the grid
// is ceil(extent / block). A kernel whose iteration bounds depend on another counter cannot have
// its grid inferred: its description is "manual" and the caller sets block and grid. A CPU kernel
// runs loops and has no grid at all: its description says so (`has_grid` false) and holds nothing
// else.
#pragma once

#include <loom/detail/ir_handle.hpp>

#include <array>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>

namespace loom {

namespace ir {
struct Value;
} // namespace ir

using Dim3 = std::array<std::int64_t, 3>;

struct LaunchDescription {
    /// False for the CPU target: no extents, no block, nothing to evaluate; `no_grid_reason` says
    /// why. `manual` stays false, because there is no grid for the caller to set either.
    bool has_grid = true;
    std::string no_grid_reason;
    bool manual = false;
    std::string manual_reason;               ///< why the grid cannot be inferred
    std::array<int, 3> default_block{1, 1, 1};
    std::array<Expr, 3> extents;             ///< threads needed along x, y, z (undefined if manual)
    std::array<int, 3> axis_of_dim{-1, -1, -1}; ///< spatial axis each block dimension walks
    std::array<int, 3> cells_per_thread{1, 1, 1}; ///< consecutive cells one thread computes
    std::size_t shared_bytes = 0; ///< dynamic shared memory per block (staged buffers), at launch
    std::size_t static_shared_bytes = 0; ///< static __shared__ arrays (staged buffers up to 48 KB)
    /// The threads per block the kernel is compiled for (`__launch_bounds__`), when the schedule
    /// fixed the block; a launch with more is refused. 0: any block.
    int max_threads_per_block = 0;
    /// The kernel's code assumes exactly `default_block` (its blocks compute tiles of that many
    /// threads, Schedule::shared_tiles): the block is not trimmed to small extents, and a launch
    /// with another block_size is refused.
    bool exact_block = false;
    /// The kernel's code assumes exactly the inferred grid (a reduction across blocks counts its
    /// blocks): a launch with num_blocks set is refused.
    bool exact_grid = false;

    /// The description of a kernel without a launch grid (the CPU target's loops).
    static LaunchDescription none(std::string reason);

    /// The extents for the given argument values (Size and Parameter variables).
    Dim3 evaluate_extents(const std::unordered_map<const ir::VarNode*, ir::Value>& args) const;
    /// The default block, trimmed where an extent is smaller: x stays a multiple of the warp
    /// (32) unless the whole extent is smaller, y and z shrink to the next power of two.
    Dim3 block_for(const Dim3& extents) const;
    /// ceil(extent / block) per dimension; UserError for a block dimension below 1.
    static Dim3 grid_for(const Dim3& extents, const Dim3& block);
    /// One line: "block (64, 4, 1); grid = ceil((size_1 - 2, size_0 - 2, 1) / block)", or
    /// "none (CPU target: loops, no launch grid)".
    std::string describe() const;
};

} // namespace loom
