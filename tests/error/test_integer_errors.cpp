// Integer division by a constant zero (written as a literal, or folding to one), and field
// offsets beyond the documented limit (loom::max_offset).
#include "compiler/ir/ir.hpp"
#include "loom/loom.hpp"
#include "tests/support/cpu_config.hpp"
#include "tests/support/expect_error.hpp"

#include <climits>
#include <cmath>
#include <vector>

using namespace loom;
using loom::test::cpu;

// ---- integer division by zero -------------------------------------------------------------------

TEST(IntegerErrors, DivisionOfAFieldByALiteralZero) {
    auto [s, o] = fields<2>("s, o: int32[2D]");
    LOOM_EXPECT_ERROR(s.center() / 0, UserError,
                      {"integer division by zero", "`s[0, 0] / 0`", "the divisor is the constant 0",
                       "select(d != 0, x / d, 0)"});
    LOOM_EXPECT_ERROR(s.center() % 0, UserError,
                      {"integer division by zero", "`s[0, 0] % 0`", "select(d != 0, x % d, 0)"});
    // A typed zero is as constant as a plain one.
    LOOM_EXPECT_ERROR(s.center() / constant<int>(0), UserError,
                      {"integer division by zero", "s[0, 0] / 0"});
    Field l = field("l: int64[1D]");
    LOOM_EXPECT_ERROR(l.center() % 0, UserError, {"integer division by zero", "l[0] % 0"});
}

TEST(IntegerErrors, DivisionByADivisorThatFoldsToZero) {
    auto [s, o] = fields<2>("s, o: int32[2D]");
    Expr zero = constant<int>(2) - constant<int>(2);
    for (Target t : {Target::CPU, Target::CUDA}) {
        KernelConfig c = cpu("fold_div");
        c.target = t;
        LOOM_EXPECT_ERROR(create_kernel(Assignment(o.center(), s.center() / zero), c), UserError,
                          {"kernel 'fold_div'", "integer division by zero", "assignment 1",
                           "o[0, 0] = s[0, 0] / (2 - 2)", "the divisor `2 - 2` folds to the constant 0",
                           "select(d != 0, x / d, 0)"});
    }
    LOOM_EXPECT_ERROR(create_kernel(Assignment(o.center(), s.center() % zero), cpu("fold_mod")),
                      UserError,
                      {"kernel 'fold_mod'", "integer division by zero", "`s[0, 0] % (2 - 2)`",
                       "select(d != 0, x % d, 0)"});
}

TEST(IntegerErrors, DivisionByZeroThatSimplifyWouldDropIsStillAnError) {
    // (s / 0) * 0 and x - x fold away; the division the user wrote is still undefined.
    auto [s, o, p] = fields<3>("s, o, p: int32[2D]");
    Expr zero = constant<int>(3) * constant<int>(0);
    LOOM_EXPECT_ERROR(create_kernel({Assignment(p.center(), s.center() + 1),
                                     Assignment(o.center(), (s.center() / zero) * 0)},
                                    cpu("dropped_div")),
                      UserError, {"kernel 'dropped_div'", "assignment 2", "integer division by zero"});
    Expr q = s.center() % (constant<int>(1) - 1);
    LOOM_EXPECT_ERROR(create_kernel(Assignment(o.center(), q - q), cpu("dropped_mod")), UserError,
                      {"kernel 'dropped_mod'", "assignment 1", "integer division by zero"});
}

TEST(IntegerErrors, DivisionByZeroInATemporaryAndThroughACast) {
    auto [s, o] = fields<2>("s, o: int32[2D]");
    Field w = field("w: int64[2D]");
    Expr t = temp<std::int32_t>("t");
    LOOM_EXPECT_ERROR(
        create_kernel({Assignment(t, s.center() * 2),
                       Assignment(o.center(), t / (constant<int>(4) - constant<int>(4)))},
                      cpu("temp_div")),
        UserError, {"kernel 'temp_div'", "assignment 2", "integer division by zero"});
    // int64 / int32 zero: the zero is converted (a cast), then folds.
    LOOM_EXPECT_ERROR(create_kernel(Assignment(w.center(), w.center() / (constant<int>(5) - 5) +
                                                               s.center()),
                                    cpu("cast_div")),
                      UserError, {"kernel 'cast_div'", "integer division by zero"});
}

TEST(IntegerErrors, FloatDivisionByZeroStaysLegal) {
    // IEEE: x / 0.0 is +-inf (or nan); the kernel computes it.
    auto [f, g] = fields<2>("f, g: float64[1D]");
    Field s = field("s: int32[1D]");
    KernelFunction k =
        create_kernel({Assignment(g.center(), f.center() / (constant<double>(2) - 2.0) +
                                                  s.center() / 0.0)},
                      cpu("float_div0"))
            .compile();
    std::vector<double> fv = {1.0, -2.0, 3.0};
    std::vector<std::int32_t> sv = {4, -5, 6};
    std::vector<double> gv(3, 0.0);
    k(args("f", host_view(fv, {3}), "s", host_view(sv, {3}), "g", host_view(gv, {3})));
    EXPECT_TRUE(std::isinf(gv[0]) && gv[0] > 0);
    EXPECT_TRUE(std::isinf(gv[1]) && gv[1] < 0);
    EXPECT_TRUE(std::isinf(gv[2]) && gv[2] > 0);
}

// ---- offsets ------------------------------------------------------------------------------------

TEST(IntegerErrors, OffsetBeyondTheLimit) {
    Field s = field("s: float32[2D]");
    LOOM_EXPECT_ERROR((s[{INT_MIN, 0}]), UserError,
                      {"field s", "axis 0", "-2147483648", "at most 1048576",
                       "loom::max_offset"});
    LOOM_EXPECT_ERROR((s[{0, INT_MAX}]), UserError, {"field s", "axis 1", "2147483647"});
    LOOM_EXPECT_ERROR((s[{0, -(1 << 20) - 1}]), UserError, {"field s", "axis 1", "-1048577"});
    // The limit itself is accepted, and its ghost layers are that wide.
    Field o = field("o: float32[2D]");
    Kernel k = create_kernel(Assignment(o.center(), s[{1 << 20, 0}]), cpu("wide_offset"));
    EXPECT_NE(k.source().find("1048576"), std::string::npos);
}

TEST(IntegerErrors, GhostLayerWidthOfRawOffsetsDoesNotOverflow) {
    // IR assembled without Field::operator[] (which checks the limit): the analysis checks too,
    // instead of computing a width of -INT_MIN.
    auto [s, o] = fields<2>("s, o: float32[2D]");
    Expr raw(ir::FieldAccessNode::make(s.ptr(), std::vector<int>{INT_MIN, 0}, {}));
    LOOM_EXPECT_ERROR(create_kernel(Assignment(o.center(), raw), cpu("raw_offset")), UserError,
                      {"kernel 'raw_offset'", "field s", "axis 0", "-2147483648",
                       "at most 1048576"});
}

TEST(IntegerErrors, TypedIntegerConstantOutOfRange) {
    // These were converted from double with undefined behaviour (or wrapped, for int32).
    LOOM_EXPECT_ERROR(constant(ScalarType::Int32, 3e9), UserError,
                      {"constant(int32, 3000000000)", "does not fit int32",
                       "-2147483648..2147483647"});
    LOOM_EXPECT_ERROR(constant(ScalarType::Int64, 9223372036854775807.0), UserError,
                      {"does not fit int64", "constant<std::int64_t>(v)"});
    LOOM_EXPECT_ERROR(constant(ScalarType::Int64, std::nan("")), UserError, {"does not fit int64"});
    EXPECT_NO_THROW(constant(ScalarType::Int64, -9223372036854775808.0));
    EXPECT_NO_THROW(constant(ScalarType::Int32, -2147483648.0));
}
