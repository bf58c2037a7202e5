// Lesson 9: the seed's neural image model, forward pass, in ONE kernel. A 2D grid of 14-element
// latent features (32 x 32 cells, so 33 x 33 corners) is bilinearly interpolated at every pixel
// of a 512 x 512 image and fed through a tiny MLP, 14 -> 32 -> 32 -> 3 (ReLU, ReLU, sigmoid),
// whose outputs are the pixel's RGB. Every intermediate value stays on chip.
//
// What is new here:
//   - the feature grid is a *buffer*: a field read at computed positions, grid.at({i, j})(c),
//     not at offsets from the current cell, so it has its own shape;
//   - the layers have *runtime weights* (nn::Dense::runtime): kernel arguments l0_W, l0_b, ...
//     that the GPU kernel copies into shared memory once per block;
//   - the same kernel with Schedule::tensor_cores = TensorCores::Float16: each warp computes the
//     MLP for 32 pixels together with mma.sync, the weights and the activations between layers
//     rounded to float16, the sums in float32. The CPU target rounds the same values in software;
//     both are compared with the float32 loop within 4e-3 (a float16 rounding is 2^-11 relative;
//     the outputs, sigmoids in (0, 1), move by less than a quarter of what reaches them).
// The kernel runs on the CPU target and (if there is one) on the GPU, both are compared with a
// hand-written loop, and the image is written to image_model.ppm (or the path in argv[1]).
#include <loom/loom.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <vector>

namespace {

constexpr int kImage = 512, kCells = 32, kFeatures = 14, kHidden = 32;
constexpr int kCorners = kCells + 1;

struct Layer {
    int out, in;
    loom::nn::Matrix matrix;  // out x in, for the kernel's arguments
    std::vector<double> bias;
    std::vector<float> w, b;  // the same in float32, for the reference loop (w row-major)
};

/// Seeded weights for one layer: loom's Glorot initializer, small biases.
Layer make_layer(int out, int in, std::uint64_t seed) {
    Layer l{out, in, loom::nn::glorot_uniform(out, in, seed), {}, {}, {}};
    for (int i = 0; i < out; ++i) l.bias.push_back(0.05 * double((i * 7 + int(seed)) % 5 - 2));
    l.w.assign(l.matrix.values().begin(), l.matrix.values().end());
    l.b.assign(l.bias.begin(), l.bias.end());
    return l;
}

/// The model as a plain loop over one pixel (the reference), in float32 like the kernel.
void reference_pixel(const std::vector<float>& grid, const Layer* layers, int px, int py,
                     float* rgb) {
    const float u = (float(px) + 0.5f) * (float(kCells) / kImage);
    const float v = (float(py) + 0.5f) * (float(kCells) / kImage);
    const int i = std::min(int(std::floor(u)), kCells - 1), j = std::min(int(std::floor(v)), kCells - 1);
    const float fu = u - float(i), fv = v - float(j);
    auto g = [&](int a, int b, int c) { return grid[(std::size_t(a) * kCorners + b) * kFeatures + c]; };
    std::vector<float> h(kFeatures);
    for (int c = 0; c < kFeatures; ++c)
        h[c] = (1 - fu) * (1 - fv) * g(i, j, c) + fu * (1 - fv) * g(i + 1, j, c) +
               (1 - fu) * fv * g(i, j + 1, c) + fu * fv * g(i + 1, j + 1, c);
    for (int k = 0; k < 3; ++k) {
        const Layer& L = layers[k];
        std::vector<float> o(std::size_t(L.out));
        for (int r = 0; r < L.out; ++r) {
            float acc = L.b[r];
            for (int c = 0; c < L.in; ++c) acc += L.w[std::size_t(r) * L.in + c] * h[c];
            o[r] = k < 2 ? std::max(acc, 0.0f) : 1.0f / (1.0f + std::exp(-acc));
        }
        h = o;
    }
    std::copy(h.begin(), h.end(), rgb);
}

double max_difference(const std::vector<float>& got, const std::vector<float>& want) {
    double worst = 0.0;
    for (std::size_t k = 0; k < got.size(); ++k) {
        if (std::isnan(got[k])) return INFINITY; // an unwritten pixel
        worst = std::max(worst, std::fabs(double(got[k]) - want[k]));
    }
    return worst;
}

void write_ppm(const std::string& path, const std::vector<float>& rgb) {
    std::ofstream f(path, std::ios::binary);
    f << "P6\n" << kImage << " " << kImage << "\n255\n";
    for (float v : rgb) f.put(char(std::lround(std::clamp(v, 0.0f, 1.0f) * 255.0f)));
}

} // namespace

int main(int argc, char** argv) {
    using namespace loom;
    using namespace loom::counters; // x, y: the pixel
    const double tolerance = 1e-5; // sigmoid outputs in (0, 1); compilers may contract to FMAs

    // ---- The model in the DSL ----
    Field grid = field("grid(14): float32[33, 33]");  // latent features at the cell corners
    Field image = field("image(3): float32[512, 512]");
    const nn::Chain mlp(nn::Dense::runtime("l0", kHidden, kFeatures, nn::relu),
                        nn::Dense::runtime("l1", kHidden, kHidden, nn::relu),
                        nn::Dense::runtime("l2", 3, kHidden, nn::sigmoid));

    // The pixel's position in grid cells, its cell (i, j) and the position inside it (fu, fv).
    const Expr scale = constant<float>(float(kCells) / kImage);
    const Expr u = (cast<float>(x) + 0.5f) * scale, v = (cast<float>(y) + 0.5f) * scale;
    AssignmentCollection ac;
    const Expr i = ac.subexpression("i", min(cast<std::int32_t>(u), kCells - 1));
    const Expr j = ac.subexpression("j", min(cast<std::int32_t>(v), kCells - 1));
    const Expr fu = ac.subexpression("fu", u - cast<float>(i));
    const Expr fv = ac.subexpression("fv", v - cast<float>(j));
    // Bilinear interpolation of the four corners' features: a 14-vector per pixel.
    const Vec feature = (1.0f - fu) * (1.0f - fv) * grid.at({i, j}).vec() +
                        fu * (1.0f - fv) * grid.at({i + 1, j}).vec() +
                        (1.0f - fu) * fv * grid.at({i, j + 1}).vec() +
                        fu * fv * grid.at({i + 1, j + 1}).vec();
    mlp.assign(ac, image.vec(), feature, "mlp");

    // ---- Data: random features, seeded weights, the reference image ----
    const std::vector<float> features =
        HostArray<float>::random({kCorners, kCorners, kFeatures}, /*seed=*/3).to_host();
    const Layer layers[3] = {make_layer(kHidden, kFeatures, 1), make_layer(kHidden, kHidden, 2),
                             make_layer(3, kHidden, 3)};
    std::vector<float> expected(std::size_t(kImage) * kImage * 3);
    for (int px = 0; px < kImage; ++px)
        for (int py = 0; py < kImage; ++py)
            reference_pixel(features, layers, px, py, &expected[(std::size_t(px) * kImage + py) * 3]);

    // The layers' runtime weights as arrays named l0_W, l0_b, ... (nn::Weights uploads them).
    const std::vector<nn::Matrix> matrices = {layers[0].matrix, layers[1].matrix, layers[2].matrix};
    const std::vector<std::vector<double>> biases = {layers[0].bias, layers[1].bias, layers[2].bias};

    // ---- First on the CPU ----
    KernelFunction on_cpu = create_kernel(ac, {.target = Target::CPU, .name = "image_model"}).compile();
    auto host_image = HostArray<float>::zeros({kImage, kImage, 3});
    host_image.fill(std::numeric_limits<float>::quiet_NaN()); // poison: every pixel is written
    auto host_grid = HostArray<float>::from_host(features, {kCorners, kCorners, kFeatures});
    const nn::Weights<HostArray<float>> host_weights(mlp, matrices, biases);
    Args cpu_args = args("image", host_image, "grid", host_grid);
    host_weights.add_to(cpu_args);
    on_cpu(cpu_args);
    std::vector<float> rgb = host_image.to_host();
    const double cpu_error = max_difference(rgb, expected);
    std::printf("CPU: %dx%d image from a %dx%d grid of %d features through MLP 14 -> 32 -> 32 -> 3;"
                " max |cpu - loop| = %.3g (%s)\n", kImage, kImage, kCells, kCells, kFeatures,
                cpu_error, cpu_error < tolerance ? "ok" : "MISMATCH");
    if (!(cpu_error < tolerance)) return 1;

    // ---- Then on the GPU ----
    // A kernel's image on the GPU: device arrays (the image poisoned), the weights uploaded.
    auto run_on_gpu = [&](const Kernel& kernel) {
        KernelFunction on_gpu = kernel.compile();
        auto device_image = DeviceArray<float>::zeros({kImage, kImage, 3});
        device_image.fill(std::numeric_limits<float>::quiet_NaN());
        auto device_grid = DeviceArray<float>::from_host(features, {kCorners, kCorners, kFeatures});
        const nn::Weights<DeviceArray<float>> device_weights(mlp, matrices, biases);
        Args gpu_args = args("image", device_image, "grid", device_grid);
        device_weights.add_to(gpu_args);
        on_gpu(gpu_args);
        on_gpu.synchronize();
        return device_image.to_host();
    };
    Kernel gpu_kernel = create_kernel(ac, {.name = "image_model"});
    std::cout << gpu_kernel.source() << "\n";
    if (cuda_available()) {
        rgb = run_on_gpu(gpu_kernel);
        const double gpu_error = max_difference(rgb, expected);
        std::printf("GPU (%s): %zu bytes of weights and features staged in shared memory per "
                    "block; max |gpu - loop| = %.3g (%s)\n",
                    device_info().name.c_str(), gpu_kernel.launch().shared_bytes + gpu_kernel.launch().static_shared_bytes,
                    gpu_error, gpu_error < tolerance ? "ok" : "MISMATCH");
        if (!(gpu_error < tolerance)) return 1;
    } else {
        std::string cubin = gpu_kernel.cubin(90);
        std::printf("The CUDA kernel compiles to a %zu-byte sm_90 CUBIN. No GPU here (%s): the "
                    "image comes from the CPU target.\n", cubin.size(),
                    cuda_unavailable_reason().c_str());
    }
    // ---- On tensor cores: float16 operands, float32 sums ----
    const double tensor_tolerance = 4e-3;
    const Schedule tensor{.tensor_cores = TensorCores::Float16};
    KernelFunction tensor_cpu = create_kernel(ac, {.target = Target::CPU, .name = "image_model_tc"}, tensor).compile();
    host_image.fill(std::numeric_limits<float>::quiet_NaN());
    tensor_cpu(cpu_args);
    const double tensor_cpu_error = max_difference(host_image.to_host(), expected);
    std::printf("tensor cores, float16 operands, as the CPU target rounds them: max |cpu - loop| = %.3g (%s)\n",
                tensor_cpu_error, tensor_cpu_error < tensor_tolerance ? "ok" : "MISMATCH");
    if (!(tensor_cpu_error < tensor_tolerance)) return 1;
    Kernel tensor_kernel = create_kernel(ac, {.name = "image_model_tc"}, tensor);
    if (cuda_available()) {
        const double error = max_difference(run_on_gpu(tensor_kernel), expected);
        std::printf("tensor cores on the GPU (%s, %s): max |gpu - loop| = %.3g (%s)\n", device_info().name.c_str(),
                    tensor_kernel.schedule().describe().c_str(), error, error < tensor_tolerance ? "ok" : "MISMATCH");
        if (!(error < tensor_tolerance)) return 1;
    } else {
        std::printf("The tensor-core kernel compiles to a %zu-byte sm_90 CUBIN.\n", tensor_kernel.cubin(90).size());
    }

    const std::string path = argc > 1 ? argv[1] : "image_model.ppm";
    write_ppm(path, rgb);
    std::printf("wrote %s\n", path.c_str());
    return 0;
}
