// Probe for issue 15 (architecture.md, "Streamed operands"): a 4-layer MLP of width W (W -> W,
// bias, ReLU between, identity last) on N = 2^20 cells, float16 inputs and outputs in the SoA
// layout (x[k][cell], y[k][cell]), float16 operands on mma.sync m16n8k16, one warp per 32 cells.
// How much faster is it when the warp loads its inputs cooperatively ("streamed operands") than
// when each lane loads its own cell's W inputs (loom's way today), at W = 64 and W = 128?
//
//   baseline<W, WARPS>: loom's path (templates/loom/mma.cuh, narrow_chain_io): each lane reads
//     x[k][cell] for k = 0..W-1 (2-byte loads, 64 bytes a warp), loom::mma::load_inputs writes
//     its row into the warp's [cell][k] tile and reads fragments back (ldmatrix); the last layer
//     goes through the tile with loom::mma::store_outputs and each lane stores y[k][cell].
//   streamed<W, WARPS, BUFFERS>: the warp copies its 32 cells x W halves global -> shared as they
//     lie ([component][cell], 64 bytes a row, cp.async.cg 16 bytes a lane) one tile ahead, and
//     reads A fragments with ldmatrix.x4.trans; the last layer's float16 outputs go into a
//     [component][cell] tile with stmatrix.x4.trans and leave it as 16-byte stores.
//       BUFFERS 2: two input tiles a warp; tile i+1's copy is issued before waiting on tile i,
//         and the outputs are staged in tile i's buffer (free once its fragments are read).
//       BUFFERS 1: one input tile; tile i+1's copy is issued as soon as tile i's fragments are
//         in registers (it lands while the 4 layers run), outputs through a 16-row tile. At
//         W = 128 this fits 8 or 9 warps beside the weights where two buffers fit 5.
//   Both: the 4 layers' weights ([n][k] rows padded by 8 halves, as loom stages them) and float32
//   biases staged once per block in dynamic shared memory; hidden layers are loom::mma::hidden;
//   a persistent grid (the SMs times the blocks an SM holds), warp g taking tiles g, g + G, ...
//   (G warps in all), so that the warps of a block stream neighbouring cells.
//
// Setting as bench/tensor_mlp.cpp: weights uniform in +-sqrt(6 / (2W)) (glorot), biases in
// [-0.1, 0.1], inputs in [-1, 1), rounded to float16. Each variant is checked before it is timed:
// outputs poisoned with NaN, every output finite afterwards, and 256 sampled cells (the first and
// the last among them) within bench/tensor_mlp.cpp's tolerance of a reference with double sums
// over the float16 weights, inputs and hidden activations (ReLU, then rounded to float16). A
// wrong variant prints FAIL and is not timed. Timing: enough input/output sets that together
// they exceed 200 MB, launches cycling through them, the median of 50 event-timed launches after
// a warm-up; "floor" = (bytes of x and y) at the bandwidth of a 2 GiB device-to-device cudaMemcpy
// (read + write), over the kernel's time. Registers and local (spill) bytes from
// cudaFuncGetAttributes, blocks an SM from cudaOccupancyMaxActiveBlocksPerMultiprocessor.
// N must be a multiple of 32 (no partial tiles here) and x, y 16-byte aligned.
//
//   nvcc -O3 -arch=sm_90 -std=c++17 -I templates bench/probe_kernels/probe_tc_streamed.cu -o /tmp/probe && /tmp/probe
//
// answer (2026-11-29, H200, docs/performance.md): with one input buffer a warp, 0.0995 against
// 0.1445 ms at W = 64 and 0.3350 against 0.4525 ms at W = 128 (8 warps, 230 registers); two
// buffers leave 5 warps at W = 128 and lose (0.4944).
#include <cuda_fp16.h>

#include "loom/mma.cuh"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <set>
#include <vector>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        cudaError_t err_ = (x);                                                                    \
        if (err_ != cudaSuccess) {                                                                 \
            std::printf("%s: %s\n", #x, cudaGetErrorString(err_));                                 \
            std::exit(1);                                                                          \
        }                                                                                          \
    } while (0)

constexpr int kLayers = 4, kCells = 1 << 20, kRuns = 50, kSample = 256;
constexpr double kRotateBytes = 200e6;

/// loom's 16-bit io type as the template reads it (narrow_chain_io): the float16's bits.
struct Bits16 {
    unsigned short bits;
};
struct Relu {
    __device__ float operator()(float v) const { return fmaxf(v, 0.0f); }
};

/// Shared-memory sizes of one width: the staged layers, then the warps' tiles.
template <int W>
struct Sizes {
    static constexpr int kStride = W + 8;                              // staged row, halves (loom)
    static constexpr int kWeightBytes = kLayers * W * kStride * 2;
    static constexpr int kStagedBytes = kWeightBytes + kLayers * W * 4; // + float32 biases
    static constexpr int kRowTileBytes = 32 * kStride * 2;             // baseline: loom's [cell][k] tile
    static constexpr int kTileHalves = W * 32;                         // streamed: [component][cell]
    static constexpr int kOutRows1 = 16;                               // BUFFERS 1: output rows a pass
    __host__ __device__ static constexpr int streamed_warp_bytes(int buffers) {
        return buffers == 2 ? 2 * kTileHalves * 2 : (kTileHalves + kOutRows1 * 32) * 2;
    }
};

// ---- PTX ------------------------------------------------------------------------------------------

__device__ __forceinline__ void cp_async16(void* s, const void* g) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(loom::mma::shared_address(s)), "l"(g) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
/// Waits until at most N of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}
/// .trans: lane i receives, of each 8x8 matrix whose 8 rows the lanes 8m..8m+7 address, the
/// elements (row 2(i%4), column i/4) and (row 2(i%4)+1, column i/4), i.e. the fragment of the
/// transposed matrix. Rows = components, columns = cells gives the row-major A fragment (PTX ISA,
/// "Matrix Fragments for mma.m16n8k16": a lane holds row i/4, columns 2(i%4) and +1).
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(loom::mma::shared_address(p)));
}
/// The inverse (sm_90, PTX 7.8): the fragment of [cell][output] stored as [output][cell] rows.
__device__ __forceinline__ void stmatrix_x4_trans(void* p, const unsigned (&r)[4]) {
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1,%2,%3,%4};" ::"r"(
                     loom::mma::shared_address(p)),
                 "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
                 : "memory");
}

// ---- Both kernels ----------------------------------------------------------------------------------

/// The block stages the 4 layers: weights [l][n][k] (unpadded in global) into rows of W + 8
/// halves (the 8 rows an ldmatrix reads then fall into distinct banks), biases as they are.
template <int W>
__device__ __forceinline__ void stage(unsigned short* ws, float* bs, const __half* w, const float* b) {
    constexpr int kChunks = W / 8; // 16-byte chunks a row
    for (int i = int(threadIdx.x); i < kLayers * W * kChunks; i += int(blockDim.x))
        *reinterpret_cast<uint4*>(ws + (i / kChunks) * Sizes<W>::kStride + (i % kChunks) * 8) =
            reinterpret_cast<const uint4*>(w)[i];
    for (int i = int(threadIdx.x); i < kLayers * W; i += int(blockDim.x)) bs[i] = b[i];
    __syncthreads();
}

template <int W, int WARPS>
__global__ void __launch_bounds__(WARPS * 32) baseline(const __half* __restrict__ x, __half* __restrict__ y,
                                                       const __half* __restrict__ w, const float* __restrict__ b, int n) {
    using S = Sizes<W>;
    constexpr int St = S::kStride;
    extern __shared__ __align__(16) unsigned char smem[];
    unsigned short* ws = reinterpret_cast<unsigned short*>(smem);
    float* bs = reinterpret_cast<float*>(smem + S::kWeightBytes);
    stage<W>(ws, bs, w, b);
    float* tile = loom::mma::warp_tile(reinterpret_cast<float*>(smem + S::kStagedBytes), S::kRowTileBytes / 4);
    const unsigned lane = loom::mma::lane_id();
    const unsigned short* xs = reinterpret_cast<const unsigned short*>(x);
    unsigned short* ys = reinterpret_cast<unsigned short*>(y);
    const int tiles = n / 32, stride = int(gridDim.x) * WARPS;
    for (int t = int(blockIdx.x) * WARPS + int(threadIdx.x / 32); t < tiles; t += stride) {
        const int cell = t * 32 + int(lane);
        Bits16 in[W], out[W];
#pragma unroll
        for (int k = 0; k < W; ++k) in[k].bits = xs[size_t(k) * n + cell];
        unsigned a[2][W / 16][4], h[2][W / 16][4];
        loom::mma::load_inputs<W, W, St, false>(a, tile, in);
        loom::mma::hidden<W, W, St, false>(a, h, ws, bs, Relu());
        loom::mma::hidden<W, W, St, false>(h, a, ws + W * St, bs + W, Relu());
        loom::mma::hidden<W, W, St, false>(a, h, ws + 2 * W * St, bs + 2 * W, Relu());
        loom::mma::store_outputs<W, W, W, St, false>(out, h, tile, ws + 3 * W * St, bs + 3 * W,
                                                     [](float v) { return v; });
#pragma unroll
        for (int k = 0; k < W; ++k) ys[size_t(k) * n + cell] = out[k].bits;
    }
}

// ---- Streamed operands -----------------------------------------------------------------------------

/// Offset in halves of (component k, cell c) in a warp's [component][cell] tile of 32 cells. A
/// row is 64 bytes, so rows k and k + 2 would start in the same bank: the row's four 16-byte
/// chunks are rotated by (k / 2) % 4, and the 8 rows k0..k0+7 (k0 a multiple of 8) that one
/// matrix of an ldmatrix / stmatrix reads at one chunk land in 8 distinct 16-byte bank groups
/// (group = 4 (k % 2) + (chunk ^ (k / 2) % 4)). The 16-byte copies in and out keep the chunk
/// whole, so the rotation costs nothing there. Rows 8 apart rotate alike: each access below is
/// a lane's base (computed once) plus a constant, so that no per-row address stays live.
__device__ __forceinline__ int at(int k, int c) { return k * 32 + ((((c >> 3) ^ (k >> 1)) & 3) << 3) + (c & 7); }

/// A lane's bases in a tile. Copies: lanes 4r..4r+3 take row r's four chunks (64 contiguous
/// bytes of x or y), row r + 8j at copy + 256 j. Fragments: per (mt, kc), lane l addresses row
/// (component) kc*16 + 8 (m / 2) + l % 8 at cells mt*16 + 8 (m % 2), m = l / 8, at frag[mt] +
/// 512 kc; so matrices 0..3 are (cells +0..7, k +0..7), (cells +8..15, k +0..7), (cells +0..7,
/// k +8..15), (cells +8..15, k +8..15): registers a0..a3 of the m16n8k16 A operand.
struct TileLanes {
    int copy, frag[2];
    __device__ explicit TileLanes(unsigned lane) {
        const int m = int(lane >> 3), r = int(lane & 7u);
        copy = at(int(lane >> 2), int(lane & 3u) * 8);
        frag[0] = at((m >> 1) * 8 + r, (m & 1) * 8);
        frag[1] = at((m >> 1) * 8 + r, 16 + (m & 1) * 8);
    }
};

/// The warp's copy of rows [0, ROWS) x 32 cells from `src` (this lane's chunk of row lane / 4 of
/// x), 16 bytes a lane, 8 rows an instruction.
template <int ROWS>
__device__ __forceinline__ void copy_tile(unsigned short* tile, const TileLanes& at_, const unsigned short* src, int n) {
#pragma unroll
    for (int j = 0; j < ROWS / 8; ++j) cp_async16(tile + at_.copy + 256 * j, src + size_t(8 * j) * n);
}

/// The A fragments of the tile's 32 cells (two m16 tiles) x W components.
template <int W>
__device__ __forceinline__ void read_tile(unsigned (&a)[2][W / 16][4], const unsigned short* tile, const TileLanes& at_) {
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int kc = 0; kc < W / 16; ++kc) ldmatrix_x4_trans(a[mt][kc], tile + at_.frag[mt] + 512 * kc);
}

/// The last layer (identity), OUT output rows a pass through the tile `out`: per 16 outputs, the
/// two m16n8 accumulators' sums rounded in pairs are, register for register, an A-shaped
/// fragment (cells x outputs, as loom::mma::hidden packs them), which stmatrix.trans writes as
/// [output][cell] rows at the addresses read_tile reads. Then each lane moves 16-byte chunks to
/// y, `dst` being its chunk of row lane / 4.
template <int W, int OUT>
__device__ __forceinline__ void store_tile(unsigned short* out, unsigned short* dst, const unsigned (&a)[2][W / 16][4],
                                          const unsigned short* w, const float* bias, int n, const TileLanes& at_,
                                          unsigned lane) {
#pragma unroll
    for (int first = 0; first < W; first += OUT) {
#pragma unroll
        for (int n0 = first; n0 < first + OUT; n0 += 16) {
            float lo[2][4], hi[2][4]; // outputs n0 + 0..7, n0 + 8..15
            loom::mma::sums<W, W + 8, false>(lo, a, w, bias, n0, lane);
            loom::mma::sums<W, W + 8, false>(hi, a, w, bias, n0 + 8, lane);
#pragma unroll
            for (int mt = 0; mt < 2; ++mt) {
                const unsigned f[4] = {loom::mma::pack<false>(lo[mt][0], lo[mt][1]),
                                       loom::mma::pack<false>(lo[mt][2], lo[mt][3]),
                                       loom::mma::pack<false>(hi[mt][0], hi[mt][1]),
                                       loom::mma::pack<false>(hi[mt][2], hi[mt][3])};
                stmatrix_x4_trans(out + at_.frag[mt] + 32 * (n0 - first), f);
            }
        }
        __syncwarp();
#pragma unroll
        for (int j = 0; j < OUT / 8; ++j)
            *reinterpret_cast<uint4*>(dst + size_t(first + 8 * j) * n) =
                *reinterpret_cast<const uint4*>(out + at_.copy + 256 * j);
        __syncwarp(); // every lane has read the tile before it is written again (next pass, next copy)
    }
}

template <int W, int WARPS, int BUFFERS>
__global__ void __launch_bounds__(WARPS * 32) streamed(const __half* __restrict__ x, __half* __restrict__ y,
                                                       const __half* __restrict__ w, const float* __restrict__ b, int n) {
    static_assert(BUFFERS == 1 || BUFFERS == 2, "one or two input tiles a warp");
    using S = Sizes<W>;
    constexpr int St = S::kStride, T = S::kTileHalves, OUT = BUFFERS == 2 ? W : S::kOutRows1;
    extern __shared__ __align__(16) unsigned char smem[];
    unsigned short* ws = reinterpret_cast<unsigned short*>(smem);
    float* bs = reinterpret_cast<float*>(smem + S::kWeightBytes);
    stage<W>(ws, bs, w, b);
    const int warp = int(threadIdx.x / 32);
    const unsigned lane = loom::mma::lane_id();
    unsigned short* mine =
        reinterpret_cast<unsigned short*>(smem + S::kStagedBytes + warp * S::streamed_warp_bytes(BUFFERS));
    const unsigned short* xs = reinterpret_cast<const unsigned short*>(x);
    unsigned short* ys = reinterpret_cast<unsigned short*>(y);
    const int tiles = n / 32, stride = int(gridDim.x) * WARPS;
    const TileLanes at_(lane);
    // This lane's chunk of row lane / 4 of tile t (x or y): 8 cells from cell t * 32 + 8 (lane % 4).
    const size_t lane_offset = size_t(lane >> 2) * n + (lane & 3u) * 8u;
    int t = int(blockIdx.x) * WARPS + warp;
    if (t < tiles) copy_tile<W>(mine, at_, xs + lane_offset + size_t(t) * 32, n);
    cp_async_commit();
    for (int i = 0; t < tiles; t += stride, ++i) {
        unsigned short* cur = mine + (BUFFERS == 2 ? (i & 1) * T : 0);
        const size_t next = lane_offset + size_t(t + stride) * 32;
        if (BUFFERS == 2) {
            // The other buffer held tile i-1's outputs, all read (store_tile's last __syncwarp).
            if (t + stride < tiles) copy_tile<W>(mine + ((i + 1) & 1) * T, at_, xs + next, n);
            cp_async_commit(); // possibly empty: the group count stays one a tile
            cp_async_wait<1>(); // tile i's group is in, tile i+1's may still fly
        } else {
            cp_async_wait<0>();
        }
        __syncwarp(); // the other lanes' copies are visible too
        unsigned a[2][W / 16][4], h[2][W / 16][4];
        read_tile<W>(a, cur, at_);
        __syncwarp(); // every lane's fragments are read before the buffer is written again
        if (BUFFERS == 1) {
            if (t + stride < tiles) copy_tile<W>(cur, at_, xs + next, n);
            cp_async_commit();
        }
        loom::mma::hidden<W, W, St, false>(a, h, ws, bs, Relu());
        loom::mma::hidden<W, W, St, false>(h, a, ws + W * St, bs + W, Relu());
        loom::mma::hidden<W, W, St, false>(a, h, ws + 2 * W * St, bs + 2 * W, Relu());
        store_tile<W, OUT>(BUFFERS == 2 ? cur : mine + T, ys + lane_offset + size_t(t) * 32, h, ws + 3 * W * St,
                           bs + 3 * W, n, at_, lane);
    }
    cp_async_wait<0>(); // nothing may be in flight when the block exits (none is: copies are guarded)
}

// ---- Host --------------------------------------------------------------------------------------------

using Kernel = void (*)(const __half*, __half*, const __half*, const float*, int);

struct Variant {
    const char* name;
    int width, warps, shared;
    Kernel kernel;
};

template <int W, int WARPS>
Variant baseline_variant() {
    return {"baseline (per-lane loads)", W, WARPS, Sizes<W>::kStagedBytes + WARPS * Sizes<W>::kRowTileBytes,
            baseline<W, WARPS>};
}
template <int W, int WARPS, int BUFFERS>
Variant streamed_variant() {
    return {BUFFERS == 2 ? "streamed, 2 buffers" : "streamed, 1 buffer", W, WARPS,
            Sizes<W>::kStagedBytes + WARPS * Sizes<W>::streamed_warp_bytes(BUFFERS), streamed<W, WARPS, BUFFERS>};
}

float half_value(unsigned short bits) {
    __half_raw raw;
    raw.x = bits;
    return __half2float(__half(raw));
}
unsigned short half_bits(float v) { return __half_raw(__float2half_rn(v)).x; }

/// One width's network and data: host copies for the reference, device sets for the timing.
struct Problem {
    int width = 0, sets = 0;
    std::vector<float> wf, bf;       // the float16 weights as floats [l][n][k], biases [l][n]
    std::vector<unsigned short> hx; // x[k][cell], float16 bits
    __half *w = nullptr;
    float* b = nullptr;
    std::vector<__half*> xs, ys;
    double launch_bytes() const { return 2.0 * double(kCells) * width * 2; }
};

Problem make_problem(int width) {
    Problem p;
    p.width = width;
    const size_t ww = size_t(width) * width;
    std::vector<unsigned short> wbits(kLayers * ww);
    p.wf.resize(kLayers * ww);
    p.bf.resize(size_t(kLayers) * width);
    const double limit = std::sqrt(6.0 / (2.0 * width));
    for (int l = 0; l < kLayers; ++l) {
        std::mt19937_64 rng(1000u * unsigned(width) + unsigned(l));
        std::uniform_real_distribution<double> uw(-limit, limit), ub(-0.1, 0.1);
        for (size_t i = 0; i < ww; ++i) {
            wbits[l * ww + i] = half_bits(float(uw(rng)));
            p.wf[l * ww + i] = half_value(wbits[l * ww + i]);
        }
        for (int i = 0; i < width; ++i) p.bf[size_t(l) * width + i] = float(ub(rng));
    }
    p.hx.resize(size_t(width) * kCells);
    std::mt19937_64 rng(17u + unsigned(width));
    std::uniform_real_distribution<float> ux(-1.0f, 1.0f);
    for (auto& v : p.hx) v = half_bits(ux(rng));
    CHECK(cudaMalloc(&p.w, wbits.size() * 2));
    CHECK(cudaMalloc(&p.b, p.bf.size() * 4));
    CHECK(cudaMemcpy(p.w, wbits.data(), wbits.size() * 2, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(p.b, p.bf.data(), p.bf.size() * 4, cudaMemcpyHostToDevice));
    p.sets = std::max(2, int(std::ceil(kRotateBytes / p.launch_bytes())));
    for (int s = 0; s < p.sets; ++s) {
        __half *x, *y;
        CHECK(cudaMalloc(&x, p.hx.size() * 2));
        CHECK(cudaMalloc(&y, p.hx.size() * 2));
        CHECK(cudaMemcpy(x, p.hx.data(), p.hx.size() * 2, cudaMemcpyHostToDevice));
        p.xs.push_back(x);
        p.ys.push_back(y);
    }
    return p;
}

void free_problem(Problem& p) {
    for (auto* v : p.xs) CHECK(cudaFree(v));
    for (auto* v : p.ys) CHECK(cudaFree(v));
    CHECK(cudaFree(p.w));
    CHECK(cudaFree(p.b));
}

/// The network on one cell: double sums over the float16 weights and inputs, each hidden
/// activation (ReLU) rounded to float16 as the kernels round it into the next layer's fragments;
/// `mag` gets each output's sum of |terms| through the layers (for the tolerance).
void reference(const Problem& p, int cell, std::vector<double>& y, std::vector<double>& mag) {
    const int W = p.width;
    std::vector<double> h(W), hm(W), z(W), zm(W);
    for (int k = 0; k < W; ++k) {
        h[k] = half_value(p.hx[size_t(k) * kCells + cell]);
        hm[k] = std::fabs(h[k]);
    }
    for (int l = 0; l < kLayers; ++l) {
        const float* wl = p.wf.data() + size_t(l) * W * W;
        for (int i = 0; i < W; ++i) {
            double s = p.bf[size_t(l) * W + i], m = std::fabs(s);
            for (int k = 0; k < W; ++k) {
                s += double(wl[size_t(i) * W + k]) * h[k];
                m += std::fabs(double(wl[size_t(i) * W + k])) * hm[k];
            }
            z[i] = l + 1 < kLayers ? half_value(half_bits(float(std::max(s, 0.0)))) : s;
            zm[i] = m;
        }
        h.swap(z);
        hm.swap(zm);
    }
    y = h;
    mag = hm;
}

struct Result {
    bool ok = false;
    double worst = 0, ms = NAN;
    int regs = 0, local = 0, blocks_per_sm = 0;
};

Result measure(const Variant& v, const Problem& p, int sms) {
    Result r;
    cudaFuncAttributes attr;
    CHECK(cudaFuncSetAttribute(v.kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, v.shared));
    CHECK(cudaFuncGetAttributes(&attr, v.kernel));
    r.regs = attr.numRegs;
    r.local = int(attr.localSizeBytes);
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r.blocks_per_sm, v.kernel, v.warps * 32, v.shared));
    if (r.blocks_per_sm == 0) return r;
    const int grid = sms * r.blocks_per_sm;
    auto launch = [&](int set) { v.kernel<<<grid, v.warps * 32, v.shared>>>(p.xs[set], p.ys[set], p.w, p.b, kCells); };

    // Check: NaN poison (0xffff), one launch, every output finite, sampled cells against the reference.
    const size_t count = size_t(p.width) * kCells;
    CHECK(cudaMemset(p.ys[0], 0xff, count * 2));
    launch(0);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::vector<unsigned short> got(count);
    CHECK(cudaMemcpy(got.data(), p.ys[0], count * 2, cudaMemcpyDeviceToHost));
    size_t nonfinite = 0;
    for (unsigned short g : got) nonfinite += (g & 0x7c00u) == 0x7c00u;
    std::set<int> cells = {0, kCells - 1};
    std::mt19937 rng(99u + unsigned(p.width));
    while (int(cells.size()) < kSample) cells.insert(int(rng() % unsigned(kCells)));
    const double u = std::ldexp(1.0, -11);
    std::vector<double> want, mag;
    for (int cell : cells) {
        reference(p, cell, want, mag);
        for (int i = 0; i < p.width; ++i) {
            const double have = half_value(got[size_t(i) * kCells + cell]);
            const double tol = 3 * u * kLayers * mag[i] + std::ldexp(std::fabs(want[i]), -11) + std::ldexp(1.0, -25);
            const double ratio = std::isfinite(have) ? std::fabs(have - want[i]) / tol : INFINITY;
            if (ratio > 1 && r.worst <= 1)
                std::printf("  %s W=%d: cell %d output %d: got %.6g, expected %.6g (tolerance %.3g)\n", v.name,
                            p.width, cell, i, have, want[i], tol);
            r.worst = std::max(r.worst, ratio);
        }
    }
    if (nonfinite) std::printf("  %s W=%d: %zu non-finite outputs (unwritten?)\n", v.name, p.width, nonfinite);
    r.ok = nonfinite == 0 && r.worst <= 1;
    if (!r.ok) return r;

    // Time: warm-up through every set, then kRuns launches cycling through them.
    cudaEvent_t ev[kRuns + 1];
    for (auto& e : ev) CHECK(cudaEventCreate(&e));
    for (int i = 0; i < std::max(3, p.sets); ++i) launch(i % p.sets);
    CHECK(cudaEventRecord(ev[0]));
    for (int i = 0; i < kRuns; ++i) {
        launch(i % p.sets);
        CHECK(cudaEventRecord(ev[i + 1]));
    }
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    std::vector<float> ms(kRuns);
    for (int i = 0; i < kRuns; ++i) CHECK(cudaEventElapsedTime(&ms[i], ev[i], ev[i + 1]));
    for (auto& e : ev) CHECK(cudaEventDestroy(e));
    std::sort(ms.begin(), ms.end());
    r.ms = 0.5 * (ms[kRuns / 2 - 1] + ms[kRuns / 2]);
    return r;
}

/// GB/s of a 2 GiB device-to-device cudaMemcpy, bytes read plus written, median of kRuns.
double copy_bandwidth() {
    const size_t bytes = size_t(2) << 30;
    void *src, *dst;
    CHECK(cudaMalloc(&src, bytes));
    CHECK(cudaMalloc(&dst, bytes));
    CHECK(cudaMemset(src, 0x3c, bytes));
    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    std::vector<float> ms;
    for (int i = 0; i < kRuns + 3; ++i) {
        CHECK(cudaEventRecord(a));
        CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice));
        CHECK(cudaEventRecord(b));
        CHECK(cudaEventSynchronize(b));
        float t;
        CHECK(cudaEventElapsedTime(&t, a, b));
        if (i >= 3) ms.push_back(t);
    }
    CHECK(cudaFree(src));
    CHECK(cudaFree(dst));
    std::sort(ms.begin(), ms.end());
    return 2.0 * double(bytes) / (ms[ms.size() / 2] * 1e6);
}

int main() {
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    const double copy_gbs = copy_bandwidth();
    std::printf("%s, %d SMs; N = 2^20 cells, 4 layers W -> W, float16 SoA io, mma.sync m16n8k16\n", prop.name,
                prop.multiProcessorCount);
    std::printf("copy 2 GiB device to device: %.0f GB/s (read + write)\n", copy_gbs);

    // Warps a block: what fits beside one copy of the weights (227 KiB of shared memory a block)
    // and loom's own choice (16 warps up to W 64, 8 at 128). Registers: an SM's 4 schedulers hold
    // 16384 each, so 16 warps cap a thread at 128, 9 to 12 warps at 168, 5 to 8 at 255. At W 128
    // the baseline with 10 warps and the single buffer with 9 are at 168 (they spill; ptxas -v).
    const std::vector<Variant> w64 = {baseline_variant<64, 16>(), streamed_variant<64, 16, 2>(),
                                      streamed_variant<64, 16, 1>()};
    const std::vector<Variant> w128 = {baseline_variant<128, 8>(), baseline_variant<128, 10>(),
                                       streamed_variant<128, 5, 2>(), streamed_variant<128, 8, 1>(),
                                       streamed_variant<128, 9, 1>()};
    int failures = 0;
    std::printf("\n%-26s %4s %4s %9s %6s %8s %5s %6s %9s %7s %8s %9s\n", "kernel", "W", "sets", "ms", "floor",
                "vs base", "regs", "local", "blocks/SM", "warps", "shared", "max err");
    for (const auto* variants : {&w64, &w128}) {
        Problem p = make_problem(variants->front().width);
        const double floor_ms = p.launch_bytes() / (copy_gbs * 1e6);
        double base_ms = NAN;
        for (const Variant& v : *variants) {
            const Result r = measure(v, p, prop.multiProcessorCount);
            if (r.blocks_per_sm == 0) {
                std::printf("%-26s %4d  does not fit (%d bytes of shared memory, %d registers)\n", v.name, v.width,
                            v.shared, r.regs);
                continue;
            }
            if (!r.ok) {
                ++failures;
                std::printf("%-26s %4d %4d %9s %6s %8s %5d %6d %9d %7d %8d %9.2f  FAIL\n", v.name, v.width, p.sets, "-",
                            "-", "-", r.regs, r.local, r.blocks_per_sm, v.warps, v.shared, r.worst);
                continue;
            }
            if (std::isnan(base_ms)) base_ms = r.ms; // the first baseline of the width
            std::printf("%-26s %4d %4d %9.4f %6.3f %7.2fx %5d %6d %9d %7d %8d %9.2f\n", v.name, v.width, p.sets, r.ms,
                        floor_ms / r.ms, base_ms / r.ms, r.regs, r.local, r.blocks_per_sm, v.warps, v.shared, r.worst);
        }
        free_problem(p);
    }
    std::printf("\nfloor: (bytes of x and y) / copy bandwidth over the time; vs base: the width's first "
                "baseline's time over this one's; max err: worst |got - reference| / tolerance\n");
    return failures ? 1 : 0;
}
