// Autotuning: KernelFunction::autotune(args) times other schedules of the same kernel on the
// caller's arrays, loads the fastest and remembers it in the disk cache, so that later processes
// start with it (an autotune there costs one compile, no timing).
//
//   KernelFunction k = create_kernel(stencil).compile();
//   AutotuneResult r = k.autotune(args("src", a, "dst", b));
//   std::cout << r.report();   // every schedule tried, its time, the winner against the default
//   k(args("src", a, "dst", b)); // runs the winner
//
// What is tuned: the fields the requested Schedule leaves open (a field the caller set stays as
// set), each a TuningDimension of the kernel's TuningSpace (KernelSpec::tuning). The search walks
// the dimensions one at a time from the default schedule, keeping the fastest value of each
// before it moves on (coordinate descent), for `rounds` rounds or until a round changes nothing;
// AutotuneOptions::exhaustive times every combination instead. A combination that create_kernel
// rejects (lanes with shared tiles, a cells axis that is not mapped onto threads, ...) is
// skipped; two that print the same kernel with the same launch are timed once.
//
// The winner is stored under a key made of the device (name and compute capability), the
// kernel (its source under the requested schedule, and the request) and a shape class: per axis
// of the iteration space, the next power of two at or above the extent of the arrays passed.
// Arrays of another shape class tune again; so does AutotuneOptions::force.
#pragma once

#include <loom/schedule.hpp>

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace loom {

/// A field of Schedule that autotuning varies.
enum class Knob : unsigned char {
    ReduceInBlock, ///< Schedule::reduce_in_block (kernels with reductions)
    ReduceInWarp,  ///< Schedule::reduce_in_warp (kernels with reductions)
    SharedTiles,   ///< Schedule::shared_tiles (kernels that read at neighbouring cells)
    VectorWidth,   ///< Schedule::vector_width
    CellsPerThread,
    CellsAxis,
    StreamCells,
    Block,
};
/// "block", "cells_per_thread", ...: the Schedule field's name.
const char* knob_name(Knob k);

/// One field and the values tried for it: for Block the three extents, for the others the first
/// entry (booleans as 0 and 1).
struct TuningDimension {
    Knob knob = Knob::Block;
    std::vector<std::array<int, 3>> values;
};
/// Sets `knob` of `s` to `value`.
void apply_knob(Schedule& s, Knob knob, const std::array<int, 3>& value);
/// "block = (64, 4, 1)", "stream_cells = true", ...
std::string describe_knob(Knob knob, const std::array<int, 3>& value);

/// What autotuning may change about one kernel, in the order the search walks it.
struct TuningSpace {
    std::vector<TuningDimension> dimensions;
    /// Combinations in the space (the product of the dimensions' sizes; 1 when empty).
    std::size_t combinations() const;
};

struct AutotuneOptions {
    /// Tune even when the disk cache holds a winner for this device, kernel and shape class (the
    /// new winner replaces it).
    bool force = false;
    /// Time every combination of the space instead of walking it one dimension at a time. Slow
    /// (hundreds of compiles); for checking how close the walk comes.
    bool exhaustive = false;
    /// Rounds of the walk over all dimensions (at least 1); it stops early after a round that
    /// changed nothing.
    int rounds = 2;
    /// Timed launches per schedule (the median counts), after one warm-up launch.
    int runs = 15;
    /// Stop trying new schedules after this many seconds of tuning (the best so far wins); 0: no
    /// limit.
    double max_seconds = 120.0;
    /// Threads that compile candidates at once (NVRTC); 0: one per hardware thread, at most 16.
    int compile_threads = 0;
};

/// One schedule that was tried.
struct AutotuneTrial {
    Schedule schedule;      ///< as requested of create_kernel
    std::optional<double> ms; ///< median time; unset when it could not run
    std::string error;      ///< why not (create_kernel's message, a compile or launch error)
    bool repeated = false;  ///< the same kernel and launch as an earlier trial: its time reused
};

struct AutotuneResult {
    /// The schedule now loaded (resolved: every field set), the winner.
    Schedule schedule;
    /// Its median time in ms, and the default schedule's: from the cache, the times measured
    /// when the winner was stored; NaN when there was nothing to tune.
    double ms = 0.0, default_ms = 0.0;
    /// The winner came from the disk cache (no schedule was timed).
    bool from_cache = false;
    /// Nothing to tune: "the CPU target ignores schedules", "a manual launch grid", "the
    /// request sets every field". Empty when tuning ran (or the cache answered).
    std::string nothing_to_tune;
    /// The search stopped at AutotuneOptions::max_seconds before it had walked the space.
    bool stopped_early = false;
    std::vector<AutotuneTrial> trials; ///< in the order they were tried
    /// A readable account: the winner, its speedup over the default, every trial.
    std::string report() const;
};

} // namespace loom
