// Constant weight matrices for nn::Dense, and their seeded initializers.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

namespace loom::nn {

/// A dense rows x cols matrix of doubles, row-major. For a layer's weights rows = outputs and
/// cols = inputs.
class Matrix {
public:
    Matrix() = default;
    /// Zeros. Throws UserError unless both sizes are positive.
    Matrix(int rows, int cols);
    /// `values` in row-major order; throws UserError unless it has rows * cols entries.
    Matrix(int rows, int cols, std::vector<double> values);
    /// Rows of equal length: Matrix{{1, 2}, {3, 4}}. Throws UserError on ragged or empty rows.
    Matrix(std::initializer_list<std::initializer_list<double>> rows);
    Matrix(const std::vector<std::vector<double>>& rows); // NOLINT: nested vectors are matrices

    int rows() const { return rows_; }
    int cols() const { return cols_; }
    double operator()(int i, int j) const { return values_[index(i, j)]; }
    double& operator()(int i, int j) { return values_[index(i, j)]; }
    /// Row-major values.
    const std::vector<double>& values() const { return values_; }

private:
    std::size_t index(int i, int j) const;
    int rows_ = 0, cols_ = 0;
    std::vector<double> values_;
};

// Seeded initializers for an out x in weight matrix, deterministic on every platform (a
// std::mt19937_64 with loom's own uniform and Box-Muller transforms, not the standard
// library's distributions).
/// Glorot/Xavier uniform: U(-a, a), a = sqrt(6 / (in + out)).
Matrix glorot_uniform(int out, int in, std::uint64_t seed);
/// Glorot/Xavier normal: N(0, s^2), s = sqrt(2 / (in + out)).
Matrix glorot_normal(int out, int in, std::uint64_t seed);
/// He/Kaiming uniform: U(-a, a), a = sqrt(6 / in).
Matrix he_uniform(int out, int in, std::uint64_t seed);
/// He/Kaiming normal: N(0, s^2), s = sqrt(2 / in).
Matrix he_normal(int out, int in, std::uint64_t seed);

} // namespace loom::nn
