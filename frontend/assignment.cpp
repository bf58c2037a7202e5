#include "frontend/assignment.hpp"

#include "compiler/ir/printer.hpp"
#include "runtime/errors.hpp"

#include <fmt/format.h>

namespace loom {
using namespace ir;

namespace {
void check_side(const Expr& e, const char* side) {
    if (!e.defined())
        throw UserError(fmt::format("Assignment: the {} side is an undefined expression (a "
                                    "default-constructed loom::Expr)", side));
}
} // namespace

Assignment::Assignment(const Expr& lhs, const Expr& rhs) {
    check_side(lhs, "left");
    check_side(rhs, "right");
    auto v = lhs.as<VarNode>();
    if (!lhs.is<FieldAccessNode>() && !(v && v->role == VarRole::Temporary)) {
        std::string what = v && v->role == VarRole::Parameter ? "the scalar parameter " + v->name
                                                              : "the expression `" + loom::to_string(lhs) + "`";
        throw UserError(fmt::format("Assignment: cannot assign to {}; the left side must be a field "
                                    "access such as f.center() or a temporary from temp<T>(\"t\")",
                                    what));
    }
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

std::string Assignment::to_string() const {
    std::string s;
    for (auto& [l, r] : parts_) s += (s.empty() ? "" : "; ") + loom::to_string(l) + " = " + loom::to_string(r);
    return s;
}

Expr AssignmentCollection::subexpression(const std::string& name, const Expr& value) {
    check_side(value, "right");
    Expr t = temp(name, value.type());
    subexpressions_.emplace_back(t, value);
    return t;
}

std::vector<Assignment> AssignmentCollection::all() const {
    std::vector<Assignment> out = subexpressions_;
    out.insert(out.end(), main_.begin(), main_.end());
    return out;
}

} // namespace loom
