// What Kernel::spec() hands the runtime, checked without a GPU.
#include "runtime/kernel_loading.hpp"
#include "runtime/nvrtc_compiler.hpp"

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

TEST(KernelSpec, AlignedLanesRunTheKernelCompiledWithoutTheAddressTest) {
    // A 3D 7-point stencil with lanes of 4 floats: arrays from an allocator (16-byte aligned)
    // whose strides are whole 16 bytes run the variant compiled with LOOM_LANES_ALIGNED; a view
    // that starts one element in, a row of 511 floats, or a kernel without lanes do not.
    auto [src, dst] = fields<2>("src, dst: float32[3D]");
    Expr sum = src[{1, 0, 0}] + src[{-1, 0, 0}] + src[{0, 1, 0}] + src[{0, -1, 0}] + src[{0, 0, 1}] + src[{0, 0, -1}];
    Kernel k = create_kernel(Assignment(dst.center(), 0.1 * sum), {.name = "aligned7"}, {.vector_width = 4});
    const KernelSpec s = k.spec();
    ASSERT_NE(s.source.find("loom::load_lanes"), std::string::npos) << s.source;
    auto array = [](CUdeviceptr at, std::int64_t row) {
        ArrayRef a;
        a.ptr = at;
        a.shape = {64, 64, row};
        a.strides = {64 * row, row, 1};
        return a;
    };
    const CUdeviceptr base = 0x7f0000000000ull; // a cudaMalloc-like address: 256-byte aligned
    EXPECT_TRUE(lanes_aligned(s, {array(base, 512), array(base + (1u << 24), 512)}));
    EXPECT_FALSE(lanes_aligned(s, {array(base, 512), array(base + 4, 512)})) << "a view one float in";
    EXPECT_FALSE(lanes_aligned(s, {array(base, 511), array(base + (1u << 24), 511)})) << "rows of 511 floats";
    ArrayRef broadcast = array(base, 512);
    broadcast.strides[0] = 0; // one plane for all: still aligned
    EXPECT_TRUE(lanes_aligned(s, {broadcast, array(base + (1u << 24), 512)}));
    Kernel scalar = create_kernel(Assignment(dst.center(), 0.1 * sum), {.name = "scalar7"}, {.vector_width = 1});
    EXPECT_FALSE(lanes_aligned(scalar.spec(), {array(base, 512), array(base + (1u << 24), 512)}));

    // Both variants compile for sm_90 without a warning; the aligned one has no fallback.
    std::size_t cubin_bytes[2] = {0, 0};
    for (bool aligned : {false, true}) {
        NvrtcResult r = nvrtc_compile(s.source, s.name, cuda_compile_options(s, 90, aligned));
        cubin_bytes[aligned] = r.cubin.size();
        EXPECT_EQ(r.log.find("warning"), std::string::npos) << r.log;
    }
    EXPECT_GT(cubin_bytes[0], 0u);
    EXPECT_LT(cubin_bytes[1], cubin_bytes[0]) << "the aligned variant drops each row's element-by-element fallback";
    const auto all = cuda_compile_options(s, 90, true).all();
    EXPECT_NE(std::find(all.begin(), all.end(), "-DLOOM_LANES_ALIGNED"), all.end());
    const auto plain = cuda_compile_options(s, 90).all();
    EXPECT_EQ(std::find(plain.begin(), plain.end(), "-DLOOM_LANES_ALIGNED"), plain.end());
}

} // namespace
