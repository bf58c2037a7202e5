// Layers as statements: analyze_kernel turns a layer array's definition into Allocate and Dense
// statements (no statement inside an expression), and lower_layers turns each Dense into loops,
// fully unrolled up to LayerLowering::unroll_limit weights, else the outer-product form. The IR
// is compared in its debug notation, before and after the pass.
#include "compiler/ir/equality.hpp"
#include "compiler/ir/printer.hpp"
#include "compiler/ir/visitor.hpp"
#include "compiler/passes/analyze.hpp"
#include "compiler/passes/lower_layers.hpp"
#include "compiler/passes/simplify.hpp"
#include "compiler/passes/verify.hpp"
#include "tests/support/expect_error.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

namespace {
using namespace loom;
using namespace loom::ir;

/// The analysis of y(k) = out[k] for every output.
KernelAnalysis analyze_outputs(const Field& y, const Vec& out) {
    std::vector<SourceAssignment> in;
    for (int k = 0; k < out.size(); ++k) in.push_back({y(k), out[k], "y" + std::to_string(k)});
    return analyze_kernel(in, KernelConfig{}, Schedule{});
}

/// The statements of a cell's block (inside the allocations of its layer arrays) of a kind.
template <typename Node>
std::vector<const Node*> all_of(const Stmt& cell) {
    std::vector<BufferPtr> arrays;
    std::vector<const Node*> out;
    for (const Stmt& s : inside_allocations(cell, arrays).as<BlockNode>()->stmts)
        if (auto n = s.as<Node>()) out.push_back(n);
    return out;
}

/// The arrays a cell's statements lie in, outermost first.
std::vector<BufferPtr> arrays_of(const Stmt& cell) {
    std::vector<BufferPtr> arrays;
    inside_allocations(cell, arrays);
    return arrays;
}

/// `lines` indented by one level of the IR notation.
std::string indented(const std::string& lines) {
    std::string out;
    std::size_t start = 0;
    while (start < lines.size()) {
        std::size_t end = lines.find('\n', start);
        out += "  " + lines.substr(start, end - start + 1);
        start = end + 1;
    }
    return out;
}

const std::string kAssignments = "# y0\n"
                                 "y[0](0) = h[0]\n"
                                 "# y1\n"
                                 "y[0](1) = h[1]\n"
                                 "# y2\n"
                                 "y[0](2) = h[2]\n";

// The layer's arrays live through the cell: the statements that compute and read them lie in
// their allocations.
const std::string kArrays = "alloc float32 h_in[2] (local)\n"
                            "alloc float32 h[3] (local):\n";
const std::string kPlacedLayer = "# h_in: the layer's 2 inputs\n"
                                 "h_in[0] = x[0](0)\n"
                                 "h_in[1] = x[0](1)\n"
                                 "# h: Dense 2 -> 3, relu, weights h_W, bias h_b\n";

struct SmallLayer : ::testing::Test {
    Field x = field("x(2): float32[1D]"), y = field("y(3): float32[1D]");
    nn::Dense h = nn::Dense::runtime("h", 3, 2, nn::relu);
    KernelAnalysis a = analyze_outputs(y, h(x.vec()));
};

TEST_F(SmallLayer, AnalysisPlacesTheLayerAsStatementsBeforeItsFirstRead) {
    EXPECT_EQ(to_string(a.body),
              kArrays + indented(kPlacedLayer + "dense h[3] = relu(h_W[3, 2] x h_in[2] + h_b[3])\n" + kAssignments));
    // The loads read arrays without definitions: every statement is in the block, none is
    // reachable from an expression.
    for (const Expr& e : subexpressions(a.body))
        if (auto l = e.as<BufferLoadNode>()) EXPECT_EQ(l->buffer->definition, nullptr) << to_string(e);
    const DenseNode* d = all_of<DenseNode>(a.body).at(0);
    EXPECT_EQ(d->output->definition, nullptr);
    // Arguments in data-flow order: the input, then the layer's bias and weights (buffers).
    EXPECT_EQ(a.fields, (std::vector<FieldPtr>{y.ptr(), x.ptr(), h.bias_field().ptr(),
                                               h.weight_field().ptr()}));
    EXPECT_EQ(a.buffers, (std::vector<FieldPtr>{h.bias_field().ptr(), h.weight_field().ptr()}));
}

TEST_F(SmallLayer, LoweredFullyUnrolledUpToTheLimit) {
    // 6 weights <= 32 x 32: rows and inputs unrolled, the form of the small benchmarks.
    EXPECT_EQ(to_string(lower_layers(a.body)),
              kArrays + indented(kPlacedLayer +
                                 "for i in [0, 3) step 1:  # axis -1, unrolled\n"
                                 "  h[i] = h_b.at(i)\n"
                                 "  for j in [0, 2) step 1:  # axis -1, unrolled\n"
                                 "    h[i] = h[i] + h_W.at(i, j) * h_in[j]\n"
                                 "  h[i] = h[i] > 0.0f ? h[i] : 0.0f\n" +
                                 kAssignments));
}

TEST_F(SmallLayer, LoweredAsAnOuterProductAboveTheLimitInTilesOfRows) {
    // With no unrolled layers and tiles of 2 rows: accumulators, a rolled input loop per tile
    // of rows (the last tile shorter), then the activation into the layer's array. The
    // accumulators live for the layer's loops only.
    EXPECT_EQ(to_string(lower_layers(a.body, LayerLowering{0, 2})),
              kArrays + indented(kPlacedLayer +
                                 "alloc float32 h_acc[3] (local):\n"
                                 "  for i in [0, 3) step 1:  # axis -1, unrolled\n"
                                 "    h_acc[i] = h_b.at(i)\n"
                                 "  for j in [0, 2) step 1:  # axis -1, rolled\n"
                                 "    for i in [0, 2) step 1:  # axis -1, unrolled\n"
                                 "      h_acc[i] = h_acc[i] + h_W.at(i, j) * h_in[j]\n"
                                 "  for j in [0, 2) step 1:  # axis -1, rolled\n"
                                 "    for i in [2, 3) step 1:  # axis -1, unrolled\n"
                                 "      h_acc[i] = h_acc[i] + h_W.at(i, j) * h_in[j]\n"
                                 "  for i in [0, 3) step 1:  # axis -1, unrolled\n"
                                 "    h[i] = h_acc[i] > 0.0f ? h_acc[i] : 0.0f\n" +
                                 kAssignments));
}

TEST_F(SmallLayer, DenseIsAStatementOfItsOwnUntilLowered) {
    const DenseNode* d = all_of<DenseNode>(a.body).at(0);
    std::vector<BufferPtr> arrays;
    Stmt dense = inside_allocations(a.body, arrays).as<BlockNode>()->stmts.at(4);
    ASSERT_TRUE(dense.is<DenseNode>());
    EXPECT_EQ(d->output->name, "h");
    EXPECT_EQ(d->input->name, "h_in");
    EXPECT_EQ(d->layer.weight_field, h.weight_field().ptr());
    // Passes that do not lower it leave it as it is; equality and hashing see all of it.
    EXPECT_TRUE(simplify(dense).same_as(dense));
    Stmt copy = DenseNode::make(d->output, d->input, d->layer);
    EXPECT_TRUE(structurally_equal(copy, dense));
    EXPECT_EQ(structural_hash(copy), structural_hash(dense));
    DenseLayer other = d->layer;
    other.bias_field = nullptr;
    EXPECT_FALSE(structurally_equal(DenseNode::make(d->output, d->input, other), dense));
    // Neither the verifier nor the printers accept one: lower_layers must run first.
    LOOM_EXPECT_ERROR(verify_lowered(dense, {}), InternalError, {"Dense statement", "lower_layers"});
}

TEST(LayerLowering, TheLimitIsThirtyTwoByThirtyTwoWeights) {
    auto rolled = [](int out, int in) {
        Field x = field("x(" + std::to_string(in) + "): float32[1D]");
        Field y = field("y(" + std::to_string(out) + "): float32[1D]");
        Stmt s = lower_layers(analyze_outputs(y, nn::Dense::runtime("l", out, in)(x.vec())).body);
        return to_string(s).find("# axis -1, rolled") != std::string::npos;
    };
    EXPECT_FALSE(rolled(32, 32));
    EXPECT_FALSE(rolled(4, 256));
    EXPECT_TRUE(rolled(33, 32));
    EXPECT_TRUE(rolled(64, 64));
}

TEST(LayerLowering, AChainReadsThePreviousLayersArrayInPlace) {
    auto [x, y] = fields<2>("x(3), y(2): float32[1D]");
    nn::Dense l0 = nn::Dense::runtime("l0", 4, 3, nn::tanh), l1 = nn::Dense::runtime("l1", 2, 4);
    nn::Chain mlp(l0, l1);
    // Both outputs read l1's array, which is placed once, after l0 (which it reads).
    KernelAnalysis a = analyze_outputs(y, mlp(x.vec()));
    auto dense = all_of<DenseNode>(a.body);
    ASSERT_EQ(dense.size(), 2u);
    EXPECT_EQ(dense[0]->input->name, "l0_in");
    EXPECT_EQ(dense[1]->input, dense[0]->output); // no l1_in: the loads were the whole array
    const std::vector<BufferPtr> arrays = arrays_of(a.body);
    ASSERT_EQ(arrays.size(), 3u);
    EXPECT_EQ(arrays[0]->name, "l0_in");
    EXPECT_EQ(arrays[1], dense[0]->output);
    EXPECT_EQ(arrays[2], dense[1]->output);
    EXPECT_EQ(a.fields, (std::vector<FieldPtr>{y.ptr(), x.ptr(), l0.bias_field().ptr(),
                                               l0.weight_field().ptr(), l1.bias_field().ptr(),
                                               l1.weight_field().ptr()}));
    // Identity: no activation statement, the rows end with the sum.
    EXPECT_EQ(to_string(dense[1]->layer.activation.value), "<undefined>");
}

TEST(LayerLowering, ABodyWithoutLayersIsReturnedAsItIs) {
    auto [u, v] = fields<2>("u, v: float64[1D]");
    KernelAnalysis a = analyze_kernel({{v.center(), u.center() * 2.0, "v = 2u"}}, KernelConfig{}, Schedule{});
    EXPECT_TRUE(lower_layers(a.body).same_as(a.body));
}

/// A Dense node with constant weights (the frontend keeps constant layers as expressions; the
/// node takes them too): one sum per output, bias first, a statement per run of 64 products.
TEST(LayerLowering, ConstantWeightsBecomeOneSumPerOutput) {
    Field x = field("x(2): float64[1D]");
    DenseLayer l;
    l.outputs = 2;
    l.inputs = 2;
    l.type = ScalarType::Float64;
    l.weights = {0.5, -1.0, 2.0, 0.25};
    l.bias = {0.125, -0.5};
    l.activation.name = "tanh";
    l.activation.input = VarNode::make(ScalarType::Float64, "sum", VarRole::Placeholder);
    l.activation.value = CallNode::make(MathFn::Tanh, {l.activation.input});
    BufferPtr out = make_layer_array("c", x.vec().elements(), l);
    Field y = field("y(2): float64[1D]");
    Vec loads{BufferLoadNode::make(out, ConstNode::make_int(ScalarType::Int32, 0)),
              BufferLoadNode::make(out, ConstNode::make_int(ScalarType::Int32, 1))};
    KernelAnalysis a = analyze_outputs(y, loads);
    EXPECT_NE(to_string(a.body).find("dense c[2] = tanh(<2 x 2 constants> x c_in[2] + <2 constants>)"),
              std::string::npos)
        << to_string(a.body);
    const std::string lowered = to_string(lower_layers(a.body));
    EXPECT_NE(lowered.find("  c[0] = tanh(0.125 + 0.5 * c_in[0] + -1.0 * c_in[1])\n"
                           "  c[1] = tanh(-0.5 + 2.0 * c_in[0] + 0.25 * c_in[1])\n"),
              std::string::npos)
        << lowered;

    // 130 inputs: runs of 64, 64 and 2 products, the later ones added to the stored sum.
    l.inputs = 130;
    l.weights.assign(std::size_t(2 * 130), 1.0);
    l.bias.clear();
    l.activation = LayerActivation{"identity", Expr(), Expr()};
    BufferPtr in = make_buffer("in", ScalarType::Float64, Scope::Local, {130});
    Stmt wide = lower_layers(DenseNode::make(make_buffer("w", ScalarType::Float64, Scope::Local, {2}), in, l));
    ASSERT_TRUE(wide.is<BlockNode>());
    EXPECT_EQ(wide.as<BlockNode>()->stmts.size(), 6u) << to_string(wide);
    EXPECT_NE(to_string(wide).find("w[0] = w[0] + 1.0 * in[128] + 1.0 * in[129]\n"), std::string::npos)
        << to_string(wide);
}

TEST(LayerLowering, DenseNodesAreChecked) {
    DenseLayer l;
    l.outputs = 2;
    l.inputs = 3;
    l.weight_field = field("W: float32[2, 3]").ptr();
    l.activation.name = "identity";
    auto array = [](const char* name, int size, ScalarType t = ScalarType::Float32) {
        return make_buffer(name, t, Scope::Local, {size});
    };
    EXPECT_NO_THROW(DenseNode::make(array("out", 2), array("in", 3), l));
    LOOM_EXPECT_ERROR(DenseNode::make(array("out", 3), array("in", 3), l), InternalError,
                      {"ill-formed Dense node", "arrays of 3 and 3 elements for 3 -> 2"});
    LOOM_EXPECT_ERROR(DenseNode::make(array("out", 2), array("in", 3, ScalarType::Float64), l),
                      InternalError, {"local arrays of the layer's type"});
    DenseLayer both = l;
    both.weights.assign(6, 1.0);
    LOOM_EXPECT_ERROR(DenseNode::make(array("out", 2), array("in", 3), both), InternalError,
                      {"no constant weights"});
    DenseLayer transposed = l;
    transposed.weight_field = field("W: float32[3, 2]").ptr();
    LOOM_EXPECT_ERROR(DenseNode::make(array("out", 2), array("in", 3), transposed), InternalError,
                      {"fixed [outputs, inputs] buffer"});
    DenseLayer bias = l;
    bias.bias = {1.0};
    LOOM_EXPECT_ERROR(DenseNode::make(array("out", 2), array("in", 3), bias), InternalError,
                      {"1 bias values for 2 expected"});
    DenseLayer act = l;
    act.activation.input = VarNode::make(ScalarType::Float32, "t", VarRole::Temporary);
    act.activation.value = act.activation.input;
    LOOM_EXPECT_ERROR(DenseNode::make(array("out", 2), array("in", 3), act), InternalError,
                      {"not a float32 value of a placeholder"});
    LOOM_EXPECT_ERROR(make_layer_array("out", {ConstNode::make(ScalarType::Float32, 1.0)}, l),
                      InternalError, {"1 input values for 3 inputs"});
}

} // namespace
