// Device memory: DeviceArray<T> owns an allocation, DeviceView<T> looks at (part of) one, and
// ArrayRef is the type-erased description that both (and DLPack tensors) convert to, so that
// kernel launches validate every kind of argument the same way.
//
// Shapes and strides count elements, never bytes. Host vectors are always in the logical C order
// of the array or view (last index fastest), whatever the memory order on the device.
// Copies are synchronous and ordered with the legacy default stream.
#pragma once

#include <loom/detail/cuda_types.hpp>
#include <loom/device.hpp>
#include <loom/half.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace loom {

using Shape = std::vector<std::int64_t>;

/// Element types of arrays at run time. The same set as the compiler's ScalarType; DeviceArray
/// holds the four types kernels use today, DLPack imports may carry the others.
enum class DType : std::uint8_t { Bool, Int32, Int64, Float16, BFloat16, Float32, Float64 };

std::string_view dtype_name(DType t); ///< "float32", "int64", ...
std::size_t dtype_size(DType t);      ///< bytes per element

template <typename T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<float>() { return DType::Float32; }
template <>
constexpr DType dtype_of<double>() { return DType::Float64; }
template <>
constexpr DType dtype_of<std::int32_t>() { return DType::Int32; }
template <>
constexpr DType dtype_of<std::int64_t>() { return DType::Int64; }
template <>
constexpr DType dtype_of<half>() { return DType::Float16; }
template <>
constexpr DType dtype_of<bfloat16>() { return DType::BFloat16; }

/// Memory order of a freshly allocated array. (Named apart from the compiler's Layout, which also
/// knows SoA and AoS, so the two never collide in namespace loom.)
enum class MemoryOrder : std::uint8_t {
    C,       ///< row-major: last axis fastest
    Fortran, ///< column-major: first axis fastest
};

/// Number of elements; throws UserError on a negative extent or overflow.
std::int64_t element_count(const Shape& shape);
/// Compact strides of `shape` in the given order.
Shape contiguous_strides(const Shape& shape, MemoryOrder order);
/// Compact in C (or Fortran) order; axes of extent 1 may have any stride, as in numpy.
bool is_c_contiguous(const Shape& shape, const Shape& strides);
bool is_f_contiguous(const Shape& shape, const Shape& strides);
/// "[4, 5]"
std::string shape_string(const Shape& shape);

/// A type-erased, non-owning description of an array argument.
struct ArrayRef {
    CUdeviceptr ptr = 0; ///< address of element (0, ..., 0); a host address for host memory
    DType dtype = DType::Float32;
    Shape shape;
    Shape strides; ///< in elements; may be negative or zero
    int device = 0; ///< CUDA device ordinal (meaningful for device memory)
    bool is_device_memory = true;
    bool read_only = false; ///< kernels must not write it (DLPack's READ_ONLY flag)

    int ndim() const { return static_cast<int>(shape.size()); }
    std::int64_t size() const { return element_count(shape); }
    bool is_c_contiguous() const { return loom::is_c_contiguous(shape, strides); }
    bool is_f_contiguous() const { return loom::is_f_contiguous(shape, strides); }
    /// "float32[4, 5] strides [5, 1] on cuda:0", for messages.
    std::string describe() const;
};

/// Uniformly distributed values: floats in [lo, hi), integers in [ceil(lo), floor(hi)].
struct Uniform {
    double lo, hi;
    constexpr Uniform(double lo_ = 0.0, double hi_ = 1.0) : lo(lo_), hi(hi_) {}
};
/// Normally distributed values (rounded to the nearest integer for integer arrays).
struct Normal {
    double mean, stddev;
    constexpr Normal(double mean_ = 0.0, double stddev_ = 1.0) : mean(mean_), stddev(stddev_) {}
};
using Distribution = std::variant<Uniform, Normal>;

/// The values DeviceArray::random puts on the device, in logical C order: a std::mt19937_64
/// stream turned into values by loom's own code, so equal seeds give equal arrays everywhere.
template <typename T>
std::vector<T> random_values(std::int64_t count, std::uint64_t seed, const Distribution& dist);

/// A non-owning view of device memory: {pointer to element (0, ..., 0), shape, strides, device}.
/// The memory must outlive the view. Building a view never touches the driver.
template <typename T>
class DeviceView {
public:
    DeviceView() = default;
    /// Throws UserError when shape and strides differ in length or an extent is negative.
    DeviceView(CUdeviceptr ptr, Shape shape, Shape strides, int device = 0);
    /// A typed view of a type-erased array; throws UserError unless it holds device memory of
    /// type T.
    explicit DeviceView(const ArrayRef& array);

    CUdeviceptr data() const { return ptr_; }
    const Shape& shape() const { return shape_; }
    const Shape& strides() const { return strides_; }
    int device() const { return device_; }
    int ndim() const { return static_cast<int>(shape_.size()); }
    std::int64_t size() const { return element_count(shape_); }
    bool is_c_contiguous() const { return loom::is_c_contiguous(shape_, strides_); }

    /// The sub-box starting at `offsets` with extents `shape`; throws UserError when it does not
    /// fit inside this view.
    DeviceView view(const Shape& offsets, const Shape& shape) const;

    /// The elements in logical C order. A strided view copies the memory span that covers it and
    /// gathers on the host.
    std::vector<T> to_host() const;
    /// Writes `values` (logical C order, size() of them) into the viewed elements only.
    void copy_from_host(const std::vector<T>& values) const;
    /// Sets every viewed element to `value`.
    void fill(T value) const;

    ArrayRef ref() const;
    operator ArrayRef() const { return ref(); }

private:
    CUdeviceptr ptr_ = 0;
    Shape shape_, strides_;
    int device_ = 0;
};

/// An owning, move-only, compact array in device memory (C or Fortran order), freed on
/// destruction. T is float, double, std::int32_t or std::int64_t.
template <typename T>
class DeviceArray {
public:
    using value_type = T;

    DeviceArray() = default; ///< holds nothing
    ~DeviceArray();
    DeviceArray(DeviceArray&& other) noexcept;
    DeviceArray& operator=(DeviceArray&& other) noexcept;
    DeviceArray(const DeviceArray&) = delete;
    DeviceArray& operator=(const DeviceArray&) = delete;

    /// Allocates without initializing. All factories throw CudaError without a driver.
    static DeviceArray uninitialized(const Shape& shape, MemoryOrder order = MemoryOrder::C,
                                     int device = 0);
    static DeviceArray zeros(const Shape& shape, MemoryOrder order = MemoryOrder::C,
                             int device = 0);
    /// Zeros in column-major order.
    static DeviceArray fortran(const Shape& shape, int device = 0);
    /// Deterministic pseudo-random values (see random_values), generated on the host.
    static DeviceArray random(const Shape& shape, std::uint64_t seed = 0,
                              const Distribution& dist = Uniform(),
                              MemoryOrder order = MemoryOrder::C, int device = 0);
    /// `values` in logical C order; `order` chooses the memory order on the device only.
    static DeviceArray from_host(const std::vector<T>& values, const Shape& shape,
                                 MemoryOrder order = MemoryOrder::C, int device = 0);

    std::vector<T> to_host() const { return view().to_host(); }
    void copy_from_host(const std::vector<T>& values) { view().copy_from_host(values); }
    void fill(T value) { view().fill(value); }

    CUdeviceptr data() const { return ptr_; }
    const Shape& shape() const { return shape_; }
    const Shape& strides() const { return strides_; }
    MemoryOrder order() const { return order_; }
    int device() const { return device_; }
    int ndim() const { return static_cast<int>(shape_.size()); }
    std::int64_t size() const { return element_count(shape_); }
    std::size_t bytes() const { return static_cast<std::size_t>(size()) * sizeof(T); }

    DeviceView<T> view() const { return DeviceView<T>(ptr_, shape_, strides_, device_); }
    DeviceView<T> view(const Shape& offsets, const Shape& shape) const {
        return view().view(offsets, shape);
    }

    ArrayRef ref() const { return view().ref(); }
    operator ArrayRef() const { return ref(); }

    /// Gives up ownership and leaves this array empty; the caller frees the returned memory
    /// (detail::free_device_memory). Used by DLPack export.
    CUdeviceptr release();

private:
    CUdeviceptr ptr_ = 0;
    Shape shape_, strides_;
    MemoryOrder order_ = MemoryOrder::C;
    int device_ = 0;
};

namespace detail {
/// cuMemFree on `device`'s context; never throws (used by destructors and DLPack deleters).
void free_device_memory(CUdeviceptr ptr, int device) noexcept;
} // namespace detail

// Defined in device_array.cpp for exactly these types.
extern template class DeviceView<float>;
extern template class DeviceView<double>;
extern template class DeviceView<std::int32_t>;
extern template class DeviceView<std::int64_t>;
extern template class DeviceArray<float>;
extern template class DeviceArray<double>;
extern template class DeviceArray<std::int32_t>;
extern template class DeviceArray<std::int64_t>;
extern template class DeviceView<half>;
extern template class DeviceView<bfloat16>;
extern template class DeviceArray<half>;
extern template class DeviceArray<bfloat16>;

} // namespace loom
