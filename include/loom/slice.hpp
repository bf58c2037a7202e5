// Iteration slices, numpy style, one entry per spatial axis (axis 0 first):
//
//   Slice{all(), from(x)}              // [:, x:]     the triangle: axis 1 starts at counter x
//   Slice{range(1, -1), range(1, -1)}  // [1:-1, 1:-1]
//   Slice{at(5), range(0, end, 2)}     // [5, ::2]
//
// Negative indices count from the end. Bounds may be expressions over scalar parameters; a bound
// that uses another counter makes the launch grid manual.
#pragma once

#include <loom/config.hpp>

namespace loom {

/// The end of an axis, as in `range(1, end)`.
inline const Bound end = Bound::end();

inline SliceDim all() { return SliceDim{}; }
inline SliceDim range(Bound start, Bound stop, std::int64_t step = 1) {
    return SliceDim{std::move(start), std::move(stop), step, false};
}
inline SliceDim from(Bound start, std::int64_t step = 1) {
    return SliceDim{std::move(start), Bound::end(), step, false};
}
inline SliceDim until(Bound stop) { return SliceDim{0, std::move(stop), 1, false}; }
inline SliceDim at(Bound index) { return SliceDim{std::move(index), Bound::end(), 1, true}; }

} // namespace loom
