// Runs a Target::CPU kernel's final IR (Kernel::ir()) with loom's own interpreter,
// compiler/ir/evaluate: the loops, declarations, guards and stores are walked here and every
// expression (values, indices, loop bounds) goes through ir::evaluate. This checks the passes
// (analysis, simplify, CSE, the iteration space, the CPU mapping) without compiling anything; the
// differences to generated code are the interpreter's documented semantics (int32 arithmetic
// wraps, float to int saturates, only the chosen branch of a select is evaluated).
#pragma once

#include <loom/loom.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace loom::test {

/// One array argument: element type, the address of element 0 of the view, its shape and
/// element strides (as a HostView has them).
struct InterpretedArray {
    ScalarType type = ScalarType::Float64;
    void* data = nullptr;
    Shape shape, strides;
};

/// A scalar argument: integers in `i`, floats in `f`.
struct InterpretedScalar {
    std::int64_t i = 0;
    double f = 0.0;
};

/// Runs `kernel` (Target::CPU) over the iteration space of spatial shape `sizes`, on `arrays`
/// (by field name) and `scalars` (by parameter name), writing its outputs in place. Throws
/// std::logic_error for IR the interpreter does not know or a missing
/// argument; loom's own errors (UserError from a division by zero in evaluate) pass through.
void interpret_kernel(const Kernel& kernel, const Shape& sizes,
                      const std::map<std::string, InterpretedArray>& arrays,
                      const std::map<std::string, InterpretedScalar>& scalars);

/// The same for a kernel body and signature of one's own (a kernel's IR after a change).
void interpret_body(const Stmt& body, const std::vector<KernelParam>& params, const Shape& sizes,
                    const std::map<std::string, InterpretedArray>& arrays,
                    const std::map<std::string, InterpretedScalar>& scalars);

} // namespace loom::test
