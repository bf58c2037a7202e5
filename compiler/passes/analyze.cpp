#include "compiler/passes/analyze.hpp"

#include "compiler/ir/printer.hpp"
#include "compiler/ir/redirect.hpp"
#include "compiler/ir/visitor.hpp"
#include "compiler/passes/check_schedule.hpp"

#include <loom/errors.hpp>
#include <loom/half.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>

namespace loom::ir {

namespace {

/// Offsets print as in the DSL's debug notation, f[1, 0]; parentheses would read as components.
std::string offsets_text(const std::vector<int>& o) { return fmt::format("[{}]", fmt::join(o, ", ")); }

/// The C++ spelling of cast<T> for a scalar type, for fix-it hints.
std::string cpp_type(ScalarType t) {
    switch (t) {
    case ScalarType::Float32: return "float";
    case ScalarType::Float64: return "double";
    case ScalarType::Int32: return "std::int32_t";
    case ScalarType::Int64: return "std::int64_t";
    case ScalarType::Float16: return "loom::half";
    case ScalarType::BFloat16: return "loom::bfloat16";
    default: return std::string(type_name(t));
    }
}

std::string a_or_an(ScalarType t) { return is_int(t) ? "an" : "a"; }

class Analyzer {
public:
    Analyzer(const std::vector<SourceAssignment>& in, const std::vector<SourceAssignment>& on_chip,
             const KernelConfig& cfg, const Schedule& schedule)
        : in_(in), on_chip_(on_chip), cfg_(cfg), schedule_(schedule) {}

    KernelAnalysis run() {
        check_config();
        if (in_.empty())
            fail("has no assignments; pass at least one Assignment that writes a field");
        check_no_scatter();
        check_index_variables();
        collect();
        collect_on_chip();
        classify_buffers();
        check_fields();
        check_cells_axis(schedule_, *a_.primary, cfg_.name);
        check_writes();
        check_stages();
        check_on_chip();
        check_gathers();
        compute_reach();
        resolve_ghost_layers();
        check_slice();
        check_cell_reduction_space();
        check_shared_tiles(schedule_, a_.spatial_dims, cfg_.iteration_slice,
                           a_.bounds_depend_on_counters, cfg_.name);
        check_reduce_in_block(schedule_, a_.spatial_dims, cfg_.iteration_slice,
                              a_.bounds_depend_on_counters, cfg_.name);
        check_reduce_in_warp(schedule_, a_.spatial_dims, cfg_.iteration_slice,
                             a_.bounds_depend_on_counters, cfg_.name);
        check_stage_halos();
        check_lanes();
        collect_shifted_reads();
        a_.body = build_body();
        return std::move(a_);
    }

private:
    struct Read {
        FieldPtr field;
        std::vector<int> offsets, components;
        std::size_t stmt;
        bool indexed = false; ///< components chosen by IndexVars: any element may be read
    };
    struct Write {
        FieldPtr field;
        std::vector<int> offsets, components;
        std::size_t stmt;
        bool indexed = false; ///< components chosen by IndexVars: every element is written
    };
    /// A read at absolute positions (Field::at).
    struct Gather {
        FieldPtr field;
        std::size_t stmt;
    };

    [[noreturn]] void fail(const std::string& what) const {
        throw UserError(fmt::format("kernel '{}' {}", cfg_.name, what));
    }

    // ---- configuration ----
    void check_config() {
        if (cfg_.target != Target::CUDA && cfg_.target != Target::CPU)
            fail(fmt::format("has target {}, which is neither Target::CUDA ({}) nor Target::CPU "
                             "({}); set KernelConfig::target to one of them",
                             int(cfg_.target), int(Target::CUDA), int(Target::CPU)));
        check_slice_literals();
        if (cfg_.index_type && *cfg_.index_type != ScalarType::Int32 &&
            *cfg_.index_type != ScalarType::Int64)
            fail(fmt::format("has index_type {}; the index type must be int32 or int64 (or unset "
                             "to let loom choose per call)", type_name(*cfg_.index_type)));
        // The schedule's GPU-only fields are checked on the CPU target too, and then ignored
        // there, so that one config and schedule switch targets by changing `target` alone: the
        // CPU loops cover the whole iteration space. KernelFunction refuses block_size and
        // num_blocks at call time, where setting them would be a request it cannot honour.
        // A CPU kernel may have any name: its code and its exported entry point carry
        // loom-owned names (loom_kernel_<name>, cpp_printer.hpp), never the C library's.
        check_schedule(schedule_, cfg_.name);
        if (cfg_.iteration_slice && cfg_.ghost_layers_set())
            fail("sets both iteration_slice and ghost_layers; a slice gives the iteration space "
                 "exactly, so set only one of them");
    }

    /// Literal slice bounds and steps are printed as literals of the index type: one that does
    /// not fit would wrap (an int32 step of 3000000000 became a negative step, an endless loop).
    void check_slice_literals() {
        if (!cfg_.iteration_slice) return;
        const Slice& s = *cfg_.iteration_slice;
        const bool int32 = cfg_.index_type == ScalarType::Int32;
        for (std::size_t d = 0; d < s.dims.size(); ++d) {
            const SliceDim& sd = s.dims[d];
            for (auto [b, what] : {std::pair{&sd.start, sd.single ? "index" : "start"},
                                   std::pair{&sd.stop, "stop"}}) {
                if (b->kind() != Bound::Kind::Index || (sd.single && b == &sd.stop)) continue;
                const std::int64_t v = b->index();
                if (v == INT64_MIN)
                    fail(fmt::format("has the slice {} whose {} {} on axis {} counts more cells "
                                     "from the end than any array has; use an index within the "
                                     "axis", s.describe(), what, v, d));
                if (int32 && (v > INT32_MAX || v < -INT32_MAX))
                    fail(fmt::format("has the slice {} whose {} {} on axis {} does not fit "
                                     "index_type int32 (axes of at most 2^31 - 1 cells); set "
                                     "index_type to int64, or leave it unset and loom chooses",
                                     s.describe(), what, v, d));
            }
            if (int32 && sd.step > INT32_MAX)
                fail(fmt::format("has the slice {} whose step {} on axis {} does not fit "
                                 "index_type int32 (axes of at most 2^31 - 1 cells); set "
                                 "index_type to int64, or leave it unset and loom chooses",
                                 s.describe(), sd.step, d));
        }
    }

    // ---- collection ----
    void note_field(const FieldPtr& f) {
        if (std::find(a_.fields.begin(), a_.fields.end(), f) != a_.fields.end()) return;
        for (auto& g : a_.fields)
            if (g->name == f->name)
                fail(fmt::format("uses two different fields named '{}' ({} and {}); declare each "
                                 "field once and reuse the Field object, or rename one",
                                 f->name, g->describe(), f->describe()));
        a_.fields.push_back(f);
    }

    void note_reads(const Expr& rhs, std::size_t stmt) { note_nodes(subexpressions(rhs), stmt); }

    void note_nodes(const std::vector<Expr>& nodes, std::size_t stmt) {
        // A layer's array: what its definition reads is read by this statement. Definitions
        // first, so arguments appear in data-flow order (a chain's input before its first
        // layer's bias and weights, those before the next layer's).
        for (const Expr& e : nodes)
            if (auto l = e.as<BufferLoadNode>(); l && l->buffer->definition &&
                                                noted_arrays_.insert(l->buffer.get()).second)
                note_definition(*l->buffer->definition, stmt);
        for (const Expr& e : nodes) {
            if (auto fa = e.as<FieldAccessNode>()) {
                note_field(fa->field);
                if (fa->absolute()) // a gather: no offset, so no reach and no stencil race
                    gathers_.push_back({fa->field, stmt});
                else
                    reads_.push_back({fa->field, fa->offsets, fa->components, stmt,
                                      fa->indexed_components()});
            } else if (auto v = e.as<VarNode>()) {
                if (v->role == VarRole::Parameter) note_param(e);
                if (v->role == VarRole::Temporary) check_temp_read(e, stmt);
            } else if (auto c = e.as<CounterNode>()) {
                counters_.push_back({c->axis, stmt});
            }
        }
    }

    /// A layer reads its input values, then its bias and weights at positions of its own.
    void note_definition(const ArrayDefinition& d, std::size_t stmt) {
        for (const Expr& x : d.inputs) note_nodes(subexpressions(x), stmt);
        for (const FieldPtr& f : {d.layer.bias_field, d.layer.weight_field}) {
            if (!f) continue;
            note_field(f);
            gathers_.push_back({f, stmt});
        }
    }

    void note_param(const Expr& p) {
        for (auto& q : a_.parameters) {
            if (q.same_as(p)) return;
            if (q.as<VarNode>()->name == p.as<VarNode>()->name)
                fail(fmt::format("uses two different scalar parameters named '{}'; create it once "
                                 "with param<T>(\"{}\") and reuse the Expr",
                                 q.as<VarNode>()->name, q.as<VarNode>()->name));
        }
        a_.parameters.push_back(p);
    }

    void check_temp_read(const Expr& t, std::size_t stmt) {
        if (auto d = temp_stage_.find(t.get()); d != temp_stage_.end() && d->second != in_[stmt].stage)
            fail(fmt::format("reads the temporary '{}' in stage {} (assignment {}: `{}`), but stage "
                             "{} defines it; a temporary lives within its stage, so write the "
                             "value into a field in stage {} and read the field, or define the "
                             "temporary again in stage {}",
                             t.as<VarNode>()->name, in_[stmt].stage, stmt + 1, in_[stmt].text,
                             d->second, d->second, in_[stmt].stage));
        if (defined_temps_.count(t.get())) return;
        const std::string& name = t.as<VarNode>()->name;
        if (in_[stmt].lhs.same_as(t))
            fail(fmt::format("reads the temporary '{}' in its own definition (assignment {}: `{}`); "
                             "a temporary is defined once, so compute the new value into another "
                             "temporary", name, stmt + 1, in_[stmt].text));
        for (const ExprNode* d : defined_temps_)
            if (static_cast<const VarNode*>(d)->name == name)
                fail(fmt::format("reads a temporary named '{}' in assignment {} (`{}`) that is a "
                                 "different object from the defined temporary '{}'; create it once "
                                 "with temp<T>(\"{}\") and reuse the Expr",
                                 name, stmt + 1, in_[stmt].text, name, name));
        for (std::size_t j = stmt; j < in_.size(); ++j)
            if (in_[j].lhs.same_as(t))
                fail(fmt::format("reads the temporary '{}' in assignment {} (`{}`) before it is "
                                 "defined in assignment {} (`{}`); move the definition first",
                                 name, stmt + 1, in_[stmt].text, j + 1, in_[j].text));
        fail(fmt::format("reads the temporary '{}' in assignment {} (`{}`), but no assignment "
                         "defines it; assign it first, or use param<T>(\"{}\") if it is a kernel "
                         "argument", name, stmt + 1, in_[stmt].text, name));
    }

    void collect() {
        for (std::size_t i = 0; i < in_.size(); ++i) {
            const SourceAssignment& s = in_[i];
            if (auto fa = s.lhs.as<FieldAccessNode>()) note_field(fa->field);
            note_reads(s.rhs, i);
            if (auto fa = s.lhs.as<FieldAccessNode>(); fa && s.over_cells) {
                note_cell_reduction(fa, i);
            } else if (auto fa = s.lhs.as<FieldAccessNode>()) {
                writes_.push_back({fa->field, fa->offsets, fa->components, i, fa->indexed_components()});
                if (std::find(a_.written.begin(), a_.written.end(), fa->field) == a_.written.end())
                    a_.written.push_back(fa->field);
            } else if (auto v = s.lhs.as<VarNode>()) {
                if (v->role != VarRole::Temporary)
                    fail(fmt::format("assigns to '{}' in assignment {}, which is not a temporary or "
                                     "a field", v->name, i + 1));
                if (defined_temps_.count(s.lhs.get()))
                    fail(fmt::format("assigns the temporary '{}' twice (assignment {}: `{}`); "
                                     "temporaries are defined once, so use a new temporary",
                                     v->name, i + 1, s.text));
                defined_temps_.insert(s.lhs.get());
                temp_stage_[s.lhs.get()] = s.stage;
            } else {
                throw InternalError("assignment lhs is neither a field access nor a variable");
            }
        }
        if (a_.written.empty())
            fail("writes no field, so it would have no effect; assign at least one field access "
                 "such as f.center()");
        check_cell_reductions();
        for (const FieldPtr& f : a_.written)
            if (!is_reduction_target(f)) {
                a_.primary = f;
                return;
            }
        // Only reductions across cells: the iteration space is that of the first field read at
        // the cell (its layout decides the order of the cells).
        if (!reads_.empty()) {
            a_.primary = reads_.front().field;
            return;
        }
        fail(fmt::format("reduces across cells (`{}`) but reads no field at the cell, so it has "
                         "no iteration space; read the field to reduce at the cell, e.g. "
                         "x.center(), not with .at()", in_[reduction_targets_.front().stmt].text));
    }

    // ---- reductions across cells (sum_over_cells, ...) ----
    struct ReductionTarget {
        FieldPtr field;
        std::vector<std::int64_t> element;
        std::size_t stmt;
    };
    std::vector<ReductionTarget> reduction_targets_;

    bool is_reduction_target(const FieldPtr& f) const {
        return std::any_of(reduction_targets_.begin(), reduction_targets_.end(),
                           [&](const ReductionTarget& t) { return t.field == f; });
    }

    /// `target.at({i, ...}) = <op> over the cells of value`: the target is one element, at
    /// literal coordinates, of a fixed-shape field that nothing else in the kernel touches.
    void note_cell_reduction(const FieldAccessNode* fa, std::size_t i) {
        const SourceAssignment& s = in_[i];
        const std::string& name = fa->field->name;
        if (!fa->absolute() || !fa->component_indices.empty())
            fail(fmt::format("reduces across cells into `{}` in assignment {} (`{}`); the target of "
                             "a reduction across cells is one element, read with .at() at integer "
                             "literals: {}.at({{0}})", to_string(s.lhs), i + 1, s.text, name));
        if (!fa->field->is_fixed())
            fail(fmt::format("reduces across cells into field {} in assignment {} (`{}`), whose "
                             "shape is not fixed; declare the result with a fixed shape, e.g. "
                             "field<float>(\"{}\", std::vector<std::int64_t>{{1}}) or "
                             "fields(\"{}: float32[1]\"), so that its element is checked here",
                             name, i + 1, s.text, name, name));
        std::vector<std::int64_t> element;
        for (const Expr& x : fa->indices) {
            auto c = x.as<ConstNode>();
            if (!c || !is_int(c->type))
                fail(fmt::format("reduces across cells into `{}` in assignment {} (`{}`), at the "
                                 "computed index `{}`; the element of a reduction across cells is "
                                 "an integer literal (a result per row or column, at a counter, "
                                 "is not supported yet: reduce over an IndexVar with sum(k, ...) "
                                 "per cell instead)", to_string(s.lhs), i + 1, s.text, to_string(x)));
            element.push_back(c->int_value);
        }
        for (int c : fa->components) element.push_back(c);
        for (const ReductionTarget& t : reduction_targets_)
            if (t.field == fa->field && t.element == element)
                fail(fmt::format("reduces across cells into `{}` twice, in assignments {} (`{}`) "
                                 "and {} (`{}`); give each reduction an element of its own",
                                 to_string(s.lhs), t.stmt + 1, in_[t.stmt].text, i + 1, s.text));
        reduction_targets_.push_back({fa->field, element, i});
        if (std::find(a_.written.begin(), a_.written.end(), fa->field) == a_.written.end())
            a_.written.push_back(fa->field);
    }

    /// The blocks of a reduction across cells number the cells of a box: a slice whose bounds
    /// use another counter (a triangle) has none.
    void check_cell_reduction_space() const {
        if (reduction_targets_.empty() || !a_.bounds_depend_on_counters) return;
        const ReductionTarget& first = reduction_targets_.front();
        fail(fmt::format("reduces across cells (assignment {}: `{}`) over an iteration slice whose "
                         "bounds use another counter; a reduction across cells runs over a box of "
                         "cells: give the slice bounds of numbers, sizes and parameters, and "
                         "select the cells you want with select(condition, value, 0) in the value",
                         first.stmt + 1, in_[first.stmt].text));
    }

    /// A reduction's target is written once, by the last block, after every cell: a cell that
    /// wrote it or read it would race with that. Stages and on-chip fields are not combined
    /// with reductions across cells yet.
    void check_cell_reductions() const {
        if (reduction_targets_.empty()) return;
        const ReductionTarget& first = reduction_targets_.front();
        for (std::size_t i = 0; i < in_.size(); ++i) {
            const SourceAssignment& s = in_[i];
            if (s.stage > 1 || !on_chip_.empty())
                fail(fmt::format("reduces across cells (assignment {}: `{}`) in a kernel of several "
                                 "stages (Stages, fuse() or time_steps); a reduction across cells "
                                 "is a kernel of its own so far: create it apart and launch it "
                                 "after the others", first.stmt + 1, in_[first.stmt].text));
            if (s.over_cells) continue;
            if (s.lhs.is<FieldAccessNode>())
                fail(fmt::format("writes field {} per cell (assignment {}: `{}`) and reduces across "
                                 "cells (assignment {}: `{}`) in one kernel; a kernel with a "
                                 "reduction across cells computes only reductions (and the "
                                 "temporaries they use) so far: write {} in a kernel of its own",
                                 s.lhs.as<FieldAccessNode>()->field->name, i + 1, s.text,
                                 first.stmt + 1, in_[first.stmt].text,
                                 s.lhs.as<FieldAccessNode>()->field->name));
        }
        auto refuse_read = [&](const FieldPtr& f, std::size_t stmt) {
            if (is_reduction_target(f))
                fail(fmt::format("reads field {} in assignment {} (`{}`), the target of a reduction "
                                 "across cells; its value is written once, after every cell, so no "
                                 "cell can read it: read it in a later kernel",
                                 f->name, stmt + 1, in_[stmt].text));
        };
        for (auto& r : reads_) refuse_read(r.field, r.stmt);
        for (auto& g : gathers_) refuse_read(g.field, g.stmt);
    }

    // ---- index variables (IndexVar) ----
    /// Every IndexVar is used inside what binds it: a reduction over it, or an assignment whose
    /// left side indexes with it (which writes every element). A bound variable is not bound again.
    void check_index_variables() const {
        for (std::size_t i = 0; i < in_.size(); ++i) {
            std::vector<const VarNode*> bound;
            if (auto fa = in_[i].lhs.as<FieldAccessNode>())
                for (const Expr& v : fa->component_indices) bound.push_back(v.as<VarNode>());
            if (auto fa = in_[i].lhs.as<FieldAccessNode>())
                for (const Expr& x : fa->indices) check_bound(x, bound, i);
            check_bound(in_[i].rhs, bound, i);
        }
    }

    void check_bound(const Expr& e, std::vector<const VarNode*>& bound, std::size_t stmt) const {
        if (auto v = e.as<VarNode>(); v && v->role == VarRole::Index) {
            if (std::find(bound.begin(), bound.end(), v) != bound.end()) return;
            const bool temp = in_[stmt].lhs.is<VarNode>();
            fail(fmt::format(
                "uses the index variable {} outside anything that binds it, in assignment {} (`{}`); "
                "use it inside a reduction over it, sum({}, ...) (or max, min, mean){}",
                v->name, stmt + 1, in_[stmt].text, v->name,
                temp ? ": a temporary holds one value per cell, not one per element"
                     : fmt::format(", or index the left side with it, y({}) = ..., to write every "
                                   "element", v->name)));
        }
        if (auto r = e.as<ReduceNode>()) {
            auto v = r->var.as<VarNode>();
            if (std::find(bound.begin(), bound.end(), v) != bound.end())
                fail(fmt::format("reduces over the index variable {} inside something that binds {} "
                                 "already, in assignment {} (`{}`); use a second IndexVar for the "
                                 "inner reduction", v->name, v->name, stmt + 1, in_[stmt].text));
            check_bound(r->start, bound, stmt);
            check_bound(r->stop, bound, stmt);
            bound.push_back(v);
            check_bound(r->body, bound, stmt);
            bound.pop_back();
            return;
        }
        for (const Expr& c : children(e)) check_bound(c, bound, stmt);
    }

    // ---- buffers and gathers (absolute reads) ----
    bool is_buffer(const FieldPtr& f) const {
        return std::find(a_.buffers.begin(), a_.buffers.end(), f) != a_.buffers.end();
    }
    bool is_written(const FieldPtr& f) const {
        return std::find(a_.written.begin(), a_.written.end(), f) != a_.written.end();
    }

    /// Assignment refuses scatter writes already; this catches IR assembled by other means.
    void check_no_scatter() const {
        for (std::size_t i = 0; i < in_.size(); ++i)
            if (auto fa = in_[i].lhs.as<FieldAccessNode>(); fa && fa->absolute() && !in_[i].over_cells)
                fail(fmt::format("writes field {} at an absolute position in assignment {} (`{}`): "
                                 "scatter writes are not supported; write {}.center() (or a fixed "
                                 "offset) and read inputs with .at()",
                                 fa->field->name, i + 1, in_[i].text, fa->field->name));
    }

    /// A field read only at absolute positions is a buffer: a kernel argument with its own shape
    /// and dimensionality, outside the iteration space. A relative read or any write puts a field
    /// in the iteration space; every kernel writes one, so that space always exists.
    void classify_buffers() {
        std::set<const FieldInfo*> in_space;
        for (auto& r : reads_) in_space.insert(r.field.get());
        for (auto& w : writes_) in_space.insert(w.field.get());
        for (auto& [f, outside] : a_.on_chip)
            if (auto fa = outside.as<FieldAccessNode>()) in_space.insert(fa->field.get());
        for (auto& f : a_.fields)
            if (!in_space.count(f.get())) a_.buffers.push_back(f);
        if (a_.buffers.size() >= a_.fields.size())
            throw InternalError("analyze_kernel: every field is a buffer, but a kernel writes at "
                                "least one field, which is never a buffer");
    }

    /// The first field of the iteration space: its dimensionality is the kernel's.
    const FieldInfo& first_space_field() const {
        for (auto& f : a_.fields)
            if (!is_buffer(f)) return *f;
        throw InternalError("analyze_kernel: no field in the iteration space");
    }

    /// Cells run in parallel, so a position read by one cell may be written by another: whether
    /// it holds the old or the new value is a race, as for an in-place stencil.
    void check_gathers() const {
        for (auto& g : gathers_)
            if (is_written(g.field))
                fail(fmt::format("reads field {} at absolute positions (.at() in assignment {}: `{}`) "
                                 "and writes it: cells run in parallel, so a position another cell "
                                 "writes may hold its old or its new value (a race). Read from one "
                                 "field and write into a second field, and swap the two after each "
                                 "step", g.field->name, g.stmt + 1, in_[g.stmt].text));
    }

    // ---- fields ----
    void check_fields() {
        const FieldInfo& p = first_space_field();
        a_.spatial_dims = p.spatial_dims;
        for (auto& f : a_.fields) {
            // Fixed sizes and strides are baked into the index math as literals of the index type.
            if (cfg_.index_type == ScalarType::Int32 && f->fixed_elements() > INT32_MAX)
                fail(fmt::format("has index_type int32, but field {} has a fixed shape of {} "
                                 "elements, more than int32 index math can address (2^31 - 1); "
                                 "set index_type to int64, or leave it unset and loom chooses",
                                 f->describe(), f->fixed_elements()));
            // A buffer has its own shape: it takes no part in the iteration space's checks.
            if (is_buffer(f)) continue;
            if (f->spatial_dims != p.spatial_dims)
                fail(fmt::format("mixes fields of different dimensionality: {} is {}D but {} is "
                                 "{}D; all fields of a kernel share one iteration space",
                                 p.name, p.spatial_dims, f->name, f->spatial_dims));
            // An on-chip field has no array: its shape fixes no size (the arguments' do).
            if (f->is_fixed() && !a_.is_on_chip(f.get())) {
                if (a_.fixed_shape_source && a_.fixed_shape_source->fixed_shape != f->fixed_shape)
                    fail(fmt::format("mixes fixed shapes: {} is [{}] but {} is [{}]; fields of "
                                     "one kernel must have the same spatial shape",
                                     a_.fixed_shape_source->name,
                                     fmt::join(a_.fixed_shape_source->fixed_shape, ", "), f->name,
                                     fmt::join(f->fixed_shape, ", ")));
                if (!a_.fixed_shape_source) a_.fixed_shape_source = f.get();
            }
        }
        for (auto& q : a_.parameters)
            for (auto& f : a_.fields)
                if (q.as<VarNode>()->name == f->name)
                    fail(fmt::format("has a scalar parameter and a field both named '{}'; rename "
                                     "one of them", f->name));
        for (auto& c : counters_)
            if (c.first >= a_.spatial_dims)
                fail(fmt::format("uses the counter {} (axis {}) in assignment {}, but the kernel "
                                 "is {}D; counters go up to axis {}",
                                 c.first < 3 ? std::string(1, "xyz"[c.first]) : fmt::format("ctr({})", c.first),
                                 c.first, c.second + 1, a_.spatial_dims, a_.spatial_dims - 1));
    }

    // ---- races and double writes ----
    void check_writes() {
        for (std::size_t i = 0; i < writes_.size(); ++i)
            for (std::size_t j = 0; j < i; ++j) {
                const Write& a = writes_[j];
                const Write& b = writes_[i];
                if (a.field != b.field) continue;
                if (stage(a) != stage(b))
                    fail(fmt::format("writes field {} in stage {} (assignment {}: `{}`) and again in "
                                     "stage {} (assignment {}: `{}`); each field is written by one "
                                     "stage, so write the later stage's result into another field",
                                     a.field->name, stage(a), a.stmt + 1, in_[a.stmt].text, stage(b),
                                     b.stmt + 1, in_[b.stmt].text));
                if (a.indexed || b.indexed) {
                    const Write& x = a.indexed ? a : b;
                    fail(fmt::format("writes field {} in assignment {} (`{}`) with an IndexVar, "
                                     "which writes every element of its index axis, and again in "
                                     "assignment {} (`{}`); each field element may be written once "
                                     "per cell, so write the field in one assignment",
                                     a.field->name, x.stmt + 1, in_[x.stmt].text,
                                     (&x == &a ? b : a).stmt + 1, in_[(&x == &a ? b : a).stmt].text));
                }
                if (a.offsets == b.offsets && a.components == b.components)
                    fail(fmt::format("writes {}{}{} twice (assignments {} and {}); each field "
                                     "element may be written once per cell, so combine the two "
                                     "into one assignment or use a temporary",
                                     a.field->name, offsets_text(a.offsets),
                                     a.components.empty() ? "" : fmt::format(" component ({})", fmt::join(a.components, ", ")),
                                     a.stmt + 1, b.stmt + 1));
                if (a.offsets != b.offsets)
                    fail(fmt::format("writes field {} at two offsets, {} and {}; on a GPU "
                                     "neighbouring cells run in parallel and would write the same "
                                     "element. Write each field at one offset only",
                                     a.field->name, offsets_text(a.offsets), offsets_text(b.offsets)));
            }
        for (auto& w : writes_) {
            std::set<std::vector<int>> bad;
            for (auto& r : reads_)
                // Another cell's copy of an element this kernel writes: a different component
                // of a neighbour is never written, so reading it is safe. A later stage reads
                // what an earlier one wrote (check_stages checks the other order).
                if (r.field == w.field && r.offsets != w.offsets && stage(r) == stage(w) &&
                    (r.components == w.components || r.indexed || w.indexed))
                    bad.insert(r.offsets);
            if (!bad.empty()) {
                std::vector<std::string> o;
                for (auto& b : bad) o.push_back(offsets_text(b));
                fail(fmt::format(
                    "reads field {} at offset(s) {} and writes it at {}: an in-place stencil. On a "
                    "GPU, cells run in parallel, so a neighbour may already hold its new value (a "
                    "race). Write the result into a second field and swap the two after each step",
                    w.field->name, fmt::join(o, ", "), offsets_text(w.offsets)));
            }
        }
    }

    // ---- stages ----
    int stage(const Read& r) const { return in_[r.stmt].stage; }
    int stage(const Write& w) const { return in_[w.stmt].stage; }

    /// Stages run one after another over the whole iteration space, but once fused, each block
    /// runs them for its own cells: a stage that overwrites what an earlier stage reads at a
    /// neighbour's cell would race with the neighbour's block. A later stage reading an earlier
    /// stage's field at a neighbouring cell is what stages are for: it makes halos.
    void check_stages() {
        a_.stages = in_.empty() ? 1 : in_.back().stage;
        if (a_.stages == 1) return;
        for (auto& w : writes_)
            if (std::any_of(w.offsets.begin(), w.offsets.end(), [](int o) { return o != 0; }))
                fail(fmt::format("writes {}{} in stage {} (assignment {}: `{}`); in a kernel of "
                                 "several stages, each stage writes at the cell itself, so write "
                                 "{}.center() and shift the reads instead",
                                 w.field->name, offsets_text(w.offsets), stage(w), w.stmt + 1,
                                 in_[w.stmt].text, w.field->name));
        find_stage_halos();
        // A later stage overwriting what an earlier one reads at a neighbour's cell races with
        // the neighbour's block. With halos it races at the cell itself too: the earlier stages
        // then run over each block's tile plus a halo, whose cells are the neighbours' own.
        for (auto& w : writes_)
            for (auto& r : reads_) {
                if (r.field != w.field || stage(r) >= stage(w) ||
                    (r.offsets == w.offsets && !a_.stage_halos) ||
                    (r.components != w.components && !r.indexed && !w.indexed))
                    continue;
                fail(fmt::format("reads field {} at {} in stage {} (assignment {}: `{}`) and writes "
                                 "it in the later stage {} (assignment {}: `{}`): fused into one "
                                 "kernel, a neighbouring block may run stage {} before this block's "
                                 "stage {} reads the cell{} (a race). Write stage {}'s result into "
                                 "another field",
                                 r.field->name, offsets_text(r.offsets), stage(r), r.stmt + 1,
                                 in_[r.stmt].text, stage(w), w.stmt + 1, in_[w.stmt].text, stage(w),
                                 stage(r),
                                 r.offsets == w.offsets
                                     ? " (a later stage reads an earlier one at neighbouring "
                                       "cells, so the earlier stages run over a halo of cells "
                                       "that neighbouring blocks own)"
                                     : "",
                                 stage(w)));
            }
        if (a_.stage_halos) check_halo_stages();
    }

    /// A later stage reading an earlier stage's field at a neighbouring cell makes halos.
    void find_stage_halos() {
        for (auto& r : reads_)
            for (auto& w : writes_)
                if (r.field == w.field && stage(r) > stage(w) && r.offsets != w.offsets &&
                    (r.components == w.components || r.indexed || w.indexed)) {
                    if (r.indexed)
                        fail(fmt::format("reads field {} at {} with an IndexVar component in stage {} "
                                         "(assignment {}: `{}`), and stage {} writes it; a later stage "
                                         "reads an earlier stage's field at neighbouring cells with "
                                         "literal components only so far, such as {}(0){}",
                                         r.field->name, offsets_text(r.offsets), stage(r), r.stmt + 1,
                                         in_[r.stmt].text, stage(w), r.field->name, offsets_text(r.offsets)));
                    a_.stage_halos = true;
                    halo_reads_.push_back(r);
                }
    }

    /// An earlier stage that a later one reads at neighbouring cells is computed per block over
    /// the tile plus its halo, in a loop the block's threads share: plain assignments.
    void check_halo_stages() {
        for (std::size_t i = 0; i < in_.size(); ++i) {
            if (in_[i].stage == a_.stages) continue;
            for (const Expr* root : {&in_[i].lhs, &in_[i].rhs})
                for (const Expr& e : subexpressions(*root)) {
                    const char* what = nullptr;
                    if (e.is<ReduceNode>()) what = "a reduction (sum, max, min, mean)";
                    if (auto fa = e.as<FieldAccessNode>(); fa && fa->indexed_components())
                        what = "an IndexVar";
                    if (auto l = e.as<BufferLoadNode>(); l && l->buffer->definition) what = "a layer";
                    if (!what) continue;
                    fail(fmt::format("uses {} in stage {} (assignment {}: `{}`), which a later stage "
                                     "reads at neighbouring cells; blocks compute such a stage over "
                                     "their tile plus its halo, which supports plain assignments "
                                     "only so far. Move it into the last stage, or into a kernel "
                                     "of its own", what, in_[i].stage, i + 1, in_[i].text));
                }
        }
    }

    /// What fusing with halos needs of the launch: the tiled form's (check_shared_tiles), named
    /// after the stages, which ask for it.
    void check_stage_halos() const {
        if (!a_.stage_halos) return;
        const Read& r = halo_reads_.front();
        const std::string why = fmt::format(
            "stage {} reads field {} at {}, which stage {} writes, so each block computes stage {} "
            "over its tile plus a halo in shared memory",
            stage(r), r.field->name, offsets_text(r.offsets), written_in(r.field), written_in(r.field));
        const char* fix = "split the stages into kernels of their own";
        if (schedule_.vector_width > 1)
            fail(fmt::format("has Schedule::vector_width = {} and several stages: {}, and lanes are "
                             "for kernels whose threads compute their own cells on the grid; set "
                             "vector_width to 1, or {}", schedule_.vector_width, why, fix));
        if (schedule_.reduce_in_block.value_or(false))
            fail(fmt::format("has Schedule::reduce_in_block = true and several stages: {}, not one "
                             "cell per block; set reduce_in_block to false, or {}", why, fix));
        if (schedule_.reduce_in_warp.value_or(false))
            fail(fmt::format("has Schedule::reduce_in_warp = true and several stages: {}, not one "
                             "cell per warp; set reduce_in_warp to false, or {}", why, fix));
        if (a_.spatial_dims > 3)
            fail(fmt::format("has {} spatial axes and several stages: {}, and tiles cover at most "
                             "three axes; {}", a_.spatial_dims, why, fix));
        if (schedule_.manual_launch_grid)
            fail(fmt::format("has manual_launch_grid = true and several stages: {}, so loom "
                             "chooses the tiles and the grid; set manual_launch_grid to false, or {}",
                             why, fix));
        if (a_.bounds_depend_on_counters)
            fail(fmt::format("has a slice bound that uses another counter and several stages: {}, "
                             "and tiles of different shapes are not supported; {}", why, fix));
        if (cfg_.iteration_slice)
            for (std::size_t d = 0; d < cfg_.iteration_slice->dims.size(); ++d)
                if (cfg_.iteration_slice->dims[d].step != 1)
                    fail(fmt::format("has the slice {} that steps by {} on axis {}, and several "
                                     "stages: {}, and tiles hold neighbouring cells, so steps must "
                                     "be 1; {}", cfg_.iteration_slice->describe(),
                                     cfg_.iteration_slice->dims[d].step, d, why, fix));
    }

    /// Lanes run along the fastest memory axis: contiguous cells, so unit steps there, and not
    /// the axis a thread's other cells run along.
    void check_lanes() const {
        const int w = schedule_.vector_width;
        if (w <= 1) return;
        const int axis = a_.primary->spatial_axes_fastest_first().front();
        if (schedule_.cells_axis && *schedule_.cells_axis == axis && schedule_.cells_per_thread > 1)
            fail(fmt::format("has Schedule::vector_width = {} and cells_per_thread = {} along axis {}, "
                             "the axis the lanes run along (the fastest in memory); leave cells_axis "
                             "unset or pick another axis", w, schedule_.cells_per_thread, axis));
        if (cfg_.iteration_slice && cfg_.iteration_slice->dims[std::size_t(axis)].step != 1)
            fail(fmt::format("has Schedule::vector_width = {}, but the slice {} steps by {} along axis "
                             "{}, the axis the lanes run along (the fastest in memory): lanes are "
                             "consecutive cells; set vector_width to 1",
                             w, cfg_.iteration_slice->describe(),
                             cfg_.iteration_slice->dims[std::size_t(axis)].step, axis));
    }

    // ---- on-chip fields (Stages::on_chip) ----
    /// The on-chip fields and the fields their outside values come from (arguments, read
    /// where the on-chip field's tile reaches past the iteration space). The thread mapping
    /// follows the first field written to memory.
    void collect_on_chip() {
        for (const SourceAssignment& s : on_chip_) {
            auto fa = s.lhs.as<FieldAccessNode>();
            if (!fa) throw InternalError("analyze_kernel: an on-chip declaration without a field");
            note_field(fa->field);
            Expr outside = s.rhs;
            if (auto g = outside.as<FieldAccessNode>()) note_field(g->field);
            if (outside.type() != fa->field->type) outside = CastNode::make(fa->field->type, outside);
            on_chip_decl_.emplace_back(fa->field, outside);
        }
        for (auto& [f, outside] : on_chip_decl_)
            if (auto g = outside.as<FieldAccessNode>())
                for (auto& [h, o] : on_chip_decl_)
                    if (h == g->field)
                        fail(fmt::format("keeps {} on chip with the values of {} outside the "
                                         "iteration space, but {} is on chip too, and has no "
                                         "values in memory; take them from a field in memory, "
                                         "or a number", f->name, h->name, h->name));
        a_.on_chip = on_chip_decl_;
        if (a_.on_chip.empty()) return;
        for (const FieldPtr& f : a_.written)
            if (!a_.is_on_chip(f.get())) {
                a_.primary = f;
                return;
            }
        fail("writes only on-chip fields (Stages::on_chip), so it would have no effect: keep the "
             "field the last stage writes in memory");
    }

    /// An on-chip field lives in the tiles fuse_stages computes: one earlier stage writes it,
    /// later stages read it, and those reads make halos.
    void check_on_chip() const {
        for (auto& [f, outside] : a_.on_chip) {
            const int w = written_in(f);
            const std::string name = f->name;
            if (w == 0)
                fail(fmt::format("keeps field {} on chip (Stages::on_chip), but no stage writes it; "
                                 "an on-chip field is an intermediate that an earlier stage "
                                 "computes and later stages read. Write it in a stage, or drop "
                                 "on_chip({})", name, name));
            if (w == a_.stages)
                fail(fmt::format("keeps field {} on chip (Stages::on_chip), but the last stage "
                                 "(stage {}) writes it, so no later stage could read it and it "
                                 "would be lost; keep the kernel's results in memory: drop "
                                 "on_chip({})", name, w, name));
            bool later = false;
            for (auto& r : reads_) {
                if (r.field != f) continue;
                if (stage(r) <= w)
                    fail(fmt::format("reads the on-chip field {} in stage {} (assignment {}: `{}`), "
                                     "but stage {} computes it: an on-chip field is read by later "
                                     "stages only, from the tile its stage computed. Within a "
                                     "stage, hold the value in a temporary (subexpression)",
                                     name, stage(r), r.stmt + 1, in_[r.stmt].text, w));
                later = true;
            }
            if (!later)
                fail(fmt::format("keeps field {} on chip (Stages::on_chip), and stage {} writes it, "
                                 "but no later stage reads it, so it would be lost; read it in a "
                                 "later stage, or drop on_chip({}) to keep it in memory",
                                 name, w, name));
            if (!a_.stage_halos)
                fail(fmt::format("keeps field {} on chip (Stages::on_chip), but no stage reads an "
                                 "earlier stage's field at a neighbouring cell, so the stages run "
                                 "as one sequence per cell, without tiles to hold {}; put the "
                                 "stages into one and hold {} in a temporary (subexpression)",
                                 name, name, name));
        }
    }

    int written_in(const FieldPtr& f) const {
        for (auto& w : writes_)
            if (w.field == f) return stage(w);
        return 0;
    }

    // ---- ghost layers and slices ----
    void collect_shifted_reads() {
        auto add = [&](const FieldPtr& f) {
            if (std::find(a_.shifted_reads.begin(), a_.shifted_reads.end(), f) ==
                a_.shifted_reads.end())
                a_.shifted_reads.push_back(f);
        };
        for (auto& r : reads_)
            if (std::any_of(r.offsets.begin(), r.offsets.end(), [](int o) { return o != 0; }))
                add(r.field);
        for (auto& g : gathers_) add(g.field);
    }

    void compute_reach() {
        a_.reach.assign(a_.spatial_dims, {0, 0});
        auto extend = [&](const FieldPtr& f, const std::vector<int>& off) {
            for (int d = 0; d < a_.spatial_dims; ++d) {
                // Field::operator[] checks the limit; IR built by other means is checked here,
                // before -off[d] could overflow (-INT_MIN) into a width of 0.
                const std::int64_t o = off[d];
                if (o < -max_offset || o > max_offset)
                    fail(fmt::format("accesses field {} at offset {}: the offset {} on axis {} is "
                                     "out of range; an offset is at most {} cells either way "
                                     "(loom::max_offset)",
                                     f->name, offsets_text(off), o, d, max_offset));
                a_.reach[d].first = static_cast<int>(std::max<std::int64_t>(a_.reach[d].first, -o));
                a_.reach[d].second = static_cast<int>(std::max<std::int64_t>(a_.reach[d].second, o));
            }
        };
        for (auto& r : reads_) extend(r.field, r.offsets);
        for (auto& w : writes_) extend(w.field, w.offsets);
    }

    std::string worst_access(int axis, bool low) const {
        // The access that reaches furthest along `axis` in direction `low`, for messages.
        const std::vector<int>* best = nullptr;
        const FieldInfo* field = nullptr;
        auto consider = [&](const FieldPtr& f, const std::vector<int>& o) {
            std::int64_t v = low ? -std::int64_t(o[axis]) : o[axis];
            if (!best || v > (low ? -std::int64_t((*best)[axis]) : (*best)[axis])) {
                best = &o;
                field = f.get();
            }
        };
        for (auto& r : reads_) consider(r.field, r.offsets);
        for (auto& w : writes_) consider(w.field, w.offsets);
        return fmt::format("{}{}", field->name, offsets_text(*best));
    }

    void resolve_ghost_layers() {
        int D = a_.spatial_dims;
        if (cfg_.iteration_slice) {
            a_.ghost_layers.assign(D, {0, 0});
            return;
        }
        const GhostLayers& gl = cfg_.ghost_layers;
        if (gl.is_automatic()) {
            int w = 0;
            for (auto& r : a_.reach) w = std::max({w, r.first, r.second});
            a_.ghost_layers.assign(D, {w, w});
        } else if (gl.uniform()) {
            if (*gl.uniform() < 0) fail(fmt::format("has ghost_layers = {}; it must be >= 0", *gl.uniform()));
            a_.ghost_layers.assign(D, {*gl.uniform(), *gl.uniform()});
        } else {
            if (int(gl.per_axis().size()) != D)
                fail(fmt::format("gives ghost layers for {} axes, but the kernel is {}D; give one "
                                 "(low, high) pair per axis", gl.per_axis().size(), D));
            a_.ghost_layers = gl.per_axis();
            for (int d = 0; d < D; ++d) {
                auto [lo, hi] = a_.ghost_layers[d];
                if (lo < 0 || hi < 0)
                    fail(fmt::format("has a negative ghost-layer width: ({}, {}) on axis {}; "
                                     "widths must be >= 0 (low, high cells per axis)", lo, hi, d));
            }
        }
        for (int d = 0; d < D; ++d) {
            auto [lo, hi] = a_.ghost_layers[d];
            if (lo < a_.reach[d].first || hi < a_.reach[d].second) {
                bool low = lo < a_.reach[d].first;
                int need = low ? a_.reach[d].first : a_.reach[d].second;
                std::string fix = gl.per_axis().empty()
                    ? fmt::format("Set ghost_layers to at least {}", need)
                    : fmt::format("Raise the {} ghost layers of axis {} to at least {}",
                                  low ? "low" : "high", d, need);
                fail(fmt::format("reads out of bounds: {} reaches {} cell(s) {} along axis {}, but "
                                 "only {} ghost layer(s) are there. {}, or leave ghost_layers "
                                 "automatic",
                                 worst_access(d, low), need, low ? "below" : "above", d,
                                 low ? lo : hi, fix));
            }
            if (a_.fixed_shape_source &&
                a_.fixed_shape_source->fixed_shape[d] <= std::int64_t(lo) + hi)
                fail(fmt::format("has nothing to iterate: axis {} of the fixed shape [{}] has {} "
                                 "cells, all of them ghost layers ({} low, {} high); use fewer "
                                 "ghost layers (smaller offsets) or a larger fixed shape",
                                 d, fmt::join(a_.fixed_shape_source->fixed_shape, ", "),
                                 a_.fixed_shape_source->fixed_shape[d], lo, hi));
        }
    }

    void check_slice() {
        if (!cfg_.iteration_slice) return;
        const Slice& s = *cfg_.iteration_slice;
        int D = a_.spatial_dims;
        if (int(s.dims.size()) != D)
            fail(fmt::format("has the iteration slice {} with {} entries, but the kernel is {}D; "
                             "give one entry per spatial axis", s.describe(), s.dims.size(), D));
        for (int d = 0; d < D; ++d) {
            const SliceDim& sd = s.dims[d];
            if (sd.step < 1)
                fail(fmt::format("has step {} on axis {} of the slice {}; steps must be positive",
                                 sd.step, d, s.describe()));
            for (const Bound* b : {&sd.start, &sd.stop}) {
                if (b->kind() != Bound::Kind::Expression) continue;
                for (const Expr& e : subexpressions(b->expr())) {
                    if (auto c = e.as<CounterNode>()) {
                        if (c->axis >= d)
                            fail(fmt::format("has the slice {} whose bound on axis {} uses the "
                                             "counter of axis {}; a bound may only use counters "
                                             "of earlier axes{}",
                                             s.describe(), d, c->axis,
                                             d == 0 ? std::string(", and axis 0 is the first, so its bounds cannot use counters")
                                                    : fmt::format(" (0..{})", d - 1)));
                        a_.bounds_depend_on_counters = true;
                    } else if (e.is<FieldAccessNode>()) {
                        fail(fmt::format("has the slice {} with a field access in a bound; bounds "
                                         "may use integers, scalar parameters and earlier counters",
                                         s.describe()));
                    } else if (auto v = e.as<VarNode>()) {
                        if (v->role == VarRole::Parameter) note_param(e);
                    }
                }
                if (!is_int(b->expr().type()))
                    fail(fmt::format("has the slice {} with a bound of type {} on axis {}; bounds "
                                     "must be integers", s.describe(), type_name(b->expr().type()), d));
            }
            check_slice_reach(d, sd, s);
        }
        // A CPU kernel runs every axis as a loop, whose bounds may use outer counters freely;
        // only the GPU needs the grid up front and maps at most three axes onto threads.
        if (cfg_.target != Target::CUDA) return;
        if (a_.bounds_depend_on_counters && D > 3)
            fail(fmt::format("has the slice {} whose bounds depend on another counter in a {}D "
                             "kernel; counter-dependent bounds are supported up to 3D, because the "
                             "fourth axis runs as a loop inside each thread", s.describe(), D));
        if (a_.bounds_depend_on_counters && !schedule_.manual_launch_grid)
            fail(fmt::format("has the iteration slice {}, whose bounds depend on another counter, "
                             "so the launch grid cannot be inferred. Set manual_launch_grid = true "
                             "in the Schedule (create_kernel's third argument), then set "
                             "block_size and num_blocks on the compiled kernel before calling it",
                             s.describe()));
    }

    /// Static bounds check of literal slice ends against the stencil's reach.
    void check_slice_reach(int d, const SliceDim& sd, const Slice& s) {
        auto [below, above] = a_.reach[d];
        std::optional<std::int64_t> n;
        if (a_.fixed_shape_source) n = a_.fixed_shape_source->fixed_shape[d];
        // Absolute start, or nothing when only the run-time size can tell.
        auto absolute = [&](const Bound& b) -> std::optional<std::int64_t> {
            if (b.kind() == Bound::Kind::End) return n;
            if (b.kind() != Bound::Kind::Index) return std::nullopt;
            if (b.index() >= 0) return b.index();
            if (n) return *n + b.index();
            return std::nullopt;
        };
        auto start = absolute(sd.start);
        if (start && n && (*start < 0 || *start >= *n) && sd.start.kind() == Bound::Kind::Index)
            fail(fmt::format("has the slice {} whose start {} on axis {} lies outside the fixed "
                             "size {} (valid indices 0..{}, or -{}..-1 from the end)",
                             s.describe(), sd.start.index(), d, *n, *n - 1, *n));
        if (start && *start - below < 0)
            fail(fmt::format("reads out of bounds: the slice {} starts axis {} at {}, but {} "
                             "reaches {} cell(s) below; start at {} or later",
                             s.describe(), d, *start, worst_access(d, true), below, below));
        if (sd.single) {
            if (sd.start.kind() == Bound::Kind::End)
                fail(fmt::format("has the slice {} with the single index `end` on axis {}; pick "
                                 "an index inside the axis", s.describe(), d));
            if (sd.start.kind() == Bound::Kind::Index && sd.start.index() < 0 && !n && above > -sd.start.index() - 1)
                fail(fmt::format("reads out of bounds: the slice {} picks index {} on axis {}, but "
                                 "{} reaches {} cell(s) above", s.describe(), sd.start.index(), d,
                                 worst_access(d, false), above));
            if (start && n && *start + above >= *n)
                fail(fmt::format("reads out of bounds: the slice {} picks index {} on axis {} of "
                                 "size {}, but {} reaches {} cell(s) above",
                                 s.describe(), *start, d, *n, worst_access(d, false), above));
            return;
        }
        // The stop, as a distance from the end when that is what the bound says.
        std::optional<std::int64_t> from_end;
        if (sd.stop.kind() == Bound::Kind::End) from_end = 0;
        if (sd.stop.kind() == Bound::Kind::Index && sd.stop.index() < 0) from_end = -sd.stop.index();
        if (from_end && *from_end < above)
            fail(fmt::format("reads out of bounds: the slice {} ends axis {} {}, but {} reaches "
                             "{} cell(s) above; end it at -{} or earlier",
                             s.describe(), d,
                             *from_end == 0 ? std::string("at the end") : fmt::format("{} before the end", *from_end),
                             worst_access(d, false), above, above));
        if (n && sd.stop.kind() == Bound::Kind::Index && sd.stop.index() >= 0 &&
            sd.stop.index() + above > *n)
            fail(fmt::format("reads out of bounds: the slice {} ends axis {} at {}, but the fixed "
                             "size is {} and {} reaches {} cell(s) above",
                             s.describe(), d, sd.stop.index(), *n, worst_access(d, false), above));
    }

    // ---- typed body ----
    /// A plain number stored into a narrower type must fit: 3000000000 does not fit an int32.
    void check_literal_range(const Expr& e, ScalarType to, const std::string& target, std::size_t stmt) {
        for (const Expr& x : subexpressions(e)) {
            auto c = x.as<ConstNode>();
            if (!c || !c->weak) continue;
            bool fits = true;
            if (to == ScalarType::Int32 && is_int(c->type))
                fits = c->int_value >= INT32_MIN && c->int_value <= INT32_MAX;
            if (to == ScalarType::Float32 && is_float(c->type))
                fits = !std::isfinite(c->float_value) || std::fabs(c->float_value) <= 3.4028234663852886e38;
            if (!fits)
                fail(fmt::format("stores the value {} into {} ({}) in assignment {}, which it does "
                                 "not fit; use a wider type", to_string(x), target, type_name(to), stmt + 1));
        }
    }

    /// A value built only from plain numbers (a weak constant, or a select between two such
    /// values) takes the type of what it is stored into: `f32 = select(c, 1.0, 0.0)` is float32.
    static Expr retype_weak(const Expr& e, ScalarType to) {
        if (auto c = e.as<ConstNode>(); c && c->weak && is_numeric(c->type) && is_numeric(to) &&
                                            (is_float(to) || is_int(c->type)))
            return is_float(to) ? ConstNode::make(to, c->as_double()) : ConstNode::make_int(to, c->int_value);
        if (auto s = e.as<SelectNode>()) {
            Expr t = retype_weak(s->if_true, to), f = retype_weak(s->if_false, to);
            if (t.type() == to && f.type() == to) return SelectNode::make(s->cond, t, f);
        }
        return e;
    }

    Expr convert(const Expr& original, ScalarType to, const std::string& target, std::size_t stmt) {
        if ((to == ScalarType::Float16 || to == ScalarType::BFloat16) && is_numeric(original.type())) {
            // A 16-bit float field stores what the kernel computed, rounded: the store is where
            // its values narrow (as its reads are where they widen). A plain number must fit.
            for (const Expr& x : subexpressions(original))
                if (auto c = x.as<ConstNode>(); c && c->weak && std::isfinite(c->as_double()) &&
                                                std::isinf(round_to_type(c->as_double(), to)))
                    fail(fmt::format("stores the value {} into {} ({}) in assignment {}, which it does "
                                     "not fit (largest finite value {}); store it in a float32 field",
                                     to_string(x), target, type_name(to), stmt + 1,
                                     to == ScalarType::Float16 ? "65504" : "3.39e38"));
            Expr v = retype_weak(original, ScalarType::Float32);
            if (auto c = v.as<ConstNode>(); c && c->weak) v = ConstNode::make(ScalarType::Float32, c->as_double());
            return CastNode::make(to, v);
        }
        check_literal_range(original, to, target, stmt);
        Expr rhs = retype_weak(original, to);
        auto c = rhs.as<ConstNode>();
        if (c && c->weak) {
            if (is_float(c->type) && !is_float(to))
                fail(fmt::format("stores the float value {} into {} ({}) in assignment {}; write "
                                 "an integer or cast explicitly", to_string(rhs), target,
                                 type_name(to), stmt + 1));
            return is_float(to) ? ConstNode::make(to, c->as_double()) : ConstNode::make_int(to, c->int_value);
        }
        if (rhs.type() == to) return rhs;
        if (implicitly_convertible(rhs.type(), to)) return CastNode::make(to, rhs);
        fail(fmt::format("assignment {} (`{}`) stores {} {} value into {} of type {}, a conversion "
                         "that is not implicit because it {}. Wrap the right side in cast<{}>(...) "
                         "if that is what you mean",
                         stmt + 1, in_[stmt].text, a_or_an(rhs.type()), type_name(rhs.type()), target, type_name(to),
                         rhs.type() == ScalarType::Bool || to == ScalarType::Bool
                             ? "mixes booleans and numbers"
                             : "can lose precision or range",
                         cpp_type(to)));
    }

    /// Weak constants left inside expressions (e.g. select(c, 1.0, 0.0)) become strong.
    class StrengthenConstants : public IRMutator {
    protected:
        Expr visit_Const(const ConstNode* c, const Expr& self) override {
            if (!c->weak) return self;
            return is_float(c->type) ? ConstNode::make(c->type, c->float_value)
                                     : ConstNode::make_int(c->type, c->int_value);
        }
    };

    /// The array whose elements 0, 1, ... `values` load in order, if they load one whole layer
    /// array (a chain's previous layer); else null.
    static BufferPtr whole_array(const std::vector<Expr>& values) {
        auto first = values[0].as<BufferLoadNode>();
        if (!first || !first->buffer->definition || first->buffer->size() != int(values.size()))
            return nullptr;
        for (std::size_t k = 0; k < values.size(); ++k) {
            auto l = values[k].as<BufferLoadNode>();
            if (!l || l->buffer != first->buffer || !is_const_value(l->index(), double(k))) return nullptr;
        }
        return first->buffer;
    }


    /// Appends to `out` the statements that compute the layer arrays `reads` load and that are
    /// not placed yet, each after those of the arrays it reads: the layer's inputs, unless they
    /// are one whole array, into a new local array `<name>_in`, then Allocate and Dense.
    void place_layers(const std::vector<Expr>& reads, std::vector<Stmt>& out) {
        for (const Expr& e : reads) {
            auto l = e.as<BufferLoadNode>();
            if (!l || !l->buffer->definition || placed_arrays_.count(l->buffer.get())) continue;
            const ArrayDefinition& d = *l->buffer->definition;
            for (const Expr& x : d.inputs) place_layers(subexpressions(x), out);
            auto copy = std::make_shared<BufferInfo>(*l->buffer);
            copy->definition = nullptr;
            const BufferPtr array = copy;
            placed_arrays_[l->buffer.get()] = array;
            BufferPtr in = whole_array(d.inputs);
            if (in) {
                in = placed_arrays_.at(in.get());
            } else {
                in = make_buffer(array->name + "_in", array->type, Scope::Local,
                                 {std::int64_t(d.inputs.size())});
                out.push_back(CommentNode::make(
                    fmt::format("{}: the layer's {} inputs", in->name, in->size())));
                cell_arrays_.push_back(in);
                StrengthenConstants strengthen;
                // Loads of a layer array read the array as placed: a copy without its
                // definition, which the statements before it compute now.
                RedirectBuffers placed(placed_arrays_, false);
                for (std::size_t k = 0; k < d.inputs.size(); ++k)
                    out.push_back(BufferStoreNode::make(
                        in, ConstNode::make_int(ScalarType::Int32, std::int64_t(k)),
                        placed.mutate(strengthen.mutate(d.inputs[k]))));
            }
            out.push_back(CommentNode::make(array->name + ": " + d.layer.describe()));
            cell_arrays_.push_back(array);
            out.push_back(DenseNode::make(array, in, d.layer));
        }
    }

    Stmt build_body() {
        std::vector<Stmt> out, stages;
        StrengthenConstants strengthen;
        for (std::size_t i = 0; i < in_.size(); ++i) {
            const SourceAssignment& s = in_[i];
            std::string target;
            if (auto fa = s.lhs.as<FieldAccessNode>())
                target = "field " + fa->field->name;
            else
                target = "temporary " + s.lhs.as<VarNode>()->name;
            Expr rhs = strengthen.mutate(convert(s.rhs, s.lhs.type(), target, i));
            // Layers (arrays) are computed once, before the first assignment that reads them.
            place_layers(subexpressions(rhs), out);
            out.push_back(CommentNode::make(s.text));
            Stmt assign = AssignNode::make(s.lhs, RedirectBuffers(placed_arrays_, false).mutate(rhs));
            // y(k) = ...: one loop over k writes every element (innermost: the last IndexVar).
            if (auto fa = s.lhs.as<FieldAccessNode>())
                for (auto v = fa->component_indices.rbegin(); v != fa->component_indices.rend(); ++v)
                    assign = ForNode::make(*v, ConstNode::make_int(ScalarType::Int32, 0),
                                           ConstNode::make_int(ScalarType::Int32,
                                                               v->as<VarNode>()->extent),
                                           ConstNode::make_int(ScalarType::Int32, 1), assign, -1);
            out.push_back(assign);
            // The stages apart only where fusing needs them (stage_halos); else one sequence.
            const bool last_of_stage = i + 1 == in_.size() || in_[i + 1].stage != s.stage;
            if (a_.stage_halos && last_of_stage) {
                stages.push_back(StageNode::make(s.stage, allocate_all(cell_arrays_, BlockNode::make(std::move(out)))));
                out.clear();
                cell_arrays_.clear();
            }
        }
        // The layers' arrays live through the whole cell (the stage): what reads them follows.
        return a_.stage_halos ? BlockNode::make(std::move(stages))
                              : allocate_all(cell_arrays_, BlockNode::make(std::move(out)));
    }

    const std::vector<SourceAssignment>& in_;
    const std::vector<SourceAssignment>& on_chip_; ///< Stages::on_chip declarations
    std::vector<std::pair<FieldPtr, Expr>> on_chip_decl_;
    const KernelConfig& cfg_;
    const Schedule& schedule_; ///< checked here; read for manual_launch_grid only
    KernelAnalysis a_;
    std::vector<Read> reads_;
    std::vector<Write> writes_;
    std::vector<Gather> gathers_;
    std::vector<Read> halo_reads_; ///< reads of an earlier stage's field at a neighbouring cell
    std::vector<std::pair<int, std::size_t>> counters_; ///< (axis, statement)
    std::set<const ExprNode*> defined_temps_;
    std::map<const ExprNode*, int> temp_stage_; ///< temporary -> the stage that defines it
    std::set<const BufferInfo*> noted_arrays_;
    std::map<const BufferInfo*, BufferPtr> placed_arrays_; ///< a layer array -> as placed
    std::vector<BufferPtr> cell_arrays_; ///< the placed arrays of this cell (stage), in order
};

} // namespace

KernelAnalysis analyze_kernel(const std::vector<SourceAssignment>& assignments,
                              const KernelConfig& config, const Schedule& schedule) {
    std::vector<SourceAssignment> computed, on_chip;
    for (const SourceAssignment& s : assignments) (s.on_chip ? on_chip : computed).push_back(s);
    return Analyzer(computed, on_chip, config, schedule).run();
}

} // namespace loom::ir
