// Shared-memory staging (CUDA): buffers that every thread of a block reads, such as a layer's
// runtime weights, are copied into shared memory once per block, and the threads read them there.
#pragma once

#include "compiler/ir/ir.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace loom::ir {

/// The body with the copies; the shared memory it needs is read off it (launch_grid.hpp).
struct SharedStaging {
    Stmt body;                        ///< the kernel body with the copies in front
    std::vector<std::string> staged;  ///< "W: 4096 float32 at byte 0", for the pass log
};

/// Stages each fixed-shape buffer of `buffers` (the Global buffers of fields the kernel reads only
/// at absolute positions, in order, while the total fits in `budget`
/// bytes) into a shared array: every thread of the block copies a strided share, one barrier
/// waits for the copy, and the buffer's loads become loads from the shared array. The copy goes
/// in front of the whole body, outside the bounds guard, so every thread reaches the barrier.
/// Variable-shape buffers, those read at elements that depend on the cell (an index that reads a
/// spatial counter: a bias at the cell's column), and those that no longer fit stay in global
/// memory. Up to 48 KB in all
/// the arrays are static `__shared__` arrays; above that, windows into dynamic shared memory.
SharedStaging stage_buffers_in_shared(const Stmt& body, const std::vector<BufferPtr>& buffers,
                                      std::size_t budget);

} // namespace loom::ir
