// Field descriptors: what the IR knows about an array a kernel reads or writes.
//
// A field has 1-4 spatial dimensions and optional index dimensions (components). Its array shape
// is (spatial_0, ..., spatial_{D-1}, index_0, ..., index_{K-1}). The layout says in which order
// those axes lie in memory. Fields are identified by object, never by name.
#pragma once

#include <loom/types.hpp>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace loom {

/// The largest offset of a relative access, either way along each axis: f[{max_offset, 0}] is
/// accepted, f[{max_offset + 1, 0}] is a UserError. A stencil's reach sets its ghost layers, so a
/// larger offset could only read outside any array (and -INT_MIN would overflow the width).
inline constexpr int max_offset = 1 << 20;

/// Memory order of a field's axes. Spatial axis 0 is x, as in pystencils.
enum class Layout : std::uint8_t {
    C,       ///< numpy / row-major: axis 0 slowest, components fastest ("c", "numpy")
    Fortran, ///< column-major: axis 0 fastest, components slowest ("f", "fortran")
    SoA,     ///< structure of arrays: components slowest, then z, y, x ("fzyx", "soa")
    AoS,     ///< array of structures: z, y, x, then components fastest ("zyxf", "aos")
};

std::string_view layout_name(Layout l);
std::optional<Layout> parse_layout_name(std::string_view name);

struct FieldInfo {
    std::string name;
    ScalarType type = ScalarType::Float64;
    int spatial_dims = 0;
    std::vector<int> index_shape;        ///< sizes of the index dimensions; empty for scalars
    Layout layout = Layout::C;
    std::vector<std::int64_t> fixed_shape; ///< spatial sizes if fixed; empty if variable
    /// What a read of a float16 or bfloat16 field gives, and what the kernel computes with:
    /// float32 unless FieldOptions say float64. Other types compute in their own type.
    ScalarType half_compute_type = ScalarType::Float32;

    bool is_fixed() const { return !fixed_shape.empty(); }
    int index_dims() const { return static_cast<int>(index_shape.size()); }
    int array_dims() const { return spatial_dims + index_dims(); }
    int num_components() const;
    /// Array axes in memory order, slowest first.
    std::vector<int> memory_order() const;
    /// Spatial axes in memory order, fastest first: the order in which they map to x, y, z threads.
    std::vector<int> spatial_axes_fastest_first() const;
    /// The axis whose stride is 1 by construction (the fastest in memory).
    int unit_stride_axis() const { return memory_order().back(); }
    /// The type of the field's values in expressions: `type`, or half_compute_type for the
    /// 16-bit float types, which are only stored.
    ScalarType compute_type() const;
    /// Elements of a fixed-shape field, components included (INT64_MAX if that overflows); 0 for
    /// a variable shape.
    std::int64_t fixed_elements() const;
    /// Element strides of a fixed-shape field, per array axis.
    std::vector<std::int64_t> fixed_strides() const;
    /// "f(3): float64[3D]" or "g: float32[64, 64]", with ", layout fzyx" where not C.
    std::string describe() const;
};

/// A shared, immutable field descriptor. Two handles are the same field iff they share the object.
using FieldPtr = std::shared_ptr<const FieldInfo>;

} // namespace loom
