// Autotuning's memory: the winner of a tuning, stored in the compile cache's directory as a
// `.tune` entry (runtime/compile_cache.hpp) under a key made of the device, the kernel and the
// arrays' shape class (loom/autotune.hpp), so that later processes start with it.
#pragma once

#include <loom/device_array.hpp>
#include <loom/schedule.hpp>

#include <optional>
#include <string>
#include <vector>

namespace loom {

/// What a `.tune` entry holds.
struct TuningRecord {
    Schedule schedule; ///< the winning request (lowered again, it gives the kernel timed)
    double ms = 0.0, default_ms = 0.0;
};

/// The entry as text, one `name=value` line per field, and back. from_text returns nullopt for
/// anything it does not read completely (an entry of another version, a damaged one).
std::string to_text(const TuningRecord& r);
std::optional<TuningRecord> tuning_record_from_text(const std::string& text);

/// Per axis, the next power of two at or above `extent` (1 for 0): arrays whose shapes fall in
/// one class share a tuning.
std::vector<std::int64_t> shape_class(const Shape& extent);

/// The entry's key: SHA-256 over the record version, the device's name and compute capability,
/// the kernel's name and source, the requested schedule and the shape class.
std::string tuning_key(const std::string& device_name, int compute_capability,
                       const std::string& kernel_name, const std::string& source,
                       const Schedule& requested, const std::vector<std::int64_t>& shape_class);

} // namespace loom
