// Parameter naming: the kernel's arguments get the names users pass them by, before printing.
#pragma once

#include "compiler/lower.hpp"

namespace loom::ir {

/// Names every parameter of `kernel` (KernelParam::name) and spells its C type (c_type) for the
/// kernel's target, and keeps the names in kernel.names, where the printers name the locals
/// around them. The user's names come first (fields, scalar parameters, then the IndexVars of
/// sum(k, ...)), so that loom's own parameters (sizes size_N, strides <field>_stride_N) are the
/// ones renamed when they meet, and a scalar keeps the name the user passes it by. The kernel's
/// own name is no reservation: a parameter may shadow the function it belongs to (and the CPU
/// target prints the kernel under a loom-owned name).
void name_parameters(LoweredKernel& kernel);

} // namespace loom::ir
