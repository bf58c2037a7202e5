// Block reductions (Schedule::reduce_in_block), pass by pass: a sum over an index axis through
// lower_reductions, map_to_gpu's block-per-cell form and reduce_in_blocks, the IR printed before
// and after each; the launch read off it; the schedules refused. The kernels run against
// references in tests/unit/test_reductions.cpp (CPU) and tests/gpu/test_reductions_gpu.cpp.
#include "compiler/passes/block_reductions.hpp"
#include "compiler/passes/gpu_mapping.hpp"
#include "compiler/passes/launch_grid.hpp"
#include "compiler/passes/lower_reductions.hpp"
#include "compiler/passes/warp_lockstep.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/lowered_nest.hpp"
#include "tests/support/nvrtc_check.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

namespace loom {
namespace {

using namespace loom::ir;
using test::lower_nest;

TEST(BlockReductions, RowSumPassByPass) {
    Field u = make_field("u", ScalarType::Float32, 1, {{40}});
    Field out = make_field("out", ScalarType::Float32, 1);
    IndexVar k("k", 40);
    Schedule s;
    s.reduce_in_block = true;
    s.block = std::array<int, 3>{64, 1, 1};
    auto l = lower_nest({{out.center(), sum(k, u(k)), "out = sum(k, u(k))"}},
                        {.name = "row_sum", .index_type = ScalarType::Int32}, s);
    // lower_reductions: an accumulator and a serial loop, as on any target.
    Stmt serial = lower_reductions(l.space.nest);
    EXPECT_EQ(to_string(serial), R"(for x in [0, size_0) step 1:  # axis 0
  # out = sum(k, u(k))
  let sum_k: float32 = 0.0f
  for k in [0, 40) step 1:  # axis -1
    sum_k = sum_k + u[x, k]
  out[x] = sum_k
)");
    // map_to_gpu, a block per cell: the cell's counter from its block, the store on one thread.
    ThreadMapping m = plan_thread_mapping(*l.analysis.primary, s);
    EXPECT_TRUE(m.block_per_cell);
    GpuMapped mapped = map_to_gpu(serial, m);
    EXPECT_EQ(to_string(mapped.body), R"(for block_x in [0, size_0) step 1:  # axis 0, gpu block.x
  let x: int32 = block_x
  # out = sum(k, u(k))
  let sum_k: float32 = 0.0f
  for k in [0, 40) step 1:  # axis -1
    sum_k = sum_k + u[x, k]
  for thread in [0, 1) step 1:  # axis -1, gpu thread.x
    out[x] = sum_k
)");
    // reduce_in_blocks with 64 threads, two warps: each thread sums every 64th term; each warp
    // combines its 32 sums by shuffles and its lane 0 stores the warp's; a barrier; the first
    // warp combines the two (its lanes past them take 0) into the last slot; a barrier; every
    // thread reads the result.
    Stmt reduced = reduce_in_blocks(mapped.body, 64);
    EXPECT_EQ(to_string(reduced), R"(for block_x in [0, size_0) step 1:  # axis 0, gpu block.x
  let x: int32 = block_x
  # out = sum(k, u(k))
  # sum_k: thread t of 64 combines terms t, t + 64, ...; each warp its threads' by shuffles, then the first warp the 2 warps'
  alloc float32 sum_k_partial[3] (shared):
    for warp in [0, 2) step 1:  # axis -1, gpu warp.x
      for lane in [0, 32) step 1:  # axis -1, warp lane.x
        let thread: int32 = warp * 32 + lane
        let sum_k: float32 = 0.0f
        for k in [thread, 40) step 64:  # axis -1
          sum_k = sum_k + u[x, k]
        let sum_k_warp: float32 = warp_reduce(+, sum_k)
        if lane == 0:
          sum_k_partial[warp] = sum_k_warp
    barrier
    for warp in [0, 1) step 1:  # axis -1, gpu warp.x
      for lane in [0, 32) step 1:  # axis -1, warp lane.x
        let sum_k_part: float32 = lane < 2 ? sum_k_partial[min(lane, 1)] : 0.0f
        let sum_k_all: float32 = warp_reduce(+, sum_k_part)
        if lane == 0:
          sum_k_partial[2] = sum_k_all
    barrier
    let sum_k: float32 = sum_k_partial[2]
    for thread in [0, 1) step 1:  # axis -1, gpu thread.x
      out[x] = sum_k
)");
    // The launch: exactly the block, one block per cell.
    LaunchDescription L = infer_launch_grid(reduced, s, ScalarType::Int32);
    EXPECT_TRUE(L.exact_block);
    EXPECT_EQ(L.default_block, (std::array<int, 3>{64, 1, 1}));
    EXPECT_EQ(to_string(L.extents[0]), "size_0 * 64");
    EXPECT_EQ(L.static_shared_bytes, 16u) << "three partials, 16-byte aligned";

    // warp_lockstep, for the CPU: the first warp's lanes split at its reduction, every lane's
    // sum into an array, the shuffles' five rounds on it (ping-pong between two arrays), then
    // the lanes again from the result.
    const std::string cpu = to_string(warp_lockstep(reduced));
    EXPECT_NE(cpu.find(R"(    for warp in [0, 2) step 1:  # axis -1, gpu warp.x
      alloc float32 sum_k_warp_lanes[32] (local):
        for lane in [0, 32) step 1:  # axis -1, warp lane.x
          let thread: int32 = warp * 32 + lane
          let sum_k: float32 = 0.0f
          for k in [thread, 40) step 64:  # axis -1
            sum_k = sum_k + u[x, k]
          sum_k_warp_lanes[lane] = sum_k
        alloc float32 sum_k_warp_swap[32] (local):
          for i in [0, 32) step 1:  # axis -1
            sum_k_warp_swap[i] = sum_k_warp_lanes[i] + sum_k_warp_lanes[i / 16 % 2 == 0 ? i + 16 : i - 16]
          for i in [0, 32) step 1:  # axis -1
            sum_k_warp_lanes[i] = sum_k_warp_swap[i] + sum_k_warp_swap[i / 8 % 2 == 0 ? i + 8 : i - 8]
          for i in [0, 32) step 1:  # axis -1
            sum_k_warp_swap[i] = sum_k_warp_lanes[i] + sum_k_warp_lanes[i / 4 % 2 == 0 ? i + 4 : i - 4]
          for i in [0, 32) step 1:  # axis -1
            sum_k_warp_lanes[i] = sum_k_warp_swap[i] + sum_k_warp_swap[i / 2 % 2 == 0 ? i + 2 : i - 2]
          for i in [0, 32) step 1:  # axis -1
            sum_k_warp_swap[i] = sum_k_warp_lanes[i] + sum_k_warp_lanes[i % 2 == 0 ? i + 1 : i - 1]
          for lane in [0, 32) step 1:  # axis -1, warp lane.x
            let sum_k_warp: float32 = sum_k_warp_swap[lane]
            if lane == 0:
              sum_k_partial[warp] = sum_k_warp
)"), std::string::npos) << cpu;
    EXPECT_EQ(cpu.find("warp_reduce"), std::string::npos) << cpu;
}

TEST(BlockReductions, TheCudaKernelShufflesAndCompiles) {
    Field u = make_field("u", ScalarType::Float32, 1, {{700}});
    Field out = make_field("out", ScalarType::Float32, 1);
    IndexVar k("k", 700);
    Schedule s;
    s.reduce_in_block = true;
    s.block = std::array<int, 3>{256, 1, 1};
    Kernel kernel = create_kernel(Assignment(out.center(), max(k, u(k)) + sum(k, u(k))), {.name = "shuffles"}, s);
    const std::string src = kernel.source();
    EXPECT_NE(src.find("#include \"loom/warp.cuh\""), std::string::npos) << src;
    EXPECT_NE(src.find("const int warp = (int) threadIdx.x / 32;"), std::string::npos) << src;
    EXPECT_NE(src.find("const int lane = (int) threadIdx.x % 32;"), std::string::npos) << src;
    EXPECT_NE(src.find("loom::warp_reduce(sum_k, [](float mine, float other) { return mine + other; })"), std::string::npos) << src;
    EXPECT_NE(src.find("loom::warp_reduce(max_k, [](float mine, float other) { return fmaxf(mine, other); })"), std::string::npos)
        << src;
    // The first warp alone combines the 8 warps' results.
    EXPECT_NE(src.find("if ((int) threadIdx.x < 32) {"), std::string::npos) << src;
    test::expect_compiles_for_sm90(kernel);
}

TEST(BlockReductions, SchedulesThatCannotReduceInBlocksAreRefused) {
    Field u = make_field("u", ScalarType::Float32, 1, {{40}});
    Field out = make_field("out", ScalarType::Float32, 1);
    IndexVar k("k", 40);
    Assignment a(out.center(), sum(k, u(k)));
    for (std::array<int, 3> block : {std::array<int, 3>{48, 1, 1}, {32, 2, 1}, {16, 1, 1}}) {
        Schedule s;
        s.reduce_in_block = true;
        s.block = block;
        LOOM_EXPECT_ERROR(create_kernel(a, {.name = "bad_block"}, s), UserError,
                          {"kernel 'bad_block' has Schedule::block", "with reduce_in_block = true",
                           "(n, 1, 1) with n a power of two from 32 to 1024"});
    }
    Schedule both;
    both.reduce_in_block = true;
    both.shared_tiles = true;
    LOOM_EXPECT_ERROR(create_kernel(a, {.name = "both"}, both), UserError,
                      {"reduce_in_block = true with shared_tiles = true", "set one of them to false"});
    Schedule manual;
    manual.reduce_in_block = true;
    manual.manual_launch_grid = true;
    LOOM_EXPECT_ERROR(create_kernel(a, {.name = "manual"}, manual), UserError,
                      {"reduce_in_block = true with manual_launch_grid = true", "one block per cell"});
}

} // namespace
} // namespace loom
