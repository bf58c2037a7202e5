// Lesson 4: vector fields, component access and memory layouts. The fastest-varying memory axis
// of the written field goes to threadIdx.x, whatever the layout.
#include <loom/loom.hpp>

#include <iostream>

int main() {
    using namespace loom;

    auto rho = field("rho: float64[3D]", Layout::Fortran);
    auto u = field("u(3): float64[3D]", Layout::SoA); // fzyx: components slowest
    auto m = field("m(3): float64[3D]", Layout::SoA);

    // m = rho * u, one assignment per component; u(0) is the x component at the center.
    Kernel kernel = create_kernel({Assignment(m.vec(), rho.center() * u.vec())}, {.name = "momentum"});
    std::cout << kernel.source() << "\n";
    std::cout << "block dimension x walks spatial axis " << kernel.launch().axis_of_dim[0]
              << " (axis 0 is the fastest in fzyx and Fortran layouts)\n";
    return 0;
}
