#include "runtime/tuning_search.hpp"

#include <map>

namespace loom {

namespace {

/// Times batches and keeps every trial, each request timed once.
class Trials {
public:
    Trials(const TimeSchedules& time, SearchOutcome& out) : time_(time), out_(out) {}

    /// The times of `batch` (requests tried before are not timed again), updating the best.
    std::vector<std::optional<double>> run(const std::vector<Schedule>& batch) {
        std::vector<Schedule> fresh;
        for (const Schedule& s : batch)
            if (!seen_.count(s.describe())) {
                seen_[s.describe()] = std::nullopt;
                fresh.push_back(s);
            }
        if (!fresh.empty()) {
            std::vector<TrialTiming> t = time_(fresh);
            for (std::size_t i = 0; i < fresh.size(); ++i) {
                const TrialTiming& r = i < t.size() ? t[i] : TrialTiming{{}, "not timed", false};
                out_.trials.push_back({fresh[i], r.ms, r.error, r.repeated});
                seen_[fresh[i].describe()] = r.ms;
                if (r.ms && (!out_.best_ms || *r.ms < *out_.best_ms)) {
                    out_.best = fresh[i];
                    out_.best_ms = r.ms;
                }
            }
        }
        std::vector<std::optional<double>> ms;
        for (const Schedule& s : batch) ms.push_back(seen_[s.describe()]);
        return ms;
    }

private:
    const TimeSchedules& time_;
    SearchOutcome& out_;
    std::map<std::string, std::optional<double>> seen_;
};

/// One dimension at a time: each value on top of the best so far, the fastest kept.
void walk(const TuningSpace& space, Trials& trials, SearchOutcome& out,
          const AutotuneOptions& options, const std::function<bool()>& out_of_time) {
    for (int round = 0; round < std::max(1, options.rounds); ++round) {
        const std::string before = out.best.describe();
        for (const TuningDimension& d : space.dimensions) {
            if (out_of_time()) {
                out.stopped_early = true;
                return;
            }
            std::vector<Schedule> batch;
            for (const auto& v : d.values) {
                Schedule s = out.best;
                apply_knob(s, d.knob, v);
                batch.push_back(s);
            }
            trials.run(batch);
        }
        if (out.best.describe() == before) return; // a round that changed nothing
    }
}

/// Every combination, in batches so that the clock is checked between them.
void exhaustive(const TuningSpace& space, const Schedule& start, Trials& trials,
                SearchOutcome& out, const std::function<bool()>& out_of_time) {
    constexpr std::size_t kBatch = 64;
    std::vector<std::size_t> digit(space.dimensions.size(), 0);
    std::vector<Schedule> batch;
    for (bool more = true; more;) {
        Schedule s = start;
        for (std::size_t i = 0; i < digit.size(); ++i)
            apply_knob(s, space.dimensions[i].knob, space.dimensions[i].values[digit[i]]);
        batch.push_back(s);
        // The next combination, the last dimension fastest.
        more = false;
        for (std::size_t i = digit.size(); i-- > 0;) {
            if (++digit[i] < space.dimensions[i].values.size()) {
                more = true;
                break;
            }
            digit[i] = 0;
        }
        if (batch.size() == kBatch || !more) {
            if (out_of_time()) {
                out.stopped_early = true;
                return;
            }
            trials.run(batch);
            batch.clear();
        }
    }
}

} // namespace

SearchOutcome search_schedules(const TuningSpace& space, const Schedule& start,
                               const TimeSchedules& time, const AutotuneOptions& options,
                               const std::function<bool()>& out_of_time) {
    SearchOutcome out;
    out.best = start;
    Trials trials(time, out);
    out.start_ms = trials.run({start})[0];
    if (options.exhaustive)
        exhaustive(space, start, trials, out, out_of_time);
    else
        walk(space, trials, out, options, out_of_time);
    return out;
}

} // namespace loom
