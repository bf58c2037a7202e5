// Block reductions (Schedule::reduce_in_block), pass by pass: a sum over an index axis through
// lower_reductions, map_to_gpu's block-per-cell form and reduce_in_blocks, the IR printed before
// and after each; the launch read off it; the schedules refused. The kernels run against
// references in tests/unit/test_reductions.cpp (CPU) and tests/gpu/test_reductions_gpu.cpp.
#include "compiler/passes/block_reductions.hpp"
#include "compiler/passes/gpu_mapping.hpp"
#include "compiler/passes/launch_grid.hpp"
#include "compiler/passes/lower_reductions.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/lowered_nest.hpp"

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
    s.block = std::array<int, 3>{32, 1, 1};
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
    // reduce_in_blocks: each of the 32 threads sums every 32nd term, then a tree of 5 halving
    // steps in shared memory, a warp barrier after each of the first warp's steps and a block
    // barrier after the last; every thread reads the result.
    Stmt reduced = reduce_in_blocks(mapped.body, 32);
    EXPECT_EQ(to_string(reduced), R"(for block_x in [0, size_0) step 1:  # axis 0, gpu block.x
  let x: int32 = block_x
  # out = sum(k, u(k))
  # sum_k: thread t of 32 combines terms t, t + 32, ...; then a tree in shared memory
  alloc float32 sum_k_partial[32] (shared):
    for thread in [0, 32) step 1:  # axis -1, gpu thread.x
      let sum_k: float32 = 0.0f
      for k in [thread, 40) step 32:  # axis -1
        sum_k = sum_k + u[x, k]
      sum_k_partial[thread] = sum_k
    barrier
    for thread in [0, 16) step 1:  # axis -1, gpu thread.x
      sum_k_partial[thread] = sum_k_partial[thread] + sum_k_partial[thread + 16]
    warp barrier
    for thread in [0, 8) step 1:  # axis -1, gpu thread.x
      sum_k_partial[thread] = sum_k_partial[thread] + sum_k_partial[thread + 8]
    warp barrier
    for thread in [0, 4) step 1:  # axis -1, gpu thread.x
      sum_k_partial[thread] = sum_k_partial[thread] + sum_k_partial[thread + 4]
    warp barrier
    for thread in [0, 2) step 1:  # axis -1, gpu thread.x
      sum_k_partial[thread] = sum_k_partial[thread] + sum_k_partial[thread + 2]
    warp barrier
    for thread in [0, 1) step 1:  # axis -1, gpu thread.x
      sum_k_partial[thread] = sum_k_partial[thread] + sum_k_partial[thread + 1]
    barrier
    let sum_k: float32 = sum_k_partial[0]
    for thread in [0, 1) step 1:  # axis -1, gpu thread.x
      out[x] = sum_k
)");
    // The launch: exactly the block, one block per cell.
    LaunchDescription L = infer_launch_grid(reduced, s, ScalarType::Int32);
    EXPECT_TRUE(L.exact_block);
    EXPECT_EQ(L.default_block, (std::array<int, 3>{32, 1, 1}));
    EXPECT_EQ(to_string(L.extents[0]), "size_0 * 32");
    EXPECT_EQ(L.static_shared_bytes, 128u);
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
