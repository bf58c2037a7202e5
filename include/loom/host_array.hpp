// Host memory for Target::CPU kernels: HostArray<T> owns a buffer, HostView<T> looks at (part of)
// any host buffer, and host_view() wraps a pointer or a contiguous range (std::vector,
// std::array, std::span in C++20) with a shape. All of them convert to ArrayRef with
// is_device_memory = false, the argument kind a CPU kernel takes.
//
// Shapes and strides count elements. Vectors in and out are in the logical C order of the array
// or view (last index fastest), whatever the memory order, as for DeviceArray.
#pragma once

#include <loom/device_array.hpp>

#include <array>
#include <cstdint>
#include <iterator>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace loom {

namespace detail {
// Type-erased helpers (host_array.cpp); each throws UserError with the fix in the message.
void check_host_view(const Shape& shape, const Shape& strides);
/// Element offset of the sub-box (offsets, sub) of a box (shape, strides); throws unless it fits.
std::int64_t host_sub_box(const Shape& shape, const Shape& strides, const Shape& offsets,
                          const Shape& sub);
/// Element offset of one index; throws when it is outside the shape.
std::int64_t host_index(const Shape& shape, const Shape& strides, const Shape& index);
/// Throws when `shape` has more elements than one host allocation of `dtype` can hold (at most
/// `max_elements`, std::vector's max_size()).
void check_host_elements(const Shape& shape, DType dtype, std::size_t max_elements);
/// Throws when `count` values cannot fill `shape` (`what` names the call).
void check_value_count(std::size_t count, const Shape& shape, const char* what);
/// Throws when a stride-0 axis would make writes alias.
void check_host_writable(const Shape& shape, const Shape& strides);
/// Copies a strided box of `elem`-byte elements between two layouts.
void copy_host_box(const Shape& shape, const char* src, const Shape& src_strides, char* dst,
                   const Shape& dst_strides, std::size_t elem);
void fill_host_box(const Shape& shape, char* dst, const Shape& strides, const void* value,
                   std::size_t elem);
[[noreturn]] void host_view_mismatch(const ArrayRef& array, DType wanted, bool writable);
} // namespace detail

/// A non-owning view of host memory: {pointer to element (0, ..., 0), shape, strides}. The
/// memory must outlive the view. HostView<const T> is read-only (its ArrayRef says so, and
/// kernels refuse to write it).
template <typename T>
class HostView {
public:
    using value_type = std::remove_const_t<T>;

    HostView() = default;
    /// Throws UserError when shape and strides differ in length or an extent is negative.
    HostView(T* ptr, Shape shape, Shape strides)
        : ptr_(ptr), shape_(std::move(shape)), strides_(std::move(strides)) {
        detail::check_host_view(shape_, strides_);
    }
    /// A typed view of a type-erased array (a DLPack import, say); throws UserError unless it is
    /// host memory of type T (and writable, for a non-const T).
    explicit HostView(const ArrayRef& a)
        : HostView(reinterpret_cast<T*>(static_cast<std::uintptr_t>(a.ptr)), a.shape,
                   a.strides) {
        if (a.dtype != dtype_of<value_type>() || a.is_device_memory ||
            (a.read_only && !std::is_const_v<T>))
            detail::host_view_mismatch(a, dtype_of<value_type>(), !std::is_const_v<T>);
    }
    /// A writable view converts to a read-only one.
    template <typename U = T, typename = std::enable_if_t<std::is_const_v<U>>>
    HostView(const HostView<value_type>& v) // NOLINT: implicit, as T* to const T*
        : ptr_(v.data()), shape_(v.shape()), strides_(v.strides()) {}

    T* data() const { return ptr_; }
    const Shape& shape() const { return shape_; }
    const Shape& strides() const { return strides_; }
    int ndim() const { return static_cast<int>(shape_.size()); }
    std::int64_t size() const { return element_count(shape_); }
    bool is_c_contiguous() const { return loom::is_c_contiguous(shape_, strides_); }

    /// The sub-box starting at `offsets` with extents `shape`; throws UserError when it does not
    /// fit inside this view.
    HostView view(const Shape& offsets, const Shape& shape) const {
        return HostView(ptr_ + detail::host_sub_box(shape_, strides_, offsets, shape), shape,
                        strides_);
    }
    /// One element, bounds-checked: v.at({i, j}).
    T& at(const Shape& index) const { return ptr_[detail::host_index(shape_, strides_, index)]; }

    /// The elements in logical C order.
    std::vector<value_type> to_vector() const {
        std::vector<value_type> out(static_cast<std::size_t>(size()));
        detail::copy_host_box(shape_, reinterpret_cast<const char*>(ptr_), strides_,
                              reinterpret_cast<char*>(out.data()),
                              contiguous_strides(shape_, MemoryOrder::C), sizeof(T));
        return out;
    }
    /// Writes `values` (logical C order, size() of them) into the viewed elements only.
    void copy_from(const std::vector<value_type>& values) const {
        static_assert(!std::is_const_v<T>, "a HostView<const T> is read-only");
        detail::check_value_count(values.size(), shape_, "HostView::copy_from");
        detail::check_host_writable(shape_, strides_);
        detail::copy_host_box(shape_, reinterpret_cast<const char*>(values.data()),
                              contiguous_strides(shape_, MemoryOrder::C),
                              reinterpret_cast<char*>(ptr_), strides_, sizeof(T));
    }
    /// Sets every viewed element to `value`.
    void fill(value_type value) const {
        static_assert(!std::is_const_v<T>, "a HostView<const T> is read-only");
        detail::fill_host_box(shape_, reinterpret_cast<char*>(ptr_), strides_, &value, sizeof(T));
    }

    ArrayRef ref() const {
        ArrayRef a;
        a.ptr = static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(ptr_));
        a.dtype = dtype_of<value_type>();
        a.shape = shape_;
        a.strides = strides_;
        a.device = 0;
        a.is_device_memory = false;
        a.read_only = std::is_const_v<T>;
        return a;
    }
    operator ArrayRef() const { return ref(); } // NOLINT: arrays convert to arguments

private:
    T* ptr_ = nullptr;
    Shape shape_, strides_;
};

/// An owning, compact array in host memory (C or Fortran order), backed by a std::vector. T is
/// float, double, std::int32_t or std::int64_t. Copies are deep; a moved-from array is empty.
template <typename T>
class HostArray {
public:
    using value_type = T;

    HostArray() = default; ///< holds nothing
    HostArray(const HostArray&) = default;
    HostArray& operator=(const HostArray&) = default;
    HostArray(HostArray&& other) noexcept { *this = std::move(other); }
    HostArray& operator=(HostArray&& other) noexcept {
        if (this != &other) {
            data_ = std::move(other.data_);
            shape_ = std::move(other.shape_);
            strides_ = std::move(other.strides_);
            order_ = other.order_;
            other.data_.clear();
            other.shape_.clear();
            other.strides_.clear();
        }
        return *this;
    }

    static HostArray zeros(const Shape& shape, MemoryOrder order = MemoryOrder::C) {
        HostArray a;
        detail::check_host_elements(shape, dtype_of<T>(), a.data_.max_size());
        a.data_.assign(static_cast<std::size_t>(element_count(shape)), T{});
        a.shape_ = shape;
        a.strides_ = contiguous_strides(shape, order);
        a.order_ = order;
        return a;
    }
    /// Zeros in column-major order.
    static HostArray fortran(const Shape& shape) { return zeros(shape, MemoryOrder::Fortran); }
    /// Deterministic pseudo-random values: the same as DeviceArray<T>::random for equal
    /// arguments (see random_values).
    static HostArray random(const Shape& shape, std::uint64_t seed = 0,
                            const Distribution& dist = Uniform(),
                            MemoryOrder order = MemoryOrder::C) {
        return from_vector(random_values<T>(element_count(shape), seed, dist), shape, order);
    }
    /// `values` in logical C order; `order` chooses the memory order only.
    static HostArray from_vector(const std::vector<T>& values, const Shape& shape,
                                 MemoryOrder order = MemoryOrder::C) {
        detail::check_value_count(values.size(), shape, "HostArray::from_vector");
        HostArray a = zeros(shape, order);
        if (order == MemoryOrder::C)
            a.data_ = values;
        else
            a.view().copy_from(values);
        return a;
    }
    /// The same as from_vector, named as DeviceArray's factory so code can switch between them.
    static HostArray from_host(const std::vector<T>& values, const Shape& shape,
                               MemoryOrder order = MemoryOrder::C) {
        return from_vector(values, shape, order);
    }

    /// The elements in logical C order (to_host is the same, named as DeviceArray's).
    std::vector<T> to_vector() const { return view().to_vector(); }
    std::vector<T> to_host() const { return to_vector(); }
    void copy_from(const std::vector<T>& values) { view().copy_from(values); }
    void fill(T value) { view().fill(value); }

    T* data() { return data_.data(); }
    const T* data() const { return data_.data(); }
    const Shape& shape() const { return shape_; }
    const Shape& strides() const { return strides_; }
    MemoryOrder order() const { return order_; }
    int ndim() const { return static_cast<int>(shape_.size()); }
    std::int64_t size() const { return element_count(shape_); }
    std::size_t bytes() const { return data_.size() * sizeof(T); }

    HostView<T> view() { return HostView<T>(data_.data(), shape_, strides_); }
    HostView<const T> view() const { return HostView<const T>(data_.data(), shape_, strides_); }
    HostView<T> view(const Shape& offsets, const Shape& shape) {
        return view().view(offsets, shape);
    }
    HostView<const T> view(const Shape& offsets, const Shape& shape) const {
        return view().view(offsets, shape);
    }
    T& at(const Shape& index) { return view().at(index); }
    const T& at(const Shape& index) const { return view().at(index); }

    /// Writable even from a const array, as DeviceArray's: args() takes its arguments by const
    /// reference. Pass host_view(...) of const data for a read-only argument.
    ArrayRef ref() const {
        return HostView<T>(const_cast<T*>(data_.data()), shape_, strides_).ref();
    }
    operator ArrayRef() const { return ref(); } // NOLINT: arrays convert to arguments

private:
    std::vector<T> data_;
    Shape shape_, strides_;
    MemoryOrder order_ = MemoryOrder::C;
};

/// A compact view of `ptr` with `shape` in the given memory order.
template <typename T>
HostView<T> host_view(T* ptr, Shape shape, MemoryOrder order = MemoryOrder::C) {
    Shape strides = contiguous_strides(shape, order);
    return HostView<T>(ptr, std::move(shape), std::move(strides));
}

namespace detail {
template <typename R>
struct owns_elements : std::false_type {};
template <typename T, typename A>
struct owns_elements<std::vector<T, A>> : std::true_type {};
template <typename T, std::size_t N>
struct owns_elements<std::array<T, N>> : std::true_type {};
} // namespace detail

/// A compact view of a contiguous range (anything with data() and size(): std::vector,
/// std::array, std::span) with `shape`; the range must hold exactly the shape's element count.
/// A const range gives a read-only view. The range must outlive the view, so temporary
/// containers are refused at compile time (a temporary std::span is fine: it owns nothing).
template <typename Range, typename = decltype(std::data(std::declval<Range&>())),
          typename = decltype(std::size(std::declval<Range&>()))>
auto host_view(Range&& range, Shape shape, MemoryOrder order = MemoryOrder::C) {
    using Container = std::remove_cv_t<std::remove_reference_t<Range>>;
    static_assert(std::is_lvalue_reference_v<Range> || !detail::owns_elements<Container>::value,
                  "host_view of a temporary container would dangle; name the container first");
    detail::check_value_count(static_cast<std::size_t>(std::size(range)), shape, "host_view");
    return host_view(std::data(range), std::move(shape), order);
}

} // namespace loom
