#include <loom/assignment.hpp>

#include "compiler/ir/printer.hpp"
#include "frontend/untyped.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>

namespace loom {
using namespace ir;

namespace {
void check_side(const Expr& e, const char* side) {
    if (!e.defined())
        throw UserError(fmt::format("Assignment: the {} side is an undefined expression (a "
                                    "default-constructed loom::Expr)", side));
}

/// Cells run in parallel, and a write at a computed position could land on the element another
/// cell writes or reads: only the cell a thread works on (and its fixed offsets) may be written.
void check_not_absolute(const Expr& lhs) {
    auto fa = lhs.as<FieldAccessNode>();
    if (!fa || !fa->absolute()) return;
    throw UserError(fmt::format(
        "Assignment: cannot assign to `{}`: scatter writes are not supported; a kernel writes "
        "fields at the cell it works on, e.g. {}.center(), and reads at absolute positions only "
        "(gather). Compute the value where it belongs, i.e. write {}.center() and read the "
        "inputs with .at()",
        loom::to_string(lhs), fa->field->name, fa->field->name));
}

/// The access that a read of a 16-bit float field stands for: Access::node widens such reads
/// with a cast, and the left side is the stored element itself.
Expr stored_access(const Expr& e) {
    auto c = e.as<CastNode>();
    auto fa = c ? c->value.as<FieldAccessNode>() : nullptr;
    return fa && fa->type != c->type && c->type == fa->field->compute_type() ? c->value : e;
}
} // namespace

Assignment::Assignment(const Expr& target, const Expr& rhs) {
    check_side(target, "left");
    check_side(rhs, "right");
    const Expr lhs = stored_access(target);
    auto v = lhs.as<VarNode>();
    if (auto c = lhs.as<CastNode>(); c && !v) v = c->value.as<VarNode>(); // a 16-bit parameter, read widened
    if (!lhs.is<FieldAccessNode>() && !(v && v->role == VarRole::Temporary && lhs.is<VarNode>())) {
        std::string what = v && v->role == VarRole::Parameter ? "the scalar parameter " + v->name
                                                              : "the expression `" + loom::to_string(lhs) + "`";
        throw UserError(fmt::format("Assignment: cannot assign to {}; the left side must be a field "
                                    "access such as f.center() or a temporary from temp<T>(\"t\")",
                                    what));
    }
    check_not_absolute(lhs);
    parts_.emplace_back(lhs, rhs);
}

Assignment::Assignment(const Vec& lhs, const Vec& rhs) {
    if (lhs.size() != rhs.size())
        throw UserError(fmt::format("vector Assignment: the left side has {} components but the "
                                    "right side has {}; they must match",
                                    lhs.size(), rhs.size()));
    if (lhs.size() == 0) throw UserError("vector Assignment: both sides are empty");
    for (int i = 0; i < lhs.size(); ++i) parts_.push_back(Assignment(lhs[i], rhs[i]).parts_[0]);
}

Assignment reduce_over_cells(CellReduction op, const Access& target, const Expr& value) {
    check_side(value, "right");
    Expr lhs = stored_access(target.expr()); // a vector field without its component is refused here
    auto fa = lhs.as<FieldAccessNode>();
    if (fa->type == ScalarType::Float16 || fa->type == ScalarType::BFloat16)
        throw UserError(fmt::format(
            "{}_over_cells: the target {} is a {} field; a reduction across cells accumulates in "
            "its target's type, and 16 bits lose most of a large sum. Reduce into a float32 field "
            "(the values may stay {})", cell_reduction_name(op), fa->field->describe(),
            type_name(fa->type), type_name(fa->type)));
    if (!fa->absolute())
        throw UserError(fmt::format(
            "{}_over_cells: the target `{}` is a field access at the cell; a reduction across "
            "cells writes one element, read with .at() at integer literals, e.g. {}.at({{0}}) of a "
            "fixed-shape field", cell_reduction_name(op), loom::to_string(lhs), fa->field->name));
    if (op == CellReduction::Mean && !is_float(value.type()))
        throw UserError(fmt::format("mean_over_cells: the value `{}` is {}; a mean divides by the "
                                    "number of cells and needs a floating-point value: cast it, "
                                    "e.g. cast<double>(...)", loom::to_string(value), type_name(value.type())));
    Assignment a;
    a.parts_.emplace_back(lhs, value);
    a.over_cells_ = op;
    return a;
}
Assignment sum_over_cells(const Access& target, const Expr& value) {
    return reduce_over_cells(CellReduction::Sum, target, value);
}
Assignment max_over_cells(const Access& target, const Expr& value) {
    return reduce_over_cells(CellReduction::Max, target, value);
}
Assignment min_over_cells(const Access& target, const Expr& value) {
    return reduce_over_cells(CellReduction::Min, target, value);
}
Assignment mean_over_cells(const Access& target, const Expr& value) {
    return reduce_over_cells(CellReduction::Mean, target, value);
}

std::string_view cell_reduction_name(CellReduction op) {
    switch (op) {
    case CellReduction::Sum: return "sum";
    case CellReduction::Max: return "max";
    case CellReduction::Min: return "min";
    case CellReduction::Mean: return "mean";
    }
    return "?";
}

std::string Assignment::to_string() const {
    if (over_cells_)
        return fmt::format("{} = {} over cells of {}", loom::to_string(parts_[0].first),
                           cell_reduction_name(*over_cells_), loom::to_string(parts_[0].second));
    std::string s;
    for (auto& [l, r] : parts_) s += (s.empty() ? "" : "; ") + loom::to_string(l) + " = " + loom::to_string(r);
    return s;
}

Expr AssignmentCollection::subexpression(const std::string& name, const Expr& value) {
    check_side(value, "right");
    // An untyped float value (plain numbers, untyped parameters) gives an untyped temporary,
    // typed by create_kernel as the value would be: by its uses, else KernelConfig::default_type.
    Expr t;
    if (is_untyped(value) && is_float(value.type())) {
        check_identifier(name, "temporary");
        t = weak_variable(name, VarRole::Temporary);
    } else {
        t = temp(name, value.type());
    }
    subexpressions_.emplace_back(t, value);
    return t;
}

std::vector<Assignment> AssignmentCollection::all() const {
    std::vector<Assignment> out = subexpressions_;
    out.insert(out.end(), main_.begin(), main_.end());
    return out;
}

namespace {
void check_on_chip(const std::vector<std::pair<Field, Expr>>& known, const Field& f) {
    if (!f.info().index_shape.empty())
        throw UserError(fmt::format(
            "Stages::on_chip({}): {} has index axes, and on-chip fields are scalar fields so "
            "far; keep {} in memory, or split it into one scalar field per component",
            f.name(), f.info().describe(), f.name()));
    for (auto& [g, outside] : known)
        if (g.ptr() == f.ptr())
            throw UserError(fmt::format("Stages::on_chip({}): {} is on chip already; name each "
                                        "on-chip field once", f.name(), f.name()));
}
} // namespace

Stages& Stages::on_chip(const Field& field, double outside) {
    check_on_chip(on_chip_, field);
    on_chip_.emplace_back(field, constant(field.type(), outside));
    return *this;
}

Stages& Stages::on_chip(const Field& field, const Field& outside) {
    check_on_chip(on_chip_, field);
    if (outside.ptr() == field.ptr())
        throw UserError(fmt::format("Stages::on_chip({}, {}): an on-chip field cannot take its "
                                    "values outside the iteration space from itself; pass a number "
                                    "or another field", field.name(), outside.name()));
    if (!outside.info().index_shape.empty() || outside.spatial_dims() != field.spatial_dims())
        throw UserError(fmt::format(
            "Stages::on_chip({}, {}): {} holds {}'s values outside the iteration space, so {} "
            "must be a scalar field of as many spatial axes as {} ({}), but it is {}",
            field.name(), outside.name(), field.name(), outside.name(), outside.name(),
            field.name(), field.spatial_dims(), outside.info().describe()));
    on_chip_.emplace_back(field, outside.center().stored_expr());
    return *this;
}

} // namespace loom
