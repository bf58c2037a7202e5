#include "compiler/passes/stage_layer_weights.hpp"

#include "compiler/ir/visitor.hpp"
#include "compiler/passes/choose_schedule.hpp"
#include "compiler/passes/lower_layers.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <vector>

namespace loom::ir {

namespace {

Expr int32(std::int64_t v) { return ConstNode::make_int(ScalarType::Int32, v); }
Expr binary(BinaryOp op, Expr a, Expr b) { return BinaryNode::make(op, std::move(a), std::move(b)); }
/// A weight or bias as float32 (16-bit weight arrays widen, exactly).
Expr float32(const Expr& e) { return e.type() == ScalarType::Float32 ? e : CastNode::make(ScalarType::Float32, e); }

/// The end of the dynamic shared arrays `body` allocates already.
std::size_t dynamic_end(const Stmt& body) {
    struct Find : IRVisitor {
        std::size_t end = 0;
        void visit_Allocate(const AllocateNode* a) override {
            const BufferInfo& b = *a->buffer;
            if (b.scope == Scope::Shared && !b.static_shared && !b.grid_scratch)
                end = std::max(end, b.shared_offset + std::size_t(b.size()) * std::size_t(bit_width(b.type) / 8));
            IRVisitor::visit_Allocate(a);
        }
    } f;
    f.visit(body);
    return f.end;
}

class Stager : public IRMutator {
public:
    Stager(const std::map<const FieldInfo*, BufferPtr>& globals, int warps, std::size_t offset)
        : globals_(globals), warps_(warps), used_(offset) {}

    StmtList copies;
    std::set<const FieldInfo*> fields;
    std::size_t used_;
    std::size_t tile_bytes_ = 0;    ///< the warps' tile, which every chain shares
    std::vector<std::string> sizes; ///< "weights 36864 bytes", for the budget's error

protected:
    // Chains that use the same layer (one network applied to several inputs) share its staged
    // arrays, and every chain the warps' tile (a warp runs its chains one after another; each
    // ends reading the tile before a __syncwarp): sized once, for the largest.
    Stmt visit_MmaChain(const MmaChainNode* n, const Stmt& self) override {
        if (!n->weights.empty()) return self;
        std::vector<BufferPtr> weights, biases;
        for (std::size_t l = 0; l < n->layers.size(); ++l) {
            const DenseLayer& layer = n->layers[l];
            const StagedWeightKey w = staged_weight_key(*n, l);
            if (!staged_weights_.count(w))
                staged_weights_[w] = stage_weights(layer, n->operand, n->n_pad(l), n->row_stride(l));
            weights.push_back(staged_weights_[w]);
            const StagedBiasKey b = staged_bias_key(*n, l);
            if (!staged_biases_.count(b)) staged_biases_[b] = stage_bias(layer, n->n_pad(l));
            biases.push_back(staged_biases_[b]);
        }
        if (warps_ > 0 && !tile_) {
            tile_ = place(make_buffer("layer_tiles", ScalarType::Float32, Scope::Shared,
                                      {std::int64_t(warps_) * largest_tile_floats_}));
            copies.allocate(tile_);
            sizes.push_back(fmt::format("the tiles of {} warps {} bytes", warps_, tile_->size() * 4));
            tile_bytes_ = std::size_t(tile_->size()) * 4;
        }
        return MmaChainNode::make(n->output, n->input, n->layers, n->operand, std::move(weights),
                                  std::move(biases), tile_, n->stream);
    }

private:
    std::shared_ptr<BufferInfo> place(std::shared_ptr<BufferInfo> a) {
        a->shared_offset = (used_ + 15) / 16 * 16;
        a->static_shared = false;
        used_ = a->shared_offset + std::size_t(a->size()) * std::size_t(bit_width(a->type) / 8);
        return a;
    }
    const BufferPtr& global(const FieldPtr& f) {
        fields.insert(f.get());
        return globals_.at(f.get());
    }

    /// W_mma[k] = round(W[k / stride][k % stride]) inside the layer, 0 in the padding (tf32: the
    /// cast keeps float32; the printers round what is stored to a tf32 chain's weights).
    BufferPtr stage_weights(const DenseLayer& l, ScalarType operand, int rows, int stride) {
        auto a = place(make_buffer(l.weight_field->name + "_mma", operand, Scope::Shared,
                                   {std::int64_t(rows) * stride}));
        Expr k = VarNode::make(ScalarType::Int32, "k", VarRole::LoopIndex);
        Expr n = binary(BinaryOp::Div, k, int32(stride)), j = binary(BinaryOp::Mod, k, int32(stride));
        Expr inside = binary(BinaryOp::And, binary(BinaryOp::Lt, n, int32(l.outputs)),
                             binary(BinaryOp::Lt, j, int32(l.inputs)));
        Expr w = float32(BufferLoadNode::make(global(l.weight_field),
                                              binary(BinaryOp::Add, binary(BinaryOp::Mul, n, int32(l.inputs)), j)));
        Expr value = CastNode::make(operand, SelectNode::make(inside, w, ConstNode::make(ScalarType::Float32, 0.0)));
        const std::string how = operand == ScalarType::Float32 ? "rounded to tf32 (as float32)"
                                                               : "rounded to " + std::string(type_name(operand));
        copy(a, k, value, fmt::format("{} {}, {} rows of {} ({} padded)", l.weight_field->name, how, rows, stride,
                                      l.inputs));
        return a;
    }
    /// b_mma[k] = b[k] for the layer's outputs, 0 in the padding (and everywhere without a bias).
    BufferPtr stage_bias(const DenseLayer& l, int rows) {
        const std::string name = l.bias_field ? l.bias_field->name : l.weight_field->name + "_bias";
        auto a = place(make_buffer(name + "_mma", ScalarType::Float32, Scope::Shared, {rows}));
        Expr k = VarNode::make(ScalarType::Int32, "k", VarRole::LoopIndex);
        Expr zero = ConstNode::make(ScalarType::Float32, 0.0);
        Expr value = l.bias_field ? SelectNode::make(binary(BinaryOp::Lt, k, int32(l.outputs)),
                                                     float32(BufferLoadNode::make(global(l.bias_field), k)), zero)
                                  : zero;
        copy(a, k, value, fmt::format("{} ({} padded to {})", l.bias_field ? l.bias_field->name : "no bias: zeros",
                                      l.outputs, rows));
        return a;
    }
    void copy(const BufferPtr& a, const Expr& k, const Expr& value, const std::string& what) {
        const std::size_t bytes = std::size_t(a->size()) * std::size_t(bit_width(a->type) / 8);
        sizes.push_back(fmt::format("{} {} bytes", a->name, bytes));
        copies.add(CommentNode::make(fmt::format("stage {} in shared memory ({} bytes)", what, bytes)));
        copies.allocate(a);
        copies.add(ForNode::make(k, int32(0), int32(a->size()), int32(1), BufferStoreNode::make(a, k, value), -1,
                                 ForKind::Cooperative));
    }

    const std::map<const FieldInfo*, BufferPtr>& globals_;
    const int warps_;
    std::map<StagedWeightKey, BufferPtr> staged_weights_;
    std::map<StagedBiasKey, BufferPtr> staged_biases_;
    BufferPtr tile_;

public:
    std::int64_t largest_tile_floats_ = 0; ///< over the body's chains, set before mutating
};

} // namespace

StagedLayers stage_layer_weights(const Stmt& body, const std::map<const FieldInfo*, BufferPtr>& globals,
                                 int warps, std::size_t budget, const std::string& kernel) {
    StagedLayers out;
    const std::size_t start = dynamic_end(body);
    Stager stager(globals, warps, start);
    stager.largest_tile_floats_ = mma_chain_sizes(body).tile_bytes / 4;
    Stmt staged = stager.mutate(body);
    if (staged.same_as(body)) {
        out.body = body;
        return out;
    }
    out.bytes = stager.used_ - start;
    if (stager.used_ > budget) {
        // What to change depends on what does not fit: the weights in any block, the warps'
        // tiles beside them, or only the budget asked for.
        const std::size_t fixed = stager.used_ - stager.tile_bytes_; // other arrays, weights, biases
        const std::size_t per_warp = stager.tile_bytes_ / std::size_t(std::max(warps, 1));
        const std::size_t most = std::min(budget, kMaxSharedMemoryPerBlock);
        std::string fix;
        if (fixed - start > kMaxSharedMemoryPerBlock)
            fix = fmt::format("the weights and biases alone take {} bytes, and a block's shared memory holds at "
                              "most {} on sm_90: split the chain into kernels whose layers fit (one's outputs a "
                              "field the next reads), narrow its layers, or leave tensor_cores unset",
                              fixed - start, kMaxSharedMemoryPerBlock);
        else if (fixed + per_warp > kMaxSharedMemoryPerBlock)
            fix = fmt::format("the weights and biases ({} bytes) with one warp's tile ({} bytes){} do not fit a "
                              "block's shared memory (at most {} on sm_90): split the chain into kernels whose "
                              "layers fit, narrow its layers, or leave tensor_cores unset",
                              fixed - start, per_warp, start > 0 ? " and the other shared arrays" : "",
                              kMaxSharedMemoryPerBlock);
        else if (fixed + per_warp > budget)
            fix = fmt::format("raise the budget (up to {} bytes on sm_90), or narrow the layers",
                              kMaxSharedMemoryPerBlock);
        else
            fix = fmt::format("use a block of at most {} warps{}, or narrower layers",
                              (most - fixed) / std::max<std::size_t>(per_warp, 1),
                              budget < kMaxSharedMemoryPerBlock
                                  ? fmt::format(", raise the budget (up to {} bytes on sm_90)", kMaxSharedMemoryPerBlock)
                                  : "");
        throw UserError(fmt::format(
            "kernel '{}' computes its layers on tensor cores (Schedule::tensor_cores), whose shared "
            "arrays take {} bytes ({}{}), more than the {} bytes of Schedule::shared_memory_budget; {}",
            kernel, out.bytes, fmt::join(stager.sizes, ", "),
            start > 0 ? fmt::format(", after {} bytes of other shared arrays", start) : "", budget, fix));
    }
    stager.copies.add(BarrierNode::make());
    stager.copies.add(staged);
    out.body = stager.copies.build();
    out.fields = std::move(stager.fields);
    return out;
}

} // namespace loom::ir
