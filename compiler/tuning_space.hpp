// What KernelFunction::autotune may vary for one lowered kernel (loom/autotune.hpp): the fields
// of the Schedule the request leaves open, each with the values worth timing for this kernel.
// Everything here is a candidate list, not a rule: a combination create_kernel rejects is skipped
// by the search, and the GPU decides among the rest.
#pragma once

#include "compiler/lower.hpp"

#include <loom/autotune.hpp>

#include <vector>

namespace loom::ir {

/// The space of `k` (empty for the CPU target and manual grids); `assignments` are the kernel's
/// source, read for reductions (which make reduce_in_block worth a try).
TuningSpace tuning_space(const LoweredKernel& k, const std::vector<SourceAssignment>& assignments);

} // namespace loom::ir
