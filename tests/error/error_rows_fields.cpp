// Error table rows: field specs, typed declarations, relative and absolute accesses, components.
#include "tests/error/error_rows.hpp"

#include <loom/loom.hpp>

#include <climits>

namespace loom::test {

using namespace loom::counters;

std::vector<ErrorRow> field_rows() {
    const auto U = Expect::User;
    return {
        // ---- pystencils-style specs: the column, the echoed spec and a caret ----
        {"spec_missing_colon",
         [] { fields("f, g   float64[2D]"); },
         U,
         {"invalid field spec at column 8", "expected ':' after the field names", "found 'f'",
          "\n  f, g   float64[2D]\n         ^"}},
        {"spec_unknown_type",
         [] { fields("f: flaot32[2D]"); },
         U,
         {"column 4", "unknown element type 'flaot32'", "float32", "float64"}},
        {"spec_five_dimensions", [] { fields("f: float64[5D]"); }, U, {"5D", "1D to 4D"}},
        {"spec_dimension_count_overflow",
         [] { fields("f: float64[4294967298D]"); },
         U,
         {"4294967298D: loom supports 1D to 4D fields", "^"}},
        {"spec_unclosed_shape",
         [] { fields("f: float64[2D"); },
         U,
         {"column 14", "expected ']' to close the shape", "found the end"}},
        {"spec_unclosed_index_shape",
         [] { fields("u(3: float64[2D]"); },
         U,
         {"expected ')' to close the index shape", "found ':'"}},
        {"spec_trailing_text",
         [] { fields("f: float64[2D] extra"); },
         U,
         {"column 16", "unexpected text after the shape", "found 'e'"}},
        {"spec_name_starts_with_digit",
         [] { fields("1f: float64[2D]"); },
         U,
         {"column 1", "expected a field name", "found '1'"}},
        {"spec_empty", [] { fields(""); }, U, {"expected a field name", "found the end"}},
        {"spec_missing_index_size",
         [] { fields("u(): float64[2D]"); },
         U,
         {"expected an index dimension size", "found ')'"}},
        {"spec_zero_index_size",
         [] { fields("u(3, 0): float64[2D]"); },
         U,
         {"column 6", "index dimension size 0 is out of range"}},
        {"spec_zero_fixed_size",
         [] { fields("f: float64[64, 0]"); },
         U,
         {"field f", "fixed sizes must be at least 1", "[64, 0]"}},
        {"spec_fixed_size_too_large",
         [] { fields("f: float64[1234567890123, 4]"); },
         U,
         {"column 12", "number too large"}},
        {"spec_bool_field",
         [] { fields("mask: bool[2D]"); },
         U,
         {"field mask", "bool fields are not supported", "int32"}},
        {"spec_reserved_name",
         [] { fields("f, float: float64[2D]"); },
         U,
         {"invalid field name 'float'", "reserved word", "'float_'"}},
        {"spec_double_underscore_name",
         [] { fields("__f: float64[2D]"); },
         U,
         {"invalid field name '__f'", "starting with '__'"}},
        {"spec_binds_too_many",
         [] { fields<2>("f: float64[2D]"); },
         U,
         {"\"f: float64[2D]\"", "declares 1 field(s)", "2 are bound"}},
        {"spec_single_field_from_two",
         [] { field("f, g: float64[2D]"); },
         U,
         {"declares 2 field(s)", "1 is bound"}},
        // ---- typed declarations ----
        {"typed_negative_fixed_size",
         [] {
             field<float>("f", std::vector<std::int64_t>{-5, 4});
         },
         U,
         {"field f", "fixed sizes must be at least 1", "[-5, 4]"}},
        {"typed_empty_fixed_shape",
         [] { field<float>("f", std::vector<std::int64_t>{}); },
         U,
         {"field f", "0 spatial dimensions requested", "1 to 4"}},
        {"typed_five_dimensions",
         [] { field<double>("f", 5); },
         U,
         {"field f", "5 spatial dimensions requested", "1 to 4"}},
        {"typed_dimensions_meant_as_size",
         [] { field<float>("h", 64); },
         U,
         {"64 spatial dimensions", "std::vector<std::int64_t>{64}"}},
        {"typed_zero_index_size",
         [] { field<float>("f", 2, FieldOptions{{0}}); },
         U,
         {"field f", "index dimension sizes must be at least 1", "found (0)"}},
        {"typed_four_index_dims",
         [] {
             field<float>("t", 3, FieldOptions{{2, 2, 2, 2}});
         },
         U,
         {"field t", "4 index dimensions requested", "up to 3"}},
        {"typed_name_with_space",
         [] { field<float>("my field", 2); },
         U,
         {"invalid field name 'my field'", "C identifiers"}},
        // ---- relative accesses ----
        {"offset_too_few_entries",
         [] { (void)field("f: float64[2D]")[{1}]; },
         U,
         {"field f has 2 spatial dimension(s)", "offset {1} has 1 entries", "e.g. f[{0, 0}]"}},
        {"offset_too_many_entries",
         [] {
             (void)field("f: float64[2D]")[{1, 0, -1}];
         },
         U,
         {"field f has 2 spatial dimension(s)", "offset {1, 0, -1} has 3 entries"}},
        {"offset_beyond_max_offset",
         [] {
             (void)field("f: float64[2D]")[{max_offset + 1, 0}];
         },
         U,
         {"field f", "1048577 on axis 0", "at most 1048576", "loom::max_offset", "f.at(...)"}},
        {"offset_int_min",
         [] {
             (void)field("s: float32[2D]")[{0, INT_MIN}];
         },
         U,
         {"field s", "axis 1", "-2147483648", "loom::max_offset"}},
        {"offset_beyond_fixed_shape",
         [] {
             auto [f, g] = fields<2>("f, g: float64[16, 16]");
             create_kernel(Assignment(f.center(), g[{20, 0}]));
         },
         U,
         {"has nothing to iterate", "fixed shape [16, 16] has 16 cells", "(20 low, 20 high)",
          "use fewer ghost layers", "larger fixed shape"}},
        // ---- components ----
        {"component_out_of_range",
         [] { (void)field("u(3): float64[2D]")(3); },
         U,
         {"field u", "component 3 is out of range", "size 3", "valid: 0..2"}},
        {"component_negative",
         [] { (void)field("u(3): float64[2D]")(-1); },
         U,
         {"field u", "component -1 is out of range"}},
        {"matrix_component_out_of_range",
         [] { (void)field("m(2, 3): float32[3D]")(1, 3); },
         U,
         {"field m", "component 3", "index dimension 1 of size 3", "valid: 0..2"}},
        {"vector_field_read_without_component",
         [] {
             (void)(Expr(field("u(3): float64[2D]")[{1, 0}]) * 2.0);
         },
         U,
         {"u[1, 0]", "vector field u", "index shape (3)", "without choosing a component",
          "u[{1, 0}](i)", "u.vec()"}},
        {"vector_field_written_without_component",
         [] { Assignment(field("u(3): float64[2D]").center(), 1.0); },
         U,
         {"vector field u", "without choosing a component", "u.vec()"}},
        {"too_many_components",
         [] { (void)field("u(3): float64[2D]")(1, 2); },
         U,
         {"field u has 1 index dimension(s)", "2 component index(es) were given", "u(i)"}},
        {"too_few_components",
         [] { (void)field("m(3, 3): float64[2D]")(1); },
         U,
         {"field m has 2 index dimension(s)", "index shape (3, 3)",
          "1 component index(es) were given"}},
        {"components_of_a_scalar_field",
         [] { (void)field("f: float64[2D]")(1); },
         U,
         {"field f has 0 index dimension(s)", "without components"}},
        {"components_chosen_twice",
         [] { (void)field("u(3): float64[2D]")(1)(2); },
         U,
         {"field u", "components were already chosen (1)", "pick them once"}},
        {"vec_of_a_scalar_field",
         [] { field("f: float64[2D]").vec(); },
         U,
         {"vec()", "f is a scalar field"}},
        {"vec_after_components",
         [] { field("u(3): float64[2D]")(1).vec(); },
         U,
         {"vec()", "already has its components chosen"}},
        {"vec_element_out_of_range",
         [] { (void)field("u(3): float64[2D]").vec()[3]; },
         U,
         {"vector element 3 is out of range", "3 elements"}},
        {"vector_assignment_sizes_differ",
         [] {
             auto [u, v] = fields<2>("u(3), v(2): float64[2D]");
             Assignment(u.vec(), v.vec());
         },
         U,
         {"vector Assignment", "left side has 3 components", "right side has 2"}},
        {"vector_arithmetic_sizes_differ",
         [] {
             auto [u, v] = fields<2>("u(3), v(2): float64[2D]");
             (void)(u.vec() + v.vec());
         },
         U,
         {"element-wise '+'", "different sizes: 3 and 2"}},
        {"empty_vector_assignment",
         [] { Assignment(Vec{}, Vec{}); },
         U,
         {"vector Assignment", "both sides are empty"}},
        // ---- absolute accesses (gathers) ----
        {"at_float_index",
         [] { (void)field("w: float64[1D]").at({Expr(0.5)}); },
         U,
         {"w.at({0.5})", "index for axis 0 of field w has type float64",
          "absolute indices must be integers", "cast<int>(0.5)"}},
        {"at_bool_index",
         [] {
             (void)field("grid: float64[2D]").at({x, x < 3});
         },
         U,
         {"axis 1 of field grid", "has type bool"}},
        {"at_too_few_indices",
         [] { (void)field("w: float64[2D]").at({Expr(1)}); },
         U,
         {"w.at({1})", "field w has 2 spatial dimension(s)", "1 index(es) were given",
          "w.at({i, j})"}},
        {"at_undefined_index",
         [] { (void)field("w: float32[1D]").at({Expr()}); },
         U,
         {"w.at({<undefined>})", "index for axis 0 is an undefined expression"}},
        {"at_constant_beyond_fixed_shape",
         [] { (void)field("lut: float32[256]").at({256}); },
         U,
         {"lut.at({256})", "index 256 on axis 0 lies outside field lut", "size 256, valid 0..255"}},
        {"at_negative_constant",
         [] { (void)field("t: float32[1D]").at({-1}); },
         U,
         {"index -1 on axis 0 lies outside field t", "indices count from 0"}},
        {"at_written",
         [] { Assignment(field("w: float64[4]").at({Expr(1)}), 1.0); },
         U,
         {"cannot assign to `w.at(1)`", "scatter writes are not supported", "w.center()"}},
        {"at_vector_buffer_without_component",
         [] {
             (void)(Expr(field("grid(3): float64[8, 8]").at({x / 4, y / 4})) * 2.0);
         },
         U,
         {"grid.at({x / 4, y / 4}) accesses vector field grid", "index shape (3)",
          "grid.at({x / 4, y / 4}).vec()"}},
        {"at_read_of_a_written_field",
         [] {
             Field f = field("f: float64[2D]");
             create_kernel(Assignment(f.center(), f.at({x, 0}) + 1.0), {.name = "smear"});
         },
         U,
         {"kernel 'smear'", "reads field f at absolute positions", "and writes it", "a race",
          "write into a second field"}},
        // ---- counters ----
        {"counter_axis_out_of_range", [] { ctr(4); }, U, {"ctr(4)", "axis must be 0, 1, 2 or 3"}},
        {"counter_beyond_the_kernel",
         [] { create_kernel(Assignment(field("f: int64[2D]").center(), z)); },
         U,
         {"uses the counter z (axis 2) in assignment 1", "the kernel is 2D",
          "counters go up to axis 1"}},
        {"fields_of_different_dimensionality",
         [] {
             Field f = field("f: float64[2D]"), h = field("h: float64[3D]");
             create_kernel(Assignment(f.center(), h.center()));
         },
         U,
         {"mixes fields of different dimensionality", "f is 2D but h is 3D",
          "one iteration space"}},
        {"two_fields_with_one_name",
         [] {
             Field a = field("f: float64[2D]"), b = field("f: float64[2D]");
             create_kernel(Assignment(a.center(), b.center()));
         },
         U,
         {"uses two different fields named 'f'", "reuse the Field object, or rename one"}},
        {"compute_type_of_a_float32_field",
         [] {
             FieldOptions o;
             o.compute_type = ScalarType::Float64;
             make_field("f", ScalarType::Float32, 2, o);
         },
         U,
         {"field f", "compute_type = float64 is for float16 and bfloat16 fields", "Leave compute_type unset"}},
    };
}

} // namespace loom::test
