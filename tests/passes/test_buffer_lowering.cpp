// Absolute accesses (Field::at) and buffers through analysis and the iteration space: which fields
// are buffers, what they add to the signature (strides only, never sizes), and the addresses of
// gathers, compared structurally with IR built from the pass's own variables.
#include "compiler/ir/equality.hpp"
#include "compiler/ir/ir.hpp"
#include "compiler/passes/analyze.hpp"
#include "compiler/passes/iteration_space.hpp"
#include "tests/support/lowered_nest.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

namespace {
using namespace loom;
using namespace loom::ir;

Expr i64(std::int64_t v) { return ConstNode::make_int(ScalarType::Int64, v); }
Expr add(Expr a, Expr b) { return BinaryNode::make(BinaryOp::Add, a, b); }
Expr mul(Expr a, Expr b) { return BinaryNode::make(BinaryOp::Mul, a, b); }

using test::lower_nest;
using Lowered = test::LoweredNest;

TEST(Buffers, AFieldReadOnlyAbsolutelyIsABufferOutsideTheIterationSpace) {
    using namespace loom::counters;
    auto [in, out] = fields<2>("in, out: float64[1D]");
    Field w = field("w: float64[2D]");
    Lowered l = lower_nest({{out.center(), w.at({param<std::int64_t>("row"), x}) * in[{1}], ""}});
    const KernelAnalysis& a = l.analysis;
    EXPECT_EQ(a.spatial_dims, 1);
    EXPECT_EQ(a.fields, (std::vector<FieldPtr>{out.ptr(), w.ptr(), in.ptr()}));
    EXPECT_EQ(a.buffers, (std::vector<FieldPtr>{w.ptr()}));
    // The reach (ghost layers) comes from in[1] alone: the gather has no offset.
    EXPECT_EQ(a.ghost_layers, (std::vector<std::pair<int, int>>{{1, 1}}));
    EXPECT_EQ(l.signature(),
              (std::vector<std::string>{"field pointer -1 out", "field pointer -1 w",
                                        "field pointer -1 in", "size 0 ", "stride 0 w",
                                        "scalar -1 "}));
}

TEST(Buffers, GatherAddressIsIndexTimesStrideWithTheUnitStrideAxisBare) {
    using namespace loom::counters;
    auto [in, out] = fields<2>("in, out: float64[1D]");
    Field w = field("w: float64[2D]");
    Expr row = param<std::int64_t>("row");
    Lowered l = lower_nest({{out.center(), w.at({row, x}), ""}});
    Expr c0 = l.loop_var(0);
    EXPECT_IR_EQ(l.stored(), BufferLoadNode::make(l.space.globals.at(w.ptr().get()), add(mul(l.param(ParamRole::Stride, 0, &w.info()), row), c0)));
}

TEST(Buffers, FixedShapeVectorBufferGetsLiteralStrides) {
    using namespace loom::counters;
    Field grid = field("grid(3): float64[8, 8]");
    Field fine = field("fine(3): float64[2D]");
    Lowered l = lower_nest({{fine(2), grid.at({x / 4, y / 4})(2), ""}});
    Expr c0 = l.loop_var(0), c1 = l.loop_var(1);
    Expr i = BinaryNode::make(BinaryOp::Div, c0, i64(4)), j = BinaryNode::make(BinaryOp::Div, c1, i64(4));
    EXPECT_IR_EQ(l.stored(), BufferLoadNode::make(l.space.globals.at(grid.ptr().get()), add(add(mul(i64(24), i), mul(i64(3), j)), i64(2))));
    // The fixed-shape buffer fixes nothing: the sizes stay parameters.
    EXPECT_EQ(l.analysis.fixed_shape_source, nullptr);
    EXPECT_EQ(l.signature(),
              (std::vector<std::string>{"field pointer -1 fine", "field pointer -1 grid", "size 0 ",
                                        "size 1 ", "stride 0 fine", "stride 1 fine"}));
}

TEST(Buffers, FixedShapesOfBuffersNeitherMixNorFixTheSpace) {
    using namespace loom::counters;
    auto [a, b] = fields<2>("a, b: float32[8, 16]");
    Field w = field("w: float32[4, 4, 4]");  // 3D buffer in a 2D kernel, another fixed shape
    Field t = field("t: float32[2D]");       // variable buffer in a fixed-shape kernel
    Lowered l = lower_nest({{b.center(), a.center() * w.at({1, 2, 3}) + t.at({y, x}), ""}});
    EXPECT_EQ(l.analysis.fixed_shape_source, &b.info()); // the first field of the space
    auto outer = l.nest.as<ForNode>();
    EXPECT_IR_EQ(outer->stop, ConstNode::make_int(ScalarType::Int64, 8));
    EXPECT_IR_EQ(outer->body.as<ForNode>()->stop, ConstNode::make_int(ScalarType::Int64, 16));
    EXPECT_EQ(l.signature(),
              (std::vector<std::string>{"field pointer -1 b", "field pointer -1 a",
                                        "field pointer -1 w", "field pointer -1 t", "stride 0 t"}));
}

} // namespace
