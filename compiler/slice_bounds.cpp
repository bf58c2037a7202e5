#include "compiler/slice_bounds.hpp"

#include "compiler/ir/interval.hpp"
#include "compiler/ir/visitor.hpp"

#include <loom/errors.hpp>

#include <limits>

namespace loom::ir {

namespace {

bool uses_counter(const Expr& e) {
    for (const Expr& s : subexpressions(e))
        if (auto v = s.as<VarNode>(); v && v->role == VarRole::Counter) return true;
    return false;
}

/// The last cell of start, start + step, ... below stop (stop > start).
std::int64_t last_cell(std::int64_t start, std::int64_t stop, std::int64_t step) {
    __int128 span = __int128(stop) - start - 1;
    return std::int64_t(start + span / step * step);
}

} // namespace

std::vector<VisitedCells> SliceBounds::visited(const Bindings& args) const {
    std::vector<VisitedCells> out(axes.size());
    IntervalBindings counters;
    for (std::size_t d = 0; d < axes.size(); ++d) {
        const Axis& a = axes[d];
        VisitedCells& c = out[d];
        if (!a.uses_counters) {
            const std::int64_t start = evaluate(a.start, args).i, stop = evaluate(a.stop, args).i;
            c.empty = start >= stop;
            if (!c.empty) c.first = start, c.last = last_cell(start, stop, a.step);
        } else {
            auto start = evaluate_interval(a.start, args, counters);
            auto stop = evaluate_interval(a.stop, args, counters);
            if (!start || !stop) {
                c.bounded = false;
                // Later bounds that use this counter cannot be bounded either.
                counters[a.counter.as<VarNode>()] = {std::numeric_limits<std::int64_t>::min(),
                                                     std::numeric_limits<std::int64_t>::max()};
                continue;
            }
            // Rows where stop <= start are empty; the others visit cells inside
            // [lowest start, highest stop - 1].
            c.empty = stop->hi <= start->lo;
            if (!c.empty) {
                c.first = start->lo;
                c.last = start->lo == start->hi ? last_cell(start->lo, stop->hi, a.step)
                                                : stop->hi - 1;
            }
        }
        if (c.empty) {
            for (std::size_t e = d + 1; e < axes.size(); ++e) out[e].empty = true;
            break;
        }
        counters[a.counter.as<VarNode>()] = {c.first, c.last};
    }
    return out;
}

SliceBounds read_slice_bounds(const Stmt& loop_nest) {
    SliceBounds b;
    for (Stmt s = loop_nest; auto f = s.as<ForNode>(); s = f->body) {
        auto step = f->step.as<ConstNode>();
        if (f->axis != int(b.axes.size()) || !step || step->int_value < 1)
            throw InternalError("read_slice_bounds: expected one For per spatial axis, axis 0 "
                                "outermost, each with a constant positive step");
        b.axes.push_back({f->var, f->start, f->stop, step->int_value,
                          uses_counter(f->start) || uses_counter(f->stop)});
    }
    return b;
}

} // namespace loom::ir
