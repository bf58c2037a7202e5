// Probe (not built by CMake; nvcc -O3 -arch=sm_90 -std=c++17 --extended-lambda -I templates
// -I bench/probe_kernels): loom's generated 3D 7-point f32 kernel (lanes of 4, 4 cells a thread)
// changed one thing at a time (probe_lane_edges_kernels.cuh: v_orig as generated on 2026-11-28,
// v_fast without the alignment test, v_edge / v_edge_fast the first and last group of a row in
// the lanes' path), against the hand-written s7_lane4_ns and s7_reg4.
// Findings: docs/performance.md, "Partial groups of lanes on an H200".
#include <cuda_runtime.h>
#include "probe_lane_edges_kernels.cuh"
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

static float g_copy_gbs = 0;

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

// ---------------- 3D 7-point: b = c0 a + c1 (six neighbours) ----------------
constexpr float C0 = 0.5f, C1 = 0.1f;

__global__ void s7_naive(const float* __restrict__ a, float* __restrict__ b, int n) {
    int x = blockIdx.x * blockDim.x + threadIdx.x + 1, y = blockIdx.y * blockDim.y + threadIdx.y + 1, z = blockIdx.z + 1;
    if (x >= n - 1 || y >= n - 1) return;
    size_t p = (size_t)n * n, i = z * p + (size_t)y * n + x;
    b[i] = C0 * a[i] + C1 * (a[i - 1] + a[i + 1] + a[i - n] + a[i + n] + a[i - p] + a[i + p]);
}
template <int LZ>
__global__ void s7_reg4(const float* __restrict__ a, float* __restrict__ b, int n) {
    int x = (blockIdx.x * blockDim.x + threadIdx.x) * 4, y = blockIdx.y * blockDim.y + threadIdx.y + 1;
    int z0 = blockIdx.z * LZ + 1, z1 = min(z0 + LZ, n - 1);
    if (x >= n || y >= n - 1) return;
    size_t p = (size_t)n * n, i = z0 * p + (size_t)y * n + x;
    auto ld = [&](size_t k) { return *reinterpret_cast<const float4*>(a + k); };
    float4 m = ld(i - p), c = ld(i);
    bool lo = x == 0, hi = x + 4 >= n;
#pragma unroll 2
    for (int z = z0; z < z1; ++z, i += p) {
        float4 u = ld(i + p), s = ld(i - n), nn = ld(i + n);
        float l = lo ? 0.f : a[i - 1], r = hi ? 0.f : a[i + 4];
        float4 o;
        o.x = C0 * c.x + C1 * (m.x + u.x + s.x + nn.x + l + c.y);
        o.y = C0 * c.y + C1 * (m.y + u.y + s.y + nn.y + c.x + c.z);
        o.z = C0 * c.z + C1 * (m.z + u.z + s.z + nn.z + c.y + c.w);
        o.w = C0 * c.w + C1 * (m.w + u.w + s.w + nn.w + c.z + r);
        if (!lo && !hi) *reinterpret_cast<float4*>(b + i) = o;
        else {
            float v[4] = {o.x, o.y, o.z, o.w};
            for (int k = 0; k < 4; ++k) if (x + k >= 1 && x + k < n - 1) b[i + k] = v[k];
        }
        m = c; c = u;
    }
}
template <int LZ>
__global__ void s7_lane4_ns(const float* __restrict__ a, float* __restrict__ b, int n) {
    int x = (blockIdx.x * blockDim.x + threadIdx.x) * 4, y = blockIdx.y * blockDim.y + threadIdx.y + 1;
    int z0 = blockIdx.z * LZ + 1, z1 = min(z0 + LZ, n - 1);
    if (x >= n || y >= n - 1) return;
    size_t p = (size_t)n * n;
    auto ld = [&](size_t k) { return *reinterpret_cast<const float4*>(a + k); };
    bool lo = x == 0, hi = x + 4 >= n;
#pragma unroll 4
    for (int z = z0; z < z1; ++z) {
        size_t i = z * p + (size_t)y * n + x;
        float4 m = ld(i - p), c = ld(i), u = ld(i + p), s = ld(i - n), nn = ld(i + n);
        float l = lo ? 0.f : a[i - 1], r = hi ? 0.f : a[i + 4];
        float4 o;
        o.x = C0 * c.x + C1 * (m.x + u.x + s.x + nn.x + l + c.y);
        o.y = C0 * c.y + C1 * (m.y + u.y + s.y + nn.y + c.x + c.z);
        o.z = C0 * c.z + C1 * (m.z + u.z + s.z + nn.z + c.y + c.w);
        o.w = C0 * c.w + C1 * (m.w + u.w + s.w + nn.w + c.z + r);
        if (!lo && !hi) *reinterpret_cast<float4*>(b + i) = o;
        else {
            float v[4] = {o.x, o.y, o.z, o.w};
            for (int k = 0; k < 4; ++k) if (x + k >= 1 && x + k < n - 1) b[i + k] = v[k];
        }
    }
}

int main() {
    const int n = 512; size_t cells = (size_t)n * n * n;
    float *a, *b, *r;
    CK(cudaMalloc(&a, cells * 4)); CK(cudaMalloc(&b, cells * 4)); CK(cudaMalloc(&r, cells * 4));
    fill<<<4096, 256>>>(a, cells, 7);
    { size_t bytes = 1ull << 31; void *x, *y; CK(cudaMalloc(&x, bytes)); CK(cudaMalloc(&y, bytes));
      float ms = time_ms([&] { cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice); }, 20);
      g_copy_gbs = 2.0 * bytes / (ms * 1e6); printf("copy 2 GiB: %.1f GB/s\n", g_copy_gbs); cudaFree(x); cudaFree(y); }
    auto g3 = [&](int bx, int by, int lz) { return dim3((n - 2 + bx - 1) / bx, (n - 2 + by - 1) / by, (n - 2 + lz - 1) / lz); };
    CK(cudaMemset(r, 0, cells * 4));
    s7_naive<<<g3(128, 2, 1), dim3(128, 2)>>>(a, r, n);
    CK(cudaDeviceSynchronize());
    auto run3 = [&](const char* nm, const std::function<void()>& f) {
        CK(cudaMemset(b, 0, cells * 4)); f(); CK(cudaDeviceSynchronize());
        std::vector<float> hx(cells), hy(cells);
        cudaMemcpy(hx.data(), r, cells * 4, cudaMemcpyDeviceToHost); cudaMemcpy(hy.data(), b, cells * 4, cudaMemcpyDeviceToHost);
        float err = 0; for (size_t k = 0; k < cells; ++k) err = std::max(err, std::fabs(hx[k] - hy[k]));
        float ms = time_ms(f);
        printf("%-34s %8.4f ms  %.3f of copy  err %.2e\n", nm, ms, 2.0 * cells * 4 / (ms * 1e6) / g_copy_gbs, err); fflush(stdout);
    };
    const int s0 = n * n, s1 = n;
    char nm[128];
    auto lg = [&](int bx, int by) { return dim3(((n + 2) / 4 + bx - 1) / bx, (n - 2 + by - 1) / by, (n + 1) / 4); };
#define V(K, BX, BY) snprintf(nm, sizeof nm, "%s (%d,%d)", #K, BX, BY); run3(nm, [&] { K<<<lg(BX, BY), dim3(BX, BY)>>>(b, a, n, n, n, s0, s1, s0, s1); });
#define VS(K, BX, BY, SM) { CK(cudaFuncSetAttribute(K, cudaFuncAttributeMaxDynamicSharedMemorySize, 200000)); snprintf(nm, sizeof nm, "%s (%d,%d) smem %d", #K, BX, BY, SM); run3(nm, [&] { K<<<lg(BX, BY), dim3(BX, BY), SM>>>(b, a, n, n, n, s0, s1, s0, s1); }); }
#define RNS(BX, BY, SM) { auto kk = s7_lane4_ns<4>; CK(cudaFuncSetAttribute(kk, cudaFuncAttributeMaxDynamicSharedMemorySize, 200000)); snprintf(nm, sizeof nm, "lane4_ns (%d,%d) smem %d", BX, BY, SM); run3(nm, [&] { kk<<<dim3((n / 4 + BX - 1) / BX, (n - 2 + BY - 1) / BY, (n - 2 + 3) / 4), dim3(BX, BY), SM>>>(a, b, n); }); }
    // 228 KiB per SM: smem S per block caps blocks at 228K / S
    for (int rep = 0; rep < 2; ++rep) { int sm = 0;
        VS(v_orig, 32, 4, sm) VS(v_orig, 64, 4, sm) VS(v_fast, 32, 4, sm) VS(v_edge, 32, 4, sm) VS(v_edge, 64, 4, sm) VS(v_edge_fast, 32, 4, sm) VS(v_edge_fast, 64, 4, sm) RNS(32, 4, sm)
    }
    return 0;
}
