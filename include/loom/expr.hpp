// The expression half of the DSL: operators, math functions, casts, constants, scalar parameters,
// temporaries and spatial counters. Everything builds typed IR (loom::Expr) directly.
//
// Typing follows C with one change: plain C++ numbers are "weak" and take the type of the other
// operand, so `0.25 * f32_field` stays float32 (as with numpy scalars). Untyped parameters,
// `param("omega")`, behave the same way until create_kernel gives them one type (see
// frontend/untyped.hpp and KernelConfig::default_type). Mixing strong types promotes (float beats
// int, wider beats narrower); narrowing is never implicit.
#pragma once

#include <loom/detail/ir_handle.hpp>
#include <loom/types.hpp>

#include <string>
#include <type_traits>
#include <vector>

namespace loom {

// Arithmetic, comparison and logic. Each checks its operand types and throws UserError if they
// cannot be combined, naming the operator and the types.
Expr operator+(const Expr& a, const Expr& b);
Expr operator-(const Expr& a, const Expr& b);
Expr operator*(const Expr& a, const Expr& b);
Expr operator/(const Expr& a, const Expr& b);
Expr operator%(const Expr& a, const Expr& b);
Expr operator-(const Expr& a);
Expr operator==(const Expr& a, const Expr& b);
Expr operator!=(const Expr& a, const Expr& b);
Expr operator<(const Expr& a, const Expr& b);
Expr operator<=(const Expr& a, const Expr& b);
Expr operator>(const Expr& a, const Expr& b);
Expr operator>=(const Expr& a, const Expr& b);
Expr operator&&(const Expr& a, const Expr& b);
Expr operator||(const Expr& a, const Expr& b);
Expr operator!(const Expr& a);

/// The sum of `terms`, added as a balanced tree, ((t0 + t1) + (t2 + t3)) + ...: its depth grows
/// with log2 of the count, where a loop `s = s + t` nests one level per term and stops at
/// loom::max_expression_depth. Floating-point addition is not associative, so the result may
/// differ from the loop's in the last bits. An empty list is the plain number 0.
Expr sum(const std::vector<Expr>& terms);

/// `cond ? if_true : if_false`, evaluated per element; both branches are computed.
Expr select(const Expr& cond, const Expr& if_true, const Expr& if_false);

// Math functions. Integer arguments of the float functions convert to float64, as in C++.
Expr sqrt(const Expr& a);
Expr rsqrt(const Expr& a);
Expr exp(const Expr& a);
Expr log(const Expr& a);
Expr pow(const Expr& base, const Expr& exponent);
Expr sin(const Expr& a);
Expr cos(const Expr& a);
Expr tan(const Expr& a);
Expr tanh(const Expr& a);
Expr erf(const Expr& a);
Expr abs(const Expr& a);
Expr floor(const Expr& a);
Expr ceil(const Expr& a);
Expr min(const Expr& a, const Expr& b);
Expr max(const Expr& a, const Expr& b);
Expr fma(const Expr& a, const Expr& b, const Expr& c);

/// An explicit conversion (C semantics: float to int truncates toward zero).
Expr cast(ScalarType type, const Expr& value);
template <typename T>
Expr cast(const Expr& value) { return cast(scalar_type_of<T>(), value); }

/// A strongly typed constant: `constant<float>(0.1)` is float32 0.1f whatever it meets;
/// `constant(0.1)` takes the argument's type. The value must fit the type (a UserError
/// otherwise): an integer type's range, and for float32 its finite range, so that 1e300 does not
/// become inf silently (inf and NaN themselves are fine). The value is checked before it is
/// converted: constant<float>(1e300) is an error, not inf. constant<std::int64_t>(v) keeps every
/// bit of v (INT64_MAX included), where `constant(ScalarType::Int64, v)` goes through double.
Expr constant(ScalarType type, double value);
template <typename T = void, typename V>
Expr constant(V value) {
    using Type = std::conditional_t<std::is_void_v<T>, V, T>;
    if constexpr (std::is_integral_v<Type> && !std::is_same_v<Type, bool>)
        return cast(scalar_type_of<Type>(), Expr(value)); // a plain number, exact, made strong
    else
        return constant(scalar_type_of<Type>(), static_cast<double>(value));
}

/// A scalar kernel argument, passed by name or position at launch.
Expr param(const std::string& name, ScalarType type);
template <typename T>
Expr param(const std::string& name) { return param(name, scalar_type_of<T>()); }
/// An untyped scalar argument: `param("omega")`, not `param<float>("omega")`. Like a plain
/// floating-point number it takes the type of what it meets (`omega * f32_field` is float32;
/// next to an integer it is float64). create_kernel gives it one type: the one all its typed uses
/// agree on (including the field or temporary it is stored into), else KernelConfig::default_type;
/// uses that disagree are a UserError. Its nominal type() is float64 until then. Floating-point
/// only: give integer parameters (slice bounds, counts) a type with param<T>.
Expr param(const std::string& name);

/// A named temporary (subexpression), defined by assigning it before it is read.
Expr temp(const std::string& name, ScalarType type);
template <typename T>
Expr temp(const std::string& name) { return temp(name, scalar_type_of<T>()); }

/// The spatial counter of array axis `axis` (int64): the cell index a thread works on.
Expr ctr(int axis);

/// The spatial counters by name, as in pystencils: x is axis 0, y axis 1, z axis 2.
/// `using namespace loom::counters;` brings them into scope.
namespace counters {
inline const Expr x = ctr(0);
inline const Expr y = ctr(1);
inline const Expr z = ctr(2);
} // namespace counters

/// Checks that `name` is a C identifier loom can print; throws UserError naming `what` otherwise.
void check_identifier(const std::string& name, const std::string& what);

} // namespace loom
