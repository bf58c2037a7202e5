#include "compiler/ir/printer.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>

namespace loom::ir {

std::string format_float(double value, ScalarType type) {
    if (std::isnan(value)) return "nan";
    if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
    std::string s = type == ScalarType::Float32 ? fmt::format("{}", static_cast<float>(value))
                                                : fmt::format("{}", value);
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    return s;
}

std::string ExprPrinter::print(const Expr& e) {
    std::string out;
    emit(e, 0, out);
    return out;
}

int ExprPrinter::binary_precedence(BinaryOp op) {
    switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Sub: return kAdd;
    case BinaryOp::Mul:
    case BinaryOp::Div:
    case BinaryOp::Mod: return kMul;
    case BinaryOp::Min:
    case BinaryOp::Max: return kPrimary; // printed as calls
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge: return kCompare;
    case BinaryOp::Eq:
    case BinaryOp::Ne: return kEquality;
    case BinaryOp::And: return kAnd;
    case BinaryOp::Or: return kOr;
    }
    return kPrimary;
}

int ExprPrinter::precedence(const Expr& e) {
    switch (e.kind()) {
    case ExprKind::Const: return literal(e.as<ConstNode>()).rfind('-', 0) == 0 ? kUnary : kPrimary;
    case ExprKind::Unary:
    case ExprKind::Cast: return kUnary;
    case ExprKind::Binary: return binary_precedence(e.as<BinaryNode>()->op);
    case ExprKind::Select: return kTernary;
    default: return kPrimary;
    }
}

void ExprPrinter::emit(const Expr& e, int min_precedence, std::string& out) {
    const bool parenthesized = precedence(e) < min_precedence;
    if (parenthesized) out += '(';
    switch (e.kind()) {
    case ExprKind::Const: out += literal(e.as<ConstNode>()); break;
    case ExprKind::Var: out += var_name(e.as<VarNode>()); break;
    case ExprKind::Counter: counter(e.as<CounterNode>(), out); break;
    case ExprKind::FieldAccess: field_access(e.as<FieldAccessNode>(), out); break;
    case ExprKind::ThreadIndex: thread_index(e.as<ThreadIndexNode>(), out); break;
    case ExprKind::BlockThread: block_thread(e.as<BlockThreadNode>(), out); break;
    case ExprKind::BufferLoad: buffer_load(e.as<BufferLoadNode>(), out); break;
    case ExprKind::Unary: {
        auto u = e.as<UnaryNode>();
        // Operands that start with '-' or '!' get parentheses: "- -x" would read as "--x".
        out += op_name(u->op);
        emit(u->a, kUnary + 1, out);
        break;
    }
    case ExprKind::Binary: binary(e.as<BinaryNode>(), out); break;
    case ExprKind::Select: {
        auto s = e.as<SelectNode>();
        emit(s->cond, kTernary + 1, out);
        out += " ? ";
        emit(s->if_true, kTernary + 1, out);
        out += " : ";
        emit(s->if_false, kTernary, out);
        break;
    }
    case ExprKind::Call: call(e.as<CallNode>(), out); break;
    case ExprKind::Cast: cast(e.as<CastNode>(), out); break;
    case ExprKind::Reduce: reduce(e.as<ReduceNode>(), out); break;
    case ExprKind::WarpReduce: warp_reduce(e.as<WarpReduceNode>(), out); break;
    }
    if (parenthesized) out += ')';
}

void ExprPrinter::emit_call(std::string_view name, std::initializer_list<const Expr*> args,
                            std::string& out) {
    out += name;
    out += '(';
    const char* separator = "";
    for (const Expr* a : args) {
        out += separator;
        emit(*a, 0, out);
        separator = ", ";
    }
    out += ')';
}

void ExprPrinter::emit_call(std::string_view name, const std::vector<Expr>& args, std::string& out) {
    out += name;
    out += '(';
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (i) out += ", ";
        emit(args[i], 0, out);
    }
    out += ')';
}

std::string ExprPrinter::var_name(const VarNode* v) { return v->name; }
std::string ExprPrinter::type_name_of(ScalarType t) { return std::string(type_name(t)); }

std::string ExprPrinter::literal(const ConstNode* c) {
    if (c->type == ScalarType::Bool) return c->int_value ? "true" : "false";
    if (is_int(c->type)) return fmt::format("{}", c->int_value);
    bool suffix = c->type == ScalarType::Float32 && std::isfinite(c->float_value);
    return format_float(c->float_value, c->type) + (suffix ? "f" : "");
}

void ExprPrinter::counter(const CounterNode* c, std::string& out) {
    static const char* names[] = {"x", "y", "z"};
    out += c->axis < 3 ? names[c->axis] : fmt::format("ctr({})", c->axis);
}

void ExprPrinter::field_access(const FieldAccessNode* a, std::string& out) {
    out += a->field->name;
    if (a->absolute())
        emit_call(".at", a->indices, out);
    else
        out += fmt::format("[{}]", fmt::join(a->offsets, ", "));
    if (a->indexed_components())
        emit_call("", a->component_indices, out);
    else if (!a->components.empty())
        out += fmt::format("({})", fmt::join(a->components, ", "));
}

void ExprPrinter::warp_reduce(const WarpReduceNode* r, std::string& out) {
    // warp_reduce(+, sum_k)
    out += "warp_reduce(";
    out += op_name(r->op);
    out += ", ";
    emit(r->value, 0, out);
    out += ')';
}

void ExprPrinter::reduce(const ReduceNode* r, std::string& out) {
    // sum(k in [0, 768): x(k))
    out += reduce_op_name(r->op);
    out += '(';
    emit(r->var, 0, out);
    out += " in [";
    emit(r->start, 0, out);
    out += ", ";
    emit(r->stop, 0, out);
    out += "): ";
    emit(r->body, 0, out);
    out += ')';
}

void ExprPrinter::thread_index(const ThreadIndexNode* t, std::string& out) {
    static const char* what[] = {"thread_index", "block_index", "thread_in_block"};
    out += fmt::format("{}.{}", what[int(t->which)], "xyz"[t->dim]);
}

void ExprPrinter::block_thread(const BlockThreadNode* t, std::string& out) {
    out += t->count ? "block_thread.count" : "block_thread.rank";
}

void ExprPrinter::buffer_load(const BufferLoadNode* l, std::string& out) {
    out += l->buffer->name;
    out += '[';
    for (std::size_t i = 0; i < l->indices.size(); ++i) {
        if (i) out += ", ";
        emit(l->indices[i], 0, out);
    }
    out += ']';
}

void ExprPrinter::call(const CallNode* c, std::string& out) { emit_call(fn_name(c->fn), c->args, out); }

void ExprPrinter::binary(const BinaryNode* b, std::string& out) {
    if (b->op == BinaryOp::Min || b->op == BinaryOp::Max) {
        emit_call(op_name(b->op), {&b->a, &b->b}, out);
        return;
    }
    // Left-associative: the left operand may share the precedence, the right must bind tighter.
    const int p = binary_precedence(b->op);
    emit(b->a, p, out);
    out += ' ';
    out += op_name(b->op);
    out += ' ';
    emit(b->b, p + 1, out);
}

void ExprPrinter::cast(const CastNode* c, std::string& out) {
    out += '(';
    out += type_name_of(c->type);
    out += ") ";
    emit(c->value, kUnary, out);
}

namespace {

class StmtDebugPrinter {
public:
    std::string out;
    void print(const Stmt& s, int indent) {
        std::string pad(indent * 2, ' ');
        ExprPrinter p;
        switch (s.kind()) {
        case StmtKind::Assign: {
            auto n = s.as<AssignNode>();
            out += fmt::format("{}{} = {}\n", pad, p.print(n->lhs), p.print(n->rhs));
            break;
        }
        case StmtKind::Declare: {
            auto n = s.as<DeclareNode>();
            out += fmt::format("{}let {}: {} = {}\n", pad, p.print(n->var),
                               type_name(n->var.type()), p.print(n->value));
            break;
        }
        case StmtKind::BufferStore: {
            auto n = s.as<BufferStoreNode>();
            std::string at;
            for (const Expr& i : n->indices) at += (at.empty() ? "" : ", ") + p.print(i);
            out += fmt::format("{}{}[{}] = {}\n", pad, n->buffer->name, at, p.print(n->value));
            break;
        }
        case StmtKind::Allocate: {
            // Directly nested allocations (a cell's layer arrays) a line each, one indent.
            auto n = s.as<AllocateNode>();
            while (auto inner = n->body.as<AllocateNode>()) {
                out += fmt::format("{}alloc {}\n", pad, n->buffer->describe());
                n = inner;
            }
            out += fmt::format("{}alloc {}:\n", pad, n->buffer->describe());
            print(n->body, indent + 1);
            break;
        }
        case StmtKind::Barrier:
            out += fmt::format("{}{}barrier\n", pad, s.as<BarrierNode>()->warp ? "warp " : "");
            break;
        case StmtKind::Block:
            for (auto& c : s.as<BlockNode>()->stmts) print(c, indent);
            break;
        case StmtKind::VectorLoad: {
            auto n = s.as<VectorLoadNode>();
            out += fmt::format("{}{}[{}:{}] = lanes of {}\n", pad, n->lanes->name, n->offset, n->offset + n->width,
                               p.print(n->first));
            break;
        }
        case StmtKind::VectorStore: {
            auto n = s.as<VectorStoreNode>();
            out += fmt::format("{}lanes of {} = {}[0:{}]\n", pad, p.print(n->first), n->lanes->name, n->lanes->size());
            break;
        }
        case StmtKind::BasePointer: {
            auto n = s.as<BasePointerNode>();
            std::vector<std::string> at;
            for (auto& e : n->at) at.push_back(p.print(e));
            out += fmt::format("{}{} = &{}[{}]\n", pad, n->view->name, n->buffer->name, fmt::join(at, ", "));
            break;
        }
        case StmtKind::LastBlock: {
            auto n = s.as<LastBlockNode>();
            out += fmt::format("{}last block of {} (ticket {}):\n", pad, p.print(n->blocks), n->ticket->name);
            print(n->body, indent + 1);
            break;
        }
        case StmtKind::Stage:
            out += fmt::format("{}stage {}:\n", pad, s.as<StageNode>()->index);
            print(s.as<StageNode>()->body, indent + 1);
            break;
        case StmtKind::For: {
            auto n = s.as<ForNode>();
            // Serial loops print no kind, so the GPU pipeline's notation is unchanged.
            std::string kind =
                n->kind == ForKind::Serial ? "" : ", " + std::string(for_kind_name(n->kind));
            if (n->dim >= 0) kind += std::string(".") + "xyz"[n->dim];
            out += fmt::format("{}for {} in [{}, {}) step {}:  # axis {}{}\n", pad,
                               p.print(n->var), p.print(n->start), p.print(n->stop),
                               p.print(n->step), n->axis, kind);
            print(n->body, indent + 1);
            break;
        }
        case StmtKind::IfThen: {
            auto n = s.as<IfThenNode>();
            out += fmt::format("{}if {}:\n", pad, p.print(n->cond));
            print(n->then_case, indent + 1);
            break;
        }
        case StmtKind::Comment: out += fmt::format("{}# {}\n", pad, s.as<CommentNode>()->text); break;
        case StmtKind::MmaChain: {
            // mma float16 y[3] = [l0 14 -> 64 relu, l1 64 -> 3 identity](x[14])
            auto n = s.as<MmaChainNode>();
            std::vector<std::string> layers;
            for (std::size_t l = 0; l < n->layers.size(); ++l)
                layers.push_back(fmt::format("{} {} -> {} {}", n->weights.empty() ? n->layers[l].weight_field->name
                                                                                    : n->weights[l]->name,
                                             n->layers[l].inputs, n->layers[l].outputs,
                                             n->layers[l].activation.name));
            out += fmt::format("{}mma {} {}[{}] = [{}]({}[{}]){}\n", pad, n->tf32() ? "tf32" : type_name(n->operand), n->output->name,
                               n->output->elements(), fmt::join(layers, ", "), n->input->name,
                               n->input->elements(), n->tile ? " tile " + n->tile->name : "");
            if (n->stream) {
                // streams x[c, 0] (component 1 at x[c, 1]), 32 valid; next x[n, 0], 7 valid; starts tile == 0
                const ChainStream& st = *n->stream;
                out += fmt::format("{}  streams {} (component 1 at {}), {} valid; next {}, {} valid; starts {}\n", pad,
                                   p.print(st.first), p.print(st.second), p.print(st.valid), p.print(st.next),
                                   p.print(st.next_valid), p.print(st.starts));
                if (st.outputs())
                    out += fmt::format("{}  streams out to {} (component 1 at {})\n", pad, p.print(st.out_first),
                                       p.print(st.out_second));
            }
            break;
        }
        case StmtKind::Dense: {
            // dense h[4] = relu(h_W[4, 4] x h_in[4] + h_b[4]), constants as <4 x 4 constants>
            auto n = s.as<DenseNode>();
            const DenseLayer& l = n->layer;
            std::string w = l.weight_field
                ? fmt::format("{}[{}, {}]", l.weight_field->name, l.outputs, l.inputs)
                : fmt::format("<{} x {} constants>", l.outputs, l.inputs);
            std::string b = l.bias_field  ? fmt::format(" + {}[{}]", l.bias_field->name, l.outputs)
                            : l.bias.empty() ? std::string()
                                             : fmt::format(" + <{} constants>", l.outputs);
            out += fmt::format("{}dense {}[{}] = {}({} x {}[{}]{})\n", pad, n->output->name,
                               l.outputs, l.activation.name, w, n->input->name, l.inputs, b);
            break;
        }
        }
    }
};

} // namespace
} // namespace loom::ir

namespace loom {

std::string to_string(const Expr& e) {
    if (!e.defined()) return "<undefined>";
    return ir::ExprPrinter().print(e);
}

std::string to_string(const Stmt& s) {
    if (!s.defined()) return "<undefined>\n";
    ir::StmtDebugPrinter p;
    p.print(s, 0);
    return p.out;
}

std::ostream& operator<<(std::ostream& os, const Expr& e) { return os << to_string(e); }
std::ostream& operator<<(std::ostream& os, const Stmt& s) { return os << to_string(s); }

} // namespace loom
