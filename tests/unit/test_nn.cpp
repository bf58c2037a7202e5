// loom::nn on the CPU target: vector slicing, every activation, Dense and Chain in float32 and
// float64, compiled by the host compiler and compared with hand-written loops on fresh random
// inputs (outputs start poisoned); and the seeded weight initializers.
#include "tests/support/cpu_config.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace loom {
namespace {

constexpr std::int64_t kCells = 257; // odd, so no loop happens to divide evenly

template <typename T>
const char* type_spec() { return std::is_same_v<T, float> ? "float32" : "float64"; }
template <typename T>
double tolerance() { return std::is_same_v<T, float> ? 2e-5 : 1e-12; }

/// Fresh values in [-range, range], the test's own generator.
template <typename T>
std::vector<T> fresh_values(std::size_t n, std::uint64_t seed, double range = 4.0) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> u(-range, range);
    std::vector<T> v(n);
    for (T& x : v) x = static_cast<T>(u(rng));
    return v;
}

using test::cpu;

/// Runs `ac` on x (cells x in_width) into y (cells x out_width, poisoned first) and returns y.
template <typename T>
std::vector<T> run_cpu(const AssignmentCollection& ac, const std::string& name,
                       const std::vector<T>& x, int in_width, int out_width) {
    KernelFunction k = create_kernel(ac, cpu(name)).compile();
    auto in = HostArray<T>::from_host(x, {kCells, in_width});
    auto out = HostArray<T>::zeros({kCells, out_width});
    out.fill(std::numeric_limits<T>::quiet_NaN());
    k(args("x", in, "y", out));
    return out.to_host();
}

template <typename T>
::testing::AssertionResult close(const std::vector<T>& got, const std::vector<T>& want) {
    if (got.size() != want.size()) return ::testing::AssertionFailure() << "size differs";
    for (std::size_t k = 0; k < got.size(); ++k) {
        const double g = got[k], w = want[k];
        if (!(std::fabs(g - w) <= tolerance<T>() * std::max(1.0, std::fabs(w))))
            return ::testing::AssertionFailure()
                   << "value " << k << ": got " << g << ", expected " << w;
    }
    return ::testing::AssertionSuccess();
}

// ---- Vectors ----------------------------------------------------------------------------------

TEST(NnVec, SliceAndConcat) {
    Field v = field("v(5): float64[1D]");
    Vec all = v.vec();
    Vec mid = slice(all, 1, 4), tail = slice(all, -2, 5);
    ASSERT_EQ(mid.size(), 3);
    ASSERT_EQ(tail.size(), 2);
    EXPECT_EQ(to_string(mid[0]), to_string(all[1]));
    EXPECT_EQ(to_string(tail[1]), to_string(all[4]));
    Vec joined = concat(mid, Vec{v(0), constant<double>(2.0)});
    ASSERT_EQ(joined.size(), 5);
    EXPECT_EQ(to_string(joined[2]), to_string(all[3]));
    EXPECT_EQ(to_string(joined[3]), to_string(all[0]));
}

// ---- Activations ------------------------------------------------------------------------------

template <typename T>
struct ActivationCase {
    nn::Activation act;
    std::function<T(T)> reference;
};

template <typename T>
std::vector<ActivationCase<T>> activation_cases() {
    using std::exp, std::log, std::tanh, std::erf, std::fabs;
    const T half = T(0.5), one = T(1), zero = T(0);
    return {
        {nn::identity, [](T x) { return x; }},
        {nn::relu, [=](T x) { return x > zero ? x : zero; }},
        {nn::leaky_relu(0.1), [=](T x) { return x > zero ? x : T(0.1) * x; }},
        {nn::sigmoid, [=](T x) { return one / (one + exp(-x)); }},
        {nn::tanh, [](T x) { return tanh(x); }},
        {nn::gelu,
         [=](T x) {
             const T k = static_cast<T>(std::sqrt(2.0 / M_PI)), c = static_cast<T>(0.044715);
             return half * x * (one + tanh(k * (x + c * x * x * x)));
         }},
        {nn::gelu_erf, [=](T x) { return half * x * (one + erf(x * static_cast<T>(M_SQRT1_2))); }},
        {nn::silu, [=](T x) { return x / (one + exp(-x)); }},
        {nn::softplus, [=](T x) { return std::max(x, zero) + log(one + exp(-fabs(x))); }},
    };
}

template <typename T>
void check_activations() {
    auto cases = activation_cases<T>();
    const int n = static_cast<int>(cases.size());
    auto [x, y] = fields<2>(std::string("x(1), y(") + std::to_string(n) + "): " + type_spec<T>() +
                            "[1D]");
    AssignmentCollection ac;
    for (int k = 0; k < n; ++k) {
        Expr e = cases[k].act(x(0));
        EXPECT_EQ(e.type(), scalar_type_of<T>()) << cases[k].act.name();
        ac.add(Assignment(y(k), e));
    }
    std::vector<T> in = fresh_values<T>(kCells, 11);
    std::vector<T> got = run_cpu<T>(ac, std::string("acts_") + type_spec<T>(), in, 1, n);
    std::vector<T> want(got.size());
    for (std::int64_t c = 0; c < kCells; ++c)
        for (int k = 0; k < n; ++k) want[c * n + k] = cases[k].reference(in[c]);
    for (int k = 0; k < n; ++k) {
        std::vector<T> g, w;
        for (std::int64_t c = 0; c < kCells; ++c) {
            g.push_back(got[c * n + k]);
            w.push_back(want[c * n + k]);
        }
        EXPECT_TRUE(close(g, w)) << cases[k].act.name() << " in " << type_spec<T>();
    }
}

TEST(NnActivation, AllFloat32) { check_activations<float>(); }
TEST(NnActivation, AllFloat64) { check_activations<double>(); }

TEST(NnActivation, AppliesElementWiseToVectors) {
    Field x = field("x(3): float32[1D]");
    Vec r = nn::relu(x.vec());
    ASSERT_EQ(r.size(), 3);
    EXPECT_EQ(to_string(r[2]), to_string(nn::relu(x(2))));
    EXPECT_EQ(nn::leaky_relu(0.25).name(), "leaky_relu(0.25)");
}

TEST(NnActivation, SoftplusIsStableForLargeInputs) {
    // log(1 + exp(x)) overflows to inf at x = 100 in float32; the stable form gives x.
    Field x = field("x: float32[1D]");
    AssignmentCollection ac{Assignment(field("y: float32[1D]").center(), nn::softplus(x.center()))};
    KernelFunction k = create_kernel(ac, cpu("softplus_big")).compile();
    auto in = HostArray<float>::from_host({100.0f, -100.0f, 0.0f}, {3});
    auto out = HostArray<float>::zeros({3});
    k(args("x", in, "y", out));
    auto y = out.to_host();
    EXPECT_FLOAT_EQ(y[0], 100.0f);
    EXPECT_GE(y[1], 0.0f);
    EXPECT_LT(y[1], 1e-30f);
    EXPECT_FLOAT_EQ(y[2], std::log(2.0f));
}

// ---- Dense and Chain --------------------------------------------------------------------------

/// y = W x + b, then act, in the order Dense promises: j ascending, bias last.
template <typename T>
std::vector<T> dense_reference(const nn::Matrix& w, const std::vector<double>& b,
                               const std::function<T(T)>& act, const std::vector<T>& x) {
    std::vector<T> y(static_cast<std::size_t>(w.rows()));
    for (int i = 0; i < w.rows(); ++i) {
        T acc = static_cast<T>(w(i, 0)) * x[0];
        for (int j = 1; j < w.cols(); ++j) acc = acc + static_cast<T>(w(i, j)) * x[j];
        if (!b.empty()) acc = acc + static_cast<T>(b[i]);
        y[i] = act(acc);
    }
    return y;
}

std::vector<double> random_bias(int n, std::uint64_t seed) {
    return fresh_values<double>(static_cast<std::size_t>(n), seed, 0.5);
}

template <typename T>
void check_chain() {
    // 4 -> 6 (tanh) -> 5 (relu, as a bare activation layer after Dense) -> 3 (no bias).
    nn::Matrix w1 = nn::glorot_uniform(6, 4, 1), w2 = nn::he_normal(5, 6, 2),
               w3 = nn::glorot_normal(3, 5, 3);
    std::vector<double> b1 = random_bias(6, 4), b2 = random_bias(5, 5);
    nn::Chain chain(nn::Dense(w1, b1, nn::tanh), nn::Dense(w2, b2), nn::relu, nn::Dense(w3));

    auto [x, y] = fields<2>(std::string("x(4), y(3): ") + type_spec<T>() + "[1D]");
    AssignmentCollection named;
    chain.assign(named, y.vec(), x.vec(), "mlp");
    AssignmentCollection plain{Assignment(y.vec(), chain(x.vec()))};
    Kernel k = create_kernel(named, cpu("mlp"));
    EXPECT_NE(k.source().find("mlp_dense0_5"), std::string::npos) << k.source();
    EXPECT_NE(k.source().find("mlp_relu2_4"), std::string::npos) << k.source();

    std::vector<T> in = fresh_values<T>(kCells * 4, 21);
    std::vector<T> want(kCells * 3);
    auto ident = [](T v) { return v; };
    auto relu = [](T v) { return v > T(0) ? v : T(0); };
    auto tanh = [](T v) { return std::tanh(v); };
    for (std::int64_t c = 0; c < kCells; ++c) {
        std::vector<T> v(in.begin() + c * 4, in.begin() + c * 4 + 4);
        v = dense_reference<T>(w1, b1, tanh, v);
        v = dense_reference<T>(w2, b2, relu, v); // the bare relu, fused here
        v = dense_reference<T>(w3, {}, ident, v);
        std::copy(v.begin(), v.end(), want.begin() + c * 3);
    }
    EXPECT_TRUE(close(run_cpu<T>(named, std::string("mlp_named_") + type_spec<T>(), in, 4, 3),
                      want));
    EXPECT_TRUE(close(run_cpu<T>(plain, std::string("mlp_plain_") + type_spec<T>(), in, 4, 3),
                      want));
}

TEST(NnDense, ChainFloat32) { check_chain<float>(); }
TEST(NnDense, ChainFloat64) { check_chain<double>(); }

TEST(NnDense, AWideConstantLayerStaysFarBelowTheDepthLimit) {
    // 1500 inputs: runs of 64 products in order, the runs added as a balanced tree, so the
    // layer nests about 64 + log2(24) levels (one per input would pass max_expression_depth).
    constexpr int kIn = 1500;
    nn::Matrix w = nn::glorot_uniform(2, kIn, 7);
    std::vector<double> b = random_bias(2, 8);
    auto [x, y] = fields<2>("x(1500), y(2): float64[1D]");
    Vec out = nn::Dense(w, b)(x.vec());
    EXPECT_LE(out[0].depth(), 64 + 8);
    AssignmentCollection ac{Assignment(y.vec(), out)};

    std::vector<double> in = fresh_values<double>(kCells * kIn, 31);
    std::vector<double> want(kCells * 2);
    for (std::int64_t c = 0; c < kCells; ++c)
        for (int i = 0; i < 2; ++i) {
            double acc = b[std::size_t(i)];
            for (int j = 0; j < kIn; ++j) acc += w(i, j) * in[std::size_t(c * kIn + j)];
            want[std::size_t(c * 2 + i)] = acc;
        }
    EXPECT_TRUE(close(run_cpu<double>(ac, "wide_dense", in, kIn, 2), want));
}

TEST(NnDense, WeightsAreConstantsOfTheInputType) {
    Field x = field("x(2): float32[1D]");
    nn::Dense d({{0.1, 0.2}, {0.3, 0.4}, {0.5, 0.6}}, {1.0, 2.0, 3.0}, nn::sigmoid);
    Vec y = d(x.vec());
    ASSERT_EQ(y.size(), 3);
    for (const Expr& e : y.elements()) EXPECT_EQ(e.type(), ScalarType::Float32);
    EXPECT_EQ(d.inputs(), 2);
    EXPECT_EQ(d.outputs(), 3);
}

TEST(NnDense, FromHostMatchesMatrix) {
    const double w[6] = {1, 2, 3, 4, 5, 6}, b[2] = {0.5, -0.5};
    nn::Dense a = nn::Dense::from_host(w, 2, 3, b, nn::relu);
    nn::Dense c = nn::Dense::from_host(std::vector<double>(w, w + 6), 2, 3, {0.5, -0.5}, nn::relu);
    EXPECT_EQ(a.weights().values(), c.weights().values());
    EXPECT_EQ(a.weights()(1, 0), 4.0);
    EXPECT_EQ(a.bias(), c.bias());
    Field x = field("x(3): float64[1D]");
    EXPECT_EQ(to_string(a(x.vec())[1]), to_string(c(x.vec())[1]));
}

// ---- Initializers -----------------------------------------------------------------------------

TEST(NnInit, DeterministicPerSeed) {
    using Init = nn::Matrix (*)(int, int, std::uint64_t);
    for (Init f : {Init(nn::glorot_uniform), Init(nn::glorot_normal), Init(nn::he_uniform),
                   Init(nn::he_normal)}) {
        nn::Matrix a = f(7, 5, 42), b = f(7, 5, 42), c = f(7, 5, 43);
        EXPECT_EQ(a.rows(), 7);
        EXPECT_EQ(a.cols(), 5);
        EXPECT_EQ(a.values(), b.values());
        EXPECT_NE(a.values(), c.values());
    }
}

void check_statistics(const nn::Matrix& m, double expected_std, double limit) {
    double sum = 0, sq = 0, worst = 0;
    for (double v : m.values()) {
        sum += v;
        sq += v * v;
        worst = std::max(worst, std::fabs(v));
    }
    const double n = static_cast<double>(m.values().size());
    const double mean = sum / n, std = std::sqrt(sq / n - mean * mean);
    EXPECT_NEAR(mean, 0.0, 0.02 * expected_std * 5);
    EXPECT_NEAR(std, expected_std, 0.03 * expected_std);
    if (limit > 0) {
        EXPECT_LE(worst, limit);
    }
}

TEST(NnInit, Statistics) {
    const int out = 300, in = 200;
    const double glorot_limit = std::sqrt(6.0 / (in + out)), he_limit = std::sqrt(6.0 / in);
    check_statistics(nn::glorot_uniform(out, in, 1), glorot_limit / std::sqrt(3.0), glorot_limit);
    check_statistics(nn::he_uniform(out, in, 2), he_limit / std::sqrt(3.0), he_limit);
    check_statistics(nn::glorot_normal(out, in, 3), std::sqrt(2.0 / (in + out)), 0);
    check_statistics(nn::he_normal(out, in, 4), std::sqrt(2.0 / in), 0);
}

} // namespace
} // namespace loom
