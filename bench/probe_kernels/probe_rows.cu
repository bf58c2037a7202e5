// Probe (not built by CMake; nvcc -O3 -arch=sm_90 -std=c++17): which structure of a LayerNorm row
// kernel reaches copy bandwidth at 65536x768, 262144x128 and 8192x4096 f32? A warp per row,
// with the row re-read for each pass (from L1/L2) or kept in registers, scalar or float4 loads;
// and a block per row with the row in registers.
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
__device__ __forceinline__ float warp_sum(float v) {
#pragma unroll
    for (int d = 16; d >= 1; d >>= 1) v += __shfl_xor_sync(0xffffffffu, v, d);
    return v;
}

// A warp per row, each pass re-reading the row (lane k, k + 32, ...), as loom's loops would.
template <int K>
__global__ void ln_warp_reread(const float* __restrict__ x, float* __restrict__ y, const float* __restrict__ w,
                               const float* __restrict__ b, int rows, float eps) {
    const int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= rows) return;
    const float* xr = x + (size_t)row * K;
    float s = 0;
    for (int k = lane; k < K; k += 32) s += xr[k];
    const float mean = warp_sum(s) / K;
    float q = 0;
    for (int k = lane; k < K; k += 32) q += (xr[k] - mean) * (xr[k] - mean);
    const float rstd = rsqrtf(warp_sum(q) / K + eps);
    for (int k = lane; k < K; k += 32) y[(size_t)row * K + k] = (xr[k] - mean) * rstd * w[k] + b[k];
}

// A warp (T = 32) or a block (T threads) per row; the row in registers, W lanes per load.
template <int K, int T, int W>
__global__ void ln_regs(const float* __restrict__ x, float* __restrict__ y, const float* __restrict__ w,
                        const float* __restrict__ b, int rows, float eps) {
    constexpr int N = K / (T * W); // chunks per thread
    static_assert(K % (T * W) == 0);
    const int per_block = blockDim.x / T;
    const int row = blockIdx.x * per_block + threadIdx.x / T, t = threadIdx.x % T;
    __shared__ float part[2][32];
    if (T == 32 && row >= rows) return;
    const bool live = row < rows;
    const float* xr = x + (size_t)(live ? row : 0) * K;
    float v[N][W];
#pragma unroll
    for (int c = 0; c < N; ++c) {
        const int k = W * (t + T * c);
        if (W == 4) {
            float4 f = __ldg(reinterpret_cast<const float4*>(xr + k));
            v[c][0] = f.x; v[c][1 % W] = f.y; v[c][2 % W] = f.z; v[c][3 % W] = f.w;
        } else if (W == 2) {
            float2 f = __ldg(reinterpret_cast<const float2*>(xr + k));
            v[c][0] = f.x; v[c][1 % W] = f.y;
        } else {
            v[c][0] = xr[k];
        }
    }
    auto reduce = [&](float s, int slot) {
        s = warp_sum(s);
        if (T == 32) return s;
        if (t % 32 == 0) part[slot][threadIdx.x / 32] = s;
        __syncthreads();
        float r = 0;
        for (int i = 0; i < T / 32; ++i) r += part[slot][(threadIdx.x / T) * (T / 32) + i];
        return r;
    };
    float s = 0;
#pragma unroll
    for (int c = 0; c < N; ++c)
#pragma unroll
        for (int i = 0; i < W; ++i) s += v[c][i];
    const float mean = reduce(s, 0) / K;
    float q = 0;
#pragma unroll
    for (int c = 0; c < N; ++c)
#pragma unroll
        for (int i = 0; i < W; ++i) q += (v[c][i] - mean) * (v[c][i] - mean);
    const float rstd = rsqrtf(reduce(q, 1) / K + eps);
    if (!live) return;
#pragma unroll
    for (int c = 0; c < N; ++c) {
        const int k = W * (t + T * c);
        float o[W];
#pragma unroll
        for (int i = 0; i < W; ++i) o[i] = (v[c][i] - mean) * rstd * __ldg(w + k + i) + __ldg(b + k + i);
        float* yr = y + (size_t)row * K + k;
        if (W == 4) *reinterpret_cast<float4*>(yr) = make_float4(o[0], o[1 % W], o[2 % W], o[3 % W]);
        else if (W == 2) *reinterpret_cast<float2*>(yr) = make_float2(o[0], o[1 % W]);
        else yr[0] = o[0];
    }
}

// A block of T per row, the row in shared memory as loom's reduce_in_block keeps it: filled by
// cp.async of V elements (4 or 16 bytes), then each pass reads every T-th element; reductions
// as loom's (warp shuffles, the warps' partials, a second round in the first warp, two barriers).
template <int K, int T, int V>
__global__ void __launch_bounds__(T) ln_shared(const float* __restrict__ x, float* __restrict__ y,
                                               const float* __restrict__ w, const float* __restrict__ b, float eps) {
    __shared__ __align__(16) float row[K];
    __shared__ float part[2][T / 32 + 1];
    const int t = threadIdx.x;
    const float* xr = x + (size_t)blockIdx.x * K;
    if (V == 4) {
        for (int i = t; i < K / 4; i += T) {
            const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(row + 4 * i));
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(a), "l"(xr + 4 * i) : "memory");
        }
    } else {
        for (int k = t; k < K; k += T) {
            const unsigned a = static_cast<unsigned>(__cvta_generic_to_shared(row + k));
            asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(a), "l"(xr + k) : "memory");
        }
    }
    asm volatile("cp.async.wait_all;\n" ::: "memory");
    __syncthreads();
    auto reduce = [&](float s, int slot) {
        s = warp_sum(s);
        if (t % 32 == 0) part[slot][t / 32] = s;
        __syncthreads();
        if (t < 32) {
            float p = t < T / 32 ? part[slot][t] : 0.f;
            p = warp_sum(p);
            if (t == 0) part[slot][T / 32] = p;
        }
        __syncthreads();
        return part[slot][T / 32];
    };
    float s = 0;
#pragma unroll
    for (int k = t; k < K; k += T) s += row[k];
    const float mean = reduce(s, 0) / K;
    float q = 0;
#pragma unroll
    for (int k = t; k < K; k += T) q += (row[k] - mean) * (row[k] - mean);
    const float rstd = rsqrtf(reduce(q, 1) / K + eps);
    float* yr = y + (size_t)blockIdx.x * K;
#pragma unroll
    for (int k = t; k < K; k += T) yr[k] = (row[k] - mean) * rstd * w[k] + b[k];
}

int main() {
    float copy_gbs;
    {
        size_t bytes = 1ull << 31; void *x, *y; CK(cudaMalloc(&x, bytes)); CK(cudaMalloc(&y, bytes));
        float ms = time_ms([&] { cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice); }, 20);
        copy_gbs = 2.0 * bytes / (ms * 1e6);
        printf("copy 2 GiB: %.1f GB/s\n", copy_gbs);
        cudaFree(x); cudaFree(y);
    }
    const size_t most = 65536ull * 768;
    float *x, *y, *w, *b;
    CK(cudaMalloc(&x, most * 4)); CK(cudaMalloc(&y, most * 4)); CK(cudaMalloc(&w, 4096 * 4)); CK(cudaMalloc(&b, 4096 * 4));
    fill<<<4096, 256>>>(x, most, 3); fill<<<16, 256>>>(w, 4096, 4); fill<<<16, 256>>>(b, 4096, 5);
    std::vector<float> hx(most), hy(most), hw(4096), hb(4096);
    CK(cudaMemcpy(hx.data(), x, most * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hw.data(), w, 4096 * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(hb.data(), b, 4096 * 4, cudaMemcpyDeviceToHost));
    auto run = [&](const char* name, int rows, int K, const std::function<void()>& f) {
        CK(cudaMemset(y, 0xff, most * 4)); f(); CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(hy.data(), y, (size_t)rows * K * 4, cudaMemcpyDeviceToHost));
        double err = 0;
        for (int r = 0; r < rows; r += 97) {
            const float* xr = &hx[(size_t)r * K];
            double s = 0, q = 0;
            for (int k = 0; k < K; ++k) s += xr[k];
            double mu = s / K;
            for (int k = 0; k < K; ++k) q += (xr[k] - mu) * (xr[k] - mu);
            double rs = 1 / std::sqrt(q / K + 1e-5);
            for (int k = 0; k < K; ++k) {
                double want = (xr[k] - mu) * rs * hw[k] + hb[k], got = hy[(size_t)r * K + k];
                err = std::isnan(got) ? INFINITY : std::max(err, std::fabs(got - want));
            }
        }
        float ms = time_ms(f);
        printf("%-44s %8.4f ms  %.3f of copy  err %.1e\n", name, ms, 2.0 * rows * K * 4 / (ms * 1e6) / copy_gbs, err);
        fflush(stdout);
    };
    char nm[128];
#define RR(K, ROWS, BLOCK) snprintf(nm, sizeof nm, "%dx%d warp reread block %d", ROWS, K, BLOCK); \
    run(nm, ROWS, K, [&] { ln_warp_reread<K><<<(ROWS + BLOCK / 32 - 1) / (BLOCK / 32), BLOCK>>>(x, y, w, b, ROWS, 1e-5f); });
#define RG(K, ROWS, T, W, BLOCK) snprintf(nm, sizeof nm, "%dx%d regs T%d W%d block %d", ROWS, K, T, W, BLOCK); \
    run(nm, ROWS, K, [&] { ln_regs<K, T, W><<<(ROWS + BLOCK / T - 1) / (BLOCK / T), BLOCK>>>(x, y, w, b, ROWS, 1e-5f); });
    RR(768, 65536, 128) RR(768, 65536, 256) RG(768, 65536, 32, 1, 256) RG(768, 65536, 32, 4, 128) RG(768, 65536, 32, 4, 256)
    RG(768, 65536, 32, 2, 256) RG(768, 65536, 64, 4, 256) RG(768, 65536, 192, 4, 192) RG(768, 65536, 96, 4, 192)
    RR(128, 262144, 256) RG(128, 262144, 32, 4, 128) RG(128, 262144, 32, 4, 256) RG(128, 262144, 32, 4, 512) RG(128, 262144, 32, 1, 256)
    RR(4096, 8192, 256) RG(4096, 8192, 32, 4, 256) RG(4096, 8192, 256, 4, 256) RG(4096, 8192, 512, 4, 512) RG(4096, 8192, 1024, 4, 1024)
    RG(4096, 8192, 128, 4, 256) RG(4096, 8192, 128, 4, 128)
#define SH(K, ROWS, T, V) snprintf(nm, sizeof nm, "%dx%d shared T%d V%d", ROWS, K, T, V); \
    run(nm, ROWS, K, [&] { ln_shared<K, T, V><<<ROWS, T>>>(x, y, w, b, 1e-5f); });
    SH(4096, 8192, 256, 1) SH(4096, 8192, 256, 4) SH(4096, 8192, 128, 4) SH(4096, 8192, 512, 4)
    SH(2048, 16384, 256, 1) SH(2048, 16384, 256, 4) SH(2048, 16384, 128, 4)
    return 0;
}
