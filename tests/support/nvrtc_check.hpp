// Compiles a generated kernel with NVRTC for sm_90 (no GPU needed), so broken CUDA fails CI.
#pragma once

#include <loom/loom.hpp>

namespace loom::test {

/// Compiles `kernel.source()` to an sm_90 CUBIN with the options the runtime uses; fails the
/// test with NVRTC's log and the numbered source if it does not compile or warns.
void expect_compiles_for_sm90(const Kernel& kernel);

} // namespace loom::test
