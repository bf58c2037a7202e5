// The search behind KernelFunction::autotune, apart from any GPU: it proposes schedules and
// keeps the fastest, and a caller-supplied function times them (on the GPU in autotune.cpp, by
// a table in the unit tests). See loom/autotune.hpp for what is searched and in which order.
#pragma once

#include <loom/autotune.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace loom {

/// What timing one schedule gave.
struct TrialTiming {
    std::optional<double> ms; ///< unset: it could not run (see error)
    std::string error;
    bool repeated = false; ///< the same kernel and launch as one timed before; ms is that one's
};
/// Times a batch of schedules (as requests of create_kernel), one TrialTiming per schedule in
/// order. A batch lets the caller compile its schedules at once.
using TimeSchedules = std::function<std::vector<TrialTiming>(const std::vector<Schedule>&)>;

struct SearchOutcome {
    Schedule best;                  ///< the fastest request (start when nothing ran)
    std::optional<double> best_ms;  ///< unset when no schedule ran
    std::optional<double> start_ms; ///< the start's time
    std::vector<AutotuneTrial> trials;
    bool stopped_early = false;
};

/// Times `start`, then walks `space` from it one dimension at a time (or, with
/// options.exhaustive, times every combination), calling `out_of_time` before each batch.
SearchOutcome search_schedules(const TuningSpace& space, const Schedule& start,
                               const TimeSchedules& time, const AutotuneOptions& options,
                               const std::function<bool()>& out_of_time);

} // namespace loom
