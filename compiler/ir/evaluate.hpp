// A small interpreter for scalar IR expressions.
//
// The runtime uses it to evaluate launch-grid expressions over the kernel's size and scalar
// arguments; tests use it to check that passes keep values unchanged.
#pragma once

#include "compiler/ir/ir.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <unordered_map>

namespace loom::ir {

/// A scalar value: ints and bools in `i`, floats in `f`, tagged with the IR type.
struct Value {
    ScalarType type = ScalarType::Int64;
    std::int64_t i = 0;
    double f = 0.0;
    static Value of_int(ScalarType t, std::int64_t v);
    static Value of_float(ScalarType t, double v);
    static Value of_bool(bool v) { return of_int(ScalarType::Bool, v ? 1 : 0); }
    double as_double() const { return is_float(type) ? f : double(i); }
};

/// Values of free variables, keyed by the variable node (variables are identified by object).
using Bindings = std::unordered_map<const ir::VarNode*, Value>;

/// Evaluates `e` with C semantics on its types: int32 arithmetic wraps like the GPU does, float32
/// rounds each result to float. `loads` answers Load and FieldAccess nodes; without it they throw.
/// Throws InternalError on an unbound variable, and UserError on integer division by zero.
Value evaluate(const Expr& e, const Bindings& vars,
               const std::function<Value(const Expr&)>& loads = nullptr);

/// What a message about an integer division (`op` Div) or modulo (Mod) by the constant 0 says
/// after naming it: why it is refused and how to fix it. The frontend (a literal zero) and
/// analyze (a divisor that folds to zero) share it.
std::string integer_division_by_zero_advice(BinaryOp op);

} // namespace loom::ir
