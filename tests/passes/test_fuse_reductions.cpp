// fuse_reductions: independent accumulator loops over one range join into one loop; a loop that
// depends on what stands between (a store into an array it reads, a temporary it reads, the
// earlier accumulator) stays apart.
#include "compiler/ir/ir.hpp"
#include "compiler/passes/fuse_reductions.hpp"
#include "tests/support/field_buffer.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

namespace {
using namespace loom;
using namespace loom::ir;

Expr i32(std::int64_t v) { return ConstNode::make_int(ScalarType::Int32, v); }
Expr f32(double v) { return ConstNode::make(ScalarType::Float32, v); }

struct Loops {
    Expr k = VarNode::make_index("k", 8);
    Expr a = VarNode::make(ScalarType::Float32, "a", VarRole::Accumulator);
    Expr b = VarNode::make(ScalarType::Float32, "b", VarRole::Accumulator);
    /// acc = 0; for k in [0, 8): acc = acc op term
    std::vector<Stmt> reduction(const Expr& acc, BinaryOp op, const Expr& term) const {
        return {DeclareNode::make(acc, f32(0)),
                ForNode::make(k, i32(0), i32(8), i32(1), AssignNode::make(acc, BinaryNode::make(op, acc, term)), -1)};
    }
};

std::size_t loops_in(const Stmt& s) {
    std::size_t n = 0;
    for (const Stmt& x : s.as<BlockNode>()->stmts) n += x.is<ForNode>();
    return n;
}

TEST(FuseReductions, IndependentReductionsOverOneRangeShareALoop) {
    Field x = make_field("x", ScalarType::Float32, 1, {{8}});
    Loops l;
    Expr read = BufferLoadNode::make(test::global_of(x.ptr()), l.k);
    std::vector<Stmt> body = l.reduction(l.a, BinaryOp::Add, read);
    for (Stmt& s : l.reduction(l.b, BinaryOp::Max, read)) body.push_back(s);
    Stmt fused = fuse_reductions(BlockNode::make(body));
    ASSERT_EQ(loops_in(fused), 1u);
    // a, b declared, then one loop whose body ends with both updates.
    auto& out = fused.as<BlockNode>()->stmts;
    EXPECT_TRUE(out[0].as<DeclareNode>()->var.same_as(l.a));
    EXPECT_TRUE(out[1].as<DeclareNode>()->var.same_as(l.b));
    EXPECT_EQ(out[2].as<ForNode>()->body.as<BlockNode>()->stmts.size(), 2u);
}

TEST(FuseReductions, ALoopReadingWhatStandsBetweenStaysApart) {
    Field x = make_field("x", ScalarType::Float32, 1, {{8}});
    Loops l;
    Expr read = BufferLoadNode::make(test::global_of(x.ptr()), l.k);
    // An array filled between the loops (a layer's input) and read by the second.
    auto array = make_buffer("h_in", ScalarType::Float32, Scope::Local, {1});
    std::vector<Stmt> body = l.reduction(l.a, BinaryOp::Add, read);
    body.push_back(BufferStoreNode::make(array, i32(0), f32(2)));
    for (Stmt& s : l.reduction(l.b, BinaryOp::Add, BinaryNode::make(BinaryOp::Mul, read, BufferLoadNode::make(array, {i32(0)}))))
        body.push_back(s);
    EXPECT_EQ(loops_in(fuse_reductions(BlockNode::make(body))), 2u);
    // A temporary declared between and read by the second loop.
    Expr t = VarNode::make(ScalarType::Float32, "scale", VarRole::Temporary);
    std::vector<Stmt> with_temp = l.reduction(l.a, BinaryOp::Add, read);
    with_temp.push_back(DeclareNode::make(t, f32(3)));
    for (Stmt& s : l.reduction(l.b, BinaryOp::Add, BinaryNode::make(BinaryOp::Mul, read, t))) with_temp.push_back(s);
    EXPECT_EQ(loops_in(fuse_reductions(BlockNode::make(with_temp))), 2u);
    // The second reads the first's result (a variance of x - mean).
    std::vector<Stmt> dependent = l.reduction(l.a, BinaryOp::Add, read);
    for (Stmt& s : l.reduction(l.b, BinaryOp::Add, BinaryNode::make(BinaryOp::Sub, read, l.a))) dependent.push_back(s);
    EXPECT_EQ(loops_in(fuse_reductions(BlockNode::make(dependent))), 2u);
}

} // namespace
