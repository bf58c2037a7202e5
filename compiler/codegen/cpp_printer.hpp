// The C++ code generator for the CPU target.
#pragma once

#include "compiler/lower.hpp"

namespace loom::ir {

/// Prints `kernel.body` (the loop nest of map_to_cpu) as C++ into `kernel.source`, and fills the
/// name and C type of each parameter in `kernel.params`. The source holds, in this order:
///
/// - the header comment shared with the CUDA printer, and `<math.h>`, `<stdint.h>`, `<stdlib.h>`;
/// - `loom_min` / `loom_max` overloads for the integer types the kernel takes a min or max of
///   (C has no integer min and max; floats use fminf, fmax, ...);
/// - `static void loom_kernel_<name>(...)` (host_kernel_symbol), with the signature of the CUDA
///   kernel (a loom-owned name that is not exported, so that a kernel may be named like any C
///   library or OpenMP symbol, `memcpy` or `GOMP_parallel`, without replacing it): `T* __restrict__` for
///   written fields, `const T* __restrict__` for read-only ones, then sizes, strides, scalars;
///   parameters the body never reads (a size a literal slice ignores) are `[[maybe_unused]]`.
///   Parallel loops get `#pragma omp parallel for`, vectorized ones `#pragma omp simd`, a loop
///   that is both `#pragma omp parallel for simd`;
/// - `extern "C" void loom_kernel_<name>_entry(void* const* args)` (host_entry_symbol), the
///   library's only exported symbol, the uniform entry point the runtime calls: args[i] points to the 8-byte slot of parameter i (in signature order), which holds a
///   pointer as its address, or an integer, float or bool at the start of the slot.
///
/// Deterministic, like print_cuda. Compiles warning-free with
/// `g++ -O3 -march=native -fopenmp -shared -fPIC -std=c++17 -Wall -Wextra`.
void print_cpp(LoweredKernel& kernel);

/// `loom_kernel_<name>`: the C++ function that holds a CPU kernel's body.
std::string host_kernel_symbol(const std::string& kernel_name);

/// The C++ spelling of a scalar type: float, double, int32_t, int64_t, bool.
std::string cpp_type_name(ScalarType t);

} // namespace loom::ir
