#include <loom/index_var.hpp>

#include "compiler/ir/printer.hpp"
#include "frontend/untyped.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>

#include <cctype>
#include <cstdint>

namespace loom {

using namespace ir;

IndexVar::IndexVar(const std::string& name, std::int64_t extent) : name_(name), extent_(extent) {
    bool identifier = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0]));
    for (char c : name) identifier &= std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    if (!identifier)
        throw UserError(fmt::format("IndexVar: the name '{}' is not an identifier; use letters, "
                                    "digits and underscores, not starting with a digit", name));
    if (extent < 1 || extent > INT32_MAX)
        throw UserError(fmt::format("IndexVar '{}': extent {}; an index variable runs over "
                                    "[0, extent) with 1 <= extent <= 2^31 - 1", name, extent));
    var_ = VarNode::make_index(name, extent);
}

namespace {

Expr reduction(ReduceOp op, const char* call, const IndexVar& k, const Expr& body) {
    const std::string where = fmt::format("{}({}, ...)", call, k.name());
    if (!body.defined())
        throw UserError(fmt::format("{}: the body is an undefined expression (a "
                                    "default-constructed loom::Expr)", where));
    if (body.type() == ScalarType::Bool)
        throw UserError(fmt::format("{}: the body `{}` is a condition (bool); reduce numbers, e.g. "
                                    "select(cond, 1, 0) to count", where, to_string(body)));
    if (is_untyped(body))
        throw UserError(fmt::format("{}: the body `{}` has no type (plain numbers or untyped "
                                    "parameters only); give it one, e.g. constant<float>(...) or "
                                    "a field read", where, to_string(body)));
    if (body.depth() >= max_expression_depth) throw_too_deep(body.depth() + 1, call);
    Expr zero = ConstNode::make_int(ScalarType::Int32, 0);
    Expr extent = ConstNode::make_int(ScalarType::Int32, k.extent());
    return ReduceNode::make(op, k.expr(), zero, extent, body);
}

} // namespace

Expr sum(const IndexVar& k, const Expr& body) { return reduction(ReduceOp::Sum, "sum", k, body); }
Expr max(const IndexVar& k, const Expr& body) { return reduction(ReduceOp::Max, "max", k, body); }
Expr min(const IndexVar& k, const Expr& body) { return reduction(ReduceOp::Min, "min", k, body); }

Expr mean(const IndexVar& k, const Expr& body) {
    if (body.defined() && !is_float(body.type()) && body.type() != ScalarType::Bool)
        throw UserError(fmt::format("mean({}, ...): the body `{}` is {}, and an integer mean would "
                                    "truncate; convert the body, e.g. cast<float>(...), or use "
                                    "sum({}, ...)", k.name(), to_string(body),
                                    type_name(body.type()), k.name()));
    Expr s = reduction(ReduceOp::Sum, "mean", k, body);
    return s / ConstNode::make(s.type(), double(k.extent()));
}

} // namespace loom
