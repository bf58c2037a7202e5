// Probe (not built by CMake; nvcc -O3 -arch=sm_90 -std=c++17 -I templates -I bench/probe_kernels): does a thread's march
// along the slowest axis with rows of lanes rolled through registers (each row loaded once per
// thread) beat loom's current 3D kernels (a cell loads all its rows; or a group of 4 cells
// unrolled with shared loads)? 3D 7-point and 27-point f32, 512^3, against a 2 GiB copy.
#include <cuda_runtime.h>
#include "loom/lanes.cuh"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

float time_ms(const std::function<void()>& f, int reps = 30) {
    cudaEvent_t a, b;
    cudaEventCreate(&a); cudaEventCreate(&b);
    for (int i = 0; i < 3; ++i) f();
    std::vector<float> t;
    for (int i = 0; i < reps; ++i) {
        cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b);
        float ms; cudaEventElapsedTime(&ms, a, b); t.push_back(ms);
    }
    CK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

__global__ void fill(float* a, size_t n, unsigned seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ seed; h ^= h >> 13; h *= 0x5bd1e995; h ^= h >> 15;
        a[i] = (h & 0xffff) / 65536.0f - 0.5f;
    }
}

#define W27(a, b, c) (0.01f * ((a) + 2) + 0.001f * ((b) + 2) + 0.0001f * ((c) + 2))

// References: one thread per cell, scalar.
__global__ void ref7(const float* __restrict__ s, float* __restrict__ d, int n) {
    int z = blockIdx.x * blockDim.x + threadIdx.x + 1, y = blockIdx.y + 1, x = blockIdx.z + 1;
    if (z >= n - 1) return;
    size_t p = (size_t)n * n, i = x * p + (size_t)y * n + z;
    d[i] = 0.5f * s[i] + 0.1f * (s[i + p] + s[i - p] + s[i + n] + s[i - n] + s[i + 1] + s[i - 1]);
}
__global__ void ref27(const float* __restrict__ s, float* __restrict__ d, int n) {
    int z = blockIdx.x * blockDim.x + threadIdx.x + 1, y = blockIdx.y + 1, x = blockIdx.z + 1;
    if (z >= n - 1) return;
    size_t p = (size_t)n * n, i = x * p + (size_t)y * n + z;
    float acc = 0;
    for (int a = -1; a <= 1; ++a)
        for (int b = -1; b <= 1; ++b)
            for (int c = -1; c <= 1; ++c) acc += W27(a, b, c) * s[i + a * p + b * n + c];
    d[i] = acc;
}

// A row of lanes at p with one neighbour each side: r[0] = p[-1], r[1..4] = p[0..3], r[5] = p[4].
template <bool ALIGNED>
__device__ __forceinline__ void row6(float r[6], const float* p) {
    if (ALIGNED) {
        float4 v = __ldg(reinterpret_cast<const float4*>(p));
        r[1] = v.x; r[2] = v.y; r[3] = v.z; r[4] = v.w;
    } else {
        loom::load_lanes<4>(r + 1, p);
    }
    r[0] = p[-1];
    r[5] = p[4];
}
template <bool ALIGNED>
__device__ __forceinline__ void row4(float r[4], const float* p) {
    if (ALIGNED) {
        float4 v = __ldg(reinterpret_cast<const float4*>(p));
        r[0] = v.x; r[1] = v.y; r[2] = v.z; r[3] = v.w;
    } else {
        loom::load_lanes<4>(r, p);
    }
}

// March: cells x_cells .. x_cells + C - 1 along x (slowest), lanes of 4 along z; rows rolled.
// UNROLL: 0 = full unroll of the whole group, else #pragma unroll UNROLL with a runtime count.
template <int C, int UNROLL, bool ALIGNED, int MINB = 1>
__global__ void __launch_bounds__(256, MINB) march7(float* __restrict__ dst, const float* __restrict__ src, int size_0, int size_1, int size_2,
                       int ds0, int ds1, int ss0, int ss1) {
    const int y = (int)(blockIdx.y * blockDim.y + threadIdx.y) + 1;
    const int z_lanes = (int)(blockIdx.x * blockDim.x + threadIdx.x) * 4;
    const int x_cells = (int)(blockIdx.z * blockDim.z + threadIdx.z) * C + 1;
    if (y >= size_1 - 1 || z_lanes >= size_2 - 1 || x_cells >= size_0 - 1) return;
    const int count = min(C, size_0 - 1 - x_cells);
    if (z_lanes >= 1 && z_lanes + 4 <= size_2 - 1) {
        float m[6], c[6];
        row6<ALIGNED>(m, src + ss0 * (x_cells - 1) + ss1 * y + z_lanes);
        row6<ALIGNED>(c, src + ss0 * x_cells + ss1 * y + z_lanes);
        auto step = [&](int cell) {
            const int x = x_cells + cell;
            const float* p = src + ss0 * x + ss1 * y + z_lanes;
            float u[6], s[4], nn[4], d[4];
            row6<ALIGNED>(u, p + ss0);
            row4<ALIGNED>(s, p - ss1);
            row4<ALIGNED>(nn, p + ss1);
#pragma unroll
            for (int lane = 0; lane < 4; ++lane)
                d[lane] = 0.5f * c[lane + 1] + 0.1f * (u[lane + 1] + m[lane + 1] + nn[lane] + s[lane] + c[lane + 2] + c[lane]);
            loom::store_lanes(&dst[ds0 * x + ds1 * y + z_lanes], d);
#pragma unroll
            for (int k = 0; k < 6; ++k) { m[k] = c[k]; c[k] = u[k]; }
        };
        if (UNROLL == 0 && count == C) {
#pragma unroll
            for (int cell = 0; cell < C; ++cell) step(cell);
        } else if (UNROLL == 0) {
#pragma unroll 1
            for (int cell = 0; cell < count; ++cell) step(cell);
        } else {
#pragma unroll UNROLL
            for (int cell = 0; cell < count; ++cell) step(cell);
        }
    } else {
        for (int cell = 0; cell < count; ++cell)
            for (int lane = 0; lane < 4; ++lane) {
                const int z = z_lanes + lane, x = x_cells + cell;
                if (z < 1 || z >= size_2 - 1) continue;
                const float* s = src + ss0 * x + ss1 * y + z;
                dst[ds0 * x + ds1 * y + z] = 0.5f * s[0] + 0.1f * (s[ss0] + s[-ss0] + s[ss1] + s[-ss1] + s[1] + s[-1]);
            }
    }
}

template <int C, int UNROLL, bool ALIGNED, int MINB = 1>
__global__ void __launch_bounds__(256, MINB) march27(float* __restrict__ dst, const float* __restrict__ src, int size_0, int size_1, int size_2,
                        int ds0, int ds1, int ss0, int ss1) {
    const int y = (int)(blockIdx.y * blockDim.y + threadIdx.y) + 1;
    const int z_lanes = (int)(blockIdx.x * blockDim.x + threadIdx.x) * 4;
    const int x_cells = (int)(blockIdx.z * blockDim.z + threadIdx.z) * C + 1;
    if (y >= size_1 - 1 || z_lanes >= size_2 - 1 || x_cells >= size_0 - 1) return;
    const int count = min(C, size_0 - 1 - x_cells);
    if (z_lanes >= 1 && z_lanes + 4 <= size_2 - 1) {
        float w[2][3][6]; // planes x-1, x; rows y-1, y, y+1
#pragma unroll
        for (int q = 0; q < 2; ++q)
#pragma unroll
            for (int b = 0; b < 3; ++b) row6<ALIGNED>(w[q][b], src + ss0 * (x_cells - 1 + q) + ss1 * (y - 1 + b) + z_lanes);
        auto step = [&](int cell) {
            const int x = x_cells + cell;
            float u[3][6], d[4];
#pragma unroll
            for (int b = 0; b < 3; ++b) row6<ALIGNED>(u[b], src + ss0 * (x + 1) + ss1 * (y - 1 + b) + z_lanes);
#pragma unroll
            for (int lane = 0; lane < 4; ++lane) {
                float acc = 0;
#pragma unroll
                for (int b = 0; b < 3; ++b)
#pragma unroll
                    for (int c = 0; c < 3; ++c)
                        acc += W27(-1, b - 1, c - 1) * w[0][b][lane + c] + W27(0, b - 1, c - 1) * w[1][b][lane + c] +
                               W27(1, b - 1, c - 1) * u[b][lane + c];
                d[lane] = acc;
            }
            loom::store_lanes(&dst[ds0 * x + ds1 * y + z_lanes], d);
#pragma unroll
            for (int b = 0; b < 3; ++b)
#pragma unroll
                for (int k = 0; k < 6; ++k) { w[0][b][k] = w[1][b][k]; w[1][b][k] = u[b][k]; }
        };
        if (UNROLL == 0 && count == C) {
#pragma unroll
            for (int cell = 0; cell < C; ++cell) step(cell);
        } else if (UNROLL == 0) {
#pragma unroll 1
            for (int cell = 0; cell < count; ++cell) step(cell);
        } else {
#pragma unroll UNROLL
            for (int cell = 0; cell < count; ++cell) step(cell);
        }
    } else {
        for (int cell = 0; cell < count; ++cell)
            for (int lane = 0; lane < 4; ++lane) {
                const int z = z_lanes + lane, x = x_cells + cell;
                if (z < 1 || z >= size_2 - 1) continue;
                const float* s = src + ss0 * x + ss1 * y + z;
                float acc = 0;
                for (int a = -1; a <= 1; ++a)
                    for (int b = -1; b <= 1; ++b)
                        for (int c = -1; c <= 1; ++c) acc += W27(a, b, c) * s[a * ss0 + b * ss1 + c];
                dst[ds0 * x + ds1 * y + z] = acc;
            }
    }
}

#include "loom7.cu"
#include "loom27.cu"
#include "loom7_lb6.cu"
#include "loom7_lb8.cu"
#include "loom27_lb6.cu"
#include "loom27_lb8.cu"

int main(int argc, char** argv) {
    const bool once = argc > 1; // under ncu: each kernel once, untimed
    const int n = 512;
    const size_t cells = (size_t)n * n * n;
    float *a, *b, *r7, *r27;
    CK(cudaMalloc(&a, cells * 4)); CK(cudaMalloc(&b, cells * 4));
    CK(cudaMalloc(&r7, cells * 4)); CK(cudaMalloc(&r27, cells * 4));
    fill<<<4096, 256>>>(a, cells, 7);
    float copy_gbs;
    {
        size_t bytes = 1ull << 31; void *x, *y; CK(cudaMalloc(&x, bytes)); CK(cudaMalloc(&y, bytes));
        float ms = time_ms([&] { cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice); }, 20);
        copy_gbs = 2.0 * bytes / (ms * 1e6);
        printf("copy 2 GiB: %.1f GB/s\n", copy_gbs);
        cudaFree(x); cudaFree(y);
    }
    CK(cudaMemset(r7, 0, cells * 4)); CK(cudaMemset(r27, 0, cells * 4));
    ref7<<<dim3((n - 2 + 127) / 128, n - 2, n - 2), 128>>>(a, r7, n);
    ref27<<<dim3((n - 2 + 127) / 128, n - 2, n - 2), 128>>>(a, r27, n);
    CK(cudaDeviceSynchronize());
    std::vector<float> h(cells), hr(cells);
    auto run = [&](const char* name, float* ref, const std::function<void()>& f) {
        CK(cudaMemset(b, 0, cells * 4)); f(); CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(h.data(), b, cells * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(hr.data(), ref, cells * 4, cudaMemcpyDeviceToHost));
        float err = 0;
        for (size_t k = 0; k < cells; ++k) err = std::max(err, std::fabs(h[k] - hr[k]));
        if (once) return;
        float ms = time_ms(f);
        printf("%-40s %8.4f ms  %.3f of copy  err %.1e\n", name, ms, 2.0 * cells * 4 / (ms * 1e6) / copy_gbs, err);
        fflush(stdout);
    };
    const int s0 = n * n, s1 = n;
    char nm[128];
    // loom's kernels as generated today: block (64,4,1)
    run("loom7 (64,4) today", r7, [&] { loom7<<<dim3((n + 2) / 4 / 64 + 1, (n - 2 + 3) / 4, (n + 1) / 4), dim3(64, 4)>>>(b, a, n, n, n, s0, s1, s0, s1); });
    run("loom27 (64,4) today", r27, [&] { loom27<<<dim3((n - 2 + 63) / 64, (n - 2 + 3) / 4, (n + 1) / 4), dim3(64, 4)>>>(b, a, n, n, n, s0, s1, s0, s1); });
    run("loom7 lb6", r7, [&] { loom7_lb6<<<dim3((n + 2) / 4 / 64 + 1, (n - 2 + 3) / 4, (n + 1) / 4), dim3(64, 4)>>>(b, a, n, n, n, s0, s1, s0, s1); });
    run("loom7 lb8", r7, [&] { loom7_lb8<<<dim3((n + 2) / 4 / 64 + 1, (n - 2 + 3) / 4, (n + 1) / 4), dim3(64, 4)>>>(b, a, n, n, n, s0, s1, s0, s1); });
    run("loom27 lb6", r27, [&] { loom27_lb6<<<dim3((n - 2 + 63) / 64, (n - 2 + 3) / 4, (n + 1) / 4), dim3(64, 4)>>>(b, a, n, n, n, s0, s1, s0, s1); });
    run("loom27 lb8", r27, [&] { loom27_lb8<<<dim3((n - 2 + 63) / 64, (n - 2 + 3) / 4, (n + 1) / 4), dim3(64, 4)>>>(b, a, n, n, n, s0, s1, s0, s1); });
    auto grid = [&](int bx, int by, int C) { return dim3((n / 4 + bx - 1) / bx, (n - 2 + by - 1) / by, (n - 2 + C - 1) / C); };
#define M7(C, U, A, BX, BY) snprintf(nm, sizeof nm, "march7 C%d u%d %s (%d,%d)", C, U, A ? "aligned" : "checked", BX, BY); \
    run(nm, r7, [&] { march7<C, U, A><<<grid(BX, BY, C), dim3(BX, BY)>>>(b, a, n, n, n, s0, s1, s0, s1); });
#define M27(C, U, A, BX, BY) snprintf(nm, sizeof nm, "march27 C%d u%d %s (%d,%d)", C, U, A ? "aligned" : "checked", BX, BY); \
    run(nm, r27, [&] { march27<C, U, A><<<grid(BX, BY, C), dim3(BX, BY)>>>(b, a, n, n, n, s0, s1, s0, s1); });
#define L7(C, MB) snprintf(nm, sizeof nm, "march7 C%d lb%d (64,4)", C, MB); \
    run(nm, r7, [&] { march7<C, 0, false, MB><<<grid(64, 4, C), dim3(64, 4)>>>(b, a, n, n, n, s0, s1, s0, s1); });
#define L27(C, MB) snprintf(nm, sizeof nm, "march27 C%d lb%d (64,4)", C, MB); \
    run(nm, r27, [&] { march27<C, 0, false, MB><<<grid(64, 4, C), dim3(64, 4)>>>(b, a, n, n, n, s0, s1, s0, s1); });
    L7(4, 6) L7(4, 8) L7(8, 6) L7(8, 8) L7(16, 8) L27(8, 4) L27(8, 5) L27(8, 6) L27(16, 4) L27(16, 6) L27(4, 6)
    M7(4, 0, false, 64, 4) M7(8, 0, false, 64, 4) M7(16, 0, false, 64, 4) M7(32, 0, false, 64, 4)
    M7(8, 2, false, 64, 4) M7(16, 2, false, 64, 4) M7(16, 1, false, 64, 4)
    M7(8, 0, false, 32, 4) M7(16, 0, false, 32, 4) M7(8, 0, false, 32, 8) M7(16, 0, false, 128, 2) M7(8, 0, false, 128, 1)
    M7(8, 0, true, 64, 4) M7(16, 0, true, 64, 4) M7(16, 0, true, 32, 4)
    M27(4, 0, false, 64, 4) M27(8, 0, false, 64, 4) M27(16, 0, false, 64, 4)
    M27(8, 2, false, 64, 4) M27(16, 2, false, 64, 4)
    M27(8, 0, false, 32, 4) M27(16, 0, false, 32, 4) M27(8, 0, false, 32, 8) M27(16, 0, false, 128, 2)
    M27(8, 0, true, 64, 4) M27(16, 0, true, 32, 4)
    return 0;
}
