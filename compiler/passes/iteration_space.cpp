#include "compiler/passes/iteration_space.hpp"

#include "compiler/ir/visitor.hpp"
#include "compiler/passes/simplify.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace loom::ir {

namespace {

Expr add(const Expr& a, const Expr& b) { return BinaryNode::make(BinaryOp::Add, a, b); }
Expr sub(const Expr& a, const Expr& b) { return BinaryNode::make(BinaryOp::Sub, a, b); }
Expr mul(const Expr& a, const Expr& b) { return BinaryNode::make(BinaryOp::Mul, a, b); }

class Lowering : public IRMutator {
public:
    Lowering(const KernelAnalysis& a, const KernelConfig& c)
        : a_(a), cfg_(c), it_(c.index_type.value_or(ScalarType::Int64)) {}

    IterationSpace run(const Stmt& body) {
        IterationSpace out;
        make_signature(out.params);
        Stmt nest = mutate(body);
        for (int d = a_.spatial_dims - 1; d >= 0; --d) {
            auto [start, stop, step] = bounds(d);
            nest = ForNode::make(counters_[d], simplify(start), simplify(stop), idx(step), nest, d);
        }
        out.nest = nest;
        out.globals = globals_;
        for (auto& [f, outside] : a_.on_chip) out.on_chip[f.get()] = mutate(outside);
        return out;
    }

private:
    Expr idx(std::int64_t v) const { return ConstNode::make_int(it_, v); }
    Expr to_index(const Expr& e) const { return e.type() == it_ ? e : CastNode::make(it_, e); }

    void make_signature(std::vector<KernelParam>& params) {
        int D = a_.spatial_dims;
        // Named after the DSL's counters (loom::counters::x, y, z); a fourth axis has no name
        // there and keeps its number.
        for (int d = 0; d < D; ++d)
            counters_.push_back(VarNode::make(it_, d < 3 ? std::string(1, "xyz"[d]) : fmt::format("ctr_{}", d),
                                              VarRole::Counter, nullptr, d));
        for (auto& f : a_.fields) {
            if (a_.is_on_chip(f.get())) continue;
            bool written = std::find(a_.written.begin(), a_.written.end(), f) != a_.written.end();
            params.push_back({f->name, "", ParamRole::FieldPointer, f->type, f, -1, !written, Expr()});
        }
        for (int d = 0; d < D; ++d) {
            if (a_.fixed_shape_source) {
                sizes_.push_back(idx(a_.fixed_shape_source->fixed_shape[d]));
            } else {
                Expr v = VarNode::make(it_, fmt::format("size_{}", d), VarRole::Size, nullptr, d);
                sizes_.push_back(v);
                params.push_back({"", "", ParamRole::Size, it_, nullptr, d, false, v});
            }
        }
        for (auto& f : a_.fields) {
            std::vector<Expr> st;
            auto fixed = f->is_fixed() ? f->fixed_strides() : std::vector<std::int64_t>();
            for (int ax = 0; ax < f->array_dims(); ++ax) {
                if (ax == f->unit_stride_axis()) {
                    st.push_back(idx(1));
                } else if (f->is_fixed()) {
                    st.push_back(idx(fixed[ax]));
                } else {
                    Expr v = VarNode::make(it_, fmt::format("{}_stride_{}", f->name, ax),
                                           VarRole::Stride, f, ax);
                    st.push_back(v);
                    if (!a_.is_on_chip(f.get()))
                        params.push_back({"", "", ParamRole::Stride, it_, f, ax, false, v});
                }
            }
            globals_[f.get()] = make_global_buffer(f, shape_of(*f), std::move(st));
        }
        for (auto& p : a_.parameters)
            params.push_back({"", "", ParamRole::Scalar, p.type(), nullptr, -1, false, p});
    }

    /// A field's extents: the iteration space's sizes (a buffer's own fixed shape, or unknown
    /// here: only the launch sees a variable buffer's), then its index axes.
    std::vector<Expr> shape_of(const FieldInfo& f) const {
        const bool buffer = std::any_of(a_.buffers.begin(), a_.buffers.end(),
                                        [&](const FieldPtr& b) { return b.get() == &f; });
        std::vector<Expr> shape;
        for (int d = 0; d < f.spatial_dims; ++d)
            shape.push_back(f.is_fixed() ? idx(f.fixed_shape[std::size_t(d)]) : buffer ? Expr() : sizes_[std::size_t(d)]);
        for (int n : f.index_shape) shape.push_back(idx(n));
        return shape;
    }

    /// A slice bound as an index-typed expression.
    Expr bound(const Bound& b, int d) {
        switch (b.kind()) {
        case Bound::Kind::End: return sizes_[d];
        case Bound::Kind::Index:
            return b.index() >= 0 ? idx(b.index()) : sub(sizes_[d], idx(-b.index()));
        case Bound::Kind::Expression: return to_index(mutate(b.expr()));
        }
        throw InternalError("unknown slice bound kind");
    }

    std::tuple<Expr, Expr, std::int64_t> bounds(int d) {
        if (!cfg_.iteration_slice) {
            auto [lo, hi] = a_.ghost_layers[d];
            return {idx(lo), sub(sizes_[d], idx(hi)), 1};
        }
        const SliceDim& s = cfg_.iteration_slice->dims[d];
        Expr start = bound(s.start, d);
        if (s.single) return {start, add(start, idx(1)), 1};
        return {start, bound(s.stop, d), s.step};
    }

    /// The coordinates of a field access, one per array axis: the counter plus the offset
    /// along each spatial axis (or the lowered index expressions of an absolute access), then
    /// the component along each index axis (a literal, or the lowered Index variable).
    std::vector<Expr> coordinates(const FieldAccessNode* n) {
        const FieldPtr& f = n->field;
        std::vector<Expr> at;
        for (int d = 0; d < f->spatial_dims; ++d) {
            if (n->absolute()) {
                at.push_back(to_index(mutate(n->indices[d])));
                continue;
            }
            const int o = n->offsets[d];
            at.push_back(o == 0 ? counters_[d] : o > 0 ? add(counters_[d], idx(o)) : sub(counters_[d], idx(-o)));
        }
        for (std::size_t c = 0; c < n->components.size(); ++c)
            at.push_back(n->indexed_components() ? to_index(mutate(n->component_indices[c]))
                                                 : idx(n->components[c]));
        return at;
    }

    Expr visit_FieldAccess(const FieldAccessNode* n, const Expr&) override {
        return BufferLoadNode::make(globals_.at(n->field.get()), coordinates(n));
    }
    Expr visit_Counter(const CounterNode* n, const Expr&) override {
        const Expr& c = counters_.at(n->axis);
        return c.type() == ScalarType::Int64 ? c : CastNode::make(ScalarType::Int64, c);
    }
    Stmt visit_Assign(const AssignNode* n, const Stmt&) override {
        Expr rhs = mutate(n->rhs);
        if (auto fa = n->lhs.as<FieldAccessNode>())
            return BufferStoreNode::make(globals_.at(fa->field.get()), coordinates(fa), rhs);
        return DeclareNode::make(n->lhs, rhs);
    }

    const KernelAnalysis& a_;
    const KernelConfig& cfg_;
    ScalarType it_;
    std::vector<Expr> counters_, sizes_;
    std::map<const FieldInfo*, BufferPtr> globals_;
};

} // namespace

IterationSpace lower_iteration_space(const Stmt& body, const KernelAnalysis& analysis,
                                     const KernelConfig& config) {
    return Lowering(analysis, config).run(body);
}

} // namespace loom::ir
