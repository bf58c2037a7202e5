#include "compiler/codegen/c_printer.hpp"

#include "runtime/errors.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <limits>

namespace loom {
using namespace ir;

namespace {
const std::set<std::string>& reserved_names() {
    static const std::set<std::string> r = {
        "auto", "bool", "break", "case", "char", "const", "continue", "default", "do", "double",
        "else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "return",
        "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned",
        "void", "volatile", "while", "class", "namespace", "template", "this", "new", "delete",
        "true", "false", "nullptr", "operator", "using", "typename", "threadIdx", "blockIdx",
        "blockDim", "gridDim", "warpSize", "min", "max", "abs", "llabs", "sqrt", "sqrtf", "rsqrt",
        "rsqrtf", "exp", "expf", "log", "logf", "pow", "powf", "sin", "sinf", "cos", "cosf",
        "tan", "tanf", "tanh", "tanhf", "erf", "erff", "fabs", "fabsf", "floor", "floorf", "ceil",
        "ceilf", "fma", "fmaf", "fmin", "fminf", "fmax", "fmaxf", "fmod", "fmodf", "restrict"};
    return r;
}
} // namespace

CFamilyPrinter::CFamilyPrinter(LoweredKernel& kernel) : kernel_(kernel) {
    used_.insert(kernel.name);
    for (auto& p : kernel.params) {
        std::string hint = p.role == ParamRole::FieldPointer ? p.field->name : p.var.as<VarNode>()->name;
        const void* key = p.role == ParamRole::FieldPointer ? static_cast<const void*>(p.field.get())
                                                            : static_cast<const void*>(p.var.get());
        p.name = name_of(key, hint);
    }
}

std::string CFamilyPrinter::unique_name(const std::string& hint) {
    std::string base = hint.empty() ? "t" : hint;
    if (reserved_names().count(base) || base.rfind("__", 0) == 0) base += "_";
    std::string name = base;
    for (int i = 1; used_.count(name); ++i) name = fmt::format("{}_{}", base, i);
    used_.insert(name);
    return name;
}

std::string CFamilyPrinter::name_of(const void* key, const std::string& hint) {
    auto it = names_.find(key);
    if (it != names_.end()) return it->second;
    return names_[key] = unique_name(hint);
}

std::string CFamilyPrinter::var_name(const VarNode* v) { return name_of(v, v->name); }

std::string CFamilyPrinter::literal(const ConstNode* c) {
    switch (c->type) {
    case ScalarType::Bool: return c->int_value ? "true" : "false";
    case ScalarType::Int32:
        if (c->int_value == std::numeric_limits<std::int32_t>::min()) return "(-2147483647 - 1)";
        return fmt::format("{}", c->int_value);
    case ScalarType::Int64:
        if (c->int_value == std::numeric_limits<std::int64_t>::min()) return "(-9223372036854775807LL - 1)";
        if (c->int_value > std::numeric_limits<std::int32_t>::max() ||
            c->int_value < std::numeric_limits<std::int32_t>::min())
            return fmt::format("{}LL", c->int_value);
        return fmt::format("{}", c->int_value);
    default:
        if (!std::isfinite(c->float_value)) return special_float(c->float_value, c->type);
        return format_float(c->float_value, c->type) + (c->type == ScalarType::Float32 ? "f" : "");
    }
}

ExprPrinter::Text CFamilyPrinter::counter(const CounterNode*) {
    throw InternalError("a DSL counter reached the code generator; lower_iteration_space must run first");
}

ExprPrinter::Text CFamilyPrinter::field_access(const FieldAccessNode* a) {
    throw InternalError(fmt::format("a field access to {} reached the code generator; "
                                    "lower_iteration_space must run first", a->field->name));
}

ExprPrinter::Text CFamilyPrinter::load(const LoadNode* l) {
    return {fmt::format("{}[{}]", name_of(l->field.get(), l->field->name), print(l->index)), kPrimary};
}

std::string CFamilyPrinter::math_name(MathFn fn, ScalarType t) {
    const bool f32 = t == ScalarType::Float32;
    std::string base = fn == MathFn::Abs ? "fabs" : std::string(fn_name(fn));
    return f32 ? base + "f" : base;
}

std::string CFamilyPrinter::min_max_name(BinaryOp op, ScalarType t) {
    const char* base = op == BinaryOp::Min ? "min" : "max";
    if (!is_float(t)) return base;
    return fmt::format("f{}{}", base, t == ScalarType::Float32 ? "f" : "");
}

ExprPrinter::Text CFamilyPrinter::call(const CallNode* c) {
    ScalarType t = c->type;
    if (is_int(t)) {
        if (c->fn == MathFn::Floor || c->fn == MathFn::Ceil) return print_prec(c->args[0]);
        if (c->fn == MathFn::Abs)
            return {fmt::format("{}({})", t == ScalarType::Int64 ? "llabs" : "abs", print(c->args[0])), kPrimary};
    }
    std::vector<std::string> args;
    for (auto& a : c->args) args.push_back(print(a));
    return {fmt::format("{}({})", math_name(c->fn, t), fmt::join(args, ", ")), kPrimary};
}

ExprPrinter::Text CFamilyPrinter::binary(const BinaryNode* b) {
    if (b->op == BinaryOp::Min || b->op == BinaryOp::Max)
        return {fmt::format("{}({}, {})", min_max_name(b->op, b->type), print(b->a), print(b->b)), kPrimary};
    if (b->op == BinaryOp::Mod && is_float(b->type))
        return {fmt::format("{}({}, {})", b->type == ScalarType::Float32 ? "fmodf" : "fmod",
                            print(b->a), print(b->b)),
                kPrimary};
    return ExprPrinter::binary(b);
}

ExprPrinter::Text CFamilyPrinter::cast(const CastNode* c) {
    return {fmt::format("({}) {}", type_name_of(c->type), operand(c->value, kUnary)), kUnary};
}

std::string CFamilyPrinter::print_stmt(const Stmt& s, int indent) {
    std::string pad(indent * 4, ' ');
    switch (s.kind()) {
    case StmtKind::Block: {
        std::string out;
        for (auto& c : s.as<BlockNode>()->stmts) out += print_stmt(c, indent);
        return out;
    }
    case StmtKind::Comment: return fmt::format("{}// {}\n", pad, s.as<CommentNode>()->text);
    case StmtKind::Declare: {
        auto d = s.as<DeclareNode>();
        std::string value = print(d->value); // before naming the variable: it may not read itself
        return fmt::format("{}const {} {} = {};\n", pad, type_name_of(d->var.type()), print(d->var), value);
    }
    case StmtKind::Store: {
        auto st = s.as<StoreNode>();
        return fmt::format("{}{}[{}] = {};\n", pad, name_of(st->field.get(), st->field->name),
                           print(st->index), print(st->value));
    }
    case StmtKind::IfThen: {
        auto n = s.as<IfThenNode>();
        return fmt::format("{}if ({}) {{\n{}{}}}\n", pad, print(n->cond), print_stmt(n->then_case, indent + 1), pad);
    }
    case StmtKind::For: {
        auto f = s.as<ForNode>();
        std::string var = print(f->var);
        std::string step = is_const_value(f->step, 1) ? "++" + var : fmt::format("{} += {}", var, print(f->step));
        // Constant trip counts (the cells of one thread) unroll, so their loads overlap.
        std::string unroll = is_const(f->start) && is_const(f->stop) ? pad + "#pragma unroll\n" : "";
        return unroll + fmt::format("{}for ({} {} = {}; {} < {}; {}) {{\n{}{}}}\n", pad,
                           type_name_of(f->var.type()), var, print(f->start), var, print(f->stop),
                           step, print_stmt(f->body, indent + 1), pad);
    }
    case StmtKind::Assign:
        throw InternalError("an Assign statement reached the code generator; lower_iteration_space must run first");
    }
    return "";
}

} // namespace loom
