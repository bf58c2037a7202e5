// The CUDA code generator.
#pragma once

#include "compiler/lower.hpp"

namespace loom::ir {

/// Prints `kernel.body` as an `extern "C" __global__` function into `kernel.source`, and fills
/// the name and C type of each parameter in `kernel.params`. Deterministic: the same kernel
/// always prints the same text (golden files and cache keys depend on it).
void print_cuda(LoweredKernel& kernel);

/// The CUDA spelling of a scalar type: float, double, int, long long, bool.
std::string cuda_type_name(ScalarType t);

} // namespace loom::ir
