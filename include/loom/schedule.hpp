// How a CUDA kernel computes what its KernelConfig says: the block shape, the cells each thread
// computes and along which axis, shared memory, registers, the launch grid and the vector width.
// create_kernel takes one as its third argument; whatever it leaves open (the default) loom
// chooses by the heuristic documented in docs/guide.md ("Launch configuration") and
// compiler/passes/choose_schedule.hpp. Kernel::schedule() returns the schedule that was used.
//
// The CPU target has no threads, blocks or grid: there every field is checked as on the GPU (so
// that one schedule serves both targets) and then ignored.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>

namespace loom {

/// What tensor cores a kernel's layers (chains of float32 nn::Dense layers with runtime
/// weights, float32 or 16-bit) multiply on: Schedule::tensor_cores.
enum class TensorCores {
    Off,      ///< the CUDA cores, in the layer's type
    Float16,  ///< mma.sync m16n8k16: operands rounded to float16, sums in float32
    BFloat16, ///< the same with bfloat16 operands (8 bits of mantissa, float32's range)
    TF32,     ///< mma.sync m16n8k8: operands rounded to tf32 (float32 with 10 bits of mantissa)
};
/// "Off", "Float16", "BFloat16" or "TF32": the enumerator's name.
const char* to_string(TensorCores t);

struct Schedule {
    /// Threads per block (x, y, z). Unset: (256, 1, 1) when one axis is mapped onto threads,
    /// (64, 4, 1) for more, trimmed to extents known at generation time. Each dimension within
    /// CUDA's limits (1024, 1024, 64), at most 1024 threads in all. A block dimension no axis is
    /// mapped onto launches one thread whatever this says.
    std::optional<std::array<int, 3>> block;
    /// Consecutive cells each thread computes along `cells_axis`, 1 to 64; 0 chooses (4 in 2D
    /// and up, 1 for kernels with layers). 1D kernels and manual grids always compute one cell
    /// per thread (a manual grid means one thread per cell). With tensor_cores: the tiles of 32
    /// consecutive cells along x each warp computes in turn, a cell per lane, warp w of the
    /// grid's G taking tiles w, w + G, ..., so a thread's cells are 32 G apart (0 chooses 8 to
    /// 64, more for larger weights: the block copies them into shared memory once for all its
    /// tiles).
    int cells_per_thread = 0;
    /// The spatial axis (0 = the slowest index of the array, as in `ctr(0)`) a thread's cells
    /// run along. Unset: the slowest memory axis that is mapped onto threads, so that a warp
    /// still reads consecutive elements at each cell. It must be a mapped axis: not, in 4D, the
    /// slowest axis, which stays a loop inside each thread.
    std::optional<int> cells_axis;
    /// Register streaming along cells_axis: a thread's cells are computed as one group, and an
    /// element of a field the kernel does not write that two or more of them read at
    /// neighbouring cells (a 27-point stencil's planes, a 5-point stencil's row neighbours) is
    /// loaded once into a register for all of them; the last, partial group of each thread runs
    /// cell by cell. Needs cells_per_thread > 1 (the cells are the group); a kernel whose cells
    /// share no read (a pointwise one) is left as it is, and Kernel::schedule() then says false.
    /// Unset: true. CUDA only: the CPU target ignores it.
    std::optional<bool> stream_cells;
    /// Buffers (fields read only at absolute positions, such as a layer's runtime weights) with
    /// a fixed shape are copied into shared memory once per block, in order, while they fit in
    /// this many bytes; the rest are read from global memory. 0 turns staging off. Unset: 100 KiB.
    /// At most 232448 (227 KiB, a block's shared memory on sm_90; larger is refused).
    std::optional<std::size_t> shared_memory_budget;
    /// The most registers one thread may use (`__maxnreg__`), 16 to 255, or 0 for the compiler's
    /// choice. Fewer registers let more threads share an SM; too few make the compiler spill to
    /// local memory. Worth trying on long kernels such as MLPs (docs/performance.md).
    int max_registers = 0;
    /// The caller sets block_size and num_blocks on the KernelFunction before each launch, and
    /// each thread computes one cell. Needed when slice bounds use another counter.
    bool manual_launch_grid = false;
    /// Lanes: each thread computes this many consecutive cells along the fields' fastest memory
    /// axis and loads and stores each field it reads or writes at the cell as one vector
    /// (float4, float2, double2, int4, int2, 16-bit floats as 4, 8 or 16 bytes: at most 16
    /// bytes; where an address is not aligned
    /// to the vector, as in a view that starts at an odd element, element by element). Reads at
    /// neighbouring cells along the lanes' axis (up to 8 away) come from the same row of lanes,
    /// which loads its neighbours apart; with stream_cells each row of a thread's group of cells
    /// loads once. 1 is scalar loads and stores, 2 or 4 lanes, 8 for float16 and bfloat16
    /// fields (a field whose 8 elements exceed 16 bytes stays scalar); 0 chooses: 16 bytes of the
    /// widest element, for stencils only where a cell reads at most 5 rows of lanes of a field
    /// or a group of cells at most 10 (compiler/passes/choose_schedule.hpp), else 1
    /// (KernelFunction::autotune tries lanes on any kernel). Fields the cell both reads and
    /// writes, and types with no vector (int64, bool, ...) stay scalar; where nothing is left for lanes the
    /// kernel runs scalar and Kernel::schedule() says 1. Needs a unit step along that axis,
    /// and not shared_tiles, reduce_in_block, reduce_in_warp, a manual grid, several fused stages, or
    /// cells_per_thread along the lanes' axis. CUDA only: the CPU target ignores it.
    int vector_width = 0;
    /// Shared-memory tiles: each block first copies what its cells read of every field read at
    /// neighbouring cells (the block's cells plus the halo the stencil reaches, one tile per
    /// field and component) into shared memory, then computes from there: one global read per
    /// element and block instead of one per stencil point. The block is then fixed: the kernel
    /// is compiled for exactly `block` threads, and a launch with another block_size is refused.
    /// Needs unit steps, bounds that use no other counter, and at most three axes. The tiles
    /// take shared memory from shared_memory_budget and must fit CUDA's 48 KB of static shared
    /// memory. The CPU target runs the tiled kernel too, a block at a time. Off by default.
    bool shared_tiles = false;
    /// One block per cell, its threads sharing the cell's work: each reduction (sum, max, min,
    /// mean over an index axis: a LayerNorm row) is summed by every thread over every
    /// (block size)-th term, then combined by warp shuffles, within each warp and then across
    /// the warps (in the same order on every run and on the CPU); an assignment that writes
    /// every element of an index axis shares its elements among the threads. For kernels with
    /// long reductions per cell. `block` is then (n, 1, 1), n a power of two from 32 to 1024
    /// (unset: 256, or 1024 for rows of more than 8192 terms), and the kernel is compiled for
    /// exactly that block. Needs at most three axes, bounds that use no other counter, and not
    /// shared_tiles. Each row of a field that two or more of the cell's passes read (at most
    /// 32 KiB of them) is copied into shared memory once and read there, so a LayerNorm reads
    /// its row from memory once. Unset: true where a 1D kernel's cell would take a warp per
    /// cell (see reduce_in_warp) but reduces over more than kMaxWarpRow (2048) terms, whose rows
    /// no longer fit a warp's registers (compiler/passes/choose_schedule.hpp); else false. The
    /// CPU target runs it too, a block at a time. A row takes at most 2^31 - n elements (the
    /// threads' int32 counter steps n past the last one): a longer one is a UserError.
    std::optional<bool> reduce_in_block;
    /// One warp per cell: the block's threads as warps of 32, each warp computing one cell (a
    /// LayerNorm or softmax row), block/32 cells per block. Each reduction is combined by every
    /// lane over every 32nd term, then by shuffles within the warp (the same order on every run
    /// and on the CPU), with no shared memory and no barrier; an assignment that writes every
    /// element of an index axis shares its elements among the lanes. Where the cell reads a
    /// field along an index axis of at most kMaxRowRegisters (128) elements per lane whose
    /// extent is a multiple of 32, each lane keeps its elements of the row in registers from the
    /// first pass to the last, so the row is read from memory once. For rows of up to a few
    /// thousand elements (docs/performance.md). `block` is then (32 w, 1, 1), w warps from 1 to
    /// 32 (unset: (256, 1, 1)), and the kernel is compiled for exactly that block. Needs at most
    /// three axes, bounds that use no other counter, a cell that does not read back a field it
    /// writes, and not shared_tiles or reduce_in_block. Unset: true for a 1D kernel whose cell
    /// reduces over 32 to 2048 terms (compiler/passes/choose_schedule.hpp), else false. The CPU
    /// target runs it too, its lanes one after the other between the warp reductions. A row
    /// takes at most 2^31 - 32 elements: a longer one is a UserError.
    std::optional<bool> reduce_in_warp;
    /// Online softmax: where a cell sums exp(e - m) over a range and m is the maximum of the
    /// same e over the same range (softmax with its maximum subtracted, log-sum-exp), one loop
    /// computes both, the sum rescaled whenever the maximum grows (Milakov and Gimelshein,
    /// 2018), so the row is read once for both instead of twice; a warp or a block combines
    /// the maxima first, then the sums rescaled to it. One exp per term as in two passes, and a
    /// compare and a select more. Unset: on
    /// for rows of more than 32 KiB (terms times the element's size), which no schedule keeps
    /// on chip between the passes (a block per row keeps rows of up to 32 KiB in shared
    /// memory, a warp up to 128 elements per lane in registers); else off.
    /// Kernel::schedule() says whether a pair was rewritten. Both targets follow it.
    std::optional<bool> online_softmax;
    /// Tensor cores for layers: each chain of float32 nn::Dense layers with runtime weights
    /// (float32, float16 or bfloat16 arrays)
    /// (consecutive layers, each reading the one before) is computed by the warps together, 32
    /// cells per warp (two tiles of 16 rows), with `mma.sync` on Float16, BFloat16 or TF32 operands
    /// and float32 sums. The weights are copied into shared memory once per block, rounded to that
    /// type (TF32: to nearest with ties away from zero, kept in float32); the layer's inputs are
    /// rounded as they enter, each layer's bias and activation are applied to its float32 sums,
    /// which are rounded again as the next layer's inputs, in registers; the last layer's outputs
    /// stay float32. Widths of any size up to 256, 128 with TF32 (padded with zeros to 16 inputs, 8
    /// with TF32, and 8 outputs); TF32 weights take twice the shared memory of 16-bit ones and
    /// twice the mma instructions, for float32's range and 10 bits of mantissa rather than
    /// float16's 5 bits of exponent. The CPU target rounds the same values in software, so it
    /// computes what the GPU does up to the order of the float32 sums. The block is then fixed
    /// (each warp has a tile of shared memory), its x a multiple of 32 (unset: (128, 1, 1), or (64,
    /// 2, 1) in 2D and up); see cells_per_thread for the tiles of 32 cells each warp computes. All
    /// shared arrays must fit shared_memory_budget (unset here: a block's 227 KiB). Needs sm_80 or
    /// newer, and not vector_width > 1, stream_cells, shared_tiles, reduce_in_block, reduce_in_warp
    /// or a manual grid. Unset: Off.
    std::optional<TensorCores> tensor_cores;

    /// One line, the fields as C++ names them: "block = (64, 4, 1), cells_per_thread = 4, ...";
    /// an open field reads "choose".
    std::string describe() const;
    /// The same, with "(chosen)" after each field that differs from `requested`: what loom
    /// decided where the request left a field open (or could not follow it, see
    /// cells_per_thread). For a resolved schedule, Kernel::schedule().
    std::string describe(const Schedule& requested) const;
};

} // namespace loom
