// Untyped parameters, param("omega"), whose uses cannot give them one type, and default_type
// values that are not a float type.
#include "tests/support/expect_error.hpp"

#include <loom/loom.hpp>

namespace {
using namespace loom;

TEST(UntypedParamErrors, UsesThatDisagree) {
    auto [s, t] = fields<2>("s, t: float32[2D]");
    auto [d, e] = fields<2>("d, e: float64[2D]");
    Expr omega = param("omega");
    LOOM_EXPECT_ERROR(create_kernel({Assignment(t.center(), omega * s.center()),
                                     Assignment(e.center(), omega * d.center())},
                                    {.name = "relax"}),
                      UserError,
                      {"kernel 'relax'", "untyped parameter 'omega'", "as float32 in assignment 1",
                       "as float64 in assignment 2", "e[0, 0] = (float64) omega * d[0, 0]",
                       "a parameter has one type", "param<float>(\"omega\")",
                       "param<double>(\"omega\")"});
}

TEST(UntypedParamErrors, StoreTargetAndPartnerDisagree) {
    // Stored into a float64 field in one place, multiplied with float32 data in another.
    auto [s, t] = fields<2>("s, t: float32[1D]");
    auto d = field("d: float64[1D]");
    Expr omega = param("omega");
    LOOM_EXPECT_ERROR(create_kernel({Assignment(d.center(), omega + 1.0),
                                     Assignment(t.center(), omega * s.center())}),
                      UserError,
                      {"untyped parameter 'omega'", "float32 in assignment 2", "float64 in assignment 1"});
}

TEST(UntypedParamErrors, DisagreementThroughASubexpression) {
    // w = 1 - omega is used with float32 data, so omega is float32 there; float64 elsewhere.
    auto [s, t] = fields<2>("s, t: float32[2D]");
    auto [d, e] = fields<2>("d, e: float64[2D]");
    Expr omega = param("omega");
    AssignmentCollection ac;
    Expr w = ac.subexpression("w", 1.0 - omega);
    ac.add(Assignment(t.center(), w * s.center()));
    ac.add(Assignment(e.center(), omega * d.center()));
    LOOM_EXPECT_ERROR(create_kernel(ac), UserError,
                      {"untyped parameter 'omega'", "float32 in assignment 1", "float64 in assignment 3"});
}

TEST(UntypedParamErrors, ExplicitCastAndPartnerDisagree) {
    auto d = field("d: float64[2D]");
    Expr omega = param("omega");
    LOOM_EXPECT_ERROR(create_kernel(Assignment(d.center(), cast<float>(omega) + omega * d.center())),
                      UserError, {"untyped parameter 'omega'", "float32", "float64", "cast<T>"});
}

TEST(UntypedParamErrors, InASliceBound) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    Expr n = param("n");
    KernelConfig cfg{.iteration_slice = Slice{range(n, end), all()}};
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f.center(), g.center()), cfg), UserError,
                      {"untyped parameter 'n'", "bound of axis 0", "param<std::int64_t>(\"n\")"});
}

TEST(UntypedParamErrors, StoredIntoAnIntegerField) {
    // An untyped parameter is a float (default_type); storing it into int32 needs a cast.
    auto i = field("i: int32[2D]");
    Expr n = param("n");
    LOOM_EXPECT_ERROR(create_kernel(Assignment(i.center(), n)), UserError,
                      {"float64 value into field i of type int32", "cast<std::int32_t>"});
}

TEST(DefaultTypeErrors, NotAFloatType) {
    auto [f, g] = fields<2>("f, g: float32[2D]");
    KernelConfig cfg{.name = "k", .default_type = ScalarType::Int32};
    LOOM_EXPECT_ERROR(create_kernel(Assignment(f.center(), g.center()), cfg), UserError,
                      {"kernel 'k' has default_type int32", "must be float32 or float64"});
}

} // namespace
