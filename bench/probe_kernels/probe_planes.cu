// Probe (not built by CMake; nvcc -O3 -arch=sm_90 -std=c++17): 2.5D planes through shared
// memory, filled by cp.async D planes ahead (one barrier per plane), a block marching C planes
// along the slowest axis; lanes of 4 along the unit-stride axis. 3D 7- and 27-point f32, 512^3.
#include <cuda_runtime.h>
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

__device__ __forceinline__ void cp16(void* smem, const void* g) {
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(g));
}
__device__ __forceinline__ void cp4(void* smem, const void* g) {
    unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(s), "l"(g));
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void wait_group() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

// Block (BX, BY) threads: a tile of 4*BX along z by BY along y, marching C planes along x.
template <int BX, int BY, int C, int P, bool BOX>
__global__ void __launch_bounds__(BX * BY) planes(float* __restrict__ dst, const float* __restrict__ src, int n) {
    static_assert(P >= 1);
    constexpr int TZ = 4 * BX, PITCH = TZ + 8, ROWS = BY + 2, D = P + 3; // P planes in flight
    __shared__ __align__(16) float sm[D][ROWS][PITCH]; // col c <-> z = z0 - 4 + c
    const int tid = threadIdx.y * BX + threadIdx.x;
    const int z0 = blockIdx.x * TZ, y0 = blockIdx.y * BY + 1, xb = blockIdx.z * C + 1;
    const int xe = min(xb + C, n - 1);
    const size_t p = (size_t)n * n;
    auto issue = [&](int q) { // plane q into slot q % D (q may be xe: past the last, still < n)
        if (q >= n) { commit(); return; }
        float(*s)[PITCH] = sm[q % D];
        const float* base = src + q * p;
        for (int i = tid; i < ROWS * BX; i += BX * BY) {
            const int r = i / BX, k = i % BX, y = y0 - 1 + r;
            if (y < n) cp16(&s[r][4 + 4 * k], base + (size_t)y * n + z0 + 4 * k);
        }
        for (int i = tid; i < 2 * ROWS; i += BX * BY) {
            const int r = i >> 1, y = y0 - 1 + r, z = (i & 1) ? z0 + TZ : z0 - 1;
            if (y < n && z >= 0 && z < n) cp4(&s[r][(i & 1) ? 4 + TZ : 3], base + (size_t)y * n + z);
        }
        commit();
    };
    for (int q = xb - 1; q <= xb + P; ++q) issue(q);
    const int y = y0 + threadIdx.y, z = z0 + 4 * threadIdx.x;
    const bool row_in = y < n - 1;
    for (int x = xb; x < xe; ++x) {
        wait_group<P - 1>(); // plane x + 1 has landed (x + 2 .. x + P may be in flight)
        __syncthreads();     // for every thread's copies; and all are done with plane x - 2's slot
        issue(x + P + 1);
        float o[4];
        const int r = threadIdx.y + 1, c = 4 + 4 * threadIdx.x;
        if (!BOX) {
            float(*m)[PITCH] = sm[(x - 1) % D];
            float(*k)[PITCH] = sm[x % D];
            float(*u)[PITCH] = sm[(x + 1) % D];
            float4 cm = *reinterpret_cast<float4*>(&m[r][c]), cc = *reinterpret_cast<float4*>(&k[r][c]),
                   cu = *reinterpret_cast<float4*>(&u[r][c]), cs = *reinterpret_cast<float4*>(&k[r - 1][c]),
                   cn = *reinterpret_cast<float4*>(&k[r + 1][c]);
            float l = k[r][c - 1], rr = k[r][c + 4];
            o[0] = 0.5f * cc.x + 0.1f * (cu.x + cm.x + cn.x + cs.x + cc.y + l);
            o[1] = 0.5f * cc.y + 0.1f * (cu.y + cm.y + cn.y + cs.y + cc.z + cc.x);
            o[2] = 0.5f * cc.z + 0.1f * (cu.z + cm.z + cn.z + cs.z + cc.w + cc.y);
            o[3] = 0.5f * cc.w + 0.1f * (cu.w + cm.w + cn.w + cs.w + rr + cc.z);
        } else {
            for (int k = 0; k < 4; ++k) o[k] = 0;
#pragma unroll
            for (int a = -1; a <= 1; ++a) {
                float(*pl)[PITCH] = sm[(x + a) % D];
#pragma unroll
                for (int b = -1; b <= 1; ++b) {
                    float4 v = *reinterpret_cast<float4*>(&pl[r + b][c]);
                    float row[6] = {pl[r + b][c - 1], v.x, v.y, v.z, v.w, pl[r + b][c + 4]};
#pragma unroll
                    for (int k = 0; k < 4; ++k)
#pragma unroll
                        for (int cc = -1; cc <= 1; ++cc) o[k] += W27(a, b, cc) * row[k + 1 + cc];
                }
            }
        }
        if (row_in && z < n) {
            float* d = dst + x * p + (size_t)y * n + z;
            if (z >= 1 && z + 4 <= n - 1) *reinterpret_cast<float4*>(d) = make_float4(o[0], o[1], o[2], o[3]);
            else for (int k = 0; k < 4; ++k) if (z + k >= 1 && z + k < n - 1) d[k] = o[k];
        }
    }
}

int main() {
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
        float ms = time_ms(f);
        printf("%-40s %8.4f ms  %.3f of copy  err %.1e\n", name, ms, 2.0 * cells * 4 / (ms * 1e6) / copy_gbs, err);
        fflush(stdout);
    };
    char nm[128];
#define P(BX, BY, C, D, BOX) snprintf(nm, sizeof nm, "planes %s (%d,%d) C%d P%d", BOX ? "27" : "7", BX, BY, C, D); \
    run(nm, BOX ? r27 : r7, [&] { planes<BX, BY, C, D, BOX><<<dim3(n / (4 * BX), (n - 2 + BY - 1) / BY, (n - 2 + C - 1) / C), dim3(BX, BY)>>>(b, a, n); });
    P(32, 8, 32, 1, false) P(32, 8, 32, 2, false) P(32, 8, 64, 2, false) P(32, 8, 32, 3, false) P(32, 4, 32, 2, false)
    P(64, 4, 32, 2, false) P(16, 16, 32, 2, false) P(32, 8, 128, 2, false)
    P(32, 8, 32, 1, true) P(32, 8, 32, 2, true) P(32, 8, 64, 2, true) P(32, 4, 32, 2, true)
    P(64, 4, 32, 2, true) P(16, 16, 32, 2, true)
    return 0;
}
