// The public API as a user sees it: <loom/loom.hpp> alone, and `using namespace loom`. Nothing of
// the compiler's internals may be complete or collide with a user's own names.
#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <type_traits>

// A user's own names that the IR also uses. If `using namespace loom` pulled in loom::ir, their
// unqualified uses below would be ambiguous and this file would not compile.
enum class BinaryOp { Plus };
enum class VarRole { Mine };
struct VarNode {};
struct LoweredKernel {};
static int simplify(int x) { return x + 1; }

using namespace loom;

namespace {

template <typename T, typename = void>
struct is_complete : std::false_type {};
template <typename T>
struct is_complete<T, std::void_t<decltype(sizeof(T))>> : std::true_type {};

TEST(PublicApi, UsingNamespaceLoomPullsInNoCompilerInternals) {
    EXPECT_EQ(simplify(1), 2);
    EXPECT_EQ(static_cast<int>(BinaryOp::Plus), 0);
    EXPECT_EQ(static_cast<int>(VarRole::Mine), 0);
    EXPECT_TRUE(std::is_empty_v<VarNode>);
    EXPECT_TRUE(std::is_empty_v<LoweredKernel>);
}

TEST(PublicApi, IrNodesAndThePipelineAreIncompleteForUsers) {
    // The handles are complete; what they point to is not part of the API.
    EXPECT_TRUE(is_complete<Expr>::value);
    EXPECT_TRUE(is_complete<Stmt>::value);
    EXPECT_FALSE(is_complete<loom::ir::BinaryNode>::value);
    EXPECT_FALSE(is_complete<loom::ir::ForNode>::value);
    EXPECT_FALSE(is_complete<loom::ir::LoweredKernel>::value);
}

TEST(PublicApi, AKernelFromThePublicHeadersAlone) {
    auto [f, g] = fields<2>("f, g: float64[1D]");
    Kernel k = create_kernel({Assignment(g.center(), 2.0 * f[{1}] + f[{-1}])},
                             {.target = Target::CPU, .name = "public_api"});
    EXPECT_NE(k.source().find("public_api"), std::string::npos);
    EXPECT_EQ(k.parameters().front().role, ParamRole::FieldPointer);
    EXPECT_NE(to_string(k.ir()).find("for"), std::string::npos);
    EXPECT_STREQ(version_string, library_version());
    EXPECT_EQ(std::string(version_string),
              std::to_string(LOOM_VERSION_MAJOR) + "." + std::to_string(LOOM_VERSION_MINOR) + "." +
                  std::to_string(LOOM_VERSION_PATCH));
}

} // namespace
