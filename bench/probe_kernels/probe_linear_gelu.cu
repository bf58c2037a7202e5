// Probe for issue 15's deliverable 4 (fused linear + bias + GELU, not built in loom yet): how fast
// is a tiled GEMM on mma.sync m16n8k16 (float16 operands, float32 sums) with cp.async pipelines
// and the epilogue fused, against torch on the same H200 (bench/linear_gelu_torch.py: F.linear
// 0.198 ms, F.linear + F.gelu 0.279 ms for x (16384, 1024), W (4096, 1024), float16)?
//
// Block tile 128 x BN, K in steps of BK through STAGES shared buffers filled by cp.async 16-byte
// copies (rows padded by 8 halves: the 8 rows an ldmatrix reads fall into distinct banks); 8
// warps, 2 x 4, each a 64 x 8 NT tile as 4 x NT m16n8 accumulators (NT 4: BN 128, two blocks an
// SM; NT 8: BN 256, one); A fragments by ldmatrix.x4 from
// x's [m][k] rows, B fragments by ldmatrix.x4 from W's [n][k] rows (the column-major B operand,
// as loom's staged weights). Epilogue: + bias, GELU (erf form, or the tanh form on tanh.approx), rounded to float16, stored as
// half2. Checked on 4096 sampled outputs against a double loop over the float16 inputs.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 bench/probe_kernels/probe_linear_gelu.cu -o /tmp/plg && /tmp/plg
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        cudaError_t err_ = (x);                                                                    \
        if (err_ != cudaSuccess) {                                                                 \
            std::printf("%s: %s\n", #x, cudaGetErrorString(err_));                                 \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

constexpr int BM = 128, WARPS_N = 4;

__device__ __forceinline__ unsigned smem(const void* p) { return unsigned(__cvta_generic_to_shared(p)); }
__device__ __forceinline__ void cp16(void* s, const void* g) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem(s)), "l"(g));
}
__device__ __forceinline__ void ldsm4(unsigned (&r)[4], const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem(p)));
}
__device__ __forceinline__ void mma(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ float gelu(float v) { return 0.5f * v * (1.0f + erff(v * 0.70710678f)); }
// The tanh form with tanh.approx.f32 (what fast_math would print): 0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3))).
__device__ __forceinline__ float gelu_tanh(float v) {
    float t;
    asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(0.7978845608f * (v + 0.044715f * v * v * v)));
    return 0.5f * v * (1.0f + t);
}

template <int BK, int STAGES, int EPILOGUE, int NT>
__global__ void __launch_bounds__(256, NT == 4 ? 2 : 1) linear_gelu(const half* __restrict__ x, const half* __restrict__ w,
                                                   const half* __restrict__ bias, half* __restrict__ y, int M,
                                                   int N, int K) {
    constexpr int BN = WARPS_N * NT * 8, LD = BK + 8;
    constexpr int CHUNKS_A = BM * BK / 8 / 256, CHUNKS_B = BN * BK / 8 / 256; // 16-byte copies per thread
    extern __shared__ __align__(16) half sm[];
    half* as = sm;
    half* bs = sm + STAGES * BM * LD;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int wm = warp / WARPS_N, wn = warp % WARPS_N;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    auto load = [&](int stage, int k0) {
#pragma unroll
        for (int i = 0; i < CHUNKS_A; ++i) {
            const int c = tid + i * 256, row = c / (BK / 8), col = (c % (BK / 8)) * 8;
            cp16(as + (stage * BM + row) * LD + col, x + size_t(m0 + row) * K + k0 + col);
        }
#pragma unroll
        for (int i = 0; i < CHUNKS_B; ++i) {
            const int c = tid + i * 256, row = c / (BK / 8), col = (c % (BK / 8)) * 8;
            cp16(bs + (stage * BN + row) * LD + col, w + size_t(n0 + row) * K + k0 + col);
        }
    };
    float acc[4][NT][4] = {};
    const int steps = K / BK;
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < steps) load(s, s * BK);
        asm volatile("cp.async.commit_group;\n");
    }
    for (int kt = 0; kt < steps; ++kt) {
        asm volatile("cp.async.wait_group %0;\n" ::"n"(STAGES - 2));
        __syncthreads(); // stage kt is in; every warp is done with stage kt - 1, refilled below
        if (kt + STAGES - 1 < steps) load((kt + STAGES - 1) % STAGES, (kt + STAGES - 1) * BK);
        asm volatile("cp.async.commit_group;\n");
        const half* a = as + (kt % STAGES) * BM * LD;
        const half* b = bs + (kt % STAGES) * BN * LD;
#pragma unroll
        for (int kk = 0; kk < BK; kk += 16) {
            unsigned af[4][4], bf[NT][2];
#pragma unroll
            for (int mt = 0; mt < 4; ++mt) ldsm4(af[mt], a + (wm * 64 + mt * 16 + (lane & 15)) * LD + kk + (lane >> 4) * 8);
#pragma unroll
            for (int np = 0; np < NT / 2; ++np) {
                unsigned r[4];
                ldsm4(r, b + (wn * NT * 8 + np * 16 + (lane & 7) + ((lane >> 4) << 3)) * LD + kk + ((lane >> 3) & 1) * 8);
                bf[2 * np][0] = r[0];
                bf[2 * np][1] = r[1];
                bf[2 * np + 1][0] = r[2];
                bf[2 * np + 1][1] = r[3];
            }
#pragma unroll
            for (int mt = 0; mt < 4; ++mt)
#pragma unroll
                for (int nt = 0; nt < NT; ++nt) mma(acc[mt][nt], af[mt], bf[nt][0], bf[nt][1]);
        }
    }
    const int g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int nt = 0; nt < NT; ++nt) {
        const int col = n0 + wn * NT * 8 + nt * 8 + 2 * t;
        const float b0 = __half2float(bias[col]), b1 = __half2float(bias[col + 1]);
#pragma unroll
        for (int mt = 0; mt < 4; ++mt) {
            const int row = m0 + wm * 64 + mt * 16 + g;
            float v[4] = {acc[mt][nt][0] + b0, acc[mt][nt][1] + b1, acc[mt][nt][2] + b0, acc[mt][nt][3] + b1};
            if (EPILOGUE == 1)
                for (float& e : v) e = gelu(e);
            if (EPILOGUE == 2)
                for (float& e : v) e = gelu_tanh(e);
            *reinterpret_cast<half2*>(y + size_t(row) * N + col) = __floats2half2_rn(v[0], v[1]);
            *reinterpret_cast<half2*>(y + size_t(row + 8) * N + col) = __floats2half2_rn(v[2], v[3]);
        }
    }
}

template <int BK, int STAGES, int EPILOGUE, int NT = 4>
void run(const char* name, const half* x, const half* w, const half* b, half* y, int M, int N, int K,
         const std::vector<half>& hx, const std::vector<half>& hw, const std::vector<half>& hb) {
    constexpr int BN = WARPS_N * NT * 8;
    const int shared = STAGES * (BM + BN) * (BK + 8) * 2;
    auto kernel = linear_gelu<BK, STAGES, EPILOGUE, NT>;
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared));
    const dim3 grid(N / BN, M / BM);
    CHECK(cudaMemset(y, 0xff, size_t(M) * N * 2)); // NaN poison
    kernel<<<grid, 256, shared>>>(x, w, b, y, M, N, K);
    CHECK(cudaDeviceSynchronize());
    std::vector<half> hy(size_t(M) * N);
    CHECK(cudaMemcpy(hy.data(), y, hy.size() * 2, cudaMemcpyDeviceToHost));
    std::mt19937 rng(5);
    double worst = 0;
    for (int s = 0; s < 4096; ++s) {
        const int r = int(rng() % unsigned(M)), c = int(rng() % unsigned(N));
        double sum = double(__half2float(hb[size_t(c)])), scale = std::fabs(sum);
        for (int k = 0; k < K; ++k) {
            const double p = double(__half2float(hx[size_t(r) * K + k])) * double(__half2float(hw[size_t(c) * K + k]));
            sum += p;
            scale += std::fabs(p);
        }
        const double want = EPILOGUE == 1 ? 0.5 * sum * (1.0 + std::erf(sum / std::sqrt(2.0)))
                            : EPILOGUE == 2
                                ? 0.5 * sum * (1.0 + std::tanh(0.7978845608 * (sum + 0.044715 * sum * sum * sum)))
                                : sum;
        const double got = double(__half2float(hy[size_t(r) * N + c]));
        // (tanh.approx: about 2^-11 relative error of its own.)
        const double tol = std::ldexp(1.0, -10) * std::fabs(want) + 1e-5 * scale + (EPILOGUE == 2 ? 1e-3 : 1e-4);
        worst = std::max(worst, std::isfinite(got) ? std::fabs(got - want) / tol : 1e30);
    }
    cudaEvent_t ev[51];
    for (auto& e : ev) CHECK(cudaEventCreate(&e));
    for (int i = 0; i < 5; ++i) kernel<<<grid, 256, shared>>>(x, w, b, y, M, N, K);
    cudaEventRecord(ev[0]);
    for (int i = 0; i < 50; ++i) {
        kernel<<<grid, 256, shared>>>(x, w, b, y, M, N, K);
        cudaEventRecord(ev[i + 1]);
    }
    CHECK(cudaDeviceSynchronize());
    std::vector<float> ms(50);
    for (int i = 0; i < 50; ++i) cudaEventElapsedTime(&ms[size_t(i)], ev[i], ev[i + 1]);
    std::sort(ms.begin(), ms.end());
    const double flop = 2.0 * M * N * K;
    std::printf("%-34s %8.4f ms %7.1f TFLOP/s  worst error %.2f of tolerance%s\n", name, ms[25], flop / ms[25] / 1e9,
                worst, worst <= 1.0 ? "" : "  FAIL");
}

int main() {
    const int M = 16384, K = 1024, N = 4096;
    std::vector<half> hx(size_t(M) * K), hw(size_t(N) * K), hb(static_cast<size_t>(N));
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (auto& v : hx) v = __float2half(u(rng));
    for (auto& v : hw) v = __float2half(u(rng) / 32.0f);
    for (auto& v : hb) v = __float2half(u(rng) * 0.1f);
    half *x, *w, *b, *y;
    CHECK(cudaMalloc(&x, hx.size() * 2));
    CHECK(cudaMalloc(&w, hw.size() * 2));
    CHECK(cudaMalloc(&b, hb.size() * 2));
    CHECK(cudaMalloc(&y, size_t(M) * N * 2));
    CHECK(cudaMemcpy(x, hx.data(), hx.size() * 2, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(w, hw.data(), hw.size() * 2, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(b, hb.data(), hb.size() * 2, cudaMemcpyHostToDevice));
    std::printf("linear + bias + GELU, x (%d, %d) W (%d, %d) float16, mma.sync m16n8k16, 8 warps a block\n", M, K, N,
                K);
    run<32, 3, 1>("128 x 128, BK 32, 3 stages, + GELU", x, w, b, y, M, N, K, hx, hw, hb);
    run<32, 4, 1>("128 x 128, BK 32, 4 stages, + GELU", x, w, b, y, M, N, K, hx, hw, hb);
    run<64, 2, 1>("128 x 128, BK 64, 2 stages, + GELU", x, w, b, y, M, N, K, hx, hw, hb);
    run<64, 3, 0>("128 x 128, BK 64, 3 stages, bias only", x, w, b, y, M, N, K, hx, hw, hb);
    run<64, 3, 1>("128 x 128, BK 64, 3 stages, + GELU", x, w, b, y, M, N, K, hx, hw, hb);
    run<32, 4, 1, 8>("128 x 256, BK 32, 4 stages, + GELU", x, w, b, y, M, N, K, hx, hw, hb);
    run<64, 3, 1, 8>("128 x 256, BK 64, 3 stages, + GELU", x, w, b, y, M, N, K, hx, hw, hb);
    run<64, 3, 0, 8>("128 x 256, BK 64, 3 stages, bias only", x, w, b, y, M, N, K, hx, hw, hb);
    run<64, 2, 2>("128 x 128, BK 64, 2 stages, + GELU tanh.approx", x, w, b, y, M, N, K, hx, hw, hb);
    run<64, 3, 2>("128 x 128, BK 64, 3 stages, + GELU tanh.approx", x, w, b, y, M, N, K, hx, hw, hb);
    return 0;
}
