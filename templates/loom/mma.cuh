// Chains of Dense layers on tensor cores in generated CUDA (Schedule::tensor_cores, the IR's
// MmaChainNode). A warp computes its 32 cells together, a cell per lane, as two tiles of 16 rows
// (m16n8k16 on float16 or bfloat16 operands, float32 sums; m16n8k8 on tf32 ones in namespace
// tf32 below, the same steps without ldmatrix):
//   1. each lane writes its cell's inputs, rounded, as row `lane` of the warp's tile in shared
//      memory, and the warp reads them back as operand fragments (ldmatrix); or, where the
//      inputs stream (MmaChainNode::stream), the warp copies them from the field as they lie and
//      reads them with ldmatrix.trans (stream_inputs, below);
//   2. per layer, per 8 outputs: the sums start at the bias, take one mma per 16 inputs with the
//      weights read from shared memory (ldmatrix: the staged array is [n][k], which is the
//      column-major B operand), then get the activation and are rounded into the next layer's
//      operand fragments: an m16n8 accumulator's registers are half of an m16k16 operand's, so
//      the activations stay in registers from layer to layer;
//   3. the last layer's float32 outputs go to the tile, and each lane reads its cell's row; or,
//      where the outputs stream, they go through the tile to the field (stream_outputs).
// Rows are padded (weights: 8 16-bit values, tile: 4 floats) so that the 8 rows an ldmatrix or a
// 16-byte access reads fall into distinct banks. Fragment layouts: PTX ISA, "Matrix Fragments
// for mma.m16n8k16". Needs sm_80 or newer.
#pragma once

namespace loom {

struct half;     // loom/half.cuh: the staged 16-bit weights' types (their bits only, here)
struct bfloat16;

namespace mma {

__device__ __forceinline__ unsigned lane_id() {
    unsigned lane;
    asm("mov.u32 %0, %%laneid;" : "=r"(lane));
    return lane;
}

/// The warp's tile: `floats` words per warp of the block, warps numbered by linear thread index.
__device__ __forceinline__ float* warp_tile(float* tiles, int floats) {
    const unsigned thread = (threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    return tiles + (thread / 32u) * unsigned(floats);
}

/// Two floats rounded to nearest even into one register, `lo` in the low 16 bits.
template <bool BF16>
__device__ __forceinline__ unsigned pack(float lo, float hi) {
    unsigned r;
    if (BF16)
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    else
        asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

template <bool BF16>
__device__ __forceinline__ void mma16816(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    if (BF16)
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                     "{%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
    else
        asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                     "{%8,%9}, {%0,%1,%2,%3};"
                     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ unsigned shared_address(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(shared_address(p)));
}

__device__ __forceinline__ void ldmatrix_x2(unsigned (&r)[2], const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0,%1}, [%2];"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(shared_address(p)));
}

/// Step 1, the row: lane `lane` writes row `lane` of the tile (rows of STRIDE 16-bit values), 16
/// bytes at a time, `pair(k)` giving its values k and k + 1 (k even) in one register.
template <int KP, int STRIDE, class Pair>
__device__ __forceinline__ unsigned short* write_row(float* tile, unsigned lane, Pair pair) {
    unsigned short* rows = reinterpret_cast<unsigned short*>(tile);
    uint4* row = reinterpret_cast<uint4*>(rows + lane * STRIDE);
#pragma unroll
    for (int j = 0; j < KP; j += 8) row[j / 8] = make_uint4(pair(j), pair(j + 2), pair(j + 4), pair(j + 6));
    return rows;
}

/// Step 1, the fragments: once every lane has written its row, the warp's operand fragments of
/// its 32 rows.
template <int KP, int STRIDE>
__device__ __forceinline__ void read_rows(unsigned (&a)[2][KP / 16][4], const unsigned short* rows, unsigned lane) {
    __syncwarp();
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int kc = 0; kc < KP / 16; ++kc)
            ldmatrix_x4(a[mt][kc], rows + (mt * 16 + (lane & 15u)) * STRIDE + kc * 16 + (lane >> 4) * 8);
    __syncwarp();
}

/// Step 1: the cell's K inputs, rounded, then zeros up to KP, as the lane's row of the tile; then
/// the warp's operand fragments.
template <int K, int KP, int STRIDE, bool BF16>
__device__ __forceinline__ void load_inputs(unsigned (&a)[2][KP / 16][4], float* tile, const float (&in)[K]) {
    const unsigned lane = lane_id();
    auto value = [&](int k) { return k < K ? in[k < K ? k : 0] : 0.0f; };
    read_rows<KP, STRIDE>(a, write_row<KP, STRIDE>(tile, lane, [&](int k) { return pack<BF16>(value(k), value(k + 1)); }),
                          lane);
}

/// Step 1 for inputs that are 16-bit values of the operand type already (narrow_chain_io): their
/// bits, paired, are the row.
template <int K, int KP, int STRIDE, bool BF16, class T>
__device__ __forceinline__ void load_inputs(unsigned (&a)[2][KP / 16][4], float* tile, const T (&in)[K]) {
    const unsigned lane = lane_id();
    auto bits = [&](int k) { return k < K ? unsigned(in[k < K ? k : 0].bits) : 0u; };
    read_rows<KP, STRIDE>(a, write_row<KP, STRIDE>(tile, lane, [&](int k) { return bits(k) | (bits(k + 1) << 16); }),
                          lane);
}

// ---- Streamed inputs (MmaChainNode::stream) ----------------------------------------------------
// Where the inputs are a 16-bit field's components at 32 consecutive cells, contiguous along the
// cells, the warp copies them as they lie into the start of its tile, [k][32 cells], 16 bytes a
// lane (cp.async), and reads A fragments with ldmatrix.trans. The copy of the warp's next tile is
// issued once this tile's fragments are in registers: it lands while the layers run (measured by
// hand: bench/probe_kernels/probe_tc_streamed.cu, docs/performance.md).

__device__ __forceinline__ void cp_async16(void* s, const void* g) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(shared_address(s)), "l"(g) : "memory");
}

/// .trans: lane i gets, of each 8x8 matrix whose rows lanes 8m .. 8m + 7 address, the elements
/// (row 2 (i % 4), column i / 4) and (row 2 (i % 4) + 1, column i / 4): with rows = components
/// and columns = cells, the row-major A fragment of [cell][component].
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], const void* p) {
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(shared_address(p)));
}

/// Offset in 16-bit values of (component k, cell c) in the [k][32 cells] buffer. A row is 64
/// bytes, so rows k and k + 2 would start in the same banks: each row's four 16-byte chunks are
/// rotated by (k / 2) % 4, and the 8 rows one ldmatrix matrix reads at a chunk fall into 8
/// distinct 16-byte bank groups, while a chunk stays whole for the 16-byte copies.
__device__ __forceinline__ int stream_at(int k, int c) { return k * 32 + ((((c >> 3) ^ (k >> 1)) & 3) << 3) + (c & 7); }

/// Lane `lane`'s offset in the buffer for ldmatrix.trans / stmatrix.trans of k-step 0 at cells
/// [16 mt, 16 mt + 16): component 8 (m / 2) + lane % 8 (m = lane / 8) at cells 16 mt + 8 (m % 2),
/// so that the four matrices are registers a0 .. a3 of the m16n8k16 A operand (cells + 0..7 and
/// + 8..15, components + 0..7, then + 8..15); k-step kc lies 512 kc values on.
__device__ __forceinline__ int stream_fragment_at(unsigned lane, int mt) {
    const int m = int(lane >> 3);
    return stream_at((m >> 1) * 8 + int(lane & 7u), mt * 16 + (m & 1) * 8);
}

/// Lane `lane`'s offset for the 16-byte copies: lanes 4r .. 4r + 3 take row r's four chunks of 8
/// cells; row r + 8j lies 256 j values on (rows 8 apart rotate alike).
__device__ __forceinline__ int stream_chunk_at(unsigned lane) { return stream_at(int(lane >> 2), int(lane & 3u) * 8); }

/// Whether a tile's rows at `p` (a row every `stride` values) move as whole 16-byte chunks.
__device__ __forceinline__ bool whole_chunks(const void* p, long long stride, int valid) {
    return valid >= 32 && ((reinterpret_cast<unsigned long long>(p) | (unsigned long long)(stride * 2)) & 15u) == 0;
}

/// copy_stream's slow path (a partial tile, or rows not 16-byte aligned): loops kept rolled, so
/// that the tile loop's code stays small (no call either: one would hold the live fragments in
/// more registers; measured: 128 registers and spills at width 64, against 104 inline).
__device__ __forceinline__ void copy_stream_values(unsigned short* dst, const unsigned short* from, long long stride,
                                                   int rows, int valid, int c0) {
#pragma unroll 1
    for (int j = 0; j < rows; ++j)
#pragma unroll 1
        for (int e = 0; e < 8; ++e) dst[256 * j + e] = from[8 * j * stride + (c0 + e < valid ? c0 + e : valid - 1)];
}

/// The warp's copy of components [0, K) of 32 cells from `src` (component k at src + k stride):
/// lanes 4r .. 4r + 3 take row r's four chunks of 8 cells, rows r + 8j in turn. Whole 16-byte
/// copies where the tile is full and its rows 16-byte aligned; else value by value, the cells
/// past `valid` reading the last valid one (as the lanes past the last cell compute it again).
template <int K>
__device__ __forceinline__ void copy_stream(unsigned short* buf, const unsigned short* src, long long stride, int valid,
                                            unsigned lane) {
    const int r0 = int(lane >> 2), c0 = int(lane & 3u) * 8;
    unsigned short* dst = buf + stream_chunk_at(lane);
    const unsigned short* from = src + r0 * stride;
    if (whole_chunks(src, stride, valid)) {
#pragma unroll
        for (int j = 0; j < (K + 7) / 8; ++j)
            if (K % 8 == 0 || r0 + 8 * j < K) cp_async16(dst + 256 * j, from + 8 * j * stride + c0);
    } else {
        copy_stream_values(dst, from, stride, (K - r0 + 7) / 8, valid, c0);
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
}

/// Step 1 for streamed inputs: the operand fragments of this tile's K inputs (zeros up to KP),
/// from the buffer at the start of `tile`; then the copy of the next tile's (`next`,
/// `next_valid` > 0) is issued. At the warp's first tile (`starts`) its own copy is issued here.
template <int K, int KP, class T>
__device__ __forceinline__ void stream_inputs(unsigned (&a)[2][KP / 16][4], float* tile, const T* first, const T* second,
                                              int valid, const T* next, int next_valid, bool starts) {
    const unsigned lane = lane_id();
    unsigned short* buf = reinterpret_cast<unsigned short*>(tile);
    const long long stride = second - first;
    if (starts) {
        // Rows K .. KP - 1 stay zero: no copy writes them.
        for (int i = int(lane); i < (KP - K) * 32; i += 32) buf[K * 32 + i] = 0;
        copy_stream<K>(buf, reinterpret_cast<const unsigned short*>(first), stride, valid, lane);
    }
    asm volatile("cp.async.wait_group 0;" ::: "memory");
    __syncwarp(); // the other lanes' copies (and stores) are visible too
    const unsigned short* frag[2] = {buf + stream_fragment_at(lane, 0), buf + stream_fragment_at(lane, 1)};
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int kc = 0; kc < KP / 16; ++kc) ldmatrix_x4_trans(a[mt][kc], frag[mt] + 512 * kc);
    __syncwarp(); // every lane's fragments are read before the buffer is written again
    if (next_valid > 0) copy_stream<K>(buf, reinterpret_cast<const unsigned short*>(next), stride, next_valid, lane);
}

/// The sums of outputs [n0, n0 + 8) start at their biases (the accumulators' columns).
__device__ __forceinline__ void start_at_bias(float (&c)[2][4], const float* bias, int n0, unsigned lane) {
    const int col = n0 + 2 * int(lane & 3u);
    const float b0 = bias[col], b1 = bias[col + 1];
#pragma unroll
    for (int mt = 0; mt < 2; ++mt) {
        c[mt][0] = b0;
        c[mt][1] = b1;
        c[mt][2] = b0;
        c[mt][3] = b1;
    }
}

/// One layer's float32 sums for outputs [n0, n0 + 8) of the warp's 32 rows: c[mt] holds rows
/// mt * 16 + lane / 4 (c[mt][0], c[mt][1]) and + 8 (c[mt][2], c[mt][3]), at columns
/// n0 + 2 (lane % 4) and + 1.
template <int KP, int STRIDE, bool BF16>
__device__ __forceinline__ void sums(float (&c)[2][4], const unsigned (&a)[2][KP / 16][4],
                                     const unsigned short* w, const float* bias, int n0, unsigned lane) {
    start_at_bias(c, bias, n0, lane);
    // B fragments of 16 inputs, two k-steps per ldmatrix.x4 (its 4 matrices: 8 inputs each).
    const unsigned short* rows = w + (n0 + int(lane & 7u)) * STRIDE;
#pragma unroll
    for (int kc = 0; kc + 1 < KP / 16; kc += 2) {
        unsigned b[4];
        ldmatrix_x4(b, rows + kc * 16 + int(lane >> 3) * 8);
#pragma unroll
        for (int mt = 0; mt < 2; ++mt) {
            mma16816<BF16>(c[mt], a[mt][kc], b[0], b[1]);
            mma16816<BF16>(c[mt], a[mt][kc + 1], b[2], b[3]);
        }
    }
    if ((KP / 16) % 2 == 1) {
        constexpr int kc = KP / 16 - 1;
        unsigned b[2];
        ldmatrix_x2(b, rows + kc * 16 + int((lane >> 3) & 1u) * 8);
#pragma unroll
        for (int mt = 0; mt < 2; ++mt) mma16816<BF16>(c[mt], a[mt][kc < 0 ? 0 : kc], b[0], b[1]);
    }
}

/// Step 2: a hidden layer, KP inputs to NP outputs (NP a multiple of 16), its activations
/// rounded into the next layer's operand fragments: outputs [8t, 8t + 8) are inputs
/// [16 (t / 2) + 8 (t % 2), + 8) of the next layer, registers 2 (t % 2) and + 1 of its k-step t / 2.
template <int KP, int NP, int STRIDE, bool BF16, class Act>
__device__ __forceinline__ void hidden(const unsigned (&a)[2][KP / 16][4], unsigned (&h)[2][NP / 16][4],
                                       const void* weights, const float* bias, Act act) {
    const unsigned lane = lane_id();
    const unsigned short* w = static_cast<const unsigned short*>(weights);
#pragma unroll
    for (int t = 0; t < NP / 8; ++t) {
        float c[2][4];
        sums<KP, STRIDE, BF16>(c, a, w, bias, 8 * t, lane);
#pragma unroll
        for (int mt = 0; mt < 2; ++mt) {
            h[mt][t / 2][2 * (t % 2)] = pack<BF16>(act(c[mt][0]), act(c[mt][1]));
            h[mt][t / 2][2 * (t % 2) + 1] = pack<BF16>(act(c[mt][2]), act(c[mt][3]));
        }
    }
}

/// Step 3's chunks, float32 outputs: per CHUNK outputs (at most 32: the tile's rows are CHUNK
/// + 4 floats), `sums(c, t)` gives the sums of outputs [8t, 8t + 8), their activations go to the
/// tile, from which each lane reads its cell's outputs of the chunk (of N in all).
template <int NP, int N, class Sums, class Act>
__device__ __forceinline__ void store_floats(float (&out)[N], float* tile, Sums sums, Act act) {
    constexpr int kChunk = NP < 32 ? NP : 32, kRow = kChunk + 4;
    const unsigned lane = lane_id();
#pragma unroll
    for (int first = 0; first < NP; first += kChunk) {
#pragma unroll
        for (int t = first / 8; t < (first + kChunk) / 8 && t < NP / 8; ++t) {
            float c[2][4];
            sums(c, t);
            const int col = 8 * t - first + 2 * int(lane & 3u);
#pragma unroll
            for (int mt = 0; mt < 2; ++mt) {
                const int row = mt * 16 + int(lane >> 2);
                *reinterpret_cast<float2*>(tile + row * kRow + col) = make_float2(act(c[mt][0]), act(c[mt][1]));
                *reinterpret_cast<float2*>(tile + (row + 8) * kRow + col) = make_float2(act(c[mt][2]), act(c[mt][3]));
            }
        }
        __syncwarp();
        const float* row = tile + lane * kRow;
#pragma unroll
        for (int n = first; n < first + kChunk && n < N; n += 4) {
            const float4 v = *reinterpret_cast<const float4*>(row + (n - first));
            out[n < N ? n : 0] = v.x;
            if (n + 1 < N) out[n + 1 < N ? n + 1 : 0] = v.y;
            if (n + 2 < N) out[n + 2 < N ? n + 2 : 0] = v.z;
            if (n + 3 < N) out[n + 3 < N ? n + 3 : 0] = v.w;
        }
        __syncwarp();
    }
}

/// Step 3: the last layer, KP inputs to NP outputs (a multiple of 8) in float32.
template <int KP, int NP, int N, int STRIDE, bool BF16, class Act>
__device__ __forceinline__ void store_outputs(float (&out)[N], const unsigned (&a)[2][KP / 16][4], float* tile,
                                              const void* weights, const float* bias, Act act) {
    const unsigned lane = lane_id();
    const unsigned short* w = static_cast<const unsigned short*>(weights);
    store_floats<NP, N>(out, tile, [&](float (&c)[2][4], int t) { sums<KP, STRIDE, BF16>(c, a, w, bias, 8 * t, lane); },
                        act);
}

/// Step 3 for outputs of the operand type (narrow_chain_io): the sums rounded in pairs into the
/// tile (rows of CHUNK / 2 + 4 words), each lane reads its cell's values of the chunk.
template <int KP, int NP, int N, int STRIDE, bool BF16, class Act, class T>
__device__ __forceinline__ void store_outputs(T (&out)[N], const unsigned (&a)[2][KP / 16][4], float* tile,
                                              const void* weights, const float* bias, Act act) {
    constexpr int kChunk = NP < 32 ? NP : 32, kRow = kChunk / 2 + 4;
    const unsigned lane = lane_id();
    const unsigned short* w = static_cast<const unsigned short*>(weights);
    unsigned* words = reinterpret_cast<unsigned*>(tile);
#pragma unroll
    for (int first = 0; first < NP; first += kChunk) {
#pragma unroll
        for (int t = first / 8; t < (first + kChunk) / 8 && t < NP / 8; ++t) {
            float c[2][4];
            sums<KP, STRIDE, BF16>(c, a, w, bias, 8 * t, lane);
            const int col = (8 * t - first) / 2 + int(lane & 3u);
#pragma unroll
            for (int mt = 0; mt < 2; ++mt) {
                const int row = mt * 16 + int(lane >> 2);
                words[row * kRow + col] = pack<BF16>(act(c[mt][0]), act(c[mt][1]));
                words[(row + 8) * kRow + col] = pack<BF16>(act(c[mt][2]), act(c[mt][3]));
            }
        }
        __syncwarp();
        const unsigned* row = words + lane * kRow;
#pragma unroll
        for (int n = first; n < first + kChunk && n < N; n += 8) {
            const uint4 v = *reinterpret_cast<const uint4*>(row + (n - first) / 2);
            const unsigned q[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int p = 0; p < 8; ++p)
                if (n + p < N) out[n + p < N ? n + p : 0].bits = (unsigned short)(p % 2 ? q[p / 2] >> 16 : q[p / 2] & 0xffffu);
        }
        __syncwarp();
    }
}

/// The inverse of ldmatrix_x4_trans (stmatrix: sm_90): the A-shaped fragment of
/// [cell][component] stored as [component][cell] rows.
__device__ __forceinline__ void stmatrix_x4_trans(void* p, const unsigned (&r)[4]) {
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1,%2,%3,%4};" ::"r"(shared_address(p)),
                 "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
                 : "memory");
}

/// Rows [0, 16) x cells [16 mt, 16 mt + 16) of the [component][32 cells] buffer from the
/// A-shaped fragment `f` of those cells (registers: cells +0..7 / +8..15 of components +0..7,
/// then of +8..15; lane l holds cell l / 4 of each and components 2 (l % 4) and + 1).
/// `frag` is the lane's ldmatrix / stmatrix address for them.
__device__ __forceinline__ void store_fragment_rows(unsigned short* buf, unsigned short* frag, const unsigned (&f)[4],
                                                    int mt, unsigned lane) {
#if __CUDA_ARCH__ >= 900
    stmatrix_x4_trans(frag, f);
#else
    // Before sm_90, value by value (the same layout; bank conflicts do not matter here).
    const int cell = mt * 16 + int(lane >> 2), k = 2 * int(lane & 3u);
#pragma unroll
    for (int i = 0; i < 4; ++i) {
        const int c = cell + 8 * (i % 2), r = k + 8 * (i / 2);
        buf[stream_at(r, c)] = (unsigned short)(f[i] & 0xffffu);
        buf[stream_at(r + 1, c)] = (unsigned short)(f[i] >> 16);
    }
#endif
}

/// stream_outputs' slow path: the first `count` (up to 8) values of a chunk, a rolled loop.
__device__ __forceinline__ void store_stream_values(unsigned short* to, const unsigned short* from, int count) {
#pragma unroll 1
    for (int e = 0; e < 8 && e < count; ++e) to[e] = from[e];
}

/// Step 3 for streamed outputs (MmaChainNode::stream): the last layer, KP inputs to NP outputs
/// (a multiple of 8), N of them stored as 16-bit values of the operand type to the field at
/// `first` (component n at first + n stride). Per 16 outputs, the two m16n8 accumulators'
/// values rounded in pairs are, register for register, an A-shaped fragment (cells x outputs,
/// as `hidden` packs them), which stmatrix.trans writes as 16 [output][32 cells] rows of the
/// tile (the layout of the streamed inputs); each lane then stores 16-byte chunks of two rows.
/// Whole chunks where the tile is full and its rows 16-byte aligned; else value by value, the
/// cells before `valid` only.
template <int KP, int NP, int N, int STRIDE, bool BF16, class Act, class T>
__device__ __forceinline__ void stream_outputs(const unsigned (&a)[2][KP / 16][4], float* tile, const void* weights,
                                               const float* bias, Act act, T* first, T* second, int valid) {
    const unsigned lane = lane_id();
    const unsigned short* w = static_cast<const unsigned short*>(weights);
    unsigned short* buf = reinterpret_cast<unsigned short*>(tile);
    unsigned short* dst = reinterpret_cast<unsigned short*>(first);
    const long long stride = second - first;
    const bool whole = whole_chunks(dst, stride, valid);
    unsigned short* frag[2] = {buf + stream_fragment_at(lane, 0), buf + stream_fragment_at(lane, 1)};
    const int r0 = int(lane >> 2), c0 = int(lane & 3u) * 8;
    const unsigned short* mine = buf + stream_chunk_at(lane); // rows r0 and r0 + 8 (256 values on)
#pragma unroll
    for (int n0 = 0; n0 < NP; n0 += 16) {
        float lo[2][4], hi[2][4] = {}; // outputs n0 + 0..7, n0 + 8..15 (none past NP)
        sums<KP, STRIDE, BF16>(lo, a, w, bias, n0, lane);
        if (n0 + 8 < NP) sums<KP, STRIDE, BF16>(hi, a, w, bias, n0 + 8, lane);
#pragma unroll
        for (int mt = 0; mt < 2; ++mt) {
            const unsigned f[4] = {pack<BF16>(act(lo[mt][0]), act(lo[mt][1])), pack<BF16>(act(lo[mt][2]), act(lo[mt][3])),
                                   pack<BF16>(act(hi[mt][0]), act(hi[mt][1])), pack<BF16>(act(hi[mt][2]), act(hi[mt][3]))};
            store_fragment_rows(buf, frag[mt], f, mt, lane);
        }
        __syncwarp();
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            const int n = n0 + r0 + 8 * j;
            if (n >= N) continue;
            unsigned short* to = dst + n * stride + c0;
            if (whole)
                *reinterpret_cast<uint4*>(to) = *reinterpret_cast<const uint4*>(mine + 256 * j);
            else
                store_stream_values(to, mine + 256 * j, valid - c0);
        }
        __syncwarp(); // every lane has read the rows before the next 16 are written
    }
}

/// tf32 operands (Schedule::tensor_cores = TF32): mma.sync m16n8k8 on float32 values rounded to
/// 10 bits of mantissa (cvt.rna: to nearest, ties away from zero), float32 sums. In each k-step
/// of 8, both operands take their columns in the order 0, 4, 1, 5, 2, 6, 3, 7: the two values a
/// lane holds (PTX: columns t and t + 4, t = lane % 4) are then the adjacent columns 2t and
/// 2t + 1, one 64-bit load from the tile or the weights, and a layer's accumulators for 8
/// outputs (columns 2t and 2t + 1 of rows g and g + 8, g = lane / 4) are the next layer's operand
/// registers of that k-step as they are. The sum over a k-step does not depend on the order.
/// Rows of STRIDE floats, 8 modulo 16, so that a half-warp's 64-bit loads (4 rows, 4 pairs
/// each) cover the 32 banks once. Fragment layouts: PTX ISA, "Matrix Fragments for
/// mma.m16n8k8" (.tf32).
namespace tf32 {

__device__ __forceinline__ unsigned to_tf32(float v) {
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(v));
    return r;
}

/// `v` rounded to tf32, as a float: the staged weights (the printers' round_tf32).
__device__ __forceinline__ float rounded(float v) { return __uint_as_float(to_tf32(v)); }

__device__ __forceinline__ void mma1688(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
                 "{%0,%1,%2,%3};"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/// Step 1: each lane writes its cell's K inputs, rounded, then zeros up to KP, as row `lane` of
/// the tile; the warp reads its operand fragments back.
template <int K, int KP, int STRIDE>
__device__ __forceinline__ void load_inputs(unsigned (&a)[2][KP / 8][4], float* tile, const float (&in)[K]) {
    const unsigned lane = lane_id();
    auto value = [&](int k) { return k < K ? __uint_as_float(to_tf32(in[k < K ? k : 0])) : 0.0f; };
    float4* mine = reinterpret_cast<float4*>(tile + lane * STRIDE);
#pragma unroll
    for (int j = 0; j < KP; j += 4) mine[j / 4] = make_float4(value(j), value(j + 1), value(j + 2), value(j + 3));
    __syncwarp();
    const float* pairs = tile + int(lane >> 2) * STRIDE + 2 * int(lane & 3u);
#pragma unroll
    for (int mt = 0; mt < 2; ++mt)
#pragma unroll
        for (int kc = 0; kc < KP / 8; ++kc) {
            const float2 lo = *reinterpret_cast<const float2*>(pairs + mt * 16 * STRIDE + kc * 8);
            const float2 hi = *reinterpret_cast<const float2*>(pairs + (mt * 16 + 8) * STRIDE + kc * 8);
            a[mt][kc][0] = __float_as_uint(lo.x);
            a[mt][kc][1] = __float_as_uint(hi.x);
            a[mt][kc][2] = __float_as_uint(lo.y);
            a[mt][kc][3] = __float_as_uint(hi.y);
        }
    __syncwarp();
}

/// One layer's float32 sums for outputs [n0, n0 + 8), as the 16-bit sums: the weights' rows
/// (staged [n][k], tf32 values in float32: rounded once, as the block staged them).
template <int KP, int STRIDE>
__device__ __forceinline__ void sums(float (&c)[2][4], const unsigned (&a)[2][KP / 8][4], const float* w,
                                     const float* bias, int n0, unsigned lane) {
    start_at_bias(c, bias, n0, lane);
    const float* pairs = w + (n0 + int(lane >> 2)) * STRIDE + 2 * int(lane & 3u);
#pragma unroll
    for (int kc = 0; kc < KP / 8; ++kc) {
        const float2 b = *reinterpret_cast<const float2*>(pairs + kc * 8);
        const unsigned b0 = __float_as_uint(b.x), b1 = __float_as_uint(b.y);
#pragma unroll
        for (int mt = 0; mt < 2; ++mt) mma1688(c[mt], a[mt][kc], b0, b1);
    }
}

/// Step 2: a hidden layer, KP inputs to NP outputs (a multiple of 8), its activations rounded
/// into the next layer's operand fragments: outputs [8t, 8t + 8) are its k-step t.
template <int KP, int NP, int STRIDE, class Act>
__device__ __forceinline__ void hidden(const unsigned (&a)[2][KP / 8][4], unsigned (&h)[2][NP / 8][4],
                                       const void* weights, const float* bias, Act act) {
    const unsigned lane = lane_id();
    const float* w = static_cast<const float*>(weights);
#pragma unroll
    for (int t = 0; t < NP / 8; ++t) {
        float c[2][4];
        sums<KP, STRIDE>(c, a, w, bias, 8 * t, lane);
#pragma unroll
        for (int mt = 0; mt < 2; ++mt) {
            h[mt][t][0] = to_tf32(act(c[mt][0]));
            h[mt][t][1] = to_tf32(act(c[mt][2]));
            h[mt][t][2] = to_tf32(act(c[mt][1]));
            h[mt][t][3] = to_tf32(act(c[mt][3]));
        }
    }
}

/// Step 3: the last layer, KP inputs to NP outputs (a multiple of 8) in float32.
template <int KP, int NP, int N, int STRIDE, class Act>
__device__ __forceinline__ void store_outputs(float (&out)[N], const unsigned (&a)[2][KP / 8][4], float* tile,
                                              const void* weights, const float* bias, Act act) {
    const unsigned lane = lane_id();
    const float* w = static_cast<const float*>(weights);
    store_floats<NP, N>(out, tile, [&](float (&c)[2][4], int t) { sums<KP, STRIDE>(c, a, w, bias, 8 * t, lane); }, act);
}

} // namespace tf32

// ---- Staged weights (MmaChainNode::weights) ---------------------------------------------------
// The block copies a layer's weights [OUT][IN] (row-major, as nn::Weights holds them) once, into
// ROWS rows of STRIDE values of the operand type, zeros in the padding. Four float32 weights a
// 16-byte load and one 8- or 16-byte store (16-bit weights of the operand type: eight a 16-byte
// copy), four loads in flight a thread. One value at a time, each thread of a block staging four
// layers of 128 waited on 272 L2 reads in turn, a fifth of the width-128 MLP's time (H200:
// 0.4545 -> 0.3840 ms, docs/performance.md, 2026-11-29).

/// Four staged values at `p` (16-bit operands: 8 bytes, rounded to nearest even as loom::to_half
/// and loom::to_bfloat16 round; tf32: 16 bytes, rounded as the printers' round_tf32).
__device__ __forceinline__ void store_staged(half* p, float4 v) {
    *reinterpret_cast<uint2*>(p) = make_uint2(pack<false>(v.x, v.y), pack<false>(v.z, v.w));
}
__device__ __forceinline__ void store_staged(bfloat16* p, float4 v) {
    *reinterpret_cast<uint2*>(p) = make_uint2(pack<true>(v.x, v.y), pack<true>(v.z, v.w));
}
__device__ __forceinline__ void store_staged(float* p, float4 v) {
    *reinterpret_cast<float4*>(p) = make_float4(tf32::rounded(v.x), tf32::rounded(v.y), tf32::rounded(v.z),
                                                tf32::rounded(v.w));
}
__device__ __forceinline__ void store_staged(half* p, float v) {
    *reinterpret_cast<unsigned short*>(p) = (unsigned short)(pack<false>(v, 0.0f) & 0xffffu);
}
__device__ __forceinline__ void store_staged(bfloat16* p, float v) {
    *reinterpret_cast<unsigned short*>(p) = (unsigned short)(pack<true>(v, 0.0f) & 0xffffu);
}
__device__ __forceinline__ void store_staged(float* p, float v) { *p = tf32::rounded(v); }

/// A weight as float32, as the IR widens it before rounding (16-bit weights exactly; float64
/// ones rounded to float32 first: the staged value is what the CPU target computes).
__device__ __forceinline__ float staged_float(float v) { return v; }
__device__ __forceinline__ float staged_float(double v) { return float(v); }
template <class S>
__device__ __forceinline__ float staged_float(S v) { return to_float(v); } // loom::half, loom::bfloat16

template <class A, class B>
struct same_type {
    static constexpr bool value = false;
};
template <class A>
struct same_type<A, A> {
    static constexpr bool value = true;
};

/// f(e) for e in [0, n), split over the block's threads, four in flight a thread. Every block
/// reads the same weights: each starts at its own 16th of them (blockIdx.x % 16), so that the
/// SMs' first reads do not all wait on the same L2 lines (H200, width 128: 0.373 -> 0.358 ms).
template <class F>
__device__ __forceinline__ void staging_loop(int n, int rank, int count, F f) {
    const int first = int(blockIdx.x % 16u) * (n / 16);
#pragma unroll 4
    for (int i = rank; i < n; i += count) f(i + first < n ? i + first : i + first - n);
}

/// The block's copy of one layer's weights `w` into `dst` (the cooperative loop of
/// stage_layer_weights, `rank` and `count` the thread's rank in the block and the block's size).
template <int OUT, int IN, int ROWS, int STRIDE, class T, class S>
__device__ __forceinline__ void stage_weights(T* dst, const S* w, int rank, int count) {
    static_assert(IN <= STRIDE && OUT <= ROWS && STRIDE % 4 == 0, "a staged row holds the layer's inputs");
    const bool aligned = (reinterpret_cast<unsigned long long>(w) & 15u) == 0;
    if (same_type<S, float>::value && IN % 4 == 0 && aligned) {
        constexpr int Q = IN / 4 > 0 ? IN / 4 : 1; // 16-byte chunks a row
        const float4* w4 = reinterpret_cast<const float4*>(w);
        staging_loop(OUT * Q, rank, count, [&](int c) { store_staged(dst + c / Q * STRIDE + c % Q * 4, __ldg(w4 + c)); });
    } else if (sizeof(S) == 2 && same_type<S, T>::value && IN % 8 == 0 && aligned) {
        // 16-bit weights of the operand type: copied as they are, eight a load.
        constexpr int Q = IN / 8 > 0 ? IN / 8 : 1;
        const uint4* w8 = reinterpret_cast<const uint4*>(w);
        staging_loop(OUT * Q, rank, count,
                     [&](int c) { *reinterpret_cast<uint4*>(dst + c / Q * STRIDE + c % Q * 8) = __ldg(w8 + c); });
    } else {
        staging_loop(OUT * IN, rank, count,
                     [&](int e) { store_staged(dst + e / IN * STRIDE + e % IN, staged_float(w[e])); });
    }
    // Zeros past the inputs in each row, then in the rows past the outputs.
    constexpr int kPad = STRIDE - IN, kPadRow = kPad > 0 ? kPad : 1;
    for (int i = rank; i < OUT * kPad; i += count) store_staged(dst + i / kPadRow * STRIDE + IN + i % kPadRow, 0.0f);
    for (int i = rank; i < (ROWS - OUT) * STRIDE; i += count) store_staged(dst + OUT * STRIDE + i, 0.0f);
}

} // namespace mma
} // namespace loom
