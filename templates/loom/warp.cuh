// Warp collectives (compiler/passes/block_reductions.cpp): a value combined over the 32 lanes
// of a warp through register shuffles, every lane getting the result. The rounds go over lane
// distances 16, 8, 4, 2, 1, each lane combining its value with that of the lane at its index
// xor the distance, `combine(mine, other)`: every lane computes the same sums in the same order,
// and the CPU's lockstep lanes (compiler/passes/warp_lockstep.cpp) compute them in that order too.
#pragma once

namespace loom {

template <typename T, typename Combine>
__device__ __forceinline__ T warp_reduce(T v, Combine combine) {
#pragma unroll
    for (int distance = 16; distance > 0; distance /= 2) v = combine(v, __shfl_xor_sync(0xffffffffu, v, distance));
    return v;
}

} // namespace loom
