// Random stencil kernels for differential tests, with a small reference evaluator of their own.
//
//   StencilCase c = generate_stencil(seed);      // seeded: the same seed gives the same case
//   Kernel k = c.kernel(Target::CPU);             // create_kernel(c.assignments, c.config)
//   ... give every field the buffer c.fields[f] describes (inputs random, outputs poisoned),
//       run the kernel, read the output buffers back ...
//   Expected want = c.expected();                 // the reference, every cell of every output
//   EXPECT_TRUE(check_buffer(c, want, f, got));   // written cells match, all others hold poison
//
// Each case draws 1-4 spatial dimensions (4 rarely), float32 or float64, 1-3 source fields (some of
// the other float type, some vector fields read one component at a time, any of the four
// layouts, some passed as sub-boxes of larger buffers), offsets within a random radius, random
// coefficients, sometimes a scalar parameter, a counter, a named subexpression, and the math
// functions abs, sqrt(|e| + 1), min, max, division and select; ghost layers (automatic, uniform
// or per axis, at least the reach) or an iteration slice (start, stop, step, single indices,
// negative ends, a parameter bound, a bound that follows an earlier counter) that stays inside
// the arrays; and small random shapes (some fixed in the kernel).
//
// The reference side is a tiny AST (RefAst) built next to the DSL expression, mirroring the DSL's
// typing rules (weak literals take their partner's type, float32 meeting float64 widens), and
// evaluated here in plain C++: float32 operations in float, one rounding per operation as the
// generated code does, float64 in double. It never calls loom's compiler, interpreter or runtime.
// tests/passes/test_simplify_property_reference.cpp evaluates loom IR with the same evaluator.
#pragma once

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iomanip>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace loom::stencil_test {

using Index = std::vector<std::int64_t>;

// ==== The reference AST ========================================================================

enum class RType : std::uint8_t { Bool, I32, I64, F32, F64 };

inline bool rt_is_float(RType t) { return t == RType::F32 || t == RType::F64; }
inline bool rt_is_int(RType t) { return t == RType::I32 || t == RType::I64; }
inline const char* rt_name(RType t) {
    switch (t) {
    case RType::Bool: return "bool";
    case RType::I32: return "int32";
    case RType::I64: return "int64";
    case RType::F32: return "float32";
    case RType::F64: return "float64";
    }
    return "?";
}
inline ScalarType to_scalar_type(RType t) {
    switch (t) {
    case RType::Bool: return ScalarType::Bool;
    case RType::I32: return ScalarType::Int32;
    case RType::I64: return ScalarType::Int64;
    case RType::F32: return ScalarType::Float32;
    case RType::F64: return ScalarType::Float64;
    }
    return ScalarType::Float64;
}
/// The reference type of a loom scalar type; throws for float16/bfloat16.
inline RType to_rtype(ScalarType t) {
    switch (t) {
    case ScalarType::Bool: return RType::Bool;
    case ScalarType::Int32: return RType::I32;
    case ScalarType::Int64: return RType::I64;
    case ScalarType::Float32: return RType::F32;
    case ScalarType::Float64: return RType::F64;
    default: throw std::logic_error("the reference evaluator has no float16/bfloat16");
    }
}
/// The wider of two float types (float64 beats float32), as the DSL promotes.
inline RType wider(RType a, RType b) {
    return a == RType::F64 || b == RType::F64 ? RType::F64 : a;
}
/// Twice the unit roundoff: FLT_EPSILON or DBL_EPSILON.
inline double rt_epsilon(RType t) { return t == RType::F32 ? FLT_EPSILON : DBL_EPSILON; }

enum class ROp : std::uint8_t {
    Const, Var, Read, Counter,                  // leaves
    Neg, Not, Abs, Sqrt, Floor, Ceil, Exp, Tanh, // unary
    Add, Sub, Mul, Div, Mod, Min, Max,          // arithmetic: one operand type, same result
    Lt, Le, Gt, Ge, Eq, Ne, And, Or,            // comparisons and logic: bool result
    Fma, Select, Cast
};

inline const char* rop_name(ROp op) {
    static const char* names[] = {"const", "var", "read", "counter", "-", "!", "abs", "sqrt",
                                  "floor", "ceil", "exp", "tanh", "+", "-", "*", "/", "%",
                                  "min", "max", "<", "<=", ">", ">=", "==", "!=", "&&", "||",
                                  "fma", "select", "cast"};
    return names[static_cast<int>(op)];
}

struct RNode {
    ROp op = ROp::Const;
    RType type = RType::F64;
    double f = 0.0;       ///< Const of a float type
    std::int64_t i = 0;   ///< Const of an int or bool type
    int a = -1, b = -1, c = -1;
    int slot = -1;        ///< Var: the variable; Read: the field; Counter: the axis
    std::vector<int> offset; ///< Read: one per spatial axis
    int component = -1;  ///< Read of a vector field
};

/// A DAG of reference nodes; operands are indices into `nodes`. The builders check operand types
/// (one type for arithmetic, bool conditions) so a mirror that forgets a conversion fails loudly.
class RefAst {
public:
    std::vector<RNode> nodes;

    const RNode& operator[](int n) const { return nodes.at(static_cast<std::size_t>(n)); }
    RType type(int n) const { return (*this)[n].type; }

    int constant(RType t, double v) {
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
    int const_int(RType t, std::int64_t v) {
        RNode n;
        n.op = ROp::Const;
        n.type = t;
        n.i = t == RType::I32 ? static_cast<std::int32_t>(v) : v;
        if (rt_is_float(t)) throw std::logic_error("const_int of a float type");
        return add(n);
    }
    int var(RType t, int slot) {
        RNode n;
        n.op = ROp::Var;
        n.type = t;
        n.slot = slot;
        return add(n);
    }
    int read(RType t, int field, std::vector<int> offset, int component) {
        RNode n;
        n.op = ROp::Read;
        n.type = t;
        n.slot = field;
        n.offset = std::move(offset);
        n.component = component;
        return add(n);
    }
    int counter(int axis) {
        RNode n;
        n.op = ROp::Counter;
        n.type = RType::I64;
        n.slot = axis;
        return add(n);
    }
    int unary(ROp op, int a) {
        RNode n;
        n.op = op;
        n.a = a;
        n.type = op == ROp::Not ? RType::Bool : type(a);
        if ((op == ROp::Not) != (type(a) == RType::Bool))
            throw std::logic_error(std::string("reference: bad operand type for ") + rop_name(op));
        return add(n);
    }
    int binary(ROp op, int a, int b) {
        if (type(a) != type(b))
            throw std::logic_error(std::string("reference: operands of ") + rop_name(op) +
                                   " differ in type: " + rt_name(type(a)) + " and " +
                                   rt_name(type(b)));
        RNode n;
        n.op = op;
        n.a = a;
        n.b = b;
        const bool logic = op == ROp::And || op == ROp::Or;
        const bool compare = op >= ROp::Lt && op <= ROp::Ne;
        n.type = logic || compare ? RType::Bool : type(a);
        if (logic != (type(a) == RType::Bool))
            throw std::logic_error(std::string("reference: bad operand type for ") + rop_name(op));
        return add(n);
    }
    int fma(int a, int b, int c) {
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
    int select(int cond, int if_true, int if_false) {
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
    int cast(RType t, int a) {
        if (type(a) == t) return a;
        RNode n;
        n.op = ROp::Cast;
        n.type = t;
        n.a = a;
        return add(n);
    }

    /// Operations in the tree below `n`, shared nodes counted at every use (capped at 2^20).
    /// Operands always precede their users, so one pass in node order suffices.
    std::int64_t operations(int n) const {
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

    /// Infix text of the tree below `n`, for messages; `field_names` name the Read nodes.
    std::string to_string(int n, const std::vector<std::string>& field_names = {}) const {
        const RNode& x = (*this)[n];
        std::ostringstream s;
        s << std::setprecision(17);
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
            if (x.slot >= 0 && x.slot < static_cast<int>(field_names.size()))
                s << field_names[static_cast<std::size_t>(x.slot)];
            else
                s << "field" << x.slot;
            s << "[";
            for (std::size_t d = 0; d < x.offset.size(); ++d) s << (d ? ", " : "") << x.offset[d];
            s << "]";
            if (x.component >= 0) s << "(" << x.component << ")";
            return s.str();
        }
        default: break;
        }
        auto arg = [&](int k) { return to_string(k, field_names); };
        if (x.op == ROp::Cast) return std::string(rt_name(x.type)) + "(" + arg(x.a) + ")";
        if (x.op == ROp::Select)
            return "select(" + arg(x.a) + ", " + arg(x.b) + ", " + arg(x.c) + ")";
        if (x.op == ROp::Fma) return "fma(" + arg(x.a) + ", " + arg(x.b) + ", " + arg(x.c) + ")";
        if (x.op == ROp::Neg || x.op == ROp::Not) return rop_name(x.op) + ("(" + arg(x.a) + ")");
        if (x.b < 0) return std::string(rop_name(x.op)) + "(" + arg(x.a) + ")";
        if (x.op == ROp::Min || x.op == ROp::Max)
            return std::string(rop_name(x.op)) + "(" + arg(x.a) + ", " + arg(x.b) + ")";
        return "(" + arg(x.a) + " " + rop_name(x.op) + " " + arg(x.b) + ")";
    }

private:
    int add(RNode n) {
        for (int child : {n.a, n.b, n.c})
            if (child >= static_cast<int>(nodes.size()))
                throw std::logic_error("reference: operand defined after its use");
        nodes.push_back(std::move(n));
        return static_cast<int>(nodes.size()) - 1;
    }
};

// ==== The reference evaluator ==================================================================

/// A value: ints and bools in `i`, floats in `f` with `err`, a first-order bound on how far
/// any evaluation with one rounding per operation (or fewer: fused multiply-adds) may be from
/// the exact value, each operation charged the epsilon of its own type. Two such evaluations
/// (the reference and the generated code) differ by at most twice that.
struct RVal {
    double f = 0.0;
    std::int64_t i = 0;
    double err = 0.0;
};

/// The values an expression may rightly have: one, or a few where a comparison is too close to
/// call (then the generated code may take either branch of a select).
struct RCands {
    int n = 0;
    RVal v[4];
    void add(RType t, const RVal& x) {
        for (int k = 0; k < n; ++k) {
            bool same = rt_is_float(t) ? (v[k].f == x.f || (std::isnan(v[k].f) && std::isnan(x.f)))
                                       : v[k].i == x.i;
            if (same) {
                v[k].err = std::max(v[k].err, x.err);
                return;
            }
        }
        if (n < 4) v[n++] = x;
    }
};

/// Thrown where C leaves the result undefined (integer division by zero, INT_MIN / -1, float
/// to int out of range): the caller skips that evaluation.
struct RefUndefined : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// One array a kernel sees: `shape` (spatial axes, then components) with element `strides`,
/// starting at element `offset` of a flat buffer.
struct RefArray {
    Shape shape;
    Shape strides;
    std::int64_t offset = 0;
    const std::vector<double>* buffer = nullptr;
};

/// Evaluates nodes of a RefAst for one cell at a time. `factor` scales the rounding tolerance:
/// comparisons of floats closer than factor * (their error bounds) count as ties and yield both
/// outcomes (0: never). Values are memoized per cell, so shared nodes (temporaries) are computed
/// once.
class RefEvaluator {
public:
    RefEvaluator(const RefAst& ast, double factor) : ast_(ast), factor_(factor) {}

    std::vector<RefArray> arrays; ///< by field index (Read nodes)
    std::vector<RVal> vars;       ///< by slot (Var nodes)
    Index cell;                   ///< the spatial counters (Counter nodes, Read positions)

    /// Forget the memoized values (call after changing cell or vars).
    void next() {
        ++stamp_;
        if (stamp_ == 0) std::fill(seen_.begin(), seen_.end(), 0u), stamp_ = 1;
    }

    const RCands& eval(int n) {
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

    double tolerance(const RVal& v) const {
        return factor_ * v.err + std::numeric_limits<double>::min();
    }

private:
    static std::int64_t wrap(RType t, std::uint64_t v) {
        return t == RType::I32 ? static_cast<std::int32_t>(static_cast<std::uint32_t>(v))
                               : static_cast<std::int64_t>(v);
    }
    static std::int64_t int_min(RType t) {
        return t == RType::I32 ? std::numeric_limits<std::int32_t>::min()
                               : std::numeric_limits<std::int64_t>::min();
    }
    template <typename Op>
    static double fop(RType t, double a, double b, Op op) {
        if (t == RType::F32)
            return static_cast<double>(op(static_cast<float>(a), static_cast<float>(b)));
        return op(a, b);
    }
    template <typename Op>
    static double fop1(RType t, double a, Op op) {
        if (t == RType::F32) return static_cast<double>(op(static_cast<float>(a)));
        return op(a);
    }

    double read(const RNode& x) const {
        if (x.slot < 0 || x.slot >= static_cast<int>(arrays.size()))
            throw std::logic_error("reference: read of an unknown field");
        const RefArray& a = arrays[static_cast<std::size_t>(x.slot)];
        std::int64_t at = a.offset;
        const std::size_t spatial = x.offset.size();
        for (std::size_t d = 0; d < a.shape.size(); ++d) {
            std::int64_t i = d < spatial ? cell.at(d) + x.offset[d] : x.component;
            if (d > spatial) throw std::logic_error("reference: one component axis at most");
            if (i < 0 || i >= a.shape[d]) {
                std::ostringstream s;
                s << "reference: the read " << x.slot << " at cell " << shape_string(cell)
                  << " leaves the array " << shape_string(a.shape) << " along axis " << d
                  << " (the generator let a stencil reach out of bounds)";
                throw std::logic_error(s.str());
            }
            at += i * a.strides[d];
        }
        return a.buffer->at(static_cast<std::size_t>(at));
    }

    RVal unary(const RNode& x, const RVal& a) const {
        RType t = x.type;
        RVal r;
        if (x.op == ROp::Not) {
            r.i = !a.i;
            return r;
        }
        if (rt_is_int(t)) {
            switch (x.op) {
            case ROp::Neg: r.i = wrap(t, 0u - static_cast<std::uint64_t>(a.i)); break;
            case ROp::Abs:
                if (a.i == int_min(t)) throw RefUndefined("abs of the smallest integer");
                r.i = a.i < 0 ? -a.i : a.i;
                break;
            case ROp::Floor:
            case ROp::Ceil: r.i = a.i; break;
            default:
                throw std::logic_error(std::string("reference: ") + rop_name(x.op) + " on ints");
            }
            return r;
        }
        const double eps = rt_epsilon(t);
        switch (x.op) {
        case ROp::Neg:
            r.f = -a.f;
            r.err = a.err;
            break;
        case ROp::Abs:
            r.f = std::fabs(a.f);
            r.err = a.err;
            break;
        case ROp::Sqrt: {
            r.f = fop1(t, a.f, [](auto v) { return std::sqrt(v); });
            // err(sqrt x) <= err(x) / (2 sqrt x) + rounding; near zero, sqrt(err(x)).
            r.err = (a.f > a.err ? a.err / (2.0 * r.f) : std::sqrt(a.err)) + eps * r.f;
            break;
        }
        case ROp::Floor:
        case ROp::Ceil:
            r.f = x.op == ROp::Floor ? std::floor(a.f) : std::ceil(a.f);
            r.err = a.err; // away from the steps, which only the property test reaches
            break;
        case ROp::Exp:
            r.f = fop1(t, a.f, [](auto v) { return std::exp(v); });
            r.err = std::fabs(r.f) * (std::expm1(a.err) + 2.0 * eps); // libm: within an ulp
            break;
        case ROp::Tanh:
            r.f = fop1(t, a.f, [](auto v) { return std::tanh(v); });
            r.err = a.err + 2.0 * eps * std::fabs(r.f);
            break;
        default: throw std::logic_error(std::string("reference: unary ") + rop_name(x.op));
        }
        return r;
    }

    RVal binary(const RNode& x, RType t, const RVal& a, const RVal& b) const {
        RVal r;
        if (x.op == ROp::And || x.op == ROp::Or) {
            r.i = x.op == ROp::And ? (a.i && b.i) : (a.i || b.i);
            return r;
        }
        if (x.op >= ROp::Lt && x.op <= ROp::Ne) {
            bool v = false;
            if (rt_is_float(t)) {
                switch (x.op) {
                case ROp::Lt: v = a.f < b.f; break;
                case ROp::Le: v = a.f <= b.f; break;
                case ROp::Gt: v = a.f > b.f; break;
                case ROp::Ge: v = a.f >= b.f; break;
                case ROp::Eq: v = a.f == b.f; break;
                default: v = a.f != b.f; break;
                }
            } else {
                switch (x.op) {
                case ROp::Lt: v = a.i < b.i; break;
                case ROp::Le: v = a.i <= b.i; break;
                case ROp::Gt: v = a.i > b.i; break;
                case ROp::Ge: v = a.i >= b.i; break;
                case ROp::Eq: v = a.i == b.i; break;
                default: v = a.i != b.i; break;
                }
            }
            r.i = v;
            return r;
        }
        if (rt_is_int(t)) {
            const auto ua = static_cast<std::uint64_t>(a.i), ub = static_cast<std::uint64_t>(b.i);
            switch (x.op) {
            case ROp::Add: r.i = wrap(t, ua + ub); break;
            case ROp::Sub: r.i = wrap(t, ua - ub); break;
            case ROp::Mul: r.i = wrap(t, ua * ub); break;
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
            return r;
        }
        const double eps = rt_epsilon(t);
        switch (x.op) {
        case ROp::Add:
            r.f = fop(t, a.f, b.f, [](auto p, auto q) { return p + q; });
            // The rounding of a sum: at most eps |a + b| <= eps (|a| + |b|). A fused
            // multiply-add skips the rounding of its product, so it stays within the bound.
            r.err = a.err + b.err + eps * (std::fabs(a.f) + std::fabs(b.f));
            break;
        case ROp::Sub:
            r.f = fop(t, a.f, b.f, [](auto p, auto q) { return p - q; });
            r.err = a.err + b.err + eps * (std::fabs(a.f) + std::fabs(b.f));
            break;
        case ROp::Mul:
            r.f = fop(t, a.f, b.f, [](auto p, auto q) { return p * q; });
            r.err = std::fabs(a.f) * b.err + std::fabs(b.f) * a.err + a.err * b.err +
                    eps * std::fabs(r.f);
            break;
        case ROp::Div: {
            r.f = fop(t, a.f, b.f, [](auto p, auto q) { return p / q; });
            const double margin = std::fabs(b.f) - b.err;
            r.err = margin > 0 ? (a.err + std::fabs(r.f) * b.err) / margin + eps * std::fabs(r.f)
                               : std::numeric_limits<double>::infinity();
            break;
        }
        case ROp::Mod:
            r.f = fop(t, a.f, b.f, [](auto p, auto q) { return std::fmod(p, q); });
            r.err = a.err + b.err;
            break;
        case ROp::Min: // fmin/fmax, as loom defines them (CUDA's): a NaN yields the other
            r.f = std::fmin(a.f, b.f);
            r.err = std::max(a.err, b.err);
            break;
        case ROp::Max:
            r.f = std::fmax(a.f, b.f);
            r.err = std::max(a.err, b.err);
            break;
        default: throw std::logic_error(std::string("reference: float ") + rop_name(x.op));
        }
        return r;
    }

    RVal cast(RType to, RType from, const RVal& a) const {
        RVal r;
        if (to == RType::Bool) {
            r.i = rt_is_float(from) ? a.f != 0.0 : a.i != 0;
            return r;
        }
        if (rt_is_float(to)) {
            if (rt_is_float(from)) {
                r.f = to == RType::F32 ? static_cast<double>(static_cast<float>(a.f)) : a.f;
                r.err = a.err + (to == RType::F32 && from == RType::F64
                                     ? rt_epsilon(to) * std::fabs(r.f)
                                     : 0.0);
            } else {
                r.f = to == RType::F32 ? static_cast<double>(static_cast<float>(a.i))
                                       : static_cast<double>(a.i);
                r.err = rt_epsilon(to) * std::fabs(r.f);
            }
            return r;
        }
        if (rt_is_float(from)) {
            const double lim = to == RType::I32 ? 2147483648.0 : 9223372036854775808.0;
            if (!(std::fabs(a.f) < lim)) throw RefUndefined("float to int out of range");
            r.i = static_cast<std::int64_t>(a.f); // truncates toward zero
            if (to == RType::I32) r.i = static_cast<std::int32_t>(r.i);
            return r;
        }
        r.i = wrap(to, static_cast<std::uint64_t>(a.i));
        return r;
    }

    /// Whether a float comparison of a and b is within rounding of a tie.
    bool tie(RType t, const RVal& a, const RVal& b) const {
        if (!rt_is_float(t) || factor_ <= 0.0) return false;
        if (!std::isfinite(a.f) || !std::isfinite(b.f)) return false;
        return std::fabs(a.f - b.f) <= tolerance(a) + tolerance(b);
    }

    RCands compute(int n) {
        const RNode& x = ast_[n];
        RCands out;
        switch (x.op) {
        case ROp::Const: {
            RVal v;
            v.f = x.f;
            v.i = x.i;
            out.add(x.type, v);
            return out;
        }
        case ROp::Var: {
            out.add(x.type, vars.at(static_cast<std::size_t>(x.slot)));
            return out;
        }
        case ROp::Counter: {
            RVal v;
            v.i = cell.at(static_cast<std::size_t>(x.slot));
            out.add(x.type, v);
            return out;
        }
        case ROp::Read: {
            RVal v;
            v.f = read(x);
            out.add(x.type, v);
            return out;
        }
        default: break;
        }
        if (x.op == ROp::Select) {
            // Both branches are computed (loom's documented semantics of select), so undefined
            // behaviour in either makes the select undefined; the condition picks the value.
            const RCands c = eval(x.a), t = eval(x.b), f = eval(x.c);
            bool take[2] = {false, false};
            for (int k = 0; k < c.n; ++k) take[c.v[k].i ? 1 : 0] = true;
            if (take[1])
                for (int k = 0; k < t.n; ++k) out.add(x.type, t.v[k]);
            if (take[0])
                for (int k = 0; k < f.n; ++k) out.add(x.type, f.v[k]);
            return out;
        }
        if (x.op == ROp::Fma) {
            const RCands a = eval(x.a), b = eval(x.b), c = eval(x.c);
            for (int i = 0; i < a.n; ++i)
                for (int j = 0; j < b.n; ++j)
                    for (int k = 0; k < c.n; ++k) {
                        RVal r;
                        if (x.type == RType::F32)
                            r.f = static_cast<double>(std::fma(static_cast<float>(a.v[i].f),
                                                               static_cast<float>(b.v[j].f),
                                                               static_cast<float>(c.v[k].f)));
                        else
                            r.f = std::fma(a.v[i].f, b.v[j].f, c.v[k].f);
                        const RVal &p = a.v[i], &q = b.v[j], &s = c.v[k];
                        r.err = std::fabs(p.f) * q.err + std::fabs(q.f) * p.err + p.err * q.err +
                                s.err + rt_epsilon(x.type) * std::fabs(r.f);
                        out.add(x.type, r);
                    }
            return out;
        }
        if (x.op == ROp::Cast) {
            const RCands a = eval(x.a);
            for (int k = 0; k < a.n; ++k) out.add(x.type, cast(x.type, ast_.type(x.a), a.v[k]));
            return out;
        }
        if (x.b < 0) {
            const RCands a = eval(x.a);
            for (int k = 0; k < a.n; ++k) out.add(x.type, unary(x, a.v[k]));
            return out;
        }
        const RType t = ast_.type(x.a);
        const RCands a = eval(x.a), b = eval(x.b);
        const bool compare = x.op >= ROp::Lt && x.op <= ROp::Ne;
        for (int i = 0; i < a.n; ++i)
            for (int j = 0; j < b.n; ++j) {
                RVal r = binary(x, t, a.v[i], b.v[j]);
                out.add(x.type, r);
                if (compare && tie(t, a.v[i], b.v[j])) {
                    r.i = !r.i;
                    out.add(x.type, r);
                }
            }
        return out;
    }

    const RefAst& ast_;
    double factor_;
    std::vector<unsigned> seen_;
    std::vector<RCands> memo_;
    unsigned stamp_ = 1;
};

// ==== Poison, cells, buffers ===================================================================

/// A quiet NaN with a payload no computation produces; compared bit for bit.
template <typename T>
T poison() {
    static_assert(std::is_floating_point_v<T>, "the random stencils use float types only");
    T value;
    if constexpr (std::is_same_v<T, float>) {
        std::uint32_t bits = 0x7FC5A5A5u;
        std::memcpy(&value, &bits, sizeof value);
    } else {
        std::uint64_t bits = 0x7FF85A5A5A5A5A5Aull;
        std::memcpy(&value, &bits, sizeof value);
    }
    return value;
}
template <typename T>
bool is_poison(T value) {
    T p = poison<T>();
    return std::memcmp(&value, &p, sizeof(T)) == 0;
}

/// Calls fn(index) for every index of `shape` in C order (last axis fastest).
template <typename Fn>
void for_each_index(const Shape& shape, Fn&& fn) {
    std::int64_t n = 1;
    for (auto e : shape) n *= e;
    if (n <= 0) return;
    Index index(shape.size(), 0);
    for (std::int64_t k = 0; k < n; ++k) {
        fn(static_cast<const Index&>(index));
        for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
            if (++index[static_cast<std::size_t>(d)] < shape[static_cast<std::size_t>(d)]) break;
            index[static_cast<std::size_t>(d)] = 0;
        }
    }
}

// ==== The generated case =======================================================================

/// One field of a case and the buffer the test gives it: the kernel sees `shape` (spatial axes,
/// then components) with `strides`, starting at element `offset` of a flat buffer of
/// `buffer_size` elements. Strides are compact in the field's layout (so fixed-shape fields get
/// the strides baked into the code), or those of a larger padded box when `padded`.
struct CaseField {
    Field field;
    RType type = RType::F64;
    int components = 0; ///< 0 for a scalar field
    Layout layout = Layout::C;
    bool written = false;
    bool padded = false;
    bool used = true; ///< read or written by the kernel (a drawn source may go unread)
    Shape shape, strides;
    std::int64_t offset = 0, buffer_size = 0;
    /// Inputs: the whole buffer (random, never zero; the padding too). Outputs: empty, the test
    /// fills the buffer with poison<T>().
    std::vector<double> values;

    const std::string& name() const { return field.name(); }
    /// The buffer position of array index `i`.
    std::int64_t position(const Index& i) const {
        std::int64_t at = offset;
        for (std::size_t d = 0; d < shape.size(); ++d) at += i[d] * strides[d];
        return at;
    }
    /// The buffer as T (inputs), or all poison (outputs).
    template <typename T>
    std::vector<T> buffer_as() const {
        if (written) return std::vector<T>(static_cast<std::size_t>(buffer_size), poison<T>());
        std::vector<T> out(values.size());
        for (std::size_t k = 0; k < values.size(); ++k) out[k] = static_cast<T>(values[k]);
        return out;
    }
};

struct CaseParam {
    std::string name;
    RType type = RType::F64;
    double value = 0.0; ///< exactly representable in `type`
    Expr expr;
    bool used = true; ///< a drawn value parameter may go unused
};

/// One end of a slice range, resolved per cell by the reference.
struct CaseBound {
    enum class Kind { Index, End, Param, Counter } kind = Kind::Index;
    std::int64_t value = 0; ///< Index: the literal (negative from the end); Param/Counter: + value
    int param = -1;         ///< Param: index into params
    int axis = -1;          ///< Counter: the earlier axis
};

/// The iteration space along one axis: ghost layers, or a slice.
struct CaseAxis {
    std::int64_t ghost_lo = 0, ghost_hi = 0;
    CaseBound start, stop;
    std::int64_t step = 1;
    bool single = false;
};

/// A scalar written by the kernel: component `component` (or -1) of field `field`, the value of
/// reference node `node` converted to the field's type.
struct CaseOutput {
    int field = -1;
    int component = -1;
    int node = -1;
    std::int64_t operations = 0;
};

struct GeneratorOptions {
    /// Slices whose start follows an earlier counter (the triangle). The CPU target runs them as
    /// they are; CUDA needs a manual grid, so the GPU tests turn them off.
    bool counter_bounds = true;
};

/// The reference values of every cell of every output buffer.
struct Expected {
    struct Buffer {
        int field = -1;
        std::vector<char> written;   ///< per buffer element
        std::vector<RCands> values;  ///< per buffer element, where written
    };
    std::vector<Buffer> buffers;
    double factor = 0.0;             ///< the tolerance factor (see RefEvaluator)
    std::int64_t cells_written = 0;
    const Buffer& of(int field) const {
        for (const Buffer& b : buffers)
            if (b.field == field) return b;
        throw std::logic_error("no expected values for that field");
    }
    Buffer& of(int field) {
        return const_cast<Buffer&>(static_cast<const Expected&>(*this).of(field));
    }
};

class StencilCase {
public:
    std::uint64_t seed = 0;
    int dims = 1;
    RType type = RType::F64;
    Shape shape;              ///< the spatial shape of every array
    bool fixed_shape = false; ///< fields declared with this shape baked in
    bool sliced = false;
    std::vector<CaseField> fields;
    std::vector<CaseParam> params;
    std::vector<CaseAxis> axes;
    std::vector<CaseOutput> outputs;
    AssignmentCollection assignments;
    KernelConfig config; ///< target CUDA; kernel() sets the target
    RefAst ast;

    Kernel kernel(Target target) const {
        KernelConfig c = config;
        c.target = target;
        return create_kernel(assignments, c);
    }

    /// Whether the kernel computes spatial cell `i` (the reference's reading of the slice or the
    /// ghost layers, resolved with this case's shape and parameter values).
    bool iterated(const Index& i) const {
        for (int d = 0; d < dims; ++d) {
            const CaseAxis& ax = axes[static_cast<std::size_t>(d)];
            const std::int64_t n = shape[static_cast<std::size_t>(d)],
                               c = i[static_cast<std::size_t>(d)];
            if (!sliced) {
                if (c < ax.ghost_lo || c >= n - ax.ghost_hi) return false;
                continue;
            }
            const std::int64_t start = resolve(ax.start, d, i);
            if (ax.single) {
                if (c != start) return false;
                continue;
            }
            const std::int64_t stop = resolve(ax.stop, d, i);
            if (c < start || c >= stop || (c - start) % ax.step != 0) return false;
        }
        return true;
    }

    /// The reference result of every output buffer element.
    Expected expected() const {
        Expected e;
        // err bounds one evaluation's distance from the exact value with twice the unit
        // roundoff per operation, so it already covers the reference and the kernel together;
        // the factor 2 leaves room for libm's last bit.
        e.factor = 2.0;
        RefEvaluator ev(ast, e.factor);
        ev.arrays.resize(fields.size());
        for (std::size_t f = 0; f < fields.size(); ++f) {
            const CaseField& cf = fields[f];
            ev.arrays[f] = RefArray{cf.shape, cf.strides, cf.offset, &cf.values};
            if (cf.written) {
                Expected::Buffer b;
                b.field = static_cast<int>(f);
                b.written.assign(static_cast<std::size_t>(cf.buffer_size), 0);
                b.values.resize(static_cast<std::size_t>(cf.buffer_size));
                e.buffers.push_back(std::move(b));
            }
        }
        for (const CaseParam& p : params) {
            RVal v;
            v.f = p.value;
            v.i = static_cast<std::int64_t>(p.value);
            ev.vars.push_back(v);
        }
        for_each_index(shape, [&](const Index& cell) {
            if (!iterated(cell)) return;
            ev.cell = cell;
            ev.next();
            for (const CaseOutput& o : outputs) {
                const CaseField& cf = fields[static_cast<std::size_t>(o.field)];
                Index at = cell;
                if (cf.components > 0) at.push_back(o.component);
                const auto pos = static_cast<std::size_t>(cf.position(at));
                Expected::Buffer& b = e.of(o.field);
                RCands c = ev.eval(o.node);
                // The store converts to the field's type (float32 -> float64 is exact).
                if (cf.type == RType::F32 && ast.type(o.node) != RType::F32)
                    throw std::logic_error("reference: a float64 value stored into float32");
                b.written[pos] = 1;
                b.values[pos] = c;
                ++e.cells_written;
            }
        });
        return e;
    }

    /// Everything needed to reproduce and read a failure.
    std::string describe() const {
        std::ostringstream s;
        s << "random stencil, seed " << seed << ": " << dims << "D " << rt_name(type)
          << ", shape " << shape_string(shape) << (fixed_shape ? " (fixed in the kernel)" : "")
          << "\n  fields:";
        for (const CaseField& f : fields) {
            s << "\n    " << f.field.info().describe()
              << (f.written ? "  [written]" : f.used ? "" : "  [unused]")
              << "  array " << shape_string(f.shape) << " strides " << shape_string(f.strides)
              << " at " << f.offset << " of " << f.buffer_size << (f.padded ? " (padded)" : "");
        }
        for (std::size_t p = 0; p < params.size(); ++p)
            s << "\n  parameter " << params[p].name << " (" << rt_name(params[p].type)
              << ") = " << std::setprecision(17) << params[p].value << "  [v" << p << "]"
              << (params[p].used ? "" : "  [unused]");
        s << "\n  iteration space: ";
        if (sliced)
            s << "slice " << config.iteration_slice->describe();
        else if (config.ghost_layers.is_automatic())
            s << "automatic ghost layers";
        else if (config.ghost_layers.uniform())
            s << "ghost layers " << *config.ghost_layers.uniform();
        else {
            s << "ghost layers per axis";
            for (auto [lo, hi] : config.ghost_layers.per_axis())
                s << " (" << lo << ", " << hi << ")";
        }
        s << "; index type "
          << (config.index_type ? std::string(type_name(*config.index_type)) : "automatic");
        s << "\n  assignments:";
        for (const Assignment& a : assignments.all()) s << "\n    " << a.to_string();
        std::vector<std::string> names;
        for (const CaseField& f : fields) names.push_back(f.name());
        s << "\n  reference:";
        for (const CaseOutput& o : outputs) {
            s << "\n    " << fields[static_cast<std::size_t>(o.field)].name();
            if (o.component >= 0) s << "(" << o.component << ")";
            s << " = " << ast.to_string(o.node, names);
        }
        return s.str();
    }

private:
    std::int64_t resolve(const CaseBound& b, int d, const Index& i) const {
        const std::int64_t n = shape[static_cast<std::size_t>(d)];
        switch (b.kind) {
        case CaseBound::Kind::End: return n;
        case CaseBound::Kind::Index: return b.value >= 0 ? b.value : n + b.value;
        case CaseBound::Kind::Param:
            return static_cast<std::int64_t>(params[static_cast<std::size_t>(b.param)].value) +
                   b.value;
        case CaseBound::Kind::Counter: return i[static_cast<std::size_t>(b.axis)] + b.value;
        }
        return 0;
    }
};

// ==== Checking =================================================================================

/// Whether `got` (a T) is one of the reference candidates, within factor * its error bound.
template <typename T>
bool matches(const RCands& want, T got, double factor) {
    for (int k = 0; k < want.n; ++k) {
        const RVal& w = want.v[k];
        if (std::isnan(w.f)) {
            if (std::isnan(got) && !is_poison(got)) return true;
            continue;
        }
        if (!std::isfinite(static_cast<double>(got))) {
            if (static_cast<double>(got) == w.f) return true;
            continue;
        }
        const double tol = factor * w.err + std::numeric_limits<double>::min();
        if (std::fabs(static_cast<double>(got) - w.f) <= tol) return true;
    }
    return false;
}

template <typename T>
std::string value_text(T v) {
    if (is_poison(v)) return "the poison";
    std::ostringstream s;
    s << std::setprecision(std::numeric_limits<T>::max_digits10) << v;
    return s.str();
}

/// Array index of buffer position `pos` of field `f`, or empty when `pos` is padding.
inline Index index_of_position(const CaseField& f, std::int64_t pos) {
    Index found;
    for_each_index(f.shape, [&](const Index& i) {
        if (found.empty() && f.position(i) == pos) found = i;
    });
    return found;
}

/// Checks every element of the output buffer of field `field`: written cells must match the
/// reference, every other element (cells outside the iteration space, unwritten components,
/// padding) must still hold the poison. Names the first bad elements by array index.
template <typename T>
::testing::AssertionResult check_buffer(const StencilCase& c, const Expected& e, int field,
                                        const std::vector<T>& got) {
    const CaseField& f = c.fields.at(static_cast<std::size_t>(field));
    const Expected::Buffer& b = e.of(field);
    if (static_cast<std::int64_t>(got.size()) != f.buffer_size)
        return ::testing::AssertionFailure() << got.size() << " values for a buffer of "
                                             << f.buffer_size;
    std::int64_t wrong = 0, missing = 0, stray = 0, to_write = 0;
    std::ostringstream first;
    int listed = 0;
    for (std::size_t p = 0; p < got.size(); ++p) {
        const T v = got[p];
        std::string problem;
        if (b.written[p]) {
            ++to_write;
            if (is_poison(v)) {
                ++missing;
                problem = "still holds the poison, but the kernel must write it";
            } else if (!matches(b.values[p], v, e.factor)) {
                ++wrong;
                std::ostringstream s;
                s << std::setprecision(17) << "got " << value_text(v) << ", expected";
                for (int k = 0; k < b.values[p].n; ++k)
                    s << (k ? " or " : " ") << b.values[p].v[k].f << " (difference "
                      << std::fabs(static_cast<double>(v) - b.values[p].v[k].f) << ", tolerance "
                      << e.factor * b.values[p].v[k].err << ")";
                problem = s.str();
            }
        } else if (!is_poison(v)) {
            ++stray;
            problem = "got " + value_text(v) + ", but the kernel must not write it";
        }
        if (!problem.empty() && listed < 6) {
            Index i = index_of_position(f, static_cast<std::int64_t>(p));
            first << "\n  " << f.name() << " "
                  << (i.empty() ? "padding element " + std::to_string(p)
                                : "cell " + shape_string(i))
                  << ": " << problem;
            ++listed;
        }
    }
    if (wrong + missing + stray == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << f.name() << ": " << to_write << " cells to write: " << wrong << " wrong, " << missing
           << " not written, " << stray << " written that must not be; the first:"
           << first.str();
}

/// Checks that two runs (e.g. GPU and CPU) agree on the buffer of `field`: the same elements
/// written, the values within twice the rounding tolerance of each other (or, where a
/// comparison was too close to call, each a reference candidate).
template <typename T>
::testing::AssertionResult buffers_agree(const StencilCase& c, const Expected& e, int field,
                                         const std::vector<T>& a, const std::vector<T>& b,
                                         const char* a_name, const char* b_name) {
    const CaseField& f = c.fields.at(static_cast<std::size_t>(field));
    const Expected::Buffer& want = e.of(field);
    if (a.size() != b.size() || static_cast<std::int64_t>(a.size()) != f.buffer_size)
        return ::testing::AssertionFailure() << "buffer sizes differ";
    std::int64_t differ = 0;
    std::ostringstream first;
    for (std::size_t p = 0; p < a.size(); ++p) {
        bool ok;
        if (is_poison(a[p]) || is_poison(b[p])) {
            ok = is_poison(a[p]) && is_poison(b[p]);
        } else if (!want.written[p]) {
            ok = false;
        } else {
            const RCands& w = want.values[p];
            double err = 0.0;
            for (int k = 0; k < w.n; ++k) err = std::max(err, w.v[k].err);
            const double tol = 2.0 * e.factor * err + std::numeric_limits<double>::min();
            const double da = static_cast<double>(a[p]), db = static_cast<double>(b[p]);
            ok = std::fabs(da - db) <= tol || (std::isnan(da) && std::isnan(db)) ||
                 (w.n > 1 && matches(w, a[p], e.factor) && matches(w, b[p], e.factor));
        }
        if (!ok && differ++ < 6) {
            Index i = index_of_position(f, static_cast<std::int64_t>(p));
            first << "\n  " << f.name() << " "
                  << (i.empty() ? "padding element " + std::to_string(p)
                                : "cell " + shape_string(i))
                  << ": " << a_name << " " << value_text(a[p]) << ", " << b_name << " "
                  << value_text(b[p]);
        }
    }
    if (differ == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << f.name() << ": " << differ << " element(s) differ between " << a_name << " and "
           << b_name << "; the first:" << first.str();
}

// ==== The generator ============================================================================

namespace detail {

class Generator {
public:
    Generator(std::uint64_t seed, const GeneratorOptions& options)
        : rng_(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull), options_(options) {
        c_.seed = seed;
    }

    StencilCase run() {
        choose_shape();
        choose_fields();
        if (coin(0.3)) choose_param();
        build_assignments();
        choose_iteration_space();
        lay_out_buffers();
        c_.config.name = "random_stencil";
        const int index_choice = uniform(0, 2);
        if (index_choice == 1) c_.config.index_type = ScalarType::Int32;
        if (index_choice == 2) c_.config.index_type = ScalarType::Int64;
        for (CaseOutput& o : c_.outputs) o.operations = c_.ast.operations(o.node);
        mark_used();
        return std::move(c_);
    }

private:
    struct Term {
        Expr e;
        int node = -1;
        RType t = RType::F64;
    };

    /// Sources no expression reads and a value parameter no expression uses are not kernel
    /// arguments: loom rejects arguments a kernel does not have.
    void mark_used() {
        for (CaseField& f : c_.fields) f.used = f.written;
        for (CaseParam& p : c_.params) p.used = p.type == RType::I64; // slice bounds
        for (const RNode& n : c_.ast.nodes) {
            if (n.op == ROp::Read) c_.fields[static_cast<std::size_t>(n.slot)].used = true;
            if (n.op == ROp::Var) c_.params[static_cast<std::size_t>(n.slot)].used = true;
        }
    }

    // ---- randomness ----
    int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
    double real(double lo, double hi) {
        return std::uniform_real_distribution<double>(lo, hi)(rng_);
    }
    bool coin(double p) { return real(0.0, 1.0) < p; }
    /// A coefficient: a "nice" one (1, -1, 0.5, 0.25, 2) or a random one of magnitude 0.1..2.
    double coefficient() {
        if (coin(0.3)) {
            const double nice[] = {1.0, -1.0, 0.5, 0.25, 2.0, -0.5};
            return nice[uniform(0, 5)];
        }
        return (coin(0.5) ? 1.0 : -1.0) * real(0.1, 2.0);
    }

    // ---- shape and fields ----
    void choose_shape() {
        const int r = uniform(0, 99);
        c_.dims = r < 20 ? 1 : r < 55 ? 2 : r < 90 ? 3 : 4;
        c_.type = coin(0.5) ? RType::F32 : RType::F64;
        radius_ = c_.dims == 1 ? uniform(1, 3) : c_.dims == 4 ? 1 : uniform(1, 2);
        c_.fixed_shape = coin(0.12);
        // Room for a slice of a few cells (fixed shapes: for wider ghost layers too, which
        // must leave something to iterate); now and then an axis too small for any cell.
        const int min_size = 2 * radius_ + (c_.fixed_shape ? 6 : 2);
        const int max_size = std::max(min_size + 1, c_.dims == 1   ? 300
                                                    : c_.dims == 2 ? 40
                                                    : c_.dims == 3 ? 14
                                                                   : 7);
        c_.shape.clear();
        for (int d = 0; d < c_.dims; ++d)
            c_.shape.push_back(!c_.fixed_shape && coin(0.01) ? uniform(1, 2 * radius_)
                                                             : uniform(min_size, max_size));
        reach_.assign(static_cast<std::size_t>(c_.dims), {0, 0});
    }

    Layout random_layout() {
        const int r = uniform(0, 99);
        return r < 55 ? Layout::C : r < 70 ? Layout::Fortran : r < 85 ? Layout::SoA : Layout::AoS;
    }

    int add_field(const std::string& name, RType t, int components, bool written) {
        CaseField f{make_field(name, t, components, written), t, components, Layout::C,
                    written, false, true, {}, {}, 0, 0, {}};
        f.layout = f.field.info().layout;
        c_.fields.push_back(std::move(f));
        return static_cast<int>(c_.fields.size()) - 1;
    }

    Field make_field(const std::string& name, RType t, int components, bool written) {
        FieldOptions o;
        if (components > 0) o.index_shape = {components};
        o.layout = written && coin(0.6) ? Layout::C : random_layout();
        if (c_.fixed_shape) return loom::make_field(name, to_scalar_type(t), c_.shape, o);
        return loom::make_field(name, to_scalar_type(t), c_.dims, o);
    }

    void choose_fields() {
        const int sources = uniform(1, 3);
        for (int s = 0; s < sources; ++s) {
            RType t = coin(0.2) ? (c_.type == RType::F32 ? RType::F64 : RType::F32) : c_.type;
            int components = coin(0.25) ? uniform(2, 3) : 0;
            sources_.push_back(add_field("u" + std::to_string(s), t, components, false));
        }
        const int r = uniform(0, 99);
        if (r < 70) {
            out_fields_.push_back(add_field("out", output_type(), 0, true));
        } else if (r < 85) {
            out_fields_.push_back(add_field("out", output_type(), 0, true));
            out_fields_.push_back(add_field("out2", output_type(), 0, true));
        } else {
            out_fields_.push_back(add_field("vout", output_type(), 2, true));
        }
    }
    /// The kernel type, or now and then float64 for a float32 kernel (a widening store).
    RType output_type() { return c_.type == RType::F32 && coin(0.1) ? RType::F64 : c_.type; }

    void choose_param() {
        CaseParam p;
        p.name = "alpha";
        p.type = c_.type;
        double v = (coin(0.5) ? 1.0 : -1.0) * real(0.5, 1.5);
        p.value = p.type == RType::F32 ? static_cast<double>(static_cast<float>(v)) : v;
        p.expr = param(p.name, to_scalar_type(p.type));
        c_.params.push_back(p);
        value_param_ = static_cast<int>(c_.params.size()) - 1;
    }

    // ---- expressions, mirrored in the reference ----
    /// Brings two terms to one type, as the DSL's promotion does (float32 -> float64 is exact).
    std::pair<int, int> unify(const Term& a, const Term& b) {
        RType t = wider(a.t, b.t);
        return {c_.ast.cast(t, a.node), c_.ast.cast(t, b.node)};
    }
    Term binary(ROp op, const Term& a, const Term& b) {
        auto [na, nb] = unify(a, b);
        Expr e;
        switch (op) {
        case ROp::Add: e = a.e + b.e; break;
        case ROp::Sub: e = a.e - b.e; break;
        case ROp::Mul: e = a.e * b.e; break;
        case ROp::Div: e = a.e / b.e; break;
        case ROp::Min: e = min(a.e, b.e); break;
        case ROp::Max: e = max(a.e, b.e); break;
        default: throw std::logic_error("generator: binary op");
        }
        return {e, c_.ast.binary(op, na, nb), wider(a.t, b.t)};
    }
    /// A plain C++ number `c` (a weak literal) combined with `x`: it takes x's type.
    Term literal_times(double c, const Term& x) {
        return {c * x.e, c_.ast.binary(ROp::Mul, c_.ast.constant(x.t, c), x.node), x.t};
    }
    Term plus_literal(const Term& x, double c) {
        return {x.e + c, c_.ast.binary(ROp::Add, x.node, c_.ast.constant(x.t, c)), x.t};
    }

    Term read() {
        const int f =
            sources_[static_cast<std::size_t>(uniform(0, static_cast<int>(sources_.size()) - 1))];
        const CaseField& cf = c_.fields[static_cast<std::size_t>(f)];
        std::vector<int> offset;
        for (int d = 0; d < c_.dims; ++d) {
            int o = coin(0.35) ? 0 : uniform(-radius_, radius_);
            offset.push_back(o);
            auto& r = reach_[static_cast<std::size_t>(d)];
            r.first = std::max(r.first, -o);
            r.second = std::max(r.second, o);
        }
        const int comp = cf.components > 0 ? uniform(0, cf.components - 1) : -1;
        Access access = cf.field[offset];
        if (comp >= 0) access = access(comp);
        Term t{access.expr(), c_.ast.read(cf.type, f, offset, comp), cf.type};
        if (cf.type == RType::F64 && c_.type == RType::F32)
            t = {cast(ScalarType::Float32, t.e), c_.ast.cast(RType::F32, t.node), RType::F32};
        return t;
    }

    Term leaf() {
        if (!temps_.empty() && coin(0.2))
            return temps_[static_cast<std::size_t>(
                uniform(0, static_cast<int>(temps_.size()) - 1))];
        const int r = uniform(0, 99);
        if (r < 6) {
            // A counter, converted to the kernel's type: the value depends on the cell index.
            const int axis = uniform(0, c_.dims - 1);
            Term t{cast(to_scalar_type(c_.type), ctr(axis)),
                   c_.ast.cast(c_.type, c_.ast.counter(axis)), c_.type};
            return literal_times(real(0.01, 0.2), t);
        }
        Term t = read();
        if (value_param_ >= 0 && r < 18) {
            const CaseParam& p = c_.params[static_cast<std::size_t>(value_param_)];
            return binary(ROp::Mul, Term{p.expr, c_.ast.var(p.type, value_param_), p.type}, t);
        }
        if (r < 70) return literal_times(coefficient(), t);
        return t;
    }

    Term gen(int depth) {
        if (depth <= 0 || coin(0.25)) return leaf();
        const int r = uniform(0, 99);
        if (r < 30) {
            Term acc = gen(depth - 1);
            for (int k = uniform(1, 3); k > 0; --k)
                acc = binary(coin(0.65) ? ROp::Add : ROp::Sub, acc, gen(depth - 1));
            return acc;
        }
        if (r < 40) return literal_times(coefficient(), gen(depth - 1));
        if (r < 48) return binary(ROp::Mul, gen(depth - 1), gen(depth - 1));
        if (r < 53) {
            Term a = gen(depth - 1);
            return {-a.e, c_.ast.unary(ROp::Neg, a.node), a.t};
        }
        if (r < 59) {
            Term a = gen(depth - 1);
            return {abs(a.e), c_.ast.unary(ROp::Abs, a.node), a.t};
        }
        if (r < 67) {
            // sqrt(|e| + 1): defined everywhere, never near zero.
            Term a = gen(depth - 1);
            Term inner = plus_literal({abs(a.e), c_.ast.unary(ROp::Abs, a.node), a.t}, 1.0);
            return {sqrt(inner.e), c_.ast.unary(ROp::Sqrt, inner.node), inner.t};
        }
        if (r < 77) return binary(coin(0.5) ? ROp::Min : ROp::Max, gen(depth - 1), gen(depth - 1));
        if (r < 84) {
            // e1 / (|e2| + k): the divisor stays at least k.
            Term d = gen(depth - 1);
            Term divisor = plus_literal({abs(d.e), c_.ast.unary(ROp::Abs, d.node), d.t},
                                        real(0.5, 2.0));
            return binary(ROp::Div, gen(depth - 1), divisor);
        }
        // select(a < b, x, y) (or >, <=, >=)
        Term a = gen(depth - 1), b = gen(depth - 1), x = gen(depth - 1), y = gen(depth - 1);
        auto [na, nb] = unify(a, b);
        const ROp ops[] = {ROp::Lt, ROp::Gt, ROp::Le, ROp::Ge};
        const ROp op = ops[uniform(0, 3)];
        Expr cond = op == ROp::Lt ? a.e < b.e : op == ROp::Gt ? a.e > b.e
                    : op == ROp::Le ? a.e <= b.e : a.e >= b.e;
        auto [nx, ny] = unify(x, y);
        return {select(cond, x.e, y.e), c_.ast.select(c_.ast.binary(op, na, nb), nx, ny),
                wider(x.t, y.t)};
    }

    void build_assignments() {
        if (coin(0.3)) {
            // A named subexpression, used as a leaf below (maybe several times).
            Term s = gen(uniform(1, 2));
            Expr t = c_.assignments.subexpression("t0", s.e);
            temps_.push_back({t, s.node, s.t});
        }
        const int depth = uniform(1, 3);
        std::vector<Term> rhs_pool;
        auto rhs = [&]() {
            // Now and then the same right side twice: common subexpressions across outputs.
            if (!rhs_pool.empty() && coin(0.15)) return rhs_pool.back();
            Term t = gen(depth);
            rhs_pool.push_back(t);
            return t;
        };
        for (int f : out_fields_) {
            const CaseField& cf = c_.fields[static_cast<std::size_t>(f)];
            const int n = cf.components > 0 ? cf.components : 1;
            // A vector output sometimes leaves a component unwritten (it must keep the poison).
            const int skip = cf.components > 0 && coin(0.3) ? uniform(0, n - 1) : -1;
            for (int k = 0; k < n; ++k) {
                if (k == skip) continue;
                Term t = rhs();
                Access lhs = cf.components > 0 ? cf.field.center(k) : cf.field.center();
                int node = t.node;
                if (cf.type == RType::F32 && t.t == RType::F64)
                    throw std::logic_error("generator: float64 into a float32 output");
                if (cf.type != t.t) node = c_.ast.cast(cf.type, node); // the implicit widening
                c_.assignments.add(Assignment(lhs, t.e));
                c_.outputs.push_back({f, cf.components > 0 ? k : -1, node, 0});
            }
        }
    }

    // ---- iteration space ----
    void choose_iteration_space() {
        const int D = c_.dims;
        c_.axes.assign(static_cast<std::size_t>(D), CaseAxis{});
        std::int64_t reach = 0;
        for (auto [lo, hi] : reach_) reach = std::max<std::int64_t>({reach, lo, hi});
        bool too_small = false;
        for (int d = 0; d < D; ++d)
            too_small |= c_.shape[static_cast<std::size_t>(d)] < 2 * reach + 2;
        if (too_small || coin(0.62)) {
            const int r = uniform(0, 99);
            if (r < 40) {
                for (CaseAxis& a : c_.axes) a.ghost_lo = a.ghost_hi = reach;
            } else if (r < 70) {
                const int w = static_cast<int>(reach) + (coin(0.5) ? 0 : uniform(1, 2));
                c_.config.ghost_layers = GhostLayers(w);
                for (CaseAxis& a : c_.axes) a.ghost_lo = a.ghost_hi = w;
            } else {
                std::vector<std::pair<int, int>> per_axis;
                for (int d = 0; d < D; ++d) {
                    auto [lo, hi] = reach_[static_cast<std::size_t>(d)];
                    const int l = lo + (coin(0.6) ? 0 : uniform(1, 2));
                    const int h = hi + (coin(0.6) ? 0 : uniform(1, 2));
                    per_axis.emplace_back(l, h);
                    c_.axes[static_cast<std::size_t>(d)].ghost_lo = l;
                    c_.axes[static_cast<std::size_t>(d)].ghost_hi = h;
                }
                c_.config.ghost_layers = GhostLayers(per_axis);
            }
            return;
        }
        c_.sliced = true;
        std::vector<SliceDim> dims;
        for (int d = 0; d < D; ++d) dims.push_back(slice_axis(d));
        c_.config.iteration_slice = Slice(dims);
    }

    SliceDim slice_axis(int d) {
        CaseAxis& ax = c_.axes[static_cast<std::size_t>(d)];
        const std::int64_t n = c_.shape[static_cast<std::size_t>(d)];
        const auto [lo, hi] = reach_[static_cast<std::size_t>(d)];
        // Valid cells: lo <= c <= n - 1 - hi.
        const std::int64_t first = lo, last = n - 1 - hi;
        if (coin(0.12)) {
            // A single index, sometimes counted from the end.
            const std::int64_t k = first + uniform(0, static_cast<int>(last - first));
            ax.single = true;
            ax.start.kind = CaseBound::Kind::Index;
            ax.start.value = coin(0.4) ? k - n : k;
            return at(Bound(ax.start.value));
        }
        ax.step = coin(0.6) ? 1 : uniform(2, 3);
        Bound start(0), stop = Bound::end();
        // The first cell s, then the stop in (s, last + 1] (now and then s: an empty range).
        const std::int64_t s =
            first + uniform(0, static_cast<int>(std::min<std::int64_t>(last - first, 4)));
        const std::int64_t stop_at =
            coin(0.03)
                ? s
                : last + 1 - uniform(0, static_cast<int>(std::min<std::int64_t>(last - s, 3)));
        // Start: a literal (maybe from the end), a parameter or an earlier counter.
        const int r = uniform(0, 99);
        if (r < 8 && c_.params.size() < 3) {
            CaseParam p;
            p.name = "lo" + std::to_string(d);
            p.type = RType::I64;
            p.value = static_cast<double>(s);
            p.expr = param(p.name, ScalarType::Int64);
            c_.params.push_back(p);
            ax.start.kind = CaseBound::Kind::Param;
            ax.start.param = static_cast<int>(c_.params.size()) - 1;
            start = Bound(p.expr);
        } else if (r < 22 && d > 0 && options_.counter_bounds) {
            // start = ctr(e) + k: cells of earlier axes are >= 0, so k >= lo keeps it in bounds.
            const int e = uniform(0, d - 1);
            const std::int64_t k = lo + uniform(0, 2);
            ax.start.kind = CaseBound::Kind::Counter;
            ax.start.axis = e;
            ax.start.value = k;
            start = Bound(ctr(e) + k);
        } else {
            ax.start.kind = CaseBound::Kind::Index;
            ax.start.value = s > 0 && coin(0.3) ? s - n : s;
            start = Bound(ax.start.value);
        }
        // Stop: the end, a distance from the end, or a literal index.
        ax.stop.kind = CaseBound::Kind::Index;
        if (stop_at == n && coin(0.7)) {
            ax.stop.kind = CaseBound::Kind::End;
        } else if (stop_at < n && coin(0.55)) {
            ax.stop.value = stop_at - n;
            stop = Bound(ax.stop.value);
        } else {
            ax.stop.value = stop_at;
            stop = Bound(ax.stop.value);
        }
        return range(start, stop, ax.step);
    }

    // ---- buffers ----
    /// Array axes in memory order, slowest first, for a layout (the test's own reading of
    /// Layout's documentation, not loom's FieldInfo::memory_order).
    static std::vector<int> memory_order(Layout layout, int dims, int comp_axes) {
        std::vector<int> order;
        const int A = dims + comp_axes;
        switch (layout) {
        case Layout::C:
            for (int a = 0; a < A; ++a) order.push_back(a);
            break;
        case Layout::Fortran:
            for (int a = A - 1; a >= 0; --a) order.push_back(a);
            break;
        case Layout::SoA: // components slowest, then z, y, x: axis 0 fastest
            for (int a = dims; a < A; ++a) order.push_back(a);
            for (int a = dims - 1; a >= 0; --a) order.push_back(a);
            break;
        case Layout::AoS: // z, y, x, then components fastest
            for (int a = dims - 1; a >= 0; --a) order.push_back(a);
            for (int a = dims; a < A; ++a) order.push_back(a);
            break;
        }
        return order;
    }

    void lay_out_buffers() {
        for (CaseField& f : c_.fields) {
            f.shape = c_.shape;
            if (f.components > 0) f.shape.push_back(f.components);
            const int A = static_cast<int>(f.shape.size());
            // Fixed-shape fields have their strides baked in: compact only. Others may be a
            // sub-box of a larger buffer (strides of the larger box, an offset).
            f.padded = !c_.fixed_shape && coin(0.2);
            Shape box = f.shape, at(static_cast<std::size_t>(A), 0);
            if (f.padded)
                for (int a = 0; a < A; ++a) {
                    const std::int64_t extra = uniform(0, 3);
                    box[static_cast<std::size_t>(a)] += extra;
                    at[static_cast<std::size_t>(a)] = uniform(0, static_cast<int>(extra));
                }
            f.strides.assign(static_cast<std::size_t>(A), 0);
            std::int64_t stride = 1;
            const std::vector<int> order = memory_order(f.layout, c_.dims, A - c_.dims);
            for (auto it = order.rbegin(); it != order.rend(); ++it) {
                f.strides[static_cast<std::size_t>(*it)] = stride;
                stride *= box[static_cast<std::size_t>(*it)];
            }
            f.buffer_size = stride;
            f.offset = 0;
            for (int a = 0; a < A; ++a)
                f.offset +=
                    at[static_cast<std::size_t>(a)] * f.strides[static_cast<std::size_t>(a)];
            if (!f.written) {
                // Random values, never zero, exactly representable in the field's type.
                f.values.resize(static_cast<std::size_t>(f.buffer_size));
                for (double& v : f.values) {
                    const double x = (coin(0.5) ? 1.0 : -1.0) *
                                     (f.type == RType::F32 ? real(0.25, 1.0) : real(0.5, 2.0));
                    v = f.type == RType::F32 ? static_cast<double>(static_cast<float>(x)) : x;
                }
            }
        }
    }

    std::mt19937_64 rng_;
    GeneratorOptions options_;
    StencilCase c_;
    int radius_ = 1;
    std::vector<std::pair<int, int>> reach_; ///< per axis: cells read below, above
    std::vector<int> sources_, out_fields_;
    std::vector<Term> temps_;
    int value_param_ = -1;
};

} // namespace detail

/// The random stencil of `seed`: the same seed gives the same case on every machine.
inline StencilCase generate_stencil(std::uint64_t seed, const GeneratorOptions& options = {}) {
    return detail::Generator(seed, options).run();
}

/// The scalar arguments of a case, by name: parameter values (float or integer).
inline void add_scalar_args(const StencilCase& c, Args& a) {
    for (const CaseParam& p : c.params) {
        if (!p.used) continue;
        if (rt_is_float(p.type))
            a.named.emplace_back(p.name, Arg(p.value));
        else
            a.named.emplace_back(p.name, Arg(static_cast<std::int64_t>(p.value)));
    }
}

/// The host buffers of a case, one per field and of the field's type (inputs random, outputs
/// poisoned), and the arguments that pass them to a Target::CPU kernel: a HostView per field
/// (read-only for inputs) over the buffer at the field's offset and strides, plus the scalar
/// parameters.
struct HostBuffers {
    std::vector<std::vector<float>> f32;
    std::vector<std::vector<double>> f64;

    explicit HostBuffers(const StencilCase& c) : f32(c.fields.size()), f64(c.fields.size()) {
        for (std::size_t f = 0; f < c.fields.size(); ++f) {
            if (c.fields[f].type == RType::F32)
                f32[f] = c.fields[f].buffer_as<float>();
            else
                f64[f] = c.fields[f].buffer_as<double>();
        }
    }

    Args args(const StencilCase& c) {
        Args a;
        for (std::size_t f = 0; f < c.fields.size(); ++f) {
            const CaseField& cf = c.fields[f];
            if (!cf.used) continue;
            ArrayRef ref;
            if (cf.type == RType::F32) {
                float* p = f32[f].data() + cf.offset;
                ref = cf.written ? HostView<float>(p, cf.shape, cf.strides).ref()
                                 : HostView<const float>(p, cf.shape, cf.strides).ref();
            } else {
                double* p = f64[f].data() + cf.offset;
                ref = cf.written ? HostView<double>(p, cf.shape, cf.strides).ref()
                                 : HostView<const double>(p, cf.shape, cf.strides).ref();
            }
            a.named.emplace_back(cf.name(), Arg(ref));
        }
        add_scalar_args(c, a);
        return a;
    }

    /// check_buffer on every output buffer.
    ::testing::AssertionResult check(const StencilCase& c, const Expected& e) const {
        for (std::size_t f = 0; f < c.fields.size(); ++f) {
            if (!c.fields[f].written) continue;
            const int field = static_cast<int>(f);
            ::testing::AssertionResult r = c.fields[f].type == RType::F32
                                               ? check_buffer(c, e, field, f32[f])
                                               : check_buffer(c, e, field, f64[f]);
            if (!r) return r;
        }
        return ::testing::AssertionSuccess();
    }
};

/// The base seed of a run: LOOM_STENCIL_SEED if set, else `fallback`.
inline std::uint64_t base_seed(std::uint64_t fallback) {
    if (const char* s = std::getenv("LOOM_STENCIL_SEED")) return std::strtoull(s, nullptr, 0);
    return fallback;
}
/// How many cases a run checks: LOOM_STENCIL_COUNT if set, else `fallback`.
inline int case_count(int fallback) {
    if (const char* s = std::getenv("LOOM_STENCIL_COUNT")) return std::atoi(s);
    return fallback;
}

} // namespace loom::stencil_test
