// Kernels whose fields, parameters and counters do not fit together.
#include "loom/loom.hpp"
#include "tests/support/expect_error.hpp"

using namespace loom;
using namespace loom::counters;

TEST(KernelErrors, MixedDimensionality) {
    Field f = field("f: float64[2D]");
    Field h = field("h: float64[3D]");
    LOOM_EXPECT_ERROR(
        create_kernel(Assignment(f.center(), h.center())), UserError,
        {"mixes fields of different dimensionality", "f is 2D but h is 3D", "one iteration space"});
}

TEST(KernelErrors, TwoFieldsWithTheSameName) {
    Field f1 = field("f: float64[2D]");
    Field f2 = field("f: float32[2D]");
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f1.center(), f2.center())), UserError,
                      {"two different fields named 'f'", "f: float64[2D]", "f: float32[2D]",
                       "reuse the Field object, or rename one"});
}

TEST(KernelErrors, TwoParamsWithTheSameName) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    Expr a1 = param<double>("alpha"), a2 = param<double>("alpha");
    LOOM_EXPECT_ERROR(
        create_kernel(Assignment(f.center(), a1 * g.center() + a2)), UserError,
        {"two different scalar parameters named 'alpha'", "param<T>(\"alpha\")", "reuse the Expr"});
}

TEST(KernelErrors, ParamAndFieldWithTheSameName) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    Expr p = param<double>("g");
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f.center(), g.center() * p)), UserError,
                      {"a scalar parameter and a field both named 'g'", "rename one"});
}

TEST(KernelErrors, CounterZIn2DKernel) {
    Field f = field("f: float64[2D]");
    LOOM_EXPECT_ERROR(create_kernel({Assignment(f.center(), x + z)}), UserError,
                      {"uses the counter z (axis 2) in assignment 1", "the kernel is 2D",
                       "counters go up to axis 1"});
}

TEST(KernelErrors, FixedShapesDiffer) {
    Field f = field("f: float64[64, 64]");
    Field g = field("g: float64[64, 32]");
    LOOM_EXPECT_ERROR(
        create_kernel(Assignment(f.center(), g.center())), UserError,
        {"mixes fixed shapes", "f is [64, 64] but g is [64, 32]", "same spatial shape"});
}

TEST(KernelErrors, ErrorNamesTheKernel) {
    // Every analysis error starts with the kernel's name, so a message from a big program says
    // which create_kernel call failed.
    Field f = field("f: float64[2D]");
    KernelConfig cfg;
    cfg.name = "jacobi_step";
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f.center(), f[{0, 1}]), cfg), UserError,
                      {"kernel 'jacobi_step' reads field f"});
}
