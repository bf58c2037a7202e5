#include "compiler/codegen/c_printer.hpp"

#include "compiler/ir/equality.hpp"
#include "compiler/ir/visitor.hpp"

#include <loom/errors.hpp>
#include <loom/version.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <utility>
#include <vector>

namespace loom::ir {

namespace {
const std::set<std::string>& reserved_names() {
    static const std::set<std::string> r = {
        "auto", "bool", "break", "case", "char", "const", "continue", "default", "do", "double",
        "else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long", "return",
        "short", "signed", "sizeof", "static", "struct", "switch", "typedef", "union", "unsigned",
        "void", "volatile", "while", "class", "namespace", "template", "this", "new", "delete",
        "true", "false", "nullptr", "operator", "using", "typename", "threadIdx", "blockIdx",
        "blockDim", "gridDim", "warpSize", "min", "max", "abs", "labs", "llabs", "sqrt", "sqrtf", "rsqrt",
        "rsqrtf", "exp", "expf", "log", "logf", "pow", "powf", "sin", "sinf", "cos", "cosf",
        "tan", "tanf", "tanh", "tanhf", "erf", "erff", "fabs", "fabsf", "floor", "floorf", "ceil",
        "ceilf", "fma", "fmaf", "fmin", "fminf", "fmax", "fmaxf", "fmod", "fmodf", "restrict",
        // C++ keywords and the names the C++ prelude declares (both targets are C++).
        "private", "protected", "public", "virtual", "friend", "mutable", "explicit", "export",
        "register", "asm", "throw", "try", "catch", "typeid", "constexpr", "decltype",
        "noexcept", "alignas", "alignof", "static_assert", "thread_local", "static_cast",
        "const_cast", "dynamic_cast", "reinterpret_cast", "wchar_t", "char16_t", "char32_t",
        "and", "or", "not", "xor", "bitand", "bitor", "compl", "and_eq", "or_eq", "xor_eq",
        "not_eq", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t",
        "uint64_t", "size_t", "labs", "loom_min", "loom_max", "loom_shared"};
    return r;
}

/// Capitals, digits and underscores only, with at least one capital (the style of macros).
bool is_upper_name(std::string_view name) {
    return std::none_of(name.begin(), name.end(), [](char c) { return c >= 'a' && c <= 'z'; }) &&
           std::any_of(name.begin(), name.end(), [](char c) { return c >= 'A' && c <= 'Z'; });
}

/// A name that <math.h>, <stdint.h>, <stdlib.h>, the host compiler or NVRTC may define as a
/// macro: printed as is, it would be replaced by the preprocessor (NAN, NULL, M_PI, INT32_MAX).
/// Besides the names the headers define (glibc's and the C standard's), every all-capital name
/// with an underscore, every M_ (math constant) and every _X (reserved) name is treated as one.
bool is_macro_name(const std::string& name) {
    static const std::set<std::string> macros = {
        "NULL", "NAN", "INFINITY", "HUGE_VAL", "HUGE_VALF", "HUGE_VALL", "SNAN", "SNANF",
        "SNANL", "MAXFLOAT", "EOF", "EDOM", "ERANGE", "EILSEQ", "NFDBITS", "BYTE_ORDER",
        "WNOHANG", "WUNTRACED", "WSTOPPED", "WEXITED", "WCONTINUED", "WNOWAIT", "WEXITSTATUS",
        "WTERMSIG", "WSTOPSIG", "WIFEXITED", "WIFSIGNALED", "WIFSTOPPED", "WIFCONTINUED",
        "errno", "assert", "offsetof", "alloca", "math_errhandling", "issubnormal", "isnan",
        "isinf", "isfinite", "isnormal", "signbit", "fpclassify", "unix", "linux", "i386",
        "be16toh", "be32toh", "be64toh", "htobe16", "htobe32", "htobe64", "htole16", "htole32",
        "htole64", "le16toh", "le32toh", "le64toh", "CUDART_VERSION", "CUDA_VERSION"};
    if (macros.count(name)) return true;
    if (name.size() >= 2 && name[0] == '_' && name[1] >= 'A' && name[1] <= 'Z') return true;
    if (name.rfind("M_", 0) == 0) return true; // M_PI, M_PIf, M_SQRT1_2l, ...
    // INT32_MAX, UINT8_C, RAND_MAX, EXIT_SUCCESS, FP_NAN, HUGE_VAL_F32, ...
    return name.find('_') != std::string::npos && is_upper_name(name);
}
} // namespace

namespace {
/// The variables an IR tree reads (a Declare's own variable is not a read).
struct ReadVariables : IRVisitor {
    std::set<const VarNode*> read;
    void visit_Var(const VarNode* v) override { read.insert(v); }
    void visit_Declare(const DeclareNode* n) override { visit(n->value); }
};
} // namespace

CFamilyPrinter::CFamilyPrinter(LoweredKernel& kernel) : kernel_(kernel) {
    if (kernel.body.defined()) {
        ReadVariables reads;
        reads.visit(kernel.body);
        read_ = std::move(reads.read);
    }
    // The user's names first (fields, scalar parameters), so that loom's own parameters (sizes
    // size_N, strides <field>_stride_N) are the ones renamed when they meet, and a scalar keeps
    // the name the user passes it by. The kernel's own name is no reservation: a parameter may
    // shadow the function it belongs to (and the CPU target prints the kernel under a loom-owned
    // name).
    for (bool user : {true, false}) {
        for (auto& p : kernel.params) {
            const bool user_named = p.role == ParamRole::FieldPointer || p.role == ParamRole::Scalar;
            if (user_named != user) continue;
            std::string hint =
                p.role == ParamRole::FieldPointer ? p.field->name : p.var.as<VarNode>()->name;
            const void* key = p.role == ParamRole::FieldPointer
                                  ? static_cast<const void*>(p.field.get())
                                  : static_cast<const void*>(p.var.get());
            p.name = name_of(key, hint);
        }
        // The user's IndexVars (k in sum(k, ...)) keep their names over loom's own loops.
        if (user) {
            struct IndexVars : IRVisitor {
                std::vector<const VarNode*> found;
                void visit_For(const ForNode* f) override {
                    if (auto v = f->var.as<VarNode>(); v->role == VarRole::Index) found.push_back(v);
                    IRVisitor::visit_For(f);
                }
            } index_vars;
            index_vars.visit(kernel.body);
            for (const VarNode* v : index_vars.found) name_of(v, v->name);
        }
    }
}

std::string CFamilyPrinter::header(std::string_view target_label) const {
    const KernelConfig& c = kernel_.config;
    std::string space;
    if (c.iteration_slice) {
        space = "iteration slice " + c.iteration_slice->describe();
    } else {
        std::vector<std::string> gl;
        for (auto [lo, hi] : kernel_.ghost_layers) gl.push_back(fmt::format("({}, {})", lo, hi));
        space = fmt::format("ghost layers {} (low, high) per axis", fmt::join(gl, " "));
    }
    std::vector<std::string> fields;
    for (auto& f : kernel_.fields) {
        bool buffer = std::find(kernel_.buffers.begin(), kernel_.buffers.end(), f) != kernel_.buffers.end();
        fields.push_back(f->describe() + (buffer ? " (buffer)" : ""));
    }
    return fmt::format(
        "// Generated by loom {} from the DSL; edit the DSL, not this file.\n"
        "// kernel:  {} ({})\n"
        "// options: index type {}, fast math {}{}\n"
        "// space:   {}\n"
        "// fields:  {}\n"
        "// launch:  {}\n\n",
        version_string, kernel_.name, target_label,
        type_name(c.index_type.value_or(ScalarType::Int64)), c.fast_math ? "on" : "off",
        kernel_.max_registers > 0
            ? fmt::format(", at most {} registers per thread", kernel_.max_registers)
            : std::string(),
        space,
        fmt::join(fields, "; "), kernel_.launch.describe());
}

std::string CFamilyPrinter::grouped_params(
    const std::function<std::string(KernelParam&, std::size_t)>& item, std::string_view separator) {
    // One line per group (pointers, sizes, strides, scalars) keeps long signatures readable.
    std::vector<std::string> groups;
    std::vector<std::string> current;
    ParamRole role = ParamRole::FieldPointer;
    for (std::size_t i = 0; i < kernel_.params.size(); ++i) {
        KernelParam& p = kernel_.params[i];
        if (!current.empty() && p.role != role) {
            groups.push_back(fmt::format("{}", fmt::join(current, ", ")));
            current.clear();
        }
        role = p.role;
        current.push_back(item(p, i));
    }
    if (!current.empty()) groups.push_back(fmt::format("{}", fmt::join(current, ", ")));
    return fmt::format("{}", fmt::join(groups, separator));
}

std::string CFamilyPrinter::signature(std::string_view qualifiers) {
    std::string params = grouped_params(
        [&](KernelParam& p, std::size_t) {
            if (p.role == ParamRole::FieldPointer)
                p.c_type = fmt::format("{}{}* __restrict__", p.read_only ? "const " : "",
                                       type_name_of(p.type));
            else
                p.c_type = "const " + type_name_of(p.type);
            return param_declaration(p);
        },
        ",\n    ");
    return fmt::format("{} void {}{}(\n    {})\n", qualifiers, function_attributes(),
                       function_name(), params);
}

std::string CFamilyPrinter::function_name() { return kernel_.name; }

std::string CFamilyPrinter::param_declaration(const KernelParam& p) {
    return p.c_type + " " + p.name;
}

std::string CFamilyPrinter::loop_pragma(const ForNode*) { return ""; }

std::string CFamilyPrinter::function_attributes() { return ""; }

std::string CFamilyPrinter::loop_body_end(const ForNode*, const std::string&) { return ""; }

// A DSL subexpression may go unused (and a use may fold away): say so rather than have the
// compiler warn (g++'s -Wunused-variable, NVRTC's #177-D).
std::string CFamilyPrinter::declaration_prefix(const VarNode* v) {
    return read_.count(v) ? "" : "[[maybe_unused]] ";
}

std::string CFamilyPrinter::unique_name(const std::string& hint) {
    std::string base = hint.empty() ? "t" : hint;
    if (reserved_names().count(base) || is_macro_name(base) || base.rfind("__", 0) == 0) base += "_";
    std::string name = base;
    // Names are never freed, so the search goes on where the last one for this base ended
    // (from 1 each time, thousands of CSE temporaries of one name were quadratic).
    for (int& i = next_suffix_[base]; used_.count(name);) name = fmt::format("{}_{}", base, ++i);
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
        // Always with the suffix: a plain `3` is an int, and min(long long, int) is ambiguous.
        // INT64_MIN has no literal (9223372036854775808 does not fit): an expression of the type.
        if (c->int_value == std::numeric_limits<std::int64_t>::min())
            return fmt::format("(-9223372036854775807{} - 1)", int64_suffix());
        return fmt::format("{}{}", c->int_value, int64_suffix());
    default:
        if (!std::isfinite(c->float_value)) return special_float(c->float_value, c->type);
        return format_float(c->float_value, c->type) + (c->type == ScalarType::Float32 ? "f" : "");
    }
}

std::string CFamilyPrinter::int64_suffix() { return "LL"; }

std::string CFamilyPrinter::int64_abs_name() { return "llabs"; }

void CFamilyPrinter::counter(const CounterNode*, std::string&) {
    throw InternalError("a DSL counter reached the code generator; lower_iteration_space must run first");
}

void CFamilyPrinter::field_access(const FieldAccessNode* a, std::string&) {
    throw InternalError(fmt::format("a field access to {} reached the code generator; "
                                    "lower_iteration_space must run first", a->field->name));
}

void CFamilyPrinter::load(const LoadNode* l, std::string& out) {
    out += name_of(l->field.get(), l->field->name);
    out += '[';
    emit(l->index, 0, out);
    out += ']';
}

void CFamilyPrinter::array_load(const ArrayLoadNode* l, std::string& out) {
    out += name_of(l->array.get(), l->array->name);
    out += '[';
    emit(l->index, 0, out);
    out += ']';
}

void CFamilyPrinter::block_thread(const BlockThreadNode*, std::string&) {
    throw InternalError("a GPU block-thread index reached a printer without threads");
}

std::string CFamilyPrinter::allocate(const AllocateNode* a, const std::string& pad) {
    if (a->array->space != MemorySpace::Local)
        throw InternalError(fmt::format("shared array {} reached a printer without shared memory",
                                        a->array->name));
    return fmt::format("{}{} {}[{}];\n", pad, type_name_of(a->array->type),
                       name_of(a->array.get(), a->array->name), a->array->size);
}

std::string CFamilyPrinter::array_store(const ArrayStoreNode* st, const std::string& pad) {
    std::string target = fmt::format("{}[{}]", name_of(st->array.get(), st->array->name),
                                     print(st->index));
    // a[i] = a[i] + v reads better as a[i] += v (the accumulation of a layer's dot product).
    auto sum = st->value.as<BinaryNode>();
    auto self = sum && sum->op == BinaryOp::Add ? sum->a.as<ArrayLoadNode>() : nullptr;
    if (self && self->array == st->array && structurally_equal(self->index, st->index))
        return fmt::format("{}{} += {};\n", pad, target, print(sum->b));
    return fmt::format("{}{} = {};\n", pad, target, print(st->value));
}

std::string CFamilyPrinter::barrier(const std::string&) {
    throw InternalError("a barrier reached a printer without thread blocks");
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

int CFamilyPrinter::precedence(const Expr& e) {
    if (auto c = e.as<CallNode>(); c && is_int(c->type) && (c->fn == MathFn::Floor || c->fn == MathFn::Ceil))
        return precedence(c->args[0]); // printed as its argument
    if (auto b = e.as<BinaryNode>(); b && b->op == BinaryOp::Mod && is_float(b->type))
        return kPrimary; // fmod(a, b)
    return ExprPrinter::precedence(e);
}

void CFamilyPrinter::call(const CallNode* c, std::string& out) {
    ScalarType t = c->type;
    if (is_int(t)) {
        if (c->fn == MathFn::Floor || c->fn == MathFn::Ceil) {
            emit(c->args[0], 0, out); // the caller parenthesized it as its argument
            return;
        }
        if (c->fn == MathFn::Abs) {
            emit_call(t == ScalarType::Int64 ? int64_abs_name() : "abs", {&c->args[0]}, out);
            return;
        }
    }
    emit_call(math_name(c->fn, t), c->args, out);
}

void CFamilyPrinter::binary(const BinaryNode* b, std::string& out) {
    if (b->op == BinaryOp::Min || b->op == BinaryOp::Max)
        emit_call(min_max_name(b->op, b->type), {&b->a, &b->b}, out);
    else if (b->op == BinaryOp::Mod && is_float(b->type))
        emit_call(b->type == ScalarType::Float32 ? "fmodf" : "fmod", {&b->a, &b->b}, out);
    else
        ExprPrinter::binary(b, out);
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
        auto v = d->var.as<VarNode>();
        // An accumulator is updated in its loop; every other local is computed once.
        const char* qualifier = v->role == VarRole::Accumulator ? "" : "const ";
        return fmt::format("{}{}{}{} {} = {};\n", pad, declaration_prefix(v), qualifier,
                           type_name_of(d->var.type()), print(d->var), value);
    }
    case StmtKind::Store: {
        auto st = s.as<StoreNode>();
        return fmt::format("{}{}[{}] = {};\n", pad, name_of(st->field.get(), st->field->name),
                           print(st->index), print(st->value));
    }
    case StmtKind::ArrayStore: return array_store(s.as<ArrayStoreNode>(), pad);
    case StmtKind::Allocate: return allocate(s.as<AllocateNode>(), pad);
    case StmtKind::Barrier: return barrier(pad);
    case StmtKind::IfThen: {
        auto n = s.as<IfThenNode>();
        return fmt::format("{}if ({}) {{\n{}{}}}\n", pad, print(n->cond), print_stmt(n->then_case, indent + 1), pad);
    }
    case StmtKind::For: {
        auto f = s.as<ForNode>();
        std::string var = print(f->var);
        std::string step = is_const_value(f->step, 1) ? "++" + var : fmt::format("{} += {}", var, print(f->step));
        std::string pragma = loop_pragma(f);
        if (!pragma.empty()) pragma = pad + pragma + "\n";
        return pragma + fmt::format("{}for ({} {} = {}; {} < {}; {}) {{\n{}{}{}}}\n", pad,
                           type_name_of(f->var.type()), var, print(f->start), var, print(f->stop),
                           step, print_stmt(f->body, indent + 1),
                           loop_body_end(f, pad + "    "), pad);
    }
    case StmtKind::Assign: {
        // Only an accumulator's update is left after lowering (verify_lowered checks it).
        auto a = s.as<AssignNode>();
        if (auto b = a->rhs.as<BinaryNode>(); b && b->op == BinaryOp::Add && b->a.same_as(a->lhs))
            return fmt::format("{}{} += {};\n", pad, print(a->lhs), print(b->b));
        return fmt::format("{}{} = {};\n", pad, print(a->lhs), print(a->rhs));
    }
    case StmtKind::Dense:
        throw InternalError("a Dense statement reached the code generator; lower_layers must run first");
    }
    return "";
}

// ---- Line wrapping ------------------------------------------------------------------------------

namespace {

/// A place where a long line may break: the line ends before `end`, the next starts at `next`.
struct LineBreak {
    std::size_t end, next;
    int key;       ///< lower breaks first: parenthesis depth, then how loosely the operator binds
    bool in_index; ///< inside [...], where a break reads worst: only when nothing else fits
};

/// How loosely a binary operator binds (lower: looser, a better place to break); -1 for none.
int operator_rank(std::string_view op) {
    static const std::pair<std::string_view, int> ranks[] = {
        {"=", 1},  {"+=", 1}, {"?", 3}, {":", 3}, {"||", 4}, {"&&", 5}, {"==", 6},
        {"!=", 6}, {"<", 7},  {"<=", 7}, {">", 7}, {">=", 7}, {"+", 8},  {"-", 8},
        {"*", 9},  {"/", 9},  {"%", 9}};
    for (auto& [o, r] : ranks)
        if (o == op) return r;
    return -1;
}

/// Where "// " starts a trailing comment in a line of code, or npos.
std::size_t trailing_comment(std::string_view text) {
    for (std::size_t i = 0; i + 1 < text.size(); ++i) {
        if (text[i] == '"') {
            for (++i; i < text.size() && text[i] != '"'; ++i) i += text[i] == '\\';
        } else if (text[i] == '/' && text[i + 1] == '/') {
            return i;
        }
    }
    return std::string_view::npos;
}

/// The breaks of `text`: after a binary operator printed as " op ", and after ", " and "; ".
std::vector<LineBreak> find_breaks(std::string_view text) {
    std::vector<LineBreak> out;
    int depth = 0, index = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '"') { // a string literal holds no break
            for (++i; i < text.size() && text[i] != '"'; ++i) i += text[i] == '\\';
        } else if (c == '(' || c == ')') {
            depth += c == '(' ? 1 : -1;
        } else if (c == '[' || c == ']') {
            index += c == '[' ? 1 : -1;
        } else if ((c == ',' || c == ';') && i + 1 < text.size() && text[i + 1] == ' ') {
            out.push_back({i + 1, i + 2, depth * 10 + (c == ';' ? 0 : 2), index > 0});
        } else if (c == ' ') {
            std::size_t j = text.find(' ', i + 1);
            if (j == std::string_view::npos || j + 1 >= text.size()) break;
            int rank = operator_rank(text.substr(i + 1, j - i - 1));
            if (rank >= 0) out.push_back({j, j + 1, depth * 10 + rank, index > 0});
        }
    }
    return out;
}

/// One line (without its newline), wrapped, each piece ending in a newline.
std::string wrap_line(std::string_view line, std::size_t width) {
    if (line.size() <= width) return std::string(line) + "\n";
    const std::size_t indent = std::min(line.find_first_not_of(' '), line.size());
    const std::string pad(line.substr(0, indent));
    std::string_view text = line.substr(indent);
    if (text.empty() || text[0] == '#') return std::string(line) + "\n";
    std::string out, prefix = pad, continued = pad + std::string(8, ' ');
    if (text.substr(0, 2) == "//") {
        text.remove_prefix(text.substr(0, 3) == "// " ? 3 : 2);
        prefix = pad + "// ";
        continued = pad + "//     ";
    } else if (std::size_t c = trailing_comment(text); c != std::string_view::npos) {
        out = wrap_line(pad + std::string(text.substr(c)), width);
        text = text.substr(0, text.find_last_not_of(' ', c - 1) + 1);
    }
    std::vector<LineBreak> breaks = find_breaks(text);
    auto by_end = [](const LineBreak& x, const LineBreak& y) { return x.end < y.end; };
    std::stable_sort(breaks.begin(), breaks.end(), by_end);
    const std::size_t room_continued = width > continued.size() ? width - continued.size() : 1;
    for (std::size_t start = 0;; prefix = continued) {
        const std::size_t room = width > prefix.size() ? width - prefix.size() : 1;
        const LineBreak* best = nullptr;
        if (text.size() - start > room) {
            // Only the breaks that end this piece within its room: looking at all of them for
            // every piece made a long line (a huge expression) quadratic.
            auto after = [&](std::size_t pos) {
                return std::upper_bound(breaks.begin(), breaks.end(), LineBreak{pos, 0, 0, false}, by_end);
            };
            const auto first = after(start), last = after(start + room);
            // The loosest break (rightmost among equals) that leaves a rest fitting on one line;
            // failing that, the loosest that fills at least half the room; failing that any
            // break that fits, inside an index last; failing that the first.
            for (int pass = 0; pass < 4 && !best; ++pass) {
                for (auto b = first; b != last; ++b) {
                    const std::size_t len = b->end - start;
                    if (b->in_index != (pass == 3) ||
                        (pass == 0 && text.size() - b->next > room_continued) ||
                        (pass == 1 && 2 * len < room))
                        continue;
                    if (!best || b->key <= best->key) best = &*b;
                }
            }
            if (!best && first != breaks.end()) best = &*first;
        }
        if (!best) return out + prefix + std::string(text.substr(start)) + "\n";
        out += prefix + std::string(text.substr(start, best->end - start)) + "\n";
        start = best->next;
    }
}

} // namespace

std::string wrap_long_lines(const std::string& source, std::size_t width) {
    std::string out;
    std::size_t start = 0;
    while (start < source.size()) {
        std::size_t end = std::min(source.find('\n', start), source.size());
        out += wrap_line(std::string_view(source).substr(start, end - start), width);
        start = end + 1;
    }
    if (!source.empty() && source.back() != '\n') out.pop_back();
    return out;
}

} // namespace loom::ir
