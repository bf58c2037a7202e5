#include <loom/expr.hpp>

#include "compiler/ir/evaluate.hpp"
#include "compiler/ir/printer.hpp"
#include "frontend/untyped.hpp"

#include <loom/errors.hpp>
#include <loom/half.hpp>

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <set>

namespace loom {
using namespace ir;

namespace {

bool fits_int32(const Expr& weak_int) {
    auto v = weak_int.as<ConstNode>()->int_value;
    return v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max();
}

/// `e`, or a UserError when `what` made it deeper than loom::max_expression_depth.
Expr within_depth(Expr e, const char* what) {
    if (e.depth() > max_expression_depth) throw_too_deep(e.depth(), what);
    return e;
}
Expr within_depth(Expr e, BinaryOp op) {
    if (e.depth() > max_expression_depth)
        throw_too_deep(e.depth(), fmt::format("'{}'", op_name(op)).c_str());
    return e;
}
Expr within_depth(Expr e, MathFn fn) {
    if (e.depth() > max_expression_depth)
        throw_too_deep(e.depth(), fmt::format("{}()", fn_name(fn)).c_str());
    return e;
}

[[noreturn]] void type_error(std::string_view op, const Expr& a, const Expr& b, std::string_view hint) {
    throw UserError(fmt::format("cannot apply '{}' to {} and {}: `{}` and `{}`. {}", op,
                                type_name(a.type()), type_name(b.type()), to_string(a),
                                to_string(b), hint));
}

/// Brings two operands to one type: untyped values (plain numbers, untyped parameters and what is
/// built from them, see untyped.hpp) adopt the other side's type, strong types promote. Two
/// untyped values stay untyped (float if either is).
std::pair<Expr, Expr> unify(std::string_view op, Expr a, Expr b) {
    if (!a.defined() || !b.defined())
        throw UserError(fmt::format("operator '{}' got an undefined expression (a default-constructed "
                                    "loom::Expr); give it a value before using it", op));
    if (a.type() == ScalarType::Bool || b.type() == ScalarType::Bool) {
        if (a.type() != b.type())
            type_error(op, a, b, "Booleans do not mix with numbers; use select(cond, 1.0, 0.0) to "
                                 "turn a condition into a number.");
        return {a, b};
    }
    bool wa = is_untyped(a), wb = is_untyped(b);
    if (wa && wb) {
        if (a.type() == b.type()) return {a, b};
        // Untyped compounds and variables are float64, so the other side is a plain number.
        ScalarType t = !is_weak_constant(a) ? a.type()
                     : !is_weak_constant(b) ? b.type()
                     : is_float(a.type())   ? a.type() : b.type();
        auto widen = [t](const Expr& e) {
            return e.type() == t ? e : ConstNode::make(t, e.as<ConstNode>()->as_double(), true);
        };
        return {widen(a), widen(b)};
    }
    if (wa || wb) {
        Expr& weak = wa ? a : b;
        Expr& strong = wa ? b : a;
        ScalarType t = strong.type();
        if (is_float(weak.type()) && is_int(t)) {
            // 0.5 * int_field: the int converts to float64, as in C++.
            strong = CastNode::make(ScalarType::Float64, strong);
            t = ScalarType::Float64;
        } else if (t == ScalarType::Int32 && !fits_int32(weak)) {
            // (An integer here is a plain number: untyped compounds are float.)
            strong = CastNode::make(ScalarType::Int64, strong);
            t = ScalarType::Int64;
        }
        try {
            weak = adopt(weak, t);
        } catch (const UserError& e) { // a plain number that does not fit: say where
            throw UserError(fmt::format("in `{} {} {}`: {}", to_string(a), op, to_string(b), e.what()));
        }
        return {a, b};
    }
    auto common = common_type(a.type(), b.type());
    if (!common) type_error(op, a, b, "Convert one side with cast<T>(...).");
    if (a.type() != *common) a = CastNode::make(*common, a);
    if (b.type() != *common) b = CastNode::make(*common, b);
    return {a, b};
}

/// A weak constant holding an evaluated value: plain numbers fold as they are combined.
Expr weak_value(const Value& v) {
    return is_float(v.type) ? ConstNode::make(v.type, v.f, true) : ConstNode::make_int(v.type, v.i, true);
}

Expr arithmetic(BinaryOp op, const Expr& x, const Expr& y) {
    auto [a, b] = unify(op_name(op), x, y);
    if (a.type() == ScalarType::Bool)
        type_error(op_name(op), a, b, "Arithmetic needs numbers; use select(...) on conditions.");
    // A divisor that is the constant 0 as written; one that folds to 0 (2 - 2) is create_kernel's
    // to find (analyze's check_division_by_zero), with the same wording.
    if ((op == BinaryOp::Div || op == BinaryOp::Mod) && is_int(b.type()))
        if (auto cb = b.as<ConstNode>(); cb && cb->int_value == 0)
            throw UserError(fmt::format("integer division by zero in `{} {} 0`: the divisor is the "
                                        "constant 0. {}", to_string(a), op_name(op),
                                        integer_division_by_zero_advice(op)));
    if (is_weak_constant(a) && is_weak_constant(b)) {
        // Two plain numbers: fold now (the interpreter has C semantics), keep the result weak.
        return weak_value(evaluate(BinaryNode::make(op, a, b), {}));
    }
    return within_depth(BinaryNode::make(op, a, b), op);
}

Expr comparison(BinaryOp op, const Expr& x, const Expr& y) {
    auto [a, b] = unify(op_name(op), x, y);
    if (a.type() == ScalarType::Bool && op != BinaryOp::Eq && op != BinaryOp::Ne)
        type_error(op_name(op), a, b, "Only == and != compare booleans.");
    if (a.type() == ScalarType::Bool) {
        // == and != on booleans are expressed with the logical operators.
        Expr both = BinaryNode::make(BinaryOp::And, a, b);
        Expr neither = BinaryNode::make(BinaryOp::And, UnaryNode::make(UnaryOp::Not, a),
                                        UnaryNode::make(UnaryOp::Not, b));
        Expr eq = BinaryNode::make(BinaryOp::Or, both, neither);
        return within_depth(op == BinaryOp::Eq ? eq : UnaryNode::make(UnaryOp::Not, eq), op);
    }
    return within_depth(BinaryNode::make(op, a, b), op);
}

Expr logical(BinaryOp op, const Expr& a, const Expr& b) {
    if (!a.defined() || !b.defined() || a.type() != ScalarType::Bool || b.type() != ScalarType::Bool)
        throw UserError(fmt::format(
            "'{}' needs two boolean operands (comparisons), found {} and {}: `{}` and `{}`. "
            "Compare numbers first, e.g. `x > 0 {} y > 0`.",
            op_name(op), a.defined() ? type_name(a.type()) : "undefined",
            b.defined() ? type_name(b.type()) : "undefined", to_string(a), to_string(b), op_name(op)));
    return within_depth(BinaryNode::make(op, a, b), op);
}

Expr math(MathFn fn, std::vector<Expr> args) {
    for (auto& a : args) {
        if (!a.defined())
            throw UserError(fmt::format("{}() got an undefined expression", fn_name(fn)));
        if (a.type() == ScalarType::Bool)
            throw UserError(fmt::format("{}() needs a number, found the boolean `{}`; use "
                                        "select(cond, 1.0, 0.0) to turn a condition into a number",
                                        fn_name(fn), to_string(a)));
    }
    // All plain numbers: evaluate now and stay weak.
    bool all_weak = true, all_untyped = true;
    for (auto& a : args) {
        all_weak &= is_weak_constant(a);
        all_untyped &= is_untyped(a);
    }
    bool keeps_int = fn == MathFn::Abs || fn == MathFn::Floor || fn == MathFn::Ceil;
    if (all_weak) {
        bool any_float = false;
        for (auto& a : args) any_float |= is_float(a.type());
        ScalarType t = (any_float || !keeps_int) ? ScalarType::Float64 : ScalarType::Int64;
        std::vector<Expr> typed;
        for (auto& a : args) typed.push_back(adopt(a, t));
        return weak_value(evaluate(CallNode::make(fn, typed), {}));
    }
    if (all_untyped) {
        // Untyped parameters among the arguments: an untyped float64 call, typed later.
        for (auto& a : args)
            if (a.type() != ScalarType::Float64)
                a = ConstNode::make(ScalarType::Float64, a.as<ConstNode>()->as_double(), true);
        return within_depth(CallNode::make(fn, std::move(args)), fn);
    }
    // Find the common strong type, then convert everything to it.
    std::optional<ScalarType> t;
    for (auto& a : args) {
        if (is_untyped(a)) continue;
        if (!t) {
            t = a.type();
        } else {
            auto c = common_type(*t, a.type());
            t = *c;
        }
    }
    for (auto& a : args)
        if (is_untyped(a) && is_float(a.type()) && is_int(*t)) t = ScalarType::Float64;
    if (is_int(*t) && !keeps_int) t = ScalarType::Float64; // sqrt(int) is double, as in C++
    for (auto& a : args) {
        if (is_untyped(a))
            a = adopt(a, *t);
        else if (a.type() != *t)
            a = CastNode::make(*t, a);
    }
    return within_depth(CallNode::make(fn, std::move(args)), fn);
}

} // namespace

Expr operator+(const Expr& a, const Expr& b) { return arithmetic(BinaryOp::Add, a, b); }
Expr operator-(const Expr& a, const Expr& b) { return arithmetic(BinaryOp::Sub, a, b); }
Expr operator*(const Expr& a, const Expr& b) { return arithmetic(BinaryOp::Mul, a, b); }
Expr operator/(const Expr& a, const Expr& b) { return arithmetic(BinaryOp::Div, a, b); }
Expr operator%(const Expr& a, const Expr& b) { return arithmetic(BinaryOp::Mod, a, b); }
Expr min(const Expr& a, const Expr& b) { return arithmetic(BinaryOp::Min, a, b); }
Expr max(const Expr& a, const Expr& b) { return arithmetic(BinaryOp::Max, a, b); }

Expr operator-(const Expr& a) {
    if (!a.defined() || a.type() == ScalarType::Bool)
        throw UserError(fmt::format("unary '-' needs a number, found `{}`; use '!' to negate a "
                                    "condition", to_string(a)));
    if (is_weak_constant(a)) {
        auto c = a.as<ConstNode>();
        return is_float(a.type()) ? ConstNode::make(a.type(), -c->float_value, true)
                                  : ConstNode::make_int(a.type(), -c->int_value, true);
    }
    return within_depth(UnaryNode::make(UnaryOp::Neg, a), "unary '-'");
}

Expr operator==(const Expr& a, const Expr& b) { return comparison(BinaryOp::Eq, a, b); }
Expr operator!=(const Expr& a, const Expr& b) { return comparison(BinaryOp::Ne, a, b); }
Expr operator<(const Expr& a, const Expr& b) { return comparison(BinaryOp::Lt, a, b); }
Expr operator<=(const Expr& a, const Expr& b) { return comparison(BinaryOp::Le, a, b); }
Expr operator>(const Expr& a, const Expr& b) { return comparison(BinaryOp::Gt, a, b); }
Expr operator>=(const Expr& a, const Expr& b) { return comparison(BinaryOp::Ge, a, b); }
Expr operator&&(const Expr& a, const Expr& b) { return logical(BinaryOp::And, a, b); }
Expr operator||(const Expr& a, const Expr& b) { return logical(BinaryOp::Or, a, b); }

Expr operator!(const Expr& a) {
    if (!a.defined() || a.type() != ScalarType::Bool)
        throw UserError(fmt::format("'!' needs a boolean (a comparison), found `{}`; compare it "
                                    "first, e.g. `!(v > 0)`", to_string(a)));
    return within_depth(UnaryNode::make(UnaryOp::Not, a), "'!'");
}

namespace {
Expr sum_of(const std::vector<Expr>& terms, std::size_t begin, std::size_t end) {
    if (end - begin == 1) return terms[begin];
    const std::size_t mid = begin + (end - begin) / 2;
    return sum_of(terms, begin, mid) + sum_of(terms, mid, end);
}
} // namespace

Expr sum(const std::vector<Expr>& terms) { return terms.empty() ? Expr(0) : sum_of(terms, 0, terms.size()); }

Expr select(const Expr& cond, const Expr& if_true, const Expr& if_false) {
    if (!cond.defined() || cond.type() != ScalarType::Bool)
        throw UserError(fmt::format("select() needs a boolean condition, found `{}` of type {}; "
                                    "write a comparison such as `v > 0`", to_string(cond),
                                    cond.defined() ? type_name(cond.type()) : "undefined"));
    auto [t, f] = unify("select", if_true, if_false);
    // Two untyped floats give an untyped select, which adopts what it meets like its branches
    // would; two plain integers give an int64 select (integer compounds are never untyped).
    return within_depth(SelectNode::make(cond, t, f), "select()");
}

Expr sqrt(const Expr& a) { return math(MathFn::Sqrt, {a}); }
Expr rsqrt(const Expr& a) { return math(MathFn::Rsqrt, {a}); }
Expr exp(const Expr& a) { return math(MathFn::Exp, {a}); }
Expr log(const Expr& a) { return math(MathFn::Log, {a}); }
Expr pow(const Expr& base, const Expr& exponent) { return math(MathFn::Pow, {base, exponent}); }
Expr sin(const Expr& a) { return math(MathFn::Sin, {a}); }
Expr cos(const Expr& a) { return math(MathFn::Cos, {a}); }
Expr tan(const Expr& a) { return math(MathFn::Tan, {a}); }
Expr tanh(const Expr& a) { return math(MathFn::Tanh, {a}); }
Expr erf(const Expr& a) { return math(MathFn::Erf, {a}); }
Expr abs(const Expr& a) { return math(MathFn::Abs, {a}); }
Expr floor(const Expr& a) { return math(MathFn::Floor, {a}); }
Expr ceil(const Expr& a) { return math(MathFn::Ceil, {a}); }
Expr fma(const Expr& a, const Expr& b, const Expr& c) { return math(MathFn::Fma, {a, b, c}); }

Expr cast(ScalarType type, const Expr& value) {
    if (!value.defined()) throw UserError("cast() got an undefined expression");
    if (type == ScalarType::Bool && value.type() != ScalarType::Bool)
        throw UserError(fmt::format("cannot cast `{}` to bool; compare it instead, e.g. `v != 0`",
                                    to_string(value)));
    if (value.type() == ScalarType::Bool && type != ScalarType::Bool)
        throw UserError(fmt::format("cannot cast the boolean `{}` to {}; use select(cond, 1, 0)",
                                    to_string(value), type_name(type)));
    // A typed integer constant cast to another integer type wraps, as C++ and the same cast of
    // a value computed at run time do: the cast says so. Only plain numbers, and conversions the
    // target would not keep, are checked.
    const bool wraps = is_int(type) && is_int(value.type()) && !is_weak_constant(value);
    if (auto c = value.as<ConstNode>(); c && type != value.type() && !wraps) {
        // A constant that the conversion would not keep: 1e300 to float32 becomes inf, 3e9 to
        // int32 is undefined. (inf and NaN themselves convert to float32.)
        if (std::string misfit = constant_misfit(*c, type); !misfit.empty())
            throw UserError(fmt::format("cast({}, {}): the constant {} {}", type_name(type),
                                        to_string(value), to_string(value), misfit));
    }
    if (type == ScalarType::Float16 || type == ScalarType::BFloat16) {
        // A 16-bit float is only stored: the cast rounds to its precision and range, and the
        // value widens back to float32 for what follows (a store into a float16 field keeps it).
        Expr v = is_weak_constant(value) || is_untyped(value) ? cast(ScalarType::Float32, value) : value;
        return within_depth(CastNode::make(ScalarType::Float32, CastNode::make(type, v)), "cast()");
    }
    if (is_weak_constant(value)) return adopt(value, type);
    // An untyped value cast to a float type is of that type from the start, as a plain number
    // is (the cast decides an untyped parameter's type); cast to an integer it is converted once
    // create_kernel has typed it.
    if (is_untyped(value))
        return within_depth(is_float(type) ? adopt(value, type) : CastNode::make(type, value), "cast()");
    if (value.type() == type) return value;
    return within_depth(CastNode::make(type, value), "cast()");
}

Expr constant(ScalarType type, double value) {
    if (type == ScalarType::Bool) {
        if (value != 0 && value != 1) // also nan
            throw UserError(fmt::format("constant(bool, {}): a bool constant is 0 (false) or 1 "
                                        "(true); for a condition on a number, compare it, e.g. "
                                        "v != 0", value));
        return ConstNode::make_bool(value != 0);
    }
    if (is_int(type)) {
        // -2^63 <= value < 2^63 (2^63 itself, the double nearest INT64_MAX, does not fit).
        const bool i32 = type == ScalarType::Int32;
        const double lo = i32 ? -2147483648.0 : -9223372036854775808.0;
        const double hi = i32 ? 2147483648.0 : 9223372036854775808.0;
        if (!(value >= lo && value < hi)) // also nan
            throw UserError(fmt::format(
                "constant({}, {}): the value does not fit {} ({}..{}); use a wider type, or "
                "constant<std::int64_t>(v) for an exact 64-bit integer", type_name(type), value,
                type_name(type), i32 ? "-2147483648" : "-9223372036854775808",
                i32 ? "2147483647" : "9223372036854775807"));
        // Silently dropping the fraction would change the value the user wrote.
        if (value != std::trunc(value))
            throw UserError(fmt::format(
                "constant({}, {}): the value is not a whole number; an integer constant would "
                "drop its fraction. Pass a whole number (round it first), or use a "
                "floating-point type", type_name(type), value));
    }
    if (type == ScalarType::Float32 && std::isfinite(value) &&
        std::isinf(static_cast<float>(value)))
        throw UserError(fmt::format(
            "constant(float32, {}): the value does not fit float32, whose largest finite value "
            "is {}, so it would become inf. Use constant<double>(v) (float64), or a value within "
            "float32's range; std::numeric_limits<float>::infinity() is accepted where inf is "
            "meant",
            value, std::numeric_limits<float>::max()));
    if (type == ScalarType::Float16 || type == ScalarType::BFloat16) {
        // A 16-bit constant is its rounded value, computed with in float32 like a field's.
        const double rounded = round_to_type(value, type);
        if (std::isfinite(value) && std::isinf(rounded))
            throw UserError(fmt::format("constant({}, {}): the value does not fit {}, whose largest "
                                        "finite value is {}, so it would become inf; use float32",
                                        type_name(type), value, type_name(type),
                                        type == ScalarType::Float16 ? "65504" : "3.39e38"));
        return ConstNode::make(ScalarType::Float32, rounded);
    }
    return ConstNode::make(type, value);
}

namespace {
void check_scalar_type(ScalarType type, const std::string& what, const std::string& name,
                       bool bool_ok, bool half_ok) {
    const bool half = type == ScalarType::Float16 || type == ScalarType::BFloat16;
    if ((type == ScalarType::Bool && !bool_ok) || (half && !half_ok))
        throw UserError(fmt::format("the {} '{}' has type {}, which is not supported here; use "
                                    "float32, float64, int32 or int64{}",
                                    what, name, type_name(type),
                                    half ? " (16-bit floats are storage types: fields and "
                                           "parameters hold them, expressions compute in float32)"
                                         : ""));
}
} // namespace

Expr param(const std::string& name, ScalarType type) {
    check_identifier(name, "scalar parameter");
    check_scalar_type(type, "scalar parameter", name, false, true);
    Expr p = VarNode::make(type, name, VarRole::Parameter);
    // A 16-bit parameter is passed in 16 bits and read in float32, as a field is.
    if (type == ScalarType::Float16 || type == ScalarType::BFloat16) return CastNode::make(ScalarType::Float32, p);
    return p;
}

Expr param(const std::string& name) {
    check_identifier(name, "scalar parameter");
    return weak_variable(name, VarRole::Parameter);
}

Expr temp(const std::string& name, ScalarType type) {
    check_identifier(name, "temporary");
    check_scalar_type(type, "temporary", name, true, false);
    return VarNode::make(type, name, VarRole::Temporary);
}

Expr ctr(int axis) {
    if (axis < 0 || axis > 3)
        throw UserError(fmt::format("ctr({}): fields have 1 to 4 spatial axes, so the counter "
                                    "axis must be 0, 1, 2 or 3", axis));
    return CounterNode::make(axis);
}

void check_identifier(const std::string& name, const std::string& what) {
    static const std::set<std::string> reserved = {
        "auto", "bool", "break", "case", "char", "const", "continue", "default", "do", "double",
        "else", "enum", "extern", "float", "for", "goto", "if", "inline", "int", "long",
        "register", "restrict", "return", "short", "signed", "sizeof", "static", "struct",
        "switch", "typedef", "union", "unsigned", "void", "volatile", "while", "class",
        "namespace", "template", "this", "new", "delete", "true", "false", "nullptr", "operator",
        "private", "public", "protected", "virtual", "using", "typename", "threadIdx", "blockIdx",
        "blockDim", "gridDim", "warpSize"};
    bool ok = !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
    for (char c : name) ok &= std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    if (!ok)
        throw UserError(fmt::format("invalid {} name '{}': names must be C identifiers (a letter or "
                                    "'_', then letters, digits or '_')", what, name));
    if (reserved.count(name))
        throw UserError(fmt::format("invalid {} name '{}': it is a C++/CUDA reserved word; pick "
                                    "another name, e.g. '{}_'", what, name, name));
    if (name.rfind("__", 0) == 0)
        throw UserError(fmt::format("invalid {} name '{}': names starting with '__' are reserved "
                                    "for the compiler", what, name));
}

} // namespace loom
