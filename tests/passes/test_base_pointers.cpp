// Base pointers (point_at_cells), pass by pass: the IR of a stencil after map_to_gpu, after
// point_at_cells and after flatten_addresses; which accesses get a pointer and which keep their
// whole address; const and restrict in the printed CUDA. The GPU runs every golden and random
// kernel with base pointers (tests/gpu), the CPU target has none.
#include "compiler/ir/visitor.hpp"
#include "compiler/passes/base_pointers.hpp"
#include "compiler/passes/choose_schedule.hpp"
#include "compiler/passes/flatten_addresses.hpp"
#include "compiler/passes/gpu_mapping.hpp"
#include "tests/support/lowered_nest.hpp"
#include "tests/support/nvrtc_check.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

namespace loom {
namespace {

using namespace loom::ir;
using test::lower_nest;

Stmt mapped(const test::LoweredNest& l) { return test::map_nest_to_gpu(l).body; }

TEST(BasePointers, AStencilPassByPass) {
    auto [u, v, w] = fields<3>("u, v, w: float32[2D]");
    // u at four places around the cell, v at one, w written at one.
    auto l = lower_nest({{w.center(), u[{1, 0}] + u[{-1, 0}] + u[{0, 1}] - u[{0, -1}] * v.center(), "w[0, 0] = ...", 1}},
                        {.name = "pointed", .index_type = ScalarType::Int32}, {});
    Stmt gpu = mapped(l);
    Stmt pointed = point_at_cells(gpu);
    EXPECT_EQ(to_string(pointed), R"(for y in [1, size_1 - 1) step 1:  # axis 1, gpu grid.x
  for cell in [0, 4) step 1:  # axis -1
    for x in [cell + 1, size_0 - 1) step 4:  # axis 0, gpu grid.y
      u_c = &u[x, y]
      # w[0, 0] = ...
      w[x, y] = u_c[1, 0] + u_c[-1, 0] + u_c[0, 1] - u_c[0, -1] * v[x, y]
)");
    // The pointer is a view of u's buffer, with its strides.
    std::vector<const BasePointerNode*> pointers;
    struct Find : IRVisitor {
        std::vector<const BasePointerNode*>& out;
        explicit Find(std::vector<const BasePointerNode*>& o) : out(o) {}
        void visit_BasePointer(const BasePointerNode* n) override { out.push_back(n); }
    } find(pointers);
    find.visit(pointed);
    ASSERT_EQ(pointers.size(), 1u);
    EXPECT_EQ(pointers[0]->buffer, l.space.globals.at(u.ptr().get()));
    EXPECT_EQ(pointers[0]->view->base, pointers[0]->buffer);
    EXPECT_EQ(pointers[0]->view->field, nullptr);
    EXPECT_EQ(to_string(pointers[0]->view->strides[0]), "u_stride_0");
    EXPECT_EQ(to_string(flatten_addresses(pointed)), R"(for y in [1, size_1 - 1) step 1:  # axis 1, gpu grid.x
  for cell in [0, 4) step 1:  # axis -1
    for x in [cell + 1, size_0 - 1) step 4:  # axis 0, gpu grid.y
      u_c = &u[u_stride_0 * x + y]
      # w[0, 0] = ...
      w[w_stride_0 * x + y] = u_c[u_stride_0] + u_c[-u_stride_0] + u_c[1] - u_c[-1] * v[v_stride_0 * x + y]
)");
}

TEST(BasePointers, OnePlaceAGatherOrAnotherCellKeepTheWholeAddress) {
    auto [u, v] = fields<2>("u, v: float32[2D]");
    // u read at one place, v written at one: nothing to point at.
    auto l = lower_nest({{v.center(), 2.0 * u.center(), "", 1}}, {.name = "once"}, {});
    Stmt gpu = mapped(l);
    EXPECT_TRUE(point_at_cells(gpu).same_as(gpu));
}

TEST(BasePointers, ThePrintedPointerIsConstAndRestrictOnlyForFieldsTheKernelReads) {
    // t is written, then read at neighbouring places in a later statement: its pointer is a
    // plain `float* const`; u is only read: `const float* __restrict__`, as its parameter.
    // (Scalar, without lanes: a row of lanes reads its neighbours through the row's array.)
    auto [t, u] = fields<2>("t, u: float32[2D]");
    Kernel k = create_kernel({Assignment(t.center(), u[{0, 1}] + u[{0, -1}])}, {.name = "consts"}, {.vector_width = 1});
    const std::string src = k.source();
    EXPECT_NE(src.find("const float* __restrict__ u_c = u + u_stride_0 * x + y;"), std::string::npos) << src;
    EXPECT_NE(src.find("t[t_stride_0 * x + y] = u_c[1] + u_c[-1];"), std::string::npos) << src;
    test::expect_compiles_for_sm90(k);

    // A vector field laid out component-fastest (C): its components are neighbours too.
    auto [m] = fields<1>("m(3): float64[2D]");
    Kernel w = create_kernel({Assignment(m(0), m(1) + m(2))}, {.name = "components"});
    const std::string ws = w.source();
    EXPECT_NE(ws.find("double* const m_c = m + m_stride_0 * x + m_stride_1 * y;"), std::string::npos) << ws;
    EXPECT_NE(ws.find("m_c[0] = m_c[1] + m_c[2];"), std::string::npos) << ws;
    EXPECT_EQ(ws.find("__restrict__ m_c"), std::string::npos) << "a written field's pointer is not restrict";
    test::expect_compiles_for_sm90(w);

    // The CPU target keeps whole indices.
    KernelConfig on_cpu{.name = "consts_cpu"};
    on_cpu.target = Target::CPU;
    EXPECT_EQ(create_kernel({Assignment(t.center(), u[{0, 1}] + u[{0, -1}])}, on_cpu).source().find("u_c"),
              std::string::npos);
}

TEST(BasePointers, PointersComeInTheOrderOfFirstAccessOnEveryRun) {
    // Five fields first read by one statement: their pointers are declared in the order the
    // statement reads them, whatever the addresses of the IR objects (the source is the cache
    // key: it must not change from one create_kernel to the next).
    auto make = [] {
        auto [e, d, c, b, a, out] = fields<6>("e, d, c, b, a, out: float32[2D]");
        Expr sum;
        for (const Field& f : {c, a, e, b, d}) {
            Expr pair = f[{1, 0}] - f[{-1, 0}];
            sum = sum.defined() ? sum + pair : pair;
        }
        return create_kernel({Assignment(out.center(), sum)}, {.name = "ordered"}, {.vector_width = 1}).source();
    };
    const std::string first = make();
    for (int run = 0; run < 8; ++run) EXPECT_EQ(make(), first);
    std::size_t at = 0;
    for (const char* name : {"c_c = c +", "a_c = a +", "e_c = e +", "b_c = b +", "d_c = d +"}) {
        const std::size_t next = first.find(name);
        ASSERT_NE(next, std::string::npos) << name << "\n" << first;
        EXPECT_GT(next, at) << name << " out of order:\n" << first;
        at = next;
    }
}

} // namespace
} // namespace loom
