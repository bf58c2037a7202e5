// Vector values: a fixed number of scalar expressions, combined element by element.
#pragma once

#include <loom/expr.hpp>

#include <initializer_list>
#include <vector>

namespace loom {

class Vec {
public:
    Vec() = default;
    Vec(std::initializer_list<Expr> elems) : elems_(elems) {}
    explicit Vec(std::vector<Expr> elems) : elems_(std::move(elems)) {}

    int size() const { return static_cast<int>(elems_.size()); }
    const Expr& operator[](int i) const;
    const std::vector<Expr>& elements() const { return elems_; }

private:
    std::vector<Expr> elems_;
};

// Element-wise arithmetic; a scalar operand applies to every element. Sizes must match.
Vec operator+(const Vec& a, const Vec& b);
Vec operator-(const Vec& a, const Vec& b);
Vec operator*(const Vec& a, const Vec& b);
Vec operator/(const Vec& a, const Vec& b);
Vec operator*(const Expr& s, const Vec& v);
Vec operator*(const Vec& v, const Expr& s);
Vec operator/(const Vec& v, const Expr& s);
Vec operator-(const Vec& v);

} // namespace loom
