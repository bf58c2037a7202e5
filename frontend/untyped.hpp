// Untyped values: what the DSL builds before create_kernel knows the types.
//
// A plain C++ number is a weak constant; `param("omega")` and the temporary of a subexpression made
// of plain floating-point numbers are weak variables. Negation, arithmetic, math functions and
// selects built only from such values are untyped too when they are floating-point (an untyped
// compound, nominally float64). When an untyped value meets a typed one it adopts that type
// (`adopt`): constants are converted, each weak variable is wrapped in Cast(type, var), which
// records "used as type" for create_kernel (frontend/resolve_types.hpp).
//
// Integer compounds are never untyped: `select(c, 7, 8) / 2` divides as int64, and pushing a
// float type into it would change the division. Plain integers fold as they meet (7 / 2 is 3).
#pragma once

#include "compiler/ir/ir.hpp"

#include <string>

namespace loom {

/// A weak constant (a plain C++ number).
bool is_weak_constant(const Expr& e);
/// A weak variable: an untyped parameter or temporary.
bool is_weak_variable(const Expr& e);
/// A weak constant, a weak variable, or a floating-point compound of untyped values.
bool is_untyped(const Expr& e);

/// The untyped value `e` as a value of type `t` (float32 or float64, or an integer type for a
/// weak constant): constants converted (rounded to `t`), weak variables wrapped in Cast(t, var),
/// compounds rebuilt with type `t`. Numerically this is the value computed in `t` throughout.
/// A plain number that does not fit `t` is a UserError (constant_misfit).
Expr adopt(const Expr& e, ScalarType t);

/// Empty when the constant `c` converted to `to` keeps its value; otherwise the end of a
/// UserError message, "does not fit float32: <why>. <fix>", for a finite float beyond float32's
/// range (it would become inf; inf and NaN themselves convert), a float outside an integer
/// type's range or a NaN into an integer (undefined in C++), or an integer outside int32.
std::string constant_misfit(const ir::ConstNode& c, ScalarType to);

/// A weak variable named `name`: an untyped parameter (role Parameter) or temporary (Temporary).
/// Its nominal type is float64 until create_kernel types it.
Expr weak_variable(const std::string& name, ir::VarRole role);

} // namespace loom
