// 16-bit floats (IEEE binary16 "half" and bfloat16) as bits: conversions from double with one
// rounding to nearest even, and exact conversions to float. Plain C++ that NVRTC and the host
// compiler both take: loom's public loom::half (runtime/half.cpp), the CPU target's kernels
// (pasted into their source) and the device's slow paths (loom/half.cuh) share this one copy,
// so the CPU oracle rounds exactly as the GPU does.
#pragma once

#if defined(__CUDACC__)
#define LOOM_BITS16_FN __host__ __device__ inline
#else
#define LOOM_BITS16_FN inline
#endif

namespace loom {
namespace bits16 {

LOOM_BITS16_FN unsigned long long bits_of(double v) {
#if defined(__CUDA_ARCH__)
    return static_cast<unsigned long long>(__double_as_longlong(v));
#else
    unsigned long long u;
    __builtin_memcpy(&u, &v, sizeof u);
    return u;
#endif
}

LOOM_BITS16_FN float float_of(unsigned int u) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float f;
    __builtin_memcpy(&f, &u, sizeof f);
    return f;
#endif
}

/// `v` rounded to nearest even in a format of `exponent_bits` and `mantissa_bits` (5 / 10 for
/// half, 8 / 7 for bfloat16): overflow gives inf, a NaN the canonical NaN 0x7fff (as cvt gives).
LOOM_BITS16_FN unsigned short round_to(double v, int exponent_bits, int mantissa_bits) {
    const unsigned long long u = bits_of(v);
    const unsigned short sign = static_cast<unsigned short>((u >> 63) << 15);
    const int all_ones = (1 << exponent_bits) - 1;
    const unsigned short inf = static_cast<unsigned short>(sign | (all_ones << mantissa_bits));
    const int biased = static_cast<int>((u >> 52) & 0x7ff);
    const unsigned long long fraction = u & 0xfffffffffffffULL;
    if (biased == 0x7ff) return fraction ? static_cast<unsigned short>(0x7fff) : inf;
    if (biased == 0) return sign; // a double subnormal is far below either format's smallest
    const unsigned long long significand = fraction | (1ULL << 52); // 53 bits
    const int bias = (1 << (exponent_bits - 1)) - 1;
    const int exponent = biased - 1023 + bias; // the target's biased exponent
    if (exponent >= all_ones) return inf;
    // A normal result keeps mantissa_bits + 1 bits; a subnormal one fewer for each step below 1.
    const int shift = 52 - mantissa_bits + (exponent < 1 ? 1 - exponent : 0);
    if (shift > 53) return sign; // below half the smallest subnormal
    unsigned long long q = significand >> shift;
    const unsigned long long rest = significand & ((1ULL << shift) - 1), half = 1ULL << (shift - 1);
    if (rest > half || (rest == half && (q & 1))) ++q;
    // Normal: exponent field `exponent` plus the mantissa, q's leading one carried into it
    // (a rounding to the next power of two carries once more). Subnormal: q is the whole code.
    const unsigned long long code =
        exponent < 1 ? q : (static_cast<unsigned long long>(exponent - 1) << mantissa_bits) + q;
    return code >= static_cast<unsigned long long>(all_ones) << mantissa_bits ? inf
                                                                              : static_cast<unsigned short>(sign | code);
}

LOOM_BITS16_FN unsigned short half_from_double(double v) { return round_to(v, 5, 10); }
LOOM_BITS16_FN unsigned short bfloat16_from_double(double v) { return round_to(v, 8, 7); }

/// The half's value as a float (exact: every half is a float).
LOOM_BITS16_FN float float_from_half(unsigned short h) {
    const unsigned int sign = static_cast<unsigned int>(h & 0x8000) << 16;
    const int exponent = (h >> 10) & 0x1f;
    const unsigned int mantissa = h & 0x3ff;
    if (exponent == 0x1f) return float_of(sign | 0x7f800000u | (mantissa << 13));
    if (exponent == 0) { // zero or subnormal: mantissa * 2^-24, exact in float
        const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
        return sign ? -magnitude : magnitude;
    }
    return float_of(sign | (static_cast<unsigned int>(exponent - 15 + 127) << 23) | (mantissa << 13));
}

/// The bfloat16's value as a float: its bits are a float's upper half.
LOOM_BITS16_FN float float_from_bfloat16(unsigned short b) { return float_of(static_cast<unsigned int>(b) << 16); }

} // namespace bits16
} // namespace loom
