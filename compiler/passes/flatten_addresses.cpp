#include "compiler/passes/flatten_addresses.hpp"

#include "compiler/ir/visitor.hpp"
#include "compiler/passes/simplify.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>

namespace loom::ir {

namespace {

class Flatten : public IRMutator {
protected:
    Expr visit_BufferLoad(const BufferLoadNode* n, const Expr& self) override {
        Expr e = IRMutator::visit_BufferLoad(n, self);
        auto l = e.as<BufferLoadNode>();
        return l->flat() ? e : BufferLoadNode::make(l->buffer, linear(*l->buffer, l->indices));
    }
    Stmt visit_BufferStore(const BufferStoreNode* n, const Stmt& self) override {
        Stmt s = IRMutator::visit_BufferStore(n, self);
        auto st = s.as<BufferStoreNode>();
        return st->flat() ? s : BufferStoreNode::make(st->buffer, linear(*st->buffer, st->indices), st->value);
    }

    Stmt visit_BasePointer(const BasePointerNode* n, const Stmt& self) override {
        if (n->at.size() == 1) return self; // flat already (a 1D field's coordinate is its index)
        return BasePointerNode::make(n->buffer, n->view, {linear(*n->buffer, n->at)}, n->writes);
    }

private:
    /// sum over axes of stride * coordinate, the constants gathered into one term at the end.
    static Expr linear(const BufferInfo& b, const std::vector<Expr>& at) {
        if (b.strides.size() != at.size())
            throw InternalError(fmt::format("flatten_addresses: {} coordinates for the {} strides of buffer {}",
                                            at.size(), b.strides.size(), b.name));
        const FieldInfo* field = b.field_of();
        const int spatial = field ? field->spatial_dims : b.dims();
        const ScalarType t = at[0].type();
        Expr index;
        std::int64_t constant = 0;
        auto term = [&](const Expr& x) { index = index.defined() ? BinaryNode::make(BinaryOp::Add, index, x) : x; };
        for (std::size_t a = 0; a < at.size(); ++a) {
            const Expr& c = at[a];
            auto k = c.as<ConstNode>();
            auto s = b.strides[a].as<ConstNode>();
            if (k && s) { // a literal component (or coordinate) with a literal stride
                constant += k->int_value * s->int_value;
                continue;
            }
            if (k && k->int_value == 0) continue;
            if (s && s->int_value == 1) {
                // Unit stride: "y + 1" joins the constant term, so the index reads
                // "stride * x + y + 1" rather than "... + (y + 1)".
                const Offset at = split_offset(c);
                if (at.k != 0 && int(a) < spatial) {
                    term(at.base);
                    constant += at.k;
                } else {
                    term(c);
                }
                continue;
            }
            // A literal stride takes the coordinate's type (the buffers the passes make have
            // int64 literals; a kernel's index may be int32).
            Expr stride = s ? ConstNode::make_int(t, s->int_value) : b.strides[a];
            term(BinaryNode::make(BinaryOp::Mul, stride, c));
        }
        if (!index.defined()) return ConstNode::make_int(t, constant);
        if (constant > 0) term(ConstNode::make_int(t, constant));
        if (constant < 0) index = BinaryNode::make(BinaryOp::Sub, index, ConstNode::make_int(t, -constant));
        return simplify(index);
    }
};

} // namespace

Stmt flatten_addresses(const Stmt& body) { return Flatten().mutate(body); }

} // namespace loom::ir
