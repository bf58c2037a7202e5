// Probe (not built by CMake; nvcc -O3 -arch=sm_90 --extended-lambda): which hand-written
// structure reaches copy bandwidth for 3D 7-/27-point and 2D 5-point float32 stencils on the card.
// Its findings (docs/performance.md, 2026-11-27) chose loom's lanes with neighbours.
#include <cuda_runtime.h>
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
constexpr float C0 = -0.6f, C1 = 0.1f;

__global__ void s7_naive(const float* __restrict__ a, float* __restrict__ b, int n) {
    int x = blockIdx.x * blockDim.x + threadIdx.x + 1, y = blockIdx.y * blockDim.y + threadIdx.y + 1, z = blockIdx.z + 1;
    if (x >= n - 1 || y >= n - 1) return;
    size_t p = (size_t)n * n, i = z * p + (size_t)y * n + x;
    b[i] = C0 * a[i] + C1 * (a[i - 1] + a[i + 1] + a[i - n] + a[i + n] + a[i - p] + a[i + p]);
}

template <int LZ>
__global__ void s7_reg(const float* __restrict__ a, float* __restrict__ b, int n) {
    int x = blockIdx.x * blockDim.x + threadIdx.x + 1, y = blockIdx.y * blockDim.y + threadIdx.y + 1;
    int z0 = blockIdx.z * LZ + 1, z1 = min(z0 + LZ, n - 1);
    if (x >= n - 1 || y >= n - 1) return;
    size_t p = (size_t)n * n, i = z0 * p + (size_t)y * n + x;
    float m = a[i - p], c = a[i];
#pragma unroll 4
    for (int z = z0; z < z1; ++z, i += p) {
        float u = a[i + p];
        b[i] = C0 * c + C1 * (m + u + a[i - 1] + a[i + 1] + a[i - n] + a[i + n]);
        m = c; c = u;
    }
}

// float4 lanes along x, marching z. Threads cover x in [4t, 4t+4); only 1..n-2 written.
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

// Shared plane tile (BY+2)x(BX+2), z in registers, the next plane's tile prefetched in registers.
template <int BX, int BY, int LZ, bool BOX>
__global__ void __launch_bounds__(BX * BY) s_smem(const float* __restrict__ a, float* __restrict__ b, int n) {
    constexpr int TW = BX + 2, TH = BY + 2, T = TW * TH, PER = (T + BX * BY - 1) / (BX * BY);
    __shared__ float s[2][TH][TW];
    int tid = threadIdx.y * BX + threadIdx.x;
    int bx = blockIdx.x * BX, by = blockIdx.y * BY; // tile origin = interior origin - 1
    int z0 = blockIdx.z * LZ + 1, z1 = min(z0 + LZ, n - 1);
    size_t p = (size_t)n * n;
    int x = bx + threadIdx.x + 1, y = by + threadIdx.y + 1;
    bool in = x < n - 1 && y < n - 1;
    float pre[PER];
    auto fetch = [&](int z) {
#pragma unroll
        for (int k = 0; k < PER; ++k) {
            int e = tid + k * BX * BY;
            int ty = e / TW, tx = e % TW;
            int gx = bx + tx, gy = by + ty;
            pre[k] = (e < T && gx < n && gy < n) ? a[z * p + (size_t)gy * n + gx] : 0.f;
        }
    };
    auto put = [&](int buf) {
#pragma unroll
        for (int k = 0; k < PER; ++k) {
            int e = tid + k * BX * BY;
            if (e < T) s[buf][e / TW][e % TW] = pre[k];
        }
    };
    if (!BOX) {
        size_t i = z0 * p + (size_t)y * n + x;
        float m = in ? a[i - p] : 0.f, c = in ? a[i] : 0.f;
        fetch(z0);
        int buf = 0;
        for (int z = z0; z < z1; ++z, i += p) {
            put(buf);
            float u = in ? a[i + p] : 0.f;
            if (z + 1 < z1) fetch(z + 1);
            __syncthreads();
            int ty = threadIdx.y + 1, tx = threadIdx.x + 1;
            float o = C0 * c + C1 * (m + u + s[buf][ty][tx - 1] + s[buf][ty][tx + 1] + s[buf][ty - 1][tx] + s[buf][ty + 1][tx]);
            if (in) b[i] = o;
            m = c; c = u; buf ^= 1;
        }
    } else {
        // 27-point box, rolling partial sums: plane q contributes to outputs q+1, q, q-1.
        size_t i = (size_t)(z0 - 1) * p + (size_t)y * n + x;
        float accm = 0, acc0 = 0; // outputs at q-1 and q
        fetch(z0 - 1);
        int buf = 0;
        for (int q = z0 - 1; q <= z1; ++q, i += p) {
            put(buf);
            if (q + 1 <= z1) fetch(q + 1);
            __syncthreads();
            int ty = threadIdx.y + 1, tx = threadIdx.x + 1;
            float face = s[buf][ty][tx - 1] + s[buf][ty][tx + 1] + s[buf][ty - 1][tx] + s[buf][ty + 1][tx];
            float corner = s[buf][ty - 1][tx - 1] + s[buf][ty - 1][tx + 1] + s[buf][ty + 1][tx - 1] + s[buf][ty + 1][tx + 1];
            float ctr = s[buf][ty][tx];
            float side = 0.05f * ctr + 0.02f * face + 0.01f * corner; // plane +-1
            float mid = -0.5f * ctr + 0.05f * face + 0.02f * corner;  // plane 0
            if (q - 1 >= z0) { if (in) b[i - p] = accm + side; }
            accm = acc0 + mid;
            acc0 = side;
            buf ^= 1;
        }
    }
}

__global__ void s27_naive(const float* __restrict__ a, float* __restrict__ b, int n) {
    int x = blockIdx.x * blockDim.x + threadIdx.x + 1, y = blockIdx.y * blockDim.y + threadIdx.y + 1, z = blockIdx.z + 1;
    if (x >= n - 1 || y >= n - 1) return;
    size_t p = (size_t)n * n, i = z * p + (size_t)y * n + x;
    float r = 0;
    for (int dz = -1; dz <= 1; ++dz) {
        const float* q = a + i + dz * (long)p;
        float face = q[-1] + q[1] + q[-n] + q[n], corner = q[-n - 1] + q[-n + 1] + q[n - 1] + q[n + 1];
        r += dz == 0 ? (-0.5f * q[0] + 0.05f * face + 0.02f * corner) : (0.05f * q[0] + 0.02f * face + 0.01f * corner);
    }
    b[i] = r;
}

template <int LZ>
__global__ void s27_reg(const float* __restrict__ a, float* __restrict__ b, int n) {
    int x = blockIdx.x * blockDim.x + threadIdx.x + 1, y = blockIdx.y * blockDim.y + threadIdx.y + 1;
    int z0 = blockIdx.z * LZ + 1, z1 = min(z0 + LZ, n - 1);
    if (x >= n - 1 || y >= n - 1) return;
    size_t p = (size_t)n * n, i = (size_t)(z0 - 1) * p + (size_t)y * n + x;
    float accm = 0, acc0 = 0;
#pragma unroll 2
    for (int q = z0 - 1; q <= z1; ++q, i += p) {
        const float* r = a + i;
        float face = r[-1] + r[1] + r[-n] + r[n], corner = r[-n - 1] + r[-n + 1] + r[n - 1] + r[n + 1];
        float ctr = r[0];
        float side = 0.05f * ctr + 0.02f * face + 0.01f * corner, mid = -0.5f * ctr + 0.05f * face + 0.02f * corner;
        if (q - 1 >= z0) b[i - p] = accm + side;
        accm = acc0 + mid;
        acc0 = side;
    }
}

// ---------------- 2D 5-point ----------------
__global__ void s5_naive(const float* __restrict__ a, float* __restrict__ b, int n) {
    int x = blockIdx.x * blockDim.x + threadIdx.x + 1, y = blockIdx.y * blockDim.y + threadIdx.y + 1;
    if (x >= n - 1 || y >= n - 1) return;
    size_t i = (size_t)y * n + x;
    b[i] = C0 * a[i] + C1 * (a[i - 1] + a[i + 1] + a[i - n] + a[i + n]);
}
template <int LY>
__global__ void s5_reg(const float* __restrict__ a, float* __restrict__ b, int n) {
    int x = blockIdx.x * blockDim.x + threadIdx.x + 1;
    int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * LY + 1, y1 = min(y0 + LY, n - 1);
    if (x >= n - 1 || y0 >= n - 1) return;
    size_t i = (size_t)y0 * n + x;
    float m = a[i - n], c = a[i];
#pragma unroll 4
    for (int y = y0; y < y1; ++y, i += n) {
        float u = a[i + n];
        b[i] = C0 * c + C1 * (m + u + a[i - 1] + a[i + 1]);
        m = c; c = u;
    }
}
template <int LY>
__global__ void s5_reg4(const float* __restrict__ a, float* __restrict__ b, int n) {
    int x = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * LY + 1, y1 = min(y0 + LY, n - 1);
    if (x >= n || y0 >= n - 1) return;
    size_t i = (size_t)y0 * n + x;
    auto ld = [&](size_t k) { return *reinterpret_cast<const float4*>(a + k); };
    float4 m = ld(i - n), c = ld(i);
    bool lo = x == 0, hi = x + 4 >= n;
#pragma unroll 4
    for (int y = y0; y < y1; ++y, i += n) {
        float4 u = ld(i + n);
        float l = lo ? 0.f : a[i - 1], r = hi ? 0.f : a[i + 4];
        float4 o;
        o.x = C0 * c.x + C1 * (m.x + u.x + l + c.y);
        o.y = C0 * c.y + C1 * (m.y + u.y + c.x + c.z);
        o.z = C0 * c.z + C1 * (m.z + u.z + c.y + c.w);
        o.w = C0 * c.w + C1 * (m.w + u.w + c.z + r);
        if (!lo && !hi) *reinterpret_cast<float4*>(b + i) = o;
        else {
            float v[4] = {o.x, o.y, o.z, o.w};
            for (int k = 0; k < 4; ++k) if (x + k >= 1 && x + k < n - 1) b[i + k] = v[k];
        }
        m = c; c = u;
    }
}
// Lanes via shuffles: x-neighbours from the neighbouring thread's float4, scalar at warp edges.
template <int LY>
__global__ void s5_shfl4(const float* __restrict__ a, float* __restrict__ b, int n) {
    int x = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * LY + 1, y1 = min(y0 + LY, n - 1);
    if (y0 >= n - 1) return; // whole warps along x (n multiple of 128)
    size_t i = (size_t)y0 * n + x;
    auto ld = [&](size_t k) { return *reinterpret_cast<const float4*>(a + k); };
    float4 m = ld(i - n), c = ld(i);
    int lane = threadIdx.x & 31;
    bool lo = x == 0, hi = x + 4 >= n;
#pragma unroll 4
    for (int y = y0; y < y1; ++y, i += n) {
        float4 u = ld(i + n);
        float l = __shfl_up_sync(~0u, c.w, 1), r = __shfl_down_sync(~0u, c.x, 1);
        if (lane == 0) l = lo ? 0.f : a[i - 1];
        if (lane == 31) r = hi ? 0.f : a[i + 4];
        float4 o;
        o.x = C0 * c.x + C1 * (m.x + u.x + l + c.y);
        o.y = C0 * c.y + C1 * (m.y + u.y + c.x + c.z);
        o.z = C0 * c.z + C1 * (m.z + u.z + c.y + c.w);
        o.w = C0 * c.w + C1 * (m.w + u.w + c.z + r);
        if (!lo && !hi) *reinterpret_cast<float4*>(b + i) = o;
        else {
            float v[4] = {o.x, o.y, o.z, o.w};
            for (int k = 0; k < 4; ++k) if (x + k >= 1 && x + k < n - 1) b[i + k] = v[k];
        }
        m = c; c = u;
    }
}

// Lanes with halo elements from the vector, but no streaming: each cell loads all its rows.
template <int LY>
__global__ void s5_lane4_ns(const float* __restrict__ a, float* __restrict__ b, int n) {
    int x = (blockIdx.x * blockDim.x + threadIdx.x) * 4;
    int y0 = (blockIdx.y * blockDim.y + threadIdx.y) * LY + 1, y1 = min(y0 + LY, n - 1);
    if (x >= n || y0 >= n - 1) return;
    bool lo = x == 0, hi = x + 4 >= n;
    auto ld = [&](size_t k) { return *reinterpret_cast<const float4*>(a + k); };
#pragma unroll 4
    for (int y = y0; y < y1; ++y) {
        size_t i = (size_t)y * n + x;
        float4 m = ld(i - n), c = ld(i), u = ld(i + n);
        float l = lo ? 0.f : a[i - 1], r = hi ? 0.f : a[i + 4];
        float4 o;
        o.x = C0 * c.x + C1 * (m.x + u.x + l + c.y);
        o.y = C0 * c.y + C1 * (m.y + u.y + c.x + c.z);
        o.z = C0 * c.z + C1 * (m.z + u.z + c.y + c.w);
        o.w = C0 * c.w + C1 * (m.w + u.w + c.z + r);
        if (!lo && !hi) *reinterpret_cast<float4*>(b + i) = o;
        else {
            float v[4] = {o.x, o.y, o.z, o.w};
            for (int k = 0; k < 4; ++k) if (x + k >= 1 && x + k < n - 1) b[i + k] = v[k];
        }
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
// 27-point with lanes: each plane's 3 rows as float4 plus 2 edge scalars per row (6 per plane).
// STREAM: rolling partial sums over planes (each plane loaded once); else each cell loads 3 planes.
__device__ inline void row6(const float* __restrict__ a, size_t i, bool lo, bool hi, float v[6]) {
    float4 c = *reinterpret_cast<const float4*>(a + i);
    v[0] = lo ? 0.f : a[i - 1]; v[1] = c.x; v[2] = c.y; v[3] = c.z; v[4] = c.w; v[5] = hi ? 0.f : a[i + 4];
}
template <int LZ, bool STREAM>
__global__ void s27_lane4(const float* __restrict__ a, float* __restrict__ b, int n) {
    int x = (blockIdx.x * blockDim.x + threadIdx.x) * 4, y = blockIdx.y * blockDim.y + threadIdx.y + 1;
    int z0 = blockIdx.z * LZ + 1, z1 = min(z0 + LZ, n - 1);
    if (x >= n || y >= n - 1) return;
    size_t p = (size_t)n * n;
    bool lo = x == 0, hi = x + 4 >= n;
    auto plane = [&](size_t i, float side[4], float mid[4]) {
        float r0[6], r1[6], r2[6];
        row6(a, i - n, lo, hi, r0); row6(a, i, lo, hi, r1); row6(a, i + n, lo, hi, r2);
#pragma unroll
        for (int k = 0; k < 4; ++k) {
            float ctr = r1[k + 1];
            float face = r1[k] + r1[k + 2] + r0[k + 1] + r2[k + 1];
            float corner = r0[k] + r0[k + 2] + r2[k] + r2[k + 2];
            side[k] = 0.05f * ctr + 0.02f * face + 0.01f * corner;
            mid[k] = -0.5f * ctr + 0.05f * face + 0.02f * corner;
        }
    };
    auto store = [&](size_t i, const float o[4]) {
        if (!lo && !hi) *reinterpret_cast<float4*>(b + i) = make_float4(o[0], o[1], o[2], o[3]);
        else for (int k = 0; k < 4; ++k) if (x + k >= 1 && x + k < n - 1) b[i + k] = o[k];
    };
    if (STREAM) {
        float accm[4] = {0, 0, 0, 0}, acc0[4] = {0, 0, 0, 0};
        size_t i = (size_t)(z0 - 1) * p + (size_t)y * n + x;
#pragma unroll 2
        for (int q = z0 - 1; q <= z1; ++q, i += p) {
            float side[4], mid[4];
            plane(i, side, mid);
            float o[4];
#pragma unroll
            for (int k = 0; k < 4; ++k) { o[k] = accm[k] + side[k]; accm[k] = acc0[k] + mid[k]; acc0[k] = side[k]; }
            if (q - 1 >= z0) store(i - p, o);
        }
    } else {
#pragma unroll 2
        for (int z = z0; z < z1; ++z) {
            size_t i = z * p + (size_t)y * n + x;
            float s0[4], m0[4], s1[4], m1[4], s2[4], m2[4], o[4];
            plane(i - p, s0, m0); plane(i, s1, m1); plane(i + p, s2, m2);
            for (int k = 0; k < 4; ++k) o[k] = s0[k] + m1[k] + s2[k];
            store(i, o);
        }
    }
}
__global__ void copy4(const float4* __restrict__ a, float4* __restrict__ b, size_t n4) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x) b[i] = a[i];
}

struct Res { std::string name; float ms, ratio, err; };
std::vector<Res> g_res;

float max_diff(const float* x, const float* y, size_t n) {
    std::vector<float> hx(n), hy(n);
    cudaMemcpy(hx.data(), x, n * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(hy.data(), y, n * 4, cudaMemcpyDeviceToHost);
    float d = 0;
    for (size_t k = 0; k < n; ++k) d = std::max(d, std::fabs(hx[k] - hy[k]));
    return d;
}

void run(const char* name, size_t cells, float* ref, float* out, const std::function<void()>& f) {
    CK(cudaMemset(out, 0xff, cells * 4)); // NaN poison
    f(); CK(cudaDeviceSynchronize());
    float err = ref ? max_diff(ref, out, cells) : 0;
    float ms = time_ms(f);
    float gbs = 2.0 * cells * 4 / (ms * 1e6);
    g_res.push_back({name, ms, gbs / g_copy_gbs, err});
    printf("%-34s %8.4f ms  %.3f of copy  err %.2e\n", name, ms, gbs / g_copy_gbs, err);
    fflush(stdout);
}

int main() {
    int n3 = 512, n2 = 8192;
    size_t cells = (size_t)n3 * n3 * n3; // 128M; 2D 8192^2 = 64M fits too
    float *a, *b, *r;
    CK(cudaMalloc(&a, cells * 4)); CK(cudaMalloc(&b, cells * 4)); CK(cudaMalloc(&r, cells * 4));
    fill<<<4096, 256>>>(a, cells, 7);
    // copy ceiling: 2 GiB memcpy as the bench does, plus the same-size kernel copy
    {
        size_t bytes = 1ull << 31; void *x, *y; CK(cudaMalloc(&x, bytes)); CK(cudaMalloc(&y, bytes));
        float ms = time_ms([&] { cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice); }, 20);
        g_copy_gbs = 2.0 * bytes / (ms * 1e6);
        printf("copy 2 GiB: %.1f GB/s\n", g_copy_gbs);
        cudaFree(x); cudaFree(y);
    }
    run("copy4 kernel 512MB", cells, nullptr, b, [&] { copy4<<<132 * 16, 256>>>((float4*)a, (float4*)b, cells / 4); });

    int n = n3;
    auto g3 = [&](int bx, int by, int lz) { return dim3((n - 2 + bx - 1) / bx, (n - 2 + by - 1) / by, (n - 2 + lz - 1) / lz); };
    CK(cudaMemset(r, 0, cells * 4));
    s7_naive<<<g3(128, 2, 1), dim3(128, 2)>>>(a, r, n);
    CK(cudaDeviceSynchronize());
    // keep boundary equal: every variant writes only the interior; poison would differ on the boundary,
    // so compare after copying the boundary-zero reference's boundary: run() poisons, so set boundary via memset 0 instead.
    auto run3 = [&](const char* nm, const std::function<void()>& f) {
        CK(cudaMemset(b, 0, cells * 4)); f(); CK(cudaDeviceSynchronize());
        float err = max_diff(r, b, cells);
        float ms = time_ms(f);
        float ratio = 2.0 * cells * 4 / (ms * 1e6) / g_copy_gbs;
        printf("%-34s %8.4f ms  %.3f of copy  err %.2e\n", nm, ms, ratio, err);
        fflush(stdout);
    };
    char nm[128];
    run3("7pt naive 128x2", [&] { s7_naive<<<g3(128, 2, 1), dim3(128, 2)>>>(a, b, n); });
    run3("7pt naive 64x4", [&] { s7_naive<<<g3(64, 4, 1), dim3(64, 4)>>>(a, b, n); });
#define R7(BX, BY, LZ) snprintf(nm, sizeof nm, "7pt reg %dx%d lz%d", BX, BY, LZ); run3(nm, [&] { s7_reg<LZ><<<g3(BX, BY, LZ), dim3(BX, BY)>>>(a, b, n); });
    if (0) { R7(32, 4, 16) R7(32, 8, 16) R7(64, 4, 16) R7(64, 4, 32) R7(128, 2, 16) R7(128, 4, 8) R7(32, 8, 64) R7(64, 8, 32) R7(128, 1, 32) R7(256, 1, 16) }
#define R74(BX, BY, LZ) snprintf(nm, sizeof nm, "7pt reg4 %dx%d lz%d", BX, BY, LZ); run3(nm, [&] { s7_reg4<LZ><<<dim3((n / 4 + BX - 1) / BX, (n - 2 + BY - 1) / BY, (n - 2 + LZ - 1) / LZ), dim3(BX, BY)>>>(a, b, n); });
    R74(32, 4, 16) R74(32, 8, 16) R74(64, 4, 16) R74(16, 8, 16) R74(32, 4, 32) R74(32, 4, 8) R74(64, 2, 32) R74(128, 1, 16)
#define RS(BX, BY, LZ, BOX) snprintf(nm, sizeof nm, "%s smem %dx%d lz%d", BOX ? "27pt" : "7pt", BX, BY, LZ); run3(nm, [&] { s_smem<BX, BY, LZ, BOX><<<g3(BX, BY, LZ), dim3(BX, BY)>>>(a, b, n); });
    if (0) { RS(32, 8, 16, false) RS(32, 8, 32, false) RS(64, 4, 16, false) RS(64, 8, 16, false) RS(128, 4, 16, false) RS(32, 16, 32, false) RS(64, 8, 64, false) }

#define R7N(BX, BY, LZ) snprintf(nm, sizeof nm, "7pt lane4_ns %dx%d lz%d", BX, BY, LZ); run3(nm, [&] { s7_lane4_ns<LZ><<<dim3((n / 4 + BX - 1) / BX, (n - 2 + BY - 1) / BY, (n - 2 + LZ - 1) / LZ), dim3(BX, BY)>>>(a, b, n); });
    R7N(32, 4, 1) R7N(32, 4, 4) R7N(32, 4, 8) R7N(64, 4, 4) R7N(32, 8, 4) R7N(128, 1, 4)
    R74(32, 4, 4) R74(32, 8, 8) R74(64, 4, 8) R74(16, 8, 8) R74(32, 2, 8) R74(64, 2, 8) R74(128, 2, 8) R74(32, 16, 8)
    CK(cudaMemset(r, 0, cells * 4));
    s27_naive<<<g3(128, 2, 1), dim3(128, 2)>>>(a, r, n);
    CK(cudaDeviceSynchronize());
    run3("27pt naive 128x2", [&] { s27_naive<<<g3(128, 2, 1), dim3(128, 2)>>>(a, b, n); });
#define R27(BX, BY, LZ) snprintf(nm, sizeof nm, "27pt reg %dx%d lz%d", BX, BY, LZ); run3(nm, [&] { s27_reg<LZ><<<g3(BX, BY, LZ), dim3(BX, BY)>>>(a, b, n); });
    if (0) { R27(32, 4, 16) R27(32, 8, 16) R27(64, 4, 16) R27(64, 4, 32) R27(128, 2, 16) R27(32, 8, 64) R27(64, 8, 32)
    RS(32, 8, 16, true) RS(32, 8, 32, true) RS(64, 4, 16, true) RS(64, 8, 16, true) RS(64, 8, 32, true) RS(128, 4, 16, true) RS(32, 16, 32, true) RS(64, 8, 64, true) }

#define R27L(BX, BY, LZ, S) snprintf(nm, sizeof nm, "27pt lane4 %s %dx%d lz%d", S ? "stream" : "nostream", BX, BY, LZ); run3(nm, [&] { s27_lane4<LZ, S><<<dim3((n / 4 + BX - 1) / BX, (n - 2 + BY - 1) / BY, (n - 2 + LZ - 1) / LZ), dim3(BX, BY)>>>(a, b, n); });
    R27L(32, 4, 8, true) R27L(32, 4, 16, true) R27L(32, 8, 8, true) R27L(64, 4, 8, true) R27L(64, 2, 16, true) R27L(16, 8, 16, true) R27L(32, 4, 32, true)
    R27L(32, 4, 1, false) R27L(32, 4, 4, false) R27L(64, 4, 4, false) R27L(32, 8, 4, false)
    // 2D
    n = n2;
    size_t c2 = (size_t)n * n;
    auto g2 = [&](int bx, int by, int ly) { return dim3((n - 2 + bx - 1) / bx, (n - 2 + by * ly - 1) / (by * ly)); };
    auto run2 = [&](const char* nm2, const std::function<void()>& f) {
        CK(cudaMemset(b, 0, c2 * 4)); f(); CK(cudaDeviceSynchronize());
        float err = max_diff(r, b, c2);
        float ms = time_ms(f);
        float ratio = 2.0 * c2 * 4 / (ms * 1e6) / g_copy_gbs;
        printf("%-34s %8.4f ms  %.3f of copy  err %.2e\n", nm2, ms, ratio, err);
        fflush(stdout);
    };
    CK(cudaMemset(r, 0, c2 * 4));
    s5_naive<<<g2(128, 2, 1), dim3(128, 2)>>>(a, r, n);
    CK(cudaDeviceSynchronize());
    run2("5pt naive 128x2", [&] { s5_naive<<<g2(128, 2, 1), dim3(128, 2)>>>(a, b, n); });
    run2("5pt naive 256x1", [&] { s5_naive<<<g2(256, 1, 1), dim3(256, 1)>>>(a, b, n); });
#define R5(BX, BY, LY) snprintf(nm, sizeof nm, "5pt reg %dx%d ly%d", BX, BY, LY); run2(nm, [&] { s5_reg<LY><<<g2(BX, BY, LY), dim3(BX, BY)>>>(a, b, n); });
    if (0) { R5(128, 2, 4) R5(128, 2, 8) R5(256, 1, 8) R5(256, 1, 16) R5(64, 4, 8) R5(128, 1, 32) R5(512, 1, 8) R5(256, 2, 4) }
#define R54(K, BX, BY, LY) snprintf(nm, sizeof nm, "5pt %s %dx%d ly%d", #K, BX, BY, LY); run2(nm, [&] { K<LY><<<dim3((n / 4 + BX - 1) / BX, (n - 2 + BY * LY - 1) / (BY * LY)), dim3(BX, BY)>>>(a, b, n); });
    R54(s5_reg4, 32, 4, 4) R54(s5_reg4, 64, 2, 8) R54(s5_reg4, 128, 1, 8) R54(s5_reg4, 64, 4, 4) R54(s5_reg4, 32, 8, 8) R54(s5_reg4, 128, 2, 4) R54(s5_reg4, 256, 1, 4) R54(s5_reg4, 64, 1, 16)
    if (0) { R54(s5_shfl4, 32, 4, 4) R54(s5_shfl4, 64, 2, 8) R54(s5_shfl4, 128, 1, 8) R54(s5_shfl4, 64, 4, 4) R54(s5_shfl4, 128, 2, 4) R54(s5_shfl4, 256, 1, 4) }
    R54(s5_lane4_ns, 32, 4, 4) R54(s5_lane4_ns, 128, 2, 4) R54(s5_lane4_ns, 64, 4, 4) R54(s5_lane4_ns, 64, 4, 1) R54(s5_lane4_ns, 256, 1, 4) R54(s5_lane4_ns, 128, 1, 8)
    R54(s5_reg4, 64, 4, 2) R54(s5_reg4, 64, 8, 2) R54(s5_reg4, 128, 4, 4) R54(s5_reg4, 32, 8, 4) R54(s5_reg4, 64, 2, 4) R54(s5_reg4, 128, 2, 2)
    return 0;
}
