// Probe (not built by CMake): what separates loom's 27-point box f32 with rolling lanes (0.56 of
// copy on an H200) from the hand-written s27_lane4 (0.80)? Compares, on 512^3, in one run:
// loom's kernel as printed (gen27.cuh, aligned lanes), the same with each row's neighbours
// predicated instead of a whole/partial branch per row (gen27p.cuh), loom's kernel after that
// change with and without its branch per row on z_rows_whole (gen27n.cuh, gen27nb.cuh),
// hand-written rolled plane loops with loom's 27 distinct weights and its order of additions
// (unrolled 1, 2 or fully), and s27_lane4 (symmetric weights, shared sums). The edited kernels
// are made from the printed ones first:
//   cd bench/probe_kernels && python3 edit_rows.py predicate gen27.cuh /tmp/gen27p.cuh gen27p &&
//     python3 edit_rows.py nobranch gen27n.cuh /tmp/gen27nb.cuh gen27nb && cd -
//   nvcc -O3 -arch=sm_90 -std=c++17 -I templates -I bench/probe_kernels -I /tmp bench/probe_kernels/probe_box27_gap.cu
#define LOOM_LANES_ALIGNED 1
#include "loom/lanes.cuh"
#include "gen27.cuh"
#include "gen27p.cuh"
#include "gen27n.cuh"
#include "gen27nb.cuh"
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

static float time_ms(const std::function<void()>& f, int reps = 30) {
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

// loom's weights: src[{a, b, c}] * 0.01 * (9 (a + 1) + 3 (b + 1) + (c + 1) + 3)
__device__ __forceinline__ constexpr float w(int a, int b, int c) { return 0.01f * float(9 * (a + 1) + 3 * (b + 1) + (c + 1) + 3); }

__device__ __forceinline__ void row6(const float* __restrict__ p, bool lo, bool hi, float v[6]) {
    float4 c = __ldg(reinterpret_cast<const float4*>(p));
    v[0] = lo ? 0.f : p[-1]; v[1] = c.x; v[2] = c.y; v[3] = c.z; v[4] = c.w; v[5] = hi ? 0.f : p[4];
}

// Plane q's part of the sum of the cell at q - A (A = -1, 0, 1), in loom's order.
template <int A>
__device__ __forceinline__ float part(const float* r0, const float* r1, const float* r2, int k) {
    float s = w(A, -1, -1) * r0[k] + w(A, -1, 0) * r0[k + 1] + w(A, -1, 1) * r0[k + 2];
    s = s + w(A, 0, -1) * r1[k] + w(A, 0, 0) * r1[k + 1] + w(A, 0, 1) * r1[k + 2];
    return s + w(A, 1, -1) * r2[k] + w(A, 1, 0) * r2[k + 1] + w(A, 1, 1) * r2[k + 2];
}

// Rolled: plane q finishes cell q - 1, continues cell q, starts cell q + 1.
template <int LZ, int U>
__global__ void rolled(const float* __restrict__ a, float* __restrict__ b, int n) {
    int x = (blockIdx.x * blockDim.x + threadIdx.x) * 4, y = blockIdx.y * blockDim.y + threadIdx.y + 1;
    int z0 = blockIdx.z * LZ + 1, z1 = min(z0 + LZ, n - 1);
    if (x >= n || y >= n - 1 || z0 >= n - 1) return;
    size_t p = (size_t)n * n;
    bool lo = x == 0, hi = x + 4 >= n;
    float cur[4], prev[4];
    size_t i = (size_t)(z0 - 1) * p + (size_t)y * n + x;
    auto store = [&](size_t at, const float o[4]) {
        if (!lo && !hi) *reinterpret_cast<float4*>(b + at) = make_float4(o[0], o[1], o[2], o[3]);
        else for (int k = 0; k < 4; ++k) if (x + k >= 1 && x + k < n - 1) b[at + k] = o[k];
    };
    {   // plane z0 - 1 starts cell z0
        float r0[6], r1[6], r2[6];
        row6(a + i - n, lo, hi, r0); row6(a + i, lo, hi, r1); row6(a + i + n, lo, hi, r2);
#pragma unroll
        for (int k = 0; k < 4; ++k) cur[k] = part<-1>(r0, r1, r2, k);
        i += p;
    }
    {   // plane z0: cell z0 goes on, cell z0 + 1 starts
        float r0[6], r1[6], r2[6];
        row6(a + i - n, lo, hi, r0); row6(a + i, lo, hi, r1); row6(a + i + n, lo, hi, r2);
#pragma unroll
        for (int k = 0; k < 4; ++k) { prev[k] = cur[k] + part<0>(r0, r1, r2, k); cur[k] = part<-1>(r0, r1, r2, k); }
        i += p;
    }
#pragma unroll U
    for (int q = z0 + 1; q <= z1; ++q, i += p) {
        float r0[6], r1[6], r2[6], o[4];
        row6(a + i - n, lo, hi, r0); row6(a + i, lo, hi, r1); row6(a + i + n, lo, hi, r2);
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            o[k] = prev[k] + part<1>(r0, r1, r2, k);
            prev[k] = cur[k] + part<0>(r0, r1, r2, k);
            cur[k] = part<-1>(r0, r1, r2, k);
        }
        store(i - p, o);
    }
}

// Fixed trip count (whole groups only, as loom's full path): fully unrollable.
template <int LZ>
__global__ void rolled_fixed(const float* __restrict__ a, float* __restrict__ b, int n) {
    int x = (blockIdx.x * blockDim.x + threadIdx.x) * 4, y = blockIdx.y * blockDim.y + threadIdx.y + 1;
    int z0 = blockIdx.z * LZ + 1;
    if (x >= n || y >= n - 1 || z0 + LZ > n - 1) return;
    size_t p = (size_t)n * n;
    bool lo = x == 0, hi = x + 4 >= n;
    float cur[4] = {0, 0, 0, 0}, prev[4] = {0, 0, 0, 0};
    size_t i = (size_t)(z0 - 1) * p + (size_t)y * n + x;
#pragma unroll
    for (int q = 0; q < LZ + 2; ++q, i += p) {
        float r0[6], r1[6], r2[6], o[4];
        row6(a + i - n, lo, hi, r0); row6(a + i, lo, hi, r1); row6(a + i + n, lo, hi, r2);
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            o[k] = prev[k] + part<1>(r0, r1, r2, k);
            prev[k] = cur[k] + part<0>(r0, r1, r2, k);
            cur[k] = part<-1>(r0, r1, r2, k);
        }
        if (q >= 2) {
            if (!lo && !hi) *reinterpret_cast<float4*>(b + i - p) = make_float4(o[0], o[1], o[2], o[3]);
            else for (int k = 0; k < 4; ++k) if (x + k >= 1 && x + k < n - 1) b[i - p + k] = o[k];
        }
    }
}

// s27_lane4 of probe_stencil_structures.cu (symmetric weights: its own reference)
__device__ inline void row6s(const float* __restrict__ a, size_t i, bool lo, bool hi, float v[6]) {
    float4 c = *reinterpret_cast<const float4*>(a + i);
    v[0] = lo ? 0.f : a[i - 1]; v[1] = c.x; v[2] = c.y; v[3] = c.z; v[4] = c.w; v[5] = hi ? 0.f : a[i + 4];
}
template <int LZ>
__global__ void s27_lane4(const float* __restrict__ a, float* __restrict__ b, int n) {
    int x = (blockIdx.x * blockDim.x + threadIdx.x) * 4, y = blockIdx.y * blockDim.y + threadIdx.y + 1;
    int z0 = blockIdx.z * LZ + 1, z1 = min(z0 + LZ, n - 1);
    if (x >= n || y >= n - 1) return;
    size_t p = (size_t)n * n;
    bool lo = x == 0, hi = x + 4 >= n;
    float accm[4] = {0, 0, 0, 0}, acc0[4] = {0, 0, 0, 0};
    size_t i = (size_t)(z0 - 1) * p + (size_t)y * n + x;
#pragma unroll 2
    for (int q = z0 - 1; q <= z1; ++q, i += p) {
        float r0[6], r1[6], r2[6], side[4], mid[4], o[4];
        row6s(a, i - n, lo, hi, r0); row6s(a, i, lo, hi, r1); row6s(a, i + n, lo, hi, r2);
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            float ctr = r1[k + 1], face = r1[k] + r1[k + 2] + r0[k + 1] + r2[k + 1];
            float corner = r0[k] + r0[k + 2] + r2[k] + r2[k + 2];
            side[k] = 0.05f * ctr + 0.02f * face + 0.01f * corner;
            mid[k] = -0.5f * ctr + 0.05f * face + 0.02f * corner;
        }
#pragma unroll
        for (int k = 0; k < 4; ++k) { o[k] = accm[k] + side[k]; accm[k] = acc0[k] + mid[k]; acc0[k] = side[k]; }
        if (q - 1 >= z0) {
            if (!lo && !hi) *reinterpret_cast<float4*>(b + i - p) = make_float4(o[0], o[1], o[2], o[3]);
            else for (int k = 0; k < 4; ++k) if (x + k >= 1 && x + k < n - 1) b[i - p + k] = o[k];
        }
    }
}

int main() {
    const int n = 512;
    const size_t cells = (size_t)n * n * n;
    float *a, *b, *r;
    CK(cudaMalloc(&a, cells * 4)); CK(cudaMalloc(&b, cells * 4)); CK(cudaMalloc(&r, cells * 4));
    fill<<<4096, 256>>>(a, cells, 7);
    float copy_gbs;
    {
        size_t bytes = 1ull << 31; void *x, *y; CK(cudaMalloc(&x, bytes)); CK(cudaMalloc(&y, bytes));
        float ms = time_ms([&] { cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice); }, 20);
        copy_gbs = 2.0 * bytes / (ms * 1e6);
        printf("copy 2 GiB: %.1f GB/s\n", copy_gbs);
        cudaFree(x); cudaFree(y);
    }
    std::vector<float> hr(cells), hb(cells);
    auto gen_launch = [&](auto kernel, int bx, int by, int bz, float* out) {
        dim3 block(bx, by, bz), grid(((n + 2) / 4 + bx - 1) / bx, (n - 2 + by - 1) / by, ((n + 5) / 8 + bz - 1) / bz);
        kernel<<<grid, block>>>(out, a, n, n, n, n * n, n, n * n, n);
    };
    CK(cudaMemset(r, 0, cells * 4));
    gen_launch(gen27, 32, 4, 1, r);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(hr.data(), r, cells * 4, cudaMemcpyDeviceToHost));
    auto run = [&](const char* name, bool check, const std::function<void()>& f) {
        CK(cudaMemset(b, 0, cells * 4)); f(); CK(cudaDeviceSynchronize());
        float err = 0;
        if (check) {
            CK(cudaMemcpy(hb.data(), b, cells * 4, cudaMemcpyDeviceToHost));
            for (size_t k = 0; k < cells; ++k) err = std::max(err, std::fabs(hr[k] - hb[k]));
        }
        float ms = time_ms(f);
        printf("%-40s %8.4f ms  %.3f of copy  %s %.2e\n", name, ms, 2.0 * cells * 4 / (ms * 1e6) / copy_gbs,
               check ? "err" : "(own weights)", err);
        fflush(stdout);
    };
    run("loom gen (32,4,1) 8 cells", true, [&] { gen_launch(gen27, 32, 4, 1, b); });
    run("loom gen (64,4,1)", true, [&] { gen_launch(gen27, 64, 4, 1, b); });
    run("loom gen predicated edges (32,4,1)", true, [&] { gen_launch(gen27p, 32, 4, 1, b); });
    run("loom 45cba0a (32,4,1)", true, [&] { gen_launch(gen27n, 32, 4, 1, b); });
    run("loom 45cba0a without rows' branch (32,4,1)", true, [&] { gen_launch(gen27nb, 32, 4, 1, b); });
    run("loom gen predicated edges (64,4,1)", true, [&] { gen_launch(gen27p, 64, 4, 1, b); });
    run("loom gen predicated edges (32,8,1)", true, [&] { gen_launch(gen27p, 32, 8, 1, b); });
    auto hand = [&](auto kernel, int lz, int bx, int by) {
        return [=] { kernel<<<dim3((n / 4 + bx - 1) / bx, (n - 2 + by - 1) / by, (n - 2 + lz - 1) / lz), dim3(bx, by)>>>(a, b, n); };
    };
    char nm[96];
#define ROLLED(LZ, U, BX, BY) snprintf(nm, sizeof nm, "rolled lz%d unroll %d (%d,%d)", LZ, U, BX, BY); run(nm, true, hand(rolled<LZ, U>, LZ, BX, BY));
    ROLLED(8, 1, 32, 4) ROLLED(8, 2, 32, 4) ROLLED(8, 8, 32, 4) ROLLED(16, 1, 32, 4) ROLLED(16, 2, 32, 4) ROLLED(16, 2, 64, 4) ROLLED(32, 2, 32, 4)
    // fixed trip count: only groups of LZ that fit (510 = 2 * 3 * 5 * 17: lz 15 or 17 fit; 8 leaves the last group out)
#define FIXED(LZ, BX, BY) snprintf(nm, sizeof nm, "rolled fixed lz%d full unroll (%d,%d)", LZ, BX, BY); run(nm, LZ == 15 || LZ == 17 || LZ == 10, hand(rolled_fixed<LZ>, LZ, BX, BY));
    FIXED(10, 32, 4) FIXED(15, 32, 4) FIXED(8, 32, 4)
#define S27(LZ, BX, BY) snprintf(nm, sizeof nm, "s27_lane4 lz%d (%d,%d)", LZ, BX, BY); run(nm, false, hand(s27_lane4<LZ>, LZ, BX, BY));
    S27(8, 32, 4) S27(16, 32, 4)
    return 0;
}
