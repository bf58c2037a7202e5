#include "frontend/time_steps.hpp"

#include "compiler/ir/printer.hpp"
#include "compiler/ir/visitor.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

namespace loom {
using namespace ir;

namespace {

constexpr int kMaxTimeSteps = 16;

struct Pair {
    FieldPtr src, dst;
};

/// The fields the step reads (relative or absolute) and writes, in order of appearance.
struct StepFields {
    std::vector<FieldPtr> read, written, gathered;
    explicit StepFields(const AssignmentCollection& step) {
        for (const Assignment& a : step.all())
            for (auto& [lhs, rhs] : a.parts()) {
                if (auto fa = lhs.as<FieldAccessNode>()) add(written, fa->field);
                for (const Expr& e : subexpressions(rhs))
                    if (auto fa = e.as<FieldAccessNode>()) add(fa->absolute() ? gathered : read, fa->field);
            }
    }
    static void add(std::vector<FieldPtr>& to, const FieldPtr& f) {
        if (std::find(to.begin(), to.end(), f) == to.end()) to.push_back(f);
    }
    static bool has(const std::vector<FieldPtr>& in, const FieldPtr& f) {
        return std::find(in.begin(), in.end(), f) != in.end();
    }
    FieldPtr named(const std::string& name) const {
        for (const auto* list : {&read, &written, &gathered})
            for (const FieldPtr& f : *list)
                if (f->name == name) return f;
        return nullptr;
    }
};

bool same_kind(const FieldInfo& a, const FieldInfo& b) {
    return a.type == b.type && a.spatial_dims == b.spatial_dims && a.index_shape == b.index_shape &&
           a.layout == b.layout && a.fixed_shape == b.fixed_shape;
}

std::vector<std::string> names(const std::vector<FieldPtr>& fs) {
    std::vector<std::string> out;
    for (const FieldPtr& f : fs) out.push_back(f->name);
    return out;
}

[[noreturn]] void fail(const KernelConfig& c, const std::string& what) {
    throw UserError(fmt::format("kernel '{}' has time_steps = {}: {}", c.name, c.time_steps, what));
}

/// The pairs as KernelConfig::ping_pong names them, or as the step's fields make them.
std::vector<Pair> find_pairs(const StepFields& f, const KernelConfig& c) {
    std::vector<Pair> pairs;
    if (c.ping_pong.empty()) {
        if (f.written.size() != 1)
            fail(c, fmt::format("the step writes {} fields ({}), and loom pairs a step's one "
                                "written field with the field it reads; name the pairs, "
                                "ping_pong = {{{{\"src\", \"dst\"}}, ...}}",
                                f.written.size(), fmt::join(names(f.written), ", ")));
        const FieldPtr& dst = f.written.front();
        std::vector<FieldPtr> candidates;
        for (const FieldPtr& r : f.read)
            if (r != dst && same_kind(*r, *dst)) candidates.push_back(r);
        if (candidates.size() != 1)
            fail(c, fmt::format("the step writes {} and reads {} field(s) like it ({}), so which "
                                "one holds the previous step is {}; name the pair, ping_pong = "
                                "{{{{\"src\", \"{}\"}}}}",
                                dst->describe(), candidates.size(), fmt::join(names(candidates), ", "),
                                candidates.empty() ? "missing" : "ambiguous", dst->name));
        return {{candidates.front(), dst}};
    }
    for (auto& [s, d] : c.ping_pong) {
        FieldPtr src = f.named(s), dst = f.named(d);
        if (src && !StepFields::has(f.read, src))
            fail(c, fmt::format("ping_pong names '{}' as the field a step reads, but the step reads "
                                "it only at absolute positions (.at()); the steps between live in "
                                "tiles of the block's cells, so read {} at offsets from the cell",
                                s, s));
        if (!src)
            fail(c, fmt::format("ping_pong names '{}' as the field a step reads, but the step "
                                "reads no field of that name (it reads {})",
                                s, fmt::join(names(f.read), ", ")));
        if (!dst || !StepFields::has(f.written, dst))
            fail(c, fmt::format("ping_pong names '{}' as the field a step writes, but the step "
                                "writes no field of that name (it writes {})",
                                d, fmt::join(names(f.written), ", ")));
        if (!same_kind(*src, *dst))
            fail(c, fmt::format("the pair {{\"{}\", \"{}\"}} holds one state, so both need one "
                                "type and shape, but they are {} and {}",
                                s, d, src->describe(), dst->describe()));
        for (const Pair& p : pairs)
            if (p.src == src || p.dst == dst)
                fail(c, fmt::format("ping_pong names '{}' in two pairs; each field is in one pair",
                                    p.src == src ? s : d));
        pairs.push_back({src, dst});
    }
    for (const FieldPtr& w : f.written)
        if (std::none_of(pairs.begin(), pairs.end(), [&](const Pair& p) { return p.dst == w; }))
            fail(c, fmt::format("the step writes {}, which no ping_pong pair holds; every field a "
                                "step writes is the new state of a pair", w->name));
    return pairs;
}

/// Names for what the rewrite adds: `<base>_step<k>`, with underscores appended until it is
/// clear of the step's own fields and temporaries and of every name given before.
class Names {
public:
    explicit Names(const AssignmentCollection& step) {
        for (const Assignment& a : step.all())
            for (auto& [lhs, rhs] : a.parts())
                for (const Expr* root : {&lhs, &rhs})
                    for (const Expr& e : subexpressions(*root)) {
                        if (auto fa = e.as<FieldAccessNode>()) taken_.insert(fa->field->name);
                        if (auto v = e.as<VarNode>()) taken_.insert(v->name);
                    }
    }
    std::string fresh(const std::string& base, int step) {
        std::string name = fmt::format("{}_step{}", base, step);
        while (taken_.count(name)) name += "_";
        taken_.insert(name);
        return name;
    }

private:
    std::set<std::string> taken_;
};

/// A step's assignments for stage `k`: the pairs' fields replaced (by the fields between the
/// steps, or by temporaries where every read is at the cell), temporaries renamed.
class StepCopy : public IRMutator {
public:
    StepCopy(std::map<const FieldInfo*, FieldPtr> fields, std::map<const FieldInfo*, Expr> temps, int stage,
             Names& names)
        : fields_(std::move(fields)), states_(std::move(temps)), stage_(stage), names_(names) {}

protected:
    Expr visit_FieldAccess(const FieldAccessNode* n, const Expr& self) override {
        if (auto t = states_.find(n->field.get()); t != states_.end()) return t->second;
        auto it = fields_.find(n->field.get());
        if (it == fields_.end()) return self;
        return FieldAccessNode::make(it->second, n->offsets, n->components);
    }
    Expr visit_Var(const VarNode* v, const Expr& self) override {
        if (v->role != VarRole::Temporary) return self;
        Expr& renamed = temps_[v];
        if (!renamed.defined())
            renamed = VarNode::make(v->type, names_.fresh(v->name, stage_), v->role, v->field, v->axis, v->weak);
        return renamed;
    }

private:
    std::map<const FieldInfo*, FieldPtr> fields_;
    std::map<const FieldInfo*, Expr> states_;
    std::map<const VarNode*, Expr> temps_;
    int stage_;
    Names& names_;
};

/// The steps of a pointwise step as one stage: step k's new states are temporaries that step
/// k + 1 reads; the last step writes the pairs' dst.
Stages pointwise_steps(const AssignmentCollection& step, const std::vector<Pair>& pairs, const KernelConfig& c) {
    Names names(step);
    std::vector<Assignment> all;
    std::vector<Expr> previous;
    for (int k = 1; k <= c.time_steps; ++k) {
        std::map<const FieldInfo*, Expr> states;
        std::vector<Expr> next;
        for (std::size_t i = 0; i < pairs.size(); ++i) {
            if (k > 1) states[pairs[i].src.get()] = previous[i];
            if (k < c.time_steps) {
                next.push_back(VarNode::make(pairs[i].dst->type, names.fresh(pairs[i].dst->name, k), VarRole::Temporary));
                states[pairs[i].dst.get()] = next.back();
            }
        }
        StepCopy copy({}, states, k, names);
        for (const Assignment& a : step.all())
            for (auto& [lhs, rhs] : a.parts()) all.emplace_back(copy.mutate(lhs), copy.mutate(rhs));
        previous = next;
    }
    return Stages(std::vector<AssignmentCollection>{AssignmentCollection(std::move(all))});
}

} // namespace

Stages time_step_stages(const AssignmentCollection& step, const KernelConfig& c) {
    if (c.time_steps < 1 || c.time_steps > kMaxTimeSteps)
        throw UserError(fmt::format("kernel '{}' has time_steps = {}; give 1 (one step per call) to "
                                    "{} steps per call", c.name, c.time_steps, kMaxTimeSteps));
    if (c.time_steps == 1)
        throw UserError(fmt::format("kernel '{}' has ping_pong pairs but time_steps = 1; the pairs "
                                    "are for temporal blocking: set time_steps above 1, or leave "
                                    "ping_pong empty", c.name));
    const StepFields f(step);
    const std::vector<Pair> pairs = find_pairs(f, c);
    for (const Pair& p : pairs) {
        if (StepFields::has(f.read, p.dst) || StepFields::has(f.gathered, p.dst))
            fail(c, fmt::format("the step reads {}, which it writes: a ping-pong step reads the "
                                "previous state ({}) only, and writes the new one; read {} instead",
                                p.dst->name, p.src->name, p.src->name));
        if (StepFields::has(f.gathered, p.src))
            fail(c, fmt::format("the step reads {} at absolute positions (.at()), and the steps "
                                "between live in tiles of the block's cells; read {} at offsets "
                                "from the cell", p.src->name, p.src->name));
        if (!p.dst->index_shape.empty())
            fail(c, fmt::format("{} has index axes, and the steps between are held on chip, "
                                "which takes scalar fields so far; run one step per call",
                                p.dst->describe()));
    }
    // A pointwise step (every read of a state at the cell) needs no tiles: the states between
    // the steps are temporaries of one stage.
    bool pointwise = true;
    for (const Assignment& a : step.all())
        for (auto& [lhs, rhs] : a.parts())
            for (const Expr& e : subexpressions(rhs))
                if (auto fa = e.as<FieldAccessNode>())
                    for (const Pair& p : pairs)
                        if (fa->field == p.src && std::any_of(fa->offsets.begin(), fa->offsets.end(),
                                                              [](int o) { return o != 0; }))
                            pointwise = false;
    if (pointwise) return pointwise_steps(step, pairs, c);

    // Intermediate fields: named after dst and the step, clear of the kernel's own names.
    Names names(step);
    std::vector<std::vector<FieldPtr>> between(std::size_t(c.time_steps)); // [k][pair]
    for (int k = 1; k < c.time_steps; ++k)
        for (const Pair& p : pairs) {
            auto info = std::make_shared<FieldInfo>(*p.dst);
            info->name = names.fresh(p.dst->name, k);
            between[std::size_t(k)].push_back(info);
        }
    Stages stages;
    for (int k = 1; k <= c.time_steps; ++k) {
        std::map<const FieldInfo*, FieldPtr> replace;
        for (std::size_t i = 0; i < pairs.size(); ++i) {
            if (k > 1) replace[pairs[i].src.get()] = between[std::size_t(k - 1)][i];
            if (k < c.time_steps) replace[pairs[i].dst.get()] = between[std::size_t(k)][i];
        }
        StepCopy copy(replace, {}, k, names);
        std::vector<Assignment> main, subs;
        for (const Assignment& a : step.subexpressions())
            for (auto& [lhs, rhs] : a.parts()) subs.emplace_back(copy.mutate(lhs), copy.mutate(rhs));
        for (const Assignment& a : step.main_assignments())
            for (auto& [lhs, rhs] : a.parts()) main.emplace_back(copy.mutate(lhs), copy.mutate(rhs));
        stages.then(AssignmentCollection(std::move(main), std::move(subs)));
    }
    // Step k + 1 reads the cells past the iteration space where separate sweeps would: in dst
    // after an odd step, in src after an even one.
    for (int k = 1; k < c.time_steps; ++k)
        for (std::size_t i = 0; i < pairs.size(); ++i)
            stages.on_chip(Field(between[std::size_t(k)][i]), Field(k % 2 == 1 ? pairs[i].dst : pairs[i].src));
    return stages;
}

} // namespace loom
