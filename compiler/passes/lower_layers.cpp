#include "compiler/passes/lower_layers.hpp"

#include "compiler/ir/visitor.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace loom::ir {

namespace {

Expr int32(std::int64_t v) { return ConstNode::make_int(ScalarType::Int32, v); }
Expr add(const Expr& a, const Expr& b) { return BinaryNode::make(BinaryOp::Add, a, b); }
Expr mul(const Expr& a, const Expr& b) { return BinaryNode::make(BinaryOp::Mul, a, b); }

/// `e` with the variable `from` replaced by `to`.
class Substitute : public IRMutator {
public:
    Substitute(const Expr& from, const Expr& to) : from_(from), to_(to) {}

protected:
    Expr visit_Var(const VarNode*, const Expr& self) override {
        return self.same_as(from_) ? to_ : self;
    }

private:
    const Expr &from_, &to_;
};

class LayerLowerer {
public:
    LayerLowerer(const DenseNode* n, const LayerLowering& o) : n_(n), l_(n->layer), o_(o) {}

    /// The statements that replace the Dense statement, in order.
    std::vector<Stmt> run() {
        if (!l_.runtime_weights()) return constant_weights();
        if (std::int64_t(l_.outputs) * l_.inputs <= o_.unroll_limit) return {unrolled()};
        return outer_product();
    }

private:
    static Expr loop_var(const char* name) {
        return VarNode::make(ScalarType::Int32, name, VarRole::LoopIndex);
    }
    static Stmt loop(const Expr& var, std::int64_t start, std::int64_t stop, Stmt body, ForKind kind) {
        return ForNode::make(var, int32(start), int32(stop), int32(1), std::move(body), -1, kind);
    }
    Expr in(const Expr& j) const { return BufferLoadNode::make(n_->input, j); }
    /// A weight or bias as the layer computes with it (16-bit arrays widen).
    Expr widened(const Expr& e) const { return e.type() == l_.type ? e : CastNode::make(l_.type, e); }
    Expr weight(const Expr& i, const Expr& j) const {
        return widened(FieldAccessNode::make_absolute(l_.weight_field, {i, j}, {}));
    }
    Expr bias(const Expr& i) const {
        return l_.bias_field ? widened(FieldAccessNode::make_absolute(l_.bias_field, {i}, {}))
                             : ConstNode::make(l_.type, 0.0);
    }
    Expr act(const Expr& sum) const {
        const LayerActivation& a = l_.activation;
        return a.identity() ? sum : Substitute(a.input, sum).mutate(a.value);
    }

    /// out[i] = b[i]; out[i] += W[i][j] * in[j] for j ascending; out[i] = act(out[i]).
    Stmt unrolled() const {
        const BufferPtr& out = n_->output;
        Expr i = loop_var("i"), j = loop_var("j");
        Expr out_i = BufferLoadNode::make(out, i);
        std::vector<Stmt> row{BufferStoreNode::make(out, i, bias(i))};
        Stmt dot = BufferStoreNode::make(out, i, add(out_i, mul(weight(i, j), in(j))));
        row.push_back(loop(j, 0, l_.inputs, dot, ForKind::Unrolled));
        if (!l_.activation.identity()) row.push_back(BufferStoreNode::make(out, i, act(out_i)));
        return loop(i, 0, l_.outputs, BlockNode::make(std::move(row)), ForKind::Unrolled);
    }

    /// acc[i] = b[i]; per tile of outputs, for j (a loop): acc[i] += W[i][j] * in[j];
    /// out[i] = act(acc[i]).
    std::vector<Stmt> outer_product() const {
        const BufferPtr accumulators = make_buffer(n_->output->name + "_acc", l_.type, Scope::Local, {l_.outputs});
        std::vector<Stmt> out;
        Expr i = loop_var("i");
        out.push_back(loop(i, 0, l_.outputs, BufferStoreNode::make(accumulators, i, bias(i)),
                           ForKind::Unrolled));
        const int tile = std::max(1, o_.row_tile);
        for (int first = 0; first < l_.outputs; first += tile) {
            Expr j = loop_var("j"), r = loop_var("i");
            Expr sum = add(BufferLoadNode::make(accumulators, r), mul(weight(r, j), in(j)));
            Stmt rows = loop(r, first, std::min(first + tile, l_.outputs),
                             BufferStoreNode::make(accumulators, r, sum), ForKind::Unrolled);
            out.push_back(loop(j, 0, l_.inputs, rows, ForKind::Rolled));
        }
        Expr k = loop_var("i");
        out.push_back(loop(k, 0, l_.outputs,
                           BufferStoreNode::make(n_->output, k,
                                                act(BufferLoadNode::make(accumulators, k))),
                           ForKind::Unrolled));
        return {AllocateNode::make(accumulators, BlockNode::make(std::move(out)))};
    }

    /// out[i] = act(b_i + c_i0 in[0] + c_i1 in[1] + ...), a statement per run of 64 products
    /// (so no sum nests deeper than that), the constants of the layer's type.
    std::vector<Stmt> constant_weights() const {
        constexpr int kRun = 64;
        const BufferPtr& out = n_->output;
        auto c = [&](double v) { return ConstNode::make(l_.type, v); };
        std::vector<Stmt> stmts;
        for (int i = 0; i < l_.outputs; ++i) {
            Expr out_i = BufferLoadNode::make(out, int32(i));
            Expr sum = l_.bias.empty() ? Expr() : c(l_.bias[std::size_t(i)]);
            for (int j = 0; j < l_.inputs; ++j) {
                if (j > 0 && j % kRun == 0) {
                    stmts.push_back(BufferStoreNode::make(out, int32(i), sum));
                    sum = out_i;
                }
                Expr term = mul(c(l_.weights[std::size_t(i) * std::size_t(l_.inputs) + std::size_t(j)]),
                                in(int32(j)));
                sum = sum.defined() ? add(sum, term) : term;
            }
            stmts.push_back(BufferStoreNode::make(out, int32(i), act(sum)));
        }
        return stmts;
    }

    const DenseNode* n_;
    const DenseLayer& l_;
    const LayerLowering& o_;
};

/// How many times `body` reads each local array: each load, and each Dense reading it whole.
std::map<const BufferInfo*, int> array_reads(const Stmt& body) {
    struct Count : IRVisitor {
        std::map<const BufferInfo*, int> reads;
        void visit_BufferLoad(const BufferLoadNode* l) override {
            ++reads[l->buffer.get()];
            IRVisitor::visit_BufferLoad(l);
        }
        void visit_Dense(const DenseNode* d) override { ++reads[d->input.get()]; } // the whole array
    } c;
    c.visit(body);
    return c.reads;
}

bool on_tensor_cores(const DenseNode* d) {
    return d && d->layer.type == ScalarType::Float32 && d->layer.weight_field;
}

class LowerLayers : public IRMutator {
public:
    LowerLayers(const LayerLowering& o, const Stmt& body) : o_(o), reads_(array_reads(body)) {}

protected:
    /// The arrays between the layers of a chain are gone.
    Stmt visit_Allocate(const AllocateNode* n, const Stmt& self) override {
        Stmt b = mutate(n->body);
        if (inside_chains_.count(n->buffer.get())) return b;
        return b.same_as(n->body) ? self : AllocateNode::make(n->buffer, b);
    }
    /// A layer's loops take its place in the block (CSE expects a flat block of statements).
    Stmt visit_Block(const BlockNode* n, const Stmt& self) override {
        std::vector<Stmt> stmts;
        bool changed = false;
        for (std::size_t i = 0; i < n->stmts.size(); ++i) {
            const Stmt& s = n->stmts[i];
            auto d = s.as<DenseNode>();
            if (o_.tensor_operand && on_tensor_cores(d)) {
                // The run of layers that follow, each reading the one before (comments between
                // them kept before the chain), the arrays between them read by nothing else.
                std::vector<DenseLayer> layers{d->layer};
                BufferPtr output = d->output;
                std::vector<Stmt> comments;
                std::size_t last = i;
                for (std::size_t j = i + 1; j < n->stmts.size(); ++j) {
                    if (n->stmts[j].is<CommentNode>()) continue;
                    auto next = n->stmts[j].as<DenseNode>();
                    if (!on_tensor_cores(next) || next->input != output || reads_[output.get()] != 1) break;
                    for (std::size_t c = last + 1; c < j; ++c) comments.push_back(n->stmts[c]);
                    inside_chains_.insert(output.get());
                    layers.push_back(next->layer);
                    output = next->output;
                    last = j;
                }
                for (Stmt& c : comments) stmts.push_back(std::move(c));
                stmts.push_back(MmaChainNode::make(output, d->input, std::move(layers), *o_.tensor_operand));
                i = last;
                changed = true;
                continue;
            }
            if (d) {
                // Said in the source, where a user reading it looks for the mma calls.
                if (o_.tensor_operand)
                    stmts.push_back(CommentNode::make(fmt::format(
                        "{}: not on tensor cores ({}): they take float32 layers with runtime weights",
                        d->output->name,
                        d->layer.type != ScalarType::Float32 ? fmt::format("{} layer", type_name(d->layer.type))
                                                              : std::string("constant weights"))));
                for (Stmt& t : LayerLowerer(d, o_).run()) stmts.push_back(std::move(t));
                changed = true;
                continue;
            }
            stmts.push_back(mutate(s));
            changed |= !stmts.back().same_as(s);
        }
        return changed ? BlockNode::make(std::move(stmts)) : self;
    }
    Stmt visit_Dense(const DenseNode* n, const Stmt&) override {
        return BlockNode::make(LayerLowerer(n, o_).run());
    }

private:
    const LayerLowering& o_;
    std::map<const BufferInfo*, int> reads_;
    std::set<const BufferInfo*> inside_chains_;
};

} // namespace

Stmt lower_layers(const Stmt& body, const LayerLowering& options) {
    return LowerLayers(options, body).mutate(body);
}

std::vector<std::string> tensor_core_width_errors(const Stmt& body) {
    struct Find : IRVisitor {
        std::vector<std::string> out;
        void visit_MmaChain(const MmaChainNode* c) override {
            const int most = max_tensor_core_width(c->operand);
            const std::string type = c->tf32() ? " (TF32)" : "";
            for (const DenseLayer& l : c->layers) {
                if (l.inputs > most)
                    out.push_back(fmt::format("its layer with weights {} has {} inputs{}", l.weight_field->name, l.inputs, type));
                if (l.outputs > most)
                    out.push_back(fmt::format("its layer with weights {} has {} outputs{}", l.weight_field->name, l.outputs, type));
            }
        }
    } f;
    f.visit(body);
    return f.out;
}

MmaChainSizes mma_chain_sizes(const Stmt& body) {
    // As stage_layer_weights places them: each layer's arrays once, one tile.
    struct Count : IRVisitor {
        MmaChainSizes s;
        std::set<StagedWeightKey> weights;
        std::set<StagedBiasKey> biases;
        void visit_MmaChain(const MmaChainNode* c) override {
            ++s.chains;
            s.tile_bytes = std::max(s.tile_bytes, c->tile_floats() * 4);
            s.largest_tile_bytes = std::max(s.largest_tile_bytes, c->largest_tile_floats() * 4);
            auto aligned = [](std::int64_t bytes) { return (bytes + 15) / 16 * 16; };
            for (std::size_t l = 0; l < c->layers.size(); ++l) {
                s.widest = std::max({s.widest, c->k_pad(l) * c->operand_bytes() / 2, c->n_pad(l) * c->operand_bytes() / 2});
                const std::int64_t w = std::int64_t(c->n_pad(l)) * c->row_stride(l) * c->operand_bytes();
                if (weights.insert(staged_weight_key(*c, l)).second) {
                    s.weight_bytes += w;
                    s.staged_bytes += aligned(w);
                }
                if (biases.insert(staged_bias_key(*c, l)).second) s.staged_bytes += aligned(c->n_pad(l) * 4);
            }
        }
    } c;
    c.visit(body);
    return c.s;
}

} // namespace loom::ir
