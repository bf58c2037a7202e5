// Plain numbers that do not fit their destination, and slice indices outside fixed shapes.
#include "tests/support/expect_error.hpp"

#include <loom/loom.hpp>

namespace {
using namespace loom;

TEST(LiteralErrors, IntegerTooLargeForInt32Field) {
    auto i = field("i: int32[2D]");
    LOOM_EXPECT_ERROR(create_kernel(Assignment(i.center(), 3000000000LL)), UserError,
                      {"stores the value 3000000000", "field i (int32)", "does not fit"});
}

TEST(LiteralErrors, DoubleTooLargeForFloat32Field) {
    auto s = field("s: float32[1D]");
    LOOM_EXPECT_ERROR(create_kernel(Assignment(s.center(), 1e300)), UserError,
                      {"1e+300", "field s (float32)", "does not fit"});
}

TEST(LiteralErrors, SpecDimensionCountOverflow) {
    LOOM_EXPECT_ERROR(fields("f: float64[4294967298D]"), UserError,
                      {"4294967298D: loom supports 1D to 4D fields", "^"});
}

TEST(LiteralErrors, TemporaryReadInItsOwnDefinition) {
    auto f = field("f: float64[1D]");
    Expr t = temp<double>("t");
    LOOM_EXPECT_ERROR(create_kernel({Assignment(t, t + 1.0), Assignment(f.center(), t)}), UserError,
                      {"reads the temporary 't' in its own definition", "assignment 1"});
}

TEST(LiteralErrors, SingleIndexOutsideFixedShape) {
    auto [f, g] = fields<2>("f, g: float64[8, 8]");
    KernelConfig cfg{.iteration_slice = Slice{at(8), all()}};
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f.center(), g.center()), cfg), UserError,
                      {"start 8 on axis 0", "outside the fixed size 8", "0..7"});
}

TEST(LiteralErrors, SliceStartBeforeFixedShape) {
    auto [f, g] = fields<2>("f, g: float64[8, 8]");
    KernelConfig cfg{.iteration_slice = Slice{range(-10, end), all()}};
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f.center(), g.center()), cfg), UserError,
                      {"start -10 on axis 0", "outside the fixed size 8", "-8..-1"});
}

TEST(LiteralErrors, FixedShapeOverloadHint) {
    LOOM_EXPECT_ERROR(field<float>("h", 64), UserError,
                      {"64 spatial dimensions", "std::vector<std::int64_t>{64}"});
}

TEST(LiteralAccepted, NeighbourComponentThatIsNeverWrittenIsNoRace) {
    // u(0) is written, u(1) only read at a neighbour: the element sets are disjoint.
    auto u = field("u(2): float64[2D]");
    EXPECT_NO_THROW(create_kernel(Assignment(u(0), u[{0, 1}](1))));
}

TEST(LiteralAccepted, IntegerSelectOfPlainNumbersIntoInt32) {
    auto [i, g] = fields<2>("i, g: int32[2D]");
    Kernel k = create_kernel(Assignment(i.center(), select(g.center() > 0, 1, 0)));
    EXPECT_NE(k.source().find("> 0 ? 1 : 0"), std::string::npos) << k.source();
}

TEST(LiteralAccepted, BooleanTemporaryReusedInSelects) {
    auto [a, b, g] = fields<3>("a, b, g: float32[2D]");
    AssignmentCollection ac;
    Expr mask = ac.subexpression("mask", g.center() > 0);
    ac.add(Assignment(a.center(), select(mask, g.center(), 0.0)));
    ac.add(Assignment(b.center(), select(mask, 1.0, 2.0)));
    Kernel k = create_kernel(ac);
    EXPECT_NE(k.source().find("const bool mask"), std::string::npos) << k.source();
}

} // namespace
