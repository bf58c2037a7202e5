// KernelFunction::resources() and inspect() for CUDA kernels: the driver's per-function
// attributes, the spills from ptxas' log and the occupancy at the chosen block.
#include "runtime/driver.hpp"
#include "runtime/ptxas_usage.hpp"
#include "tests/gpu/gpu_test_support.hpp"

#include <fmt/format.h>

namespace loom {
namespace {

using gpu_test::jacobi_kernel;

TEST(KernelResources, JacobiUsesRegistersAndReachesSomeOccupancy) {
    LOOM_REQUIRE_GPU();
    Kernel kernel = jacobi_kernel(Layout::C, "resources_jacobi");
    KernelFunction k = kernel.compile();
    KernelResources r = k.resources();
    ASSERT_TRUE(r.has_gpu_resources);
    EXPECT_EQ(r.arch, fmt::format("sm_{}", Context::get().properties().compute_capability()));
    EXPECT_GT(r.registers, 0);
    EXPECT_LE(r.registers, 255);
    EXPECT_GT(r.max_threads_per_block, 0);
    EXPECT_EQ(r.static_shared_bytes, 0u);
    EXPECT_EQ(r.dynamic_shared_bytes, 0u);
    ASSERT_TRUE(r.spill_stores_bytes.has_value())
        << "KernelFunction compiles with -Xptxas=-v; log (" << k.compile_log().size()
        << " bytes):\n" << k.compile_log();
    EXPECT_EQ(*r.spill_stores_bytes, 0);
    EXPECT_EQ(*r.spill_loads_bytes, 0);
    EXPECT_EQ(r.block, k.spec().launch.default_block);
    EXPECT_GT(r.occupancy_blocks_per_sm, 0);
    EXPECT_GT(r.occupancy, 0.0);
    EXPECT_LE(r.occupancy, 1.0);

    // The driver and ptxas agree on the registers.
    std::optional<PtxasUsage> u = parse_ptxas_usage(k.compile_log(), "resources_jacobi");
    ASSERT_TRUE(u) << k.compile_log();
    EXPECT_EQ(u->registers, r.registers);

    // The occupancy is for the current block_size.
    k.block_size = {32, 1, 1};
    KernelResources small = k.resources();
    EXPECT_EQ(small.block, (Dim3{32, 1, 1}));
    EXPECT_GT(small.occupancy, 0.0);
    EXPECT_LE(small.occupancy, 1.0);

    std::string text = k.inspect();
    EXPECT_NE(text.find("KernelFunction resources_jacobi (Target::CUDA"), std::string::npos) << text;
    EXPECT_NE(text.find(fmt::format("{} registers", r.registers)), std::string::npos) << text;
    EXPECT_NE(text.find("occupancy"), std::string::npos) << text;
}

TEST(KernelResources, StagedWeightsUseStaticSharedMemory) {
    LOOM_REQUIRE_GPU();
    nn::Chain mlp(nn::Dense::runtime("hidden", 4, 4, nn::relu), nn::Dense::runtime("output", 4, 4));
    auto [x, y] = fields<2>("x(4), y(4): float32[1D]");
    AssignmentCollection ac;
    mlp.assign(ac, y.vec(), x.vec());
    KernelFunction k = create_kernel(ac, {.name = "resources_mlp"}).compile();
    KernelResources r = k.resources();
    ASSERT_TRUE(r.has_gpu_resources);
    EXPECT_GT(r.static_shared_bytes, 0u) << "the weights are staged in __shared__ arrays";
    EXPECT_GT(r.registers, 0);
    EXPECT_GT(r.occupancy, 0.0);
    EXPECT_LE(r.occupancy, 1.0);
    EXPECT_NE(k.inspect().find(fmt::format("{} bytes static", r.static_shared_bytes)),
              std::string::npos)
        << k.inspect();
}

} // namespace
} // namespace loom
