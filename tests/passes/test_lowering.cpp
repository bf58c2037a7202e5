// Iteration space, GPU mapping, launch-grid inference, verification and the pass log, each tested
// as before/expected IR compared structurally. Variables compare by identity, so the expected IR
// is built from the variables the pass created (loop variables, size and stride parameters).
#include "compiler/ir/equality.hpp"
#include "compiler/ir/evaluate.hpp"
#include "compiler/ir/ir.hpp"
#include "compiler/pass_log.hpp"
#include "compiler/passes/analyze.hpp"
#include "compiler/passes/choose_schedule.hpp"
#include "compiler/passes/gpu_mapping.hpp"
#include "compiler/passes/iteration_space.hpp"
#include "compiler/passes/launch_grid.hpp"
#include "compiler/passes/name_parameters.hpp"
#include "compiler/lower.hpp"
#include "compiler/passes/verify.hpp"
#include "tests/support/field_buffer.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/lowered_nest.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <sstream>

namespace {
using namespace loom;
using namespace loom::ir;

Expr i64(std::int64_t v) { return ConstNode::make_int(ScalarType::Int64, v); }
Expr add(Expr a, Expr b) { return BinaryNode::make(BinaryOp::Add, a, b); }
Expr sub(Expr a, Expr b) { return BinaryNode::make(BinaryOp::Sub, a, b); }
Expr mul(Expr a, Expr b) { return BinaryNode::make(BinaryOp::Mul, a, b); }
Expr lt(Expr a, Expr b) { return BinaryNode::make(BinaryOp::Lt, a, b); }

using test::lower_nest;
using Lowered = test::LoweredNest;

/// The schedule lower() would resolve for the nest's kernel (no layers, no counter bounds).
Schedule resolved(const Lowered& l, const Schedule& requested = {}, bool manual_grid = false) {
    ScheduleFacts facts;
    facts.axis_of_dim = thread_axes(*l.analysis.primary);
    facts.manual_grid = manual_grid;
    return choose_schedule(requested, facts);
}

TEST(IterationSpace, ThreePointStencilBecomesLoopNestWithLoadsAndStores) {
    auto [src, dst] = fields<2>("src, dst: float64[2D]");
    Lowered l = lower_nest({{dst.center(), src[{1, 0}] + src[{0, -1}], "dsl text"}});
    Expr c0 = l.loop_var(0), c1 = l.loop_var(1);
    Expr n0 = l.param(ParamRole::Size, 0), n1 = l.param(ParamRole::Size, 1);
    Expr s_src = l.param(ParamRole::Stride, 0, &src.info());
    Expr s_dst = l.param(ParamRole::Stride, 0, &dst.info());

    Stmt body = BlockNode::make(
        {CommentNode::make("dsl text"),
         BufferStoreNode::make(l.global(dst), add(mul(s_dst, c0), c1),
                         add(BufferLoadNode::make(l.global(src), add(mul(s_src, add(c0, i64(1))), c1)),
                             BufferLoadNode::make(l.global(src), sub(add(mul(s_src, c0), c1), i64(1)))))});
    Stmt expected = ForNode::make(c0, i64(1), sub(n0, i64(1)), i64(1),
                                  ForNode::make(c1, i64(1), sub(n1, i64(1)), i64(1), body, 1), 0);
    EXPECT_IR_EQ(l.nest, expected);
}

TEST(IterationSpace, SignatureListsPointersSizesStridesAndScalars) {
    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    Expr alpha = param<float>("alpha");
    Lowered l = lower_nest({{dst.center(), alpha * src.center(), ""}});
    std::vector<std::pair<ParamRole, int>> got;
    for (auto& p : l.params) got.push_back({p.role, p.axis});
    std::vector<std::pair<ParamRole, int>> want = {
        {ParamRole::FieldPointer, -1}, {ParamRole::FieldPointer, -1}, {ParamRole::Size, 0},
        {ParamRole::Size, 1},          {ParamRole::Stride, 0},        {ParamRole::Stride, 0},
        {ParamRole::Scalar, -1}};
    EXPECT_EQ(got, want);
    EXPECT_EQ(l.params[0].field, dst.ptr()); // the written field appears first
    EXPECT_FALSE(l.params[0].read_only);
    EXPECT_TRUE(l.params[1].read_only);
    EXPECT_TRUE(l.params[6].var.same_as(alpha));
}

TEST(IterationSpace, FixedShapeBakesSizesAndStridesAsLiterals) {
    auto [a, b] = fields<2>("a, b: float64[8, 16]");
    Lowered l = lower_nest({{b.center(), a[{1, 0}], ""}}, {.ghost_layers = GhostLayers{{1, 1}, {0, 0}}});
    Expr c0 = l.loop_var(0), c1 = l.loop_var(1);
    EXPECT_EQ(l.params.size(), 2u) << "only the two pointers";
    Stmt body = BlockNode::make(
        {CommentNode::make(""),
         BufferStoreNode::make(l.global(b), add(mul(i64(16), c0), c1),
                         BufferLoadNode::make(l.global(a), add(mul(i64(16), add(c0, i64(1))), c1)))});
    Stmt expected = ForNode::make(c0, i64(1), i64(7), i64(1),
                                  ForNode::make(c1, i64(0), i64(16), i64(1), body, 1), 0);
    EXPECT_IR_EQ(l.nest, expected);
}

TEST(IterationSpace, SliceBoundsNegativeEndsStepsAndSingleIndices) {
    auto [a, b] = fields<2>("a, b: float64[2D]");
    KernelConfig cfg{.iteration_slice = Slice{at(3), range(2, -1, 3)}};
    Lowered l = lower_nest({{b.center(), a.center(), ""}}, cfg);
    auto outer = l.nest.as<ForNode>();
    auto inner = outer->body.as<ForNode>();
    EXPECT_IR_EQ(outer->start, i64(3));
    EXPECT_IR_EQ(outer->stop, i64(4));
    EXPECT_IR_EQ(inner->start, i64(2));
    EXPECT_IR_EQ(inner->stop, sub(l.param(ParamRole::Size, 1), i64(1)));
    EXPECT_IR_EQ(inner->step, i64(3));
}

TEST(IterationSpace, VectorComponentsAndLayoutsAddressTheRightElement) {
    // SoA (fzyx): components slowest, axis 0 fastest (unit stride). AoS: components fastest.
    auto u = field("u(3): float32[2D]", Layout::SoA);
    auto m = field("m(3): float32[2D]", Layout::AoS);
    Lowered l = lower_nest({{m(2), u(1), ""}});
    Expr c0 = l.loop_var(0), c1 = l.loop_var(1);
    Expr su1 = l.param(ParamRole::Stride, 1, &u.info()), su2 = l.param(ParamRole::Stride, 2, &u.info());
    Expr sm0 = l.param(ParamRole::Stride, 0, &m.info()), sm1 = l.param(ParamRole::Stride, 1, &m.info());
    Stmt body = BlockNode::make(
        {CommentNode::make(""),
         BufferStoreNode::make(l.global(m), add(add(mul(sm0, c0), mul(sm1, c1)), i64(2)),
                         BufferLoadNode::make(l.global(u), add(add(c0, mul(su1, c1)), su2)))});
    auto inner = l.nest.as<ForNode>()->body.as<ForNode>();
    EXPECT_IR_EQ(inner->body, body);
}

TEST(IterationSpace, CountersInExpressionsBecomeLoopVariables) {
    using namespace loom::counters;
    auto f = field("f: int64[2D]");
    Lowered l = lower_nest({{f.center(), x * 100 + y, ""}});
    Expr c0 = l.loop_var(0), c1 = l.loop_var(1);
    auto inner = l.nest.as<ForNode>()->body.as<ForNode>();
    auto store = as_field_store(inner->body.as<BlockNode>()->stmts[1]);
    EXPECT_IR_EQ(store->value, add(mul(c0, i64(100)), c1));
}

TEST(GpuMapping, EachMappedLoopIsBoundToTheGridFastestAxisToX) {
    auto [src, dst] = fields<2>("src, dst: float64[2D]");
    Lowered l = lower_nest({{dst.center(), src[{1, 0}], ""}});
    ThreadMapping m = plan_thread_mapping(*l.analysis.primary, {.cells_per_thread = 1});
    EXPECT_EQ(m.axis_of_dim, (std::array<int, 3>{1, 0, -1})) << "C layout: axis 1 is fastest";
    Stmt mapped = map_to_gpu(l.nest, m).body;

    // The loops stay, with their bounds; only who runs them changes.
    auto outer = l.nest.as<ForNode>();
    auto inner = outer->body.as<ForNode>();
    Stmt expected = ForNode::make(
        outer->var, outer->start, outer->stop, outer->step,
        ForNode::make(inner->var, inner->start, inner->stop, inner->step, inner->body, 1,
                      ForKind::GpuGrid, 0),
        0, ForKind::GpuGrid, 1);
    EXPECT_IR_EQ(mapped, expected);
}

TEST(GpuMapping, SeveralCellsPerThreadBecomeAnUnrolledLoopOverGridLoopsThatStartLater) {
    auto [src, dst] = fields<2>("src, dst: float64[2D]");
    Lowered l = lower_nest({{dst.center(), src[{1, 0}], ""}});
    ThreadMapping m = plan_thread_mapping(*l.analysis.primary, resolved(l));
    EXPECT_EQ(m.cells_per_thread, (std::array<int, 3>{1, 4, 1})) << "4 cells along y by default";
    Stmt mapped = map_to_gpu(l.nest, m).body;

    auto outer = l.nest.as<ForNode>();
    auto inner = outer->body.as<ForNode>();
    auto x = mapped.as<ForNode>();
    ASSERT_NE(x, nullptr);
    auto cells = x->body.as<ForNode>();
    ASSERT_NE(cells, nullptr);
    Expr cell = cells->var;
    // for y (grid x) { for cell in [0, 4) { for x in [cell + 1, stop) step 4 (grid y) } }
    Stmt expected = ForNode::make(
        inner->var, inner->start, inner->stop, inner->step,
        ForNode::make(cell, i64(0), i64(4), i64(1),
                      ForNode::make(outer->var, add(cell, i64(1)), outer->stop, i64(4),
                                    inner->body, 0, ForKind::GpuGrid, 1),
                      -1),
        1, ForKind::GpuGrid, 0);
    EXPECT_IR_EQ(mapped, expected);

    LaunchDescription L = infer_launch_grid(mapped, resolved(l), ScalarType::Int64);
    // ceil((size_0 - 2) / 4) threads along y, simplified to (size_0 + 1) / 4.
    EXPECT_IR_EQ(L.extents[1], BinaryNode::make(BinaryOp::Div, add(l.param(ParamRole::Size, 0), i64(1)), i64(4)));
    EXPECT_EQ(L.cells_per_thread, (std::array<int, 3>{1, 4, 1})) << "read off the loop over the cells";
    EXPECT_EQ(L.axis_of_dim, (std::array<int, 3>{1, 0, -1}));
}

TEST(GpuMapping, ManualGridsKeepOneCellPerThread) {
    auto f = field("f: float64[2D]");
    Lowered l = lower_nest({{f.center(), 1, ""}});
    ThreadMapping m =
        plan_thread_mapping(*l.analysis.primary, resolved(l, {}, /*manual_grid=*/true));
    EXPECT_EQ(m.cells_per_thread, (std::array<int, 3>{1, 1, 1}));
}

TEST(GpuMapping, FortranLayoutMapsAxisZeroToX) {
    auto a = field("a: float32[3D]", Layout::Fortran);
    auto b = field("b: float32[3D]", Layout::Fortran);
    Lowered l = lower_nest({{b.center(), a.center(), ""}});
    ThreadMapping m = plan_thread_mapping(*l.analysis.primary, resolved(l));
    EXPECT_EQ(m.axis_of_dim, (std::array<int, 3>{0, 1, 2}));
    EXPECT_EQ(m.cells_per_thread, (std::array<int, 3>{1, 1, 4})) << "the slowest mapped dimension";
}

TEST(GpuMapping, FourthAxisStaysASerialLoopInsideTheGridLoops) {
    auto [a, b] = fields<2>("a, b: float32[4D]");
    Lowered l = lower_nest({{b.center(), a.center(), ""}});
    ThreadMapping m = plan_thread_mapping(*l.analysis.primary, {.cells_per_thread = 1});
    EXPECT_EQ(m.axis_of_dim, (std::array<int, 3>{3, 2, 1}));
    Stmt s = map_to_gpu(l.nest, m).body;
    std::vector<std::pair<ForKind, int>> loops; // kind and hardware dimension, outermost first
    while (auto f = s.as<ForNode>()) {
        loops.emplace_back(f->kind, f->dim);
        s = f->body;
    }
    EXPECT_EQ(loops, (std::vector<std::pair<ForKind, int>>{
                         {ForKind::GpuGrid, 2}, {ForKind::GpuGrid, 1}, {ForKind::GpuGrid, 0}, {ForKind::Serial, -1}}));
}

TEST(LaunchGrid, ExtentsAreExpressionsOverSizes) {
    auto [src, dst] = fields<2>("src, dst: float64[3D]");
    Lowered l = lower_nest({{dst.center(), src[{0, 0, 2}], ""}});
    ThreadMapping m{{2, 1, 0}, {1, 1, 1}};
    LaunchDescription L = infer_launch_grid(map_to_gpu(l.nest, m).body, resolved(l), ScalarType::Int64);
    EXPECT_FALSE(L.manual);
    EXPECT_EQ(L.default_block, (std::array<int, 3>{64, 4, 1}));
    Expr n2 = l.param(ParamRole::Size, 2);
    EXPECT_IR_EQ(L.extents[0], sub(n2, i64(4)));
    // Evaluate for concrete sizes: 100 x 50 x 30 with 2 ghost layers on each side.
    Bindings args;
    args[l.param(ParamRole::Size, 0).as<VarNode>()] = Value::of_int(ScalarType::Int64, 100);
    args[l.param(ParamRole::Size, 1).as<VarNode>()] = Value::of_int(ScalarType::Int64, 50);
    args[n2.as<VarNode>()] = Value::of_int(ScalarType::Int64, 30);
    Dim3 ext = L.evaluate_extents(args);
    EXPECT_EQ(ext, (Dim3{26, 46, 96}));
    Dim3 block = L.block_for(ext);
    EXPECT_EQ(block, (Dim3{32, 4, 1})) << "x trimmed to one warp for 26 cells";
    EXPECT_EQ(LaunchDescription::grid_for(ext, block), (Dim3{1, 12, 96}));
}

TEST(LaunchGrid, CounterDependentBoundsAreManual) {
    using namespace loom::counters;
    auto f = field("f: float64[2D]");
    KernelConfig cfg{.iteration_slice = Slice{all(), from(x)}};
    Schedule manual{.manual_launch_grid = true};
    Lowered l = lower_nest({{f.center(), 1, ""}}, cfg, manual);
    LaunchDescription L = infer_launch_grid(map_to_gpu(l.nest, ThreadMapping{{1, 0, -1}, {1, 1, 1}}).body,
                                            resolved(l, manual, true), ScalarType::Int64);
    EXPECT_TRUE(L.manual);
    EXPECT_NE(L.manual_reason.find("another counter"), std::string::npos);
    LOOM_EXPECT_ERROR(L.evaluate_extents({}), UserError, {"manual launch grid", "num_blocks"});
}

TEST(LaunchGrid, FixedShapesTrimTheDefaultBlockAtGenerationTime) {
    auto [a, b] = fields<2>("a, b: float32[8, 20]");
    Lowered l = lower_nest({{b.center(), a[{0, 1}], ""}});
    Schedule s = resolved(l);
    LaunchDescription L =
        infer_launch_grid(map_to_gpu(l.nest, ThreadMapping{{1, 0, -1}, {1, 1, 1}}).body, s, ScalarType::Int64);
    EXPECT_IR_EQ(L.extents[0], i64(18));
    EXPECT_IR_EQ(L.extents[1], i64(6));
    EXPECT_EQ(L.default_block, (std::array<int, 3>{64, 4, 1})) << "the chosen block";
    fit_chosen_block(s, {}, L);
    EXPECT_EQ(L.default_block, (std::array<int, 3>{32, 4, 1})) << "trimmed to 18 x 6";
    EXPECT_EQ(s.block, (std::array<int, 3>{32, 4, 1})) << "the resolved schedule says so too";
}

TEST(LaunchGrid, AGivenBlockIsKeptEvenForFixedShapes) {
    auto [a, b] = fields<2>("a, b: float32[8, 20]");
    Schedule given{.block = std::array<int, 3>{128, 2, 1}};
    Lowered l = lower_nest({{b.center(), a.center(), ""}}, {}, given);
    Schedule s = resolved(l, given);
    LaunchDescription L =
        infer_launch_grid(map_to_gpu(l.nest, ThreadMapping{{1, 0, -1}, {1, 1, 1}}).body, s, ScalarType::Int64);
    fit_chosen_block(s, given, L);
    EXPECT_EQ(L.default_block, (std::array<int, 3>{128, 2, 1}));
}

TEST(NameParameters, ThePassNamesAndTypesTheParametersBeforeAnyPrinting) {
    // A scalar named like loom's size parameter keeps its name; loom's own parameter moves.
    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    Expr size = param<float>("size_0");
    LoweredKernel k;
    k.config.name = "names";
    k.config.target = Target::CUDA;
    Lowered l = lower_nest({{dst.center(), src[{1, 0}] * size, ""}});
    k.params = l.params;
    k.body = l.nest;
    for (KernelParam& p : k.params) p.name = p.c_type = "";
    name_parameters(k);
    std::vector<std::string> named;
    for (const KernelParam& p : k.params) named.push_back(p.c_type + " " + p.name);
    EXPECT_EQ(named, (std::vector<std::string>{
                         "float* __restrict__ dst", "const float* __restrict__ src",
                         "const long long size_0_1", "const long long size_1",
                         "const long long dst_stride_0", "const long long src_stride_0",
                         "const float size_0"}));
    // The printer names the locals around them and keeps the parameters' names.
    EXPECT_EQ(k.names.find(size.get()), "size_0");
    k.config.target = Target::CPU;
    name_parameters(k);
    EXPECT_EQ(k.params.back().c_type, "const float");
    EXPECT_EQ(k.params[2].c_type, "const int64_t") << "the CPU target's spelling";
}

TEST(NameParameters, NamesAreUniquePerScopeAsInC) {
    CNames names;
    int outer = 0, first = 0, second = 0, later = 0;
    EXPECT_EQ(names.name_of(&outer, "k"), "k");
    const std::size_t scope = names.mark();
    EXPECT_EQ(names.name_of(&first, "i"), "i");
    EXPECT_EQ(names.name_of(&second, "k"), "k_1") << "the enclosing k is in scope";
    names.release(scope);
    EXPECT_EQ(names.find(&first), "") << "gone with its scope";
    EXPECT_EQ(names.name_of(&later, "i"), "i") << "a sibling scope reuses the name";
    EXPECT_EQ(names.name_of(&outer, "k"), "k") << "the enclosing name stays";
    EXPECT_EQ(names.unique("for"), "for_") << "keywords still get a trailing _";
}

TEST(Verify, RejectsUnloweredNodesAndUndeclaredVariables) {
    auto f = field("f: float64[1D]");
    Stmt unlowered = BlockNode::make({AssignNode::make(f.center(), f.center())});
    LOOM_EXPECT_ERROR(verify_lowered(unlowered, {}), InternalError,
                      {"Assign statement", "lower_iteration_space"});
    Expr v = VarNode::make(ScalarType::Int64, "ghost", VarRole::Counter, nullptr, 0);
    Stmt undeclared = BufferStoreNode::make(test::global_of(f.ptr()), v, ConstNode::make(ScalarType::Float64, 1.0));
    LOOM_EXPECT_ERROR(verify_lowered(undeclared, {}), InternalError, {"'ghost'", "before it is declared"});
    Stmt twice = BlockNode::make({DeclareNode::make(v, i64(0)), DeclareNode::make(v, i64(1))});
    LOOM_EXPECT_ERROR(verify_lowered(twice, {}), InternalError, {"'ghost'", "declared twice"});
}

TEST(Verify, LoopsAndGuardsAreScopesAsInC) {
    auto f = field("f: float64[1D]");
    Expr i = VarNode::make(ScalarType::Int64, "i", VarRole::LoopIndex);
    Expr t = VarNode::make(ScalarType::Int64, "t", VarRole::CseTemp);
    auto store = [&](Expr at) { return BufferStoreNode::make(test::global_of(f.ptr()), at, ConstNode::make(ScalarType::Float64, 1.0)); };
    auto loop = [&](Stmt body) { return ForNode::make(i, i64(0), i64(4), i64(1), body, -1); };
    // One loop variable in two sibling loops, and a temporary declared in each: fine.
    Stmt siblings = BlockNode::make({loop(BlockNode::make({DeclareNode::make(t, i), store(t)})),
                                     loop(BlockNode::make({DeclareNode::make(t, i), store(t)}))});
    EXPECT_NO_THROW(verify_lowered(siblings, {}));
    // Used after its loop, or after the guard that declared it: not in scope.
    LOOM_EXPECT_ERROR(verify_lowered(BlockNode::make({loop(store(i)), store(i)}), {}), InternalError,
                      {"'i'", "before it is declared"});
    Stmt guarded = IfThenNode::make(ConstNode::make_bool(true), DeclareNode::make(t, i64(1)));
    LOOM_EXPECT_ERROR(verify_lowered(BlockNode::make({guarded, store(t)}), {}), InternalError,
                      {"'t'", "before it is declared"});
    // A nested loop over the same variable shadows nothing: it is declared twice.
    LOOM_EXPECT_ERROR(verify_lowered(loop(loop(store(i))), {}), InternalError, {"'i'", "declared twice"});
}

TEST(Verify, BlocksAndThreadsKeepTheirInvariants) {
    auto f = field("f: float64[1D]");
    const ScalarType I = ScalarType::Int32;
    auto i32c = [](int v) { return ConstNode::make_int(ScalarType::Int32, v); };
    Expr b = VarNode::make(I, "block", VarRole::Counter, nullptr, -1);
    Expr t = VarNode::make(I, "thread", VarRole::Counter, nullptr, -1);
    Stmt store = BufferStoreNode::make(test::global_of(f.ptr()), CastNode::make(ScalarType::Int64, b), ConstNode::make(ScalarType::Float64, 1.0));
    auto in_block = [&](Stmt body) { return ForNode::make(b, i32c(0), i32c(8), i32c(1), body, 0, ForKind::GpuBlock, 0); };
    auto on_threads = [&](int n, Stmt body) {
        return ForNode::make(t, i32c(0), i32c(n), i32c(1), body, -1, ForKind::GpuThread, 0);
    };
    EXPECT_NO_THROW(verify_lowered(in_block(on_threads(1, store)), {}));
    // Outside the thread loops every thread of the block runs a statement: no stores there.
    LOOM_EXPECT_ERROR(verify_lowered(in_block(store), {}), InternalError,
                      {"a store to f in a block but in no thread or cooperative loop"});
    // A barrier that some threads never reach.
    LOOM_EXPECT_ERROR(verify_lowered(in_block(on_threads(4, BarrierNode::make())), {}), InternalError,
                      {"a barrier inside a thread loop or a guard"});
    LOOM_EXPECT_ERROR(verify_lowered(in_block(IfThenNode::make(ConstNode::make_bool(true), BarrierNode::make())), {}),
                      InternalError, {"a barrier inside a thread loop or a guard"});
    // Thread loops run from 0 in steps of 1 over a constant count.
    Stmt shifted = ForNode::make(t, i32c(1), i32c(4), i32c(1), store, -1, ForKind::GpuThread, 0);
    LOOM_EXPECT_ERROR(verify_lowered(in_block(shifted), {}), InternalError,
                      {"the gpu thread loop over 'thread' is not over [0, n) in steps of 1"});
}

TEST(Verify, AcceptsTheLoweredPipelineOutput) {
    auto [src, dst] = fields<2>("src, dst: float64[2D]");
    Kernel k = create_kernel(Assignment(dst.center(), src[{1, 0}] + src[{-1, 0}]));
    EXPECT_NO_THROW(verify_lowered(k.ir(), k.parameters()));
}

TEST(PassLog, PrintsChangedIrAndUnchangedPasses) {
    std::ostringstream out;
    PassLog log("k", out);
    Stmt a = CommentNode::make("one");
    Stmt b = CommentNode::make("two");
    log.start();
    log.record("first", a, b);
    log.start();
    log.record("second", b, b);
    std::string text = out.str();
    EXPECT_NE(text.find("after first"), std::string::npos) << text;
    EXPECT_NE(text.find("# two"), std::string::npos) << text;
    EXPECT_NE(text.find("second: unchanged"), std::string::npos) << text;
}

} // namespace
