#include "compiler/ir/equality.hpp"

#include "compiler/ir/visitor.hpp"

#include <cstring>
#include <functional>

namespace loom::ir {

namespace {

std::size_t mix(std::size_t h, std::size_t v) {
    return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

std::size_t hash_double(double d) {
    if (d == 0.0) d = 0.0; // +0 and -0 hash alike; equality still tells them apart
    std::uint64_t bits;
    std::memcpy(&bits, &d, sizeof bits);
    return std::hash<std::uint64_t>{}(bits);
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

/// Compares the node-local data of two nodes of the same kind and type (not the children).
bool equal_payload(const Expr& a, const Expr& b) {
    switch (a.kind()) {
    case ExprKind::Const: {
        auto x = a.as<ConstNode>(), y = b.as<ConstNode>();
        return x->int_value == y->int_value && same_bits(x->float_value, y->float_value) &&
               x->weak == y->weak;
    }
    case ExprKind::Var: return a.same_as(b);
    case ExprKind::Counter: return a.as<CounterNode>()->axis == b.as<CounterNode>()->axis;
    case ExprKind::FieldAccess: {
        auto x = a.as<FieldAccessNode>(), y = b.as<FieldAccessNode>();
        return x->field == y->field && x->offsets == y->offsets && x->components == y->components;
    }
    case ExprKind::ThreadIndex:
        return a.as<ThreadIndexNode>()->dim == b.as<ThreadIndexNode>()->dim &&
               a.as<ThreadIndexNode>()->which == b.as<ThreadIndexNode>()->which;
    case ExprKind::BlockThread: return a.as<BlockThreadNode>()->count == b.as<BlockThreadNode>()->count;
    case ExprKind::BufferLoad: return a.as<BufferLoadNode>()->buffer == b.as<BufferLoadNode>()->buffer;
    case ExprKind::Unary: return a.as<UnaryNode>()->op == b.as<UnaryNode>()->op;
    case ExprKind::Binary: return a.as<BinaryNode>()->op == b.as<BinaryNode>()->op;
    case ExprKind::Call: return a.as<CallNode>()->fn == b.as<CallNode>()->fn;
    case ExprKind::Reduce: return a.as<ReduceNode>()->op == b.as<ReduceNode>()->op;
    case ExprKind::WarpReduce: return a.as<WarpReduceNode>()->op == b.as<WarpReduceNode>()->op;
    case ExprKind::Select:
    case ExprKind::Cast: return true;
    }
    return false;
}

std::size_t hash_payload(const Expr& e) {
    std::size_t h = mix(std::size_t(e.kind()), std::size_t(e.type()));
    switch (e.kind()) {
    case ExprKind::Const: {
        auto c = e.as<ConstNode>();
        return mix(mix(h, std::hash<std::int64_t>{}(c->int_value)), hash_double(c->float_value));
    }
    case ExprKind::Var: return mix(h, std::hash<const void*>{}(e.get()));
    case ExprKind::Counter: return mix(h, e.as<CounterNode>()->axis);
    case ExprKind::FieldAccess: {
        auto f = e.as<FieldAccessNode>();
        h = mix(h, std::hash<const void*>{}(f->field.get()));
        for (int o : f->offsets) h = mix(h, std::size_t(o + 1000));
        for (int c : f->components) h = mix(h, std::size_t(c));
        return h;
    }
    case ExprKind::ThreadIndex:
        return mix(h, std::size_t(e.as<ThreadIndexNode>()->dim) * 3 + std::size_t(e.as<ThreadIndexNode>()->which));
    case ExprKind::BlockThread: return mix(h, e.as<BlockThreadNode>()->count);
    case ExprKind::BufferLoad:
        return mix(h, std::hash<const void*>{}(e.as<BufferLoadNode>()->buffer.get()));
    case ExprKind::Unary: return mix(h, std::size_t(e.as<UnaryNode>()->op));
    case ExprKind::Binary: return mix(h, std::size_t(e.as<BinaryNode>()->op));
    case ExprKind::Call: return mix(h, std::size_t(e.as<CallNode>()->fn));
    case ExprKind::Reduce: return mix(h, std::size_t(e.as<ReduceNode>()->op));
    case ExprKind::WarpReduce: return mix(h, std::size_t(e.as<WarpReduceNode>()->op));
    default: return h;
    }
}

} // namespace

bool structurally_equal(const Expr& a, const Expr& b) {
    if (a.same_as(b)) return true;
    if (!a.defined() || !b.defined()) return false;
    if (a.kind() != b.kind() || a.type() != b.type() || !equal_payload(a, b)) return false;
    auto ca = children(a), cb = children(b);
    if (ca.size() != cb.size()) return false;
    for (std::size_t i = 0; i < ca.size(); ++i)
        if (!structurally_equal(ca[i], cb[i])) return false;
    return true;
}

std::size_t structural_hash(const Expr& e) {
    if (!e.defined()) return 0;
    std::size_t h = hash_payload(e);
    for (const Expr& c : children(e)) h = mix(h, structural_hash(c));
    return h;
}

namespace {

/// The expression and statement children of a statement, in a fixed order, plus its payload.
struct StmtParts {
    std::vector<Expr> exprs;
    std::vector<Stmt> stmts;
    std::vector<std::int64_t> ints;
    std::vector<const void*> objects; ///< fields and arrays, compared by identity
    std::string text;
};

std::int64_t bits(double d) {
    std::int64_t b;
    std::memcpy(&b, &d, sizeof b);
    return b;
}

StmtParts parts(const Stmt& s) {
    StmtParts p;
    switch (s.kind()) {
    case StmtKind::Assign: {
        auto n = s.as<AssignNode>();
        p.exprs = {n->lhs, n->rhs};
        break;
    }
    case StmtKind::Declare: {
        auto n = s.as<DeclareNode>();
        p.exprs = {n->var, n->value};
        break;
    }
    case StmtKind::BufferStore: {
        auto n = s.as<BufferStoreNode>();
        p.exprs = n->indices;
        p.exprs.push_back(n->value);
        p.objects = {n->buffer.get()};
        break;
    }
    case StmtKind::Allocate:
        p.objects = {s.as<AllocateNode>()->buffer.get()};
        p.stmts = {s.as<AllocateNode>()->body};
        break;
    case StmtKind::Barrier: p.ints = {s.as<BarrierNode>()->warp ? 1 : 0}; break;
    case StmtKind::Block: p.stmts = s.as<BlockNode>()->stmts; break;
    case StmtKind::For: {
        auto n = s.as<ForNode>();
        p.exprs = {n->var, n->start, n->stop, n->step};
        p.stmts = {n->body};
        p.ints = {n->axis, static_cast<std::int64_t>(n->kind), n->dim};
        break;
    }
    case StmtKind::IfThen: {
        auto n = s.as<IfThenNode>();
        p.exprs = {n->cond};
        p.stmts = {n->then_case};
        break;
    }
    case StmtKind::Comment: p.text = s.as<CommentNode>()->text; break;
    case StmtKind::VectorLoad:
        p.exprs = {s.as<VectorLoadNode>()->first};
        p.objects = {s.as<VectorLoadNode>()->lanes.get()};
        p.ints = {s.as<VectorLoadNode>()->offset, s.as<VectorLoadNode>()->width};
        break;
    case StmtKind::VectorStore:
        p.exprs = {s.as<VectorStoreNode>()->first};
        p.objects = {s.as<VectorStoreNode>()->lanes.get()};
        break;
    case StmtKind::BasePointer: {
        auto n = s.as<BasePointerNode>();
        p.exprs = n->at;
        p.objects = {n->buffer.get(), n->view.get()};
        p.ints = {n->writes ? 1 : 0};
        break;
    }
    case StmtKind::LastBlock:
        p.exprs = {s.as<LastBlockNode>()->blocks};
        p.objects = {s.as<LastBlockNode>()->ticket.get()};
        p.stmts = {s.as<LastBlockNode>()->body};
        break;
    case StmtKind::Stage:
        p.ints = {s.as<StageNode>()->index};
        p.stmts = {s.as<StageNode>()->body};
        break;
    case StmtKind::MmaChain: {
        auto n = s.as<MmaChainNode>();
        p.objects = {n->output.get(), n->input.get(), n->tile.get()};
        for (const BufferPtr& b : n->weights) p.objects.push_back(b.get());
        for (const BufferPtr& b : n->biases) p.objects.push_back(b.get());
        p.ints = {std::int64_t(n->operand), n->stream ? 1 + int(n->stream->outputs()) : 0};
        if (n->stream)
            for (const Expr& e : n->stream->exprs())
                if (e.defined()) p.exprs.push_back(e);
        for (const DenseLayer& l : n->layers) {
            p.exprs.push_back(l.activation.input);
            p.exprs.push_back(l.activation.value);
            p.objects.push_back(l.weight_field.get());
            p.objects.push_back(l.bias_field.get());
            p.ints.push_back(l.outputs);
            p.ints.push_back(l.inputs);
            p.text += l.activation.name + ",";
        }
        break;
    }
    case StmtKind::Dense: {
        auto n = s.as<DenseNode>();
        const DenseLayer& l = n->layer;
        p.exprs = {l.activation.input, l.activation.value};
        p.objects = {n->output.get(), n->input.get(), l.weight_field.get(), l.bias_field.get()};
        p.text = l.activation.name;
        // The constants' bit patterns, each list after its length, so none can run into the other.
        p.ints = {l.outputs, l.inputs, std::int64_t(l.type), std::int64_t(l.weights.size())};
        for (double w : l.weights) p.ints.push_back(bits(w));
        p.ints.push_back(std::int64_t(l.bias.size()));
        for (double b : l.bias) p.ints.push_back(bits(b));
        break;
    }
    }
    return p;
}

} // namespace

bool structurally_equal(const Stmt& a, const Stmt& b) {
    if (a.same_as(b)) return true;
    if (!a.defined() || !b.defined() || a.kind() != b.kind()) return false;
    StmtParts pa = parts(a), pb = parts(b);
    if (pa.ints != pb.ints || pa.objects != pb.objects || pa.text != pb.text ||
        pa.exprs.size() != pb.exprs.size() || pa.stmts.size() != pb.stmts.size())
        return false;
    for (std::size_t i = 0; i < pa.exprs.size(); ++i)
        if (!structurally_equal(pa.exprs[i], pb.exprs[i])) return false;
    for (std::size_t i = 0; i < pa.stmts.size(); ++i)
        if (!structurally_equal(pa.stmts[i], pb.stmts[i])) return false;
    return true;
}

std::size_t structural_hash(const Stmt& s) {
    if (!s.defined()) return 0;
    StmtParts p = parts(s);
    std::size_t h = mix(0x51ed, std::size_t(s.kind()));
    for (auto i : p.ints) h = mix(h, std::size_t(i));
    for (const void* o : p.objects) h = mix(h, std::hash<const void*>{}(o));
    h = mix(h, std::hash<std::string>{}(p.text));
    for (auto& e : p.exprs) h = mix(h, structural_hash(e));
    for (auto& c : p.stmts) h = mix(h, structural_hash(c));
    return h;
}

} // namespace loom::ir
