// Lesson 5: scalar parameters, named subexpressions and automatic common-subexpression
// elimination. Run with LOOM_DEBUG=passes to see the IR after every pass.
#include <loom/loom.hpp>

#include <iostream>

int main() {
    using namespace loom;

    auto [u, v, speed, dir] = fields<4>("u, v, speed, dir: float32[2D]");
    Expr scale = param<float>("scale");

    AssignmentCollection ac;
    Expr energy = ac.subexpression("energy", u.center() * u.center() + v.center() * v.center());
    // sqrt(energy) appears twice: loom computes it once.
    ac.add(Assignment(speed.center(), scale * sqrt(energy)));
    ac.add(Assignment(dir.center(), u.center() / (sqrt(energy) + 1e-6)));

    Kernel kernel = create_kernel(ac, {.name = "flow_speed"});
    std::cout << kernel.inspect();
    return 0;
}
