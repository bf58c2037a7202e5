// Pointing a buffer's accesses at another buffer: the loads of a field at its staged shared copy
// (shared_staging), of a layer array at the array as placed (analyze), the loads and stores of a
// group's local arrays at the second copy's own (vectorize_lanes).
#pragma once

#include "compiler/ir/visitor.hpp"

#include <map>

namespace loom::ir {

/// A mutator that makes each load of a buffer `to` maps (and, where `stores`, each store into
/// one) access the buffer it maps to instead, at the same indices.
class RedirectBuffers : public IRMutator {
public:
    RedirectBuffers(const std::map<const BufferInfo*, BufferPtr>& to, bool stores) : to_(to), stores_(stores) {}

protected:
    Expr visit_BufferLoad(const BufferLoadNode* n, const Expr& self) override {
        Expr e = IRMutator::visit_BufferLoad(n, self);
        auto l = e.as<BufferLoadNode>();
        auto it = to_.find(l->buffer.get());
        return it == to_.end() ? e : BufferLoadNode::make(it->second, l->indices);
    }
    Stmt visit_BufferStore(const BufferStoreNode* n, const Stmt& self) override {
        Stmt s = IRMutator::visit_BufferStore(n, self);
        auto st = s.as<BufferStoreNode>();
        auto it = stores_ ? to_.find(st->buffer.get()) : to_.end();
        return it == to_.end() ? s : BufferStoreNode::make(it->second, st->indices, st->value);
    }

private:
    const std::map<const BufferInfo*, BufferPtr>& to_;
    const bool stores_;
};

} // namespace loom::ir
