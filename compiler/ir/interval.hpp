// Interval arithmetic over integer IR expressions: every value an expression can take while some
// of its variables range over intervals. The launch's slice check uses it for bounds that depend
// on the counters of earlier axes (the triangle [:, x:]), where x takes every value of its axis.
#pragma once

#include "compiler/ir/evaluate.hpp"

#include <cstdint>
#include <optional>
#include <unordered_map>

namespace loom::ir {

/// The closed range [lo, hi].
struct Interval {
    std::int64_t lo = 0, hi = 0;
};

/// Variables that range over an interval (counters), keyed like Bindings.
using IntervalBindings = std::unordered_map<const VarNode*, Interval>;

/// An interval that holds every value of the integer or boolean expression `e` when each
/// variable in `ranges` takes any value of its interval and every other variable has its value in
/// `points`. Subexpressions without ranging variables are evaluated exactly (evaluate(), any
/// type, so `n / 2` or `cast<int64>(sqrt(m))` of parameters are fine). Over ranging variables it
/// bounds integer +, -, *, /, %, min, max, negation, abs, comparisons, logic, select and
/// integer casts; the result encloses the exact range, and is exact for the common forms
/// (each ranging variable used once, monotone operations). It gives nullopt where it cannot
/// bound: a float computation of a ranging variable, a division by an interval that holds 0 (or
/// by 0), or a result that could overflow its type (the kernel would wrap).
std::optional<Interval> evaluate_interval(const Expr& e, const Bindings& points,
                                          const IntervalBindings& ranges);

} // namespace loom::ir
