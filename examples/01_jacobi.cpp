// Lesson 1 (the README's flagship): a 2D Jacobi sweep, from DSL to readable CUDA to an sm_90
// CUBIN. Launching on a GPU comes with loom's runtime; this lesson stops at the CUBIN.
#include <loom/loom.hpp>

#include "runtime/nvrtc_compiler.hpp"

#include <iostream>

int main() {
    using namespace loom;

    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    auto jacobi = Assignment(dst.center(),
                             0.25 * (src[{1, 0}] + src[{-1, 0}] + src[{0, 1}] + src[{0, -1}]));

    Kernel kernel = create_kernel({jacobi}, {.name = "jacobi"});
    std::cout << kernel.inspect() << "\n";

    // NVRTC needs no GPU: compile for Hopper (sm_90) to show the source is valid CUDA.
    NvrtcResult r = nvrtc_compile(kernel.source(), kernel.name(), NvrtcOptions{.arch = 90});
    std::cout << "NVRTC " << nvrtc_version() << " compiled '" << kernel.name() << "' to a "
              << r.cubin.size() << "-byte sm_90 CUBIN.\n";
    std::cout << "Launching it needs the loom runtime (KernelFunction), which is not part of this "
                 "build yet: skipping the launch.\n";
    return 0;
}
