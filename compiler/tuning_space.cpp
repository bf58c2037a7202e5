#include "compiler/tuning_space.hpp"

#include "compiler/ir/visitor.hpp"

#include <algorithm>

namespace loom::ir {

namespace {

using KnobValue = std::array<int, 3>;

bool has_reductions(const std::vector<SourceAssignment>& assignments) {
    for (const SourceAssignment& a : assignments)
        for (const Expr& e : subexpressions(a.rhs))
            if (e.as<ReduceNode>()) return true;
    return false;
}

/// Blocks of 64 to 1024 threads, x a multiple of the warp so that a warp reads one row; in 3D
/// also blocks two or four deep. Block-per-cell reductions need (n, 1, 1) with n a power of two.
std::vector<KnobValue> block_values(int mapped, bool reductions) {
    if (mapped == 1) return {{64, 1, 1}, {128, 1, 1}, {256, 1, 1}, {512, 1, 1}, {1024, 1, 1}};
    std::vector<KnobValue> v = {{32, 2, 1},  {32, 4, 1},  {32, 8, 1},  {32, 16, 1},
                            {64, 1, 1},  {64, 2, 1},  {64, 4, 1},  {64, 8, 1},
                            {128, 1, 1}, {128, 2, 1}, {128, 4, 1}, {256, 1, 1}};
    if (mapped >= 3)
        for (KnobValue b : {KnobValue{32, 4, 2}, KnobValue{64, 2, 2}, KnobValue{32, 2, 4}}) v.push_back(b);
    if (reductions)
        for (KnobValue b : {KnobValue{32, 1, 1}, KnobValue{512, 1, 1}, KnobValue{1024, 1, 1}}) v.push_back(b);
    return v;
}

} // namespace

TuningSpace tuning_space(const LoweredKernel& k, const std::vector<SourceAssignment>& assignments) {
    TuningSpace space;
    if (k.config.target != Target::CUDA || k.launch.manual || !k.launch.has_grid) return space;
    const Schedule& req = k.requested_schedule;
    int mapped = 0;
    std::vector<int> mapped_axes;
    for (int a : k.launch.axis_of_dim)
        if (a >= 0) {
            ++mapped;
            mapped_axes.push_back(a);
        }
    // Read at neighbouring cells (stencils): what tiles and streaming act on. Buffers are read at
    // absolute positions, not at neighbours.
    bool neighbours = false;
    for (const FieldPtr& f : k.shifted_reads)
        neighbours = neighbours || std::find(k.buffers.begin(), k.buffers.end(), f) == k.buffers.end();
    const bool reductions = has_reductions(assignments);
    int widest = 1;
    for (const FieldPtr& f : k.fields) widest = std::max(widest, std::max(1, bit_width(f->type) / 8));

    auto add = [&](Knob knob, std::vector<KnobValue> values) {
        if (values.size() > 1) space.dimensions.push_back({knob, std::move(values)});
    };
    // Tensor cores: the tiles per warp and the block (whose x must be a multiple of 32; the
    // warps' tiles grow with it), nothing that would take a warp's cells apart.
    if (req.tensor_cores.value_or(TensorCores::Off) != TensorCores::Off) {
        if (req.cells_per_thread == 0) add(Knob::CellsPerThread, {{4}, {8}, {16}, {32}, {64}});
        if (!req.block)
            add(Knob::Block, mapped == 1 ? std::vector<KnobValue>{{128, 1, 1}, {256, 1, 1}, {512, 1, 1}}
                                         : std::vector<KnobValue>{{64, 2, 1}, {128, 2, 1}, {256, 2, 1}, {64, 4, 1}});
        return space;
    }
    // The algorithmic choices first: they change what the later fields mean.
    if (reductions && !req.reduce_in_block && !req.reduce_in_warp && mapped <= 3) {
        add(Knob::ReduceInBlock, {{0}, {1}});
        add(Knob::ReduceInWarp, {{0}, {1}}); // both on is refused, and the walk skips it
    }
    if (neighbours && !req.shared_tiles && mapped <= 3) add(Knob::SharedTiles, {{0}, {1}});
    if (req.vector_width == 0) {
        std::vector<KnobValue> widths;
        for (int w : {1, 2, 4, 8})
            if (w * widest <= 16) widths.push_back({w});
        add(Knob::VectorWidth, widths);
    }
    if (mapped >= 2) {
        if (req.cells_per_thread == 0) add(Knob::CellsPerThread, {{1}, {2}, {4}, {8}, {16}});
        if (!req.cells_axis) {
            std::vector<KnobValue> axes;
            for (int a : mapped_axes) axes.push_back({a});
            add(Knob::CellsAxis, axes);
        }
        if (!req.stream_cells && neighbours) add(Knob::StreamCells, {{0}, {1}});
    }
    if (!req.block) add(Knob::Block, block_values(mapped, reductions));
    return space;
}

} // namespace loom::ir
