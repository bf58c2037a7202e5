// The parts of loom/autotune.hpp that need no GPU: knobs and the report.
#include <loom/autotune.hpp>

#include <fmt/format.h>

#include <cmath>

namespace loom {

const char* knob_name(Knob k) {
    switch (k) {
    case Knob::ReduceInBlock: return "reduce_in_block";
    case Knob::ReduceInWarp: return "reduce_in_warp";
    case Knob::SharedTiles: return "shared_tiles";
    case Knob::VectorWidth: return "vector_width";
    case Knob::CellsPerThread: return "cells_per_thread";
    case Knob::CellsAxis: return "cells_axis";
    case Knob::StreamCells: return "stream_cells";
    case Knob::Block: return "block";
    }
    return "?";
}

void apply_knob(Schedule& s, Knob knob, const std::array<int, 3>& v) {
    switch (knob) {
    case Knob::ReduceInBlock: s.reduce_in_block = v[0] != 0; break;
    case Knob::ReduceInWarp: s.reduce_in_warp = v[0] != 0; break;
    case Knob::SharedTiles: s.shared_tiles = v[0] != 0; break;
    case Knob::VectorWidth: s.vector_width = v[0]; break;
    case Knob::CellsPerThread: s.cells_per_thread = v[0]; break;
    case Knob::CellsAxis: s.cells_axis = v[0]; break;
    case Knob::StreamCells: s.stream_cells = v[0] != 0; break;
    case Knob::Block: s.block = v; break;
    }
}

std::string describe_knob(Knob knob, const std::array<int, 3>& v) {
    switch (knob) {
    case Knob::Block: return fmt::format("block = ({}, {}, {})", v[0], v[1], v[2]);
    case Knob::ReduceInBlock:
    case Knob::ReduceInWarp:
    case Knob::SharedTiles:
    case Knob::StreamCells: return fmt::format("{} = {}", knob_name(knob), v[0] ? "true" : "false");
    default: return fmt::format("{} = {}", knob_name(knob), v[0]);
    }
}

std::size_t TuningSpace::combinations() const {
    std::size_t n = 1;
    for (const TuningDimension& d : dimensions) n *= d.values.size();
    return n;
}

std::string AutotuneResult::report() const {
    if (!nothing_to_tune.empty()) return "autotune: nothing to tune: " + nothing_to_tune + "\n";
    std::string out;
    if (from_cache)
        out = fmt::format("autotune: the winner from the disk cache (timed when it was stored: "
                          "{:.4f} ms, the default {:.4f} ms)\n", ms, default_ms);
    else
        out = fmt::format("autotune: {} schedules tried{}; the winner takes {:.4f} ms, the "
                          "default {:.4f} ms ({:.2f}x)\n", trials.size(),
                          stopped_early ? " (stopped at max_seconds)" : "", ms, default_ms,
                          default_ms / ms);
    out += "  winner: " + schedule.describe() + "\n";
    for (const AutotuneTrial& t : trials) {
        std::string time = t.ms ? fmt::format("{:9.4f} ms", *t.ms) : std::string("   failed   ");
        out += fmt::format("  {}{}  {}{}\n", time, t.repeated ? " (same kernel as before)" : "",
                           t.schedule.describe(),
                           t.error.empty() ? "" : "\n      " + t.error.substr(0, t.error.find('\n')));
    }
    return out;
}

} // namespace loom
