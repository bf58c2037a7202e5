// Random expressions for differential fuzzing, batched many to a kernel.
//
//   StencilCase c = generate_expression_case(seed, {.expressions = 100});
//   // c.outputs[j] is expression j: component c.outputs[j].component of the vector field
//   // o_<type> at the center; c.assignments holds the DSL, c.ast the reference of each.
//
// One case is one kernel (the StencilCase machinery of random_stencil.hpp: shapes, layouts,
// padded sub-boxes, ghost layers or slices, buffers, checks). It has, for each of int32, int64,
// float32 and float64, an input field a_<t>, sometimes a vector field v_<t> and a buffer w_<t>
// read at absolute positions, a scalar parameter p_<t>, and an output vector field o_<t> with one
// component per expression stored there. Expressions draw every DSL operator (+ - * / %, unary
// minus, comparisons, && || !, select), casts between all types (and the DSL's implicit
// promotions, weak literals included, int64 literals beyond 2^31, stores that widen), every math
// function loom has (sqrt, rsqrt, exp, log, pow, sin, cos, tan, tanh, erf, abs, floor, ceil, fma,
// min, max), reads at stencil offsets, vector components, gathers through computed indices,
// counters, parameters, typed constants and named subexpressions.
//
// The RefAst is the source of truth: the DSL is built from it (DslBuilder), so a shrunk
// expression can be rebuilt and printed as DSL source.
//
// Guards against undefined behaviour, all in one section of random_expression.cpp ("guards"),
// built from ordinary DSL operators so that loom compiles them like any other code:
//   integer n / d and n % d:  max(n, -INT_MAX) / select(d == 0, k, d)     (no x/0, no INT_MIN/-1)
//   float x to an integer:    cast<I>(select(abs(x) < L, x, 0.5))         (L = 1e9 or 1e18; NaN
//   too) absolute read index i:    w.at({min(max(i, 0), n - 1)})               (inside the buffer)
// The integer operands of these guards (n, d, i) are overflow-free by construction (leaves, min,
// max, select, casts, guarded divisions): C lets the compiler assume that signed arithmetic never
// overflows, so a guard of an overflowing operand may be optimized away (the CPU target crashed
// on such a clamped index until the generator kept its indices overflow-free).
// Left unguarded on purpose, the reference knowing what to expect: float division by zero, roots
// and logarithms of negatives, overflow to infinity, NaN (see reference_evaluator.hpp), and
// signed integer overflow elsewhere (flagged; loom's interpreter wraps), which for generated
// code ExpressionOptions::avoid_overflow removes once the data is drawn.
#pragma once

#include "tests/support/random_stencil.hpp"

#include <loom/loom.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace loom::stencil_test {

struct ExpressionOptions {
    int expressions = 100; ///< per kernel: one output component each
    int max_depth = 4;     ///< of each expression tree (leaves at depth 0)
    /// Slices whose start follows an earlier counter (CUDA needs a manual grid for them).
    bool counter_bounds = true;
    int max_cells = 40; ///< about the most cells a kernel iterates
    /// Rewrite every signed operation that overflows on this case's data so that none does (an
    /// int32 one computed in int64 and narrowed, an int64 one on halved operands). For generated
    /// code, where C leaves overflow undefined: g++ let `2147483647 * (int32) y` in one
    /// expression remove the clamp of another's gather index, which then read the wrong element.
    /// loom's interpreter wraps, so the passes' fuzzer keeps the overflows.
    bool avoid_overflow = false;
};

/// The batched expression kernel of `seed`: the same seed and options give the same case.
StencilCase generate_expression_case(std::uint64_t seed, const ExpressionOptions& options = {});

/// Builds the DSL of reference nodes of a case (fields, parameters and temporaries by slot), and
/// prints them as DSL source for reproducers. Checks that the DSL types every node as the
/// reference does (a mirror that drifts from loom's typing rules fails loudly).
class DslBuilder {
public:
    explicit DslBuilder(const StencilCase& c) : c_(c) {}
    /// The DSL expression of `node`.
    Expr build(int node);
    /// Makes `node` stand for `e` (a temporary) in what is built later.
    void bind(int node, const Expr& e) { memo_[node] = e; }
    /// C++ source that builds `node` with loom's DSL, given the case's fields and parameters
    /// under their own names (a_f32, p_i64, ...) and temporaries under theirs; `define`: the
    /// value of a temporary's node rather than its name.
    std::string text(int node, bool define = false) const;

private:
    Expr make(int node);
    const StencilCase& c_;
    std::map<int, Expr> memo_;
};

/// Rebuilds c.assignments from c.outputs (and the temporaries they reach), through DslBuilder.
void rebuild_assignments(StencilCase& c);

/// The nodes of the tree below `root`, each once, in preorder.
std::vector<int> tree_nodes(const RefAst& ast, int root);

} // namespace loom::stencil_test
