// Iteration space to a target-neutral loop nest.
#pragma once

#include "compiler/ir/ir.hpp"
#include "compiler/lower.hpp"
#include "compiler/passes/analyze.hpp"

#include <loom/config.hpp>

#include <map>
#include <vector>

namespace loom::ir {

/// The loop nest of a kernel, its signature, and the strides its addresses need.
struct IterationSpace {
    Stmt nest;
    /// Field pointers, sizes, strides (the unit-stride axis of each field gets none), scalar
    /// parameters, unnamed (name_parameters names them). Fixed-shape fields get their sizes and
    /// strides as literals. Sizes come from the iteration space alone: buffers only get strides.
    std::vector<KernelParam> params;
    /// Per field, its Global buffer: the extents (size parameters, or literals for a fixed
    /// shape) and element strides (a stride parameter, or a literal: 1 on the unit-stride axis,
    /// a fixed shape's) of each array axis.
    std::map<const FieldInfo*, BufferPtr> globals;
    /// Per on-chip field (KernelAnalysis::on_chip), its value outside the iteration space at
    /// the counters: a constant, or a load of another field's buffer. Its own buffer stands in
    /// for it until fuse_stages puts it in tiles: no parameter points at it.
    std::map<const FieldInfo*, Expr> on_chip;
};

/// Wraps `body` (Comment, Assign and Declare statements) into one For loop per spatial axis,
/// axis 0 outermost, over the ghost-layer interior or the iteration slice. Field accesses become
/// loads and stores of the fields' Global buffers at coordinates, one per array axis (the counter plus the offset, or an
/// absolute access's index expressions; then the components): flatten_addresses applies the
/// strides later, so the passes between see where each access lies. Temporaries become
/// Declares, spatial counters become the loop variables.
IterationSpace lower_iteration_space(const Stmt& body, const KernelAnalysis& analysis,
                                     const KernelConfig& config);

} // namespace loom::ir
