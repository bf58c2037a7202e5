// The parameters of a generated kernel, as its signature lists them: what Kernel::parameters()
// returns, and what a launch must supply (fields by name, sizes and strides from the arrays,
// scalars by name).
#pragma once

#include <loom/detail/ir_handle.hpp>
#include <loom/field_info.hpp>

#include <cstdint>
#include <string>
#include <string_view>

namespace loom {

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

} // namespace loom
