// Bad field declarations: malformed specs (the message must point at the column with a caret),
// bad typed declarations and fields<N> count mismatches.
#include "loom/loom.hpp"
#include "tests/support/expect_error.hpp"

#include <string>

using namespace loom;

namespace {

/// The caret line the parser prints under the spec: two spaces, then the caret under `column`.
std::string caret_at(int column) {
    return "\n  " + std::string(column - 1, ' ') + "^";
}

/// Fragments every spec error must contain: the column, the echoed spec and the caret under it.
#define LOOM_EXPECT_SPEC_ERROR(spec, column, ...)                                                  \
    LOOM_EXPECT_ERROR(fields(spec), UserError,                                                     \
                      {"invalid field spec at column " + std::to_string(column), "\n  " spec,      \
                       caret_at(column), __VA_ARGS__})

} // namespace

TEST(SpecErrors, MissingColon) {
    // Column 8 is where the parser expected ':' and found 'f'.
    LOOM_EXPECT_SPEC_ERROR("f, g   float64[2D]", 8, "expected ':' after the field names",
                           "found 'f'");
}

TEST(SpecErrors, UnknownType) {
    LOOM_EXPECT_SPEC_ERROR("f: flaot32[2D]", 4, "unknown element type 'flaot32'", "float32",
                           "float64");
}

TEST(SpecErrors, FiveDimensions) {
    LOOM_EXPECT_SPEC_ERROR("f: float64[5D]", 12, "5D", "1D to 4D");
}

TEST(SpecErrors, ZeroDimensions) {
    LOOM_EXPECT_SPEC_ERROR("f: float64[0D]", 12, "0D", "1D to 4D");
}

TEST(SpecErrors, TooManyFixedSizes) {
    LOOM_EXPECT_SPEC_ERROR("f: float64[4, 4, 4, 4, 4]", 12, "5 sizes given", "1 to 4");
}

TEST(SpecErrors, UnclosedIndexShape) {
    LOOM_EXPECT_SPEC_ERROR("u(3: float64[2D]", 4, "expected ')' to close the index shape",
                           "found ':'");
}

TEST(SpecErrors, UnclosedShape) {
    LOOM_EXPECT_SPEC_ERROR("f: float64[2D", 14, "expected ']' to close the shape", "found the end");
}

TEST(SpecErrors, MissingShape) {
    LOOM_EXPECT_SPEC_ERROR("f: float64", 11, "expected '[' to start the shape", "found the end");
}

TEST(SpecErrors, TrailingGarbage) {
    LOOM_EXPECT_SPEC_ERROR("f: float64[2D] extra", 16, "unexpected text after the shape",
                           "found 'e'");
}

TEST(SpecErrors, NameStartsWithDigit) {
    LOOM_EXPECT_SPEC_ERROR("1f: float64[2D]", 1, "expected a field name", "found '1'");
}

TEST(SpecErrors, EmptySpec) {
    LOOM_EXPECT_SPEC_ERROR("", 1, "expected a field name", "found the end");
}

TEST(SpecErrors, DanglingComma) {
    LOOM_EXPECT_SPEC_ERROR("f, : float64[2D]", 4, "expected a field name", "found ':'");
}

TEST(SpecErrors, MissingIndexSize) {
    LOOM_EXPECT_SPEC_ERROR("u(): float64[2D]", 3, "expected an index dimension size", "found ')'");
}

TEST(SpecErrors, NumberTooLarge) {
    LOOM_EXPECT_SPEC_ERROR("f: float64[1234567890123, 4]", 12, "number too large");
}

TEST(SpecErrors, ReservedWord) {
    // Rejected after parsing, by the identifier check shared with params and kernels.
    LOOM_EXPECT_ERROR(fields("f, float: float64[2D]"), UserError,
                      {"invalid field name 'float'", "reserved word", "'float_'"});
}

TEST(SpecErrors, DoubleUnderscoreName) {
    LOOM_EXPECT_ERROR(fields("__f: float64[2D]"), UserError,
                      {"invalid field name '__f'", "starting with '__'"});
}

TEST(SpecErrors, ZeroIndexSize) {
    LOOM_EXPECT_ERROR(fields("u(3, 0): float64[2D]"), UserError,
                      {"column 6", "index dimension size 0 is out of range", "     ^"});
}

TEST(SpecErrors, ZeroFixedSize) {
    LOOM_EXPECT_ERROR(fields("f: float64[64, 0]"), UserError,
                      {"field f", "fixed sizes must be at least 1", "[64, 0]"});
}

TEST(SpecErrors, BoolField) {
    LOOM_EXPECT_ERROR(fields("mask: bool[2D]"), UserError,
                      {"field mask", "bool fields are not supported", "int32"});
}

TEST(SpecErrors, FieldsCountMismatch) {
    LOOM_EXPECT_ERROR(fields<2>("f: float64[2D]"), UserError,
                      {"\"f: float64[2D]\"", "declares 1 field(s)", "2 are bound"});
    LOOM_EXPECT_ERROR(fields<1>("f, g, h: float64[2D]"), UserError,
                      {"declares 3 field(s)", "1 is bound"});
}

TEST(SpecErrors, SingleFieldFromMultiSpec) {
    LOOM_EXPECT_ERROR(field("f, g: float64[2D]"), UserError, {"declares 2 field(s)", "1 is bound"});
}

TEST(SpecErrors, TypedOverloadBadDims) {
    LOOM_EXPECT_ERROR(field<double>("f", 5), UserError,
                      {"field f", "5 spatial dimensions requested", "1 to 4"});
    LOOM_EXPECT_ERROR(field<double>("f", 0), UserError, {"field f", "0 spatial dimensions"});
}

TEST(SpecErrors, TypedOverloadTooManyIndexDims) {
    FieldOptions o;
    o.index_shape = {2, 2, 2, 2};
    LOOM_EXPECT_ERROR(field<float>("t", 3, o), UserError,
                      {"field t", "4 index dimensions requested", "up to 3"});
}

TEST(SpecErrors, TypedOverloadBadName) {
    LOOM_EXPECT_ERROR(field<float>("my field", 2), UserError,
                      {"invalid field name 'my field'", "C identifiers"});
}
