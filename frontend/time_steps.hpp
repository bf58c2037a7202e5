// Temporal blocking (KernelConfig::time_steps): one time step's assignments as the stages of
// several steps, the fields between the steps on chip.
#pragma once

#include <loom/assignment.hpp>
#include <loom/config.hpp>

namespace loom {

/// `step` run `config.time_steps` times as Stages: stage k reads what stage k - 1 wrote in
/// place of each pair's src, and writes an on-chip field `<dst>_step<k>` in place of its dst
/// (the last stage writes dst itself). An on-chip step field holds, outside the iteration space,
/// the ghost cells that the separate sweep reading it would read: dst's after odd steps, src's
/// after even ones. Temporaries are renamed per stage. Throws UserError when the pairs cannot be
/// found (KernelConfig::ping_pong) or the step is no ping-pong step.
Stages time_step_stages(const AssignmentCollection& step, const KernelConfig& config);

} // namespace loom
