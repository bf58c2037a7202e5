// loom::nn's errors: layer widths, bias sizes, output sizes, input types and vector slices,
// each a UserError naming the layer and both sizes.
#include "tests/support/expect_error.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace loom {
namespace {

nn::Dense square(int n) { return nn::Dense(nn::glorot_uniform(n, n, 0)); }

TEST(NnErrors, InputWidthNamesLayerAndSizes) {
    Field x = field("x(3): float32[1D]");
    LOOM_EXPECT_ERROR(square(4)(x.vec()), UserError,
                      {"Dense layer expects 4 inputs", "the vector has 3"});
    nn::Chain chain(square(4), square(4));
    LOOM_EXPECT_ERROR(chain(x.vec()), UserError,
                      {"Dense layer 0 expects 4 inputs", "the vector has 3"});
    // A slice of the wrong width.
    nn::Chain narrow(nn::relu, nn::Dense(nn::glorot_uniform(3, 3, 0)));
    LOOM_EXPECT_ERROR(narrow(slice(x.vec(), 0, 2)), UserError,
                      {"Dense layer 1 expects 3 inputs", "the vector has 2"});
}

TEST(NnErrors, ChainWidthsCheckedWhenBuilt) {
    LOOM_EXPECT_ERROR(nn::Chain(nn::Dense(nn::glorot_uniform(3, 4, 0)), nn::relu, square(4)),
                      UserError, {"Dense layer 2 expects 4 inputs", "layer 0 (dense0) produces 3"});
    LOOM_EXPECT_ERROR(nn::Chain(std::vector<nn::Layer>{}), UserError, {"no layers"});
}

TEST(NnErrors, BiasSize) {
    LOOM_EXPECT_ERROR(nn::Dense(nn::glorot_uniform(4, 2, 0), {0.1, 0.2, 0.3}), UserError,
                      {"bias has 3 entries", "4 rows"});
    LOOM_EXPECT_ERROR(nn::Dense::from_host(std::vector<double>(8, 0.5), 4, 2, {1.0}), UserError,
                      {"bias has 1 entries", "4 rows"});
}

TEST(NnErrors, WeightShapes) {
    LOOM_EXPECT_ERROR(nn::Matrix({{1.0, 2.0}, {3.0}}), UserError,
                      {"row 1 has 1 entries", "row 0 has 2"});
    LOOM_EXPECT_ERROR(nn::Dense::from_host(std::vector<double>(7, 0.5), 4, 2), UserError,
                      {"7 values", "4 x 2"});
    LOOM_EXPECT_ERROR(nn::glorot_normal(0, 3, 1), UserError, {"0 x 3", "positive"});
    LOOM_EXPECT_ERROR(nn::Dense(nn::Matrix{{1.0, std::nan("")}}), UserError,
                      {"weight (0, 1)", "finite"});
}

TEST(NnErrors, OutputComponents) {
    auto [x, y] = fields<2>("x(4), y(3): float32[1D]");
    nn::Chain chain(square(4), nn::relu);
    AssignmentCollection ac;
    LOOM_EXPECT_ERROR(chain.assign(ac, y.vec(), x.vec(), "mlp"), UserError,
                      {"nn::Chain 'mlp'", "output vector has 3 components", "(relu1) produces 4"});
    // The plain vector assignment names both sizes too.
    LOOM_EXPECT_ERROR(Assignment(y.vec(), chain(x.vec())), UserError,
                      {"left side has 3 components", "right side has 4"});
}

TEST(NnErrors, InputTypes) {
    Field n = field("n(2): int32[1D]");
    LOOM_EXPECT_ERROR(nn::relu(n(0)), UserError, {"nn::relu", "floating-point", "int32"});
    LOOM_EXPECT_ERROR(square(2)(n.vec()), UserError, {"Dense layer: input 0", "int32"});
}

TEST(NnErrors, VectorSlices) {
    Field v = field("v(3): float64[1D]");
    LOOM_EXPECT_ERROR(slice(v.vec(), 1, 5), UserError,
                      {"slice(1, 5)", "3 elements", "out of range"});
    LOOM_EXPECT_ERROR(slice(v.vec(), 2, 2), UserError, {"empty"});
}

TEST(NnErrors, RuntimeLayerDeclaration) {
    LOOM_EXPECT_ERROR(nn::Dense::runtime("2nd layer", 4, 4), UserError,
                      {"'2nd layer' is not an identifier", "2nd layer_W"});
    LOOM_EXPECT_ERROR(nn::Dense::runtime("l0", 0, 4), UserError,
                      {"Dense::runtime('l0')", "0 x 4", "positive"});
    LOOM_EXPECT_ERROR(nn::Dense::runtime("l0", 4, 4, nn::relu, true, ScalarType::Int32), UserError,
                      {"weights of type int32", "float32 or float64"});
    LOOM_EXPECT_ERROR(nn::Dense::runtime("l0", 4, 4, nn::relu, true, ScalarType::Bool), UserError,
                      {"weights of type bool", "float16 or bfloat16 (stored in 16 bits"});
}

TEST(NnErrors, RuntimeLayerArguments) {
    nn::Dense constant_layer = square(2);
    LOOM_EXPECT_ERROR(constant_layer.weight_field(), UserError,
                      {"constant weights", "only a Dense::runtime layer"});
    nn::Dense no_bias = nn::Dense::runtime("nb", 2, 2, nn::identity, /*bias=*/false);
    LOOM_EXPECT_ERROR(no_bias.bias_field(), UserError, {"layer 'nb' was created without a bias"});
}

TEST(NnErrors, RuntimeLayerInputs) {
    Field x = field("x(2): float32[1D]"), d = field("d(2): float64[1D]");
    nn::Dense layer = nn::Dense::runtime("l0", 3, 2);
    LOOM_EXPECT_ERROR(layer(d.vec()), UserError,
                      {"Dense layer ('l0') has float32 weights", "inputs are float64",
                       "create the layer with type float64"});
    LOOM_EXPECT_ERROR(layer(Vec{x(0), d(1)}), UserError,
                      {"inputs 0 and 1 have types float32 and float64", "cast one of them"});
    LOOM_EXPECT_ERROR(layer(Vec{x(0)}), UserError, {"expects 2 inputs", "the vector has 1"});
    // 16-bit weights widen to float32 or float64 inputs.
    nn::Dense halves = nn::Dense::runtime("h0", 3, 2, nn::relu, true, ScalarType::Float16);
    EXPECT_NO_THROW(halves(x.vec()));
    EXPECT_NO_THROW(halves(d.vec()));
}

TEST(NnErrors, RuntimeWeightsOfTheWrongShapeAtCallTime) {
    // The weights are a fixed-shape buffer: a transposed matrix is refused before the call.
    auto [x, y] = fields<2>("x(2), y(3): float32[1D]");
    nn::Dense layer = nn::Dense::runtime("l0", 3, 2);
    AssignmentCollection ac;
    ac.add(Assignment(y.vec(), layer(x.vec())));
    KernelConfig cfg;
    cfg.target = Target::CPU;
    cfg.name = "runtime_shape";
    KernelFunction k = create_kernel(ac, cfg).compile();
    auto X = HostArray<float>::zeros({8, 2}), Y = HostArray<float>::zeros({8, 3});
    auto W = HostArray<float>::zeros({2, 3}), B = HostArray<float>::zeros({3});
    LOOM_EXPECT_ERROR(k(args("x", X, "y", Y, "l0_W", W, "l0_b", B)), UserError,
                      {"l0_W", "[3, 2]"});
    auto W_ok = HostArray<float>::zeros({3, 2});
    LOOM_EXPECT_ERROR(k(args("x", X, "y", Y, "l0_W", W_ok)), UserError, {"l0_b"});
}

TEST(NnErrors, WeightsThatDoNotFitTheChain) {
    nn::Chain mlp(nn::Dense::runtime("l0", 3, 2), nn::Dense::runtime("l1", 1, 3, nn::identity, false));
    const nn::Matrix w0(3, 2), w1(1, 3), wrong(2, 3);
    using W = nn::Weights<HostArray<float>>;
    LOOM_EXPECT_ERROR(W(mlp, {w0}, {{1, 2, 3}}), UserError,
                      {"2 runtime layer(s)", "1 weight matrices and 1 bias vectors"});
    LOOM_EXPECT_ERROR(W(mlp, {wrong, w1}, {{1, 2, 3}, {}}), UserError,
                      {"layer 'l0' is 3 x 2", "weight matrix is 2 x 3"});
    LOOM_EXPECT_ERROR(W(mlp, {w0, w1}, {{1, 2}, {}}), UserError,
                      {"layer 'l0' has a bias of 3", "2 bias value(s)"});
    LOOM_EXPECT_ERROR(W(mlp, {w0, w1}, {{1, 2, 3}, {4}}), UserError,
                      {"layer 'l1' has no bias", "1 bias value(s)"});
    const W ok(mlp, {w0, w1}, {{1, 2, 3}, {}});
    LOOM_EXPECT_ERROR(ok["l1_b"], UserError, {"no array named 'l1_b'"});
}

} // namespace
} // namespace loom
