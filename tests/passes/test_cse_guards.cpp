// CSE must not hoist a computation that can trap out of the select that guards it.
#include "compiler/ir/ir.hpp"
#include "compiler/ir/printer.hpp"
#include "compiler/ir/visitor.hpp"
#include "compiler/passes/cse.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

namespace loom {
namespace {
using namespace ir;

TEST(Cse, IntegerDivisionStaysInsideTheSelectThatGuardsIt) {
    // o1 = n != 0 ? a / n : 0 and o2 = n != 0 ? a / n + 1 : 0 share a / n, but computing it
    // into a temporary would divide by zero where the selects meant to avoid it.
    auto [a, n, o1, o2] = fields<4>("a, n, o1, o2: int32[1D]");
    Expr guard = n.center() != 0;
    Stmt body = BlockNode::make(
        {AssignNode::make(o1.center(), select(guard, a.center() / n.center(), constant<std::int32_t>(0))),
         AssignNode::make(o2.center(), select(guard, a.center() / n.center() + constant<std::int32_t>(1),
                                              constant<std::int32_t>(0)))});
    Stmt out = eliminate_common_subexpressions(body);
    for (const Stmt& s : out.as<BlockNode>()->stmts)
        if (auto d = s.as<DeclareNode>()) {
            bool divides = false;
            for (const Expr& e : subexpressions(d->value))
                if (auto b = e.as<BinaryNode>(); b && b->op == BinaryOp::Div) divides = true;
            EXPECT_FALSE(divides) << "a division was hoisted:\n" << to_string(out);
        }
}

TEST(Cse, GatherStaysInsideTheSelectThatGuardsItsIndex) {
    // t.at(i) * 2 repeats in two selects guarded by i < n; computed into a temporary it would
    // read t out of bounds where the selects meant to avoid it.
    auto [o1, o2] = fields<2>("o1, o2: float32[1D]");
    Field t = field("t: float32[1D]");
    Expr i = param<std::int32_t>("i"), n = param<std::int32_t>("n");
    Expr guard = i < n;
    Expr twice = t.at({i}) * constant<float>(2.0f);
    Stmt body = BlockNode::make(
        {AssignNode::make(o1.center(), select(guard, twice + constant<float>(1.0f), constant<float>(0.0f))),
         AssignNode::make(o2.center(), select(guard, twice + constant<float>(3.0f), constant<float>(0.0f)))});
    Stmt out = eliminate_common_subexpressions(body);
    int declarations = 0;
    for (const Stmt& s : out.as<BlockNode>()->stmts)
        if (auto d = s.as<DeclareNode>()) {
            ++declarations;
            for (const Expr& e : subexpressions(d->value))
                if (auto a = e.as<FieldAccessNode>())
                    EXPECT_FALSE(a->absolute()) << "a gather was hoisted:\n" << to_string(out);
        }
    // The guard itself (no gather) may still be shared.
    EXPECT_LE(declarations, 1) << to_string(out);
}

} // namespace
} // namespace loom
