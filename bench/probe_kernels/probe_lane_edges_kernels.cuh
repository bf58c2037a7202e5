// Variants of loom's 3D 7-point f32 kernel for probe_lane_edges.cu: v_orig as create_kernel
// printed it on 2026-11-28 (before partial groups took the lanes), v_fast the same with vector
// loads and stores without the address test, v_edge / v_edge_fast the first and last group of a
// row in the lanes' path. The other rows of docs/performance.md's table were one-line edits of
// v_orig / v_fast, timed in the same session: one guard for the thread's 4 cells, `#pragma unroll 1`
// on the cells' loop, one alignment test per thread choosing between two copies of the body.
#include "loom/lanes.cuh"
namespace ab {
template <int W, typename T> __device__ __forceinline__ void ld_fast(T* l, const T* p) { float4 v = __ldg(reinterpret_cast<const float4*>(p)); l[0]=v.x; l[1]=v.y; l[2]=v.z; l[3]=v.w; }
template <int W, typename T> __device__ __forceinline__ void ld_fast(T (&l)[W], const T* p) { ld_fast<W>(&l[0], p); }
template <int W, typename T> __device__ __forceinline__ void st_fast(T* p, const T (&l)[W]) { *reinterpret_cast<float4*>(p) = make_float4(l[0], l[1], l[2], l[3]); }
}
extern "C" __global__ void v_orig(
    float* __restrict__ dst, const float* __restrict__ src,
    const int size_0, const int size_1, const int size_2,
    const int dst_stride_0, const int dst_stride_1, const int src_stride_0, const int src_stride_1)
{
    const int y = (int) (blockIdx.y * blockDim.y + threadIdx.y) + 1;
    const int z_lanes = (int) (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (y < size_1 - 1 && z_lanes < size_2 - 1) {
        #pragma unroll
        for (int cell = 0; cell < 4; ++cell) {
            const int x = (int) (blockIdx.z * blockDim.z + threadIdx.z) * 4 + cell + 1;
            if (x < size_0 - 1) {
                if (z_lanes >= 1 && z_lanes + 4 <= size_2 - 1) {
                    float src_lanes[6];
                    loom::load_lanes<4>(src_lanes + 1,
                            &src[src_stride_0 * x + src_stride_1 * y + z_lanes]);
                    const float* __restrict__ src_c =
                            src + src_stride_0 * x + src_stride_1 * y + z_lanes;
                    src_lanes[0] = src_c[-1];
                    src_lanes[5] = src_c[4];
                    float src_lanes_1[4];
                    loom::load_lanes(src_lanes_1,
                            &src[src_stride_0 * (x + 1) + src_stride_1 * y + z_lanes]);
                    float src_lanes_2[4];
                    loom::load_lanes(src_lanes_2,
                            &src[src_stride_0 * (x - 1) + src_stride_1 * y + z_lanes]);
                    float src_lanes_3[4];
                    loom::load_lanes(src_lanes_3,
                            &src[src_stride_0 * x + src_stride_1 * (y + 1) + z_lanes]);
                    float src_lanes_4[4];
                    loom::load_lanes(src_lanes_4,
                            &src[src_stride_0 * x + src_stride_1 * (y - 1) + z_lanes]);
                    float dst_lanes[4];
                    #pragma unroll
                    for (int lane = 0; lane < 4; ++lane) {
                        // dst[0, 0, 0] = 0.5f * src[0, 0, 0] + 0.1f *
                        //     (src[1, 0, 0] + src[-1, 0, 0] + src[0, 1, 0] + src[0, -1, 0] +
                        //     src[0, 0, 1] + src[0, 0, -1])
                        dst_lanes[lane] = 0.5f * src_lanes[lane + 1] +
                                0.1f * (src_lanes_1[lane] + src_lanes_2[lane] + src_lanes_3[lane] +
                                src_lanes_4[lane] + src_lanes[lane + 2] + src_lanes[lane]);
                    }
                    loom::store_lanes(&dst[dst_stride_0 * x + dst_stride_1 * y + z_lanes],
                            dst_lanes);
                } else {
                    #pragma unroll
                    for (int lane = 0; lane < 4; ++lane) {
                        const int z = z_lanes + lane;
                        if (z >= 1 && z < size_2 - 1) {
                            const float* __restrict__ src_c =
                                    src + src_stride_0 * x + src_stride_1 * y + z;
                            // dst[0, 0, 0] = 0.5f * src[0, 0, 0] +
                            //     0.1f * (src[1, 0, 0] + src[-1, 0, 0] + src[0, 1, 0] +
                            //     src[0, -1, 0] + src[0, 0, 1] + src[0, 0, -1])
                            dst[dst_stride_0 * x + dst_stride_1 * y + z] =
                                    0.5f * src_c[0] + 0.1f * (src_c[src_stride_0] +
                                    src_c[-src_stride_0] + src_c[src_stride_1] +
                                    src_c[-src_stride_1] + src_c[1] + src_c[-1]);
                        }
                    }
                }
            }
        }
    }
}

extern "C" __global__ void v_fast(
    float* __restrict__ dst, const float* __restrict__ src,
    const int size_0, const int size_1, const int size_2,
    const int dst_stride_0, const int dst_stride_1, const int src_stride_0, const int src_stride_1)
{
    const int y = (int) (blockIdx.y * blockDim.y + threadIdx.y) + 1;
    const int z_lanes = (int) (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (y < size_1 - 1 && z_lanes < size_2 - 1) {
        #pragma unroll
        for (int cell = 0; cell < 4; ++cell) {
            const int x = (int) (blockIdx.z * blockDim.z + threadIdx.z) * 4 + cell + 1;
            if (x < size_0 - 1) {
                if (z_lanes >= 1 && z_lanes + 4 <= size_2 - 1) {
                    float src_lanes[6];
                    ab::ld_fast<4>(src_lanes + 1,
                            &src[src_stride_0 * x + src_stride_1 * y + z_lanes]);
                    const float* __restrict__ src_c =
                            src + src_stride_0 * x + src_stride_1 * y + z_lanes;
                    src_lanes[0] = src_c[-1];
                    src_lanes[5] = src_c[4];
                    float src_lanes_1[4];
                    ab::ld_fast(src_lanes_1,
                            &src[src_stride_0 * (x + 1) + src_stride_1 * y + z_lanes]);
                    float src_lanes_2[4];
                    ab::ld_fast(src_lanes_2,
                            &src[src_stride_0 * (x - 1) + src_stride_1 * y + z_lanes]);
                    float src_lanes_3[4];
                    ab::ld_fast(src_lanes_3,
                            &src[src_stride_0 * x + src_stride_1 * (y + 1) + z_lanes]);
                    float src_lanes_4[4];
                    ab::ld_fast(src_lanes_4,
                            &src[src_stride_0 * x + src_stride_1 * (y - 1) + z_lanes]);
                    float dst_lanes[4];
                    #pragma unroll
                    for (int lane = 0; lane < 4; ++lane) {
                        // dst[0, 0, 0] = 0.5f * src[0, 0, 0] + 0.1f *
                        //     (src[1, 0, 0] + src[-1, 0, 0] + src[0, 1, 0] + src[0, -1, 0] +
                        //     src[0, 0, 1] + src[0, 0, -1])
                        dst_lanes[lane] = 0.5f * src_lanes[lane + 1] +
                                0.1f * (src_lanes_1[lane] + src_lanes_2[lane] + src_lanes_3[lane] +
                                src_lanes_4[lane] + src_lanes[lane + 2] + src_lanes[lane]);
                    }
                    ab::st_fast(&dst[dst_stride_0 * x + dst_stride_1 * y + z_lanes],
                            dst_lanes);
                } else {
                    #pragma unroll
                    for (int lane = 0; lane < 4; ++lane) {
                        const int z = z_lanes + lane;
                        if (z >= 1 && z < size_2 - 1) {
                            const float* __restrict__ src_c =
                                    src + src_stride_0 * x + src_stride_1 * y + z;
                            // dst[0, 0, 0] = 0.5f * src[0, 0, 0] +
                            //     0.1f * (src[1, 0, 0] + src[-1, 0, 0] + src[0, 1, 0] +
                            //     src[0, -1, 0] + src[0, 0, 1] + src[0, 0, -1])
                            dst[dst_stride_0 * x + dst_stride_1 * y + z] =
                                    0.5f * src_c[0] + 0.1f * (src_c[src_stride_0] +
                                    src_c[-src_stride_0] + src_c[src_stride_1] +
                                    src_c[-src_stride_1] + src_c[1] + src_c[-1]);
                        }
                    }
                }
            }
        }
    }
}

// The edge groups in the vector path: full = the group lies inside; else rows element by element, guarded.
template <bool CHECKED>
__device__ __forceinline__ void row_lanes(float* r, int lo, int hi, const float* p, int x_lanes, bool full, int start, int stop) {
    if (full) {
        if (CHECKED) loom::load_lanes<4>(r + lo, p); else ab::ld_fast<4>(r + lo, p);
        for (int j = -lo; j < 0; ++j) r[lo + j] = p[j];
        for (int j = 4; j < 4 + hi; ++j) r[lo + j] = p[j];
    } else {
#pragma unroll
        for (int j = -lo; j < 4 + hi; ++j) r[lo + j] = (x_lanes + j >= start - lo && x_lanes + j < stop + hi) ? p[j] : 0.0f;
    }
}
template <bool CHECKED>
__device__ __forceinline__ void edge_body(
    float* __restrict__ dst, const float* __restrict__ src,
    const int size_0, const int size_1, const int size_2,
    const int dst_stride_0, const int dst_stride_1, const int src_stride_0, const int src_stride_1)
{
    const int y = (int) (blockIdx.y * blockDim.y + threadIdx.y) + 1;
    const int z_lanes = (int) (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    if (y < size_1 - 1 && z_lanes < size_2 - 1) {
        const bool full = z_lanes >= 1 && z_lanes + 4 <= size_2 - 1;
        #pragma unroll
        for (int cell = 0; cell < 4; ++cell) {
            const int x = (int) (blockIdx.z * blockDim.z + threadIdx.z) * 4 + cell + 1;
            if (x < size_0 - 1) {
                float c[6], r1[4], r2[4], r3[4], r4[4], d[4];
                row_lanes<CHECKED>(c, 1, 1, &src[src_stride_0 * x + src_stride_1 * y + z_lanes], z_lanes, full, 1, size_2 - 1);
                row_lanes<CHECKED>(r1, 0, 0, &src[src_stride_0 * (x + 1) + src_stride_1 * y + z_lanes], z_lanes, full, 1, size_2 - 1);
                row_lanes<CHECKED>(r2, 0, 0, &src[src_stride_0 * (x - 1) + src_stride_1 * y + z_lanes], z_lanes, full, 1, size_2 - 1);
                row_lanes<CHECKED>(r3, 0, 0, &src[src_stride_0 * x + src_stride_1 * (y + 1) + z_lanes], z_lanes, full, 1, size_2 - 1);
                row_lanes<CHECKED>(r4, 0, 0, &src[src_stride_0 * x + src_stride_1 * (y - 1) + z_lanes], z_lanes, full, 1, size_2 - 1);
                #pragma unroll
                for (int lane = 0; lane < 4; ++lane)
                    d[lane] = 0.5f * c[lane + 1] + 0.1f * (r1[lane] + r2[lane] + r3[lane] + r4[lane] + c[lane + 2] + c[lane]);
                float* q = &dst[dst_stride_0 * x + dst_stride_1 * y + z_lanes];
                if (full) {
                    if (CHECKED) loom::store_lanes(q, d); else ab::st_fast(q, d);
                } else {
                    #pragma unroll
                    for (int lane = 0; lane < 4; ++lane)
                        if (z_lanes + lane >= 1 && z_lanes + lane < size_2 - 1) q[lane] = d[lane];
                }
            }
        }
    }
}
extern "C" __global__ void v_edge(float* __restrict__ dst, const float* __restrict__ src, const int size_0, const int size_1, const int size_2,
    const int dst_stride_0, const int dst_stride_1, const int src_stride_0, const int src_stride_1)
{ edge_body<true>(dst, src, size_0, size_1, size_2, dst_stride_0, dst_stride_1, src_stride_0, src_stride_1); }
extern "C" __global__ void v_edge_fast(float* __restrict__ dst, const float* __restrict__ src, const int size_0, const int size_1, const int size_2,
    const int dst_stride_0, const int dst_stride_1, const int src_stride_0, const int src_stride_1)
{ edge_body<false>(dst, src, size_0, size_1, size_2, dst_stride_0, dst_stride_1, src_stride_0, src_stride_1); }
