// README.md's flagship snippet, verbatim between the markers (tools/check-guide.py keeps the two
// identical). It launches on a GPU with no fallback, as the README shows it; without a driver its
// compile() throws CudaError and ctest counts the run as skipped (docs/guide/CMakeLists.txt).
// examples/01_jacobi.cpp is the same kernel with the check against a loop and the CPU fallback.
// [guide:readme_flagship]
#include <loom/loom.hpp>
#include <iostream>

int main() {
    using namespace loom;

    // Two 2D float32 fields, declared pystencils-style.
    auto [src, dst] = fields<2>("src, dst: float32[2D]");

    // One Jacobi sweep: the average of the four neighbours.
    auto jacobi = Assignment(dst.center(),
                             0.25 * (src[{1, 0}] + src[{-1, 0}] + src[{0, 1}] + src[{0, -1}]));

    Kernel kernel = create_kernel({jacobi}, {.name = "jacobi"});
    std::cout << kernel.source();         // readable CUDA, each DSL line as a comment

    KernelFunction k = kernel.compile();  // NVRTC -> CUBIN (cached in memory and on disk)
    auto a = DeviceArray<float>::random({4096, 4096}, /*seed=*/42);
    auto b = DeviceArray<float>::zeros({4096, 4096});
    k(args("src", a, "dst", b));          // launch grid inferred from the arrays
    k.block_size = {128, 2, 1};           // takes effect on the next call
}
// [/guide:readme_flagship]
