#include <loom/vec.hpp>

#include <loom/errors.hpp>

#include <fmt/format.h>

namespace loom {

const Expr& Vec::operator[](int i) const {
    if (i < 0 || i >= size())
        throw UserError(fmt::format("vector element {} is out of range: the vector has {} elements", i, size()));
    return elems_[i];
}

namespace {
template <typename Op>
Vec zip(const char* op, const Vec& a, const Vec& b, Op f) {
    if (a.size() != b.size())
        throw UserError(fmt::format("element-wise '{}' of vectors of different sizes: {} and {}; "
                                    "both sides need the same number of elements", op, a.size(), b.size()));
    std::vector<Expr> out;
    for (int i = 0; i < a.size(); ++i) out.push_back(f(a[i], b[i]));
    return Vec(std::move(out));
}
template <typename Op>
Vec each(const Vec& v, Op f) {
    std::vector<Expr> out;
    for (const Expr& e : v.elements()) out.push_back(f(e));
    return Vec(std::move(out));
}
} // namespace

Vec operator+(const Vec& a, const Vec& b) { return zip("+", a, b, [](auto& x, auto& y) { return x + y; }); }
Vec operator-(const Vec& a, const Vec& b) { return zip("-", a, b, [](auto& x, auto& y) { return x - y; }); }
Vec operator*(const Vec& a, const Vec& b) { return zip("*", a, b, [](auto& x, auto& y) { return x * y; }); }
Vec operator/(const Vec& a, const Vec& b) { return zip("/", a, b, [](auto& x, auto& y) { return x / y; }); }
Vec operator*(const Expr& s, const Vec& v) { return each(v, [&](auto& e) { return s * e; }); }
Vec operator*(const Vec& v, const Expr& s) { return each(v, [&](auto& e) { return e * s; }); }
Vec operator/(const Vec& v, const Expr& s) { return each(v, [&](auto& e) { return e / s; }); }
Vec operator-(const Vec& v) { return each(v, [](auto& e) { return -e; }); }

} // namespace loom
