#include "compiler/passes/narrow_chain_io.hpp"

#include "compiler/ir/visitor.hpp"

#include <map>
#include <memory>
#include <set>

namespace loom::ir {

namespace {

/// `(float32) X[...]` with X a field (or a global buffer) of type `t`.
bool widened_load(const Expr& e, ScalarType t) {
    auto c = e.as<CastNode>();
    if (!c || c->type != ScalarType::Float32) return false;
    if (auto f = c->value.as<FieldAccessNode>()) return f->field->type == t;
    auto l = c->value.as<BufferLoadNode>();
    return l && l->buffer->type == t && l->buffer->scope == Scope::Global;
}

/// Which chain arrays may narrow: every store to an input array a widened load of the operand
/// type (and no other read of it than the chain's), every read of an output array under a cast
/// to the operand type.
class Survey : public IRVisitor {
public:
    std::map<const BufferInfo*, ScalarType> inputs, outputs; ///< candidates, by the chain's operand
    std::set<const BufferInfo*> spoiled;

    void visit_MmaChain(const MmaChainNode* n) override {
        if (n->tf32()) return; // float32 operands: nothing narrower to pass
        inputs[n->input.get()] = n->operand;
        outputs[n->output.get()] = n->operand;
    }
    void visit_BufferStore(const BufferStoreNode* s) override {
        stores_.push_back(s);
        IRVisitor::visit_BufferStore(s);
    }
    void visit_Cast(const CastNode* c) override {
        if (auto l = c->value.as<BufferLoadNode>()) {
            casts_.push_back({c->type, l});
            for (const Expr& i : l->indices) visit(i);
            return;
        }
        IRVisitor::visit_Cast(c);
    }
    void visit_BufferLoad(const BufferLoadNode* l) override {
        bare_loads_.insert(l->buffer.get());
        IRVisitor::visit_BufferLoad(l);
    }
    /// After the walk: what may narrow.
    void settle() {
        for (const BufferStoreNode* s : stores_)
            if (auto it = inputs.find(s->buffer.get()); it != inputs.end() && !widened_load(s->value, it->second))
                spoiled.insert(s->buffer.get());
        for (auto& [b, t] : inputs)
            if (bare_loads_.count(b)) spoiled.insert(b);
        for (auto& [type, load] : casts_) {
            if (inputs.count(load->buffer.get())) spoiled.insert(load->buffer.get()); // read past the chain
            if (auto it = outputs.find(load->buffer.get()); it != outputs.end() && type != it->second)
                spoiled.insert(load->buffer.get());
        }
        for (const BufferStoreNode* s : stores_)
            if (outputs.count(s->buffer.get())) spoiled.insert(s->buffer.get()); // only the chain writes it
        for (auto& [b, t] : outputs)
            if (bare_loads_.count(b)) spoiled.insert(b);
    }

private:
    std::vector<const BufferStoreNode*> stores_;
    std::vector<std::pair<ScalarType, const BufferLoadNode*>> casts_;
    std::set<const BufferInfo*> bare_loads_; ///< loads not directly under a cast
};

class Narrow : public IRMutator {
public:
    explicit Narrow(const Survey& s) {
        auto narrowed = [&](const std::map<const BufferInfo*, ScalarType>& arrays) {
            for (auto& [b, t] : arrays) {
                if (s.spoiled.count(b)) continue;
                auto n = std::make_shared<BufferInfo>(*b);
                n->type = t;
                to_[b] = n;
            }
        };
        narrowed(s.inputs);
        narrowed(s.outputs);
    }
    bool any() const { return !to_.empty(); }

protected:
    Stmt visit_Allocate(const AllocateNode* n, const Stmt& self) override {
        Stmt body = mutate(n->body);
        if (auto it = to_.find(n->buffer.get()); it != to_.end()) return AllocateNode::make(it->second, body);
        return body.same_as(n->body) ? self : AllocateNode::make(n->buffer, body);
    }
    Stmt visit_BufferStore(const BufferStoreNode* s, const Stmt& self) override {
        auto it = to_.find(s->buffer.get());
        if (it == to_.end()) return IRMutator::visit_BufferStore(s, self);
        // in[k] = (float32) X[...]  ->  in[k] = X[...]
        return BufferStoreNode::make(it->second, s->indices, s->value.as<CastNode>()->value);
    }
    Expr visit_Cast(const CastNode* c, const Expr& self) override {
        // (operand) out[n]  ->  out[n]
        if (auto l = c->value.as<BufferLoadNode>())
            if (auto it = to_.find(l->buffer.get()); it != to_.end())
                return BufferLoadNode::make(it->second, l->indices);
        return IRMutator::visit_Cast(c, self);
    }
    Stmt visit_MmaChain(const MmaChainNode* n, const Stmt& self) override {
        auto swap = [&](const BufferPtr& b) {
            auto it = to_.find(b.get());
            return it == to_.end() ? b : BufferPtr(it->second);
        };
        BufferPtr in = swap(n->input), out = swap(n->output);
        if (in == n->input && out == n->output) return self;
        return MmaChainNode::make(out, in, n->layers, n->operand, n->weights, n->biases, n->tile, n->stream);
    }

private:
    std::map<const BufferInfo*, std::shared_ptr<BufferInfo>> to_;
};

} // namespace

Stmt narrow_chain_io(const Stmt& body) {
    Survey survey;
    survey.visit(body);
    if (survey.inputs.empty()) return body;
    survey.settle();
    Narrow narrow(survey);
    return narrow.any() ? narrow.mutate(body) : body;
}

} // namespace loom::ir
