// Error table rows: the Schedule (block, cells per thread and their axis, registers, vector
// width), checked at create_kernel on both targets, without a GPU.
#include "tests/error/error_rows.hpp"
#include "tests/support/cpu_config.hpp"

#include <loom/loom.hpp>

#include <array>

namespace loom::test {

namespace {
/// A valid copy kernel of `dims` spatial axes, so that only the schedule can be wrong.
Kernel copy_with(const Schedule& s, const KernelConfig& cfg = {}, int dims = 2) {
    const std::string spec = "f, g: float64[" + std::to_string(dims) + "D]";
    auto [f, g] = fields<2>(spec);
    return create_kernel(Assignment(f.center(), g.center()), cfg, s);
}
Schedule block(int x, int y, int z) { return {.block = std::array<int, 3>{x, y, z}}; }
/// The sum of each row of 2^31 - 1 elements: a thread per row takes it (the default), a warp or
/// a block would step past int32 (nothing is allocated: create_kernel refuses).
Kernel long_row_sum(const Schedule& s, const std::string& name) {
    const int width = 2147483647;
    Field x = make_field("x", ScalarType::Float32, 1, {{width}});
    Field total = make_field("total", ScalarType::Float32, 1);
    IndexVar k("k", width);
    return create_kernel(Assignment(total.center(), sum(k, x(k))), cpu(name), s);
}
} // namespace

std::vector<ErrorRow> schedule_rows() {
    const auto U = Expect::User;
    return {
        // ---- block (CUDA's limits; checked at create_kernel, no GPU needed) ----
        {"block_zero",
         [] { copy_with(block(0, 1, 1)); },
         U,
         {"Schedule::block (0, 1, 1)", "dimension x must be between 1 and 1024",
          "leave block unset to let loom choose"}},
        {"block_negative",
         [] { copy_with(block(32, -4, 1)); },
         U,
         {"Schedule::block (32, -4, 1)", "dimension y must be between 1 and 1024"}},
        {"block_z_too_large",
         [] { copy_with(block(1, 1, 65)); },
         U,
         {"Schedule::block (1, 1, 65)", "dimension z must be between 1 and 64"}},
        {"block_too_many_threads",
         [] { copy_with(block(64, 32, 1)); },
         U,
         {"Schedule::block (64, 32, 1) = 2048 threads", "at most 1024 threads",
          "x * y * z at most 1024"}},
        {"block_checked_for_cpu_too",
         [] { copy_with(block(0, 0, 0), cpu("cpu_block")); },
         U,
         {"kernel 'cpu_block' has Schedule::block (0, 0, 0)", "between 1 and 1024"}},
        // ---- cells per thread and their axis ----
        {"cells_per_thread_negative",
         [] { copy_with({.cells_per_thread = -1}); },
         U,
         {"Schedule::cells_per_thread = -1", "use 1 to 64, or 0 to let loom choose"}},
        {"cells_per_thread_too_many",
         [] { copy_with({.cells_per_thread = 100000}); },
         U,
         {"Schedule::cells_per_thread = 100000", "use 1 to 64"}},
        {"cells_axis_beyond_the_axes",
         [] { copy_with({.cells_axis = 2}, {.name = "axes"}); },
         U,
         {"kernel 'axes' has Schedule::cells_axis = 2",
          "iteration space has 2 spatial axes (0 to 1)", "set cells_axis to one of them",
          "leave it unset", "(axis 0 here)"}},
        {"cells_axis_negative",
         [] { copy_with({.cells_axis = -1}, {}, 1); },
         U,
         {"Schedule::cells_axis = -1", "has 1 spatial axis (0 to 0)"}},
        {"cells_axis_on_the_loop_axis_of_a_4d_kernel",
         [] { copy_with({.cells_axis = 0}, {.name = "four"}, 4); },
         U,
         {"kernel 'four' has Schedule::cells_axis = 0",
          "stays a loop inside each thread of this 4D kernel",
          "three axes map onto threads: 3, 2, 1", "leave it unset for axis 1"}},
        {"cells_axis_checked_for_cpu_too",
         [] { copy_with({.cells_axis = 5}, cpu("cpu_axis"), 3); },
         U,
         {"kernel 'cpu_axis' has Schedule::cells_axis = 5", "has 3 spatial axes (0 to 2)"}},
        // ---- registers ----
        {"max_registers_too_few",
         [] { copy_with({.max_registers = 8}); },
         U,
         {"Schedule::max_registers = 8", "16 to 255", "0 to let the compiler choose"}},
        {"max_registers_too_many",
         [] { copy_with({.max_registers = 300}); },
         U,
         {"Schedule::max_registers = 300", "16 to 255"}},
        // ---- shared memory: a budget past every block's limit is refused before any launch ----
        {"shared_memory_budget_beyond_any_block",
         [] { copy_with({.shared_memory_budget = std::size_t(1) << 20}, {.name = "budget"}); },
         U,
         {"kernel 'budget' has Schedule::shared_memory_budget = 1048576 bytes",
          "a block has at most 232448 bytes (227 KiB, sm_90; sm_80: 163 KiB) of shared memory",
          "set it to at most 232448", "leave it unset to let loom choose"}},
        {"shared_memory_budget_beyond_any_block_on_cpu_too",
         [] { copy_with({.shared_memory_budget = 232449}, cpu("cpu_budget")); },
         U,
         {"kernel 'cpu_budget' has Schedule::shared_memory_budget = 232449 bytes"}},
        // ---- vector width: only scalar loads and stores so far ----
        {"vector_width_three",
         [] { copy_with({.vector_width = 3}); },
         U,
         {"Schedule::vector_width = 3", "use 1 (scalar loads and stores), 2 or 4",
          "or 0 to let loom choose"}},
        {"vector_width_with_shared_tiles",
         [] { copy_with({.vector_width = 4, .shared_tiles = true}, {.name = "tiled_lanes"}); },
         U,
         {"kernel 'tiled_lanes' has Schedule::vector_width = 4 with shared_tiles = true",
          "set vector_width to 1, or that option to false"}},
        {"vector_width_with_a_manual_grid",
         [] { copy_with({.manual_launch_grid = true, .vector_width = 2}); },
         U,
         {"Schedule::vector_width = 2 with manual_launch_grid = true", "the manual grid to false"}},
        {"vector_width_along_the_cells_axis",
         [] { copy_with({.cells_per_thread = 2, .cells_axis = 1, .vector_width = 4}, {.name = "cells_lanes"}); },
         U,
         {"kernel 'cells_lanes' has Schedule::vector_width = 4 and cells_per_thread = 2 along axis 1",
          "the axis the lanes run along", "leave cells_axis unset or pick another axis"}},
        {"vector_width_with_a_stepped_slice",
         [] {
             KernelConfig c{.name = "stepped_lanes"};
             c.iteration_slice = Slice{all(), range(0, end, 2)};
             copy_with({.vector_width = 2}, c);
         },
         U,
         {"kernel 'stepped_lanes' has Schedule::vector_width = 2", "steps by 2 along axis 1",
          "lanes are consecutive cells; set vector_width to 1"}},
        {"vector_width_negative",
         [] { copy_with({.vector_width = -2}, cpu("cpu_vector")); },
         U,
         {"kernel 'cpu_vector' has Schedule::vector_width = -2", "use 1 (scalar loads and stores), 2 or 4"}},
        // ---- shared tiles and block reductions: the kernels they cannot serve ----
        {"shared_tiles_with_a_step",
         [] {
             KernelConfig c{.name = "tiles_step"};
             c.iteration_slice = Slice{range(0, end, 3), range(0, end)};
             copy_with({.shared_tiles = true}, c);
         },
         U,
         {"kernel 'tiles_step' has Schedule::shared_tiles = true", "steps by 3 on axis 0",
          "set shared_tiles to false for this kernel"}},
        {"shared_tiles_in_4d_on_the_cpu",
         [] { copy_with({.shared_tiles = true}, cpu("tiles_4d"), 4); },
         U,
         {"kernel 'tiles_4d' has Schedule::shared_tiles = true", "4 spatial axes"}},
        {"reduce_in_block_with_a_2d_block",
         [] { copy_with({.block = std::array<int, 3>{64, 4, 1}, .reduce_in_block = true}); },
         U,
         {"Schedule::block (64, 4, 1) with reduce_in_block = true",
          "(n, 1, 1) with n a power of two from 32 to 1024"}},
        {"reduce_in_block_with_shared_tiles",
         [] { copy_with({.shared_tiles = true, .reduce_in_block = true}, cpu("both")); },
         U,
         {"kernel 'both' has Schedule::reduce_in_block = true with shared_tiles = true",
          "set one of them to false"}},
        // ---- a row too long for the schedule: its threads' int32 counter would overflow ----
        {"row_too_long_for_a_warp",
         [] { long_row_sum({.reduce_in_warp = true}, "long_row"); },
         U,
         {"kernel 'long_row' has Schedule::reduce_in_warp = true",
          "the index axis k runs over 2147483647 elements, a row too long for this schedule",
          "at most 2147483616 elements (2^31 - 32)", "Set reduce_in_warp to false"}},
        {"row_too_long_for_a_block",
         [] { long_row_sum({.block = std::array<int, 3>{512, 1, 1}, .reduce_in_block = true}, "long_row"); },
         U,
         {"Schedule::reduce_in_block = true", "2147483647 elements",
          "with a block of 512 per row a row takes at most 2147483136 elements (2^31 - 512)"}},
    };
}

} // namespace loom::test
