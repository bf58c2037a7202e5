// The golden kernels, defined once: tests/golden/test_golden.cpp and test_golden_cpu.cpp diff
// their generated code against tests/golden/expected/<file>.cu and <file>.cpp, and the run tests
// (tests/unit/test_cpu_kernels.cpp, tests/gpu/test_kernels.cpp, ...) execute them. Each function
// builds the assignments, the config and the schedule of the CUDA golden; callers change them
// where they need another target, name or index type.
#pragma once

#include <loom/loom.hpp>

#include <array>
#include <cstdlib>
#include <string>

namespace loom::test::golden {

/// One golden kernel: its golden file (no extension), what it computes, its config and schedule.
struct GoldenKernel {
    std::string file;
    AssignmentCollection assignments;
    KernelConfig config;
    Schedule schedule = {};

    /// create_kernel with this config and schedule, for `target`.
    Kernel create(Target target = Target::CUDA) const {
        KernelConfig c = config;
        c.target = target;
        return create_kernel(assignments, c, schedule);
    }
};

/// The 3D stencil over all offsets in {-1, 0, 1}^3 whose |offset| sum is at most `max_l1`, with
/// coefficients 0.5, 0.625, 0.75, ... in loop order (the seven- and 27-point kernels).
inline Expr cube_stencil(const Field& src, int max_l1) {
    Expr sum;
    double coefficient = 0.5;
    for (int i = -1; i <= 1; ++i)
        for (int j = -1; j <= 1; ++j)
            for (int k = -1; k <= 1; ++k) {
                if (std::abs(i) + std::abs(j) + std::abs(k) > max_l1) continue;
                Expr term = coefficient * src[{i, j, k}];
                coefficient += 0.125;
                sum = sum.defined() ? sum + term : term;
            }
    return sum;
}

/// pystencils' guide: f = 2 * g on 3D float64 fields.
inline GoldenKernel seed_scale_3d_f64() {
    auto [f, g] = fields<2>("f, g: float64[3D]");
    return {"seed_scale_3d_f64", Assignment(f.center(), 2 * g.center()), {.name = "scale"}};
}

/// One Jacobi sweep on 2D float32 fields src -> dst.
inline GoldenKernel jacobi_2d_f32(Layout layout = Layout::C) {
    auto [src, dst] = fields<2>("src, dst: float32[2D]", layout);
    return {"jacobi_2d_f32",
            {Assignment(dst.center(),
                        0.25 * (src[{1, 0}] + src[{-1, 0}] + src[{0, 1}] + src[{0, -1}]))},
            {.name = "jacobi"}};
}

/// The Jacobi sweep with shared-memory tiles (Schedule::shared_tiles): blocks of 32 x 4
/// threads, 2 cells each along x, int32 indices.
inline GoldenKernel jacobi_tiled_2d_f32() {
    GoldenKernel g = jacobi_2d_f32();
    g.file = "jacobi_tiled_2d_f32";
    g.config.name = "jacobi_tiled";
    g.config.index_type = ScalarType::Int32;
    g.schedule.block = std::array<int, 3>{32, 4, 1};
    g.schedule.cells_per_thread = 2;
    g.schedule.shared_tiles = true;
    return g;
}

/// The Jacobi sweep with lanes (Schedule::vector_width 4) but cells that do not stream, int32
/// indices: each cell loads its rows above and below and its own row as float4 where aligned,
/// its own row with the neighbours before the first lane and after the last (the default,
/// jacobi_2d_f32, streams the cells: each row once for a thread's 4 cells).
inline GoldenKernel jacobi_lanes_2d_f32() {
    GoldenKernel g = jacobi_2d_f32();
    g.file = "jacobi_lanes_2d_f32";
    g.config.name = "jacobi_lanes";
    g.config.index_type = ScalarType::Int32;
    g.schedule.vector_width = 4;
    g.schedule.stream_cells = false;
    return g;
}

/// The seven-point cube_stencil on 3D float64 fields, int64 indices.
inline GoldenKernel seven_point_3d_f64(Layout layout = Layout::C) {
    auto [src, dst] = fields<2>("src, dst: float64[3D]", layout);
    return {"seven_point_3d_f64", Assignment(dst.center(), cube_stencil(src, 1)),
            {.name = "seven_point", .index_type = ScalarType::Int64}};
}

/// The 27-point cube_stencil on 3D float32 fields.
inline GoldenKernel twenty_seven_point_3d_f32() {
    auto [src, dst] = fields<2>("src, dst: float32[3D]");
    return {"twenty_seven_point_3d_f32", Assignment(dst.center(), cube_stencil(src, 3)),
            {.name = "twenty_seven_point"}};
}

/// The seed's triangle [:, x:] (axis 1 starts at the counter of axis 0), with a manual grid.
inline GoldenKernel triangle_slice() {
    using namespace loom::counters;
    auto f = field("f: float64[2D]");
    return {"triangle_slice", Assignment(f(0), 1),
            {.name = "triangle", .iteration_slice = Slice{all(), from(x)}},
            {.manual_launch_grid = true}};
}

/// Momentum m = rho * u of a 2-vector velocity: rho C, u SoA (fzyx), m AoS (zyxf), float64.
inline GoldenKernel vector_momentum() {
    auto rho = field("rho: float64[2D]");
    auto u = field("u(2): float64[2D]", Layout::SoA);
    auto m = field("m(2): float64[2D]", Layout::AoS);
    return {"vector_momentum", {Assignment(m.vec(), rho.center() * u.vec())}, {.name = "momentum"}};
}

/// Explicit diffusion with a named Laplacian and the float scalar parameters alpha and dt.
inline GoldenKernel diffusion_params() {
    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    Expr alpha = param<float>("alpha"), dt = param<float>("dt");
    AssignmentCollection ac;
    Expr lap = ac.subexpression(
        "lap", src[{1, 0}] + src[{-1, 0}] + src[{0, 1}] + src[{0, -1}] - 4 * src.center());
    ac.add(Assignment(dst.center(), src.center() + alpha * dt * lap));
    return {"diffusion_params", ac, {.name = "diffusion"}};
}

/// speed = sqrt(u^2 + v^2) and dir = u / (speed + 1e-6): CSE computes the root once.
inline GoldenKernel cse_speed() {
    auto [u, v, speed, dir] = fields<4>("u, v, speed, dir: float32[2D]");
    Expr mag = sqrt(u.center() * u.center() + v.center() * v.center());
    return {"cse_speed",
            {Assignment(speed.center(), mag), Assignment(dir.center(), u.center() / (mag + 1e-6))},
            {.name = "speed"}};
}

/// b = a[0, 1] - a[0, -1] on fixed 64 x 128 float32 fields (sizes and strides baked in), int32
/// indices.
inline GoldenKernel fixed_shape_i32() {
    auto [a, b] = fields<2>("a, b: float32[64, 128]");
    return {"fixed_shape_i32", Assignment(b.center(), a[{0, 1}] - a[{0, -1}]),
            {.name = "fixed_diff", .index_type = ScalarType::Int32}};
}

/// y = max(x[-1], x[1]) on every other cell of 1D float64 fields (slice 1:-1:2).
inline GoldenKernel strided_1d() {
    auto [x, y] = fields<2>("x, y: float64[1D]");
    return {"strided_1d", Assignment(y.center(), max(x[{-1}], x[{1}])),
            {.name = "every_other", .iteration_slice = Slice{range(1, -1, 2)}}};
}

/// b = a * a on 4D float32 fields.
inline GoldenKernel four_d() {
    auto [a, b] = fields<2>("a, b: float32[4D]");
    return {"four_d", Assignment(b.center(), a.center() * a.center()), {.name = "square4d"}};
}

/// Counters in expressions, select, casts and math functions, with fast math (2D float32).
inline GoldenKernel math_select() {
    using namespace loom::counters;
    auto [f, g] = fields<2>("f, g: float32[2D]");
    Expr r = sqrt(cast<float>(x * x + y * y));
    Expr v = select(r < 10.0, exp(-r) * g.center(), tanh(g.center()));
    return {"math_select", Assignment(f.center(), v), {.name = "radial", .fast_math = true}};
}

/// Nearest-neighbour upsampling fine(c) = coarse(c) at (x / 4, y / 4), 3 components, float64:
/// the coarse grid is a buffer (read only with .at()) with its own variable shape.
inline GoldenKernel buffer_upsample() {
    using namespace loom::counters;
    Field coarse = field("coarse(3): float64[2D]");
    Field fine = field("fine(3): float64[2D]");
    AssignmentCollection ac;
    for (int c = 0; c < 3; ++c) ac.add(Assignment(fine(c), coarse.at({x / 4, y / 4})(c)));
    return {"buffer_upsample", ac, {.name = "upsample"}};
}

/// The mean and the largest magnitude of a 2D float32 field over its interior (a neighbour
/// read makes ghost layers), reductions across cells: blocks over chunks of the cells, the last
/// block combining their partials (grid scratch, loom::last_block).
inline GoldenKernel cell_statistics() {
    Field u = field("u: float32[2D]");
    Field stats = field("stats: float32[2]");
    return {"cell_statistics",
            {mean_over_cells(stats.at({0}), u.center()), max_over_cells(stats.at({1}), abs(u.center() - u[{0, 1}]))},
            {.name = "statistics"}};
}

/// A runtime-weight chain whose first layer is wider than 32 x 32 weights (lower_layers: an
/// outer product over a rolled input loop) and whose second is small (fully unrolled).
inline GoldenKernel nn_wide_runtime_f32() {
    nn::Chain mlp(nn::Dense::runtime("wide", 32, 33, nn::relu), nn::Dense::runtime("narrow", 2, 32));
    auto [x, y] = fields<2>("x(33), y(2): float32[1D]");
    AssignmentCollection ac;
    mlp.assign(ac, y.vec(), x.vec());
    return {"nn_wide_runtime_f32", ac, {.name = "wide_mlp"}};
}

} // namespace loom::test::golden
