// The schedule heuristic (CUDA): fills in what a Schedule (loom/schedule.hpp) leaves open. Every
// rule by which loom decides how a kernel runs on the GPU lives here and in docs/guide.md
// ("Launch configuration"); the passes after it read the resolved schedule and decide nothing.
//
// The rules, field by field (a field the request sets is kept as it is, but cells_per_thread):
// - cells_per_thread: 1 in 1D, with reduce_in_block (a block per cell) and with a manual grid
//   whatever the request says (a manual grid
//   means one cell per thread, as in pystencils; a lone x axis gains nothing from more); else
//   the request's; else 1 for kernels with layers (a cell with layers is long already: one per
//   thread keeps code and registers small); else 4 (several independent loads in flight per
//   thread, which a memory-bound stencil needs to approach copy bandwidth: one cell per thread
//   reaches about 0.6 of it), or 8 where the group would roll with lanes (rolling_group in
//   choose_schedule.cpp: it holds one plane's rows however many cells it has).
// - cells_axis: the slowest memory axis mapped onto threads (the highest block dimension used),
//   so that at each cell a warp still reads consecutive elements.
// - block: (256, 1, 1) when one axis is mapped onto threads or with reduce_in_block ((1024, 1,
//   1) where its rows pass 8192 terms, which shared memory does not keep), (64, 4, 1) for two
//   or more ((32, 4, 1) where a group of cells rolls with lanes): x a multiple of the warp. When the launch grid's extents are all known at
//   generation time (fixed shapes), fit_chosen_block trims it to them as each launch would
//   (LaunchDescription::block_for); never the exact block of tiles or of reduce_in_block.
// - shared_memory_budget: 100 KiB (each launch checks the staged bytes against the device's
//   limit per block).
// - vector_width: 16 bytes of the widest element type (4 for float32 and int32, 2 for float64)
//   for a kernel whose lanes fit (ScheduleFacts::lanes_fit: no gathers, a unit step along the
//   lanes' axis; not with layers, shared tiles, a block per cell, a manual grid, or
//   cells_per_thread along the lanes' axis), with a short cell (at most kMaxLaneCellNodes
//   expression nodes) that reads at most kMaxLaneRows rows of lanes of any field, or whose
//   group of cells streams within kMaxStreamedLaneRows rows (a 2D 13-point star), or rolls
//   with at most kMaxRollingLaneRows rows per cell (a 27-point box). A row of lanes
//   holds its neighbours along the lanes' axis too, loaded apart. H200: f = 2 g 0.79 -> 1.00 of
//   copy, a 1D 3-point float32 stencil 0.61 -> 0.98, a 2D 5-point one 0.79 -> 0.90, a 3D 7-point
//   one 0.63 -> 0.69, 7 coefficient fields 0.77 -> 0.98. Else 1, scalar loads and stores: wider
//   footprints stream their cells instead (27-point box 0.48 streamed, 0.29 with lanes);
//   KernelFunction::autotune tries both.
// - stream_cells: true where cells_per_thread > 1; the pass stream_cells then groups a thread's
//   cells only where that saves at least kMinStreamSaving of their reads, or, with lanes,
//   wherever they share a read and the group reads at most kMaxStreamedLaneRows rows of lanes
//   (or rolls: streams_with_lanes)
//   (lower.cpp decides that one, and streams as without lanes where no access went into
//   lanes); the resolved schedule says false where it grouped none. Asked for explicitly,
//   wherever cells share a read.
// - shared_tiles: on for a kernel of several stages where a later stage reads an earlier one's
//   field at neighbouring cells (fuse_stages computes the earlier stages per tile); else as
//   requested.
// - reduce_in_warp: on where the cell of a 1D kernel (rows: on y and z a block per cell would
//   bound the grid at 65535 cells) reduces over kMinWarpReduction to kMaxWarpRow terms (or more
//   where a block per cell is not to be had: off, or a block that is not a power of two), outside an
//   assignment to an index axis (a LayerNorm or softmax row), does not read back a field it
//   writes, and every field with index axes keeps a cell's elements together in memory
//   (layouts C and AoS; with SoA a thread per cell reads coalesced, a warp per cell would not), unless the request asks for a block per cell, tiles, lanes, several cells
//   per thread or a block that is not whole warps along x, or the kernel has layers, a manual
//   grid, stages with halos or more than three axes.
// - reduce_in_block: on where a warp per cell would be but the reduction is longer than
//   kMaxWarpRow: a row of 4096 floats is 128 registers per lane, which leaves few warps per SM
//   and takes NVRTC 0.4 s, where a block of 256 keeps it in 16 KiB of shared memory (0.85 of
//   copy for LayerNorm at 8192 x 4096 on an H200, and 0.75 against 0.4 at 8192).
// - max_registers and manual_launch_grid: nothing to choose; 0 leaves registers to the compiler.
#pragma once

#include <loom/launch.hpp>
#include <loom/schedule.hpp>

#include <array>
#include <cstddef>
#include <string>

namespace loom::ir {

/// The shared memory staged buffers may take per block when the schedule leaves it open.
/// Tensor cores: the tiles of 32 cells each warp computes in turn (Schedule::cells_per_thread):
/// the power of two at or below one per 2 KiB of staged weights, from 8 to 64, so that a block
/// copies its weights once for many cells (H200, 4 layers W -> W with float16 fields, N = 2^20,
/// blocks of 4 warps, tiles 8 / 16 / 32 / 64: W = 16 0.035 / 0.042 / 0.059 / 0.091 ms, W = 64
/// 0.32 / 0.21 / 0.23 / 0.31 ms, W = 128 2.2 / 1.35 / 0.98 / 0.79 ms), and at most 8192 cells
/// a block: larger blocks leave SMs idle at 2^20 cells (16 warps, W = 64, tiles 8 / 16 / 32:
/// 0.196 / 0.177 / 0.290 ms; 8 warps, W = 128, tiles 16 / 32 / 64: 0.68 / 0.57 / 0.93 ms).
/// The count does not depend on the cells of a call (a persistent grid sized to the SMs would).
inline constexpr int kMinTensorCoreTiles = 8, kMaxTensorCoreTiles = 64, kMaxTensorCoreBlockCells = 8192;
inline constexpr std::size_t kDefaultSharedMemoryBudget = std::size_t(100) * 1024;
/// The most shared memory any GPU loom targets gives one block (sm_90: 227 KiB).
inline constexpr std::size_t kMaxSharedMemoryPerBlock = std::size_t(227) * 1024;
/// The most static `__shared__` memory a kernel may declare (CUDA's limit): staged buffers and
/// tiles are static arrays while they fit in it.
inline constexpr std::size_t kMaxStaticSharedMemory = std::size_t(48) * 1024;

/// What the heuristic looks at, all known once the loop nest is built.
struct ScheduleFacts {
    std::array<int, 3> axis_of_dim{-1, -1, -1}; ///< the spatial axis each block dimension walks
    bool manual_grid = false; ///< manual_launch_grid, or slice bounds that use another counter
    bool has_layers = false;  ///< the body computes local arrays in loops (neural layers)
    bool tensor_cores = false; ///< chains of layers on tensor cores (MmaChain): whole warps of cells
    std::int64_t tensor_core_weight_bytes = 0; ///< their staged weights, each layer once
    std::int64_t tensor_core_staged_bytes = 0; ///< their weights and biases in shared memory
    std::int64_t tensor_core_tile_bytes = 0;   ///< one warp's tile, which all chains share
    int tensor_core_width = 0;                 ///< their widest layer, padded
    bool stage_halos = false; ///< a later stage reads an earlier one at neighbouring cells
    /// Lanes would serve: a CUDA kernel that reads every field at the cell only, or a 1D one
    /// whose other reads are at neighbouring cells (along the lanes), whose slice steps by 1
    /// along the fastest memory axis (lanes are consecutive cells there).
    bool lanes_fit = false;
    int lane_axis = -1;        ///< the fastest memory axis, which the lanes run along
    int widest_element = 4;    ///< bytes of the widest element type among the kernel's fields
    bool updates_a_field = false; ///< a field is read and written (y = a x + y): it stays scalar in lanes
    std::size_t cell_nodes = 0; ///< expression nodes in the cell's statements (its length)
    int spatial_dims = 1;       ///< axes of the iteration space
    /// Every field is read at the cell only (no neighbour at an offset, no buffer read at
    /// computed positions): no two cells share a read, so several cells per thread gain nothing
    /// and cost NVRTC time.
    bool pointwise = false;
    /// The most terms of one reduction over an index axis in the cell (a LayerNorm row's 768).
    std::int64_t longest_reduction = 0;
    /// The longest index axis the cell runs over (a reduction's or an assignment's IndexVar),
    /// and its name: a warp's or a block's threads step through it, and their int32 counter
    /// must not pass 2^31 - 1 (check_row_length).
    std::int64_t longest_index_axis = 0;
    std::string longest_index_name;
    /// Every field with index axes keeps a cell's elements together (an index axis fastest in
    /// memory: layouts C and AoS), so a warp's lanes read a row's consecutive elements. With
    /// the components slowest (SoA, Fortran) neighbouring cells' threads read together instead.
    bool rows_contiguous = true;
    /// The cell reads a field it writes (a row's mean stored, then read back): its lanes would
    /// read what another lane stored, which a warp per cell does not order yet.
    bool reads_own_writes = false;
    /// The most rows of lanes a cell reads of one field: distinct coordinates other than along
    /// the lanes' axis (a 5-point star 3, a 3D 7-point star 5, a 27-point box 9).
    std::size_t lane_rows = 1;
    /// Rows of lanes a default group of cells (4 along the slowest mapped axis) reads of all
    /// fields together: what streaming them with lanes keeps in registers (a 2D 5-point star 6,
    /// a 3D 7-point star 14).
    std::size_t group_lane_rows = 1;
    /// Rows of lanes one cell reads of all fields together (a 27-point box 9, a 3D 13-point
    /// star 9): what a rolling group (kMaxRollingLaneRows) holds at a time.
    std::size_t cell_lane_rows = 1;
    /// Halvings of the chosen tile, for stages whose tiles did not fit the shared memory with
    /// the full one: cells_per_thread first (4, 2, 1), then the block's y, then its x (to 32).
    /// Fields the request fixes stay as requested.
    int shrink = 0;
};

/// The threads of a block of a reduction across cells by default: the sum of 2^28 floats on an
/// H200 took 0.251 ms with blocks of 256, 0.244 with 512 and 0.238 with 1024 (CuPy's sum:
/// 0.239 to 0.243), its 1024 blocks then spread over about four waves of resident blocks
/// rather than one wave with some multiprocessors a block short.
inline constexpr int kReductionThreads = 1024;

/// The schedule of a reduction across cells (reduce_across_blocks): the requested block, else
/// kReductionThreads; one cell per thread and round, no lanes, the block reducing. Checks the request
/// first (check_reduction_schedule).
Schedule choose_reduction_schedule(const Schedule& requested, const std::string& kernel);

/// Whether ScheduleFacts::shrink can make `chosen`'s tile smaller than it is: cells or a block
/// that the request leaves open and that are not at their smallest.
bool can_shrink(const Schedule& requested, const Schedule& chosen);

/// Schedule::stream_cells left unset streams a thread's cells where that saves at least this share
/// of their reads (a 3D 27-point stencil, 4 cells: 1/2, 0.53 -> 0.60 of copy on an H100); less
/// gained nothing or lost (a 7-point f64 stencil, 0.21: 0.869 -> 0.843; a 5-point f32, 0.30:
/// 0.871 -> 0.866), and the group's code costs NVRTC time.
inline constexpr double kMinStreamSaving = 0.5;

/// The longest cell (in expression nodes) that gets lanes by default: lanes repeat the cell W
/// times in each thread, which pays for short, memory-bound cells only (a constant-weight MLP
/// of width 16, about 2,000 nodes, ran 1.35x slower with lanes of 4 and took 10x longer in NVRTC).
inline constexpr std::size_t kMaxLaneCellNodes = 256;
/// Stencils get lanes by default up to this many rows of lanes per field (or where their group
/// of cells streams within kMaxStreamedLaneRows). Wider footprints in 3D (a 27-point box: 9
/// rows per cell, 18 per group) stream without lanes: with them, the group's rows would crowd
/// the registers, and without streaming each cell loads its 9 rows alone (H200: 27-point box
/// 0.48 of copy streamed, 0.29 with lanes and no streaming; 5-point star 0.79 -> 0.90 with
/// lanes).
inline constexpr std::size_t kMaxLaneRows = 5;
/// With lanes, a thread's cells stream (their rows loaded once, all at the top of the group)
/// while the group reads at most this many rows of lanes; more would crowd the registers (H200:
/// 2D 5-point f32 0.90 -> 0.94 of copy, 13-point 0.67 -> 0.83 streamed with lanes; 3D 7-point
/// 0.69 -> 0.62, with 14 rows). Stencils within it get lanes by default however wide, unless
/// the schedule turns streaming off or leaves one cell per thread.
inline constexpr std::size_t kMaxStreamedLaneRows = 10;
/// A group past kMaxStreamedLaneRows still streams with lanes where one cell reads at most this
/// many rows of lanes (all fields): its cells run one after the other, each row loaded just
/// before the first cell that reads it (vectorize_lanes rolls the group), so a thread holds about
/// one cell's rows at a time, as a hand-written 2.5D kernel does (a 27-point box, a 3D 13-point
/// star: 9 rows).
inline constexpr std::size_t kMaxRollingLaneRows = 9;

/// A cell whose reductions run over at least this many terms gets a warp by default
/// (reduce_in_warp): LayerNorm over rows of 768 floats 0.09 of copy with a thread per row,
/// 0.93 with a warp (H200). Shorter ones (a lattice Boltzmann cell's 19 populations) stay in
/// their thread.
inline constexpr std::int64_t kMinWarpReduction = 32;
/// The longest reduction a warp per cell takes by default: 64 elements per lane. Past it a block
/// per cell keeps the row in shared memory (reduce_in_block; docs/performance.md).
inline constexpr std::int64_t kMaxWarpRow = 2048;

/// Whether a default group of cells streams its rows of lanes: all at once within
/// kMaxStreamedLaneRows, or rolling within kMaxRollingLaneRows per cell.
bool streams_with_lanes(const ScheduleFacts& facts);

/// Whether a resolved schedule's group of cells rolls with lanes (vectorize_lanes loads its rows
/// as its cells need them): lanes, streamed cells, a group past kMaxStreamedLaneRows whose cells
/// each read at most kMaxRollingLaneRows.
bool rolls_with_lanes(const Schedule& resolved, const ScheduleFacts& facts);

/// The request with every open field filled in by the rules above (the block before
/// fit_chosen_block). The request has passed check_schedule and check_cells_axis.
Schedule choose_schedule(const Schedule& requested, const ScheduleFacts& facts);

/// A chosen block (the request left it unset) trimmed to the launch's extents where all of them
/// are known at generation time, in both `launch.default_block` and `resolved.block`. A block
/// the request fixes stays, and bounds the launch: `launch.max_threads_per_block`.
void fit_chosen_block(Schedule& resolved, const Schedule& requested, LaunchDescription& launch);

} // namespace loom::ir
