// Dense nodes with constant weights, built directly in the IR (the frontend keeps constant
// layers as expressions, but a layer array may hold constants): through the whole pipeline on
// the CPU target, against a double reference on random data with the outputs poisoned first;
// the CUDA version is compiled by NVRTC.
#include "compiler/ir/ir.hpp"
#include "tests/support/cpu_config.hpp"
#include "tests/support/nvrtc_check.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

namespace loom {
namespace {
using namespace ir;

TEST(DenseNode, ConstantWeightsRunOnTheCpu) {
    constexpr int in = 70, out = 5; // two runs of products per output (64 and 6)
    constexpr std::int64_t cells = 37;
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    DenseLayer l;
    l.outputs = out;
    l.inputs = in;
    l.type = ScalarType::Float64;
    for (int k = 0; k < out * in; ++k) l.weights.push_back(u(rng) / 8);
    for (int k = 0; k < out; ++k) l.bias.push_back(u(rng));
    l.activation.name = "relu";
    l.activation.input = VarNode::make(ScalarType::Float64, "sum", VarRole::Placeholder);
    l.activation.value = nn::relu(l.activation.input);

    auto [x, y] = fields<2>("x(70), y(5): float64[1D]");
    BufferPtr a = make_layer_array("c", x.vec().elements(), l);
    std::vector<Expr> loads;
    for (int k = 0; k < out; ++k) loads.push_back(BufferLoadNode::make(a, ConstNode::make_int(ScalarType::Int32, k)));
    AssignmentCollection ac;
    ac.add(Assignment(y.vec(), Vec(loads)));
    loom::test::expect_compiles_for_sm90(create_kernel(ac, {.name = "constant_dense"}));

    KernelFunction k = create_kernel(ac, test::cpu("constant_dense")).compile();
    std::vector<double> xs(std::size_t(cells * in));
    for (double& v : xs) v = u(rng);
    auto X = HostArray<double>::from_host(xs, {cells, in});
    auto Y = HostArray<double>::zeros({cells, out});
    Y.fill(std::numeric_limits<double>::quiet_NaN());
    k(args("x", X, "y", Y));
    const std::vector<double> got = Y.to_host();
    for (std::int64_t c = 0; c < cells; ++c)
        for (int i = 0; i < out; ++i) {
            double s = l.bias[std::size_t(i)];
            for (int j = 0; j < in; ++j) s += l.weights[std::size_t(i * in + j)] * xs[std::size_t(c * in + j)];
            ASSERT_NEAR(got[std::size_t(c * out + i)], s > 0 ? s : 0.0, 1e-12) << "cell " << c << " output " << i;
        }
}

} // namespace
} // namespace loom
