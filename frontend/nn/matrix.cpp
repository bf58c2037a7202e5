#include <loom/nn/matrix.hpp>

#include <loom/errors.hpp>

#include <fmt/format.h>

#include <cmath>
#include <random>

namespace loom::nn {

namespace {
void check_sizes(int rows, int cols) {
    if (rows <= 0 || cols <= 0)
        throw UserError(fmt::format("nn::Matrix: a {} x {} matrix; both sizes must be positive",
                                    rows, cols));
}
} // namespace

Matrix::Matrix(int rows, int cols) : rows_(rows), cols_(cols) {
    check_sizes(rows, cols);
    values_.assign(static_cast<std::size_t>(rows) * cols, 0.0);
}

Matrix::Matrix(int rows, int cols, std::vector<double> values)
    : rows_(rows), cols_(cols), values_(std::move(values)) {
    check_sizes(rows, cols);
    if (values_.size() != static_cast<std::size_t>(rows) * cols)
        throw UserError(fmt::format("nn::Matrix: {} values for a {} x {} matrix; it needs {}",
                                    values_.size(), rows, cols,
                                    static_cast<std::size_t>(rows) * cols));
}

Matrix::Matrix(std::initializer_list<std::initializer_list<double>> rows)
    : Matrix(std::vector<std::vector<double>>(rows.begin(), rows.end())) {}

Matrix::Matrix(const std::vector<std::vector<double>>& rows) {
    if (rows.empty() || rows[0].empty())
        throw UserError("nn::Matrix: the matrix is empty; it needs at least one row and column");
    rows_ = static_cast<int>(rows.size());
    cols_ = static_cast<int>(rows[0].size());
    for (int i = 0; i < rows_; ++i) {
        if (static_cast<int>(rows[i].size()) != cols_)
            throw UserError(fmt::format("nn::Matrix: row {} has {} entries but row 0 has {}; "
                                        "all rows need the same length",
                                        i, rows[i].size(), cols_));
        values_.insert(values_.end(), rows[i].begin(), rows[i].end());
    }
}

std::size_t Matrix::index(int i, int j) const {
    if (i < 0 || i >= rows_ || j < 0 || j >= cols_)
        throw UserError(fmt::format("nn::Matrix: element ({}, {}) is outside the {} x {} matrix",
                                    i, j, rows_, cols_));
    return static_cast<std::size_t>(i) * cols_ + j;
}

namespace {
/// Uniform in [0, 1) from the top 53 bits.
double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

Matrix uniform(int out, int in, std::uint64_t seed, double limit) {
    Matrix m(out, in);
    std::mt19937_64 rng(seed);
    for (int i = 0; i < out; ++i)
        for (int j = 0; j < in; ++j) m(i, j) = (2.0 * uniform01(rng) - 1.0) * limit;
    return m;
}

Matrix normal(int out, int in, std::uint64_t seed, double stddev) {
    Matrix m(out, in);
    std::mt19937_64 rng(seed);
    for (int i = 0; i < out; ++i)
        for (int j = 0; j < in; ++j) {
            // Box-Muller; one value per pair of uniforms keeps the sequence simple.
            const double u1 = 1.0 - uniform01(rng), u2 = uniform01(rng); // u1 in (0, 1]
            m(i, j) = stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
        }
    return m;
}
} // namespace

Matrix glorot_uniform(int out, int in, std::uint64_t seed) {
    check_sizes(out, in);
    return uniform(out, in, seed, std::sqrt(6.0 / (in + out)));
}
Matrix glorot_normal(int out, int in, std::uint64_t seed) {
    check_sizes(out, in);
    return normal(out, in, seed, std::sqrt(2.0 / (in + out)));
}
Matrix he_uniform(int out, int in, std::uint64_t seed) {
    check_sizes(out, in);
    return uniform(out, in, seed, std::sqrt(6.0 / in));
}
Matrix he_normal(int out, int in, std::uint64_t seed) {
    check_sizes(out, in);
    return normal(out, in, seed, std::sqrt(2.0 / in));
}

} // namespace loom::nn
