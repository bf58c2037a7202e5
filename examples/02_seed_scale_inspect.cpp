// Lesson 2: pystencils' first GPU example, f = 2 * g, and everything `inspect()` tells you:
// the parameters the kernel takes and how its launch grid follows from the array sizes.
#include <loom/loom.hpp>

#include <iostream>

int main() {
    using namespace loom;

    auto [f, g] = fields<2>("f, g: float64[3D]");
    Kernel kernel = create_kernel(Assignment(f.center(), 2 * g.center()), {.name = "scale"});
    std::cout << kernel.inspect() << "\n";

    // The launch description is data: extents are expressions over the kernel's size arguments.
    const LaunchDescription& launch = kernel.launch();
    std::cout << "threads needed along x: " << launch.extents[0] << "\n";
    std::cout << "default block: (" << launch.default_block[0] << ", " << launch.default_block[1]
              << ", " << launch.default_block[2] << ")\n";
    return 0;
}
