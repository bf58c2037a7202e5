// Shared helpers of the GPU tests (tests/gpu/test_kernels.cpp, test_launch.cpp,
// test_runtime_errors.cpp, test_stress.cpp):
//
//   LOOM_REQUIRE_GPU()      skips the test with the driver's reason when no GPU is present
//   HostArray<T>            a host copy in logical C order, indexed a(i, j, k)
//   random_input<T>()       a DeviceArray<T>::random on the device plus the same values on the host
//   poisoned<T>()           an output filled with a bit pattern no kernel produces
//   check_output()          compares every cell with a CPU reference: written cells must match,
//                           all others must still hold the poison; names the first bad cell
//   simulate_launch()       the cells a launch covers, found by walking its thread grid
//   jacobi_kernel() ...     the DSL kernels several files use (variants of the golden kernels of
//                           tests/support/golden_kernels.hpp), with their CPU reference loops
//
// The references are independent hand-written loops over the host values; they never call loom's
// compiler or interpreter.
#pragma once

#include "tests/support/golden_kernels.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iomanip>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

/// Skips the current test, with the reason, on a machine without a usable CUDA driver.
#define LOOM_REQUIRE_GPU()                                                                         \
    do {                                                                                           \
        if (!::loom::cuda_available())                                                             \
            GTEST_SKIP() << ::loom::cuda_unavailable_reason();                                     \
    } while (0)

namespace loom::gpu_test {

/// `n` cycles of a stress or leak test, scaled by LOOM_STRESS_SCALE (default 1; tools/gpu-check
/// sets 0.02 under compute-sanitizer, where every launch is checked and costs milliseconds),
/// never fewer than `at_least`.
inline double stress_scale() {
    const char* s = std::getenv("LOOM_STRESS_SCALE");
    return s ? std::atof(s) : 1.0;
}
inline int stress_count(int n, int at_least = 50) {
    return std::max(at_least, static_cast<int>(n * stress_scale()));
}
/// Whether free device memory measures this process's leaks: not in a scaled-down run, which
/// tools/gpu-check makes under compute-sanitizer while other processes share the GPU (memcheck's
/// --leak-check full reports device leaks there instead).
inline bool device_memory_is_ours() { return stress_scale() >= 1.0; }

using Index = std::vector<std::int64_t>;

inline std::string index_string(const Index& index) {
    return shape_string(index);
}

// ---- Host arrays ----------------------------------------------------------------------------

/// Values in logical C order (last index fastest), as to_host() returns them whatever the memory
/// order on the device. Element access checks its bounds, so a wrong reference loop fails loudly.
template <typename T>
class HostArray {
public:
    HostArray() = default;
    HostArray(Shape shape, std::vector<T> values)
        : shape_(std::move(shape)), strides_(contiguous_strides(shape_, MemoryOrder::C)),
          values_(std::move(values)) {
        if (static_cast<std::int64_t>(values_.size()) != element_count(shape_))
            throw std::logic_error("HostArray: " + std::to_string(values_.size()) +
                                   " values for shape " + shape_string(shape_));
    }

    const Shape& shape() const { return shape_; }
    int ndim() const { return static_cast<int>(shape_.size()); }
    std::int64_t size() const { return static_cast<std::int64_t>(values_.size()); }
    const std::vector<T>& values() const { return values_; }

    /// The linear position of `index`; throws std::out_of_range outside the array.
    std::int64_t linear(const Index& index) const {
        if (index.size() != shape_.size())
            throw std::out_of_range("HostArray: index " + index_string(index) + " for shape " +
                                    shape_string(shape_));
        std::int64_t at = 0;
        for (std::size_t d = 0; d < index.size(); ++d) {
            if (index[d] < 0 || index[d] >= shape_[d])
                throw std::out_of_range("HostArray: index " + index_string(index) +
                                        " outside shape " + shape_string(shape_));
            at += index[d] * strides_[d];
        }
        return at;
    }
    const T& operator()(const Index& index) const {
        return values_[static_cast<std::size_t>(linear(index))];
    }
    template <typename... I, typename = std::enable_if_t<(std::is_integral_v<I> && ...)>>
    const T& operator()(I... index) const {
        return (*this)(Index{static_cast<std::int64_t>(index)...});
    }

private:
    Shape shape_, strides_;
    std::vector<T> values_;
};

/// The sub-box (offsets, box) of a host array, as a DeviceArray::view(offsets, box) sees it.
template <typename T>
HostArray<T> host_sub_box(const HostArray<T>& a, const Index& offsets, const Shape& box) {
    std::vector<T> out;
    out.reserve(static_cast<std::size_t>(element_count(box)));
    Index inner(box.size(), 0), outer(box.size(), 0);
    const std::int64_t n = element_count(box);
    for (std::int64_t k = 0; k < n; ++k) {
        std::int64_t rest = k;
        for (int d = static_cast<int>(box.size()) - 1; d >= 0; --d) {
            inner[d] = rest % box[d];
            rest /= box[d];
            outer[d] = offsets[d] + inner[d];
        }
        out.push_back(a(outer));
    }
    return HostArray<T>(box, std::move(out));
}

// ---- Inputs and poisoned outputs --------------------------------------------------------------

/// Default input values: positive for float32 (so stencil sums have no cancellation and a
/// relative tolerance of 1e-5 holds), signed for float64, small for integers (no overflow).
template <typename T>
Distribution default_distribution() {
    if constexpr (std::is_same_v<T, float>)
        return Uniform(0.25, 1.0);
    else if constexpr (std::is_floating_point_v<T>)
        return Uniform(-1.0, 1.0);
    else
        return Uniform(-1000, 1000);
}

/// A random device array and the same values on the host.
template <typename T>
struct Input {
    DeviceArray<T> device;
    HostArray<T> host;
};

/// DeviceArray<T>::random(shape, seed, dist, order); the host copy comes from random_values, the
/// documented source of those values, not from reading the device back.
template <typename T>
Input<T> random_input(const Shape& shape, std::uint64_t seed, MemoryOrder order = MemoryOrder::C,
                      const Distribution& dist = default_distribution<T>()) {
    Input<T> in;
    in.device = DeviceArray<T>::random(shape, seed, dist, order);
    in.host = HostArray<T>(shape, random_values<T>(element_count(shape), seed, dist));
    return in;
}

/// The poison: a quiet NaN with a payload (a computed NaN never has it) or 0x5A5A... for
/// integers. Cells are compared bit for bit against it.
template <typename T>
T poison() {
    T value;
    if constexpr (std::is_same_v<T, float>) {
        std::uint32_t bits = 0x7FC5A5A5u;
        std::memcpy(&value, &bits, sizeof value);
    } else if constexpr (std::is_same_v<T, double>) {
        std::uint64_t bits = 0x7FF85A5A5A5A5A5Aull;
        std::memcpy(&value, &bits, sizeof value);
    } else if constexpr (sizeof(T) == 4) {
        value = static_cast<T>(0x5A5A5A5A);
    } else {
        value = static_cast<T>(0x5A5A5A5A5A5A5A5Aull);
    }
    return value;
}

template <typename T>
bool is_poison(T value) {
    T p = poison<T>();
    return std::memcmp(&value, &p, sizeof(T)) == 0;
}

/// A device array of `shape` whose every element holds poison<T>() (uploaded from the host, so
/// the check does not depend on DeviceArray::fill).
template <typename T>
DeviceArray<T> poisoned(const Shape& shape, MemoryOrder order = MemoryOrder::C) {
    return DeviceArray<T>::from_host(
        std::vector<T>(static_cast<std::size_t>(element_count(shape)), poison<T>()), shape, order);
}

// ---- Comparison -------------------------------------------------------------------------------

/// |got - expected| <= abs + rel * |expected|.
struct Tolerance {
    double rel = 0.0, abs = 0.0;
};

/// float64 1e-12, float32 1e-5 (relative, with the same absolute floor), integers exact.
template <typename T>
Tolerance default_tolerance() {
    if constexpr (std::is_same_v<T, float>)
        return {1e-5, 1e-5};
    else if constexpr (std::is_floating_point_v<T>)
        return {1e-12, 1e-12};
    else
        return {0.0, 0.0};
}
/// For kernels built with fast_math (approximate exp, tanh, sqrt, division).
inline Tolerance fast_math_tolerance() {
    return {2e-3, 1e-6};
}

/// What one cell of an output must hold after a launch.
struct Cell {
    bool written = false;
    double value = 0.0;
    bool has_alternative = false;
    double alternative = 0.0; ///< a second right answer (a branch decided at a rounding boundary)

    static Cell untouched() { return {}; }
    static Cell of(double v) { return {true, v, false, 0.0}; }
    static Cell either(double v, double w) { return {true, v, true, w}; }
};

template <typename T>
bool close_to(T got, double expected, Tolerance tol) {
    if constexpr (std::is_floating_point_v<T>) {
        if (!std::isfinite(got))
            return false;
        return std::abs(static_cast<double>(got) - expected) <=
               tol.abs + tol.rel * std::abs(expected);
    } else {
        return static_cast<double>(got) == expected;
    }
}

template <typename T>
std::string value_string(T v) {
    if (is_poison(v))
        return "the poison";
    std::ostringstream s;
    s << std::setprecision(std::numeric_limits<T>::max_digits10) << v;
    return s.str();
}

/// Checks every cell of `got` (logical C order, `shape`) against `expected(index) -> Cell`:
/// written cells must be within `tol` of the reference, all others must hold the poison. The
/// failure message counts each kind of mismatch and lists the first ones with their indices.
template <typename T, typename Expected>
::testing::AssertionResult cells_match(const std::vector<T>& got, const Shape& shape,
                                       Expected&& expected,
                                       Tolerance tol = default_tolerance<T>()) {
    const std::int64_t n = element_count(shape);
    if (static_cast<std::int64_t>(got.size()) != n)
        return ::testing::AssertionFailure()
               << got.size() << " values for shape " << shape_string(shape);
    std::int64_t to_write = 0, wrong = 0, missing = 0, stray = 0;
    std::ostringstream first;
    int listed = 0;
    Index index(shape.size(), 0);
    for (std::int64_t k = 0; k < n; ++k) {
        const Cell cell = expected(static_cast<const Index&>(index));
        const T v = got[static_cast<std::size_t>(k)];
        std::string problem;
        if (cell.written) {
            ++to_write;
            if (is_poison(v)) {
                ++missing;
                problem = "still holds the poison, but the kernel must write it (expected " +
                          value_string(cell.value) + ")";
            } else if (!close_to(v, cell.value, tol) &&
                       !(cell.has_alternative && close_to(v, cell.alternative, tol))) {
                ++wrong;
                std::ostringstream s;
                s << std::setprecision(17) << "got " << value_string(v) << ", expected "
                  << cell.value;
                if (cell.has_alternative)
                    s << " or " << cell.alternative;
                s << " (difference " << std::abs(static_cast<double>(v) - cell.value) << ")";
                problem = s.str();
            }
        } else if (!is_poison(v)) {
            ++stray;
            problem = "got " + value_string(v) +
                      ", but the kernel must not write this cell (expected the poison)";
        }
        if (!problem.empty() && listed < 6) {
            first << "\n  cell " << index_string(index) << ": " << problem;
            ++listed;
        }
        for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
            if (++index[d] < shape[d])
                break;
            index[d] = 0;
        }
    }
    if (wrong + missing + stray == 0)
        return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << "shape " << shape_string(shape) << ", " << to_write << " cells to write: " << wrong
           << " wrong value(s), " << missing << " cell(s) not written, " << stray
           << " cell(s) written that must not be; the first:" << first.str();
}

/// The element type of a DeviceArray or DeviceView.
template <typename A>
using element_of = typename decltype(std::declval<const A&>().to_host())::value_type;

/// cells_match on a DeviceArray or DeviceView (copied to the host in logical C order).
template <typename A, typename Expected>
::testing::AssertionResult check_output(const A& array, Expected&& expected,
                                        Tolerance tol = default_tolerance<element_of<A>>()) {
    return cells_match(array.to_host(), array.shape(), std::forward<Expected>(expected), tol);
}

/// Every cell still holds the poison (nothing was written).
template <typename A>
::testing::AssertionResult all_poison(const A& array) {
    return check_output(array, [](const Index&) { return Cell::untouched(); });
}

// ---- Cell sets and thread-grid simulation -----------------------------------------------------

/// A set of cells of a shape; contains() looks at the first shape().size() entries of an index,
/// so a set over the spatial shape answers for the component indices of vector fields too.
class CellSet {
public:
    explicit CellSet(Shape shape)
        : shape_(std::move(shape)), in_(static_cast<std::size_t>(element_count(shape_)), 0) {}

    const Shape& shape() const { return shape_; }
    void insert(const Index& index) {
        char& c = in_[static_cast<std::size_t>(linear(index))];
        count_ += c == 0;
        c = 1;
    }
    bool contains(const Index& index) const {
        return in_[static_cast<std::size_t>(linear(index))] != 0;
    }
    std::int64_t count() const { return count_; }
    bool operator==(const CellSet& o) const { return shape_ == o.shape_ && in_ == o.in_; }
    bool operator!=(const CellSet& o) const { return !(*this == o); }

    /// Every cell for which pred(index) holds.
    template <typename Pred>
    static CellSet where(const Shape& shape, Pred&& pred) {
        CellSet s(shape);
        Index index(shape.size(), 0);
        for (std::int64_t k = 0, n = element_count(shape); k < n; ++k) {
            if (pred(static_cast<const Index&>(index)))
                s.insert(index);
            for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
                if (++index[d] < shape[d])
                    break;
                index[d] = 0;
            }
        }
        return s;
    }

private:
    std::int64_t linear(const Index& index) const {
        if (index.size() < shape_.size())
            throw std::out_of_range("CellSet: index " + index_string(index) + " for shape " +
                                    shape_string(shape_));
        std::int64_t at = 0;
        for (std::size_t d = 0; d < shape_.size(); ++d) {
            if (index[d] < 0 || index[d] >= shape_[d])
                throw std::out_of_range("CellSet: index " + index_string(index) +
                                        " outside shape " + shape_string(shape_));
            at = at * shape_[d] + index[d];
        }
        return at;
    }

    Shape shape_;
    std::vector<char> in_;
    std::int64_t count_ = 0;
};

/// The cells with ghost <= index < size - ghost along every axis.
inline CellSet interior(const Shape& shape, std::int64_t ghost) {
    return CellSet::where(shape, [&](const Index& i) {
        for (std::size_t d = 0; d < shape.size(); ++d)
            if (i[d] < ghost || i[d] >= shape[d] - ghost)
                return false;
        return true;
    });
}

/// Calls fn(gx, gy, gz) with the global thread index (blockIdx * blockDim + threadIdx) of every
/// thread of a launch.
template <typename Fn>
void for_each_thread(const Dim3& grid, const Dim3& block, Fn&& fn) {
    for (std::int64_t z = 0; z < grid[2] * block[2]; ++z)
        for (std::int64_t y = 0; y < grid[1] * block[1]; ++y)
            for (std::int64_t x = 0; x < grid[0] * block[0]; ++x)
                fn(x, y, z);
}

/// Which spatial axis block dimension x, y, z walks: the fastest memory axis of the primary
/// (first written) field goes to x. C layout: {D-1, D-2, D-3}; Fortran, SoA and AoS: {0, 1, 2}.
/// Axes no dimension walks (the slowest of 4D) are looped inside each thread.
inline std::vector<int> c_mapping(int spatial_dims) {
    std::vector<int> m;
    for (int d = 0; d < std::min(spatial_dims, 3); ++d)
        m.push_back(spatial_dims - 1 - d);
    return m;
}
inline std::vector<int> fortran_mapping(int spatial_dims) {
    std::vector<int> m;
    for (int d = 0; d < std::min(spatial_dims, 3); ++d)
        m.push_back(d);
    return m;
}

/// The cells a launch of (grid, block) writes for a kernel with uniform ghost layers `ghost`:
/// the counter of axis axis_of_dim[d] is ghost + the global index along d, and a thread works
/// when every mapped counter is below size - ghost (the generated guard). Threads of unused
/// dimensions repeat the same cells. A thread computes `cells[d]` consecutive cells along d
/// (the kernel's LaunchSpec::cells_per_thread), each with its own guard. With `lanes` > 1
/// (Schedule::vector_width) the groups of lanes along x start at the multiple of the lanes at
/// or below the first cell, as vectorize_lanes aligns them.
inline CellSet simulate_launch(const Shape& spatial, const std::vector<int>& axis_of_dim,
                               std::int64_t ghost, const Dim3& grid, const Dim3& block,
                               const Dim3& cells = {1, 1, 1}, int lanes = 1) {
    const int D = static_cast<int>(spatial.size());
    std::vector<bool> mapped(D, false);
    for (int a : axis_of_dim)
        mapped[a] = true;
    Index index(D, 0);
    CellSet out(spatial);
    for_each_thread(grid, block, [&](std::int64_t gx, std::int64_t gy, std::int64_t gz) {
        const std::int64_t g[3] = {gx, gy, gz};
        // Every combination of the thread's cells along each dimension.
        std::int64_t k[3] = {0, 0, 0};
        for (k[2] = 0; k[2] < cells[2]; ++k[2])
            for (k[1] = 0; k[1] < cells[1]; ++k[1])
                for (k[0] = 0; k[0] < cells[0]; ++k[0]) {
                    bool inside = true;
                    for (std::size_t d = 0; d < axis_of_dim.size(); ++d) {
                        const std::int64_t first = d == 0 && lanes > 1 ? ghost / lanes * lanes : ghost;
                        std::int64_t c = first + g[d] * cells[d] + k[d];
                        if (c < ghost || c >= spatial[axis_of_dim[d]] - ghost) inside = false; // the guard
                        index[axis_of_dim[d]] = c;
                    }
                    if (!inside) continue;
                    // Unmapped axes (at most the slowest one in 4D) are a loop in each thread.
                    bool looped = false;
                    for (int a = 0; a < D && !looped; ++a) {
                        if (mapped[a]) continue;
                        looped = true;
                        for (std::int64_t c = ghost; c < spatial[a] - ghost; ++c) {
                            index[a] = c;
                            out.insert(index);
                        }
                    }
                    if (!looped) out.insert(index);
                }
    });
    return out;
}

/// The extents a launch covers for `cells` cells from `ghost` on: lanes along x (`lanes` > 1)
/// start at the multiple of the lanes at or below the first cell, so x covers ghost % lanes more.
inline Dim3 lane_extents(Dim3 cells, std::int64_t ghost, int lanes) {
    if (lanes > 1) cells[0] += ghost % lanes;
    return cells;
}

/// Threads needed per dimension for `cells` cells: ceil(cells / cells_per_thread).
inline Dim3 threads_for(const Dim3& cells, const Dim3& per_thread) {
    Dim3 t{};
    for (int d = 0; d < 3; ++d) t[d] = (cells[d] + per_thread[d] - 1) / per_thread[d];
    return t;
}

/// ceil(extent / block) per dimension, as the runtime sizes an inferred grid.
inline Dim3 grid_for(const Dim3& extents, const Dim3& block) {
    Dim3 g{};
    for (int d = 0; d < 3; ++d)
        g[d] = extents[d] <= 0 ? 0 : (extents[d] + block[d] - 1) / block[d];
    return g;
}

inline std::string dim3_string(const Dim3& d) {
    return "(" + std::to_string(d[0]) + ", " + std::to_string(d[1]) + ", " + std::to_string(d[2]) +
           ")";
}

// ---- Kernels several files use, and their CPU references --------------------------------------

namespace golden = loom::test::golden;
using golden::cube_stencil;

/// One Jacobi sweep on 2D float32 fields (the golden "jacobi"), ghost layers 1.
inline Kernel jacobi_kernel(Layout layout = Layout::C, const std::string& name = "jacobi",
                            ScalarType index_type = ScalarType::Int64) {
    golden::GoldenKernel g = golden::jacobi_2d_f32(layout);
    g.config.name = name;
    g.config.index_type = index_type;
    return g.create();
}

template <typename T>
double jacobi_at(const HostArray<T>& src, std::int64_t i, std::int64_t j) {
    return 0.25 * (static_cast<double>(src(i + 1, j)) + static_cast<double>(src(i - 1, j)) +
                   static_cast<double>(src(i, j + 1)) + static_cast<double>(src(i, j - 1)));
}

/// The expected cells of a Jacobi output: the reference inside `cells`, the poison elsewhere.
/// `src` must outlive the returned function; `cells` is copied.
template <typename T>
std::function<Cell(const Index&)> jacobi_cells(const HostArray<T>& src, CellSet cells) {
    return [&src, cells = std::move(cells)](const Index& i) {
        return cells.contains(i) ? Cell::of(jacobi_at(src, i[0], i[1])) : Cell::untouched();
    };
}

/// The reference of cube_stencil(src, max_l1) at (i, j, k).
template <typename T>
double cube_stencil_at(const HostArray<T>& src, int max_l1, std::int64_t i, std::int64_t j,
                       std::int64_t k) {
    double sum = 0.0, coefficient = 0.5;
    for (int a = -1; a <= 1; ++a)
        for (int b = -1; b <= 1; ++b)
            for (int c = -1; c <= 1; ++c) {
                if (std::abs(a) + std::abs(b) + std::abs(c) > max_l1)
                    continue;
                sum += coefficient * static_cast<double>(src(i + a, j + b, k + c));
                coefficient += 0.125;
            }
    return sum;
}

/// The golden seven-point stencil on 3D float64 fields, ghost layers 1, with the index type
/// left automatic (the golden's is int64).
inline Kernel seven_point_kernel(Layout layout = Layout::C,
                                 const std::string& name = "seven_point") {
    golden::GoldenKernel g = golden::seven_point_3d_f64(layout);
    g.config.name = name;
    g.config.index_type.reset();
    return g.create();
}

/// `src` must outlive the returned function; `cells` is copied.
template <typename T>
std::function<Cell(const Index&)> cube_cells(const HostArray<T>& src, int max_l1, CellSet cells) {
    return [&src, cells = std::move(cells), max_l1](const Index& i) {
        return cells.contains(i) ? Cell::of(cube_stencil_at(src, max_l1, i[0], i[1], i[2]))
                                 : Cell::untouched();
    };
}

} // namespace loom::gpu_test
