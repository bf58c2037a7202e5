// Error table rows: multi-stage kernels (loom::Stages): empty stages, races between stages, and
// what fusing with halos cannot do yet. All checked at create_kernel, on both targets.
#include "tests/error/error_rows.hpp"
#include "tests/support/cpu_config.hpp"

#include <loom/loom.hpp>

#include <array>

namespace loom::test {

namespace {
struct Grid2 {
    Field u, t, v;
};
Grid2 grid(const std::string& spec = "u, t, v: float64[2D]") {
    auto [u, t, v] = fields<3>(spec);
    return {u, t, v};
}
/// Stage 1 smooths u into t; stage 2 reads t at neighbouring cells into v: valid, so that only
/// the config or the schedule can be wrong.
Stages smooth_then_gradient(const Grid2& g) {
    return Stages({{Assignment(g.t.center(), g.u[{1, 0}] + g.u[{-1, 0}])},
                   {Assignment(g.v.center(), g.t[{0, 1}] - g.t[{0, -1}])}});
}
} // namespace

std::vector<ErrorRow> stage_rows() {
    const auto U = Expect::User;
    return {
        {"stages_none",
         [] { create_kernel(Stages(), {.name = "nothing"}); },
         U,
         {"kernel 'nothing' has no stages", "at least one AssignmentCollection"}},
        {"stages_an_empty_stage",
         [] {
             Grid2 g = grid();
             create_kernel(Stages({{Assignment(g.t.center(), g.u.center())}, AssignmentCollection()}),
                           {.name = "empty_stage"});
         },
         U,
         {"kernel 'empty_stage' has 2 stages, and stage 2 has no assignments",
          "leave the empty stage out"}},
        {"stages_later_stage_overwrites_what_an_earlier_one_reads",
         [] {
             Grid2 g = grid();
             create_kernel(Stages({{Assignment(g.t.center(), g.u[{1, 0}])}, {Assignment(g.u.center(), g.t.center())}}),
                           {.name = "war"});
         },
         U,
         {"kernel 'war' reads field u at [1, 0] in stage 1", "writes it in the later stage 2",
          "a neighbouring block may run stage 2 before this block's stage 1 reads the cell (a race)",
          "Write stage 2's result into another field"}},
        {"stages_one_field_written_by_two_stages",
         [] {
             Grid2 g = grid();
             create_kernel(Stages({{Assignment(g.t.center(), g.u.center())}, {Assignment(g.t.center(), g.v.center())}}),
                           {.name = "twice"});
         },
         U,
         {"kernel 'twice' writes field t in stage 1", "and again in stage 2",
          "each field is written by one stage"}},
        {"stages_in_place_stencil_within_a_stage",
         [] {
             Grid2 g = grid();
             create_kernel(Stages({{Assignment(g.t.center(), g.u.center())}, {Assignment(g.v.center(), g.v[{1, 0}])}}),
                           {.name = "in_place"});
         },
         U,
         {"reads field v at offset(s) [1, 0] and writes it at [0, 0]: an in-place stencil"}},
        {"stages_temporary_across_stages",
         [] {
             Grid2 g = grid();
             AssignmentCollection first;
             Expr s = first.subexpression("s", 2.0 * g.u.center());
             first.add(Assignment(g.t.center(), s));
             create_kernel(Stages({first, {Assignment(g.v.center(), s + g.t[{1, 0}])}}), {.name = "temp"});
         },
         U,
         {"kernel 'temp' reads the temporary 's' in stage 2", "but stage 1 defines it",
          "a temporary lives within its stage", "write the value into a field in stage 1"}},
        {"stages_write_at_an_offset",
         [] {
             Grid2 g = grid();
             create_kernel(Stages({{Assignment(g.t[{1, 0}], g.u.center())}, {Assignment(g.v.center(), g.t[{0, 1}])}}),
                           {.name = "shifted"});
         },
         U,
         {"kernel 'shifted' writes t[1, 0] in stage 1", "each stage writes at the cell itself",
          "write t.center() and shift the reads instead"}},
        {"stages_reduction_in_an_earlier_stage",
         [] {
             auto [x, s, y] = fields<3>("x(8), s, y: float32[1D]");
             IndexVar k("k", 8);
             create_kernel(Stages({{Assignment(s.center(), sum(k, x(k)))}, {Assignment(y.center(), s[{1}] - s[{-1}])}}),
                           {.name = "sum_stage"});
         },
         U,
         {"kernel 'sum_stage' uses a reduction (sum, max, min, mean) in stage 1",
          "which a later stage reads at neighbouring cells", "Move it into the last stage"}},
        {"stages_with_reduce_in_block",
         [] {
             Grid2 g = grid();
             create_kernel(smooth_then_gradient(g), {.name = "blocky"}, {.reduce_in_block = true});
         },
         U,
         {"kernel 'blocky' has Schedule::reduce_in_block = true and several stages",
          "stage 2 reads field t at [0, 1], which stage 1 writes",
          "set reduce_in_block to false, or split the stages into kernels of their own"}},
        {"stages_with_lanes",
         [] {
             Grid2 g = grid();
             create_kernel(smooth_then_gradient(g), {.name = "laned"}, {.vector_width = 4});
         },
         U,
         {"kernel 'laned' has Schedule::vector_width = 4 and several stages",
          "set vector_width to 1, or split the stages into kernels of their own"}},
        {"stages_with_a_manual_grid",
         [] {
             Grid2 g = grid();
             create_kernel(smooth_then_gradient(g), {.name = "manual"}, {.manual_launch_grid = true});
         },
         U,
         {"kernel 'manual' has manual_launch_grid = true and several stages",
          "so loom chooses the tiles and the grid"}},
        {"stages_in_4d",
         [] {
             Grid2 g = grid("u, t, v: float64[4D]");
             create_kernel(Stages({{Assignment(g.t.center(), g.u.center())},
                                   {Assignment(g.v.center(), g.t[{0, 0, 0, 1}])}}),
                           cpu("four"));
         },
         U,
         {"kernel 'four' has 4 spatial axes and several stages", "tiles cover at most three axes"}},
        {"stages_slice_with_a_step",
         [] {
             Grid2 g = grid();
             KernelConfig c{.name = "stepped"};
             c.iteration_slice = Slice{range(1, -1, 2), range(1, -1)};
             create_kernel(smooth_then_gradient(g), c);
         },
         U,
         {"kernel 'stepped' has the slice", "that steps by 2 on axis 0, and several stages",
          "steps must be 1"}},
        {"stages_tiles_beyond_the_budget",
         [] {
             Grid2 g = grid();
             create_kernel(smooth_then_gradient(g), {.name = "big"},
                           {.block = std::array<int, 3>{64, 4, 1}, .cells_per_thread = 32});
         },
         U,
         {"kernel 'big' has 2 stages, and the tiles its blocks compute the earlier stages into need",
          "float64 t_tile[128][66]", "(48 KB) of static shared memory", "fewer cells_per_thread"}},
    };
}

} // namespace loom::test
