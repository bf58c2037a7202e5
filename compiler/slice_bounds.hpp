// The iteration slice's loop bounds, kept for the launch: a slice bound may be a scalar
// parameter, or a literal beyond an array whose size only the launch knows, so only the launch
// can tell whether the slice stays inside the arrays (KernelFunction checks it on every call).
#pragma once

#include "compiler/ir/evaluate.hpp"
#include "compiler/ir/ir.hpp"

#include <cstdint>
#include <vector>

namespace loom::ir {

/// The cells one axis of the iteration space visits.
struct VisitedCells {
    bool empty = false;   ///< none (for counter-dependent bounds: on every row)
    bool bounded = true;  ///< false: interval arithmetic could not bound a counter-dependent bound
    std::int64_t first = 0, last = 0; ///< the lowest and highest cell visited
};

struct SliceBounds {
    struct Axis {
        Expr counter;          ///< the loop variable of this axis
        Expr start, stop;      ///< in the index type, over sizes, parameters and earlier counters
        std::int64_t step = 1;
        bool uses_counters = false;
    };
    std::vector<Axis> axes; ///< axis 0 first; empty when the kernel has no slice

    /// The cells each axis visits when the sizes and scalar parameters have the values in
    /// `args`, evaluated as the kernel does (in the index type). A bound that uses earlier
    /// counters is bounded by interval arithmetic over all their values, so `first` and `last`
    /// then enclose the cells of every row: conservative, exact for the usual triangles
    /// ([x, end), [0, x + 1)). An empty axis ends the list: later axes are marked empty too,
    /// since no cell runs at all.
    std::vector<VisitedCells> visited(const Bindings& args) const;
};

/// Reads the bounds off the loop nest of lower_iteration_space (one For per spatial axis, axis
/// 0 outermost).
SliceBounds read_slice_bounds(const Stmt& loop_nest);

} // namespace loom::ir
