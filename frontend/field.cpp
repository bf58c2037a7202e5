#include <loom/field.hpp>

#include "compiler/ir/printer.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>

namespace loom {
using namespace ir;

// ---- Access ----

Access::Access(FieldPtr field, std::vector<int> offsets, std::vector<int> components)
    : field_(std::move(field)), offsets_(std::move(offsets)), components_(std::move(components)) {}

Access Access::absolute(FieldPtr field, std::vector<Expr> indices) {
    Access a(field, std::vector<int>(std::size_t(field->spatial_dims), 0));
    a.indices_ = std::move(indices);
    return a;
}

std::string Access::spelling() const {
    if (indices_.empty()) return fmt::format("{}[{{{}}}]", field_->name, fmt::join(offsets_, ", "));
    std::vector<std::string> idx;
    for (auto& i : indices_) idx.push_back(to_string(i));
    return fmt::format("{}.at({{{}}})", field_->name, fmt::join(idx, ", "));
}

Expr Access::stored(std::vector<int> components) const {
    Expr e = indices_.empty() ? FieldAccessNode::make(field_, offsets_, std::move(components))
                              : FieldAccessNode::make_absolute(field_, indices_, std::move(components));
    if (component_vars_.empty()) return e;
    return FieldAccessNode::make_indexed(e.as<FieldAccessNode>(), component_vars_);
}

Access Access::operator()(const IndexVar& k) const {
    const FieldInfo& f = *field_;
    const std::string shown = fmt::format("{}({})", spelling(), k.name());
    if (!components_.empty())
        throw UserError(fmt::format("{}: the components of field {} were already chosen; pick "
                                    "them once", shown, f.name));
    if (f.index_dims() != 1)
        throw UserError(fmt::format(
            "{}: field {} has {} index dimension(s) (index shape ({})); an IndexVar picks the "
            "element of a field with exactly one index axis, such as \"x(768): float32[1D]\"",
            shown, f.name, f.index_dims(), fmt::join(f.index_shape, ", ")));
    if (k.extent() > f.index_shape[0])
        throw UserError(fmt::format("{}: {} runs over [0, {}), but the index axis of field {} has "
                                    "{} elements; use an IndexVar of extent at most {}",
                                    shown, k.name(), k.extent(), f.name, f.index_shape[0],
                                    f.index_shape[0]));
    Access a = *this;
    a.components_ = {0};
    a.component_vars_ = {k.expr()};
    return a;
}

Access Access::with_components(std::vector<int> comps) const {
    const FieldInfo& f = *field_;
    if (!components_.empty())
        throw UserError(fmt::format("field {}: components were already chosen ({}); pick them once, "
                                    "e.g. {}({})", f.name, fmt::join(components_, ", "),
                                    spelling(), fmt::join(comps, ", ")));
    if (f.index_dims() == 0 && comps.size() == 1 && comps[0] == 0) return *this; // f(0) of a scalar
    if (int(comps.size()) != f.index_dims())
        throw UserError(fmt::format(
            "field {} has {} index dimension(s) (index shape ({})), but {} component index(es) were "
            "given; write {}{}",
            f.name, f.index_dims(), fmt::join(f.index_shape, ", "), comps.size(), f.name,
            f.index_dims() == 0 ? std::string(".center() without components")
                                : std::string("(i, j, k)").substr(0, 3 * f.index_dims() - 1) + ")"));
    for (std::size_t i = 0; i < comps.size(); ++i)
        if (comps[i] < 0 || comps[i] >= f.index_shape[i])
            throw UserError(fmt::format("field {}: component {} is out of range for index "
                                        "dimension {} of size {} (valid: 0..{})",
                                        f.name, comps[i], i, f.index_shape[i], f.index_shape[i] - 1));
    Access out = *this;
    out.components_ = std::move(comps);
    return out;
}

Vec Access::vec() const {
    const FieldInfo& f = *field_;
    if (!components_.empty() || f.index_dims() == 0)
        throw UserError(fmt::format("vec() takes all components of a vector field, but {} {}; use "
                                    "the access itself as a scalar", f.name,
                                    f.index_dims() == 0 ? "is a scalar field" : "already has its components chosen"));
    std::vector<Expr> out;
    std::vector<int> idx(f.index_dims(), 0);
    for (int n = 0; n < f.num_components(); ++n) {
        out.push_back(node(idx));
        for (int d = f.index_dims() - 1; d >= 0; --d) { // row-major over the index dimensions
            if (++idx[d] < f.index_shape[d]) break;
            idx[d] = 0;
        }
    }
    return Vec(std::move(out));
}

Access::operator Expr() const {
    const FieldInfo& f = *field_;
    if (int(components_.size()) != f.index_dims()) {
        // Relative accesses keep their established wording; absolute ones say how they are spelled.
        std::string shown = indices_.empty() ? fmt::format("{}[{}]", f.name, fmt::join(offsets_, ", "))
                                             : spelling();
        throw UserError(fmt::format(
            "{} accesses vector field {} (index shape ({})) without choosing a component; write "
            "{}(i) for one component or {}.vec() for all of them",
            shown, f.name, fmt::join(f.index_shape, ", "), spelling(),
            indices_.empty() ? f.name : spelling()));
    }
    return node(components_);
}

Expr Access::stored_expr() const {
    Expr e = expr(); // checks the components
    auto c = e.as<CastNode>();
    return c && c->value.is<FieldAccessNode>() ? c->value : e;
}

Expr Access::node(std::vector<int> components) const {
    Expr e = stored(std::move(components));
    // A 16-bit float is a storage type: its reads widen at once, so the kernel computes in
    // float32 (or the field's compute type) and only the stores round.
    const ScalarType t = field_->compute_type();
    return t == field_->type ? e : CastNode::make(t, e);
}

// ---- Field ----

Access Field::center() const { return Access(info_, std::vector<int>(info_->spatial_dims, 0)); }

Access Field::operator[](std::initializer_list<int> offsets) const {
    return (*this)[std::vector<int>(offsets)];
}

Access Field::operator[](const std::vector<int>& offsets) const {
    if (int(offsets.size()) != info_->spatial_dims)
        throw UserError(fmt::format("field {} has {} spatial dimension(s), but the offset {{{}}} has "
                                    "{} entries; give one offset per axis, e.g. {}[{{{}}}]",
                                    name(), info_->spatial_dims, fmt::join(offsets, ", "),
                                    offsets.size(), name(),
                                    fmt::join(std::vector<int>(info_->spatial_dims, 0), ", ")));
    for (std::size_t d = 0; d < offsets.size(); ++d)
        if (offsets[d] < -max_offset || offsets[d] > max_offset)
            throw UserError(fmt::format(
                "field {}: the offset {} on axis {} in {}[{{{}}}] is out of range; an offset is at "
                "most {} cells either way (loom::max_offset). Ghost layers as wide as the offset "
                "would cover any array; read a fixed position with {}.at(...) instead, or check "
                "how the offset is computed",
                name(), offsets[d], d, name(), fmt::join(offsets, ", "), max_offset, name()));
    return Access(info_, offsets);
}

Access Field::operator()(int c0) const { return center()(c0); }

Access Field::at(std::initializer_list<Expr> indices) const { return at(std::vector<Expr>(indices)); }

Access Field::at(const std::vector<Expr>& indices) const {
    const int D = info_->spatial_dims;
    std::vector<std::string> shown;
    for (auto& i : indices) shown.push_back(i.defined() ? to_string(i) : "<undefined>");
    const std::string call = fmt::format("{}.at({{{}}})", name(), fmt::join(shown, ", "));
    if (int(indices.size()) != D)
        throw UserError(fmt::format("{}: field {} has {} spatial dimension(s), but {} index(es) "
                                    "were given; give one index per spatial axis, e.g. {}.at({{{}}})",
                                    call, name(), D, indices.size(), name(),
                                    std::string("i, j, k, l").substr(0, 3 * D - 2)));
    for (int d = 0; d < D; ++d) check_absolute_index(indices[d], d, call);
    return Access::absolute(info_, indices);
}

void Field::check_absolute_index(const Expr& index, int axis, const std::string& call) const {
    if (!index.defined())
        throw UserError(fmt::format("{}: the index for axis {} is an undefined expression (a "
                                    "default-constructed loom::Expr)", call, axis));
    if (index.depth() >= max_expression_depth) // the access is one level deeper
        ir::throw_too_deep(index.depth() + 1, fmt::format("{}.at()", name()).c_str());
    if (!is_int(index.type()))
        throw UserError(fmt::format(
            "{}: the index for axis {} of field {} has type {}, but absolute indices must be "
            "integers; convert it explicitly, e.g. cast<int>({}) (truncates toward zero) or "
            "cast<int>(floor(...))",
            call, axis, name(), type_name(index.type()), to_string(index)));
    // A constant index can be checked now: negative never fits, and a fixed shape bounds it.
    auto c = index.as<ConstNode>();
    if (!c) return;
    const bool fixed = info_->is_fixed();
    if (c->int_value < 0 || (fixed && c->int_value >= info_->fixed_shape[std::size_t(axis)]))
        throw UserError(fmt::format(
            "{}: index {} on axis {} lies outside field {}{}; indices count from 0",
            call, c->int_value, axis, name(),
            fixed ? fmt::format(" (size {}, valid 0..{})", info_->fixed_shape[std::size_t(axis)],
                                info_->fixed_shape[std::size_t(axis)] - 1)
                  : std::string()));
}

namespace {

void validate(const FieldInfo& f) {
    check_identifier(f.name, "field");
    if (f.spatial_dims < 1 || f.spatial_dims > 4)
        throw UserError(fmt::format("field {}: {} spatial dimensions requested; loom supports 1 to 4{}",
                                    f.name, f.spatial_dims,
                                    f.spatial_dims > 4 ? fmt::format(". For a fixed shape pass a vector of sizes, e.g. "
                                                                     "std::vector<std::int64_t>{{{}}}", f.spatial_dims)
                                                       : std::string()));
    if (f.index_dims() > 3)
        throw UserError(fmt::format("field {}: {} index dimensions requested; loom supports up to 3",
                                    f.name, f.index_dims()));
    for (int s : f.index_shape)
        if (s < 1)
            throw UserError(fmt::format("field {}: index dimension sizes must be at least 1, found "
                                        "({})", f.name, fmt::join(f.index_shape, ", ")));
    for (auto s : f.fixed_shape)
        if (s < 1)
            throw UserError(fmt::format("field {}: fixed sizes must be at least 1, found [{}]",
                                        f.name, fmt::join(f.fixed_shape, ", ")));
    if (f.type == ScalarType::Bool)
        throw UserError(fmt::format("field {}: bool fields are not supported; use int32", f.name));
}

} // namespace

namespace {
void set_compute_type(FieldInfo& f, std::optional<ScalarType> t) {
    if (!t) return;
    const bool half = f.type == ScalarType::Float16 || f.type == ScalarType::BFloat16;
    if (!half)
        throw UserError(fmt::format("field {}: FieldOptions::compute_type = {} is for float16 and bfloat16 "
                                    "fields, which are stored in 16 bits and computed with in a wider "
                                    "type; a {} field computes in {} itself. Leave compute_type unset",
                                    f.name, type_name(*t), type_name(f.type), type_name(f.type)));
    if (*t != ScalarType::Float32 && *t != ScalarType::Float64)
        throw UserError(fmt::format("field {}: FieldOptions::compute_type = {}; a {} field computes in "
                                    "float32 (the default) or float64",
                                    f.name, type_name(*t), type_name(f.type)));
    f.half_compute_type = *t;
}
} // namespace

Field make_field(const std::string& name, ScalarType type, int spatial_dims, FieldOptions o) {
    auto f = std::make_shared<FieldInfo>();
    f->name = name;
    f->type = type;
    f->spatial_dims = spatial_dims;
    f->index_shape = std::move(o.index_shape);
    f->layout = o.layout;
    set_compute_type(*f, o.compute_type);
    validate(*f);
    return Field(f);
}

Field make_field(const std::string& name, ScalarType type, std::vector<std::int64_t> shape,
                 FieldOptions o) {
    auto f = std::make_shared<FieldInfo>();
    f->name = name;
    f->type = type;
    f->spatial_dims = static_cast<int>(shape.size());
    f->fixed_shape = std::move(shape);
    f->index_shape = std::move(o.index_shape);
    f->layout = o.layout;
    set_compute_type(*f, o.compute_type);
    validate(*f);
    return Field(f);
}

// ---- spec parser ----

namespace {

class SpecParser {
public:
    SpecParser(const std::string& spec, Layout layout) : s_(spec), layout_(layout) {}

    std::vector<Field> parse() {
        struct Decl {
            std::string name;
            std::vector<int> index_shape;
        };
        std::vector<Decl> decls;
        do {
            skip_ws();
            Decl d;
            std::size_t name_pos = pos_;
            d.name = identifier("a field name");
            try {
                check_identifier(d.name, "field");
            } catch (const UserError& e) {
                fail(name_pos, e.what(), false);
            }
            for (auto& other : decls)
                if (other.name == d.name)
                    fail(name_pos, fmt::format("the name '{}' is declared twice", d.name), false);
            skip_ws();
            if (peek() == '(') {
                ++pos_;
                do {
                    skip_ws();
                    std::size_t at = pos_;
                    std::int64_t n = integer("an index dimension size");
                    if (n < 1 || n > (1 << 20))
                        fail(at, fmt::format("index dimension size {} is out of range 1..{}", n, 1 << 20));
                    d.index_shape.push_back(static_cast<int>(n));
                    skip_ws();
                } while (accept(','));
                expect(')', "')' to close the index shape");
            }
            decls.push_back(std::move(d));
            skip_ws();
        } while (accept(','));
        expect(':', "':' after the field names (as in \"f, g: float64[2D]\")");
        skip_ws();
        std::size_t type_pos = pos_;
        std::string tname = identifier("an element type (float32, float64, int32, int64)");
        auto type = parse_type_name(tname);
        if (!type) fail(type_pos, fmt::format("unknown element type '{}'; expected float32, "
                                              "float64, int32 or int64", tname), false);
        skip_ws();
        expect('[', "'[' to start the shape, as in float64[3D] or float32[64, 64]");
        skip_ws();
        std::vector<std::int64_t> fixed;
        int dims = 0;
        std::size_t dims_pos = pos_;
        std::int64_t first = integer("a dimension count like 3D or a size like 64");
        if (peek() == 'D' || peek() == 'd') {
            ++pos_;
            if (first < 1 || first > 4) fail(dims_pos, fmt::format("{}D: loom supports 1D to 4D fields", first));
            dims = static_cast<int>(first);
        } else {
            fixed.push_back(first);
            skip_ws();
            while (accept(',')) {
                skip_ws();
                fixed.push_back(integer("a size"));
                skip_ws();
            }
            if (fixed.size() > 4) fail(dims_pos, fmt::format("{} sizes given; loom supports 1 to 4 "
                                                             "spatial dimensions", fixed.size()));
        }
        skip_ws();
        expect(']', "']' to close the shape");
        skip_ws();
        if (pos_ != s_.size()) fail(pos_, "unexpected text after the shape");

        std::vector<Field> out;
        for (auto& d : decls) {
            FieldOptions o{d.index_shape, layout_};
            out.push_back(fixed.empty() ? make_field(d.name, *type, dims, o)
                                        : make_field(d.name, *type, fixed, o));
        }
        return out;
    }

private:
    char peek() const { return pos_ < s_.size() ? s_[pos_] : '\0'; }
    void skip_ws() {
        while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
    }
    bool accept(char c) {
        if (peek() != c) return false;
        ++pos_;
        return true;
    }
    void expect(char c, const std::string& what) {
        if (!accept(c)) fail(pos_, "expected " + what);
    }
    std::string identifier(const std::string& what) {
        std::size_t start = pos_;
        if (!(std::isalpha(static_cast<unsigned char>(peek())) || peek() == '_')) fail(pos_, "expected " + what);
        while (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_') ++pos_;
        return s_.substr(start, pos_ - start);
    }
    std::int64_t integer(const std::string& what) {
        std::size_t start = pos_;
        while (std::isdigit(static_cast<unsigned char>(peek()))) ++pos_;
        if (start == pos_) fail(pos_, "expected " + what);
        if (pos_ - start > 12) fail(start, "number too large");
        return std::stoll(s_.substr(start, pos_ - start));
    }
    [[noreturn]] void fail(std::size_t at, const std::string& why, bool say_found = true) const {
        std::string found = !say_found      ? std::string()
                            : at < s_.size() ? fmt::format(", found '{}'", s_[at])
                                             : std::string(", found the end");
        throw UserError(fmt::format("invalid field spec at column {}: {}{}\n  {}\n  {}^",
                                    at + 1, why, found, s_, std::string(at, ' ')));
    }

    const std::string& s_;
    Layout layout_;
    std::size_t pos_ = 0;
};

} // namespace

std::vector<Field> fields(const std::string& spec, Layout layout) {
    return SpecParser(spec, layout).parse();
}

Field field(const std::string& spec, Layout layout) {
    auto v = fields(spec, layout);
    detail::check_field_count(spec, v.size(), 1);
    return v[0];
}

void detail::check_field_count(const std::string& spec, std::size_t found, std::size_t expected) {
    if (found != expected)
        throw UserError(fmt::format("the field spec \"{}\" declares {} field(s), but {} {} bound; "
                                    "declare exactly as many names as you bind",
                                    spec, found, expected, expected == 1 ? "is" : "are"));
}

} // namespace loom
