// The pipeline, top to bottom. Each step is one pass in compiler/passes/ (one file each).
#include "compiler/lower.hpp"

#include "compiler/codegen/cpp_printer.hpp"
#include "compiler/codegen/cuda_printer.hpp"
#include "compiler/ir/equality.hpp"
#include "compiler/ir/evaluate.hpp"
#include "compiler/ir/printer.hpp"
#include "compiler/ir/visitor.hpp"
#include "compiler/pass_log.hpp"
#include "compiler/passes/analyze.hpp"
#include "compiler/passes/base_pointers.hpp"
#include "compiler/passes/block_reductions.hpp"
#include "compiler/passes/check_schedule.hpp"
#include "compiler/passes/converge_warps.hpp"
#include "compiler/passes/choose_schedule.hpp"
#include "compiler/passes/cpu_mapping.hpp"
#include "compiler/passes/cse.hpp"
#include "compiler/passes/flatten_addresses.hpp"
#include "compiler/passes/fuse_reductions.hpp"
#include "compiler/passes/fuse_stages.hpp"
#include "compiler/passes/grid_reductions.hpp"
#include "compiler/passes/gpu_mapping.hpp"
#include "compiler/passes/iteration_space.hpp"
#include "compiler/passes/launch_grid.hpp"
#include "compiler/passes/lower_layers.hpp"
#include "compiler/passes/lower_reductions.hpp"
#include "compiler/passes/name_parameters.hpp"
#include "compiler/passes/narrow_chain_io.hpp"
#include "compiler/passes/online_softmax.hpp"
#include "compiler/passes/row_cache.hpp"
#include "compiler/passes/shared_staging.hpp"
#include "compiler/passes/shared_tiles.hpp"
#include "compiler/passes/simplify.hpp"
#include "compiler/passes/stage_layer_weights.hpp"
#include "compiler/passes/stream_cells.hpp"
#include "compiler/passes/vectorize_lanes.hpp"
#include "compiler/passes/verify.hpp"
#include "compiler/passes/warp_lockstep.hpp"
#include "compiler/passes/warp_reductions.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <vector>

namespace loom::ir {

namespace {

/// Whether the body reads a field it also writes (y = a x + y): lanes keep such a field scalar.
bool updates_a_field(const Stmt& body) {
    struct Reads : IRVisitor {
        std::set<const FieldInfo*> read, written;
        void visit_Assign(const AssignNode* a) override {
            if (auto fa = a->lhs.as<FieldAccessNode>()) written.insert(fa->field.get());
            visit(a->rhs);
        }
        void visit_FieldAccess(const FieldAccessNode* fa) override {
            read.insert(fa->field.get());
            IRVisitor::visit_FieldAccess(fa);
        }
    } r;
    r.visit(body);
    for (const FieldInfo* f : r.written)
        if (r.read.count(f)) return true;
    return false;
}


/// The most terms of a reduction over an index axis in a cell, outside assignments to an index
/// axis (`y(j) = sum(k, ...)` is a small matrix product per cell, whose j a warp would share
/// among few lanes): what makes a warp per cell worth it (choose_schedule).
std::int64_t longest_row_reduction(const Stmt& cell) {
    struct Find : IRVisitor {
        std::int64_t most = 0;
        void visit_Assign(const AssignNode* a) override {
            auto lhs = a->lhs.as<FieldAccessNode>();
            if (lhs && !lhs->component_indices.empty()) return; // an index axis's assignment
            IRVisitor::visit_Assign(a);
        }
        void visit_Reduce(const ReduceNode* r) override {
            auto a = r->start.as<ConstNode>(), b = r->stop.as<ConstNode>();
            if (a && b) most = std::max(most, b->int_value - a->int_value);
            IRVisitor::visit_Reduce(r);
        }
    } find;
    find.visit(cell);
    return find.most;
}

/// The longest index axis (IndexVar) the cell runs over, by its extent, and its name.
std::pair<std::int64_t, std::string> longest_index_axis(const Stmt& cell) {
    std::pair<std::int64_t, std::string> most{0, ""};
    for (const Expr& e : subexpressions(cell))
        if (auto v = e.as<VarNode>(); v && v->role == VarRole::Index && v->extent > most.first)
            most = {v->extent, v->name};
    return most;
}

/// The reductions across cells (sum_over_cells, ...) among the assignments, checked by
/// analyze_kernel: each target's field, literal element and operator.
std::vector<CellReductionTarget> cell_reduction_targets(const std::vector<SourceAssignment>& assignments) {
    std::vector<CellReductionTarget> out;
    for (const SourceAssignment& a : assignments) {
        if (!a.over_cells) continue;
        auto fa = a.lhs.as<FieldAccessNode>();
        CellReductionTarget t;
        t.field = fa->field.get();
        for (const Expr& x : fa->indices) t.element.push_back(x.as<ConstNode>()->int_value);
        for (int c : fa->components) t.element.push_back(c);
        t.op = *a.over_cells;
        out.push_back(std::move(t));
    }
    return out;
}

/// True if the cell reads a field it writes at an element another thread of a warp or a block
/// per cell may store: a field stored once per cell (a row's mean, by one thread), read outside
/// a top-level loop over an index axis, or read at an element no store writes. A field stored
/// element by element in a top-level loop over an index axis (`x(k) = ...`) and read at that
/// same element in such a loop (an in-place LayerNorm) is not: the lane or thread that owns
/// element k is the same in every such loop (map_to_gpu, reduce_in_warps, reduce_in_blocks).
bool reads_others_writes(const Stmt& nest) {
    struct Find : IRVisitor {
        std::vector<const ForNode*> index_loops; ///< the enclosing loops over index axes
        std::map<const FieldInfo*, std::vector<std::vector<Expr>>> own; ///< element-wise stores
        std::set<const FieldInfo*> stored_per_cell, read_per_cell;
        std::vector<const BufferLoadNode*> own_reads;
        void visit_For(const ForNode* f) override {
            const bool index = f->var.as<VarNode>()->role == VarRole::Index;
            if (index) index_loops.push_back(f);
            IRVisitor::visit_For(f);
            if (index) index_loops.pop_back();
        }
        /// In one top-level index loop, at coordinates that read its index.
        bool at_own_element(const std::vector<Expr>& indices) const {
            if (index_loops.size() != 1) return false;
            for (const Expr& i : indices) {
                auto c = i.as<CastNode>();
                if ((c ? c->value : i).same_as(index_loops.front()->var)) return true;
            }
            return false;
        }
        void visit_BufferStore(const BufferStoreNode* s) override {
            IRVisitor::visit_BufferStore(s);
            const FieldInfo* f = s->buffer->scope == Scope::Global ? s->buffer->field_of() : nullptr;
            if (!f) return;
            if (at_own_element(s->indices)) own[f].push_back(s->indices);
            else stored_per_cell.insert(f);
        }
        void visit_BufferLoad(const BufferLoadNode* l) override {
            IRVisitor::visit_BufferLoad(l);
            const FieldInfo* f = l->buffer->scope == Scope::Global ? l->buffer->field_of() : nullptr;
            if (!f) return;
            if (at_own_element(l->indices)) own_reads.push_back(l);
            else read_per_cell.insert(f);
        }
    } find;
    find.visit(nest);
    auto written = [&](const FieldInfo* f) { return find.own.count(f) || find.stored_per_cell.count(f); };
    for (const FieldInfo* f : find.read_per_cell)
        if (written(f)) return true;
    for (const BufferLoadNode* l : find.own_reads) {
        const FieldInfo* f = l->buffer->field_of();
        if (!written(f)) continue;
        if (find.stored_per_cell.count(f)) return true;
        bool same = false;
        for (const std::vector<Expr>& at : find.own[f])
            same = same || structurally_equal(BufferLoadNode::make(l->buffer, at), BufferLoadNode::make(l->buffer, l->indices));
        if (!same) return true;
    }
    return false;
}

/// True if the body computes local arrays (layers) in loops.
bool contains_layers(const Stmt& body) {
    struct Find : IRVisitor {
        bool found = false;
        void visit_Allocate(const ir::AllocateNode*) override { found = true; }
    } f;
    f.visit(body);
    return f.found;
}

/// Rows of lanes: the distinct coordinates, other than along `lane_axis`, at which the cells
/// read each field (component), one cell (`most`: the most of any one field; a 5-point star 3,
/// a 3D 27-point box 9) and a group of `cells` cells along `cells_axis` (`group`: all fields
/// together; a 5-point star's group of 4 along y reads rows y - 1 to y + 4, 6; a 27-point
/// box's 18). Reads at other than `counter + constant` count as one row each.
struct LaneRows {
    std::size_t most = 0, group = 0, cell = 0; ///< cell: one cell, all fields together
};
LaneRows lane_rows(const Stmt& body, int lane_axis, int cells_axis, int cells) {
    std::map<std::string, std::set<std::string>> one;   // field and component -> rows
    std::set<std::string> group;                         // field, component and row
    for (const Expr& e : subexpressions(body)) {
        const BufferLoadNode* l = as_field_load(e);
        if (!l || !l->buffer->field) continue;
        const int spatial = l->buffer->field->spatial_dims;
        std::string field = l->buffer->name;
        std::vector<Offset> at;
        for (std::size_t i = 0; i < l->indices.size(); ++i) {
            if (int(i) == lane_axis) continue;
            if (int(i) >= spatial) field += "," + to_string(l->indices[i]);
            else at.push_back(split_offset(l->indices[i]));
        }
        auto row = [&](int shift) {
            std::string r;
            for (std::size_t i = 0, axis = 0; i < at.size(); ++i, ++axis) {
                if (int(axis) == lane_axis) ++axis;
                const std::int64_t k = at[i].k + (int(axis) == cells_axis ? shift : 0);
                r += fmt::format("{}{:+},", at[i].base.defined() ? to_string(at[i].base) : "", k);
            }
            return r;
        };
        one[field].insert(row(0));
        for (int c = 0; c < std::max(1, cells); ++c) group.insert(field + ":" + row(c));
    }
    LaneRows r;
    for (const auto& [field, rows] : one) {
        r.most = std::max(r.most, rows.size());
        r.cell += rows.size();
    }
    r.group = group.size();
    return r;
}

/// Refuses an integer division or modulo whose divisor folds to the constant 0 (a literal zero
/// is refused by the operator already): the generated code would trap (CPU) or compute garbage.
/// Checked before simplify, which could drop the division ((x / 0) * 0) but not make it defined.
void check_division_by_zero(const Stmt& body, const std::string& kernel) {
    std::vector<BufferPtr> arrays; // a cell's statements lie inside the arrays of its layers
    Stmt list = inside_allocations(body, arrays);
    auto block = list.as<BlockNode>();
    std::vector<Stmt> stmts = block ? block->stmts : std::vector<Stmt>{list};
    std::string text; // the DSL text of the assignment, from the comment before it
    int assignment = 0;
    for (const Stmt& s : stmts) {
        if (auto c = s.as<CommentNode>()) text = c->text;
        const bool is_assignment = s.is<AssignNode>();
        assignment += is_assignment;
        Expr found = find_division_by_zero(s);
        if (!found.defined()) continue;
        auto d = found.as<BinaryNode>();
        std::string where = is_assignment
            ? fmt::format("in assignment {} (`{}`)", assignment, text)
            : std::string("in a layer's computation");
        throw UserError(fmt::format(
            "kernel '{}' has an integer division by zero {}: in `{}` the divisor `{}` folds to the "
            "constant 0. {}",
            kernel, where, to_string(found), to_string(d->b), integer_division_by_zero_advice(d->op)));
    }
}
} // namespace

LoweredKernel lower(const std::vector<SourceAssignment>& assignments, const KernelConfig& requested,
                    const Schedule& schedule) {
    KernelConfig config = requested;
    if (!config.index_type) config.index_type = ScalarType::Int64;
    LoweredKernel k;
    k.name = config.name;
    k.config = config;
    k.requested_schedule = schedule;
    k.schedule = schedule;
    PassLog log(config.name);

    // 1. Analysis: reject races, double writes, bad types, bad schedules, too few ghost layers,
    // bad slices.
    log.start();
    KernelAnalysis analysis = analyze_kernel(assignments, config, schedule);
    // On-chip fields are no arguments: the kernel's fields are those in memory.
    auto in_memory = [&](std::vector<FieldPtr> fs) {
        fs.erase(std::remove_if(fs.begin(), fs.end(), [&](const FieldPtr& f) { return analysis.is_on_chip(f.get()); }),
                 fs.end());
        return fs;
    };
    k.fields = in_memory(analysis.fields);
    k.buffers = analysis.buffers;
    k.shifted_reads = in_memory(analysis.shifted_reads);
    k.ghost_layers = analysis.ghost_layers;
    k.reach = analysis.reach;
    log.record("analyze_kernel", Stmt(), analysis.body);
    check_division_by_zero(analysis.body, config.name);

    // 2. Layers: each Dense statement becomes loops (unrolled when small, a loop over its
    // inputs when wide), so the passes below see loops over local arrays; on tensor cores, each
    // chain of them one MmaChain statement.
    log.start();
    LayerLowering layer_options;
    const TensorCores tensor_cores = schedule.tensor_cores.value_or(TensorCores::Off);
    if (tensor_cores != TensorCores::Off)
        layer_options.tensor_operand = tensor_cores == TensorCores::BFloat16 ? ScalarType::BFloat16
                                       : tensor_cores == TensorCores::TF32   ? ScalarType::Float32 // tf32
                                                                             : ScalarType::Float16;
    Stmt layers = lower_layers(analysis.body, layer_options);
    log.record("lower_layers", analysis.body, layers);
    const bool mma = count_mma_chains(layers) > 0;
    if (mma) {
        // 6b'. A chain's arrays take the operand type where they only pass 16-bit field values
        // in or out (no float32 round trip).
        log.start();
        Stmt narrowed = narrow_chain_io(layers);
        log.record("narrow_chain_io", layers, narrowed);
        layers = narrowed;
    }
    // After narrowing: the narrowed inputs say which chains may stream (largest_tile_bytes).
    const MmaChainSizes mma_sizes = mma_chain_sizes(layers);
    if (tensor_cores != TensorCores::Off && !mma)
        throw UserError(fmt::format(
            "kernel '{}' has Schedule::tensor_cores set, but no layer to compute on tensor cores: they "
            "take chains of float32 nn::Dense layers with runtime weights (nn::Dense::runtime); "
            "leave tensor_cores unset for this kernel",
            config.name));
    for (const std::string& why : tensor_core_width_errors(layers))
        throw UserError(fmt::format("kernel '{}' has Schedule::tensor_cores, but {}; tensor cores take "
                                    "layers of at most {} inputs and outputs, {} with TF32 (their fragments "
                                    "live in registers): split the layer, or leave tensor_cores unset",
                                    config.name, why, kMaxTensorCoreWidth, kMaxTensorCoreWidth / 2));
    // A warp's 32 lanes compute its cells' chain together: not where blocks share out the cells
    // of a reduction across cells, or compute stages on tiles.
    if (mma && (!cell_reduction_targets(assignments).empty() || analysis.stage_halos))
        throw UserError(fmt::format(
            "kernel '{}' has Schedule::tensor_cores with {}: on tensor cores the 32 lanes of a warp "
            "compute 32 cells together, which that form does not give them; compute the layers in "
            "a kernel of their own, or leave tensor_cores unset",
            config.name, analysis.stage_halos ? "stages that read an earlier stage at neighbouring cells"
                                             : "a reduction across cells"));

    // 3. Simplify: fold constants, drop identities.
    log.start();
    Stmt body = simplify(layers);
    log.record("simplify", layers, body);

    // 4. Common subexpressions, computed once into named temporaries.
    log.start();
    Stmt cse = eliminate_common_subexpressions(body);
    log.record("eliminate_common_subexpressions", body, cse);

    // 5. Iteration space: one loop per axis; field accesses become loads and stores at
    // coordinates; the signature.
    log.start();
    IterationSpace space = lower_iteration_space(cse, analysis, config);
    Stmt spatial = space.nest;
    k.params = space.params;
    log.record("lower_iteration_space", cse, spatial);

    // 6. Reductions: each becomes an accumulator and a loop, before the statement that uses it.
    log.start();
    Stmt reductions = lower_reductions(spatial);
    log.record("lower_reductions", spatial, reductions);

    // 6'. Online softmax: a sum of exp(e - m), m the maximum of e over the same range, computed
    // in the maximum's loop, rescaled as the maximum grows: a row too long to stay on chip is
    // read once for both.
    OnlineSoftmax online{reductions, false};
    if (schedule.online_softmax.value_or(true)) {
        log.start();
        const std::int64_t min_row_bytes = schedule.online_softmax ? 0 : std::int64_t(kMaxRowSharedBytes) + 1;
        online = online_softmax(reductions, min_row_bytes);
        log.record("online_softmax", reductions, online.body);
    }

    // 6''. Independent reductions over the same range share one loop (a row's sum and maximum,
    // column sums and maxima: each element read once for all of them).
    log.start();
    Stmt nest = fuse_reductions(online.body);
    log.record("fuse_reductions", online.body, nest);
    // A slice's bounds may be parameters, or literals past arrays whose size only the launch
    // knows: the launch checks them (KernelSpec::slice_bounds), so keep them.
    if (config.iteration_slice) k.slice_bounds = read_slice_bounds(nest);

    // 7-8. Target mapping. CUDA: the loops are bound to the grid (or to blocks and threads, for
    // tiles and block reductions) and the launch grid is read off them. CPU: the loops stay, in
    // memory order, the outermost parallel and the innermost vectorized; a kernel with tiles or
    // block reductions keeps its blocks and threads as loops, so that the CPU oracle checks them.
    const bool cuda = config.target == Target::CUDA;
    Stmt mapped;
    bool resolved = true; // the schedule is chosen (not the CPU's plain loops)
    const std::vector<CellReductionTarget> across = cell_reduction_targets(assignments);
    if (!across.empty()) {
        // 7'. Reductions across cells: blocks over chunks of the cells, each block's threads
        // sharing its chunk, the last block to finish combining the blocks' partials in block
        // order. The CPU runs the same blocks (the oracle sees the same order of additions).
        k.schedule = choose_reduction_schedule(schedule, config.name);
        k.max_registers = k.schedule.max_registers;
        const int threads = (*k.schedule.block)[0];
        log.start();
        Stmt blocks = reduce_across_blocks(nest, across, threads, analysis.primary->spatial_axes_fastest_first());
        log.record("reduce_across_blocks", nest, blocks);
        log.start();
        mapped = reduce_in_blocks(blocks, threads);
        log.record("reduce_in_blocks", blocks, mapped);
        if (!cuda) {
            log.start();
            Stmt lockstep = warp_lockstep(mapped);
            log.record("warp_lockstep", mapped, lockstep);
            mapped = lockstep;
        }
    } else if (cuda || schedule.shared_tiles || schedule.reduce_in_block.value_or(false) || schedule.reduce_in_warp.value_or(false) ||
        analysis.stage_halos) {
        // 7a. The schedule: what the request leaves open is chosen here, and only here.
        log.start();
        ScheduleFacts facts;
        facts.axis_of_dim = thread_axes(*analysis.primary);
        facts.manual_grid = schedule.manual_launch_grid || analysis.bounds_depend_on_counters;
        facts.has_layers = contains_layers(cse);
        facts.stage_halos = analysis.stage_halos;
        facts.lane_axis = analysis.primary->spatial_axes_fastest_first().front();
        // Lanes serve pointwise kernels and stencils: a row of lanes also holds its neighbours
        // along the lanes' axis, loaded apart (H200: a 5-point float32 star 0.79 -> 0.92 of
        // copy with lanes of 4 and 4 cells along y, bench/probe_kernels/probe_stencil_structures.cu). Not buffers
        // (gathers).
        bool no_gathers = true;
        for (const FieldPtr& f : analysis.shifted_reads)
            no_gathers = no_gathers && std::find(analysis.buffers.begin(), analysis.buffers.end(), f) ==
                                           analysis.buffers.end();
        facts.lanes_fit = cuda && no_gathers &&
                          (!config.iteration_slice ||
                           config.iteration_slice->dims[std::size_t(facts.lane_axis)].step == 1);
        facts.cell_nodes = subexpressions(cse).size();
        facts.spatial_dims = analysis.spatial_dims;
        // Pointwise: no neighbours, and no buffers (a bias read at x is shared by the cells
        // along y: bias + GELU 0.67 of copy with 4 cells per thread, 0.56 with one, on an H200).
        facts.pointwise = analysis.buffers.empty() &&
                          std::all_of(analysis.reach.begin(), analysis.reach.end(),
                                      [](const std::pair<int, int>& r) { return r.first == 0 && r.second == 0; });
        for (const FieldPtr& f : analysis.fields)
            if (f->index_dims() > 0 && f->unit_stride_axis() < f->spatial_dims) facts.rows_contiguous = false;
        facts.longest_reduction = longest_row_reduction(cse);
        std::tie(facts.longest_index_axis, facts.longest_index_name) = longest_index_axis(cse);
        facts.reads_own_writes = reads_others_writes(nest);
        {
            // The default group: 4 cells along the slowest mapped axis (choose_schedule).
            int slowest = -1;
            for (int a : facts.axis_of_dim)
                if (a >= 0) slowest = a;
            const LaneRows rows = lane_rows(spatial, facts.lane_axis,
                                            schedule.cells_axis.value_or(slowest),
                                            schedule.cells_per_thread ? schedule.cells_per_thread : 4);
            facts.lane_rows = rows.most;
            facts.group_lane_rows = rows.group;
            facts.cell_lane_rows = rows.cell;
        }
        facts.widest_element = 1;
        for (const FieldPtr& f : analysis.fields)
            facts.widest_element = std::max(facts.widest_element, bit_width(f->type) / 8);
        facts.updates_a_field = updates_a_field(cse);
        facts.tensor_cores = mma;
        facts.tensor_core_weight_bytes = mma_sizes.weight_bytes;
        facts.tensor_core_staged_bytes = mma_sizes.staged_bytes;
        facts.tensor_core_tile_bytes = mma_sizes.largest_tile_bytes; // streaming is decided later
        facts.tensor_core_width = mma_sizes.widest;
        // 7a-7b'. The schedule, the GPU mapping and the stages, with a smaller chosen tile while
        // the stages' tiles do not fit the shared memory (many stages, time steps, 3D halos).
        GpuMapped threads;
        FusedStages fused;
        for (;; ++facts.shrink) {
            k.schedule = choose_schedule(schedule, facts);
            k.max_registers = k.schedule.max_registers;
            check_cell_reads_own_writes(k.schedule, facts.reads_own_writes, config.name);
            check_row_length(k.schedule, facts.longest_index_axis, facts.longest_index_name, config.name);
            log.note("choose_schedule", k.schedule.describe(schedule));

            // 7b. GPU mapping: each mapped loop is bound to the grid, the fastest memory axis
            // to x.
            log.start();
            // On tensor cores a thread's cells are 32 G apart along x (converge_warps: G warps),
            // not a group along cells_axis.
            Schedule mapping = k.schedule;
            if (mma) mapping.cells_per_thread = 1;
            threads = map_to_gpu(nest, plan_thread_mapping(*analysis.primary, mapping));
            log.record("map_to_gpu", nest, threads.body);

            // 7b'. Stages: each block computes the earlier stages over its tile plus a halo,
            // into shared memory, and its threads the last stage.
            log.start();
            const auto& block = *k.schedule.block;
            fused = fuse_stages(threads.body, threads.tiles, *k.schedule.shared_memory_budget,
                                config.name, space.on_chip, block[0] * block[1] * block[2]);
            log.record("fuse_stages", threads.body, fused.body);
            if (fused.too_big.empty()) break;
            if (!can_shrink(schedule, k.schedule))
                throw UserError(facts.shrink == 0 ? fused.too_big
                                                  : fused.too_big + fmt::format(
                                                        " (loom already shrank the tile it chose "
                                                        "to {})", k.schedule.describe(schedule)));
        }

        // 7b+. Tensor cores: every lane of a warp takes part in its chains of layers, the
        // lanes past the last cell computing it again without storing it.
        if (cuda && mma) {
            log.start();
            Stmt whole = converge_warps(fused.body, k.schedule.cells_per_thread);
            log.record("converge_warps", fused.body, whole);
            fused.body = whole;
        }

        // 7b*. Cells in registers: a thread's cells as one group, what several of them read
        // loaded once (register streaming along the cells' axis).
        const Stmt unstreamed = fused.body;
        bool for_lanes = false; // streamed only because lanes would load the group's rows at once
        if (cuda && *k.schedule.stream_cells && !mma) {
            log.start();
            // Asked for: wherever cells share a read; chosen: where that saves enough of them,
            // or, with lanes, wherever they share one and the group's rows fit in registers.
            for_lanes = !schedule.stream_cells.value_or(false) && k.schedule.vector_width > 1 &&
                        streams_with_lanes(facts);
            const double min_saving = schedule.stream_cells.value_or(false) || for_lanes ? 0.0 : kMinStreamSaving;
            Stmt streamed = stream_cells(fused.body, min_saving);
            log.record("stream_cells", fused.body, streamed);
            // No cells share a read (a pointwise kernel): nothing streams, and the schedule
            // says so.
            if (streamed.same_as(fused.body)) k.schedule.stream_cells = false;
            fused.body = streamed;
        } else {
            k.schedule.stream_cells = false;
        }

        // 7b''. Lanes: with vector_width > 1, each thread's consecutive cells along the fastest
        // axis are loaded and stored as vectors (each streamed group's rows once), a row with
        // its neighbours within the kernel's reach along that axis.
        if (cuda && k.schedule.vector_width > 1) {
            log.start();
            LaneBounds bounds{analysis.reach, {}};
            for (const FieldPtr& b : analysis.buffers) bounds.buffers.insert(b.get());
            // A group past kMaxStreamedLaneRows rolls only where the schedule says so.
            const std::size_t at_once = rolls_with_lanes(k.schedule, facts) ? kMaxStreamedLaneRows : std::size_t(-1);
            Stmt lanes = vectorize_lanes(fused.body, k.schedule.vector_width, bounds, at_once);
            log.record("vectorize_lanes", fused.body, lanes);
            // Nothing went into lanes (no type with a vector, nothing contiguous): the kernel
            // runs scalar, and its schedule says so; cells streamed only for the lanes stream
            // as they would without them.
            if (lanes.same_as(fused.body)) {
                k.schedule.vector_width = 1;
                if (for_lanes) {
                    Stmt streamed = stream_cells(unstreamed, kMinStreamSaving);
                    k.schedule.stream_cells = !streamed.same_as(unstreamed);
                    lanes = streamed;
                }
            }
            fused.body = lanes;
        }

        // 7c. Shared tiles: what each block reads of a field at neighbouring cells, copied once.
        log.start();
        SharedTiles tiles = stage_tiles_in_shared(fused.body, threads.tiles,
                                                  *k.schedule.shared_memory_budget - fused.bytes, config.name);
        mapped = tiles.body;
        log.record("stage_tiles_in_shared", fused.body, mapped);

        // 7c'. Block reductions: with a block per cell, its threads share each reduction and
        // keep the rows they read in shared memory from the first pass to the last.
        if (k.schedule.reduce_in_block.value_or(false)) {
            log.start();
            Stmt reduced = reduce_in_blocks(mapped, (*k.schedule.block)[0]);
            log.record("reduce_in_blocks", mapped, reduced);
            log.start();
            Stmt cached = cache_rows_in_shared(reduced, std::min(kMaxRowSharedBytes, *k.schedule.shared_memory_budget));
            log.record("cache_rows_in_shared", reduced, cached);
            mapped = cached;
        }

        // 7c'''. Warp reductions: with a warp per cell, its lanes share each reduction (shuffles,
        // no barrier) and keep the rows they read in registers from the first pass to the last.
        if (k.schedule.reduce_in_warp.value_or(false)) {
            log.start();
            Stmt reduced = reduce_in_warps(mapped);
            log.record("reduce_in_warps", mapped, reduced);
            log.start();
            Stmt cached = cache_rows(reduced);
            log.record("cache_rows", reduced, cached);
            mapped = cached;
        }

        // 7c*. Warps on the CPU: its lanes run one after the other, so a warp reduction
        // splits their loop (every lane's value first, then the shuffles' butterfly).
        if (!cuda) {
            log.start();
            Stmt lockstep = warp_lockstep(mapped);
            log.record("warp_lockstep", mapped, lockstep);
            mapped = lockstep;
        }
    } else {
        // 7. CPU mapping: the fastest memory axis innermost, OpenMP on the outermost loop.
        resolved = false;
        log.start();
        mapped = map_to_cpu(nest, plan_cpu_loop_order(nest, *analysis.primary));
        log.record("map_to_cpu", nest, mapped);
    }

    // What the request left open of the online softmax, as done: whether a pair was rewritten
    // (the CPU's plain loops resolve no schedule: there only a rewrite says so).
    if (online.applied || resolved) k.schedule.online_softmax = online.applied;

    // 7c''. Base pointers: a field read or written at several neighbouring elements of a cell
    // gets a pointer at the cell, and its accesses small offsets from it.
    if (cuda) {
        log.start();
        Stmt pointed = point_at_cells(mapped);
        log.record("point_at_cells", mapped, pointed);
        mapped = pointed;
    }

    // 7d. Addresses: coordinates become linear indices.
    log.start();
    Stmt flat = flatten_addresses(mapped);
    log.record("flatten_addresses", mapped, flat);

    // 7e. Shared-memory staging: buffers every thread reads (weights), once per block. On the
    // CPU too, the call being one block, so that the CPU oracle checks the staged loads. There
    // the arrays live on the caller's stack: at most what a GPU block can have (check_schedule
    // refuses a larger budget).
    log.start();
    // A block that computes one cell (reduce_in_block) reads each element of a buffer once:
    // a copy would only add a pass.
    const std::size_t budget =
        k.schedule.reduce_in_block.value_or(false) ? 0
        : cuda ? *k.schedule.shared_memory_budget
               : schedule.shared_memory_budget.value_or(kDefaultSharedMemoryBudget);
    // 7e'. The tensor-core layers' weights and biases, rounded and padded, and the warps'
    // tiles: their own shared arrays, copied once per block (the budget, unless the schedule
    // sets one, is the whole of a block's shared memory).
    std::set<const FieldInfo*> staged_layers;
    if (mma) {
        log.start();
        const int warps = cuda ? (*k.schedule.block)[0] * (*k.schedule.block)[1] * (*k.schedule.block)[2] / kWarpSize : 0;
        StagedLayers staged = stage_layer_weights(flat, space.globals, warps,
                                                  k.schedule.shared_memory_budget.value_or(kMaxSharedMemoryPerBlock),
                                                  config.name);
        log.record("stage_layer_weights", flat, staged.body);
        flat = staged.body;
        staged_layers = std::move(staged.fields);
    }
    std::vector<BufferPtr> buffers;
    for (const FieldPtr& f : analysis.buffers)
        if (!staged_layers.count(f.get())) buffers.push_back(space.globals.at(f.get()));
    mapped = stage_buffers_in_shared(flat, buffers, budget).body;
    log.record("stage_buffers_in_shared", flat, mapped);

    // 8. Launch grid and shared memory, read off the bound loops and the shared arrays. The
    // CPU has none: its loops cover the iteration space themselves.
    log.start();
    if (cuda) {
        k.launch = infer_launch_grid(mapped, k.schedule, *config.index_type);
        // The warps' tiles are sized for the block: the kernel runs with exactly that block, and
        // is compiled for it (__launch_bounds__: a block of 512 threads gets at most 128
        // registers each, so that it always launches).
        fit_chosen_block(k.schedule, schedule, k.launch);
        if (mma) {
            k.launch.exact_block = true;
            const auto& b = *k.schedule.block;
            k.launch.max_threads_per_block = b[0] * b[1] * b[2];
        }
        k.launch.exact_grid = !across.empty();
    } else {
        k.launch = LaunchDescription::none("CPU target: loops, no launch grid");
    }
    log.note("infer_launch_grid", k.launch.describe());

    // 9. Verify the invariants the printer relies on.
    log.start();
    verify_lowered(mapped, k.params);
    log.note("verify_lowered", "ok");
    k.body = mapped;

    // 10. Names: the parameters get the names users pass them by, and their C types.
    log.start();
    name_parameters(k);
    log.note("name_parameters", std::to_string(k.params.size()) + " parameters");

    // 11. Print readable CUDA or C++, naming the locals around the parameters.
    log.start();
    if (cuda)
        print_cuda(k);
    else
        print_cpp(k);
    log.note(cuda ? "print_cuda" : "print_cpp", std::to_string(k.source.size()) + " characters");
    return k;
}

} // namespace loom::ir
