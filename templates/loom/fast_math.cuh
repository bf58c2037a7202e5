// Approximate math under KernelConfig::fast_math, as single PTX instructions. NVRTC's
// --use_fast_math already maps expf, logf, sinf, ... to their approximate intrinsics (expf to
// ex2.approx), but keeps tanhf exact: GELU's tanh is the one loom spells itself.
#pragma once

namespace loom {

/// tanh with a relative error of about 2^-11 (tanh.approx.f32, sm_75 and later).
__device__ __forceinline__ float tanh_approx(float x) {
#if __CUDA_ARCH__ >= 750
    float y;
    asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
#else
    return tanhf(x);
#endif
}

} // namespace loom
