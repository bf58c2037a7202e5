// Bad field accesses: offset arity, components, vector fields used as scalars, vector sizes.
#include "loom/loom.hpp"
#include "tests/support/expect_error.hpp"

using namespace loom;

TEST(AccessErrors, TooFewOffsets) {
    Field f = field("f: float64[2D]");
    LOOM_EXPECT_ERROR(
        f[{1}], UserError,
        {"field f has 2 spatial dimension(s)", "offset {1} has 1 entries", "e.g. f[{0, 0}]"});
}

TEST(AccessErrors, TooManyOffsets) {
    Field f = field("f: float64[2D]");
    LOOM_EXPECT_ERROR((f[{1, 0, -1}]), UserError,
                      {"field f has 2 spatial dimension(s)", "offset {1, 0, -1} has 3 entries"});
}

TEST(AccessErrors, ComponentOutOfRange) {
    Field u = field("u(3): float64[2D]");
    LOOM_EXPECT_ERROR(u(3), UserError,
                      {"field u", "component 3 is out of range", "size 3", "valid: 0..2"});
    LOOM_EXPECT_ERROR(u(-1), UserError, {"field u", "component -1 is out of range"});
}

TEST(AccessErrors, MatrixComponentOutOfRange) {
    Field m = field("m(2, 3): float32[3D]");
    LOOM_EXPECT_ERROR(m(1, 3), UserError,
                      {"field m", "component 3", "index dimension 1 of size 3", "valid: 0..2"});
}

TEST(AccessErrors, VectorFieldWithoutComponentInExpression) {
    Field u = field("u(3): float64[2D]");
    LOOM_EXPECT_ERROR(Expr(u[{1, 0}]) * 2.0, UserError,
                      {"u[1, 0]", "vector field u", "index shape (3)",
                       "without choosing a component", "u[{1, 0}](i)", "u.vec()"});
}

TEST(AccessErrors, VectorFieldWithoutComponentAsTarget) {
    Field u = field("u(3): float64[2D]");
    LOOM_EXPECT_ERROR(Assignment(u.center(), 1.0), UserError,
                      {"vector field u", "without choosing a component", "u.vec()"});
}

TEST(AccessErrors, TooManyComponents) {
    Field u = field("u(3): float64[2D]");
    LOOM_EXPECT_ERROR(u(1, 2), UserError,
                      {"field u has 1 index dimension(s)", "index shape (3)",
                       "2 component index(es) were given", "u(i)"});
}

TEST(AccessErrors, TooFewComponents) {
    Field m = field("m(3, 3): float64[2D]");
    LOOM_EXPECT_ERROR(m(1), UserError,
                      {"field m has 2 index dimension(s)", "index shape (3, 3)",
                       "1 component index(es) were given"});
}

TEST(AccessErrors, ComponentsOfScalarField) {
    Field f = field("f: float64[2D]");
    LOOM_EXPECT_ERROR(f(1), UserError, {"field f has 0 index dimension(s)", "without components"});
}

TEST(AccessErrors, ComponentsChosenTwice) {
    Field u = field("u(3): float64[2D]");
    LOOM_EXPECT_ERROR(u(1)(2), UserError,
                      {"field u", "components were already chosen (1)", "pick them once"});
}

TEST(AccessErrors, VecOfScalarField) {
    Field f = field("f: float64[2D]");
    LOOM_EXPECT_ERROR(f.vec(), UserError, {"vec()", "f is a scalar field"});
}

TEST(AccessErrors, VecAfterComponents) {
    Field u = field("u(3): float64[2D]");
    LOOM_EXPECT_ERROR(u(1).vec(), UserError, {"vec()", "already has its components chosen"});
}

TEST(AccessErrors, VectorAssignmentSizeMismatch) {
    auto [u, v] = fields<2>("u(3), v(2): float64[2D]");
    LOOM_EXPECT_ERROR(Assignment(u.vec(), v.vec()), UserError,
                      {"vector Assignment", "left side has 3 components", "right side has 2"});
}

TEST(AccessErrors, VectorArithmeticSizeMismatch) {
    auto [u, v] = fields<2>("u(3), v(2): float64[2D]");
    LOOM_EXPECT_ERROR(u.vec() + v.vec(), UserError,
                      {"element-wise '+'", "different sizes: 3 and 2"});
}

TEST(AccessErrors, VecElementOutOfRange) {
    Field u = field("u(3): float64[2D]");
    Vec v = u.vec();
    LOOM_EXPECT_ERROR(v[3], UserError, {"vector element 3 is out of range", "3 elements"});
}

TEST(AccessErrors, CounterAxisOutOfRange) {
    LOOM_EXPECT_ERROR(ctr(4), UserError, {"ctr(4)", "axis must be 0, 1, 2 or 3"});
    LOOM_EXPECT_ERROR(ctr(-1), UserError, {"ctr(-1)"});
}
