// Lowering of layer statements: each Dense becomes loops over local arrays, in a form chosen by
// the layer's size (a schedule heuristic, the same for both targets).
#pragma once

#include "compiler/ir/ir.hpp"

#include <string>
#include <tuple>
#include <vector>

namespace loom::ir {

/// The forms of a Dense layer with runtime weights; each computes out_i = act(b_i + sum_j
/// W_ij in_j), j ascending, so both give the same results bit for bit.
///
/// - Unrolled, for at most `unroll_limit` weights (inputs x outputs):
///   `for i unrolled: out[i] = b[i]; for j unrolled: out[i] += W[i][j] * in[j]; out[i] = act(out[i])`.
///   Every product is its own instruction with constant indices: the fastest form for small
///   layers (the width 4, 16 and 32 benchmarks, docs/performance.md), but NVRTC's time grows
///   with the weights (a chain of four 64 x 64 layers took 11 s).
/// - Outer product, for wider layers: an accumulator array `<out>_acc` (registers: it is only
///   indexed by constants once the row loops are unrolled), then per tile of at most
///   `row_tile` outputs `for j rolled: for i unrolled: acc[i] += W[i][j] * in[j]`, then
///   `for i unrolled: out[i] = act(acc[i])`. The input loop stays a loop (`#pragma unroll 1`),
///   so the code grows with the outputs, not with the weights: the four 64 x 64 layers compile
///   in about 0.5 s. `in` is read with a variable index (local memory, one load per input), the
///   weights come from shared memory with every thread of a block at the same address. The
///   tiles bound the live accumulators, hence the registers, of layers wider than `row_tile`.
///
/// Constant weights (a Dense node the frontend does not make today: constant layers stay
/// expressions, see docs/architecture.md) are unrolled into one sum per output, in runs of 64
/// products, whatever the size.
///
/// Tensor cores (`tensor_operand` Float16, BFloat16 or Float32 for tf32, Schedule::tensor_cores): each run of
/// consecutive float32 Dense statements with runtime weights, each reading the one before and
/// its array read by nothing else, becomes one MmaChain statement, whose intermediate arrays
/// are no longer allocated.
struct LayerLowering {
    long long unroll_limit = 32 * 32;
    int row_tile = 64;
    std::optional<ScalarType> tensor_operand;
};

/// Replaces every Dense statement of `body` (a block, as analyze_kernel builds it) by its
/// loops, spliced into the block. Returns `body` itself when it holds no Dense statement.
Stmt lower_layers(const Stmt& body, const LayerLowering& options = {});

/// The widest layer a tensor-core chain takes, inputs and outputs: the warp holds a layer's
/// inputs and outputs as fragments in registers (2 x 4 x width / 16 per lane each).
inline constexpr int kMaxTensorCoreWidth = 256;
/// The widest layer a chain takes: kMaxTensorCoreWidth, or half that for tf32 operands (float32
/// fragments take twice the registers).
inline int max_tensor_core_width(ScalarType operand) {
    return operand == ScalarType::Float32 ? kMaxTensorCoreWidth / 2 : kMaxTensorCoreWidth;
}
/// "layer l0_W has 300 inputs" for each layer of an MmaChain in `body` wider than that.
std::vector<std::string> tensor_core_width_errors(const Stmt& body);

/// What identifies layer `l` of a chain's staged weights (the field, the operand type, rows and
/// stride) and biases (the bias field, or the weights' where there is none, and rows): chains that
/// use the same layer share its staged arrays (stage_layer_weights).
using StagedWeightKey = std::tuple<const FieldInfo*, ScalarType, int, int>;
using StagedBiasKey = std::tuple<const FieldInfo*, bool, int>;
inline StagedWeightKey staged_weight_key(const MmaChainNode& c, std::size_t l) {
    return {c.layers[l].weight_field.get(), c.operand, c.n_pad(l), c.row_stride(l)};
}
inline StagedBiasKey staged_bias_key(const MmaChainNode& c, std::size_t l) {
    const DenseLayer& layer = c.layers[l];
    return {layer.bias_field ? layer.bias_field.get() : layer.weight_field.get(), layer.bias_field != nullptr,
            c.n_pad(l)};
}

/// What the MmaChain statements of a body take: the schedule sizes blocks and tiles by it.
struct MmaChainSizes {
    int chains = 0;
    std::int64_t weight_bytes = 0; ///< their staged weights and padding, each layer once
    std::int64_t staged_bytes = 0; ///< the weights and biases as staged (16-byte aligned arrays)
    std::int64_t tile_bytes = 0;   ///< one warp's tile, which all chains share (the largest)
    /// tile_bytes, were every chain whose inputs may stream to stream (choose_schedule's bound,
    /// before converge_warps decides)
    std::int64_t largest_tile_bytes = 0;
    int widest = 0; ///< the widest layer's padded inputs or outputs, tf32 ones twice (registers)
};
MmaChainSizes mma_chain_sizes(const Stmt& body);
/// The number of MmaChain statements in `body`.
inline int count_mma_chains(const Stmt& body) { return mma_chain_sizes(body).chains; }

} // namespace loom::ir
