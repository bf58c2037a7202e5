#include "compiler/passes/flatten_addresses.hpp"

#include "compiler/ir/visitor.hpp"
#include "compiler/passes/simplify.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>

namespace loom::ir {

namespace {

class Flatten : public IRMutator {
public:
    explicit Flatten(const FieldStrides& strides) : strides_(strides) {}

protected:
    Expr visit_Load(const LoadNode* n, const Expr& self) override {
        Expr e = IRMutator::visit_Load(n, self);
        auto l = e.as<LoadNode>();
        return l->flat() ? e : LoadNode::make(l->field, linear(*l->field, l->indices));
    }
    Stmt visit_Store(const StoreNode* n, const Stmt& self) override {
        Stmt s = IRMutator::visit_Store(n, self);
        auto st = s.as<StoreNode>();
        return st->flat() ? s : StoreNode::make(st->field, linear(*st->field, st->indices), st->value);
    }

    Stmt visit_BasePointer(const BasePointerNode* n, const Stmt& self) override {
        if (n->at.size() == 1) return self; // flat already (a 1D field's coordinate is its index)
        return BasePointerNode::make(n->field, n->cell, {linear(*n->field, n->at)}, n->writes);
    }

private:
    /// sum over axes of stride * coordinate, the constants gathered into one term at the end.
    Expr linear(const FieldInfo& f, const std::vector<Expr>& at) {
        auto it = strides_.find(&f);
        if (it == strides_.end() || it->second.size() != at.size())
            throw InternalError(fmt::format("flatten_addresses: no strides for the {} coordinates "
                                            "of field {}", at.size(), f.name));
        const std::vector<Expr>& st = it->second;
        const ScalarType t = at[0].type();
        Expr index;
        std::int64_t constant = 0;
        auto term = [&](const Expr& x) { index = index.defined() ? BinaryNode::make(BinaryOp::Add, index, x) : x; };
        for (std::size_t a = 0; a < at.size(); ++a) {
            const Expr& c = at[a];
            auto k = c.as<ConstNode>();
            auto s = st[a].as<ConstNode>();
            if (k && s) { // a literal component (or coordinate) with a literal stride
                constant += k->int_value * s->int_value;
                continue;
            }
            if (k && k->int_value == 0) continue;
            if (s && s->int_value == 1) {
                // Unit stride: "y + 1" joins the constant term, so the index reads
                // "stride * x + y + 1" rather than "... + (y + 1)".
                auto b = c.as<BinaryNode>();
                auto off = b ? b->b.as<ConstNode>() : nullptr;
                if (off && (b->op == BinaryOp::Add || b->op == BinaryOp::Sub) && int(a) < f.spatial_dims) {
                    term(b->a);
                    constant += b->op == BinaryOp::Add ? off->int_value : -off->int_value;
                } else {
                    term(c);
                }
                continue;
            }
            term(BinaryNode::make(BinaryOp::Mul, st[a], c));
        }
        if (!index.defined()) return ConstNode::make_int(t, constant);
        if (constant > 0) term(ConstNode::make_int(t, constant));
        if (constant < 0) index = BinaryNode::make(BinaryOp::Sub, index, ConstNode::make_int(t, -constant));
        return simplify(index);
    }

    const FieldStrides& strides_;
};

} // namespace

Stmt flatten_addresses(const Stmt& body, const FieldStrides& strides) {
    return Flatten(strides).mutate(body);
}

} // namespace loom::ir
