// parse_ptxas_usage on real NVRTC logs (-Xptxas=-v needs no GPU), so CI sees registers and spills.
#include "runtime/nvrtc_compiler.hpp"
#include "runtime/ptxas_usage.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace loom {
namespace {

// Two entry functions: `staged` uses static shared memory and a barrier; `spills` keeps more
// values live than 24 registers hold.
const char* kSource = R"(
extern "C" __global__ void staged(float* x, int n) {
    __shared__ float s[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    s[threadIdx.x] = i < n ? x[i] : 0.0f;
    __syncthreads();
    if (i < n) x[i] = s[(threadIdx.x + 1) % 256] * 2.0f;
}
extern "C" __global__ void spills(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float v[24];
    #pragma unroll
    for (int j = 0; j < 24; ++j) v[j] = x[i * 24 + j];
    float s = 0;
    #pragma unroll
    for (int j = 0; j < 24; ++j)
        #pragma unroll
        for (int k = 0; k < 24; ++k) s += v[j] * v[k] / (v[(j + k) % 24] + 1.0f);
    if (i < n) x[i] = s;
}
)";

/// The numbers of a usage, for one comparison: registers, stack frame, spill stores, spill loads,
/// barriers, static shared memory.
std::vector<int> numbers(const PtxasUsage& u) {
    return {u.registers,         u.stack_frame_bytes, u.spill_stores_bytes,
            u.spill_loads_bytes, u.barriers,          u.static_shared_bytes};
}

NvrtcResult compile(bool report, std::vector<std::string> extra = {}) {
    NvrtcOptions o;
    o.arch = 90;
    o.report_resources = report;
    o.extra = std::move(extra);
    return nvrtc_compile(kSource, "usage", o);
}

TEST(PtxasUsage, ReportsRegistersSharedMemoryAndBarriers) {
    NvrtcResult r = compile(true);
    std::optional<PtxasUsage> u = parse_ptxas_usage(r.log, "staged");
    ASSERT_TRUE(u) << r.log;
    EXPECT_EQ(u->function, "staged");
    EXPECT_EQ(u->arch, "sm_90");
    EXPECT_GT(u->registers, 0);
    EXPECT_LE(u->registers, 255);
    EXPECT_EQ(numbers(*u), (std::vector<int>{u->registers, 0, 0, 0, 1, 1024}));
    EXPECT_NE(describe(*u).find("1024 bytes static shared memory"), std::string::npos);
}

TEST(PtxasUsage, ReportsSpillsUnderARegisterLimit) {
    NvrtcResult r = compile(true, {"-maxrregcount=24"});
    std::optional<PtxasUsage> u = parse_ptxas_usage(r.log, "spills");
    ASSERT_TRUE(u) << r.log;
    EXPECT_LE(u->registers, 24);
    EXPECT_GT(u->spill_stores_bytes, 0) << r.log;
    EXPECT_GT(u->spill_loads_bytes, 0) << r.log;
    EXPECT_GT(u->stack_frame_bytes, 0) << r.log;
    EXPECT_EQ(u->static_shared_bytes, 0);
    // The other function keeps its own numbers.
    std::optional<PtxasUsage> staged = parse_ptxas_usage(r.log, "staged");
    ASSERT_TRUE(staged);
    EXPECT_EQ(staged->static_shared_bytes, 1024);
}

TEST(PtxasUsage, FirstEntryFunctionWhenUnnamedAndNothingWithoutTheOption) {
    NvrtcResult r = compile(true);
    std::optional<PtxasUsage> first = parse_ptxas_usage(r.log);
    ASSERT_TRUE(first);
    EXPECT_TRUE(first->function == "staged" || first->function == "spills") << first->function;
    EXPECT_FALSE(parse_ptxas_usage(r.log, "absent"));
    EXPECT_FALSE(parse_ptxas_usage(compile(false).log));
    EXPECT_EQ(compile(false).log, "") << "without report_resources a clean compile logs nothing";
}

TEST(PtxasUsage, ParsesALogWrittenOut) {
    const std::string log =
        "ptxas info    : 0 bytes gmem\n"
        "ptxas info    : Compiling entry function 'k' for 'sm_80'\n"
        "ptxas info    : Function properties for k\n"
        "ptxas         .     1072 bytes stack frame, 3596 bytes spill stores, 6188 bytes spill "
        "loads\n"
        "ptxas info    : Used 24 registers, used 0 barriers, 1072 bytes cumulative stack size\n"
        "ptxas info    : Compile time = 742.738 ms\n"
        "ptxas info    : Function properties for _Z6helperPfi\n"
        "ptxas         .     0 bytes stack frame, 360 bytes spill stores, 372 bytes spill loads\n";
    std::optional<PtxasUsage> u = parse_ptxas_usage(log, "k");
    ASSERT_TRUE(u);
    EXPECT_EQ(u->arch, "sm_80");
    EXPECT_EQ(numbers(*u), (std::vector<int>{24, 1072, 3596, 6188, 0, 0}));
}

} // namespace
} // namespace loom
