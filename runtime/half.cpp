// loom::half and loom::bfloat16 on the host, over the bit conversions the kernels use.
#include <loom/half.hpp>

#include "templates/loom/float16_bits.cuh"

namespace loom {

std::uint16_t half::from_double(double v) { return bits16::half_from_double(v); }
half::operator float() const { return bits16::float_from_half(bits); }

std::uint16_t bfloat16::from_double(double v) { return bits16::bfloat16_from_double(v); }
bfloat16::operator float() const { return bits16::float_from_bfloat16(bits); }

double round_to_type(double v, ScalarType t) {
    switch (t) {
    case ScalarType::Float16: return bits16::float_from_half(bits16::half_from_double(v));
    case ScalarType::BFloat16: return bits16::float_from_bfloat16(bits16::bfloat16_from_double(v));
    case ScalarType::Float32: return static_cast<float>(v);
    default: return v;
    }
}

} // namespace loom
