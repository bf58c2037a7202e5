// The CPU path: map_to_cpu and its loop order as before/expected IR compared structurally, loop
// kinds in the IR, counter-dependent slices (accepted on the CPU, manual on CUDA), GPU-only
// options rejected on the CPU, and the pipeline's output for Target::CPU.
#include "compiler/ir/equality.hpp"
#include "compiler/ir/evaluate.hpp"
#include "compiler/ir/ir.hpp"
#include "compiler/ir/visitor.hpp"
#include "compiler/lower.hpp"
#include "compiler/passes/analyze.hpp"
#include "compiler/passes/cpu_mapping.hpp"
#include "compiler/passes/iteration_space.hpp"
#include "compiler/passes/verify.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/lowered_nest.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

namespace {
using namespace loom;
using namespace loom::ir;

Expr i64(std::int64_t v) { return ConstNode::make_int(ScalarType::Int64, v); }

KernelConfig cpu(KernelConfig c = {}) {
    c.target = Target::CPU;
    return c;
}

using Lowered = test::LoweredNest;

/// The target-neutral nest map_to_cpu starts from, for the CPU target by default.
Lowered lower_nest(const std::vector<SourceAssignment>& in, const KernelConfig& cfg = cpu()) {
    return test::lower_nest(in, cfg);
}

/// The loop `f` with another body and kind (the same variable, bounds and axis).
Stmt rebuilt(const ForNode* f, Stmt body, ForKind kind) {
    return ForNode::make(f->var, f->start, f->stop, f->step, body, f->axis, kind);
}

using Loops = std::vector<std::pair<int, ForKind>>; ///< (axis, kind), outermost first
using K = ForKind;

Loops axes_and_kinds(const Stmt& nest) {
    Loops out;
    for (Stmt s = nest; auto f = s.as<ForNode>(); s = f->body) out.push_back({f->axis, f->kind});
    return out;
}

TEST(CpuMapping, CLayoutKeepsAxisOrderOutermostParallelInnermostVectorized) {
    auto [src, dst] = fields<2>("src, dst: float64[2D]");
    Lowered l = lower_nest({{dst.center(), src[{1, 0}] + src[{-1, 0}], "dsl text"}});
    std::vector<int> order = plan_cpu_loop_order(l.nest, *l.analysis.primary);
    EXPECT_EQ(order, (std::vector<int>{0, 1})) << "C layout: axis 1 is fastest, so innermost";
    Stmt mapped = map_to_cpu(l.nest, order);

    auto loops = l.loops();
    Stmt expected = rebuilt(loops[0], rebuilt(loops[1], l.body(), K::Vectorized), K::Parallel);
    EXPECT_IR_EQ(mapped, expected);
    EXPECT_TRUE(mapped.as<ForNode>()->body.as<ForNode>()->body.same_as(l.body()))
        << "the body is kept as is";
}

TEST(CpuMapping, OneDimensionalLoopIsParallelAndVectorized) {
    auto [x, y] = fields<2>("x, y: float32[1D]");
    Lowered l = lower_nest({{y.center(), x[{-1}] + x[{1}], ""}});
    Stmt mapped = map_to_cpu(l.nest, plan_cpu_loop_order(l.nest, *l.analysis.primary));
    EXPECT_IR_EQ(mapped, rebuilt(l.loops()[0], l.body(), ForKind::ParallelVectorized));
}

TEST(CpuMapping, LoopsBetweenOutermostAndInnermostStaySerial) {
    auto [a, b] = fields<2>("a, b: float32[4D]");
    Lowered l = lower_nest({{b.center(), a.center(), ""}});
    Stmt mapped = map_to_cpu(l.nest, plan_cpu_loop_order(l.nest, *l.analysis.primary));
    EXPECT_EQ(axes_and_kinds(mapped),
              (Loops{{0, K::Parallel}, {1, K::Serial}, {2, K::Serial}, {3, K::Vectorized}}));
}

TEST(CpuMapping, FortranLayoutReversesTheNestSoAxisZeroIsInnermost) {
    auto a = field("a: float64[3D]", Layout::Fortran);
    auto b = field("b: float64[3D]", Layout::Fortran);
    Lowered l = lower_nest({{b.center(), a[{1, 0, 0}], ""}});
    std::vector<int> order = plan_cpu_loop_order(l.nest, *l.analysis.primary);
    EXPECT_EQ(order, (std::vector<int>{2, 1, 0})) << "memory order, slowest outermost";
    Stmt mapped = map_to_cpu(l.nest, order);

    auto loops = l.loops(); // axis 0, 1, 2 as lower_iteration_space built them
    Stmt expected = rebuilt(
        loops[2], rebuilt(loops[1], rebuilt(loops[0], l.body(), K::Vectorized), K::Serial),
        K::Parallel);
    EXPECT_IR_EQ(mapped, expected);
    EXPECT_NO_THROW(verify_lowered(mapped, l.params));
}

TEST(CpuMapping, ThePrimaryFieldsLayoutDecides) {
    // m (AoS, zyxf) is written first: axis 0 is its fastest spatial axis. u (SoA) agrees.
    auto rho = field("rho: float64[2D]");
    auto u = field("u(2): float64[2D]", Layout::SoA);
    auto m = field("m(2): float64[2D]", Layout::AoS);
    Lowered aos = lower_nest({{m(0), rho.center() * u(0), ""}});
    EXPECT_EQ(plan_cpu_loop_order(aos.nest, *aos.analysis.primary), (std::vector<int>{1, 0}));
    // A C-layout primary keeps axis order even when it reads a SoA field.
    Lowered c = lower_nest({{rho.center(), u(0), ""}});
    EXPECT_EQ(plan_cpu_loop_order(c.nest, *c.analysis.primary), (std::vector<int>{0, 1}));
}

TEST(CpuMapping, CounterDependentBoundsKeepTheirCounterOutside) {
    using namespace loom::counters;
    // Fortran 2D triangle: axis 1 starts at x, so the loop over axis 0 must enclose it, and the
    // memory order (axis 0 innermost) is not legal: axis order stays.
    auto f = field("f: float64[2D]", Layout::Fortran);
    KernelConfig triangle = cpu({.iteration_slice = Slice{all(), from(x)}});
    Lowered tri = lower_nest({{f.center(), 1, ""}}, triangle);
    EXPECT_EQ(plan_cpu_loop_order(tri.nest, *tri.analysis.primary), (std::vector<int>{0, 1}));
    Stmt mapped = map_to_cpu(tri.nest, {0, 1});
    auto loops = tri.loops();
    EXPECT_IR_EQ(mapped,
                 rebuilt(loops[0], rebuilt(loops[1], tri.body(), K::Vectorized), K::Parallel));
    EXPECT_IR_EQ(loops[1]->start, loops[0]->var) << "the inner loop starts at the outer counter";

    // 3D Fortran, axis 2 bounded by x: axis 0 cannot be innermost; the fastest loop that can
    // (axis 1) is, and axis 0 stays outside axis 2.
    auto g = field("g: float64[3D]", Layout::Fortran);
    Lowered l3 =
        lower_nest({{g.center(), 1, ""}}, cpu({.iteration_slice = Slice{all(), all(), until(x)}}));
    EXPECT_EQ(plan_cpu_loop_order(l3.nest, *l3.analysis.primary), (std::vector<int>{0, 2, 1}));
}

TEST(CpuMapping, RejectsOrdersThatAreNotPermutationsOrBreakBoundDependencies) {
    using namespace loom::counters;
    auto f = field("f: float64[2D]");
    Lowered tri =
        lower_nest({{f.center(), 1, ""}}, cpu({.iteration_slice = Slice{all(), from(x)}}));
    LOOM_EXPECT_ERROR(map_to_cpu(tri.nest, {1, 0}), InternalError, {"puts axis 0 inside axis 1"});
    LOOM_EXPECT_ERROR(map_to_cpu(tri.nest, {0}), InternalError, {"not a permutation"});
    LOOM_EXPECT_ERROR(map_to_cpu(CommentNode::make("x"), {0}), InternalError,
                      {"expects a loop nest"});
}

TEST(ForKinds, KindIsPartOfEqualityHashAndDebugNotation) {
    Expr i = VarNode::make(ScalarType::Int64, "i", VarRole::Counter, nullptr, 0);
    Stmt body = CommentNode::make("x");
    Stmt serial = ForNode::make(i, i64(0), i64(8), i64(1), body, 0);
    Stmt parallel = ForNode::make(i, i64(0), i64(8), i64(1), body, 0, ForKind::Parallel);
    EXPECT_EQ(serial.as<ForNode>()->kind, ForKind::Serial) << "the default";
    EXPECT_FALSE(structurally_equal(serial, parallel));
    EXPECT_NE(structural_hash(serial), structural_hash(parallel));
    Stmt parallel_again = ForNode::make(i, i64(0), i64(8), i64(1), body, 0, ForKind::Parallel);
    EXPECT_TRUE(structurally_equal(parallel, parallel_again));
    EXPECT_EQ(to_string(serial), "for i in [0, 8) step 1:  # axis 0\n  # x\n");
    EXPECT_EQ(to_string(parallel), "for i in [0, 8) step 1:  # axis 0, parallel\n  # x\n");
    EXPECT_EQ(for_kind_name(ForKind::ParallelVectorized), "parallel, vectorized");
}

TEST(ForKinds, TheMutatorKeepsTheKind) {
    struct Renumber : IRMutator {
        Expr visit_Const(const ConstNode* c, const Expr& self) override {
            return c->int_value == 8 ? i64(9) : self;
        }
    };
    Expr i = VarNode::make(ScalarType::Int64, "i", VarRole::Counter, nullptr, 0);
    Stmt loop =
        ForNode::make(i, i64(0), i64(8), i64(1), CommentNode::make("x"), 0, ForKind::Vectorized);
    Stmt changed = Renumber().mutate(loop);
    ASSERT_FALSE(changed.same_as(loop));
    EXPECT_EQ(changed.as<ForNode>()->kind, ForKind::Vectorized);
}

TEST(CpuPipeline, CounterDependentSlicesNeedNoManualGridOnTheCpu) {
    using namespace loom::counters;
    auto f = field("f: float64[2D]");
    Assignment one(f.center(), 1);
    KernelConfig triangle{.name = "triangle", .iteration_slice = Slice{all(), from(x)}};
    LOOM_EXPECT_ERROR(create_kernel(one, triangle), UserError,
                      {"kernel 'triangle'", "[:, x:]", "manual_launch_grid = true"});

    Kernel k = create_kernel(one, cpu(triangle));
    EXPECT_FALSE(k.launch().has_grid);
    EXPECT_FALSE(k.launch().manual);
    EXPECT_EQ(k.launch().describe(), "none (CPU target: loops, no launch grid)");
    LOOM_EXPECT_ERROR(k.launch().evaluate_extents({}), UserError, {"no launch grid", "CPU target"});
    const char* inner = "for (int32_t y = x; y < size_1; ++y)";
    EXPECT_NE(k.source().find(inner), std::string::npos) << k.source();
}

TEST(CpuPipeline, CounterDependentBoundsWorkInFourDimensions) {
    using namespace loom::counters;
    auto f = field("f: float32[4D]");
    Assignment one(f.center(), 1);
    KernelConfig cfg{.iteration_slice = Slice{all(), all(), all(), from(y)}};
    LOOM_EXPECT_ERROR(create_kernel(one, cfg, {.manual_launch_grid = true}), UserError,
                      {"supported up to 3D"});
    Kernel k = create_kernel(one, cpu(cfg));
    EXPECT_EQ(axes_and_kinds(k.ir()),
              (Loops{{0, K::Parallel}, {1, K::Serial}, {2, K::Serial}, {3, K::Vectorized}}));
}

TEST(CpuPipeline, TheScheduleIsIgnoredSoOneConfigAndScheduleSwitchTargets) {
    // The triangle with a manual grid, as written for the GPU: on the CPU the loops cover it all.
    using namespace loom::counters;
    auto f = field("f: float64[2D]");
    KernelConfig gpu{.iteration_slice = Slice{all(), from(x)}};
    Schedule schedule{.block = std::array<int, 3>{128, 1, 1},
                      .cells_per_thread = 2,
                      .cells_axis = 0,
                      .shared_memory_budget = 0,
                      .max_registers = 32,
                      .manual_launch_grid = true,
                      .vector_width = 1};
    KernelConfig cpu_cfg = gpu;
    cpu_cfg.target = Target::CPU;
    Kernel k = create_kernel(Assignment(f.center(), 1), cpu_cfg, schedule);
    EXPECT_FALSE(k.launch().has_grid);
    EXPECT_EQ(k.source().find("blockIdx"), std::string::npos);
    EXPECT_EQ(k.source().find("registers"), std::string::npos) << "no __maxnreg__ on the CPU";
    EXPECT_EQ(k.schedule().describe(), schedule.describe()) << "nothing chosen on the CPU";
    EXPECT_EQ(k.schedule().describe(k.requested_schedule()).find("(chosen)"), std::string::npos);
    const Kernel cuda = create_kernel(Assignment(f.center(), 1), gpu, schedule);
    EXPECT_TRUE(cuda.launch().manual) << "the same schedule serves the GPU";
}

TEST(CpuPipeline, KernelNamedLikeACLibraryFunctionKeepsTheLibraryFunction) {
    // The kernel's code and its exported entry point carry loom-owned names: neither defines
    // `exp`, so the kernel is accepted and its source calls the C library's exp.
    auto [a, b] = fields<2>("a, b: float64[2D]");
    Kernel k = create_kernel(Assignment(b.center(), exp(a.center())), cpu({.name = "exp"}));
    const std::string src = k.source();
    EXPECT_NE(src.find("static void loom_kernel_exp("), std::string::npos) << src;
    EXPECT_NE(src.find("extern \"C\" void loom_kernel_exp_entry(void* const* args)"),
              std::string::npos) << src;
    EXPECT_NE(src.find("= exp(a["), std::string::npos) << src;
    EXPECT_EQ(src.find("void exp("), std::string::npos) << src;
}

TEST(CpuPipeline, TheBodyIsTheMappedNestAndThePrinterWritesCpp) {
    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    Kernel k = create_kernel(Assignment(dst.center(), 0.5 * (src[{1, 0}] + src[{-1, 0}])),
                             cpu({.name = "avg", .index_type = ScalarType::Int64}));
    EXPECT_EQ(axes_and_kinds(k.ir()), (Loops{{0, K::Parallel}, {1, K::Vectorized}}));
    EXPECT_NO_THROW(verify_lowered(k.ir(), k.parameters()));
    const std::string src_text = k.source();
    for (const char* part : {"// kernel:  avg (CPU, C++ with OpenMP)", "#include <math.h>",
                             "static void loom_kernel_avg(", "float* __restrict__ dst",
                             "const float* __restrict__ src", "const int64_t size_0",
                             "#pragma omp parallel for\n", "#pragma omp simd\n",
                             "extern \"C\" void loom_kernel_avg_entry(void* const* args)",
                             "*(float* const*) args[0], *(const float* const*) args[1]",
                             "*(const int64_t*) args[2]"})
        EXPECT_NE(src_text.find(part), std::string::npos)
            << "lacks \"" << part << "\":\n" << src_text;
    EXPECT_EQ(src_text.find("__global__"), std::string::npos);
    EXPECT_EQ(k.parameters()[0].c_type, "float* __restrict__");
    EXPECT_EQ(k.parameters()[2].c_type, "const int64_t");
}

} // namespace
