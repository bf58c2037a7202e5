#include "compiler/passes/cpu_mapping.hpp"

#include "compiler/ir/visitor.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

namespace loom::ir {

namespace {

/// The perfect nest of lower_iteration_space, by axis, and the body inside it.
struct Nest {
    std::map<int, const ForNode*> loop_of_axis;
    std::vector<int> axes; ///< as nested, outermost first
    Stmt body;
};

Nest peel(const Stmt& loop_nest, const char* pass) {
    Nest n;
    Stmt s = loop_nest;
    while (auto f = s.as<ForNode>()) {
        n.loop_of_axis[f->axis] = f;
        n.axes.push_back(f->axis);
        s = f->body;
    }
    if (n.axes.empty())
        throw InternalError(
            fmt::format("{} expects a loop nest; run lower_iteration_space first", pass));
    n.body = s;
    return n;
}

/// The axes whose loop counters the bounds of `f` read: those loops must enclose `f`.
std::set<int> bound_dependencies(const ForNode* f, const Nest& n) {
    std::set<int> deps;
    for (const Expr* bound : {&f->start, &f->stop, &f->step})
        for (const Expr& e : subexpressions(*bound))
            for (auto& [axis, loop] : n.loop_of_axis)
                if (axis != f->axis && e.same_as(loop->var)) deps.insert(axis);
    return deps;
}

} // namespace

std::vector<int> plan_cpu_loop_order(const Stmt& loop_nest, const FieldInfo& primary) {
    Nest n = peel(loop_nest, "plan_cpu_loop_order");
    std::vector<int> fastest = primary.spatial_axes_fastest_first();
    auto speed_rank = [&](int axis) { // 0 = fastest in memory
        auto it = std::find(fastest.begin(), fastest.end(), axis);
        return it == fastest.end() ? int(fastest.size()) + axis : int(it - fastest.begin());
    };
    std::map<int, std::set<int>> deps;
    for (auto& [axis, loop] : n.loop_of_axis) deps[axis] = bound_dependencies(loop, n);

    // Inside out: the innermost remaining loop must not be read by another remaining loop's
    // bounds (those loops end up outside it); among those, take the fastest in memory.
    std::vector<int> remaining = n.axes, inside_out;
    while (!remaining.empty()) {
        int best = -1;
        for (int a : remaining) {
            bool read_by_other = std::any_of(remaining.begin(), remaining.end(),
                                             [&](int b) { return b != a && deps[b].count(a); });
            if (!read_by_other && (best < 0 || speed_rank(a) < speed_rank(best))) best = a;
        }
        if (best < 0)
            throw InternalError("plan_cpu_loop_order: loop bounds depend on each other in a cycle");
        inside_out.push_back(best);
        remaining.erase(std::find(remaining.begin(), remaining.end(), best));
    }
    return {inside_out.rbegin(), inside_out.rend()};
}

Stmt map_to_cpu(const Stmt& loop_nest, const std::vector<int>& order) {
    Nest n = peel(loop_nest, "map_to_cpu");
    std::vector<int> sorted_order = order, sorted_axes = n.axes;
    std::sort(sorted_order.begin(), sorted_order.end());
    std::sort(sorted_axes.begin(), sorted_axes.end());
    if (sorted_order != sorted_axes)
        throw InternalError(fmt::format("map_to_cpu: the loop order ({}) is not a permutation of "
                                        "the nest's axes ({})", fmt::join(order, ", "),
                                        fmt::join(n.axes, ", ")));
    for (std::size_t i = 0; i < order.size(); ++i)
        for (int dep : bound_dependencies(n.loop_of_axis.at(order[i]), n))
            if (std::find(order.begin(), order.begin() + i, dep) == order.begin() + i)
                throw InternalError(fmt::format("map_to_cpu: the loop order ({}) puts axis {} "
                                                "inside axis {}, whose bounds read its counter",
                                                fmt::join(order, ", "), dep, order[i]));

    Stmt body = n.body;
    const std::size_t last = order.size() - 1;
    for (std::size_t i = order.size(); i-- > 0;) {
        const ForNode* f = n.loop_of_axis.at(order[i]);
        ForKind kind = last == 0 ? ForKind::ParallelVectorized
                       : i == 0  ? ForKind::Parallel
                       : i == last ? ForKind::Vectorized
                                   : ForKind::Serial;
        body = ForNode::make(f->var, f->start, f->stop, f->step, body, f->axis, kind);
    }
    return body;
}

} // namespace loom::ir
