// Lanes (Schedule::vector_width), pass by pass: map_to_gpu's grid loops, then vectorize_lanes,
// the IR printed before and after; which accesses go into lanes and which stay scalar; random
// stencils with lanes compile for sm_90. The GPU runs them against the CPU in
// tests/gpu/test_gpu_vs_cpu.cpp (RandomStencilsWithLanesAgreeAcrossTargets), the CPU target
// having no lanes.
#include "compiler/passes/choose_schedule.hpp"
#include "compiler/passes/gpu_mapping.hpp"
#include "compiler/passes/stream_cells.hpp"
#include "compiler/passes/vectorize_lanes.hpp"
#include "tests/support/lowered_nest.hpp"
#include "tests/support/nvrtc_check.hpp"
#include "tests/support/random_stencil.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

namespace loom {
namespace {

using namespace loom::ir;
using test::lower_nest;

/// The kernel's loops bound to the grid, as map_to_gpu leaves them for vectorize_lanes.
GpuMapped mapped(const test::LoweredNest& l, const Schedule& request) { return test::map_nest_to_gpu(l, request); }

TEST(VectorizeLanes, PointwiseAndRowReadsPassByPass) {
    auto [f, g, h] = fields<3>("f, g, h: float32[2D]");
    const Schedule lanes4{.cells_per_thread = 1, .vector_width = 4};
    auto l = lower_nest({{f.center(), 2.0 * g.center() + h[{1, 0}] - h[{0, 1}], "f[0, 0] = ...", 1}},
                        {.name = "lanes", .index_type = ScalarType::Int32}, lanes4);
    // map_to_gpu: y (axis 1, the fastest in memory) on grid dimension x, a cell per thread.
    GpuMapped m = mapped(l, lanes4);
    EXPECT_EQ(to_string(m.body), R"(for x in [1, size_0 - 1) step 1:  # axis 0, gpu grid.y
  for y in [1, size_1 - 1) step 1:  # axis 1, gpu grid.x
    # f[0, 0] = ...
    f[x, y] = 2.0f * g[x, y] + h[x + 1, y] - h[x, y + 1]
)");
    // vectorize_lanes: 4 cells per thread along y, in groups from multiples of 4. g and h at
    // x + 1 read 4 consecutive elements: a vector each; h's row at x reads y + 1 too, so its
    // vector comes with the element after the last lane; f's 4 elements are stored at once
    // after the lanes. Partial groups (the first, which starts below 1, and the last) take the
    // same lanes, in one of two copies of the statements: where the group's elements lie
    // within the cells' reach (y_rows_whole; the first group too) every row is a vector, else
    // (the last group where size_1 is no multiple of 4) element by element where the cells
    // read them (zero elsewhere); in both a row's neighbours load one by one, guarded, and a
    // partial group's stores go lane by lane where the cell lies in the range.
    EXPECT_EQ(to_string(vectorize_lanes(m.body, 4, {{{1, 1}, {1, 1}}, {}})), R"(for x in [1, size_0 - 1) step 1:  # axis 0, gpu grid.y
  for y_lanes in [0, size_1 - 1) step 4:  # axis 1, gpu grid.x
    let y_whole: bool = y_lanes >= 1 && y_lanes + 4 <= size_1 - 1
    let y_rows_whole: bool = y_lanes + 4 <= size_1
    if y_rows_whole:
      alloc float32 g_lanes[4] (local):
        g_lanes[0:4] = lanes of g[x, y_lanes]
        alloc float32 h_lanes[4] (local):
          h_lanes[0:4] = lanes of h[x + 1, y_lanes]
          alloc float32 h_lanes_1[5] (local):
            h_lanes_1[0:4] = lanes of h[x, y_lanes]
            h_lanes_1[4] = 0.0f
            if 1 < size_1 - 1 && (y_lanes + 4 >= 1 && y_lanes + 4 < size_1):
              h_lanes_1[4] = h[x, y_lanes + 4]
            alloc float32 f_lanes[4] (local):
              for lane in [0, 4) step 1:  # axis -1, unrolled
                # f[0, 0] = ...
                f_lanes[lane] = 2.0f * g_lanes[lane] + h_lanes[lane] - h_lanes_1[lane + 1]
              if y_whole:
                lanes of f[x, y_lanes] = f_lanes[0:4]
              if !y_whole:
                for lane in [0, 4) step 1:  # axis -1, unrolled
                  if y_lanes + lane >= 1 && y_lanes + lane < size_1 - 1:
                    f[x, y_lanes + lane] = f_lanes[lane]
    if !y_rows_whole:
      alloc float32 g_lanes[4] (local):
        for k in [0, 4) step 1:  # axis -1, unrolled
          g_lanes[k] = 0.0f
          if 1 < size_1 - 1 && (y_lanes + k >= 1 && y_lanes + k < size_1 - 1):
            g_lanes[k] = g[x, y_lanes + k]
        alloc float32 h_lanes[4] (local):
          for k in [0, 4) step 1:  # axis -1, unrolled
            h_lanes[k] = 0.0f
            if 1 < size_1 - 1 && (y_lanes + k >= 1 && y_lanes + k < size_1 - 1):
              h_lanes[k] = h[x + 1, y_lanes + k]
          alloc float32 h_lanes_1[5] (local):
            for k in [0, 4) step 1:  # axis -1, unrolled
              h_lanes_1[k] = 0.0f
              if 1 < size_1 - 1 && (y_lanes + k >= 1 && y_lanes + k < size_1):
                h_lanes_1[k] = h[x, y_lanes + k]
            h_lanes_1[4] = 0.0f
            if 1 < size_1 - 1 && (y_lanes + 4 >= 1 && y_lanes + 4 < size_1):
              h_lanes_1[4] = h[x, y_lanes + 4]
            alloc float32 f_lanes[4] (local):
              for lane in [0, 4) step 1:  # axis -1, unrolled
                # f[0, 0] = ...
                f_lanes[lane] = 2.0f * g_lanes[lane] + h_lanes[lane] - h_lanes_1[lane + 1]
              for lane in [0, 4) step 1:  # axis -1, unrolled
                if y_lanes + lane >= 1 && y_lanes + lane < size_1 - 1:
                  f[x, y_lanes + lane] = f_lanes[lane]
)");
}

TEST(VectorizeLanes, StreamedGroupsTakeLanesBranchByBranch) {
    // stream_cells first: 4 cells along x as one group, its shared elements in locals; then the
    // lanes: the whole group's branch loads each row once as lanes (the centre rows with their
    // neighbours along y; a partial group along y element by element), the last group along x
    // runs lane by lane (its cells store under their own guards).
    auto [f, g] = fields<2>("f, g: float32[2D]");
    const Schedule s{.cells_per_thread = 4, .stream_cells = true, .vector_width = 4};
    auto l = lower_nest({{f.center(), g[{1, 0}] + g[{-1, 0}] + g[{0, 1}] + g[{0, -1}], "f[0, 0] = ...", 1}},
                        {.name = "star", .index_type = ScalarType::Int32}, s);
    const std::string text = to_string(vectorize_lanes(stream_cells(mapped(l, s).body, 0.0), 4, {{{1, 1}, {1, 1}}, {}}));
    auto has = [&](const std::string& piece) { EXPECT_NE(text.find(piece), std::string::npos) << piece << "\n" << text; };
    has("if x_cells + 4 <= size_0 - 1:");
    has("let y_whole: bool = y_lanes >= 1 && y_lanes + 4 <= size_1 - 1");
    has("if 1 < size_1 - 1 && (y_lanes + k - 1 >= 0 && y_lanes + k - 1 < size_1):");
    has("[1:5] = lanes of g[x_cells, y_lanes]"); // row x: its neighbours y - 1 and y + 4 too
    // Its neighbours one by one, guarded whatever the group (predicated loads, no branch).
    auto guarded = [&](const std::string& guard, const std::string& load) {
        const std::size_t at = text.find(load);
        ASSERT_NE(at, std::string::npos) << load << "\n" << text;
        const std::size_t line = text.rfind('\n', text.rfind('\n', at) - 1);
        EXPECT_NE(text.substr(line, at - line).find(guard), std::string::npos) << load << "\n" << text;
    };
    guarded("if 1 < size_1 - 1 && (y_lanes - 1 >= 0 && y_lanes - 1 < size_1):", "[0] = g[x_cells, y_lanes - 1]");
    guarded("if 1 < size_1 - 1 && (y_lanes + 4 >= 0 && y_lanes + 4 < size_1):", "[5] = g[x_cells, y_lanes + 4]");
    has("let y_rows_whole: bool = y_lanes + 4 <= size_1"); // every group's rows are vectors
    has("lanes of g[x_cells - 1, y_lanes]");             // the rows only the group's ends read
    has("lanes of g[x_cells + 4, y_lanes]");
    has("lanes of f[x_cells + 3, y_lanes] = f_lanes_3[0:4]");
    has("if !(x_cells + 4 <= size_0 - 1):");
    EXPECT_EQ(text.find("lanes of g[x, "), std::string::npos) << "the last group runs cell by cell\n" << text;
}

TEST(VectorizeLanes, AWideGroupRolls) {
    // A 27-point box's group of 8 cells along z reads 30 rows of lanes. Written plane by plane,
    // it rolls plane by plane: each plane's rows load once, every cell that reads the plane
    // continues its sum there (`v_lanes_<c>_sum`, a float per lane), and a cell is stored
    // after its last plane (cell 0 before plane z + 2 loads, cell 1 before z + 3).
    auto [u, v] = fields<2>("u, v: float32[3D]");
    Expr sum;
    for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy)
            for (int dx = -1; dx <= 1; ++dx) {
                Expr t = float(2 + dx + 3 * dy + 9 * dz) * u[{dz, dy, dx}];
                sum = sum.defined() ? sum + t : t;
            }
    Kernel k = create_kernel({Assignment(v.center(), sum)}, {.name = "box27", .index_type = ScalarType::Int32});
    const std::string src = k.source();
    ASSERT_EQ(k.schedule().vector_width, 4) << src;
    auto at = [&](const std::string& piece) {
        const std::size_t p = src.find(piece);
        EXPECT_NE(p, std::string::npos) << piece << "\n" << src;
        return p;
    };
    const std::size_t first_lanes = at("for (int lane = 0; lane < 4; ++lane)");
    const std::size_t plane_below = at("&u[u_stride_0 * (x_cells - 1) + u_stride_1 * (y + 1)");
    const std::size_t plane_0 = at("&u[u_stride_0 * x_cells + u_stride_1 * (y - 1)");
    const std::size_t plane_2 = at("&u[u_stride_0 * (x_cells + 2) + u_stride_1 * (y - 1)");
    const std::size_t plane_5 = at("&u[u_stride_0 * (x_cells + 4) + u_stride_1 * (y - 1)");
    const std::size_t store_0 = at("loom::store_lanes(&v[v_stride_0 * x_cells +");
    const std::size_t store_1 = at("loom::store_lanes(&v[v_stride_0 * (x_cells + 1) +");
    const std::size_t store_2 = at("loom::store_lanes(&v[v_stride_0 * (x_cells + 2) +");
    EXPECT_LT(plane_below, first_lanes); // cell 0's sum starts on plane z - 1
    EXPECT_LT(first_lanes, plane_0);
    EXPECT_LT(plane_0, store_0);
    EXPECT_LT(store_0, plane_2);
    EXPECT_LT(plane_2, store_1);
    EXPECT_LT(store_2, plane_5);
    EXPECT_EQ(src.find("const float u_r"), std::string::npos) << src;
    at("float v_lanes_sum[4];");
    at("v_lanes_1_sum[lane] = v_lanes_1_sum[lane] - 2.0f * u_lanes");
    EXPECT_EQ(k.schedule().cells_per_thread, 8);
    test::expect_compiles_for_sm90(k);
    // A 13-point star visits planes z, z + 1, z - 1, ...: no sum in plane order keeps its
    // order of additions, so each cell rolls on its own (its rows just before it), no sums.
    Expr star13;
    for (int r = -2; r <= 2; ++r)
        for (int axis = 0; axis < 3; ++axis) {
            if (r == 0 && axis > 0) continue;
            std::vector<int> o{0, 0, 0};
            o[std::size_t(axis)] = r == 0 ? 0 : (r > 0 ? 3 - r : -3 - r); // 0, +2, +1, -1, -2
            Expr t = float(3 + r + 5 * axis) * u[o];
            star13 = star13.defined() ? star13 + t : t;
        }
    Kernel rolled = create_kernel({Assignment(v.center(), star13)}, {.name = "star13", .index_type = ScalarType::Int32});
    const std::string by_cell = rolled.source();
    ASSERT_EQ(rolled.schedule().vector_width, 4) << by_cell;
    EXPECT_EQ(by_cell.find("_sum["), std::string::npos) << by_cell;
    const std::size_t cell_1 = by_cell.find("loom::store_lanes(&v[v_stride_0 * (x_cells + 1) +");
    ASSERT_NE(cell_1, std::string::npos) << by_cell;
    ASSERT_NE(by_cell.find("&u[u_stride_0 * (x_cells + 3) + u_stride_1 * y"), std::string::npos) << by_cell;
    EXPECT_LT(by_cell.find("loom::store_lanes(&v[v_stride_0 * x_cells +"), cell_1) << by_cell;
    EXPECT_GT(by_cell.find("&u[u_stride_0 * (x_cells + 3) + u_stride_1 * y"), by_cell.find("loom::store_lanes(&v[v_stride_0 * x_cells +")) << by_cell;
    test::expect_compiles_for_sm90(rolled);
    // Two outputs of one cell share the box (a common subexpression): each cell's two stores
    // run as one, and the group still rolls cell by cell.
    auto w = field("w: float32[3D]");
    Kernel two = create_kernel({Assignment(v.center(), sum), Assignment(w.center(), 2.0f * sum)},
                               {.name = "box27_twice", .index_type = ScalarType::Int32});
    const std::string both = two.source();
    ASSERT_EQ(two.schedule().vector_width, 4) << both;
    const std::size_t w_0 = both.find("loom::store_lanes(&w[w_stride_0 * x_cells +");
    const std::size_t plane_2_again = both.find("&u[u_stride_0 * (x_cells + 2) + u_stride_1 * (y - 1)");
    ASSERT_NE(w_0, std::string::npos) << both;
    ASSERT_NE(plane_2_again, std::string::npos) << both;
    EXPECT_LT(w_0, plane_2_again) << both;
    EXPECT_EQ(both.find("_sum["), std::string::npos) << "two stores a run: cell by cell\n" << both;
    test::expect_compiles_for_sm90(two);
    // A shared element of a field without lanes (int64, read at z and z + 1 by neighbouring
    // cells: one stream_cells register) is read in place by each run, so the group still rolls
    // (lanes of 4 asked for; 14 rows a group, 7 a cell).
    auto flag = field("flag: int64[3D]");
    Expr seven = u[{-1, 0, 0}] + u[{1, 0, 0}] + u[{0, -1, 0}] + u[{0, 1, 0}] + u[{0, 0, -1}] + u[{0, 0, 1}] +
                 cast(ScalarType::Float32, flag[{0, 0, 0}] + flag[{1, 0, 0}]);
    Kernel flagged = create_kernel({Assignment(v.center(), seven)}, {.name = "flagged", .index_type = ScalarType::Int32},
                                   {.cells_per_thread = 4, .stream_cells = true, .vector_width = 4});
    const std::string f_src = flagged.source();
    EXPECT_EQ(flagged.schedule().vector_width, 4) << f_src;
    const std::size_t f_0 = f_src.find("loom::store_lanes(&v[v_stride_0 * x_cells +");
    const std::size_t f_plane_2 = f_src.find("&u[u_stride_0 * (x_cells + 2) + u_stride_1 * y");
    ASSERT_NE(f_0, std::string::npos) << f_src;
    ASSERT_NE(f_plane_2, std::string::npos) << f_src;
    EXPECT_LT(f_0, f_plane_2) << f_src;
    test::expect_compiles_for_sm90(flagged);
    // A group within kMaxStreamedLaneRows (a 2D 5-point star: 6 rows) loads its rows at once:
    // one loop over the lanes for the whole group.
    auto [f, g] = fields<2>("f, g: float32[2D]");
    Kernel star = create_kernel({Assignment(f.center(), g[{1, 0}] + g[{-1, 0}] + g[{0, 1}] + g[{0, -1}])},
                                {.name = "star"});
    const std::string whole = star.source();
    const std::size_t first = whole.find("for (int lane = 0; lane < 4; ++lane)");
    ASSERT_NE(first, std::string::npos) << whole;
    const std::size_t store = whole.find("loom::store_lanes");
    ASSERT_NE(store, std::string::npos) << whole;
    EXPECT_EQ(whole.substr(first, store - first).find("load_lanes"), std::string::npos) << whole;
}

TEST(VectorizeLanes, RowsAreVectorsWhereTheyLieInsideTheArray) {
    // Ghost layers of 2 along y, where the kernel reaches 1: the first group of a row (y 0 to 3,
    // 0 and 1 ghost cells) still loads its rows as vectors, since they lie inside the array.
    auto [u, f] = fields<2>("u, f: float32[2D]");
    Kernel ghosts = create_kernel({Assignment(f.center(), u[{0, 1}] + u[{0, -1}] + u[{2, 0}] + u[{-2, 0}])},
                                  {.name = "ghosts"}, {.vector_width = 4});
    const std::string g = ghosts.source();
    EXPECT_NE(g.find("const bool y_whole = y_lanes >= 2 && y_lanes + 4 <= size_1 - 2;"), std::string::npos) << g;
    EXPECT_NE(g.find("const bool y_rows_whole = y_lanes + 4 <= size_1;"), std::string::npos) << g;
    loom::test::expect_compiles_for_sm90(ghosts);
    // From a parameter: the range [p, size_1 - 1) may be empty and the group below p still
    // runs, where the range widened by the reach need not lie inside the array (the launch
    // checks no bounds of an empty range): the test is the array's extent, and since p may be
    // negative, y_lanes >= 0 too.
    Kernel sliced = create_kernel({Assignment(f.center(), u[{0, 1}] + u[{0, -1}])},
                                  {.name = "sliced", .iteration_slice = Slice{all(), range(param<std::int64_t>("p"), -1)}},
                                  {.vector_width = 4});
    const std::string sl = sliced.source();
    EXPECT_NE(sl.find("const bool y_rows_whole = y_lanes >= 0 && y_lanes + 4 <= size_1;"), std::string::npos) << sl;
    loom::test::expect_compiles_for_sm90(sliced);
}

TEST(VectorizeLanes, NeighboursComeOnlyFromWithinTheKernelsReach) {
    // u.at(x, y + 1) under a guard reaches past the ghost layers (0 along y here): a row's
    // neighbours load whatever the cell's conditions, so that read stays a scalar one under its
    // guard, and u's row of lanes holds the lanes alone.
    using namespace loom::counters;
    auto [u, f] = fields<2>("u, f: float32[2D]");
    Kernel k = create_kernel({Assignment(f.center(), u.center() + select(y + 1 < 100, u.at({x, y + 1}), 0.0f))},
                             {.name = "guarded", .index_type = ScalarType::Int64}, {.vector_width = 4});
    const std::string src = k.source();
    EXPECT_EQ(k.schedule().vector_width, 4) << src;
    EXPECT_NE(src.find("float u_lanes[4];"), std::string::npos) << src;
    EXPECT_EQ(src.find("u_lanes + 1"), std::string::npos) << src;
    loom::test::expect_compiles_for_sm90(k);
}

TEST(VectorizeLanes, PartialGroupsShareTheLanesUnlessACellTouchesMemoryOnItsOwn) {
    // float16 lanes of 8 along a row of ghost layers: the first and last group of a row take
    // the lanes too, rows element by element from zeros (a 16-bit zero is rounded from 0.0f),
    // stores lane by lane; NVRTC compiles it for sm_90.
    auto [h, o] = fields<2>("h, o: float16[2D]");
    Kernel half = create_kernel({Assignment(o.center(), h[{0, 1}] + h[{0, -1}] - h[{1, 0}])}, {.name = "edges"},
                                {.vector_width = 8});
    const std::string src = half.source();
    EXPECT_EQ(half.schedule().vector_width, 8) << src;
    EXPECT_NE(src.find("const bool y_whole = y_lanes >= 1 && y_lanes + 8 <= size_1 - 1;"), std::string::npos) << src;
    EXPECT_NE(src.find("h_lanes[k] = loom::to_half(0.0f);"), std::string::npos) << src;
    EXPECT_NE(src.find("if (y_lanes + lane >= 1 && y_lanes + lane < size_1 - 1) {"), std::string::npos) << src;
    loom::test::expect_compiles_for_sm90(half);
    // A cell that reads a field outside its lanes (a guarded gather) would read it for the
    // partial group's outside lanes too: those groups run cell by cell, as before.
    using namespace loom::counters;
    auto [u, f] = fields<2>("u, f: float32[2D]");
    Kernel gather = create_kernel({Assignment(f.center(), u.center() + select(y + 1 < 100, u.at({x, y + 1}), 0.0f))},
                                  {.name = "gather"}, {.vector_width = 4});
    const std::string g = gather.source();
    EXPECT_EQ(g.find("_whole"), std::string::npos) << g;
    EXPECT_NE(g.find("if (y < size_1) {"), std::string::npos) << g;
    // A read under a guard that may lie past the array's end along another axis (no ghost
    // layers along x; row x + 1 of the last row is not there) is no row of lanes: rows load
    // whatever the guard says.
    Kernel past = create_kernel({Assignment(f.center(), u.center() + select(x + 1 < 100, u.at({x + 1, y}), 0.0f))},
                                {.name = "past"}, {.vector_width = 4});
    const std::string p = past.source();
    EXPECT_NE(p.find("float u_lanes[4];"), std::string::npos) << p;
    EXPECT_EQ(p.find("u_lanes_1"), std::string::npos) << p;
    loom::test::expect_compiles_for_sm90(past);
    // Outside lanes compute from zeros or values outside the range: an integer division there
    // could divide by zero, so a kernel with one keeps its partial groups cell by cell.
    auto [a, b, q] = fields<3>("a, b, q: int32[2D]");
    Kernel divide = create_kernel({Assignment(q.center(), a.center() / b.center())}, {.name = "divide"}, {.vector_width = 4});
    const std::string d = divide.source();
    EXPECT_NE(d.find("loom::load_lanes(b_lanes"), std::string::npos) << d;
    EXPECT_EQ(d.find("_whole"), std::string::npos) << d;
}

TEST(VectorizeLanes, WhatStaysScalar) {
    // t is written and then read by the cell: neither its store nor its read is put into lanes
    // (a deferred vector store would leave the read stale). A vector of 2 components laid out
    // component-fastest (AoS) is not contiguous along y. float64 lanes of 4 would be 32 bytes.
    auto [t, u, w] = fields<3>("t, u, w: float32[2D]");
    Field m = field("m(2): float32[2D]", Layout::AoS);
    Field d = field("d: float64[2D]");
    const Schedule lanes4{.cells_per_thread = 1, .vector_width = 4};
    auto l = lower_nest({{t.center(), 2.0 * u.center(), "", 1}, {w.center(), t.center() + m(1) + cast<float>(d.center()), "", 1}},
                        {.name = "scalar", .index_type = ScalarType::Int32}, lanes4);
    const std::string text = to_string(vectorize_lanes(mapped(l, lanes4).body, 4, {{{0, 0}, {0, 0}}, {}}));
    EXPECT_NE(text.find("u_lanes[0:4] = lanes of u[x, y_lanes]"), std::string::npos) << text;
    EXPECT_NE(text.find("lanes of w[x, y_lanes] = w_lanes[0:4]"), std::string::npos) << text;
    EXPECT_NE(text.find("t[x, y] = 2.0f * u_lanes[lane]"), std::string::npos) << text;
    EXPECT_EQ(text.find("t_lanes"), std::string::npos) << text;
    EXPECT_EQ(text.find("m_lanes"), std::string::npos) << text;
    EXPECT_EQ(text.find("d_lanes"), std::string::npos) << text;
    // Width 2: float64 fits (16 bytes).
    const std::string two = to_string(vectorize_lanes(mapped(l, {.cells_per_thread = 1, .vector_width = 2}).body, 2, {{{0, 0}, {0, 0}}, {}}));
    EXPECT_NE(two.find("d_lanes[0:2] = lanes of d[x, y_lanes]"), std::string::npos) << two;
}

TEST(VectorizeLanes, NothingToPutInLanesLeavesTheBody) {
    // Every read of the field is at a neighbour along y, the write is a component of an AoS
    // vector: nothing is contiguous at y, so the loops stay as they are.
    auto [s] = fields<1>("s: float32[2D]");
    Field m = field("m(2): float32[2D]", Layout::AoS);
    const Schedule lanes4{.cells_per_thread = 1, .vector_width = 4};
    auto l = lower_nest({{m(0), s[{0, 1}] + s[{0, -1}], "", 1}}, {.name = "none"}, lanes4);
    GpuMapped g = mapped(l, lanes4);
    EXPECT_TRUE(vectorize_lanes(g.body, 4, {{{1, 1}, {1, 1}}, {}}).same_as(g.body));
}

TEST(VectorizeLanes, RandomStencilsWithLanesCompileForSm90) {
    // What the GPU test runs, compiled here by NVRTC: layouts, slices, vector fields, 1D to 4D.
    using namespace loom::stencil_test;
    GeneratorOptions options;
    options.counter_bounds = false;
    int compiled = 0;
    for (std::uint64_t k = 0; k < 24; ++k) {
        const StencilCase c = generate_stencil(base_seed(20261121) + k, options);
        if (!c.laneable()) continue;
        Kernel kernel = c.laned().kernel(Target::CUDA);
        test::expect_compiles_for_sm90(kernel);
        compiled += kernel.source().find("loom::load_lanes") != std::string::npos ||
                    kernel.source().find("loom::store_lanes") != std::string::npos;
    }
    EXPECT_GT(compiled, 8) << "random stencils whose kernels use lanes";
}

} // namespace
} // namespace loom
