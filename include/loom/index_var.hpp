// Index variables and reductions: `sum(k, x(k))` adds element k of x's index axis for every k,
// and `y(k) = x(k) - m` writes every element of y's index axis, both as loops in the kernel
// (not unrolled sums).
//
//   IndexVar k("k", 768);                          // k runs over [0, 768)
//   Expr m = mean(k, x(k));                         // sum, max, min, mean
//   Assignment{y(k), (x(k) - m) * w.at({k})};       // one loop writes y(0) ... y(767)
#pragma once

#include <loom/expr.hpp>

#include <cstdint>
#include <string>

namespace loom {

/// An integer (int32) loop variable over [0, extent). It indexes components, `x(k)`, and absolute
/// reads, `w.at({k})`, and is bound by a reduction over it or by an assignment whose left side
/// indexes with it. Variables are identified by object: two IndexVars named "k" are different.
class IndexVar {
public:
    /// Throws UserError unless `name` is an identifier and 1 <= extent <= 2^31 - 1.
    IndexVar(const std::string& name, std::int64_t extent);
    const std::string& name() const { return name_; }
    std::int64_t extent() const { return extent_; }
    const Expr& expr() const { return var_; }
    operator Expr() const { return var_; } // NOLINT(google-explicit-constructor): k is a value

private:
    std::string name_;
    std::int64_t extent_;
    Expr var_;
};

/// Reductions of `body` over k in [0, k.extent()), computed in a loop in ascending k. `body` is a
/// typed number (a field read, or arithmetic on one; not a plain number). sum, max and min keep
/// the body's type; mean divides the sum by the extent and needs a floating-point body. max and
/// min of floats follow fmax/fmin: a NaN term is skipped.
Expr sum(const IndexVar& k, const Expr& body);
Expr max(const IndexVar& k, const Expr& body);
Expr min(const IndexVar& k, const Expr& body);
Expr mean(const IndexVar& k, const Expr& body);

} // namespace loom
