// Fields and field accesses: the arrays a kernel reads and writes, and how the DSL names cells.
//
//   auto [f, g] = fields<2>("f, g(3): float64[3D]");   // pystencils-style spec
//   Field h = field<float>("h", {64, 64});              // typed overload, fixed shape
//   f.center()   f[{1, 0, -1}]   g(1)   g[{1, 0, 0}](2)   g.vec()
//   lut.at({cast<int>(v)})   g.at({x / 2, y / 2, z})(1)      // reads at absolute coordinates
#pragma once

#include <loom/expr.hpp>
#include <loom/field_info.hpp>
#include <loom/index_var.hpp>
#include <loom/vec.hpp>

#include <array>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace loom {

/// A field read or write at a relative offset, or a read at absolute coordinates (Field::at).
/// For a vector field it may still lack its components: pick them with (i, ...) or take them
/// all with vec().
class Access {
public:
    Access(FieldPtr field, std::vector<int> offsets, std::vector<int> components = {});
    /// A read at absolute integer coordinates, one per spatial axis (checked by Field::at).
    static Access absolute(FieldPtr field, std::vector<Expr> indices);

    /// Selects components of a vector field: f[{1, 0}](2), g(1, 2).
    Access operator()(int c0) const { return with_components({c0}); }
    Access operator()(int c0, int c1) const { return with_components({c0, c1}); }
    Access operator()(int c0, int c1, int c2) const { return with_components({c0, c1, c2}); }
    /// Element k of the index axis of a field with one index axis: x(k), x[{1}](k). Read inside
    /// a reduction over k, or written by an assignment that writes every element (y(k) = ...).
    Access operator()(const IndexVar& k) const;
    /// All components at this offset, in index order.
    Vec vec() const;

    /// The access as an expression. Throws UserError if a vector field lacks its components.
    operator Expr() const; // NOLINT(google-explicit-constructor): accesses are expressions
    Expr expr() const { return static_cast<Expr>(*this); }
    /// The access as stored: for a float16 or bfloat16 field, the element itself rather than its
    /// value widened to the compute type (what expr() gives). A target, not a value to compute with.
    Expr stored_expr() const;

    const FieldPtr& field() const { return field_; }

private:
    Access with_components(std::vector<int> components) const;
    /// How the DSL spells this access, for messages: "f[{1, 0}]" or "f.at({i, j})".
    std::string spelling() const;
    /// The IR node for the given components: the stored element, widened to the compute type.
    Expr node(std::vector<int> components) const;
    /// The access itself, of the field's type.
    Expr stored(std::vector<int> components) const;
    FieldPtr field_;
    std::vector<int> offsets_, components_;
    std::vector<Expr> indices_; ///< absolute coordinates (Field::at); empty for relative accesses
    std::vector<Expr> component_vars_; ///< IndexVars choosing the components, or empty
};

struct FieldOptions {
    std::vector<int> index_shape; ///< components: {3} for a 3-vector, {3, 3} for a matrix
    Layout layout = Layout::C;
    /// For a float16 or bfloat16 field: the type its reads give and the kernel computes with,
    /// float32 (the default) or float64. Stores round to the field's type.
    std::optional<ScalarType> compute_type;
};

class Field {
public:
    explicit Field(FieldPtr info) : info_(std::move(info)) {}

    const FieldInfo& info() const { return *info_; }
    const FieldPtr& ptr() const { return info_; }
    const std::string& name() const { return info_->name; }
    ScalarType type() const { return info_->type; }
    int spatial_dims() const { return info_->spatial_dims; }

    /// The cell a thread works on. For vector fields, pick components: center(1) or f(1).
    Access center() const;
    Access center(int c0) const { return center()(c0); }
    /// A neighbour at a relative offset, one entry per spatial axis: f[{1, 0, -1}].
    Access operator[](std::initializer_list<int> offsets) const;
    Access operator[](const std::vector<int>& offsets) const;
    /// Components at the center: f(1), g(1, 2). For a scalar field, f(0) is the center.
    Access operator()(int c0) const;
    Access operator()(int c0, int c1) const { return center()(c0, c1); }
    /// Element k of the index axis at the center (see Access::operator()(const IndexVar&)).
    Access operator()(const IndexVar& k) const { return center()(k); }
    /// All components at the center.
    Vec vec() const { return center().vec(); }
    /// A read at absolute integer coordinates, one per spatial axis: lut.at({cast<int>(v)}),
    /// grid.at({x / 4, y / 4})(c), W.at({i, j}). Indices are integer expressions (numbers,
    /// counters, integer parameters, casts). Only reads may be absolute. A field the kernel
    /// reads only this way is a buffer: a kernel argument of its own shape, outside the
    /// iteration space. Constant indices are checked here; computed ones are not checked at run
    /// time, so reading outside the array is undefined, as in C.
    Access at(std::initializer_list<Expr> indices) const;
    Access at(const std::vector<Expr>& indices) const;

private:
    /// UserError unless `index` is an integer expression that may address axis `axis`.
    void check_absolute_index(const Expr& index, int axis, const std::string& call) const;
    FieldPtr info_;
};

/// Declares a field from its parts; the typed overloads below are shorthands.
Field make_field(const std::string& name, ScalarType type, int spatial_dims, FieldOptions options = {});
Field make_field(const std::string& name, ScalarType type, std::vector<std::int64_t> fixed_shape,
                 FieldOptions options = {});
template <typename T>
Field field(const std::string& name, int spatial_dims, FieldOptions options = {}) {
    return make_field(name, scalar_type_of<T>(), spatial_dims, std::move(options));
}
template <typename T>
Field field(const std::string& name, std::vector<std::int64_t> fixed_shape, FieldOptions options = {}) {
    return make_field(name, scalar_type_of<T>(), std::move(fixed_shape), std::move(options));
}

/// Parses a pystencils-style spec: "f, g(3): float64[3D]", "img(3): float32[512, 512]".
/// Throws UserError pointing at the bad character.
std::vector<Field> fields(const std::string& spec, Layout layout = Layout::C);
/// The same, for structured bindings: `auto [src, dst] = fields<2>("src, dst: float32[2D]")`.
template <std::size_t N>
std::array<Field, N> fields(const std::string& spec, Layout layout = Layout::C);
/// A single field: field("f: float64[2D]").
Field field(const std::string& spec, Layout layout = Layout::C);

namespace detail {
void check_field_count(const std::string& spec, std::size_t found, std::size_t expected);
template <std::size_t... I>
std::array<Field, sizeof...(I)> to_array(const std::vector<Field>& v, std::index_sequence<I...>) {
    return {v[I]...};
}
} // namespace detail

template <std::size_t N>
std::array<Field, N> fields(const std::string& spec, Layout layout) {
    auto v = fields(spec, layout);
    detail::check_field_count(spec, v.size(), N);
    return detail::to_array(v, std::make_index_sequence<N>{});
}

} // namespace loom
