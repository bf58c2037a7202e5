// 16-bit floats on the host: the element types of float16 and bfloat16 arrays and fields.
//
//   HostArray<loom::half> x({n});   x[i] = 0.25f;   float v = x[i];
//
// Conversions round to nearest even, exactly as the kernels do (one implementation,
// templates/loom/float16_bits.cuh, serves the host, the CPU target and the GPU's slow paths).
// There is no arithmetic on these types: compute in float, store the result.
#pragma once

#include <loom/types.hpp>

#include <cstdint>
#include <type_traits>

namespace loom {

/// IEEE 754 binary16: 1 sign, 5 exponent and 10 mantissa bits; largest finite value 65504.
struct half {
    std::uint16_t bits = 0;
    half() = default;
    /// From any arithmetic value (float, double, an integer), rounded to nearest even like a
    /// store into a float16 field.
    template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
    half(T v) : bits(from_double(static_cast<double>(v))) {} // NOLINT(google-explicit-constructor)
    operator float() const; // NOLINT(google-explicit-constructor): exact
    static std::uint16_t from_double(double v);
    static half from_bits(std::uint16_t b) {
        half h;
        h.bits = b;
        return h;
    }
};

/// bfloat16: float32's 8 exponent bits with 7 mantissa bits (a float's upper half).
struct bfloat16 {
    std::uint16_t bits = 0;
    bfloat16() = default;
    /// From any arithmetic value (float, double, an integer), rounded to nearest even like a
    /// store into a bfloat16 field.
    template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
    bfloat16(T v) : bits(from_double(static_cast<double>(v))) {} // NOLINT(google-explicit-constructor)
    operator float() const; // NOLINT(google-explicit-constructor): exact
    static std::uint16_t from_double(double v);
    static bfloat16 from_bits(std::uint16_t b) {
        bfloat16 h;
        h.bits = b;
        return h;
    }
};

template <>
constexpr ScalarType scalar_type_of<half>() { return ScalarType::Float16; }
template <>
constexpr ScalarType scalar_type_of<bfloat16>() { return ScalarType::BFloat16; }

/// `v` rounded to nearest even in `t`, as a double: `t`'s rounding for the float types (float16,
/// bfloat16, float32), `v` itself for float64.
double round_to_type(double v, ScalarType t);

} // namespace loom
