// Writes that would race or clobber each other on a GPU, and misuse of temporaries.
#include "loom/loom.hpp"
#include "tests/support/expect_error.hpp"

using namespace loom;

TEST(RaceErrors, InPlaceStencil) {
    Field f = field("f: float64[2D]");
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f.center(), (f[{1, 0}] + f[{-1, 0}]) * 0.5)),
                      UserError,
                      {"kernel 'kernel'", "reads field f at offset(s) [-1, 0], [1, 0]",
                       "writes it at [0, 0]", "in-place stencil", "race", "second field and swap"});
}

TEST(RaceErrors, InPlaceStencilAcrossAssignments) {
    // The neighbour read is in another assignment than the write; still a race.
    auto [f, g] = fields<2>("f, g: float32[3D]");
    LOOM_EXPECT_ERROR(
        create_kernel({Assignment(g.center(), f[{0, 0, 1}]), Assignment(f.center(), g.center())}),
        UserError, {"reads field f at offset(s) [0, 0, 1]", "writes it at [0, 0, 0]"});
}

TEST(RaceErrors, FieldWrittenTwice) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    LOOM_EXPECT_ERROR(
        create_kernel(
            {Assignment(f.center(), g.center()), Assignment(f.center(), g.center() * 2.0)}),
        UserError, {"writes f[0, 0] twice", "assignments 1 and 2", "combine the two", "temporary"});
}

TEST(RaceErrors, ComponentWrittenTwice) {
    auto [u, g] = fields<2>("u(3), g(3): float64[2D]");
    LOOM_EXPECT_ERROR(
        create_kernel({Assignment(u(1), g(0)), Assignment(u(2), g(1)), Assignment(u(1), g(2))}),
        UserError, {"writes u[0, 0] component (1) twice", "assignments 1 and 3"});
}

TEST(RaceErrors, FieldWrittenAtTwoOffsets) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    LOOM_EXPECT_ERROR(
        create_kernel({Assignment(f.center(), g.center()), Assignment(f[{1, 0}], g.center())}),
        UserError,
        {"writes field f at two offsets, [0, 0] and [1, 0]", "neighbouring cells run in parallel",
         "one offset only"});
}

TEST(TemporaryErrors, UsedBeforeDefinition) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    Expr t = temp<double>("t");
    LOOM_EXPECT_ERROR(
        create_kernel({Assignment(f.center(), t * 2.0), Assignment(t, g.center())}), UserError,
        {"reads the temporary 't' in assignment 1", "`f[0, 0] = t * 2.0`",
         "before it is defined in assignment 2", "`t = g[0, 0]`", "move the definition first"});
}

TEST(TemporaryErrors, NeverDefined) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    Expr t = temp<double>("t");
    LOOM_EXPECT_ERROR(
        create_kernel(Assignment(f.center(), g.center() + t)), UserError,
        {"reads the temporary 't' in assignment 1", "no assignment defines it", "param<T>(\"t\")"});
}

TEST(TemporaryErrors, AssignedTwice) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    Expr t = temp<double>("t");
    LOOM_EXPECT_ERROR(create_kernel({Assignment(t, g.center()), Assignment(t, t * 2.0),
                                     Assignment(f.center(), t)}),
                      UserError,
                      {"assigns the temporary 't' twice", "assignment 2", "`t = t * 2.0`",
                       "use a new temporary"});
}

TEST(TemporaryErrors, SameNameIsNotTheSameTemporary) {
    // Temporaries are identified by object: a second temp("t") is a different, undefined one.
    auto [f, g] = fields<2>("f, g: float64[2D]");
    Expr t1 = temp<double>("t"), t2 = temp<double>("t");
    LOOM_EXPECT_ERROR(create_kernel({Assignment(t1, g.center()), Assignment(f.center(), t2)}),
                      UserError,
                      {"reads a temporary named 't' in assignment 2", "different object",
                       "reuse the Expr"});
}

TEST(TemporaryErrors, BadName) {
    LOOM_EXPECT_ERROR(temp<double>("2t"), UserError, {"invalid temporary name '2t'"});
    LOOM_EXPECT_ERROR(temp<double>("threadIdx"), UserError,
                      {"invalid temporary name 'threadIdx'", "reserved word"});
}
