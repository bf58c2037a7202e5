// templates/: loom's device-side helpers. Every templates/**/*.cuh is embedded into the library at
// build time and handed to NVRTC as a named header, so generated code can #include "loom/math.cuh"
// with no include path on the user's machine. NVRTC has no standard headers here: builtins only.
#pragma once

namespace loom {

/// ceil(a / b) for non-negative integers: the number of blocks that cover `a` items.
template <typename T>
__device__ __forceinline__ constexpr T ceil_div(T a, T b) {
    return (a + b - 1) / b;
}

/// `a` rounded up to a multiple of `b` (non-negative integers).
template <typename T>
__device__ __forceinline__ constexpr T round_up(T a, T b) {
    return ceil_div(a, b) * b;
}

template <typename T>
__device__ __forceinline__ constexpr T min(T a, T b) {
    return b < a ? b : a;
}

template <typename T>
__device__ __forceinline__ constexpr T max(T a, T b) {
    return a < b ? b : a;
}

/// `x` limited to [lo, hi].
template <typename T>
__device__ __forceinline__ constexpr T clamp(T x, T lo, T hi) {
    return x < lo ? lo : (hi < x ? hi : x);
}

template <typename T>
__device__ __forceinline__ constexpr T square(T x) {
    return x * x;
}

/// a + t * (b - a), with one rounding where the type has an FMA.
__device__ __forceinline__ float lerp(float a, float b, float t) { return fmaf(t, b - a, a); }
__device__ __forceinline__ double lerp(double a, double b, double t) { return fma(t, b - a, a); }

} // namespace loom
