// Building vectors from vectors: slices and concatenation (vec.hpp has the element-wise math).
#pragma once

#include <loom/vec.hpp>

namespace loom {

/// Elements [begin, end) of `v`, as numpy's v[begin:end]; negative indices count from the end.
/// Throws UserError naming the range and the size if it lies outside the vector or is empty.
Vec slice(const Vec& v, int begin, int end);
/// The elements of `a` followed by those of `b`.
Vec concat(const Vec& a, const Vec& b);

} // namespace loom
