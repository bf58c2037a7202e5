// What Kernel::spec() hands the runtime, checked without a GPU.
#include <loom/loom.hpp>

#include <gtest/gtest.h>

namespace {
using namespace loom;

TEST(KernelSpec, AutomaticIndexTypeCarriesAnInt64Variant) {
    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    Kernel k = create_kernel(Assignment(dst.center(), src[{1, 0}] + src[{-1, 0}]));
    KernelSpec s = k.spec();
    EXPECT_EQ(s.index_type, DType::Int32);
    EXPECT_NE(s.source.find("const int size_0"), std::string::npos) << s.source;
    ASSERT_NE(s.wide, nullptr);
    EXPECT_EQ(s.wide->index_type, DType::Int64);
    EXPECT_NE(s.wide->source.find("const long long size_0"), std::string::npos) << s.wide->source;
    EXPECT_EQ(s.wide->params.size(), s.params.size());
    for (std::size_t i = 0; i < s.params.size(); ++i) EXPECT_EQ(s.wide->params[i].name, s.params[i].name);
    EXPECT_NE(k.inspect().find("Index type: int32 (automatic"), std::string::npos);
}

TEST(KernelSpec, ExplicitIndexTypeHasNoVariant) {
    auto [src, dst] = fields<2>("src, dst: float64[3D]");
    Kernel k = create_kernel(Assignment(dst.center(), 2 * src.center()), {.index_type = ScalarType::Int64});
    EXPECT_EQ(k.spec().index_type, DType::Int64);
    EXPECT_EQ(k.spec().wide, nullptr);
}

TEST(KernelSpec, FieldsParametersAndLaunchMatchTheGeneratedSignature) {
    auto u = field("u(3): float32[2D]", Layout::SoA);
    auto m = field("m(3): float32[2D]");
    Expr alpha = param<double>("alpha");
    Kernel k = create_kernel(Assignment(m(1), cast<float>(alpha * u(2))),
                             {.index_type = ScalarType::Int64});
    KernelSpec s = k.spec();
    ASSERT_EQ(s.fields.size(), 2u);
    EXPECT_EQ(s.fields[0].name, "m");
    EXPECT_TRUE(s.fields[0].written);
    EXPECT_EQ(s.fields[0].unit_stride_axis, 2) << "C layout: the component axis is fastest";
    EXPECT_EQ(s.fields[1].name, "u");
    EXPECT_FALSE(s.fields[1].written);
    EXPECT_EQ(s.fields[1].unit_stride_axis, 0) << "fzyx: spatial axis 0 is fastest";
    EXPECT_EQ(s.fields[1].layout, "fzyx");
    // Signature: m, u, size_0, size_1, m_stride_0, m_stride_1, u_stride_1, u_stride_2, alpha.
    std::vector<std::string> names;
    for (auto& p : s.params) names.push_back(p.name);
    EXPECT_EQ(names, (std::vector<std::string>{"m", "u", "size_0", "size_1", "m_stride_0",
                                               "m_stride_1", "u_stride_1", "u_stride_2", "alpha"}));
    EXPECT_EQ(s.params.back().role, ArgRole::Scalar);
    EXPECT_EQ(s.params.back().dtype, DType::Float64);
    // The extents callable evaluates the launch description: sizes 10 x 20.
    std::vector<ScalarValue> values(s.params.size());
    values[2].i = 10;
    values[3].i = 20;
    Dim3 ext = s.launch.extents(values);
    EXPECT_EQ(ext, (Dim3{20, 10, 1})) << "x walks axis 1; y: 10 rows, one per thread (pointwise)";
    EXPECT_EQ(s.launch.cells_per_thread, (Dim3{1, 1, 1}));
}

} // namespace
