// create_kernel's typing step: gives every untyped value its type before lower() runs, so the
// compiler only ever sees typed variables (see untyped.hpp for what is untyped).
//
// - An untyped parameter, `param("omega")`, gets the one type all its typed uses agree on: the
//   types it adopted from its partners and the float field or temporary it is stored into. With
//   no such use it gets KernelConfig::default_type. Uses that disagree are a UserError.
// - An untyped temporary (a subexpression of plain floats or untyped parameters) is declared with
//   the type its typed uses agree on; otherwise (none, or several) with the type of its value,
//   where plain numbers take default_type. A use of another type converts it there.
// - Plain floating-point numbers nothing types (both sides of `1.0 < 2.0`) take default_type.
//   Plain integers are left to analyze_kernel, which makes them int64 or the target's type.
#pragma once

#include <loom/config.hpp>

#include <utility>
#include <vector>

namespace loom {

/// The (lhs, rhs) pairs of a kernel, in evaluation order, with every untyped variable replaced by
/// a typed one (one object per variable) and the values around it retyped. Throws UserError for a
/// default_type that is not a float type, an untyped parameter whose uses disagree, or one in a
/// slice bound. Assignments without untyped values come back as the same handles.
std::vector<std::pair<Expr, Expr>> resolve_types(const std::vector<std::pair<Expr, Expr>>& assignments,
                                                 const KernelConfig& config);

} // namespace loom
