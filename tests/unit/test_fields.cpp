// Field declarations: the spec parser, the typed overloads, layouts and FieldInfo's derived
// properties (memory order, strides), checked against hand-computed values.
#include "loom/loom.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

using namespace loom;

using Ints = std::vector<int>;
using Sizes = std::vector<std::int64_t>;

// ---- spec parser ----

TEST(FieldSpec, SingleScalarField) {
    Field f = field("f: float64[2D]");
    EXPECT_EQ(f.name(), "f");
    EXPECT_EQ(f.type(), ScalarType::Float64);
    EXPECT_EQ(f.spatial_dims(), 2);
    EXPECT_TRUE(f.info().index_shape.empty());
    EXPECT_FALSE(f.info().is_fixed());
    EXPECT_EQ(f.info().layout, Layout::C);
    EXPECT_EQ(f.info().num_components(), 1);
}

TEST(FieldSpec, SeveralNamesWithIndexShapes) {
    auto fs = fields("f, u(3), m(2, 3), t(2, 2, 2): float32[3D]");
    ASSERT_EQ(fs.size(), 4u);
    EXPECT_EQ(fs[0].name(), "f");
    EXPECT_EQ(fs[1].name(), "u");
    EXPECT_EQ(fs[2].name(), "m");
    EXPECT_EQ(fs[3].name(), "t");
    EXPECT_EQ(fs[0].info().index_shape, Ints{});
    EXPECT_EQ(fs[1].info().index_shape, Ints{3});
    EXPECT_EQ(fs[2].info().index_shape, (Ints{2, 3}));
    EXPECT_EQ(fs[3].info().index_shape, (Ints{2, 2, 2}));
    EXPECT_EQ(fs[2].info().num_components(), 6);
    EXPECT_EQ(fs[2].info().array_dims(), 5);
    for (auto& f : fs) {
        // The type and shape after ':' apply to every name.
        EXPECT_EQ(f.type(), ScalarType::Float32);
        EXPECT_EQ(f.spatial_dims(), 3);
    }
}

TEST(FieldSpec, TypeNames) {
    struct Case {
        const char* spec;
        ScalarType type;
    };
    const Case cases[] = {
        {"f: float32[2D]", ScalarType::Float32}, {"f: float64[2D]", ScalarType::Float64},
        {"f: double[2D]", ScalarType::Float64},  {"f: float[2D]", ScalarType::Float32},
        {"f: int32[2D]", ScalarType::Int32},     {"f: int64[2D]", ScalarType::Int64},
    };
    for (const Case& c : cases)
        EXPECT_EQ(field(c.spec).type(), c.type) << c.spec;
}

TEST(FieldSpec, DimensionCounts) {
    EXPECT_EQ(field("f: float64[1D]").spatial_dims(), 1);
    EXPECT_EQ(field("f: float64[2D]").spatial_dims(), 2);
    EXPECT_EQ(field("f: float64[3D]").spatial_dims(), 3);
    EXPECT_EQ(field("f: float64[4D]").spatial_dims(), 4);
    EXPECT_EQ(field("f: float64[3d]").spatial_dims(), 3); // lower-case d is accepted too
}

TEST(FieldSpec, FixedShape) {
    Field f = field("img(3): float32[512, 256]");
    EXPECT_TRUE(f.info().is_fixed());
    EXPECT_EQ(f.info().fixed_shape, (Sizes{512, 256}));
    EXPECT_EQ(f.spatial_dims(), 2);
    EXPECT_EQ(f.info().index_shape, Ints{3});
}

TEST(FieldSpec, WhitespaceIsIgnored) {
    auto fs = fields("  f ,g( 2 , 3 ) :float64 [ 64 , 64 ] ");
    ASSERT_EQ(fs.size(), 2u);
    EXPECT_EQ(fs[1].name(), "g");
    EXPECT_EQ(fs[1].info().index_shape, (Ints{2, 3}));
    EXPECT_EQ(fs[1].info().fixed_shape, (Sizes{64, 64}));
}

TEST(FieldSpec, UnderscoresAndDigitsInNames) {
    auto [a, b] = fields<2>("_src2, dst_field: float64[2D]");
    EXPECT_EQ(a.name(), "_src2");
    EXPECT_EQ(b.name(), "dst_field");
}

TEST(FieldSpec, LayoutArgumentAppliesToAll) {
    auto [a, b] = fields<2>("a, b(3): float64[3D]", Layout::SoA);
    EXPECT_EQ(a.info().layout, Layout::SoA);
    EXPECT_EQ(b.info().layout, Layout::SoA);
}

TEST(FieldSpec, EachCallMakesNewFields) {
    // Fields are identified by object: the same spec twice gives two different fields.
    Field f1 = field("f: float64[2D]");
    Field f2 = field("f: float64[2D]");
    EXPECT_NE(f1.ptr(), f2.ptr());
    auto [a, b] = fields<2>("a, b: float64[2D]");
    EXPECT_NE(a.ptr(), b.ptr());
}

// ---- typed overloads ----

TEST(TypedFields, VariableShape) {
    Field f = field<float>("f", 3);
    EXPECT_EQ(f.type(), ScalarType::Float32);
    EXPECT_EQ(f.spatial_dims(), 3);
    EXPECT_FALSE(f.info().is_fixed());
    EXPECT_EQ(field<double>("d", 2).type(), ScalarType::Float64);
    EXPECT_EQ(field<std::int32_t>("i", 2).type(), ScalarType::Int32);
    EXPECT_EQ(field<std::int64_t>("l", 2).type(), ScalarType::Int64);
}

TEST(TypedFields, FixedShape) {
    Field h = field<float>("h", {64, 64});
    EXPECT_TRUE(h.info().is_fixed());
    EXPECT_EQ(h.info().fixed_shape, (Sizes{64, 64}));
    EXPECT_EQ(h.spatial_dims(), 2);
}

TEST(TypedFields, Options) {
    FieldOptions o;
    o.index_shape = {3};
    o.layout = Layout::AoS;
    Field u = field<double>("u", 2, o);
    EXPECT_EQ(u.info().index_shape, Ints{3});
    EXPECT_EQ(u.info().layout, Layout::AoS);
}

TEST(TypedFields, MakeFieldMatchesSpec) {
    Field a = make_field("a", ScalarType::Int64, {8, 4}, FieldOptions{{2}, Layout::Fortran});
    Field b = field("a(2): int64[8, 4]", Layout::Fortran);
    EXPECT_EQ(a.info().describe(), b.info().describe());
    EXPECT_EQ(a.info().fixed_strides(), b.info().fixed_strides());
}

// ---- layouts ----

TEST(Layouts, Names) {
    EXPECT_EQ(layout_name(Layout::C), "c");
    EXPECT_EQ(layout_name(Layout::Fortran), "fortran");
    EXPECT_EQ(layout_name(Layout::SoA), "fzyx");
    EXPECT_EQ(layout_name(Layout::AoS), "zyxf");
    EXPECT_EQ(parse_layout_name("numpy"), Layout::C);
    EXPECT_EQ(parse_layout_name("f"), Layout::Fortran);
    EXPECT_EQ(parse_layout_name("soa"), Layout::SoA);
    EXPECT_EQ(parse_layout_name("fzyx"), Layout::SoA);
    EXPECT_EQ(parse_layout_name("aos"), Layout::AoS);
    EXPECT_EQ(parse_layout_name("zyxf"), Layout::AoS);
    EXPECT_FALSE(parse_layout_name("xyz").has_value());
}

// A 3D vector field u(3) of fixed shape [4, 5, 6]: array axes 0, 1, 2 spatial, 3 the component.
// Strides below are computed by hand from the memory order (slowest first).

TEST(Layouts, CVectorField) {
    Field u = field("u(3): float64[4, 5, 6]", Layout::C);
    EXPECT_EQ(u.info().memory_order(), (Ints{0, 1, 2, 3}));
    EXPECT_EQ(u.info().spatial_axes_fastest_first(), (Ints{2, 1, 0}));
    EXPECT_EQ(u.info().unit_stride_axis(), 3);
    // Shape (4, 5, 6, 3): 3*6*5 = 90, 3*6 = 18, 3, 1.
    EXPECT_EQ(u.info().fixed_strides(), (Sizes{90, 18, 3, 1}));
}

TEST(Layouts, FortranVectorField) {
    Field u = field("u(3): float64[4, 5, 6]", Layout::Fortran);
    EXPECT_EQ(u.info().memory_order(), (Ints{3, 2, 1, 0}));
    EXPECT_EQ(u.info().spatial_axes_fastest_first(), (Ints{0, 1, 2}));
    EXPECT_EQ(u.info().unit_stride_axis(), 0);
    EXPECT_EQ(u.info().fixed_strides(), (Sizes{1, 4, 20, 120}));
}

TEST(Layouts, SoAVectorField) {
    Field u = field("u(3): float64[4, 5, 6]", Layout::SoA);
    EXPECT_EQ(u.info().memory_order(), (Ints{3, 2, 1, 0}));
    EXPECT_EQ(u.info().spatial_axes_fastest_first(), (Ints{0, 1, 2}));
    EXPECT_EQ(u.info().unit_stride_axis(), 0);
    EXPECT_EQ(u.info().fixed_strides(), (Sizes{1, 4, 20, 120}));
}

TEST(Layouts, AoSVectorField) {
    Field u = field("u(3): float64[4, 5, 6]", Layout::AoS);
    EXPECT_EQ(u.info().memory_order(), (Ints{2, 1, 0, 3}));
    EXPECT_EQ(u.info().spatial_axes_fastest_first(), (Ints{0, 1, 2}));
    EXPECT_EQ(u.info().unit_stride_axis(), 3);
    // Components fastest (1), then x (3), y (3*4 = 12), z (12*5 = 60).
    EXPECT_EQ(u.info().fixed_strides(), (Sizes{3, 12, 60, 1}));
}

// A 2D matrix field m(2, 3) of fixed shape [4, 5]: array axes 0, 1 spatial, 2, 3 the index.
// Two index dimensions tell Fortran (index axes reversed) from SoA (index axes in C order).

TEST(Layouts, CMatrixField) {
    Field m = field("m(2, 3): float32[4, 5]", Layout::C);
    EXPECT_EQ(m.info().memory_order(), (Ints{0, 1, 2, 3}));
    EXPECT_EQ(m.info().fixed_strides(), (Sizes{30, 6, 3, 1}));
}

TEST(Layouts, FortranMatrixField) {
    Field m = field("m(2, 3): float32[4, 5]", Layout::Fortran);
    EXPECT_EQ(m.info().memory_order(), (Ints{3, 2, 1, 0}));
    EXPECT_EQ(m.info().fixed_strides(), (Sizes{1, 4, 20, 40}));
}

TEST(Layouts, SoAMatrixField) {
    Field m = field("m(2, 3): float32[4, 5]", Layout::SoA);
    EXPECT_EQ(m.info().memory_order(), (Ints{2, 3, 1, 0}));
    EXPECT_EQ(m.info().unit_stride_axis(), 0);
    EXPECT_EQ(m.info().fixed_strides(), (Sizes{1, 4, 60, 20}));
}

TEST(Layouts, AoSMatrixField) {
    Field m = field("m(2, 3): float32[4, 5]", Layout::AoS);
    EXPECT_EQ(m.info().memory_order(), (Ints{1, 0, 2, 3}));
    EXPECT_EQ(m.info().unit_stride_axis(), 3);
    EXPECT_EQ(m.info().fixed_strides(), (Sizes{6, 24, 3, 1}));
}

TEST(Layouts, ScalarFieldLayouts) {
    // Without components SoA and AoS both reduce to Fortran order: x fastest.
    Field c = field("f: float64[4, 5, 6]", Layout::C);
    Field s = field("f: float64[4, 5, 6]", Layout::SoA);
    Field a = field("f: float64[4, 5, 6]", Layout::AoS);
    EXPECT_EQ(c.info().fixed_strides(), (Sizes{30, 6, 1}));
    EXPECT_EQ(s.info().fixed_strides(), (Sizes{1, 4, 20}));
    EXPECT_EQ(a.info().fixed_strides(), (Sizes{1, 4, 20}));
    EXPECT_EQ(c.info().unit_stride_axis(), 2);
    EXPECT_EQ(s.info().unit_stride_axis(), 0);
}

// ---- describe ----

TEST(FieldDescribe, Forms) {
    EXPECT_EQ(field("f: float64[2D]").info().describe(), "f: float64[2D]");
    EXPECT_EQ(field("u(3): float32[3D]").info().describe(), "u(3): float32[3D]");
    EXPECT_EQ(field("m(2, 3): int32[64, 64]").info().describe(), "m(2, 3): int32[64, 64]");
    EXPECT_EQ(field("g: double[64, 32]").info().describe(), "g: float64[64, 32]");
    EXPECT_EQ(field("u(3): float64[3D]", Layout::SoA).info().describe(),
              "u(3): float64[3D], layout fzyx");
    EXPECT_EQ(field("u(3): float64[3D]", Layout::AoS).info().describe(),
              "u(3): float64[3D], layout zyxf");
    EXPECT_EQ(field("f: float64[2D]", Layout::Fortran).info().describe(),
              "f: float64[2D], layout fortran");
}

TEST(FieldDescribe, RoundTripsThroughTheParser) {
    for (const char* spec : {"f: float64[2D]", "u(3): float32[3D]", "m(2, 3): int64[8, 4]"}) {
        Field f = field(spec);
        EXPECT_EQ(field(f.info().describe()).info().describe(), spec);
    }
}
