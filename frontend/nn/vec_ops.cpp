#include <loom/nn/vec_ops.hpp>

#include <loom/errors.hpp>

#include <fmt/format.h>

namespace loom {

Vec slice(const Vec& v, int begin, int end) {
    const int n = v.size();
    const int b = begin < 0 ? begin + n : begin, e = end < 0 ? end + n : end;
    if (b < 0 || e > n || b >= e)
        throw UserError(fmt::format("slice({}, {}) of a vector with {} elements is {}; it needs "
                                    "0 <= begin < end <= {} (negative indices count from the end)",
                                    begin, end, n, b >= e ? "empty" : "out of range", n));
    const auto& el = v.elements();
    return Vec(std::vector<Expr>(el.begin() + b, el.begin() + e));
}

Vec concat(const Vec& a, const Vec& b) {
    std::vector<Expr> out = a.elements();
    out.insert(out.end(), b.elements().begin(), b.elements().end());
    return Vec(std::move(out));
}

} // namespace loom
