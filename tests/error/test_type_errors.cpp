// Type errors: in the expression DSL (thrown while building the expression) and implicit
// conversions that create_kernel refuses when storing into a field or temporary.
#include "loom/loom.hpp"
#include "tests/support/expect_error.hpp"

using namespace loom;

TEST(TypeErrors, NarrowingFloat64IntoFloat32) {
    auto d = field("d: float64[2D]");
    auto s = field("s: float32[2D]");
    LOOM_EXPECT_ERROR(create_kernel(Assignment(s.center(), d.center() * 2.0)), UserError,
                      {"kernel 'kernel'", "assignment 1", "`s[0, 0] = d[0, 0] * 2.0`",
                       "stores a float64 value into field s of type float32",
                       "can lose precision or range", "cast<"});
}

TEST(TypeErrors, NarrowingFloatIntoInt) {
    auto d = field("d: float64[2D]");
    auto i = field("i: int32[2D]");
    LOOM_EXPECT_ERROR(create_kernel(Assignment(i.center(), d.center())), UserError,
                      {"stores a float64 value into field i of type int32", "cast<"});
}

TEST(TypeErrors, NarrowingInt64IntoInt32) {
    auto n = field("n: int64[2D]");
    auto i = field("i: int32[2D]");
    LOOM_EXPECT_ERROR(create_kernel(Assignment(i.center(), n.center())), UserError,
                      {"int64 value into field i of type int32", "can lose precision or range"});
}

TEST(TypeErrors, FloatLiteralIntoIntField) {
    auto i = field("i: int32[2D]");
    LOOM_EXPECT_ERROR(create_kernel(Assignment(i.center(), 1.5)), UserError,
                      {"stores the float value 1.5 into field i (int32)", "assignment 1",
                       "write an integer or cast explicitly"});
}

TEST(TypeErrors, FloatLiteralIntoIntTemporary) {
    auto i = field("i: int64[2D]");
    Expr t = temp<std::int64_t>("t");
    LOOM_EXPECT_ERROR(create_kernel({Assignment(t, 0.5), Assignment(i.center(), t)}), UserError,
                      {"stores the float value 0.5 into temporary t (int64)"});
}

TEST(TypeErrors, BoolStoredIntoFloatField) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    LOOM_EXPECT_ERROR(
        create_kernel(Assignment(f.center(), g.center() > 0)), UserError,
        {"stores a bool value into field f of type float64", "mixes booleans and numbers"});
}

TEST(TypeErrors, BoolMixedWithNumbers) {
    Field f = field("f: float64[2D]");
    Expr cond = f.center() > 0;
    LOOM_EXPECT_ERROR(cond + f.center(), UserError,
                      {"cannot apply '+' to bool and float64", "Booleans do not mix with numbers",
                       "select(cond, 1.0, 0.0)"});
    LOOM_EXPECT_ERROR(cond * 2, UserError, {"cannot apply '*' to bool and int64"});
}

TEST(TypeErrors, BoolOrderedComparison) {
    Field f = field("f: float64[2D]");
    Expr a = f.center() > 0, b = f.center() < 1;
    LOOM_EXPECT_ERROR(a < b, UserError,
                      {"cannot apply '<' to bool and bool", "Only == and != compare booleans"});
}

TEST(TypeErrors, LogicalOpOnNumbers) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    LOOM_EXPECT_ERROR(f.center() && g.center(), UserError,
                      {"'&&' needs two boolean operands", "found float64 and float64",
                       "`f[0, 0]` and `g[0, 0]`", "x > 0 && y > 0"});
    LOOM_EXPECT_ERROR((f.center() > 0) || g.center(), UserError,
                      {"'||' needs two boolean operands", "found bool and float64"});
}

TEST(TypeErrors, NotOnNumber) {
    Field f = field("f: float64[2D]");
    LOOM_EXPECT_ERROR(!Expr(f.center()), UserError,
                      {"'!' needs a boolean", "`f[0, 0]`", "!(v > 0)"});
}

TEST(TypeErrors, NegateBool) {
    Field f = field("f: float64[2D]");
    LOOM_EXPECT_ERROR(-(f.center() > 0), UserError,
                      {"unary '-' needs a number", "f[0, 0] > 0.0", "use '!'"});
}

TEST(TypeErrors, SelectWithNumericCondition) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    LOOM_EXPECT_ERROR(select(f.center(), g.center(), 0.0), UserError,
                      {"select() needs a boolean condition", "`f[0, 0]` of type float64", "v > 0"});
}

TEST(TypeErrors, SelectBranchesBoolAndNumber) {
    Field f = field("f: float64[2D]");
    Expr c = f.center() > 0;
    LOOM_EXPECT_ERROR(select(c, c, 1.0), UserError, {"cannot apply 'select' to bool and float64"});
}

TEST(TypeErrors, MathOnBool) {
    Field f = field("f: float64[2D]");
    LOOM_EXPECT_ERROR(loom::sqrt(f.center() > 0), UserError,
                      {"sqrt() needs a number", "the boolean `f[0, 0] > 0.0`"});
}

TEST(TypeErrors, CastNumberToBool) {
    Field f = field("f: float64[2D]");
    LOOM_EXPECT_ERROR(cast<bool>(f.center()), UserError,
                      {"cannot cast `f[0, 0]` to bool", "v != 0"});
}

TEST(TypeErrors, CastBoolToNumber) {
    Field f = field("f: float64[2D]");
    LOOM_EXPECT_ERROR(cast<float>(f.center() > 0), UserError,
                      {"cannot cast the boolean", "to float32", "select(cond, 1, 0)"});
}

TEST(TypeErrors, IntegerDivisionByZeroOfLiterals) {
    LOOM_EXPECT_ERROR(Expr(7) / Expr(0), UserError, {"integer division by zero", "7 / 0"});
    LOOM_EXPECT_ERROR(Expr(7) % Expr(0), UserError, {"integer division by zero", "7 % 0"});
}

TEST(TypeErrors, UndefinedExpression) {
    Field f = field("f: float64[2D]");
    Expr undefined;
    LOOM_EXPECT_ERROR(f.center() + undefined, UserError,
                      {"operator '+' got an undefined expression", "default-constructed"});
    LOOM_EXPECT_ERROR(Assignment(f.center(), undefined), UserError,
                      {"the right side is an undefined expression"});
}

TEST(TypeErrors, BoolParameter) {
    LOOM_EXPECT_ERROR(
        param<bool>("flag"), UserError,
        {"scalar parameter 'flag' has type bool", "float32, float64, int32 or int64"});
}

// A float16 field reads as float32 (its compute type): storing that into an int32 field is the
// float-to-int conversion that needs a cast, named with the compute type.
TEST(TypeErrors, Float16ReadStoredIntoAnIntegerField) {
    auto [h] = fields<1>("h: float16[2D]");
    auto [i] = fields<1>("i: int32[2D]");
    LOOM_EXPECT_ERROR(create_kernel(Assignment(i.center(), h.center())), UserError,
                      {"stores a float32 value into", "int32", "cast<std::int32_t>"});
}
