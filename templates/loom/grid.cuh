// Reductions across blocks (compiler/passes/grid_reductions.cpp): each block writes its partial
// result to a scratch array, then takes a ticket; the block that takes the last one combines the
// partials in a fixed order, so the result does not depend on which block finished when. The
// scratch arrays and the ticket are `__device__` globals of the kernel's module (zero when it
// loads); the last block puts the ticket back to zero for the next launch.
#pragma once

namespace loom {

/// True in every thread of the block that arrives last of `blocks`; false in the others. Before
/// the ticket, the block's earlier stores (its partials) are made visible device-wide; the last
/// block reads the others' through L2 (`__ldcg`), after their fences.
__device__ __forceinline__ bool last_block(int& ticket, int blocks) {
    __shared__ bool last;
    __syncthreads(); // the block's partials are stored
    if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
        __threadfence(); // ... and visible to every block before the ticket says so
        last = atomicAdd(&ticket, 1) == blocks - 1;
        if (last) {
            ticket = 0;      // every block has arrived: ready for the next launch
            __threadfence(); // the others' partials are read after their tickets
        }
    }
    __syncthreads();
    return last;
}

} // namespace loom
