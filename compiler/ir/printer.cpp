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

std::string ExprPrinter::print(const Expr& e) { return print_prec(e).text; }

std::string ExprPrinter::operand(const Expr& e, int min_precedence) {
    Text t = print_prec(e);
    return t.precedence < min_precedence ? "(" + t.text + ")" : t.text;
}

ExprPrinter::Text ExprPrinter::print_prec(const Expr& e) {
    switch (e.kind()) {
    case ExprKind::Const: {
        std::string s = literal(e.as<ConstNode>());
        return {s, s.rfind('-', 0) == 0 ? kUnary : kPrimary};
    }
    case ExprKind::Var: return {var_name(e.as<VarNode>()), kPrimary};
    case ExprKind::Counter: return counter(e.as<CounterNode>());
    case ExprKind::FieldAccess: return field_access(e.as<FieldAccessNode>());
    case ExprKind::ThreadIndex: return thread_index(e.as<ThreadIndexNode>());
    case ExprKind::Load: return load(e.as<LoadNode>());
    case ExprKind::BlockThread: return block_thread(e.as<BlockThreadNode>());
    case ExprKind::ArrayLoad: return array_load(e.as<ArrayLoadNode>());
    case ExprKind::Unary: {
        auto u = e.as<UnaryNode>();
        // Operands that start with '-' or '!' get parentheses: "- -x" would read as "--x".
        return {std::string(op_name(u->op)) + operand(u->a, kUnary + 1), kUnary};
    }
    case ExprKind::Binary: return binary(e.as<BinaryNode>());
    case ExprKind::Select: {
        auto s = e.as<SelectNode>();
        return {fmt::format("{} ? {} : {}", operand(s->cond, kTernary + 1),
                            operand(s->if_true, kTernary + 1), operand(s->if_false, kTernary)),
                kTernary};
    }
    case ExprKind::Call: return call(e.as<CallNode>());
    case ExprKind::Cast: return cast(e.as<CastNode>());
    }
    return {"?", kPrimary};
}

std::string ExprPrinter::var_name(const VarNode* v) { return v->name; }
std::string ExprPrinter::type_name_of(ScalarType t) { return std::string(type_name(t)); }

std::string ExprPrinter::literal(const ConstNode* c) {
    if (c->type == ScalarType::Bool) return c->int_value ? "true" : "false";
    if (is_int(c->type)) return fmt::format("{}", c->int_value);
    bool suffix = c->type == ScalarType::Float32 && std::isfinite(c->float_value);
    return format_float(c->float_value, c->type) + (suffix ? "f" : "");
}

ExprPrinter::Text ExprPrinter::counter(const CounterNode* c) {
    static const char* names[] = {"x", "y", "z"};
    return {c->axis < 3 ? names[c->axis] : fmt::format("ctr({})", c->axis), kPrimary};
}

ExprPrinter::Text ExprPrinter::field_access(const FieldAccessNode* a) {
    std::string s;
    if (a->absolute()) {
        std::vector<std::string> idx;
        for (auto& i : a->indices) idx.push_back(print(i));
        s = fmt::format("{}.at({})", a->field->name, fmt::join(idx, ", "));
    } else {
        s = fmt::format("{}[{}]", a->field->name, fmt::join(a->offsets, ", "));
    }
    if (!a->components.empty()) s += fmt::format("({})", fmt::join(a->components, ", "));
    return {s, kPrimary};
}

ExprPrinter::Text ExprPrinter::thread_index(const ThreadIndexNode* t) {
    return {fmt::format("thread_index.{}", "xyz"[t->dim]), kPrimary};
}

ExprPrinter::Text ExprPrinter::load(const LoadNode* l) {
    return {fmt::format("{}[{}]", l->field->name, print(l->index)), kPrimary};
}

ExprPrinter::Text ExprPrinter::block_thread(const BlockThreadNode* t) {
    return {t->count ? "block_thread.count" : "block_thread.rank", kPrimary};
}

ExprPrinter::Text ExprPrinter::array_load(const ArrayLoadNode* l) {
    return {fmt::format("{}[{}]", l->array->name, print(l->index)), kPrimary};
}

ExprPrinter::Text ExprPrinter::call(const CallNode* c) {
    std::vector<std::string> args;
    for (auto& a : c->args) args.push_back(print(a));
    return {fmt::format("{}({})", fn_name(c->fn), fmt::join(args, ", ")), kPrimary};
}

ExprPrinter::Text ExprPrinter::binary(const BinaryNode* b) {
    if (b->op == BinaryOp::Min || b->op == BinaryOp::Max)
        return {fmt::format("{}({}, {})", op_name(b->op), print(b->a), print(b->b)), kPrimary};
    int p = kMul;
    switch (b->op) {
    case BinaryOp::Add:
    case BinaryOp::Sub: p = kAdd; break;
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge: p = kCompare; break;
    case BinaryOp::Eq:
    case BinaryOp::Ne: p = kEquality; break;
    case BinaryOp::And: p = kAnd; break;
    case BinaryOp::Or: p = kOr; break;
    default: break;
    }
    // Left-associative: the left operand may share the precedence, the right must bind tighter.
    return {fmt::format("{} {} {}", operand(b->a, p), op_name(b->op), operand(b->b, p + 1)), p};
}

ExprPrinter::Text ExprPrinter::cast(const CastNode* c) {
    return {fmt::format("({}) {}", type_name_of(c->type), operand(c->value, kUnary)), kUnary};
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
        case StmtKind::Store: {
            auto n = s.as<StoreNode>();
            out += fmt::format("{}{}[{}] = {}\n", pad, n->field->name, p.print(n->index),
                               p.print(n->value));
            break;
        }
        case StmtKind::ArrayStore: {
            auto n = s.as<ArrayStoreNode>();
            out += fmt::format("{}{}[{}] = {}\n", pad, n->array->name, p.print(n->index),
                               p.print(n->value));
            break;
        }
        case StmtKind::Allocate:
            out += fmt::format("{}alloc {}\n", pad, s.as<AllocateNode>()->array->describe());
            break;
        case StmtKind::Barrier: out += fmt::format("{}barrier\n", pad); break;
        case StmtKind::Block:
            for (auto& c : s.as<BlockNode>()->stmts) print(c, indent);
            break;
        case StmtKind::For: {
            auto n = s.as<ForNode>();
            // Serial loops print no kind, so the GPU pipeline's notation is unchanged.
            std::string kind =
                n->kind == ForKind::Serial ? "" : ", " + std::string(for_kind_name(n->kind));
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
