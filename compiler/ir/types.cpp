#include <loom/types.hpp>

namespace loom {

std::string_view type_name(ScalarType t) {
    switch (t) {
    case ScalarType::Bool: return "bool";
    case ScalarType::Int32: return "int32";
    case ScalarType::Int64: return "int64";
    case ScalarType::Float16: return "float16";
    case ScalarType::BFloat16: return "bfloat16";
    case ScalarType::Float32: return "float32";
    case ScalarType::Float64: return "float64";
    }
    return "?";
}

std::optional<ScalarType> parse_type_name(std::string_view n) {
    if (n == "float64" || n == "double" || n == "f64") return ScalarType::Float64;
    if (n == "float32" || n == "float" || n == "f32") return ScalarType::Float32;
    if (n == "int32" || n == "int" || n == "i32") return ScalarType::Int32;
    if (n == "int64" || n == "i64") return ScalarType::Int64;
    if (n == "float16" || n == "half" || n == "f16") return ScalarType::Float16;
    if (n == "bfloat16" || n == "bf16") return ScalarType::BFloat16;
    if (n == "bool") return ScalarType::Bool;
    return std::nullopt;
}

bool is_float(ScalarType t) {
    return t == ScalarType::Float16 || t == ScalarType::BFloat16 || t == ScalarType::Float32 ||
           t == ScalarType::Float64;
}

bool is_int(ScalarType t) { return t == ScalarType::Int32 || t == ScalarType::Int64; }

int bit_width(ScalarType t) {
    switch (t) {
    case ScalarType::Bool: return 1;
    case ScalarType::Float16:
    case ScalarType::BFloat16: return 16;
    case ScalarType::Int32:
    case ScalarType::Float32: return 32;
    case ScalarType::Int64:
    case ScalarType::Float64: return 64;
    }
    return 0;
}

std::optional<ScalarType> common_type(ScalarType a, ScalarType b) {
    if (a == b) return a;
    if (a == ScalarType::Bool || b == ScalarType::Bool) return std::nullopt;
    if (is_float(a) != is_float(b)) return is_float(a) ? a : b;
    return bit_width(a) >= bit_width(b) ? a : b;
}

bool implicitly_convertible(ScalarType from, ScalarType to) {
    if (from == to) return true;
    if (from == ScalarType::Bool || to == ScalarType::Bool) return false;
    if (is_float(to)) return !is_float(from) || bit_width(from) <= bit_width(to);
    return is_int(from) && bit_width(from) <= bit_width(to);
}

} // namespace loom
