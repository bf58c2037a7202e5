// What the pass tests share: a structural IR comparison that prints both sides, and a kernel
// run through analysis, lower_layers and the iteration-space pass with accessors for what the
// tests compare.
#pragma once

#include "compiler/ir/equality.hpp"
#include "compiler/ir/printer.hpp"
#include "compiler/lower.hpp"
#include "compiler/passes/analyze.hpp"
#include "compiler/passes/choose_schedule.hpp"
#include "compiler/passes/flatten_addresses.hpp"
#include "compiler/passes/gpu_mapping.hpp"
#include "compiler/passes/iteration_space.hpp"
#include "compiler/passes/lower_layers.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#define EXPECT_IR_EQ(actual, expected)                                                             \
    EXPECT_TRUE(::loom::ir::structurally_equal(actual, expected))                                      \
        << "actual:\n" << ::loom::to_string(actual) << "expected:\n" << ::loom::to_string(expected)

namespace loom::test {
using namespace loom::ir;

/// Analysis, the layers' loops and the iteration-space pass of a kernel: the target-neutral
/// loop nest.
struct LoweredNest {
    KernelAnalysis analysis;
    std::vector<KernelParam> params;
    Stmt nest;            ///< with flat addresses, as the printers see them
    IterationSpace space; ///< what lower_iteration_space returned: accesses at coordinates

    /// The variable of a Size, Stride or Scalar parameter (of `field`, if given).
    Expr param(ParamRole role, int axis, const FieldInfo* field = nullptr) const {
        for (auto& p : params)
            if (p.role == role && p.axis == axis && (!field || p.field.get() == field)) return p.var;
        ADD_FAILURE() << "no such parameter";
        return Expr();
    }
    /// The loops of the nest, outermost first.
    std::vector<const ir::ForNode*> loops() const {
        std::vector<const ir::ForNode*> out;
        // (Not `for (...; auto f = s.as<ForNode>(); s = f->body)`: the condition's variable is
        // gone by the time the increment runs.)
        for (const ir::ForNode* f = nest.as<ir::ForNode>(); f; f = f->body.as<ir::ForNode>())
            out.push_back(f);
        return out;
    }
    /// The Global buffer of field `f`.
    template <typename Field>
    ir::BufferPtr global(const Field& f) const { return space.globals.at(f.ptr().get()); }
    /// The loop variable at `depth` (0 = outermost).
    Expr loop_var(int depth) const { return loops().at(std::size_t(depth))->var; }
    /// The statements inside the innermost loop.
    Stmt body() const { return loops().back()->body; }
    /// The value stored by the first Store inside the loops.
    Expr stored() const {
        for (auto& st : body().as<ir::BlockNode>()->stmts)
            if (auto store = ir::as_field_store(st)) return store->value;
        ADD_FAILURE() << "no store";
        return Expr();
    }
    /// (role, axis, field name or "") per parameter, in signature order.
    std::vector<std::string> signature() const {
        std::vector<std::string> out;
        for (auto& p : params)
            out.push_back(std::string(role_name(p.role)) + " " + std::to_string(p.axis) + " " +
                          (p.field ? p.field->name : ""));
        return out;
    }
};

inline LoweredNest lower_nest(const std::vector<SourceAssignment>& in, const KernelConfig& cfg = {},
                              const Schedule& schedule = {}) {
    LoweredNest l;
    l.analysis = analyze_kernel(in, cfg, schedule);
    // The nest with its addresses flattened, as the printers see them.
    l.space = lower_iteration_space(lower_layers(l.analysis.body), l.analysis, cfg);
    l.nest = flatten_addresses(l.space.nest);
    l.params = l.space.params;
    return l;
}

/// The nest's loops bound to the grid by the schedule `requested` resolves to, as map_to_gpu
/// leaves them for the passes after it (lanes, streaming, base pointers).
inline ir::GpuMapped map_nest_to_gpu(const LoweredNest& l, const Schedule& requested = {}) {
    ir::ScheduleFacts facts;
    facts.axis_of_dim = ir::thread_axes(*l.analysis.primary);
    return ir::map_to_gpu(l.space.nest,
                          ir::plan_thread_mapping(*l.analysis.primary, ir::choose_schedule(requested, facts)));
}

} // namespace loom::test
