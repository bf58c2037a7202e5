// Error table rows: the iteration space (ghost layers and slices) and writes that would race.
#include "tests/error/error_rows.hpp"

#include <loom/loom.hpp>

#include <cstdint>

namespace loom::test {

using namespace loom::counters;

namespace {
/// f = g[1, 0] + g[-1, 0] in 2D with `cfg`.
void stencil(KernelConfig cfg) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    create_kernel(Assignment(f.center(), g[{1, 0}] + g[{-1, 0}]), cfg);
}
/// f = g in 2D over `s`.
void copy_over(Slice s, std::optional<ScalarType> index_type = std::nullopt) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    KernelConfig cfg;
    cfg.iteration_slice = std::move(s);
    cfg.index_type = index_type;
    create_kernel(Assignment(f.center(), g.center()), cfg);
}
KernelConfig ghost(GhostLayers g) {
    KernelConfig c;
    c.name = "blur";
    c.ghost_layers = std::move(g);
    return c;
}
} // namespace

std::vector<ErrorRow> space_rows() {
    const auto U = Expect::User;
    return {
        // ---- ghost layers ----
        {"ghost_layers_negative",
         [] { stencil(ghost(-1)); },
         U,
         {"kernel 'blur' has ghost_layers = -1", "must be >= 0"}},
        {"ghost_layers_for_too_few_axes",
         [] {
             stencil(ghost(GhostLayers{{1, 1}}));
         },
         U,
         {"gives ghost layers for 1 axes", "the kernel is 2D", "one (low, high) pair per axis"}},
        {"ghost_layers_negative_per_axis",
         [] {
             stencil(ghost(GhostLayers{{1, 1}, {-1, 0}}));
         },
         U,
         {"negative ghost-layer width", "(-1, 0) on axis 1", "must be >= 0"}},
        {"ghost_layers_too_few",
         [] { stencil(ghost(0)); },
         U,
         {"kernel 'blur'", "reads out of bounds", "g[-1, 0] reaches 1 cell(s) below along axis 0",
          "only 0 ghost layer(s)", "Set ghost_layers to at least 1",
          "leave ghost_layers automatic"}},
        {"ghost_layers_too_few_on_one_side",
         [] {
             stencil(ghost(GhostLayers{{1, 0}, {0, 0}}));
         },
         U,
         {"g[1, 0] reaches 1 cell(s) above along axis 0",
          "Raise the high ghost layers of axis 0 to at least 1"}},
        {"ghost_layers_cover_the_fixed_shape",
         [] {
             auto [f, g] = fields<2>("f, g: float64[8, 8]");
             create_kernel(Assignment(f.center(), g.center()), ghost(4));
         },
         U,
         {"kernel 'blur' has nothing to iterate", "fixed shape [8, 8] has 8 cells",
          "(4 low, 4 high)", "use fewer ghost layers"}},
        {"offset_write_without_ghost_layers",
         [] {
             auto [f, g] = fields<2>("f, g: float64[2D]");
             create_kernel(Assignment(f[{1, 0}], g.center()), ghost(0));
         },
         U,
         {"f[1, 0] reaches 1 cell(s) above along axis 0"}},
        // ---- slices ----
        {"slice_entry_count",
         [] { copy_over(Slice{all()}); },
         U,
         {"the iteration slice [:] with 1 entries", "the kernel is 2D",
          "one entry per spatial axis"}},
        {"slice_without_entries",
         [] { copy_over(Slice{}); },
         U,
         {"the iteration slice [] with 0 entries", "one entry per spatial axis"}},
        {"slice_zero_step",
         [] {
             copy_over(Slice{range(0, end, 0), all()});
         },
         U,
         {"step 0 on axis 0", "[::0, :]", "steps must be positive"}},
        {"slice_negative_step",
         [] {
             copy_over(Slice{all(), range(5, 1, -1)});
         },
         U,
         {"step -1 on axis 1", "[:, 5:1:-1]", "steps must be positive"}},
        {"slice_single_index_end",
         [] {
             copy_over(Slice{at(end), all()});
         },
         U,
         {"the slice [end, :]", "single index `end` on axis 0", "pick an index inside the axis"}},
        {"slice_bound_uses_its_own_counter",
         [] {
             auto [f, g] = fields<2>("f, g: float64[2D]");
             KernelConfig c;
             c.iteration_slice = Slice{all(), from(y)};
             create_kernel(Assignment(f.center(), g.center()), c, {.manual_launch_grid = true});
         },
         U,
         {"[:, y:]", "bound on axis 1 uses the counter of axis 1",
          "only use counters of earlier axes (0..0)"}},
        {"slice_counter_bound_needs_manual_grid",
         [] {
             copy_over(Slice{all(), from(x)});
         },
         U,
         {"the iteration slice [:, x:]", "depend on another counter",
          "manual_launch_grid = true in the Schedule (create_kernel's third argument)",
          "block_size", "num_blocks"}},
        {"slice_counter_bound_in_4d",
         [] {
             auto [f, g] = fields<2>("f, g: float64[4D]");
             KernelConfig c;
             c.iteration_slice = Slice{all(), from(x), all(), all()};
             create_kernel(Assignment(f.center(), g.center()), c, {.manual_launch_grid = true});
         },
         U,
         {"the slice [:, x:, :, :]", "depend on another counter in a 4D kernel",
          "supported up to 3D"}},
        {"slice_start_reads_below",
         [] {
             KernelConfig c;
             c.iteration_slice = Slice{range(0, -1), all()};
             stencil(c);
         },
         U,
         {"reads out of bounds", "starts axis 0 at 0", "g[-1, 0] reaches 1 cell(s) below",
          "start at 1 or later"}},
        {"slice_end_reads_above",
         [] {
             KernelConfig c;
             c.iteration_slice = Slice{range(1, end), all()};
             stencil(c);
         },
         U,
         {"reads out of bounds", "ends axis 0 at the end", "g[1, 0] reaches 1 cell(s) above",
          "end it at -1 or earlier"}},
        {"slice_stop_beyond_fixed_size",
         [] {
             auto [f, g] = fields<2>("f, g: float64[16, 16]");
             KernelConfig c;
             c.iteration_slice = Slice{range(1, 16), range(1, 15)};
             create_kernel(Assignment(f.center(), g[{-1, 0}] + g[{1, 0}]), c);
         },
         U,
         {"ends axis 0 at 16", "the fixed size is 16", "g[1, 0] reaches 1 cell(s) above"}},
        {"slice_index_outside_fixed_shape",
         [] {
             auto [f, g] = fields<2>("f, g: float64[8, 8]");
             create_kernel(Assignment(f.center(), g.center()),
                           {.iteration_slice = Slice{at(8), all()}});
         },
         U,
         {"start 8 on axis 0", "outside the fixed size 8", "0..7"}},
        {"slice_start_before_fixed_shape",
         [] {
             auto [f, g] = fields<2>("f, g: float64[8, 8]");
             create_kernel(Assignment(f.center(), g.center()),
                           {.iteration_slice = Slice{range(-10, end), all()}});
         },
         U,
         {"start -10 on axis 0", "outside the fixed size 8", "-8..-1"}},
        {"slice_and_ghost_layers",
         [] {
             KernelConfig c = ghost(1);
             c.iteration_slice = Slice{all(), all()};
             stencil(c);
         },
         U,
         {"sets both iteration_slice and ghost_layers", "set only one of them"}},
        {"slice_bound_reads_a_field",
         [] {
             copy_over(Slice{all(), from(Expr(field("n: int64[2D]").center()))});
         },
         U,
         {"a field access in a bound", "integers, scalar parameters"}},
        {"slice_float_bound",
         [] {
             copy_over(Slice{all(), from(param<double>("start"))});
         },
         U,
         {"a bound of type float64 on axis 1", "bounds must be integers"}},
        {"slice_start_int64_min",
         [] {
             copy_over(Slice{range(INT64_MIN, end), all()});
         },
         U,
         {"start -9223372036854775808 on axis 0", "more cells from the end than any array has",
          "use an index within the axis"}},
        {"slice_step_beyond_int32",
         [] {
             copy_over(Slice{range(1, end, 3000000000LL), all()}, ScalarType::Int32);
         },
         U,
         {"the slice [1::3000000000, :]", "step 3000000000 on axis 0",
          "does not fit index_type int32", "set index_type to int64"}},
        {"slice_start_beyond_int32",
         [] {
             copy_over(Slice{all(), from(std::int64_t(-3000000000LL))}, ScalarType::Int32);
         },
         U,
         {"start -3000000000 on axis 1", "does not fit index_type int32",
          "leave it unset and loom chooses"}},
        // ---- writes that would race ----
        {"in_place_stencil",
         [] {
             Field f = field("f: float64[2D]");
             create_kernel(Assignment(f.center(), (f[{1, 0}] + f[{-1, 0}]) * 0.5));
         },
         U,
         {"reads field f at offset(s) [-1, 0], [1, 0]", "writes it at [0, 0]", "in-place stencil",
          "second field and swap"}},
        {"field_written_twice",
         [] {
             auto [f, g] = fields<2>("f, g: float64[2D]");
             create_kernel(
                 {Assignment(f.center(), g.center()), Assignment(f.center(), g.center() * 2.0)});
         },
         U,
         {"writes f[0, 0] twice", "assignments 1 and 2", "combine the two"}},
        {"field_written_at_two_offsets",
         [] {
             auto [f, g] = fields<2>("f, g: float64[2D]");
             create_kernel({Assignment(f.center(), g.center()), Assignment(f[{1, 0}], g.center())});
         },
         U,
         {"writes field f at two offsets, [0, 0] and [1, 0]", "neighbouring cells run in parallel",
          "one offset only"}},
    };
}

} // namespace loom::test
