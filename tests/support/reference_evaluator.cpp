#include "tests/support/reference_evaluator.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

namespace loom::stencil_test {

// ==== Types and names ==========================================================================

const char* rt_name(RType t) {
    switch (t) {
    case RType::Bool: return "bool";
    case RType::I32: return "int32";
    case RType::I64: return "int64";
    case RType::F32: return "float32";
    case RType::F64: return "float64";
    }
    return "?";
}

ScalarType to_scalar_type(RType t) {
    switch (t) {
    case RType::Bool: return ScalarType::Bool;
    case RType::I32: return ScalarType::Int32;
    case RType::I64: return ScalarType::Int64;
    case RType::F32: return ScalarType::Float32;
    case RType::F64: return ScalarType::Float64;
    }
    return ScalarType::Float64;
}

RType to_rtype(ScalarType t) {
    switch (t) {
    case ScalarType::Bool: return RType::Bool;
    case ScalarType::Int32: return RType::I32;
    case ScalarType::Int64: return RType::I64;
    case ScalarType::Float32: return RType::F32;
    case ScalarType::Float64: return RType::F64;
    default: throw std::logic_error("the reference evaluator has no float16/bfloat16");
    }
}

RType common_rtype(RType a, RType b) {
    if (a == b) return a;
    if (rt_is_float(a) != rt_is_float(b)) return rt_is_float(a) ? a : b;
    return a == RType::F64 || a == RType::I64 ? a : b;
}

const char* rop_name(ROp op) {
    static const char* names[] = {
        "const", "var",  "read", "counter", "at",  "-",   "!",      "abs",  "sqrt", "rsqrt",
        "floor", "ceil", "exp",  "log",     "sin", "cos", "tan",    "tanh", "erf",  "+",
        "-",     "*",    "/",    "%",       "min", "max", "pow",    "<",    "<=",   ">",
        ">=",    "==",   "!=",   "&&",      "||",  "fma", "select", "cast"};
    static_assert(sizeof(names) / sizeof(names[0]) == static_cast<int>(ROp::Cast) + 1);
    return names[static_cast<int>(op)];
}

// ==== The AST ==================================================================================

int RefAst::add(RNode n) {
    for (int child : {n.a, n.b, n.c})
        if (child >= static_cast<int>(nodes.size()))
            throw std::logic_error("reference: operand defined after its use");
    nodes.push_back(std::move(n));
    return static_cast<int>(nodes.size()) - 1;
}

int RefAst::constant(RType t, double v) {
    RNode n;
    n.op = ROp::Const;
    n.type = t;
    if (t == RType::F32)
        n.f = static_cast<double>(static_cast<float>(v));
    else if (t == RType::F64)
        n.f = v;
    else if (t == RType::Bool)
        n.i = v != 0.0;
    else
        n.i = static_cast<std::int64_t>(v);
    return add(n);
}

int RefAst::const_int(RType t, std::int64_t v) {
    if (rt_is_float(t)) throw std::logic_error("const_int of a float type");
    RNode n;
    n.op = ROp::Const;
    n.type = t;
    n.i = t == RType::I32 ? static_cast<std::int32_t>(v) : t == RType::Bool ? v != 0 : v;
    return add(n);
}

int RefAst::var(RType t, int slot) {
    RNode n;
    n.op = ROp::Var;
    n.type = t;
    n.slot = slot;
    return add(n);
}

int RefAst::read(RType t, int field, std::vector<int> offset, int component) {
    RNode n;
    n.op = ROp::Read;
    n.type = t;
    n.slot = field;
    n.offset = std::move(offset);
    n.component = component;
    return add(n);
}

int RefAst::read_at(RType t, int field, const std::vector<int>& indices, int component) {
    if (indices.empty() || indices.size() > 3)
        throw std::logic_error("reference: an absolute read has 1 to 3 indices");
    for (int k : indices)
        if (!rt_is_int(type(k))) throw std::logic_error("reference: absolute index not an integer");
    RNode n;
    n.op = ROp::ReadAt;
    n.type = t;
    n.slot = field;
    n.a = indices[0];
    n.b = indices.size() > 1 ? indices[1] : -1;
    n.c = indices.size() > 2 ? indices[2] : -1;
    n.component = component;
    return add(n);
}

int RefAst::counter(int axis) {
    RNode n;
    n.op = ROp::Counter;
    n.type = RType::I64;
    n.slot = axis;
    return add(n);
}

int RefAst::unary(ROp op, int a) {
    if (!rop_is_unary(op))
        throw std::logic_error(std::string("reference: not unary: ") + rop_name(op));
    RNode n;
    n.op = op;
    n.a = a;
    n.type = op == ROp::Not ? RType::Bool : type(a);
    const bool float_only =
        op != ROp::Neg && op != ROp::Not && op != ROp::Abs && op != ROp::Floor && op != ROp::Ceil;
    if ((op == ROp::Not) != (type(a) == RType::Bool) || (float_only && !rt_is_float(type(a))))
        throw std::logic_error(std::string("reference: bad operand type for ") + rop_name(op) +
                               ": " + rt_name(type(a)));
    return add(n);
}

int RefAst::binary(ROp op, int a, int b) {
    if (!rop_is_binary(op))
        throw std::logic_error(std::string("reference: not binary: ") + rop_name(op));
    if (type(a) != type(b))
        throw std::logic_error(std::string("reference: operands of ") + rop_name(op) +
                               " differ in type: " + rt_name(type(a)) + " and " + rt_name(type(b)));
    RNode n;
    n.op = op;
    n.a = a;
    n.b = b;
    const bool logic = rop_is_logic(op);
    n.type = logic || rop_is_compare(op) ? RType::Bool : type(a);
    const bool is_bool = type(a) == RType::Bool;
    if (logic != is_bool && !(is_bool && (op == ROp::Eq || op == ROp::Ne)))
        throw std::logic_error(std::string("reference: bad operand type for ") + rop_name(op));
    if (op == ROp::Pow && !rt_is_float(type(a)))
        throw std::logic_error("reference: pow of integers (the DSL converts them to float64)");
    return add(n);
}

int RefAst::fma(int a, int b, int c) {
    if (type(a) != type(b) || type(a) != type(c) || !rt_is_float(type(a)))
        throw std::logic_error("reference: fma operands must be one float type");
    RNode n;
    n.op = ROp::Fma;
    n.type = type(a);
    n.a = a;
    n.b = b;
    n.c = c;
    return add(n);
}

int RefAst::select(int cond, int if_true, int if_false) {
    if (type(cond) != RType::Bool || type(if_true) != type(if_false))
        throw std::logic_error("reference: select needs a bool and two operands of one type");
    RNode n;
    n.op = ROp::Select;
    n.type = type(if_true);
    n.a = cond;
    n.b = if_true;
    n.c = if_false;
    return add(n);
}

int RefAst::cast(RType t, int a, bool implicit) {
    if (type(a) == t) return a; // (loom's IR converts bools too; the DSL does not)
    RNode n;
    n.op = ROp::Cast;
    n.type = t;
    n.a = a;
    n.implicit = implicit;
    return add(n);
}

int RefAst::standalone(int n) {
    RNode x = (*this)[n];
    if (x.op == ROp::Const && x.weak) {
        x.weak = x.int_spelling = false;
        return add(x);
    }
    if (x.op == ROp::Cast && x.implicit) {
        x.implicit = false;
        return add(x);
    }
    return n;
}

int RefAst::replaced(int root, const std::map<int, int>& with, std::map<int, int>& memo) {
    if (auto it = with.find(root); it != with.end()) return it->second;
    if (auto it = memo.find(root); it != memo.end()) return it->second;
    const RNode& x = (*this)[root];
    int ops[3] = {x.a, x.b, x.c};
    bool changed = false;
    for (int& k : ops) {
        if (k < 0) continue;
        const int r = replaced(k, with, memo);
        changed |= r != k;
        k = r;
    }
    const int out = changed ? with_operands(root, ops[0], ops[1], ops[2]) : root;
    memo[root] = out;
    return out;
}

int RefAst::with_operands(int n, int a, int b, int c) {
    RNode x = (*this)[n];
    const int in[3] = {x.a, x.b, x.c};
    const int out[3] = {a, b, c};
    for (int k = 0; k < 3; ++k)
        if ((in[k] < 0) != (out[k] < 0) || (in[k] >= 0 && type(in[k]) != type(out[k])))
            throw std::logic_error("reference: with_operands changes an operand's type");
    x.a = a;
    x.b = b;
    x.c = c;
    return add(x);
}

std::vector<int> RefAst::operands(int n) const {
    std::vector<int> out;
    const RNode& x = (*this)[n];
    for (int child : {x.a, x.b, x.c})
        if (child >= 0) out.push_back(child);
    return out;
}

std::int64_t RefAst::operations(int n) const {
    // Operands always precede their users, so one pass in node order suffices.
    std::vector<std::int64_t> ops(static_cast<std::size_t>(n) + 1, 0);
    for (int k = 0; k <= n; ++k) {
        const RNode& x = (*this)[k];
        std::int64_t c = x.op >= ROp::Neg ? 1 : 0;
        for (int child : {x.a, x.b, x.c})
            if (child >= 0) c += ops[static_cast<std::size_t>(child)];
        ops[static_cast<std::size_t>(k)] = std::min<std::int64_t>(c, 1 << 20);
    }
    return ops[static_cast<std::size_t>(n)];
}

std::string RefAst::to_string(int n, const std::vector<std::string>& field_names) const {
    const RNode& x = (*this)[n];
    std::ostringstream s;
    s << std::setprecision(17);
    auto field = [&](int slot) {
        if (slot >= 0 && slot < static_cast<int>(field_names.size()))
            return field_names[static_cast<std::size_t>(slot)];
        return "field" + std::to_string(slot);
    };
    auto arg = [&](int k) { return to_string(k, field_names); };
    switch (x.op) {
    case ROp::Const:
        if (rt_is_float(x.type))
            s << x.f << (x.type == RType::F32 ? "f" : "");
        else if (x.type == RType::Bool)
            s << (x.i ? "true" : "false");
        else
            s << x.i;
        return s.str();
    case ROp::Var: s << "v" << x.slot; return s.str();
    case ROp::Counter: s << "ctr_" << x.slot; return s.str();
    case ROp::Read: {
        s << field(x.slot) << "[";
        for (std::size_t d = 0; d < x.offset.size(); ++d) s << (d ? ", " : "") << x.offset[d];
        s << "]";
        if (x.component >= 0) s << "(" << x.component << ")";
        return s.str();
    }
    case ROp::ReadAt: {
        s << field(x.slot) << ".at(";
        const char* sep = "";
        for (int k : operands(n)) s << sep << arg(k), sep = ", ";
        s << ")";
        if (x.component >= 0) s << "(" << x.component << ")";
        return s.str();
    }
    default: break;
    }
    if (x.op == ROp::Cast) return std::string(rt_name(x.type)) + "(" + arg(x.a) + ")";
    if (x.op == ROp::Select) return "select(" + arg(x.a) + ", " + arg(x.b) + ", " + arg(x.c) + ")";
    if (x.op == ROp::Fma) return "fma(" + arg(x.a) + ", " + arg(x.b) + ", " + arg(x.c) + ")";
    if (x.op == ROp::Neg || x.op == ROp::Not) return rop_name(x.op) + ("(" + arg(x.a) + ")");
    if (x.b < 0) return std::string(rop_name(x.op)) + "(" + arg(x.a) + ")";
    if (x.op == ROp::Min || x.op == ROp::Max || x.op == ROp::Pow)
        return std::string(rop_name(x.op)) + "(" + arg(x.a) + ", " + arg(x.b) + ")";
    return "(" + arg(x.a) + " " + rop_name(x.op) + " " + arg(x.b) + ")";
}

// ==== Candidates ===============================================================================

void RCands::add(RType t, const RVal& value) {
    RVal x = value;
    // NaN is NaN and an infinity is exact (an overflow within rounding is wild already): no
    // error to carry on, where inf * 0 would make a NaN of it.
    if (rt_is_float(t) && !std::isfinite(x.f)) x.err = 0.0;
    if (x.wild || wild() || n == kMax || std::isnan(x.err)) {
        // Anything goes: one wild value stands for all (keeping whether anything overflowed).
        RVal w;
        w.wild = true;
        w.overflow = x.overflow || overflow();
        n = 1;
        v[0] = w;
        return;
    }
    for (int k = 0; k < n; ++k) {
        const bool same = rt_is_float(t)
                              ? (v[k].f == x.f || (std::isnan(v[k].f) && std::isnan(x.f)))
                              : v[k].i == x.i;
        if (same) {
            v[k].err = std::max(v[k].err, x.err);
            v[k].overflow = v[k].overflow || x.overflow;
            return;
        }
    }
    v[n++] = x;
}

bool RCands::wild() const {
    return n == 1 && v[0].wild;
}

bool RCands::overflow() const {
    for (int k = 0; k < n; ++k)
        if (v[k].overflow) return true;
    return false;
}

// ==== The evaluator ============================================================================

namespace {

std::int64_t wrap(RType t, std::uint64_t v) {
    return t == RType::I32 ? static_cast<std::int32_t>(static_cast<std::uint32_t>(v))
                           : static_cast<std::int64_t>(v);
}
std::int64_t int_min(RType t) {
    return t == RType::I32 ? std::numeric_limits<std::int32_t>::min()
                           : std::numeric_limits<std::int64_t>::min();
}
template <typename Op>
double fop(RType t, double a, double b, Op op) {
    if (t == RType::F32)
        return static_cast<double>(op(static_cast<float>(a), static_cast<float>(b)));
    return op(a, b);
}
template <typename Op>
double fop1(RType t, double a, Op op) {
    if (t == RType::F32) return static_cast<double>(op(static_cast<float>(a)));
    return op(a);
}

RCands one(RType t, const RVal& v) {
    RCands c;
    c.add(t, v);
    return c;
}
RCands wild_value(bool overflow) {
    RCands c;
    RVal w;
    w.wild = true;
    w.overflow = overflow;
    c.add(RType::F64, w);
    return c;
}
RVal fval(double f, double err) {
    RVal r;
    r.f = f;
    r.err = err;
    return r;
}

/// Signed integer arithmetic with C's overflow made visible: the wrapped result, flagged.
RVal int_arith(ROp op, RType t, std::int64_t a, std::int64_t b) {
    RVal r;
    bool over = false;
    if (t == RType::I32) {
        const auto x = static_cast<std::int32_t>(a), y = static_cast<std::int32_t>(b);
        std::int32_t out = 0;
        if (op == ROp::Add) over = __builtin_add_overflow(x, y, &out);
        if (op == ROp::Sub) over = __builtin_sub_overflow(x, y, &out);
        if (op == ROp::Mul) over = __builtin_mul_overflow(x, y, &out);
        r.i = out;
    } else {
        std::int64_t out = 0;
        if (op == ROp::Add) over = __builtin_add_overflow(a, b, &out);
        if (op == ROp::Sub) over = __builtin_sub_overflow(a, b, &out);
        if (op == ROp::Mul) over = __builtin_mul_overflow(a, b, &out);
        r.i = out;
    }
    r.overflow = over;
    return r;
}

} // namespace

void RefEvaluator::next() {
    ++stamp_;
    if (stamp_ == 0) std::fill(seen_.begin(), seen_.end(), 0u), stamp_ = 1;
}

const RCands& RefEvaluator::eval(int n) {
    if (seen_.size() < ast_.nodes.size()) {
        seen_.resize(ast_.nodes.size(), 0u);
        memo_.resize(ast_.nodes.size());
    }
    const std::size_t k = static_cast<std::size_t>(n);
    if (seen_[k] == stamp_) return memo_[k];
    RCands r = compute(n);
    seen_[k] = stamp_;
    memo_[k] = r;
    return memo_[k];
}

RVal RefEvaluator::read(const RNode& x, const Index& at) const {
    if (x.slot < 0 || x.slot >= static_cast<int>(arrays.size()))
        throw std::logic_error("reference: read of an unknown field");
    const RefArray& a = arrays[static_cast<std::size_t>(x.slot)];
    std::int64_t pos = a.offset;
    const std::size_t spatial = at.size();
    if (a.shape.size() != spatial + (x.component >= 0 ? 1 : 0))
        throw std::logic_error("reference: a read's indices do not match its array's axes");
    for (std::size_t d = 0; d < a.shape.size(); ++d) {
        const std::int64_t i = d < spatial ? at[d] : x.component;
        if (i < 0 || i >= a.shape[d]) {
            std::ostringstream s;
            s << "reference: the read of field " << x.slot << " at " << shape_string(at)
              << " leaves the array " << shape_string(a.shape) << " along axis " << d;
            if (x.op == ROp::ReadAt) throw RefUndefined(s.str());
            throw std::logic_error(s.str() + " (the generator let a stencil reach out of bounds)");
        }
        pos += i * a.strides[d];
    }
    RVal v;
    if (rt_is_float(x.type)) {
        if (!a.buffer) throw std::logic_error("reference: a float read of an integer array");
        v.f = a.buffer->at(static_cast<std::size_t>(pos));
    } else {
        if (!a.ints) throw std::logic_error("reference: an integer read of a float array");
        v.i = a.ints->at(static_cast<std::size_t>(pos));
    }
    return v;
}

RCands RefEvaluator::unary(const RNode& x, const RVal& a) const {
    const RType t = x.type;
    if (a.wild) return wild_value(a.overflow);
    RCands out;
    auto give = [&](RVal r) {
        r.overflow = r.overflow || a.overflow;
        out.add(t, r);
        return out;
    };
    if (x.op == ROp::Not) {
        RVal r;
        r.i = !a.i;
        return give(r);
    }
    if (rt_is_int(t)) {
        RVal r;
        switch (x.op) {
        case ROp::Neg:
            r.i = wrap(t, 0u - static_cast<std::uint64_t>(a.i));
            r.overflow = a.i == int_min(t);
            break;
        case ROp::Abs:
            r.i = a.i < 0 ? wrap(t, 0u - static_cast<std::uint64_t>(a.i)) : a.i;
            r.overflow = a.i == int_min(t); // C's abs(INT_MIN) is undefined
            break;
        case ROp::Floor:
        case ROp::Ceil: r.i = a.i; break;
        default: throw std::logic_error(std::string("reference: ") + rop_name(x.op) + " on ints");
        }
        return give(r);
    }

    const double eps = rt_epsilon(t), tiny = rt_tiny(t), s = spread(a), v = a.f;
    if (std::isnan(v) || std::isinf(v)) {
        // Exact special inputs give exact special (or exact finite) results.
        double r = 0.0;
        switch (x.op) {
        case ROp::Neg: r = -v; break;
        case ROp::Abs: r = std::fabs(v); break;
        case ROp::Floor: r = std::floor(v); break;
        case ROp::Ceil: r = std::ceil(v); break;
        case ROp::Rsqrt:
            r = fop1(t, v, [](auto y) { return decltype(y)(1) / std::sqrt(y); });
            break;
        default: {
            const ROp op = x.op;
            r = fop1(t, v, [op](auto y) -> decltype(y) {
                switch (op) {
                case ROp::Sqrt: return std::sqrt(y);
                case ROp::Exp: return std::exp(y);
                case ROp::Log: return std::log(y);
                case ROp::Sin: return std::sin(y);
                case ROp::Cos: return std::cos(y);
                case ROp::Tan: return std::tan(y);
                case ROp::Tanh: return std::tanh(y);
                case ROp::Erf: return std::erf(y);
                default: return y;
                }
            });
        }
        }
        return give(fval(r, 0.0));
    }
    // Where the argument may lie on either side of a root's or logarithm's domain boundary.
    const bool may_be_negative = v - s<0.0, may_be_positive = v + s> 0.0;
    RVal r;
    switch (x.op) {
    case ROp::Neg: r = fval(-v, a.err); break;
    case ROp::Abs: r = fval(std::fabs(v), a.err); break;
    case ROp::Floor:
    case ROp::Ceil: {
        // The step may fall within rounding: every integer in reach is a candidate.
        auto f = [&](double y) { return x.op == ROp::Floor ? std::floor(y) : std::ceil(y); };
        const double lo = f(v - s), hi = f(v + s);
        if (hi - lo > 1.0) return wild_value(a.overflow);
        give(fval(f(v), 0.0));
        give(fval(lo, 0.0));
        return give(fval(hi, 0.0));
    }
    case ROp::Sqrt:
    case ROp::Rsqrt: {
        if (!may_be_positive && v != 0.0) return give(fval(std::nan(""), 0.0));
        if (may_be_negative && !(v == 0.0 && s == 0.0)) return wild_value(a.overflow);
        if (x.op == ROp::Rsqrt && v == 0.0) return wild_value(a.overflow); // +-inf: sign of zero
        const double root = fop1(t, v, [](auto y) { return std::sqrt(y); });
        // sqrt(v) - sqrt(v - e) = e / (sqrt(v) + sqrt(v - e)): exact, not first-order.
        const double lower = std::sqrt(std::max(v - a.err, 0.0));
        const double dsqrt = a.err > 0 ? a.err / (std::sqrt(v) + lower) : 0.0;
        if (x.op == ROp::Sqrt) {
            r = fval(root, dsqrt + eps * root + tiny);
        } else {
            // The host prints 1 / sqrt (two roundings), CUDA's rsqrt is within 2 ulps.
            const double q = fop1(t, v, [](auto y) { return decltype(y)(1) / std::sqrt(y); });
            r = fval(q, q * dsqrt / std::max(lower, tiny) + 3.0 * eps * q + tiny);
        }
        break;
    }
    case ROp::Log: {
        if (!may_be_positive && v != 0.0) return give(fval(std::nan(""), 0.0));
        if (v == 0.0 && s == 0.0) return give(fval(-HUGE_VAL, 0.0));
        if (may_be_negative) return wild_value(a.overflow);
        const double l = fop1(t, v, [](auto y) { return std::log(y); });
        r = fval(l, a.err / std::max(v - a.err, tiny) + 2.0 * eps * std::fabs(l) + tiny);
        break;
    }
    case ROp::Exp: {
        const double e = fop1(t, v, [](auto y) { return std::exp(y); });
        // exp(v + err) - exp(v), in double: right also where exp(v) underflows to zero.
        r = fval(e, std::max(std::exp(v + a.err) - std::exp(v), 0.0) + 2.0 * eps * e + tiny);
        break;
    }
    case ROp::Sin:
    case ROp::Cos: {
        const double y = x.op == ROp::Sin ? fop1(t, v, [](auto z) { return std::sin(z); })
                                          : fop1(t, v, [](auto z) { return std::cos(z); });
        r = fval(y, a.err + 4.0 * eps * std::fabs(y) + tiny);
        break;
    }
    case ROp::Tan: {
        const double y = fop1(t, v, [](auto z) { return std::tan(z); });
        // Near a pole (|tan| large, the pole about 1/|tan| away) the bound says nothing.
        if (s * (1.0 + std::fabs(y)) > 0.1) return wild_value(a.overflow);
        r = fval(y, 1.5 * a.err * (1.0 + y * y) + 4.0 * eps * std::fabs(y) + tiny);
        break;
    }
    case ROp::Tanh: {
        const double y = fop1(t, v, [](auto z) { return std::tanh(z); });
        r = fval(y, a.err + 2.0 * eps * std::fabs(y) + tiny);
        break;
    }
    case ROp::Erf: {
        const double y = fop1(t, v, [](auto z) { return std::erf(z); });
        r = fval(y, 1.13 * a.err + 2.0 * eps * std::fabs(y) + tiny); // |erf'| <= 2/sqrt(pi)
        break;
    }
    default: throw std::logic_error(std::string("reference: unary ") + rop_name(x.op));
    }
    // An overflow to infinity from a finite argument is a matter of the last bit.
    if (std::isinf(r.f) && factor_ > 0.0) return wild_value(a.overflow);
    return give(r);
}

RCands RefEvaluator::binary(const RNode& x, RType t, const RVal& a, const RVal& b,
                            bool exact) const {
    RCands out;
    const bool over = a.overflow || b.overflow;
    auto give = [&](RVal r) {
        r.overflow = r.overflow || over;
        out.add(x.type, r);
        return out;
    };
    if (rop_is_logic(x.op)) {
        RVal r;
        r.i = x.op == ROp::And ? (a.i && b.i) : (a.i || b.i);
        return give(r);
    }
    if (rop_is_compare(x.op)) {
        RVal r;
        if (a.wild || b.wild) {
            r.i = 0;
            give(r);
            r.i = 1;
            return give(r);
        }
        auto compare = [&](auto p, auto q) {
            switch (x.op) {
            case ROp::Lt: return p < q;
            case ROp::Le: return p <= q;
            case ROp::Gt: return p > q;
            case ROp::Ge: return p >= q;
            case ROp::Eq: return p == q;
            default: return p != q;
            }
        };
        const bool v = rt_is_float(t) ? compare(a.f, b.f) : compare(a.i, b.i);
        r.i = v;
        give(r);
        // Within rounding of a tie, another evaluation order may decide the other way (not
        // when both sides are exact, nor for a value compared with itself).
        const double reach = spread(a) + spread(b);
        if (rt_is_float(t) && !exact && reach > 0.0 && std::isfinite(a.f) && std::isfinite(b.f) &&
            std::fabs(a.f - b.f) <= reach) {
            r.i = !v;
            give(r);
        }
        return out;
    }
    if (a.wild || b.wild) return wild_value(over);
    if (rt_is_int(t)) {
        RVal r;
        switch (x.op) {
        case ROp::Add:
        case ROp::Sub:
        case ROp::Mul: r = int_arith(x.op, t, a.i, b.i); break;
        case ROp::Div:
        case ROp::Mod:
            if (b.i == 0) throw RefUndefined("integer division by zero");
            if (b.i == -1 && a.i == int_min(t)) throw RefUndefined("INT_MIN / -1");
            r.i = x.op == ROp::Div ? a.i / b.i : a.i % b.i; // C: toward zero
            break;
        case ROp::Min: r.i = std::min(a.i, b.i); break;
        case ROp::Max: r.i = std::max(a.i, b.i); break;
        default: throw std::logic_error(std::string("reference: int ") + rop_name(x.op));
        }
        return give(r);
    }

    const double eps = rt_epsilon(t), tiny = rt_tiny(t);
    const bool finite = std::isfinite(a.f) && std::isfinite(b.f);
    RVal r;
    switch (x.op) {
    case ROp::Add:
        r.f = fop(t, a.f, b.f, [](auto p, auto q) { return p + q; });
        // The rounding of a sum: at most eps |a + b| <= eps (|a| + |b|). A fused multiply-add
        // skips the rounding of its product, so it stays within the bound.
        r.err = a.err + b.err + eps * (std::fabs(a.f) + std::fabs(b.f)) + tiny;
        break;
    case ROp::Sub:
        r.f = fop(t, a.f, b.f, [](auto p, auto q) { return p - q; });
        r.err = a.err + b.err + eps * (std::fabs(a.f) + std::fabs(b.f)) + tiny;
        break;
    case ROp::Mul:
        r.f = fop(t, a.f, b.f, [](auto p, auto q) { return p * q; });
        r.err = std::fabs(a.f) * b.err + std::fabs(b.f) * a.err + a.err * b.err +
                eps * std::fabs(r.f) + tiny;
        break;
    case ROp::Div: {
        // A divisor within rounding of zero: the quotient's size, and its sign, are anyone's.
        if (finite && std::fabs(b.f) <= spread(b)) return wild_value(over);
        r.f = fop(t, a.f, b.f, [](auto p, auto q) { return p / q; });
        const double margin = std::fabs(b.f) - b.err;
        r.err = margin > 0 ? (a.err + std::fabs(r.f) * b.err) / margin + eps * std::fabs(r.f) + tiny
                           : std::numeric_limits<double>::infinity();
        break;
    }
    case ROp::Mod: {
        r.f = fop(t, a.f, b.f, [](auto p, auto q) { return std::fmod(p, q); });
        if (!finite) break;
        if (std::fabs(b.f) <= spread(b)) return wild_value(over);
        // fmod is exact, but jumps by |b| where a / b crosses an integer.
        const double q = std::trunc(a.f / b.f), rem = std::fabs(r.f);
        const double reach = spread(a) + std::fabs(q) * spread(b);
        if (std::min(rem, std::fabs(b.f) - rem) <= reach && reach > 0.0) return wild_value(over);
        r.err = a.err + std::fabs(q) * b.err;
        break;
    }
    case ROp::Min: // fmin/fmax, as loom defines them (CUDA's): a NaN yields the other
        r.f = std::fmin(a.f, b.f);
        r.err = std::max(a.err, b.err);
        break;
    case ROp::Max:
        r.f = std::fmax(a.f, b.f);
        r.err = std::max(a.err, b.err);
        break;
    case ROp::Pow: {
        const double base = a.f, e = b.f;
        r.f = fop(t, base, e, [](auto p, auto q) { return std::pow(p, q); });
        if (!finite || std::isnan(r.f)) {
            // Exact special operands, or a certainly negative base with a non-integer exponent.
            if (finite && (base + spread(a) > 0.0 || spread(b) > 0.0)) return wild_value(over);
            break;
        }
        if (base == 1.0 && a.err == 0.0) break; // pow(1, y) == 1 for every y
        if (base - spread(a) <= 0.0) {
            // A base at or below zero: exact integer exponents of a certainly negative base, and
            // positive powers of an exact zero, are defined; the rest depends on rounding.
            const bool negative = base + spread(a) < 0.0;
            const bool int_exponent = b.err == 0.0 && e == std::trunc(e);
            if (base == 0.0 && a.err == 0.0 && b.err == 0.0 && e > 0.0) {
                r.err = tiny;
                break;
            }
            if (!negative || !int_exponent) return wild_value(over);
            const double rel = std::fabs(e) * a.err / std::max(std::fabs(base) - a.err, tiny);
            if (rel > 0.1) return wild_value(over);
            r.err = std::fabs(r.f) * 1.2 * rel + 4.0 * eps * std::fabs(r.f) + tiny;
            break;
        }
        // d(x^y) = x^y (y dx / x + ln(x) dy); within 10% the first order holds to 1.2x.
        const double rel =
            std::fabs(e) * a.err / std::max(base - a.err, tiny) + std::fabs(std::log(base)) * b.err;
        if (rel > 0.1) return wild_value(over);
        r.err = std::fabs(r.f) * 1.2 * rel + 4.0 * eps * std::fabs(r.f) + tiny; // CUDA: 4 ulps
        break;
    }
    default: throw std::logic_error(std::string("reference: float ") + rop_name(x.op));
    }
    if (finite && std::isinf(r.f) && factor_ > 0.0) return wild_value(over); // within rounding
    return give(r);
}

RCands RefEvaluator::cast(RType to, RType from, const RVal& a) const {
    if (a.wild) return wild_value(a.overflow);
    RCands out;
    auto give = [&](RVal r) {
        r.overflow = r.overflow || a.overflow;
        out.add(to, r);
        return out;
    };
    RVal r;
    if (to == RType::Bool) {
        r.i = rt_is_float(from) ? a.f != 0.0 : a.i != 0;
        return give(r);
    }
    if (rt_is_float(to)) {
        if (rt_is_float(from)) {
            r.f = to == RType::F32 ? static_cast<double>(static_cast<float>(a.f)) : a.f;
            const bool narrows = to == RType::F32 && from == RType::F64;
            if (narrows && std::isinf(r.f) && std::isfinite(a.f) && factor_ > 0.0)
                return wild_value(a.overflow);
            r.err = a.err + (narrows ? rt_epsilon(to) * std::fabs(r.f) + rt_tiny(to) : 0.0);
        } else {
            r.f = to == RType::F32 ? static_cast<double>(static_cast<float>(a.i))
                                   : static_cast<double>(a.i);
            r.err = rt_epsilon(to) * std::fabs(r.f);
        }
        return give(r);
    }
    if (rt_is_float(from)) {
        // Truncation toward zero; near a step every integer in reach is a candidate.
        const double lim = to == RType::I32 ? 2147483648.0 : 9223372036854775808.0;
        const double s = spread(a);
        if (!(std::fabs(a.f) < lim)) throw RefUndefined("float to int out of range");
        const double lo = std::trunc(a.f - s), hi = std::trunc(a.f + s);
        if (hi - lo > 1.0) return wild_value(a.overflow); // (a guard kept the true value in range)
        if (!(std::fabs(a.f) + s < lim)) throw RefUndefined("float to int out of range");
        for (double v : {std::trunc(a.f), lo, hi}) {
            r.i = static_cast<std::int64_t>(v);
            if (to == RType::I32) r.i = static_cast<std::int32_t>(r.i);
            give(r);
        }
        return out;
    }
    r.i = wrap(to, static_cast<std::uint64_t>(a.i)); // narrowing keeps the low bits
    return give(r);
}

RCands RefEvaluator::compute(int n) {
    const RNode& x = ast_[n];
    RCands out;
    switch (x.op) {
    case ROp::Const: {
        RVal v;
        v.f = x.f;
        v.i = x.i;
        return one(x.type, v);
    }
    case ROp::Var: return one(x.type, vars.at(static_cast<std::size_t>(x.slot)));
    case ROp::Counter: {
        RVal v;
        v.i = cell.at(static_cast<std::size_t>(x.slot));
        return one(x.type, v);
    }
    case ROp::Read: {
        Index at = cell;
        for (std::size_t d = 0; d < at.size() && d < x.offset.size(); ++d) at[d] += x.offset[d];
        return one(x.type, read(x, at));
    }
    case ROp::ReadAt: {
        // Every combination of index candidates (nearly always one).
        std::vector<RCands> idx;
        for (int k : ast_.operands(n)) idx.push_back(eval(k));
        bool over = false, wild = false;
        for (const RCands& c : idx) over |= c.overflow(), wild |= c.wild();
        if (wild) return wild_value(over);
        std::vector<int> pick(idx.size(), 0);
        for (;;) {
            Index at;
            for (std::size_t d = 0; d < idx.size(); ++d) at.push_back(idx[d].v[pick[d]].i);
            RVal v;
            try {
                v = read(x, at);
            } catch (const RefUndefined&) {
                if (idx.size() == 1 && idx[0].n == 1) throw;
                v.wild = true; // only a combination that rounding may not even produce
            }
            v.overflow = over;
            out.add(x.type, v);
            std::size_t d = 0;
            while (d < idx.size() && ++pick[d] == idx[d].n) pick[d++] = 0;
            if (d == idx.size()) break;
        }
        return out;
    }
    default: break;
    }
    if (x.op == ROp::Select) {
        // Both branches are computed (loom's documented semantics of select), so undefined
        // behaviour in either makes the select undefined, and an overflow in either flags it;
        // the condition picks the value.
        const RCands c = eval(x.a), t = eval(x.b), f = eval(x.c);
        const bool over = c.overflow() || t.overflow() || f.overflow();
        bool take[2] = {false, false};
        for (int k = 0; k < c.n; ++k) take[c.v[k].i ? 1 : 0] = true;
        for (int side = 1; side >= 0; --side) {
            if (!take[side]) continue;
            const RCands& branch = side ? t : f;
            for (int k = 0; k < branch.n; ++k) {
                RVal v = branch.v[k];
                v.overflow = over;
                out.add(x.type, v);
            }
        }
        return out;
    }
    if (x.op == ROp::Fma) {
        const RCands a = eval(x.a), b = eval(x.b), c = eval(x.c);
        for (int i = 0; i < a.n; ++i)
            for (int j = 0; j < b.n; ++j)
                for (int k = 0; k < c.n; ++k) {
                    const RVal &p = a.v[i], &q = b.v[j], &s = c.v[k];
                    RVal r;
                    r.overflow = p.overflow || q.overflow || s.overflow;
                    if (p.wild || q.wild || s.wild) {
                        r.wild = true;
                        out.add(x.type, r);
                        continue;
                    }
                    if (x.type == RType::F32)
                        r.f = static_cast<double>(std::fma(static_cast<float>(p.f),
                                                           static_cast<float>(q.f),
                                                           static_cast<float>(s.f)));
                    else
                        r.f = std::fma(p.f, q.f, s.f);
                    r.err = std::fabs(p.f) * q.err + std::fabs(q.f) * p.err + p.err * q.err +
                            s.err + rt_epsilon(x.type) * std::fabs(r.f) + rt_tiny(x.type);
                    const bool finite =
                        std::isfinite(p.f) && std::isfinite(q.f) && std::isfinite(s.f);
                    if (finite && std::isinf(r.f) && factor_ > 0.0) r.wild = true;
                    out.add(x.type, r);
                }
        return out;
    }
    if (x.op == ROp::Cast) {
        const RCands a = eval(x.a);
        for (int k = 0; k < a.n; ++k) {
            RCands c;
            try {
                c = cast(x.type, ast_.type(x.a), a.v[k]);
            } catch (const RefUndefined&) {
                if (a.n == 1) throw;
                c = wild_value(a.overflow());
            }
            for (int j = 0; j < c.n; ++j) out.add(x.type, c.v[j]);
        }
        return out;
    }
    if (rop_is_unary(x.op)) {
        const RCands a = eval(x.a);
        for (int k = 0; k < a.n; ++k) {
            const RCands c = unary(x, a.v[k]);
            for (int j = 0; j < c.n; ++j) out.add(x.type, c.v[j]);
        }
        return out;
    }
    if (!rop_is_binary(x.op)) throw std::logic_error(std::string("reference: ") + rop_name(x.op));
    const RType t = ast_.type(x.a);
    const RCands a = eval(x.a), b = eval(x.b);
    // A value compared with itself: one computation on both sides, so no tie, and each
    // candidate only with itself.
    const bool itself = x.a == x.b && rop_is_compare(x.op);
    for (int i = 0; i < a.n; ++i)
        for (int j = 0; j < b.n; ++j) {
            if (itself && i != j) continue;
            RCands c;
            try {
                c = binary(x, t, a.v[i], b.v[j], itself);
            } catch (const RefUndefined&) {
                // Candidates are independent here, though one rounding decided them all (the
                // guard select(d == 0, k, d) sees the same d as the division): a combination
                // that is undefined may never occur, so it makes the value unknown instead.
                if (a.n == 1 && b.n == 1) throw;
                c = wild_value(a.overflow() || b.overflow());
            }
            for (int k = 0; k < c.n; ++k) out.add(x.type, c.v[k]);
        }
    return out;
}

bool matches_value(RType t, const RCands& want, double got_f, std::int64_t got_i, double factor) {
    for (int k = 0; k < want.n; ++k) {
        const RVal& w = want.v[k];
        if (w.wild) return true;
        if (!rt_is_float(t)) {
            if (got_i == w.i) return true;
            continue;
        }
        if (std::isnan(w.f) || std::isnan(got_f)) {
            if (std::isnan(w.f) && std::isnan(got_f)) return true;
            continue;
        }
        if (std::isinf(w.f) || std::isinf(got_f)) {
            if (got_f == w.f) return true;
            continue;
        }
        if (std::fabs(got_f - w.f) <= factor * w.err + std::numeric_limits<double>::min())
            return true;
    }
    return false;
}

} // namespace loom::stencil_test
