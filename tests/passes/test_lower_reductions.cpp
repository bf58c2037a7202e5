// lower_reductions: each Reduce becomes an accumulator declared with the operator's identity and
// a loop that updates it, right before the statement that uses it; nested reductions run inside
// the outer loop. Before/expected IR compared structurally (the accumulators are the pass's own
// variables, read back from its output).
#include "compiler/ir/equality.hpp"
#include "compiler/ir/ir.hpp"
#include "compiler/passes/lower_reductions.hpp"
#include "tests/support/field_buffer.hpp"
#include "tests/support/lowered_nest.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <cmath>

namespace {
using namespace loom;
using namespace loom::ir;

Expr i32(std::int64_t v) { return ConstNode::make_int(ScalarType::Int32, v); }
Expr f32(double v) { return ConstNode::make(ScalarType::Float32, v); }
Expr bin(BinaryOp op, Expr a, Expr b) { return BinaryNode::make(op, a, b); }

/// The statements of `s` if it is a block, else `s` alone.
const std::vector<Stmt>& stmts(const Stmt& s) { return s.as<BlockNode>()->stmts; }

TEST(LowerReductions, ASumBecomesAnAccumulatorAndALoopBeforeItsStatement) {
    Field x = make_field("x", ScalarType::Float32, 1, {{8}});
    Expr k = VarNode::make_index("k", 8);
    Expr t = VarNode::make(ScalarType::Float32, "mean", VarRole::Temporary);
    Expr read = BufferLoadNode::make(test::global_of(x.ptr()), k);
    Stmt before = BlockNode::make(
        {DeclareNode::make(t, bin(BinaryOp::Div,
                                  ReduceNode::make(ReduceOp::Sum, k, i32(0), i32(8), read),
                                  f32(8)))});
    Stmt after = lower_reductions(before);
    // Block{ Block{ acc = 0; for k: acc = acc + x[k]; mean = acc / 8 } }
    const Stmt& lowered = stmts(after).at(0);
    Expr acc = stmts(lowered).at(0).as<DeclareNode>()->var;
    EXPECT_EQ(acc.as<VarNode>()->role, VarRole::Accumulator);
    EXPECT_EQ(acc.as<VarNode>()->name, "sum_k");
    Stmt expected = BlockNode::make({BlockNode::make(
        {DeclareNode::make(acc, f32(0)),
         ForNode::make(k, i32(0), i32(8), i32(1),
                       AssignNode::make(acc, bin(BinaryOp::Add, acc, read)), -1),
         DeclareNode::make(t, bin(BinaryOp::Div, acc, f32(8)))})});
    EXPECT_IR_EQ(after, expected);
}

TEST(LowerReductions, NestedReductionsRunInsideTheOuterLoopWithTheirIdentities) {
    Field u = make_field("u", ScalarType::Float64, 1, {{4}});
    Field out = make_field("out", ScalarType::Float64, 1);
    Expr j = VarNode::make_index("j", 4), k = VarNode::make_index("k", 4);
    Expr diff = bin(BinaryOp::Sub, BufferLoadNode::make(test::global_of(u.ptr()), j), BufferLoadNode::make(test::global_of(u.ptr()), k));
    Expr inner = ReduceNode::make(ReduceOp::Min, k, i32(0), i32(4), diff);
    Expr outer = ReduceNode::make(ReduceOp::Max, j, i32(0), i32(4), inner);
    Stmt before = BufferStoreNode::make(test::global_of(out.ptr()), i32(0), outer);
    Stmt after = lower_reductions(before);
    Expr max_j = stmts(after).at(0).as<DeclareNode>()->var;
    const Stmt& outer_body = stmts(after).at(1).as<ForNode>()->body;
    Expr min_k = stmts(outer_body).at(0).as<DeclareNode>()->var;
    const double inf = INFINITY;
    Stmt expected = BlockNode::make(
        {DeclareNode::make(max_j, ConstNode::make(ScalarType::Float64, -inf)),
         ForNode::make(
             j, i32(0), i32(4), i32(1),
             BlockNode::make({DeclareNode::make(min_k, ConstNode::make(ScalarType::Float64, inf)),
                              ForNode::make(k, i32(0), i32(4), i32(1),
                                            AssignNode::make(min_k, bin(BinaryOp::Min, min_k, diff)),
                                            -1),
                              AssignNode::make(max_j, bin(BinaryOp::Max, max_j, min_k))}),
             -1),
         BufferStoreNode::make(test::global_of(out.ptr()), i32(0), max_j)});
    EXPECT_IR_EQ(after, expected);
}

TEST(LowerReductions, IntegerIdentitiesAreTheTypesLimitsAndNoReductionIsUnchanged) {
    Field n = make_field("n", ScalarType::Int64, 1, {{3}});
    Field out = make_field("out", ScalarType::Int64, 1);
    Expr k = VarNode::make_index("k", 3);
    Expr read = BufferLoadNode::make(test::global_of(n.ptr()), k);
    Stmt s = BufferStoreNode::make(test::global_of(out.ptr()), i32(0), ReduceNode::make(ReduceOp::Max, k, i32(0), i32(3), read));
    Stmt after = lower_reductions(s);
    auto init = stmts(after).at(0).as<DeclareNode>()->value.as<ConstNode>();
    ASSERT_NE(init, nullptr);
    EXPECT_EQ(init->int_value, INT64_MIN);
    Stmt plain = BufferStoreNode::make(test::global_of(out.ptr()), i32(0), read);
    EXPECT_TRUE(lower_reductions(plain).same_as(plain));
}

TEST(LowerReductions, TheKernelsFinalIRHasTheLoopAndNoReduce) {
    Field x = make_field("x", ScalarType::Float32, 1, {{16}});
    auto [s] = fields<1>("s: float32[1D]");
    IndexVar k("k", 16);
    KernelConfig cfg;
    cfg.name = "row_sum";
    Kernel kernel = create_kernel({{s.center(), sum(k, x(k))}}, cfg);
    const std::string ir = to_string(kernel.ir());
    EXPECT_FALSE(contains_reductions(kernel.ir())) << ir; // (the comment keeps the DSL text)
    EXPECT_NE(ir.find("sum_k = sum_k + x["), std::string::npos) << ir;
}

} // namespace
