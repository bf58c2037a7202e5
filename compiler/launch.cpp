#include <loom/launch.hpp>

#include "compiler/ir/evaluate.hpp"
#include "compiler/ir/printer.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace loom {
using namespace ir;

LaunchDescription LaunchDescription::none(std::string reason) {
    LaunchDescription L;
    L.has_grid = false;
    L.no_grid_reason = std::move(reason);
    return L;
}

Dim3 LaunchDescription::evaluate_extents(const Bindings& args) const {
    if (!has_grid)
        throw UserError("this kernel has no launch grid (" + no_grid_reason +
                        "); there are no extents to evaluate");
    if (manual)
        throw UserError("this kernel has a manual launch grid (" + manual_reason +
                        "); set block_size and num_blocks instead of inferring them");
    Dim3 out{1, 1, 1};
    for (int d = 0; d < 3; ++d) {
        Value v = evaluate(extents[d], args);
        out[d] = v.i < 0 ? 0 : v.i;
    }
    return out;
}

Dim3 LaunchDescription::block_for(const Dim3& ext) const {
    Dim3 b{default_block[0], default_block[1], default_block[2]};
    if (exact_block) return b; // the code assumes this very block
    auto pow2_at_least = [](std::int64_t n) {
        std::int64_t p = 1;
        while (p < n) p *= 2;
        return p;
    };
    if (ext[0] < b[0]) b[0] = std::max<std::int64_t>(1, std::min(b[0], ((ext[0] + 31) / 32) * 32));
    if (ext[0] < 32) b[0] = std::max<std::int64_t>(1, pow2_at_least(ext[0]));
    for (int d = 1; d < 3; ++d)
        if (ext[d] < b[d]) b[d] = std::max<std::int64_t>(1, pow2_at_least(ext[d]));
    return b;
}

Dim3 LaunchDescription::grid_for(const Dim3& ext, const Dim3& block) {
    // A zero block would divide by zero (a crash, not an error).
    for (int d = 0; d < 3; ++d)
        if (block[d] < 1)
            throw UserError(fmt::format("grid_for: the block ({}) has {} = {}; a block has at "
                                        "least 1 thread along x, y and z, e.g. (64, 4, 1)",
                                        fmt::join(block, ", "), "xyz"[d], block[d]));
    Dim3 g{};
    for (int d = 0; d < 3; ++d) g[d] = ext[d] <= 0 ? 0 : (ext[d] + block[d] - 1) / block[d];
    return g;
}

std::string LaunchDescription::describe() const {
    if (!has_grid) return fmt::format("none ({})", no_grid_reason);
    std::string block = fmt::format("({})", fmt::join(default_block, ", "));
    if (manual) return fmt::format("manual ({}); suggested block {}", manual_reason, block);
    std::vector<std::string> e;
    for (auto& x : extents) e.push_back(to_string(x));
    std::string cells; // "; 4 cells per thread along y", or "along x, 4 along y" for several
    for (int d = 0; d < 3; ++d) {
        if (cells_per_thread[d] <= 1) continue;
        cells += cells.empty() ? fmt::format("; {} cells per thread along {}", cells_per_thread[d], "xyz"[d])
                               : fmt::format(", {} along {}", cells_per_thread[d], "xyz"[d]);
    }
    std::string shared;
    if (shared_bytes) shared = fmt::format("; {} bytes of dynamic shared memory", shared_bytes);
    if (static_shared_bytes) shared = fmt::format("; {} bytes of static shared memory", static_shared_bytes);
    std::string bound;
    if (max_threads_per_block)
        bound = fmt::format("; compiled for at most {} threads per block", max_threads_per_block);
    if (exact_block) bound = "; compiled for exactly this block, whose threads work together";
    if (exact_grid) bound += "; the blocks combine their results: no other grid";
    return fmt::format("block {} by default; grid = ceil(({}) / block){}{}{}", block, fmt::join(e, ", "),
                       cells, shared, bound);
}

} // namespace loom
