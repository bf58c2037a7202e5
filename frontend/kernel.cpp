#include <loom/kernel.hpp>

#include "compiler/ir/evaluate.hpp"
#include "compiler/ir/printer.hpp"
#include "compiler/ir/visitor.hpp"
#include "compiler/lower.hpp"
#include "compiler/tuning_space.hpp"
#include "frontend/resolve_types.hpp"
#include "frontend/time_steps.hpp"
#include "runtime/compile_cache.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>

namespace loom {
using namespace ir;

Kernel::Kernel(LoweredKernel lowered, std::vector<SourceAssignment> assignments, bool automatic_index)
    : k_(std::make_shared<const LoweredKernel>(std::move(lowered))),
      assignments_(std::make_shared<const std::vector<SourceAssignment>>(std::move(assignments))),
      automatic_index_(automatic_index) {}

std::string_view role_name(ParamRole r) {
    switch (r) {
    case ParamRole::FieldPointer: return "field pointer";
    case ParamRole::Size: return "size";
    case ParamRole::Stride: return "stride";
    case ParamRole::Scalar: return "scalar";
    }
    return "?";
}

const std::string& Kernel::name() const { return k_->name; }
const std::vector<KernelParam>& Kernel::parameters() const { return k_->params; }
const LaunchDescription& Kernel::launch() const { return k_->launch; }
const KernelConfig& Kernel::config() const { return k_->config; }
const Schedule& Kernel::schedule() const { return k_->schedule; }
const Schedule& Kernel::requested_schedule() const { return k_->requested_schedule; }
const std::vector<FieldPtr>& Kernel::fields() const { return k_->fields; }
const Stmt& Kernel::ir() const { return k_->body; }

std::string Kernel::cubin(int arch) const {
    if (k_->config.target != Target::CUDA)
        throw UserError(fmt::format("kernel '{}': cubin() compiles CUDA, but this kernel was "
                                    "created for Target::CPU; create it with Target::CUDA (the "
                                    "default) to get a CUBIN",
                                    k_->name));
    NvrtcOptions options;
    options.arch = arch;
    options.fast_math = k_->config.fast_math;
    return CompileCache::global().get(k_->source, k_->name, options).cubin;
}

std::string Kernel::source(SourceOptions options) const {
    return options.formatted ? format_source(k_->source) : k_->source;
}

namespace {
/// Read only at absolute positions: an argument outside the iteration space.
bool is_buffer(const LoweredKernel& k, const FieldPtr& f) {
    return std::find(k.buffers.begin(), k.buffers.end(), f) != k.buffers.end();
}
} // namespace

std::string Kernel::inspect() const {
    std::string out = fmt::format("Kernel {} (target {})\n", k_->name, target_name(k_->config.target));
    out += "Fields:\n";
    for (auto& f : k_->fields)
        out += fmt::format("  {}{}\n", f->describe(), is_buffer(*k_, f) ? " (buffer)" : "");
    out += "Parameters:\n";
    std::size_t w = 0;
    for (auto& p : k_->params) w = std::max(w, p.c_type.size() + 1 + p.name.size());
    for (auto& p : k_->params) {
        std::string decl = p.c_type + " " + p.name;
        std::string what;
        switch (p.role) {
        case ParamRole::FieldPointer: what = fmt::format("field {}{}", p.field->name, p.read_only ? " (read)" : " (written)"); break;
        case ParamRole::Size: what = fmt::format("size of axis {}", p.axis); break;
        case ParamRole::Stride: what = fmt::format("stride of {} along axis {}", p.field->name, p.axis); break;
        case ParamRole::Scalar: what = "scalar"; break;
        }
        out += fmt::format("  {:<{}}  {:<13}  {}\n", decl, w, role_name(p.role), what);
    }
    out += fmt::format("Index type: {}{}\n", type_name(*k_->config.index_type),
                       automatic_index_ ? " (automatic: an int64 variant is generated and used for "
                                      "arrays that span more than 2^31 - 1 elements)"
                                    : "");
    const LaunchDescription& L = k_->launch;
    out += "Launch:\n";
    if (!L.has_grid) {
        out += fmt::format("  none: {}\n  called on host arrays; block_size and num_blocks do "
                           "not apply\n", L.no_grid_reason);
    } else if (L.manual) {
        out += fmt::format("  manual: {}\n  set block_size and num_blocks before calling\n", L.manual_reason);
    } else {
        static const char* dims[] = {"x", "y", "z"};
        for (int d = 0; d < 3; ++d) {
            std::string axis = L.axis_of_dim[d] >= 0 ? fmt::format("axis {}", L.axis_of_dim[d]) : "unused";
            std::string cells = L.cells_per_thread[d] > 1 ? fmt::format(" ({} cells each)", L.cells_per_thread[d]) : "";
            out += fmt::format("  {}: {:<7} threads {}{}\n", dims[d], axis, to_string(L.extents[d]), cells);
        }
        out += fmt::format("  default block ({}), grid = ceil(threads / block)\n", fmt::join(L.default_block, ", "));
    }
    if (L.has_grid) out += "Schedule: " + k_->schedule.describe(k_->requested_schedule) + "\n";
    out += "Source:\n" + k_->source;
    return out;
}

namespace {
DType dtype_of(ScalarType t) {
    switch (t) {
    case ScalarType::Bool: return DType::Bool;
    case ScalarType::Int32: return DType::Int32;
    case ScalarType::Int64: return DType::Int64;
    case ScalarType::Float16: return DType::Float16;
    case ScalarType::BFloat16: return DType::BFloat16;
    case ScalarType::Float32: return DType::Float32;
    case ScalarType::Float64: return DType::Float64;
    }
    return DType::Float64;
}
} // namespace

namespace {
/// The sizes and scalar parameters of a call as the IR's variables (`values` indexed like
/// k.params; pointers are skipped).
Bindings bindings_of(const LoweredKernel& k, const std::vector<ScalarValue>& values) {
    Bindings b;
    for (std::size_t i = 0; i < k.params.size(); ++i) {
        const KernelParam& p = k.params[i];
        if (!p.var.defined()) continue;
        auto v = p.var.as<ir::VarNode>();
        b[v] = is_float(p.type) ? Value::of_float(p.type, values[i].f)
                                : Value::of_int(p.type, values[i].i);
    }
    return b;
}

/// What the launch needs to check that the slice stays inside the arrays: per axis the entry
/// as written, the reach, and the parameters and counters its bounds use (for the message),
/// and a closure that evaluates the bounds.
SliceBoundsSpec slice_bounds_of(const std::shared_ptr<const LoweredKernel>& k) {
    SliceBoundsSpec s;
    if (!k->config.iteration_slice) return s;
    const Slice& slice = *k->config.iteration_slice;
    for (std::size_t d = 0; d < k->slice_bounds.axes.size(); ++d) {
        const SliceBounds::Axis& a = k->slice_bounds.axes[d];
        SliceBoundsSpec::Axis axis;
        axis.text = slice.dims[d].as_written();
        axis.single = slice.dims[d].single;
        axis.below = k->reach[d].first;
        axis.above = k->reach[d].second;
        std::vector<Expr> used = subexpressions(a.start);
        for (const Expr& e : subexpressions(a.stop)) used.push_back(e);
        for (std::size_t i = 0; i < k->params.size(); ++i) {
            const KernelParam& p = k->params[i];
            if (p.role != ParamRole::Scalar) continue;
            for (const Expr& e : used)
                if (e.same_as(p.var)) {
                    axis.params.push_back(int(i));
                    break;
                }
        }
        for (std::size_t c = 0; c < d; ++c)
            for (const Expr& e : used)
                if (e.same_as(k->slice_bounds.axes[c].counter)) {
                    axis.counters.push_back(c < 3 ? std::string(1, "xyz"[c])
                                                  : fmt::format("ctr({})", c));
                    break;
                }
        s.axes.push_back(std::move(axis));
    }
    s.cells = [k](const std::vector<ScalarValue>& values, AxisCells* out) {
        std::vector<VisitedCells> v = k->slice_bounds.visited(bindings_of(*k, values));
        for (std::size_t d = 0; d < v.size(); ++d)
            out[d] = {v[d].empty, v[d].bounded, v[d].first, v[d].last};
    };
    return s;
}

KernelSpec spec_of(const std::shared_ptr<const LoweredKernel>& k_) {
    KernelSpec s;
    s.name = k_->name;
    s.source = k_->source;
    s.backend = k_->config.target == Target::CPU ? Backend::Host : Backend::Cuda;
    s.fast_math = k_->config.fast_math;
    s.index_type = dtype_of(*k_->config.index_type);
    for (auto& f : k_->fields) {
        FieldSpec fs;
        fs.name = f->name;
        fs.dtype = dtype_of(f->type);
        fs.spatial_dims = f->spatial_dims;
        fs.index_shape = f->index_shape;
        fs.fixed_shape = f->fixed_shape;
        if (f->is_fixed()) fs.fixed_strides = f->fixed_strides();
        fs.unit_stride_axis = f->unit_stride_axis();
        fs.layout = std::string(layout_name(f->layout));
        for (auto& p : k_->params)
            if (p.role == ParamRole::FieldPointer && p.field == f) fs.written = !p.read_only;
        fs.buffer = is_buffer(*k_, f);
        fs.read_shifted = std::find(k_->shifted_reads.begin(), k_->shifted_reads.end(), f) !=
                          k_->shifted_reads.end();
        s.fields.push_back(std::move(fs));
    }
    auto field_index = [&](const FieldPtr& f) {
        for (std::size_t i = 0; i < k_->fields.size(); ++i)
            if (k_->fields[i] == f) return int(i);
        return -1;
    };
    for (auto& p : k_->params) {
        ParamSpec ps;
        // A scalar is passed by the DSL's name, whatever the printer had to call it.
        ps.name = p.role == ParamRole::Scalar ? p.var.as<ir::VarNode>()->name : p.name;
        switch (p.role) {
        case ParamRole::FieldPointer: ps.role = ArgRole::FieldPointer; break;
        case ParamRole::Size: ps.role = ArgRole::Size; break;
        case ParamRole::Stride: ps.role = ArgRole::Stride; break;
        case ParamRole::Scalar: ps.role = ArgRole::Scalar; break;
        }
        ps.dtype = dtype_of(p.type);
        ps.field = p.field ? field_index(p.field) : -1;
        ps.axis = p.axis;
        s.params.push_back(std::move(ps));
    }
    const LaunchDescription& L = k_->launch;
    s.launch.manual = L.manual;
    s.launch.manual_reason = L.manual_reason;
    s.launch.default_block = {L.default_block[0], L.default_block[1], L.default_block[2]};
    s.launch.cells_per_thread = {L.cells_per_thread[0], L.cells_per_thread[1], L.cells_per_thread[2]};
    s.launch.max_threads_per_block = L.max_threads_per_block;
    s.launch.exact_block = L.exact_block;
    s.launch.exact_grid = L.exact_grid;
    s.launch.shared_bytes = L.shared_bytes;
    s.slice_bounds = slice_bounds_of(k_);
    auto k = k_; // the closures keep the IR of the extents alive
    if (!L.has_grid) return s; // CPU: the loops cover the space; no extents, no block
    if (!L.manual) {
        s.launch.extents = [k](const std::vector<ScalarValue>& values) {
            return k->launch.evaluate_extents(bindings_of(*k, values));
        };
    }
    s.launch.block_for = [k](const Dim3& ext) { return k->launch.block_for(ext); };
    return s;
}
} // namespace

namespace {
/// The runtime's spec of `k`: with its int64 variant when the index type is automatic, and the
/// means to lower it again with another schedule.
KernelSpec full_spec(const std::shared_ptr<const LoweredKernel>& k,
                     const std::shared_ptr<const std::vector<SourceAssignment>>& assignments,
                     bool automatic_index) {
    KernelSpec s = spec_of(k);
    if (automatic_index) {
        // The same kernel with 64-bit index math, for arrays that int32 cannot address.
        KernelConfig wide = k->config;
        wide.index_type = ScalarType::Int64;
        auto lowered = std::make_shared<const LoweredKernel>(
            lower(*assignments, wide, k->requested_schedule));
        s.wide = std::make_shared<const KernelSpec>(spec_of(lowered));
    }
    s.requested_schedule = k->requested_schedule;
    s.schedule = k->schedule;
    s.tuning = tuning_space(*k, *assignments);
    KernelConfig config = k->config;
    s.reschedule = [config, assignments, automatic_index](const Schedule& schedule) {
        auto lowered = std::make_shared<const LoweredKernel>(lower(*assignments, config, schedule));
        return full_spec(lowered, assignments, automatic_index);
    };
    return s;
}
} // namespace

KernelSpec Kernel::spec() const { return full_spec(k_, assignments_, automatic_index_); }

KernelFunction Kernel::compile(int device) const {
    // The CPU target runs on the host: no device to choose.
    return KernelFunction(spec(), k_->config.target == Target::CPU ? 0 : device);
}

namespace {
/// Whether a fixed-shape field of the kernel spans more elements than int32 index math addresses,
/// or a literal slice bound or step does not fit int32: then an automatic index type can only be
/// int64.
bool needs_int64_index(const std::vector<SourceAssignment>& flat, const KernelConfig& config) {
    if (config.iteration_slice)
        for (const SliceDim& d : config.iteration_slice->dims) {
            if (d.step > INT32_MAX) return true;
            for (const Bound* b : {&d.start, &d.stop})
                if (b->kind() == Bound::Kind::Index &&
                    (b->index() > INT32_MAX || b->index() < -INT32_MAX))
                    return true;
        }
    for (const SourceAssignment& a : flat)
        for (const Expr* root : {&a.lhs, &a.rhs})
            for (const Expr& e : subexpressions(*root))
                if (auto* f = e.as<FieldAccessNode>(); f && f->field->fixed_elements() > INT32_MAX)
                    return true;
    return false;
}
} // namespace

namespace {
/// The assignments of every stage, in order, with their stage numbers; types resolved over all of
/// them at once, as a parameter or temporary may appear in several stages.
Kernel create_staged_kernel(const std::vector<AssignmentCollection>& stages, const KernelConfig& config,
                            const Schedule& schedule,
                            const std::vector<std::pair<Field, Expr>>& on_chip = {}) {
    check_identifier(config.name, "kernel");
    std::vector<std::pair<Expr, Expr>> parts;
    std::vector<int> stage_of_part;
    std::vector<std::optional<CellReduction>> reduction_of_part;
    for (std::size_t s = 0; s < stages.size(); ++s)
        for (const Assignment& a : stages[s].all())
            for (auto& p : a.parts()) {
                parts.push_back(p);
                stage_of_part.push_back(int(s) + 1);
                reduction_of_part.push_back(a.over_cells());
            }
    // Untyped parameters and plain numbers get their types (default_type) before lower() runs.
    std::vector<SourceAssignment> flat;
    for (auto& [lhs, rhs] : resolve_types(parts, config)) {
        const std::size_t i = flat.size();
        std::string text = reduction_of_part[i]
            ? fmt::format("{} = {} over cells of {}", to_string(lhs), cell_reduction_name(*reduction_of_part[i]), to_string(rhs))
            : to_string(lhs) + " = " + to_string(rhs);
        flat.push_back({lhs, rhs, std::move(text), stage_of_part[i], false, reduction_of_part[i]});
    }
    // On-chip fields: what each holds outside the iteration space (analyze_kernel checks them).
    for (auto& [field, outside] : on_chip)
        flat.push_back({field.center().stored_expr(), outside,
                        fmt::format("on_chip({}, {})", field.name(), to_string(outside)), 1, true});
    // Unset index type: int32 (faster index math) by default, int64 when a call needs it; int64
    // alone when a fixed shape is already too large for int32.
    bool automatic = !config.index_type;
    KernelConfig cfg = config;
    if (automatic) {
        const bool wide = needs_int64_index(flat, config);
        cfg.index_type = wide ? ScalarType::Int64 : ScalarType::Int32;
        automatic = !wide;
    }
    LoweredKernel lowered = lower(flat, cfg, schedule);
    return Kernel(std::move(lowered), std::move(flat), automatic);
}
} // namespace

namespace {
/// "ghost layers ((1, 1), (1, 1))" or "the slice [range(0, n), all()]": a kernel's iteration space.
std::string iteration_space_text(const LoweredKernel& k) {
    if (!k.config.iteration_slice) {
        std::vector<std::string> g;
        for (auto [lo, hi] : k.ghost_layers) g.push_back(fmt::format("({}, {})", lo, hi));
        return fmt::format("ghost layers ({})", fmt::join(g, ", "));
    }
    std::vector<std::string> dims;
    for (const SliceDim& d : k.config.iteration_slice->dims)
        dims.push_back(d.step == 1 ? d.as_written() : fmt::format("{} step {}", d.as_written(), d.step));
    return fmt::format("the slice [{}]", fmt::join(dims, ", "));
}
} // namespace

namespace {
/// Replaces the second kernel's scalar parameters by the first kernel's of the same name, so
/// that the fused kernel takes one argument for both; refuses two types under one name.
class ParameterMerge : public IRMutator {
public:
    ParameterMerge(const LoweredKernel& a, const LoweredKernel& b) : a_(a), b_(b) {}
    void learn(const Expr& root) {
        for (const Expr& e : subexpressions(root))
            if (auto v = e.as<VarNode>(); v && v->role == VarRole::Parameter) first_.emplace(v->name, e);
    }
    Expr visit_Var(const VarNode* v, const Expr& self) override {
        if (v->role != VarRole::Parameter) return self;
        auto it = first_.find(v->name);
        if (it == first_.end()) return self;
        const ScalarType ta = it->second.as<VarNode>()->type;
        if (ta != v->type)
            throw UserError(fmt::format(
                "fuse('{}', '{}'): both take a scalar parameter '{}', as {} in '{}' and {} in "
                "'{}'; the fused kernel takes one argument per name. Give the parameter one type "
                "(param<T>(\"{}\") in both), or rename one",
                a_.name, b_.name, v->name, type_name(ta), a_.name, type_name(v->type), b_.name,
                v->name));
        return it->second;
    }

private:
    const LoweredKernel &a_, &b_;
    std::map<std::string, Expr> first_;
};
} // namespace

Kernel fuse(const Kernel& first, const Kernel& second, const std::string& name,
            const Schedule& schedule) {
    const LoweredKernel &a = *first.k_, &b = *second.k_;
    const std::string fused_name = name.empty() ? a.name + "_" + b.name : name;
    auto refuse = [&](const std::string& why, const std::string& fix) {
        throw UserError(fmt::format("fuse('{}', '{}'): {}; {}", a.name, b.name, why, fix));
    };
    if (a.config.target != b.config.target)
        refuse(fmt::format("'{}' is for Target::{} and '{}' for Target::{}", a.name,
                           target_name(a.config.target), b.name, target_name(b.config.target)),
               "create both for one target");
    if (a.config.fast_math != b.config.fast_math)
        refuse(fmt::format("'{}' has fast_math = {} and '{}' fast_math = {}", a.name,
                           a.config.fast_math, b.name, b.config.fast_math),
               "create both with one fast_math setting");
    const std::string space_a = iteration_space_text(a), space_b = iteration_space_text(b);
    if (space_a != space_b)
        refuse(fmt::format("'{}' iterates over {} and '{}' over {}", a.name, space_a, b.name,
                           space_b),
               "a fused kernel has one iteration space: give both kernels the same ghost_layers "
               "(or iteration_slice) in their KernelConfig");
    if (*a.config.index_type != *b.config.index_type ||
        first.automatic_index_ != second.automatic_index_)
        refuse(fmt::format("'{}' uses index type {}{} and '{}' {}{}", a.name,
                           type_name(*a.config.index_type), first.automatic_index_ ? " (automatic)" : "",
                           b.name, type_name(*b.config.index_type),
                           second.automatic_index_ ? " (automatic)" : ""),
               "create both with the same KernelConfig::index_type (or both with it unset)");
    // Their fields, on-chip ones (Stages::on_chip, time_steps' `<dst>_step<k>`) included.
    auto all_fields = [](const LoweredKernel& k, const std::vector<SourceAssignment>& flat) {
        std::vector<std::pair<FieldPtr, bool>> out; // (field, on chip)
        for (const FieldPtr& f : k.fields) out.emplace_back(f, false);
        for (const SourceAssignment& s : flat)
            if (s.on_chip) out.emplace_back(s.lhs.as<FieldAccessNode>()->field, true);
        return out;
    };
    for (auto& [f, f_chip] : all_fields(a, *first.assignments_))
        for (auto& [g, g_chip] : all_fields(b, *second.assignments_))
            if (f != g && f->name == g->name)
                refuse(fmt::format("both have a field named '{}', but they are two different "
                                   "Fields ({}{} and {}{})", f->name, f->describe(),
                                   f_chip ? ", on chip in '" + a.name + "'" : "", g->describe(),
                                   g_chip ? ", on chip in '" + b.name + "'" : ""),
                       f_chip || g_chip
                           ? "rename the other field (an on-chip field of time_steps is named "
                             "<dst>_step<k>)"
                           : "declare the field once and use that Field in both kernels, so "
                             "that the fused kernel knows they are one array; or rename one");

    // first's stages, then second's, renumbered after them; a scalar parameter of one name is
    // one argument (create_kernel typed each kernel's own copy of an untyped one).
    std::vector<SourceAssignment> flat = *first.assignments_;
    int stages = 0;
    for (const SourceAssignment& s : flat) stages = std::max(stages, s.stage);
    ParameterMerge merge(a, b);
    for (const SourceAssignment& s : flat)
        for (const Expr* root : {&s.lhs, &s.rhs}) merge.learn(*root);
    for (SourceAssignment s : *second.assignments_) {
        s.stage += stages;
        s.lhs = merge.mutate(s.lhs);
        s.rhs = merge.mutate(s.rhs);
        flat.push_back(std::move(s));
    }
    KernelConfig config = a.config;
    config.name = fused_name;
    check_identifier(config.name, "kernel");
    // The space both iterate over, fixed: automatic ghost layers would be chosen again from the
    // fused stages' reach, another space than either kernel's.
    if (!config.iteration_slice) config.ghost_layers = GhostLayers(a.ghost_layers);
    LoweredKernel lowered = lower(flat, config, schedule);
    return Kernel(std::move(lowered), std::move(flat), first.automatic_index_);
}

Kernel create_kernel(const AssignmentCollection& assignments, const KernelConfig& config,
                     const Schedule& schedule) {
    if (config.time_steps != 1 || !config.ping_pong.empty()) {
        // Temporal blocking: the steps as stages, the states between them on chip.
        Stages steps = time_step_stages(assignments, config);
        return create_staged_kernel(steps.stages(), config, schedule, steps.on_chip_fields());
    }
    return create_staged_kernel({assignments}, config, schedule);
}

Kernel create_kernel(const Stages& stages, const KernelConfig& config, const Schedule& schedule) {
    if (config.time_steps != 1 || !config.ping_pong.empty()) {
        // Time steps repeat a kernel of one stage: the step.
        if (stages.stages().size() == 1 && stages.on_chip_fields().empty())
            return create_kernel(stages.stages().front(), config, schedule);
        throw UserError(fmt::format(
            "kernel '{}' has time_steps = {} (or ping_pong pairs) and {} stages{}; time steps "
            "repeat one step, which becomes the stages of the steps. Pass the step's "
            "assignments alone, or set time_steps to 1", config.name, config.time_steps,
            stages.stages().size(), stages.on_chip_fields().empty() ? "" : " with on-chip fields"));
    }
    for (std::size_t s = 0; s < stages.stages().size(); ++s)
        if (stages.stages()[s].all().empty())
            throw UserError(fmt::format(
                "kernel '{}' has {} stages, and stage {} has no assignments; give every stage at "
                "least one Assignment, or leave the empty stage out",
                config.name, stages.stages().size(), s + 1));
    if (stages.stages().empty())
        throw UserError(fmt::format("kernel '{}' has no stages; pass Stages with at least one "
                                    "AssignmentCollection", config.name));
    return create_staged_kernel(stages.stages(), config, schedule, stages.on_chip_fields());
}

} // namespace loom
