// The tests' own reference evaluator: a tiny typed AST (RefAst) and an evaluator (RefEvaluator)
// in plain C++, independent of loom's compiler, interpreter and runtime. The random stencils
// (random_stencil.hpp), the expression fuzzer (random_expression.hpp) and the simplify property
// test build their expressions twice, as DSL and as RefAst, and compare loom's results with this.
//
// Semantics, per type:
// - float32 operations are computed in float (one rounding per operation, as the generated code
//   does without contraction), float64 in double; math functions with the host's libm.
// - Every float value carries `err`, a first-order bound on how far any evaluation with one
//   rounding per operation (or fewer: a fused multiply-add skips one) may be from the exact
//   value, each operation charged the epsilon of its own type (CUDA's few-ulp math functions a
//   few epsilons). Two such evaluations differ by at most twice that, which is what the
//   comparison allows: this is how FMA contraction on the host and in CUDA is tolerated.
// - Where an outcome depends on rounding (a comparison within rounding of a tie, floor, ceil or a
//   float-to-int conversion within rounding of a step), the value has several candidates and any
//   of them is right (RCands).
// - A value is `wild` where the first-order bound cannot say anything: a float division by a
//   divisor that may be zero (so also the sign of zero), a root or logarithm of an argument within
//   rounding of zero, an overflow to infinity, tan near a pole, fmod near a step. Any result is
//   accepted for it; the fuzzers count these and keep them rare.
// - Integer arithmetic wraps (two's complement), and a value whose computation overflowed a
//   signed type is flagged `overflow`: C leaves that undefined, so the comparison with generated
//   code skips it; loom's interpreter wraps, so the comparison with it does not.
// - Integer division or modulo by zero, INT_MIN / -1, a float-to-int conversion out of range and
//   an absolute read outside its array throw RefUndefined: the generators guard against them by
//   construction, and a shrinking step that loses a guard is dropped.
#pragma once

#include <loom/loom.hpp>

#include <cfloat>
#include <cstdint>
#include <limits>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace loom::stencil_test {

using Index = std::vector<std::int64_t>;

enum class RType : std::uint8_t { Bool, I32, I64, F32, F64 };

inline bool rt_is_float(RType t) {
    return t == RType::F32 || t == RType::F64;
}
inline bool rt_is_int(RType t) {
    return t == RType::I32 || t == RType::I64;
}
const char* rt_name(RType t);
ScalarType to_scalar_type(RType t);
/// The reference type of a loom scalar type; throws for float16/bfloat16.
RType to_rtype(ScalarType t);
/// The wider of two float types (float64 beats float32), as the DSL promotes.
inline RType wider(RType a, RType b) {
    return a == RType::F64 || b == RType::F64 ? RType::F64 : a;
}
/// The type the DSL gives two strong operands (float beats int, wider beats narrower).
RType common_rtype(RType a, RType b);
/// Twice the unit roundoff: FLT_EPSILON or DBL_EPSILON.
inline double rt_epsilon(RType t) {
    return t == RType::F32 ? FLT_EPSILON : DBL_EPSILON;
}
/// The smallest subnormal of a float type: the absolute rounding error near zero.
inline double rt_tiny(RType t) {
    return t == RType::F32 ? static_cast<double>(std::numeric_limits<float>::denorm_min())
                           : std::numeric_limits<double>::denorm_min();
}

enum class ROp : std::uint8_t {
    Const,
    Var,
    Read,
    Counter,
    ReadAt, // leaves (ReadAt: indices)
    Neg,
    Not,
    Abs,
    Sqrt,
    Rsqrt,
    Floor,
    Ceil,
    Exp,
    Log,
    Sin,
    Cos,
    Tan,
    Tanh,
    Erf, // unary
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Min,
    Max,
    Pow, // arithmetic: one operand type, same result
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Or, // comparisons and logic: bool result
    Fma,
    Select,
    Cast
};

const char* rop_name(ROp op);
inline bool rop_is_unary(ROp op) {
    return op >= ROp::Neg && op <= ROp::Erf;
}
inline bool rop_is_arith(ROp op) {
    return op >= ROp::Add && op <= ROp::Pow;
}
inline bool rop_is_compare(ROp op) {
    return op >= ROp::Lt && op <= ROp::Ne;
}
inline bool rop_is_logic(ROp op) {
    return op == ROp::And || op == ROp::Or;
}
inline bool rop_is_binary(ROp op) {
    return rop_is_arith(op) || rop_is_compare(op) || rop_is_logic(op);
}

struct RNode {
    ROp op = ROp::Const;
    RType type = RType::F64;
    double f = 0.0;             ///< Const of a float type
    std::int64_t i = 0;         ///< Const of an int or bool type
    int a = -1, b = -1, c = -1; ///< operands; ReadAt: the index of each spatial axis
    int slot = -1;              ///< Var: the variable; Read, ReadAt: the field; Counter: the axis
    std::vector<int> offset;    ///< Read: one per spatial axis
    int component = -1;         ///< Read/ReadAt of a vector field
    bool weak = false;          ///< Const: written as a plain C++ number, typed by its partner
    bool int_spelling = false;  ///< weak Const of a float type written as an integer (3, not 3.0)
    bool implicit = false;      ///< Cast: inserted by the DSL's promotion rules, not written
};

/// A DAG of reference nodes; operands are indices into `nodes`. The builders check operand types
/// (one type for arithmetic, bool conditions) so a mirror that forgets a conversion fails loudly.
class RefAst {
public:
    std::vector<RNode> nodes;

    const RNode& operator[](int n) const { return nodes.at(static_cast<std::size_t>(n)); }
    RType type(int n) const { return (*this)[n].type; }

    int constant(RType t, double v);
    int const_int(RType t, std::int64_t v);
    int var(RType t, int slot);
    int read(RType t, int field, std::vector<int> offset, int component);
    /// A read at absolute coordinates: `indices` are integer nodes, one per spatial axis (1-3).
    int read_at(RType t, int field, const std::vector<int>& indices, int component);
    int counter(int axis);
    int unary(ROp op, int a);
    int binary(ROp op, int a, int b);
    int fma(int a, int b, int c);
    int select(int cond, int if_true, int if_false);
    /// A conversion; none when `a` has type `t` already.
    int cast(RType t, int a, bool implicit = false);
    /// `n`, or a copy that keeps its type wherever it is used: a weak constant made typed, an
    /// implicit conversion made explicit (both depend on a partner a new place may lack).
    int standalone(int n);
    /// The tree below `root` with the nodes in `with` replaced (key by value): new nodes for
    /// every ancestor of a replaced node, the old ones where nothing below changed. `memo`
    /// carries the rebuilt nodes across calls (several roots sharing subtrees).
    int replaced(int root, const std::map<int, int>& with, std::map<int, int>& memo);
    /// A copy of node `n` with other operands (the shrinker's rebuild step).
    int with_operands(int n, int a, int b, int c);
    int add(RNode n);

    /// The operands of node `n`, in order.
    std::vector<int> operands(int n) const;
    /// Operations in the tree below `n`, shared nodes counted at every use (capped at 2^20).
    std::int64_t operations(int n) const;
    /// Infix text of the tree below `n`, for messages; `field_names` name the Read nodes.
    std::string to_string(int n, const std::vector<std::string>& field_names = {}) const;
};

/// A value: ints and bools in `i`, floats in `f` with `err` (see the file comment), and the
/// flags `wild` (anything is right) and `overflow` (a signed integer overflowed on the way).
struct RVal {
    double f = 0.0;
    std::int64_t i = 0;
    double err = 0.0;
    bool wild = false;
    bool overflow = false;
};

/// The values an expression may rightly have: one, or a few where rounding decides (then the
/// generated code may take either). More than fit collapse into one wild value.
struct RCands {
    static constexpr int kMax = 8;
    int n = 0;
    RVal v[kMax];
    void add(RType t, const RVal& x);
    bool wild() const;
    bool overflow() const;
};

/// Thrown where C leaves the result undefined (integer division by zero, INT_MIN / -1, float
/// to int out of range, an absolute read outside its array): the caller skips that evaluation.
struct RefUndefined : std::runtime_error {
    using std::runtime_error::runtime_error;
};

/// One array a kernel sees: `shape` (spatial axes, then components) with element `strides`,
/// starting at element `offset` of a flat buffer: `buffer` for float fields, `ints` for integer
/// fields (exact beyond 2^53).
struct RefArray {
    Shape shape;
    Shape strides;
    std::int64_t offset = 0;
    const std::vector<double>* buffer = nullptr;
    const std::vector<std::int64_t>* ints = nullptr;
};

/// Evaluates nodes of a RefAst for one cell at a time. `factor` scales the rounding tolerance:
/// comparisons of floats closer than factor * (their error bounds) count as ties and yield both
/// outcomes, likewise floor, ceil and float-to-int conversions near a step, and the domain checks
/// that make values wild (0: exact evaluation, nothing is ever a tie). Values are memoized per
/// cell, so shared nodes (temporaries) are computed once.
class RefEvaluator {
public:
    RefEvaluator(const RefAst& ast, double factor) : ast_(ast), factor_(factor) {}

    std::vector<RefArray> arrays; ///< by field index (Read and ReadAt nodes)
    std::vector<RVal> vars;       ///< by slot (Var nodes)
    Index cell;                   ///< the spatial counters (Counter nodes, Read positions)

    /// Forget the memoized values (call after changing cell or vars).
    void next();
    const RCands& eval(int n);
    /// How far a result may be from `v` (factor * err, at least the smallest double).
    double tolerance(const RVal& v) const {
        return factor_ * v.err + std::numeric_limits<double>::min();
    }
    double factor() const { return factor_; }

private:
    RCands compute(int n);
    RVal read(const RNode& x, const Index& at) const;
    RCands unary(const RNode& x, const RVal& a) const;
    /// `exact`: a comparison whose sides are one computation (no tie).
    RCands binary(const RNode& x, RType t, const RVal& a, const RVal& b, bool exact) const;
    RCands cast(RType to, RType from, const RVal& a) const;
    /// factor * err: the spread of a value that domain and step checks look at.
    double spread(const RVal& v) const { return factor_ * v.err; }

    const RefAst& ast_;
    double factor_;
    std::vector<unsigned> seen_;
    std::vector<RCands> memo_;
    unsigned stamp_ = 1;
};

/// Whether `got` is one of the reference candidates: wild ones take anything, NaN matches NaN,
/// integers and infinities exactly, other floats within factor * err (+0 equals -0).
bool matches_value(RType t, const RCands& want, double got_f, std::int64_t got_i, double factor);

} // namespace loom::stencil_test
