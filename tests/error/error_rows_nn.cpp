// Error table rows: loom::nn, the layers of tiny networks inside kernels.
#include "tests/error/error_rows.hpp"

#include <loom/loom.hpp>
#include <loom/nn.hpp>

#include <cmath>
#include <limits>

namespace loom::test {

namespace {
nn::Dense square(int n) {
    return nn::Dense(nn::glorot_uniform(n, n, 0));
}
Vec input(const char* spec = "x(3): float32[1D]") {
    return field(spec).vec();
}
} // namespace

std::vector<ErrorRow> nn_rows() {
    const auto U = Expect::User;
    return {
        // ---- constant layers ----
        {"dense_input_width",
         [] { square(4)(input()); },
         U,
         {"Dense layer expects 4 inputs", "the vector has 3"}},
        {"chain_input_width",
         [] { nn::Chain(square(4), square(4))(input()); },
         U,
         {"Dense layer 0 expects 4 inputs", "the vector has 3"}},
        {"chain_widths_disagree",
         [] { nn::Chain(nn::Dense(nn::glorot_uniform(3, 4, 0)), nn::relu, square(4)); },
         U,
         {"Dense layer 2 expects 4 inputs", "layer 0 (dense0) produces 3"}},
        {"chain_without_layers",
         [] { nn::Chain(std::vector<nn::Layer>{}); },
         U,
         {"nn::Chain", "no layers", "pass at least one nn::Dense layer or activation"}},
        {"dense_bias_size",
         [] {
             nn::Dense(nn::glorot_uniform(4, 2, 0), {0.1, 0.2, 0.3});
         },
         U,
         {"bias has 3 entries", "4 rows"}},
        {"dense_from_host_value_count",
         [] { nn::Dense::from_host(std::vector<double>(7, 0.5), 4, 2); },
         U,
         {"7 values", "4 x 2"}},
        {"dense_nan_weight",
         [] {
             nn::Dense(nn::Matrix{{1.0, std::nan("")}});
         },
         U,
         {"weight (0, 1)", "finite"}},
        {"dense_inf_bias",
         [] {
             nn::Dense(nn::Matrix(2, 2), {1.0, std::numeric_limits<double>::infinity()});
         },
         U,
         {"bias 1 is inf", "biases must be finite"}},
        {"dense_empty_matrix",
         [] { nn::Dense(nn::Matrix()); },
         U,
         {"Dense layer", "the weight matrix is empty", "a default nn::Matrix"}},
        {"dense_int_input",
         [] { square(2)(input("n(2): int32[1D]")); },
         U,
         {"Dense layer: input 0", "int32"}},
        {"matrix_ragged_rows",
         [] {
             nn::Matrix({{1.0, 2.0}, {3.0}});
         },
         U,
         {"row 1 has 1 entries", "row 0 has 2"}},
        {"matrix_negative_size",
         [] { nn::Matrix(-1, 2); },
         U,
         {"nn::Matrix", "a -1 x 2 matrix", "both sizes must be positive"}},
        {"matrix_value_count",
         [] {
             nn::Matrix(2, 2, {1, 2, 3});
         },
         U,
         {"nn::Matrix", "3 values for a 2 x 2 matrix", "it needs 4"}},
        {"matrix_without_rows",
         [] { nn::Matrix(std::vector<std::vector<double>>{}); },
         U,
         {"nn::Matrix", "the matrix is empty", "at least one row and column"}},
        {"matrix_element_outside",
         [] { (void)nn::Matrix(2, 2)(5, 5); },
         U,
         {"element (5, 5) is outside the 2 x 2 matrix"}},
        {"initializer_zero_size", [] { nn::glorot_normal(0, 3, 1); }, U, {"0 x 3", "positive"}},
        // ---- activations and vectors ----
        {"activation_of_an_int",
         [] { nn::relu(field("n(2): int32[1D]")(0)); },
         U,
         {"nn::relu", "floating-point", "int32"}},
        {"leaky_relu_nan_slope",
         [] { nn::leaky_relu(std::nan(""))(input()); },
         U,
         {"nn::leaky_relu(nan)", "the slope must be a finite number", "0.01"}},
        {"leaky_relu_infinite_slope",
         [] { nn::leaky_relu(-std::numeric_limits<double>::infinity())(input()); },
         U,
         {"nn::leaky_relu(-inf)", "must be a finite number"}},
        {"vector_slice_outside",
         [] { slice(input("v(3): float64[1D]"), 1, 5); },
         U,
         {"slice(1, 5)", "3 elements", "out of range", "0 <= begin < end <= 3"}},
        {"vector_slice_empty",
         [] { slice(input("v(3): float64[1D]"), 2, 2); },
         U,
         {"slice(2, 2)", "empty"}},
        {"chain_output_width",
         [] {
             auto [x, y] = fields<2>("x(4), y(3): float32[1D]");
             AssignmentCollection ac;
             nn::Chain(square(4), nn::relu).assign(ac, y.vec(), x.vec(), "mlp");
         },
         U,
         {"nn::Chain 'mlp'", "output vector has 3 components", "(relu1) produces 4"}},
        {"chain_assign_name_not_an_identifier",
         [] {
             auto [x, y] = fields<2>("x(2), y(2): float32[1D]");
             AssignmentCollection ac;
             nn::Chain(square(2), nn::relu, square(2)).assign(ac, y.vec(), x.vec(), "my mlp");
         },
         U,
         {"nn::Chain::assign", "the name 'my mlp' is not an identifier", "my mlp_dense0_0",
          "letters, digits and underscores"}},
        // ---- runtime layers ----
        {"runtime_layer_bad_name",
         [] { nn::Dense::runtime("2nd layer", 4, 4); },
         U,
         {"'2nd layer' is not an identifier", "2nd layer_W"}},
        {"runtime_layer_zero_size",
         [] { nn::Dense::runtime("l0", 0, 4); },
         U,
         {"Dense::runtime('l0')", "0 x 4", "positive"}},
        {"runtime_layer_int_weights",
         [] { nn::Dense::runtime("l0", 4, 4, nn::relu, true, ScalarType::Int32); },
         U,
         {"weights of type int32", "float32 or float64"}},
        {"constant_layer_has_no_weight_field",
         [] { square(2).weight_field(); },
         U,
         {"constant weights", "only a Dense::runtime layer"}},
        {"runtime_layer_without_bias_field",
         [] { nn::Dense::runtime("nb", 2, 2, nn::identity, false).bias_field(); },
         U,
         {"layer 'nb' was created without a bias"}},
        {"runtime_layer_input_type",
         [] { nn::Dense::runtime("l0", 3, 2)(input("d(2): float64[1D]")); },
         U,
         {"Dense layer ('l0') has float32 weights", "inputs are float64",
          "create the layer with type float64"}},
        {"runtime_layer_mixed_input_types",
         [] {
             Field x = field("x(2): float32[1D]"), d = field("d(2): float64[1D]");
             nn::Dense::runtime("l0", 3, 2)(Vec{x(0), d(1)});
         },
         U,
         {"inputs 0 and 1 have types float32 and float64", "cast one of them"}},
        {"two_runtime_layers_one_name",
         [] {
             auto [x, y] = fields<2>("x(2), y(2): float32[1D]");
             nn::Chain c(nn::Dense::runtime("l0", 2, 2), nn::Dense::runtime("l0", 2, 2));
             create_kernel(Assignment(y.vec(), c(x.vec())), {.name = "twice"});
         },
         U,
         {"kernel 'twice'", "two different fields named 'l0_", "rename one"}},
        // ---- weights for runtime layers ----
        {"weights_count",
         [] {
             nn::Chain mlp(nn::Dense::runtime("l0", 3, 2),
                           nn::Dense::runtime("l1", 1, 3, nn::identity, false));
             nn::Weights<HostArray<float>>(mlp, {nn::Matrix(3, 2)}, {{1, 2, 3}});
         },
         U,
         {"2 runtime layer(s)", "1 weight matrices and 1 bias vectors"}},
        {"weights_transposed",
         [] {
             nn::Chain mlp(nn::Dense::runtime("l0", 3, 2));
             nn::Weights<HostArray<float>>(mlp, {nn::Matrix(2, 3)}, {{1, 2, 3}});
         },
         U,
         {"layer 'l0' is 3 x 2", "weight matrix is 2 x 3"}},
        {"weights_bias_size",
         [] {
             nn::Chain mlp(nn::Dense::runtime("l0", 3, 2));
             nn::Weights<HostArray<float>>(mlp, {nn::Matrix(3, 2)}, {{1, 2}});
         },
         U,
         {"layer 'l0' has a bias of 3", "2 bias value(s)"}},
        {"weights_bias_for_a_layer_without",
         [] {
             nn::Chain mlp(nn::Dense::runtime("l1", 1, 3, nn::identity, false));
             nn::Weights<HostArray<float>>(mlp, {nn::Matrix(1, 3)}, {{4}});
         },
         U,
         {"layer 'l1' has no bias", "1 bias value(s)"}},
        {"weights_unknown_array",
         [] {
             nn::Chain mlp(nn::Dense::runtime("l1", 1, 3, nn::identity, false));
             const nn::Weights<HostArray<float>> w(mlp, {nn::Matrix(1, 3)}, {{}});
             (void)w["l1_b"];
         },
         U,
         {"no array named 'l1_b'"}},
    };
}

} // namespace loom::test
