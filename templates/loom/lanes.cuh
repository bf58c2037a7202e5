// Lanes: W consecutive elements of a field loaded or stored at once (compiler/passes/
// vectorize_lanes.cpp). Where the address is aligned to the W elements, one vector instruction
// (float4, float2, double2, int4, int2, and 4, 8 or 16 bytes of 16-bit floats; read-only loads
// through the non-coherent cache);
// elsewhere, as happens for views that start at an odd element, element by element. So a kernel
// with lanes is right for every array, and as fast as vectors where the data allow.
#pragma once

namespace loom {

// LOOM_LANES_ALIGNED: the kernel is compiled for arrays whose rows of lanes are all aligned (a
// 16-byte aligned base and strides of whole 16 bytes, which KernelFunction checks at each
// launch), so each load or store is one vector without the address test. The test and its
// element-by-element fallback cost the 3D 7-point f32 stencil 0.79 -> 0.87 of copy on an H200
// (bench/probe_kernels/probe_lane_edges.cu).
#ifdef LOOM_LANES_ALIGNED
constexpr bool lanes_known_aligned = true;
#else
constexpr bool lanes_known_aligned = false;
#endif

// The vector of W elements of type T: float2, float4, double2, int2, int4, and for 16-bit
// elements (loom::half, loom::bfloat16: no vector types of their own) the same bytes as an
// unsigned int (2 lanes, a half2), uint2 (4) or uint4 (8).
template <int Bytes> struct raw_lanes;
template <> struct raw_lanes<4> { using type = unsigned int; };
template <> struct raw_lanes<8> { using type = uint2; };
template <> struct raw_lanes<16> { using type = uint4; };
template <int W, typename T> struct lanes_of { using type = typename raw_lanes<W * int(sizeof(T))>::type; };
template <> struct lanes_of<2, float> { using type = float2; };
template <> struct lanes_of<4, float> { using type = float4; };
template <> struct lanes_of<2, double> { using type = double2; };
template <> struct lanes_of<2, int> { using type = int2; };
template <> struct lanes_of<4, int> { using type = int4; };

// load_lanes<W>(lanes + k, p) fills W elements of a longer array that also holds the lanes'
// neighbours (a stencil's, loaded apart); load_lanes(lanes, p) a whole array of W.
template <int W, typename T>
__device__ __forceinline__ void load_lanes(T* lanes, const T* p) {
    using V = typename lanes_of<W, T>::type;
    if (lanes_known_aligned || reinterpret_cast<unsigned long long>(p) % sizeof(V) == 0) {
        const V v = __ldg(reinterpret_cast<const V*>(p));
        const T* e = reinterpret_cast<const T*>(&v); // the vector's members are its lanes
#pragma unroll
        for (int i = 0; i < W; ++i) lanes[i] = e[i];
    } else {
#pragma unroll
        for (int i = 0; i < W; ++i) lanes[i] = p[i];
    }
}

template <int W, typename T>
__device__ __forceinline__ void load_lanes(T (&lanes)[W], const T* p) {
    load_lanes<W>(&lanes[0], p);
}

template <int W, typename T>
__device__ __forceinline__ void store_lanes(T* p, const T (&lanes)[W]) {
    using V = typename lanes_of<W, T>::type;
    if (lanes_known_aligned || reinterpret_cast<unsigned long long>(p) % sizeof(V) == 0) {
        V v;
        T* e = reinterpret_cast<T*>(&v);
#pragma unroll
        for (int i = 0; i < W; ++i) e[i] = lanes[i];
        *reinterpret_cast<V*>(p) = v;
    } else {
#pragma unroll
        for (int i = 0; i < W; ++i) p[i] = lanes[i];
    }
}

} // namespace loom
