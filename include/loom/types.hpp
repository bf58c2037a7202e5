// Scalar types of the IR and the implicit-conversion rules of the DSL.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace loom {

/// The element types a value can have. Float16 and BFloat16 are storage types: fields and
/// parameters hold them, and the kernel computes with their values in float32 (loom/half.hpp).
enum class ScalarType : std::uint8_t { Bool, Int32, Int64, Float16, BFloat16, Float32, Float64 };

/// "float32", "int64", ...: the spelling used in field specs and messages.
std::string_view type_name(ScalarType t);
/// Parses "float32", "float64", "double", "float", "int32", "int", "int64", "float16", "half",
/// "bfloat16". Returns nothing for an unknown name.
std::optional<ScalarType> parse_type_name(std::string_view name);

bool is_float(ScalarType t);
bool is_int(ScalarType t);
inline bool is_numeric(ScalarType t) { return t != ScalarType::Bool; }
int bit_width(ScalarType t);

/// The common type of a binary arithmetic operation between two strongly typed operands:
/// float beats int, wider beats narrower. Bool has no common type with numbers.
std::optional<ScalarType> common_type(ScalarType a, ScalarType b);

/// Whether a value of type `from` may be stored into `to` without an explicit cast. Widening and
/// int-to-float are implicit; narrowing, float-to-int and anything involving bool are not.
bool implicitly_convertible(ScalarType from, ScalarType to);

/// C++ types map to scalar types (used by the typed overloads: field<float>, param<double>).
template <typename T>
constexpr ScalarType scalar_type_of();
template <>
constexpr ScalarType scalar_type_of<bool>() { return ScalarType::Bool; }
template <>
constexpr ScalarType scalar_type_of<std::int32_t>() { return ScalarType::Int32; }
template <>
constexpr ScalarType scalar_type_of<std::int64_t>() { return ScalarType::Int64; }
template <>
constexpr ScalarType scalar_type_of<float>() { return ScalarType::Float32; }
template <>
constexpr ScalarType scalar_type_of<double>() { return ScalarType::Float64; }

} // namespace loom
