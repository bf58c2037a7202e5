// Bad KernelConfig and Schedule values and kernels that have nothing to do.
#include "loom/loom.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/nvrtc_check.hpp"

#include <array>

using namespace loom;

namespace {
/// A valid copy kernel, so that only the config can be wrong.
AssignmentCollection copy_kernel() {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    return AssignmentCollection(Assignment(f.center(), g.center()));
}
} // namespace

TEST(ScheduleErrors, BlockZero) {
    Schedule s{.block = std::array<int, 3>{0, 1, 1}};
    LOOM_EXPECT_ERROR(create_kernel(copy_kernel(), {}, s), UserError,
                      {"Schedule::block (0, 1, 1)", "dimension x must be between 1 and 1024"});
}

TEST(ScheduleErrors, BlockTooManyThreads) {
    Schedule s{.block = std::array<int, 3>{64, 32, 1}};
    LOOM_EXPECT_ERROR(create_kernel(copy_kernel(), {}, s), UserError,
                      {"Schedule::block (64, 32, 1) = 2048 threads", "at most 1024 threads"});
}

TEST(ScheduleErrors, BlockZTooLarge) {
    Schedule s{.block = std::array<int, 3>{1, 1, 65}};
    LOOM_EXPECT_ERROR(create_kernel(copy_kernel(), {}, s), UserError,
                      {"Schedule::block (1, 1, 65)", "dimension z must be between 1 and 64"});
}

TEST(ScheduleErrors, BlockNegative) {
    Schedule s{.block = std::array<int, 3>{32, -4, 1}};
    LOOM_EXPECT_ERROR(create_kernel(copy_kernel(), {}, s), UserError,
                      {"Schedule::block (32, -4, 1)", "dimension y must be between 1 and 1024"});
}

TEST(ConfigErrors, FloatIndexType) {
    KernelConfig cfg;
    cfg.index_type = ScalarType::Float32;
    LOOM_EXPECT_ERROR(create_kernel(copy_kernel(), cfg), UserError,
                      {"index_type float32", "must be int32 or int64"});
}

TEST(ConfigErrors, BoolIndexType) {
    KernelConfig cfg;
    cfg.index_type = ScalarType::Bool;
    LOOM_EXPECT_ERROR(create_kernel(copy_kernel(), cfg), UserError,
                      {"index_type bool", "must be int32 or int64"});
}

TEST(ConfigErrors, KernelNameWithSpace) {
    KernelConfig cfg;
    cfg.name = "my kernel";
    LOOM_EXPECT_ERROR(create_kernel(copy_kernel(), cfg), UserError,
                      {"invalid kernel name 'my kernel'", "C identifiers"});
}

TEST(ConfigErrors, KernelNameReserved) {
    KernelConfig cfg;
    cfg.name = "switch";
    LOOM_EXPECT_ERROR(create_kernel(copy_kernel(), cfg), UserError,
                      {"invalid kernel name 'switch'", "reserved word", "'switch_'"});
}

TEST(ConfigErrors, KernelNameEmpty) {
    KernelConfig cfg;
    cfg.name = "";
    LOOM_EXPECT_ERROR(create_kernel(copy_kernel(), cfg), UserError, {"invalid kernel name ''"});
}

TEST(ConfigErrors, NoAssignments) {
    KernelConfig cfg;
    cfg.name = "empty";
    LOOM_EXPECT_ERROR(create_kernel(AssignmentCollection(), cfg), UserError,
                      {"kernel 'empty' has no assignments", "at least one Assignment"});
}

TEST(ConfigErrors, WritesNoField) {
    Field g = field("g: float64[2D]");
    Expr t = temp<double>("t");
    LOOM_EXPECT_ERROR(create_kernel(Assignment(t, g.center() * 2.0)), UserError,
                      {"writes no field", "no effect", "f.center()"});
}

TEST(ConfigErrors, AssignToParameter) {
    Field g = field("g: float64[2D]");
    Expr alpha = param<double>("alpha");
    LOOM_EXPECT_ERROR(
        Assignment(alpha, g.center()), UserError,
        {"cannot assign to the scalar parameter alpha", "f.center()", "temp<T>(\"t\")"});
}

TEST(ConfigErrors, AssignToExpression) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    LOOM_EXPECT_ERROR(Assignment(f.center() + g.center(), 1.0), UserError,
                      {"cannot assign to the expression `f[0, 0] + g[0, 0]`"});
}

TEST(ConfigErrors, AssignToCounter) {
    using namespace loom::counters;
    LOOM_EXPECT_ERROR(Assignment(x, 1), UserError, {"cannot assign to the expression `x`"});
}

TEST(ScheduleErrors, SharedMemoryBudgetUpToABlocksLimit) {
    auto [f, g] = fields<2>("f, g: float32[1D]");
    EXPECT_NO_THROW(create_kernel({Assignment(f.center(), g.center())}, {}, {.shared_memory_budget = 232448}));
    LOOM_EXPECT_ERROR(create_kernel({Assignment(f.center(), g.center())}, {}, {.shared_memory_budget = 232449}),
                      UserError, {"Schedule::shared_memory_budget = 232449 bytes", "at most 232448"});
}

TEST(ScheduleErrors, MaxRegistersOutOfRange) {
    auto [f, g] = fields<2>("f, g: float32[1D]");
    Schedule s{.max_registers = 8};
    LOOM_EXPECT_ERROR(create_kernel({Assignment(f.center(), g.center())}, {}, s), UserError,
                      {"Schedule::max_registers = 8", "16 to 255", "0 to let the compiler choose"});
    s.max_registers = 300;
    LOOM_EXPECT_ERROR(create_kernel({Assignment(f.center(), g.center())}, {}, s), UserError,
                      {"Schedule::max_registers = 300"});
}

namespace {

// Issue 11, weak spots: an int32 kernel with a fixed shape beyond 2^31 elements printed a negative
// loop bound. An explicit int32 index type is refused; an automatic one becomes int64.
TEST(ConfigErrors, Int32IndexTypeWithAFixedShapeBeyondTwoToThe31) {
    Field f = field<float>("big", {50000, 50000});
    Field g = field<float>("big_out", {50000, 50000});
    KernelConfig c;
    c.index_type = ScalarType::Int32;
    LOOM_EXPECT_ERROR(create_kernel({Assignment(g.center(), 2.0 * f.center())}, c), UserError,
                      {"has index_type int32", "field big_out: float32[50000, 50000]",
                       "2500000000 elements", "set index_type to int64"});
}

TEST(ConfigErrors, AutomaticIndexTypeIsInt64ForAFixedShapeBeyondTwoToThe31) {
    Field f = field<float>("big", {50000, 50000});
    Field g = field<float>("big_out", {50000, 50000});
    Kernel k = create_kernel({Assignment(g.center(), 2.0 * f.center())}, {.name = "big_auto"});
    EXPECT_EQ(*k.config().index_type, ScalarType::Int64);
    EXPECT_EQ(k.source().find("-1794967296"), std::string::npos) << k.source();
    EXPECT_NE(k.source().find("index type int64"), std::string::npos) << k.source();
    loom::test::expect_compiles_for_sm90(k);
}

} // namespace
