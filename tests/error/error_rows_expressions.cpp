// Error table rows: operand types, implicit conversions, literals and constants, integer division,
// scalar parameters, temporaries and assignment targets.
#include "tests/error/error_rows.hpp"

#include <loom/loom.hpp>

#include <cmath>

namespace loom::test {

using namespace loom::counters;

namespace {
Field f2(const char* name = "f") {
    return make_field(name, ScalarType::Float64, 2);
}
Expr cond() {
    return field("c: float64[2D]").center() > 0;
}
} // namespace

std::vector<ErrorRow> expression_rows() {
    const auto U = Expect::User;
    return {
        // ---- implicit conversions where a value is stored ----
        {"store_float64_into_float32",
         [] {
             Field d = field("d: float64[2D]"), s = field("s: float32[2D]");
             create_kernel(Assignment(s.center(), d.center() * 2.0));
         },
         U,
         {"kernel 'kernel'", "assignment 1", "`s[0, 0] = d[0, 0] * 2.0`",
          "stores a float64 value into field s of type float32", "can lose precision", "cast<"}},
        {"store_float_into_int",
         [] {
             Field d = field("d: float64[2D]"), i = field("i: int32[2D]");
             create_kernel(Assignment(i.center(), d.center()));
         },
         U,
         {"stores a float64 value into field i of type int32", "cast<"}},
        {"store_int64_into_int32",
         [] {
             Field n = field("n: int64[2D]"), i = field("i: int32[2D]");
             create_kernel(Assignment(i.center(), n.center()));
         },
         U,
         {"int64 value into field i of type int32", "can lose precision or range"}},
        {"store_float_literal_into_int_field",
         [] { create_kernel(Assignment(field("i: int32[2D]").center(), 1.5)); },
         U,
         {"stores the float value 1.5 into field i (int32)", "write an integer or cast"}},
        {"store_float_literal_into_int_temporary",
         [] {
             Expr t = temp<std::int64_t>("t");
             create_kernel({Assignment(t, 0.5), Assignment(field("i: int64[2D]").center(), t)});
         },
         U,
         {"stores the float value 0.5 into temporary t (int64)"}},
        {"store_bool_into_float_field",
         [] {
             auto [f, g] = fields<2>("f, g: float64[2D]");
             create_kernel(Assignment(f.center(), g.center() > 0));
         },
         U,
         {"stores a bool value into field f of type float64", "mixes booleans and numbers"}},
        {"store_int_literal_too_large_for_int32",
         [] { create_kernel(Assignment(field("i: int32[2D]").center(), 3000000000LL)); },
         U,
         {"stores the value 3000000000", "field i (int32)", "does not fit"}},
        {"store_untyped_param_into_int_field",
         [] { create_kernel(Assignment(field("i: int32[2D]").center(), param("n"))); },
         U,
         {"float64 value into field i of type int32", "cast<std::int32_t>"}},
        // ---- operand types ----
        {"bool_plus_number",
         [] { (void)(cond() + f2().center()); },
         U,
         {"cannot apply '+' to bool and float64", "Booleans do not mix with numbers",
          "select(cond, 1.0, 0.0)"}},
        {"bool_times_plain_integer",
         [] { (void)(cond() * 2); },
         U,
         {"cannot apply '*' to bool and int64"}},
        {"bools_ordered",
         [] { (void)(cond() < cond()); },
         U,
         {"cannot apply '<' to bool and bool", "Only == and != compare booleans"}},
        {"and_of_numbers",
         [] {
             auto [f, g] = fields<2>("f, g: float64[2D]");
             (void)(f.center() && g.center());
         },
         U,
         {"'&&' needs two boolean operands", "found float64 and float64", "x > 0 && y > 0"}},
        {"or_of_bool_and_number",
         [] { (void)(cond() || f2().center()); },
         U,
         {"'||' needs two boolean operands", "found bool and float64"}},
        {"not_of_a_number",
         [] { (void)!Expr(f2().center()); },
         U,
         {"'!' needs a boolean", "`f[0, 0]`", "!(v > 0)"}},
        {"negated_bool", [] { (void)-cond(); }, U, {"unary '-' needs a number", "use '!'"}},
        {"select_on_a_number",
         [] {
             auto [f, g] = fields<2>("f, g: float64[2D]");
             select(f.center(), g.center(), 0.0);
         },
         U,
         {"select() needs a boolean condition", "`f[0, 0]` of type float64", "v > 0"}},
        {"select_of_bool_and_number",
         [] {
             Expr c = cond();
             select(c, c, 1.0);
         },
         U,
         {"cannot apply 'select' to bool and float64"}},
        {"select_on_undefined",
         [] { select(Expr(), Expr(1.0), Expr(2.0)); },
         U,
         {"select() needs a boolean condition", "<undefined>"}},
        {"sqrt_of_bool",
         [] { loom::sqrt(cond()); },
         U,
         {"sqrt() needs a number", "the boolean `c[0, 0] > 0.0`"}},
        {"pow_of_bool",
         [] { loom::pow(cond(), 2.0); },
         U,
         {"pow() needs a number", "select(cond, 1.0, 0.0)"}},
        {"min_of_bools",
         [] { loom::min(cond(), cond()); },
         U,
         {"cannot apply 'min' to bool and bool", "use select(...) on conditions"}},
        {"fma_of_bool",
         [] { loom::fma(cond(), 1.0, 2.0); },
         U,
         {"fma() needs a number", "the boolean"}},
        {"cast_number_to_bool",
         [] { cast<bool>(f2().center()); },
         U,
         {"cannot cast `f[0, 0]` to bool", "v != 0"}},
        {"cast_bool_to_number",
         [] { cast<float>(cond()); },
         U,
         {"cannot cast the boolean", "to float32", "select(cond, 1, 0)"}},
        {"undefined_operand",
         [] { (void)(f2().center() + Expr()); },
         U,
         {"operator '+' got an undefined expression", "default-constructed"}},
        {"cast_of_undefined",
         [] { cast<float>(Expr()); },
         U,
         {"cast() got an undefined expression"}},
        {"sqrt_of_undefined",
         [] { loom::sqrt(Expr()); },
         U,
         {"sqrt() got an undefined expression"}},
        // ---- constants and integer arithmetic ----
        {"constant_beyond_int32",
         [] { constant(ScalarType::Int32, 1e10); },
         U,
         {"constant(int32, 10000000000)", "does not fit int32", "-2147483648..2147483647",
          "use a wider type"}},
        {"constant_int_nan",
         [] { constant(ScalarType::Int64, std::nan("")); },
         U,
         {"constant(int64, nan)", "does not fit int64"}},
        {"constant_int_with_a_fraction",
         [] { constant(ScalarType::Int32, 0.5); },
         U,
         {"constant(int32, 0.5)", "not a whole number", "drop its fraction", "round it first"}},
        {"constant_bool_two",
         [] { constant(ScalarType::Bool, 2); },
         U,
         {"constant(bool, 2)", "0 (false) or 1 (true)", "v != 0"}},
        {"integer_division_by_literal_zero",
         [] { (void)(field("s: int32[2D]").center() / 0); },
         U,
         {"integer division by zero", "`s[0, 0] / 0`", "the divisor is the constant 0",
          "select(d != 0, x / d, 0)"}},
        {"integer_modulo_by_literal_zero",
         [] { (void)(field("l: int64[1D]").center() % 0); },
         U,
         {"integer division by zero", "l[0] % 0", "select(d != 0, x % d, 0)"}},
        {"literals_divided_by_zero",
         [] { (void)(Expr(7) / Expr(0)); },
         U,
         {"integer division by zero", "7 / 0"}},
        {"integer_division_by_a_folded_zero",
         [] {
             auto [s, o] = fields<2>("s, o: int32[2D]");
             create_kernel(Assignment(o.center(), s.center() / (constant<int>(2) - 2)),
                           {.name = "fold_div"});
         },
         U,
         {"kernel 'fold_div'", "integer division by zero", "assignment 1",
          "the divisor `2 - 2` folds to the constant 0", "select(d != 0, x / d, 0)"}},
        // ---- scalar parameters ----
        {"param_bool",
         [] { param<bool>("flag"); },
         U,
         {"scalar parameter 'flag' has type bool", "float32, float64, int32 or int64"}},
        {"temp_float16",
         [] { temp("h", ScalarType::Float16); },
         U,
         {"temporary 'h' has type float16", "use float32", "16-bit floats are storage types"}},
        {"param_empty_name",
         [] { param<float>(""); },
         U,
         {"invalid scalar parameter name ''", "C identifiers"}},
        {"param_name_starts_with_digit",
         [] { param<float>("1x"); },
         U,
         {"invalid scalar parameter name '1x'", "a letter or '_'"}},
        {"param_reserved_name",
         [] { param<float>("float"); },
         U,
         {"invalid scalar parameter name 'float'", "reserved word", "'float_'"}},
        {"param_two_types_one_name",
         [] {
             auto [f, g] = fields<2>("f, g: float64[2D]");
             create_kernel(
                 Assignment(f.center(), param<float>("a") * g.center() + param<double>("a")));
         },
         U,
         {"uses two different scalar parameters named 'a'", "reuse the Expr"}},
        {"param_named_like_a_field",
         [] {
             auto [f, g] = fields<2>("f, g: float64[2D]");
             create_kernel(Assignment(f.center(), param<double>("g") * g.center()));
         },
         U,
         {"a scalar parameter and a field both named 'g'", "rename one of them"}},
        {"untyped_param_two_types",
         [] {
             auto [t, s] = fields<2>("t, s: float32[2D]");
             auto [e, d] = fields<2>("e, d: float64[2D]");
             Expr omega = param("omega");
             create_kernel({Assignment(t.center(), omega * s.center()),
                            Assignment(e.center(), omega * d.center())},
                           {.name = "relax"});
         },
         U,
         {"kernel 'relax'", "untyped parameter 'omega'", "as float32 in assignment 1",
          "as float64 in assignment 2"}},
        {"untyped_param_as_slice_bound",
         [] {
             auto [f, g] = fields<2>("f, g: float64[2D]");
             KernelConfig c;
             c.iteration_slice = Slice{from(param("n")), all()};
             create_kernel(Assignment(f.center(), g.center()), c);
         },
         U,
         {"untyped parameter 'n'", "bound of axis 0", "param<std::int64_t>(\"n\")"}},
        // ---- temporaries and assignment targets ----
        {"temp_empty_name", [] { temp<double>(""); }, U, {"invalid temporary name ''"}},
        {"temp_reserved_name",
         [] { temp<double>("threadIdx"); },
         U,
         {"invalid temporary name 'threadIdx'", "reserved word"}},
        {"temp_assigned_twice",
         [] {
             auto [f, g] = fields<2>("f, g: float64[2D]");
             Expr t = temp<double>("t");
             create_kernel(
                 {Assignment(t, g.center()), Assignment(t, t * 2.0), Assignment(f.center(), t)});
         },
         U,
         {"assigns the temporary 't' twice", "assignment 2", "use a new temporary"}},
        {"temp_never_defined",
         [] {
             auto [f, g] = fields<2>("f, g: float64[2D]");
             create_kernel(Assignment(f.center(), g.center() + temp<double>("t")));
         },
         U,
         {"reads the temporary 't' in assignment 1", "no assignment defines it",
          "param<T>(\"t\")"}},
        {"temp_read_before_definition",
         [] {
             auto [f, g] = fields<2>("f, g: float64[2D]");
             Expr t = temp<double>("t");
             create_kernel({Assignment(f.center(), t * 2.0), Assignment(t, g.center())});
         },
         U,
         {"reads the temporary 't' in assignment 1", "before it is defined in assignment 2",
          "move the definition first"}},
        {"temp_read_in_its_own_definition",
         [] {
             Expr t = temp<double>("t");
             create_kernel(
                 {Assignment(t, t + 1.0), Assignment(field("f: float64[1D]").center(), t)});
         },
         U,
         {"reads the temporary 't' in its own definition", "assignment 1"}},
        {"assign_to_a_parameter",
         [] { Assignment(param<double>("alpha"), f2().center()); },
         U,
         {"cannot assign to the scalar parameter alpha", "f.center()", "temp<T>(\"t\")"}},
        {"assign_to_an_expression",
         [] {
             auto [f, g] = fields<2>("f, g: float64[2D]");
             Assignment(f.center() + g.center(), 1.0);
         },
         U,
         {"cannot assign to the expression `f[0, 0] + g[0, 0]`"}},
        {"assign_to_a_counter",
         [] { Assignment(x, 1); },
         U,
         {"cannot assign to the expression `x`"}},
        {"assign_undefined_value",
         [] { Assignment(f2().center(), Expr()); },
         U,
         {"the right side is an undefined expression"}},
        {"assign_to_undefined",
         [] { Assignment(Expr(), Expr(1.0)); },
         U,
         {"the left side is an undefined expression", "default-constructed loom::Expr"}},
        {"kernel_without_assignments",
         [] { create_kernel(AssignmentCollection(), {.name = "e"}); },
         U,
         {"kernel 'e' has no assignments", "at least one Assignment"}},
        {"kernel_writes_no_field",
         [] { create_kernel(Assignment(temp<double>("t"), f2("g").center() * 2.0)); },
         U,
         {"writes no field", "no effect", "f.center()"}},
    };
}

} // namespace loom::test
