// Staging buffers in shared memory (compiler/passes/shared_staging.cpp). Each thread starts its
// share of the copies without waiting for any of them (cp.async, sm_80 and later; a plain copy
// before), so a block's whole copy costs about one memory latency instead of one per element;
// loom::stage_wait() then waits for the thread's copies, and a __syncthreads() for everyone's.
#pragma once

namespace loom {

template <typename T>
__device__ __forceinline__ void stage(T* shared, const T* global) {
    static_assert(sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8,
                  "loom::stage copies 2-, 4- or 8-byte elements");
    if constexpr (sizeof(T) == 2) { // cp.async copies 4, 8 or 16 bytes: a 16-bit float directly
        *shared = *global;
    } else {
#if __CUDA_ARCH__ >= 800
        const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(shared));
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(address), "l"(global),
                     "n"(sizeof(T))
                     : "memory");
#else
        *shared = *global;
#endif
    }
}

// A contiguous row of n elements, shared by the block's threads (`thread` of `threads`): 16
// bytes per copy where both addresses are 16-byte aligned (cp.async.cg), the tail and rows that
// are not element by element.
template <typename T>
__device__ __forceinline__ void stage_row(T* shared, const T* global, int n, int thread, int threads) {
#if __CUDA_ARCH__ >= 800
    constexpr int per = 16 / sizeof(T);
    const unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(shared));
    if (((reinterpret_cast<unsigned long long>(global) | address) & 15) == 0) {
        const int chunks = n / per;
        for (int i = thread; i < chunks; i += threads)
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(address + 16u * unsigned(i)),
                         "l"(global + per * i)
                         : "memory");
        for (int k = chunks * per + thread; k < n; k += threads) stage(&shared[k], &global[k]);
        return;
    }
#endif
    for (int k = thread; k < n; k += threads) stage(&shared[k], &global[k]);
}

__device__ __forceinline__ void stage_wait() {
#if __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_all;\n" ::: "memory");
#endif
}

} // namespace loom
