// The compiler pipeline: from DSL assignments to printed CUDA (Target::CUDA) or C++ with OpenMP
// (Target::CPU). lower.cpp lists the passes in order; read it top to bottom to learn the compiler.
#pragma once

#include "compiler/ir/ir.hpp"
#include "compiler/kernel_config.hpp"
#include "compiler/launch.hpp"

#include <string>
#include <vector>

namespace loom {

/// One scalar assignment as the frontend hands it over, with its DSL text for the comment.
struct SourceAssignment {
    Expr lhs, rhs;
    std::string text;
};

enum class ParamRole : std::uint8_t { FieldPointer, Size, Stride, Scalar };
std::string_view role_name(ParamRole r);

/// One kernel argument, in the order of the generated signature.
struct KernelParam {
    std::string name;      ///< as printed in the generated code
    std::string c_type;    ///< as printed: "const float* __restrict__", "const int", ...
    ParamRole role;
    ScalarType type;       ///< element type for pointers, value type otherwise
    FieldPtr field;        ///< for FieldPointer and Stride
    int axis = -1;         ///< for Size (spatial axis) and Stride (array axis)
    bool read_only = false;///< for FieldPointer: the kernel never writes the field
    Expr var;              ///< the IR variable (Size, Stride, Scalar); undefined for pointers
};

/// What the pipeline produces.
struct LoweredKernel {
    std::string name;
    KernelConfig config;
    std::vector<FieldPtr> fields;    ///< in order of first appearance
    std::vector<FieldPtr> buffers;   ///< fields read only at absolute positions (also in fields)
    std::vector<std::pair<int, int>> ghost_layers; ///< (low, high) per axis; zeros with a slice
    std::vector<KernelParam> params; ///< the signature
    LaunchDescription launch;        ///< has_grid false on the CPU target
    Stmt body;                       ///< the final IR (the kernel body)
    std::string source;              ///< the printed CUDA, or C++ for the CPU target
};

/// Runs the whole pipeline. Throws UserError for bad input, InternalError for a loom bug.
LoweredKernel lower(const std::vector<SourceAssignment>& assignments, const KernelConfig& config);

} // namespace loom
