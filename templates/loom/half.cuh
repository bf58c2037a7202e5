// loom::half and loom::bfloat16 in generated CUDA: 16-bit storage types whose values the kernel
// computes with in float (or double). Conversions are single PTX instructions where the GPU has
// them (cvt.f32.f16, cvt.rn.f16.f32, cvt.rn.f16.f64, cvt.rn.bf16.f32 from sm_80), else the
// software rounding of loom/float16_bits.cuh, which the CPU target runs too. loom ships these
// few lines instead of cuda_fp16.h: NVRTC has no include path, and they compile in no time.
#pragma once

#include "loom/float16_bits.cuh"

namespace loom {

struct __align__(2) half {
    unsigned short bits;
};
struct __align__(2) bfloat16 {
    unsigned short bits;
};

__device__ __forceinline__ float to_float(half h) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.bits));
    return f;
}
__device__ __forceinline__ float to_float(bfloat16 b) { return bits16::float_from_bfloat16(b.bits); }

__device__ __forceinline__ half to_half(float v) {
    half h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.bits) : "f"(v));
    return h;
}
__device__ __forceinline__ half to_half(double v) {
    half h;
    asm("cvt.rn.f16.f64 %0, %1;" : "=h"(h.bits) : "d"(v));
    return h;
}

__device__ __forceinline__ bfloat16 to_bfloat16(float v) {
    bfloat16 b;
#if __CUDA_ARCH__ >= 800
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(b.bits) : "f"(v));
#else
    b.bits = bits16::bfloat16_from_double(v);
#endif
    return b;
}
// From double in one rounding (a double rounded to float first could round twice).
__device__ __forceinline__ bfloat16 to_bfloat16(double v) { return {bits16::bfloat16_from_double(v)}; }

} // namespace loom
