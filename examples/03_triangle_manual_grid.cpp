// Lesson 3: a non-cuboid iteration space. The triangle [:, x:] starts axis 1 at the counter of
// axis 0, so the grid cannot be inferred: opt into a manual launch grid and set both sizes.
#include <loom/loom.hpp>

#include <iostream>

int main() {
    using namespace loom;
    using namespace loom::counters;

    auto f = field("f: float64[2D]");
    KernelConfig cfg{.name = "triangle", .iteration_slice = Slice{all(), from(x)}};

    // Without a manual launch grid, loom refuses and says what to do.
    try {
        create_kernel(Assignment(f(0), 1), cfg);
    } catch (const UserError& e) {
        std::cout << "As expected: " << e.what() << "\n\n";
    }

    // How the GPU runs it is the schedule's business: create_kernel's third argument.
    Schedule manual{.manual_launch_grid = true};
    Kernel kernel = create_kernel(Assignment(f(0), 1), cfg, manual);
    std::cout << kernel.source() << "\n";
    std::cout << "launch: " << kernel.launch().describe() << "\n";
    return 0;
}
