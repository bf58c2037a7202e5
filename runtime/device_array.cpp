// DeviceArray / DeviceView: allocation, strided host <-> device copies and random values.
#include <loom/device_array.hpp>

#include "runtime/driver.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>

namespace loom {

// ---- Types and shapes -------------------------------------------------------------------------

std::string_view dtype_name(DType t) {
    switch (t) {
    case DType::Bool: return "bool";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::Float16: return "float16";
    case DType::BFloat16: return "bfloat16";
    case DType::Float32: return "float32";
    case DType::Float64: return "float64";
    }
    return "unknown";
}

std::size_t dtype_size(DType t) {
    switch (t) {
    case DType::Bool: return 1;
    case DType::Float16:
    case DType::BFloat16: return 2;
    case DType::Int32:
    case DType::Float32: return 4;
    case DType::Int64:
    case DType::Float64: return 8;
    }
    return 0;
}

std::int64_t element_count(const Shape& shape) {
    std::int64_t n = 1;
    for (std::size_t d = 0; d < shape.size(); ++d) {
        if (shape[d] < 0) {
            throw UserError(fmt::format("array shape {} has a negative extent at axis {}.\n"
                                        "  fix: every extent must be 0 or more.",
                                        shape_string(shape), d));
        }
        if (__builtin_mul_overflow(n, shape[d], &n)) {
            throw UserError(fmt::format("array shape {} has more elements than fit in 64 bits.",
                                        shape_string(shape)));
        }
    }
    return n;
}

Shape contiguous_strides(const Shape& shape, MemoryOrder order) {
    Shape strides(shape.size());
    std::int64_t step = 1;
    for (std::size_t i = 0; i < shape.size(); ++i) {
        std::size_t d = order == MemoryOrder::C ? shape.size() - 1 - i : i;
        strides[d] = step;
        step *= std::max<std::int64_t>(shape[d], 1);
    }
    return strides;
}

namespace {
/// Uploads and fills may still be in flight when the call returns (pageable copies return once
/// staged; memsets are asynchronous). Waiting here means a launch on any stream, even a
/// non-blocking one, sees the data.
void settle() { check(driver().cuStreamSynchronize(nullptr), "cuStreamSynchronize(after an upload)"); }
} // namespace

namespace {

bool compact(const Shape& shape, const Shape& strides, bool c_order) {
    if (shape.size() != strides.size()) return false;
    std::int64_t expected = 1;
    for (std::size_t i = 0; i < shape.size(); ++i) {
        std::size_t d = c_order ? shape.size() - 1 - i : i;
        if (shape[d] == 0) return true; // nothing is stored
        if (shape[d] != 1 && strides[d] != expected) return false;
        expected *= shape[d];
    }
    return true;
}

} // namespace

bool is_c_contiguous(const Shape& shape, const Shape& strides) {
    return compact(shape, strides, true);
}
bool is_f_contiguous(const Shape& shape, const Shape& strides) {
    return compact(shape, strides, false);
}

std::string shape_string(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

std::string ArrayRef::describe() const {
    std::string where = is_device_memory ? fmt::format("cuda:{}", device) : std::string("host");
    return fmt::format("{}{} strides {} on {}{}", dtype_name(dtype), shape_string(shape),
                       shape_string(strides), where, read_only ? " (read-only)" : "");
}

// ---- Strided copies ---------------------------------------------------------------------------

namespace {

// The element offsets [first, first + count) that a strided box touches, relative to its origin.
struct Span {
    std::int64_t first = 0, count = 0;
};

Span covering_span(const Shape& shape, const Shape& strides) {
    if (element_count(shape) == 0) return {};
    std::int64_t lo = 0, hi = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) {
        std::int64_t reach = (shape[d] - 1) * strides[d];
        (reach < 0 ? lo : hi) += reach;
    }
    return {lo, hi - lo + 1};
}

// Calls row(linear index, element offset) for each innermost row of the box, in C order.
// Scalars (ndim 0) are one row of one element.
template <typename Fn>
void for_each_row(const Shape& shape, const Shape& strides, Fn&& row) {
    const int nd = static_cast<int>(shape.size());
    if (nd == 0) {
        row(0, 0);
        return;
    }
    const std::int64_t row_len = shape[nd - 1];
    std::vector<std::int64_t> index(nd, 0);
    std::int64_t linear = 0, offset = 0;
    while (true) {
        row(linear, offset);
        linear += row_len;
        int d = nd - 2;
        for (; d >= 0; --d) {
            if (++index[d] < shape[d]) {
                offset += strides[d];
                break;
            }
            offset -= (shape[d] - 1) * strides[d];
            index[d] = 0;
        }
        if (d < 0) return;
    }
}

CUdeviceptr advance(CUdeviceptr ptr, std::int64_t elements, std::size_t elem) {
    // Unsigned wrap-around makes negative offsets work.
    return ptr + static_cast<CUdeviceptr>(elements * static_cast<std::int64_t>(elem));
}

// Moves a box between a host buffer in logical C order (`host`) and a host copy of the span
// that covers it (`span_buf`, whose element 0 is at offset span.first).
void gather_scatter(const Shape& shape, const Shape& strides, std::size_t elem, Span span,
                    char* span_buf, char* host, bool gather) {
    const std::int64_t inner_len = shape.empty() ? 1 : shape.back();
    const std::int64_t inner_stride = shape.empty() ? 1 : strides.back();
    for_each_row(shape, strides, [&](std::int64_t linear, std::int64_t offset) {
        char* h = host + linear * elem;
        char* s = span_buf + (offset - span.first) * static_cast<std::int64_t>(elem);
        if (inner_stride == 1) {
            std::size_t n = static_cast<std::size_t>(inner_len) * elem;
            gather ? std::memcpy(h, s, n) : std::memcpy(s, h, n);
            return;
        }
        for (std::int64_t i = 0; i < inner_len; ++i) {
            char* si = s + i * inner_stride * static_cast<std::int64_t>(elem);
            char* hi = h + i * static_cast<std::int64_t>(elem);
            gather ? std::memcpy(hi, si, elem) : std::memcpy(si, hi, elem);
        }
    });
}

void copy_box_to_host(CUdeviceptr ptr, const Shape& shape, const Shape& strides, int device,
                      std::size_t elem, void* out) {
    const std::int64_t n = element_count(shape);
    if (n == 0) return;
    Context::current(device);
    Driver& d = driver();
    if (is_c_contiguous(shape, strides)) {
        check(d.cuMemcpyDtoH(out, ptr, static_cast<std::size_t>(n) * elem),
              fmt::format("cuMemcpyDtoH({} bytes from device {})", n * elem, device));
        return;
    }
    Span span = covering_span(shape, strides);
    std::vector<char> buf(static_cast<std::size_t>(span.count) * elem);
    check(d.cuMemcpyDtoH(buf.data(), advance(ptr, span.first, elem), buf.size()),
          fmt::format("cuMemcpyDtoH({} bytes covering a strided view on device {})", buf.size(),
                      device));
    gather_scatter(shape, strides, elem, span, buf.data(), static_cast<char*>(out), true);
}

void copy_box_from_host(CUdeviceptr ptr, const Shape& shape, const Shape& strides, int device,
                        std::size_t elem, const void* in) {
    const std::int64_t n = element_count(shape);
    if (n == 0) return;
    for (std::size_t a = 0; a < shape.size(); ++a) {
        if (strides[a] == 0 && shape[a] > 1) {
            throw UserError(fmt::format(
                "cannot write into a view with stride 0 along axis {} (shape {}, strides {}): "
                "its elements alias each other.\n"
                "  fix: write into the array the view was made from.",
                a, shape_string(shape), shape_string(strides)));
        }
    }
    Context::current(device);
    Driver& d = driver();
    if (is_c_contiguous(shape, strides)) {
        check(d.cuMemcpyHtoD(ptr, in, static_cast<std::size_t>(n) * elem),
              fmt::format("cuMemcpyHtoD({} bytes to device {})", n * elem, device));
        settle();
        return;
    }
    // Read the covering span first so that the elements between the viewed ones keep their
    // values; a Fortran-compact box has no such gaps.
    Span span = covering_span(shape, strides);
    std::vector<char> buf(static_cast<std::size_t>(span.count) * elem);
    CUdeviceptr base = advance(ptr, span.first, elem);
    if (!is_f_contiguous(shape, strides)) {
        check(d.cuMemcpyDtoH(buf.data(), base, buf.size()),
              fmt::format("cuMemcpyDtoH({} bytes covering a strided view on device {})",
                          buf.size(), device));
    }
    gather_scatter(shape, strides, elem, span, buf.data(),
                   const_cast<char*>(static_cast<const char*>(in)), false);
    check(d.cuMemcpyHtoD(base, buf.data(), buf.size()),
          fmt::format("cuMemcpyHtoD({} bytes covering a strided view on device {})", buf.size(),
                      device));
    settle();
}

// Fills a compact range with cuMemset where the bit pattern allows it (the caller settles).
template <typename T>
bool memset_fill(CUdeviceptr ptr, std::int64_t n, T value) {
    Driver& d = driver();
    if constexpr (sizeof(T) == 2) {
        std::uint16_t bits;
        std::memcpy(&bits, &value, 2);
        check(d.cuMemsetD16(ptr, bits, static_cast<std::size_t>(n)), "cuMemsetD16");
        settle();
        return true;
    } else if constexpr (sizeof(T) == 4) {
        std::uint32_t bits;
        std::memcpy(&bits, &value, 4);
        check(d.cuMemsetD32(ptr, bits, static_cast<std::size_t>(n)), "cuMemsetD32");
        settle();
        return true;
    } else {
        std::uint32_t halves[2];
        std::memcpy(halves, &value, 8);
        if (halves[0] != halves[1]) return false;
        check(d.cuMemsetD32(ptr, halves[0], static_cast<std::size_t>(n) * 2), "cuMemsetD32");
        settle();
        return true;
    }
}

/// offset + extent for messages, where it may overflow.
std::string box_end(std::int64_t offset, std::int64_t extent) {
    std::int64_t end = 0;
    return __builtin_add_overflow(offset, extent, &end) ? std::string("beyond 2^63")
                                                        : std::to_string(end);
}

} // namespace

// ---- DeviceView -------------------------------------------------------------------------------

template <typename T>
DeviceView<T>::DeviceView(CUdeviceptr ptr, Shape shape, Shape strides, int device)
    : ptr_(ptr), shape_(std::move(shape)), strides_(std::move(strides)), device_(device) {
    if (shape_.size() != strides_.size()) {
        throw UserError(fmt::format("a DeviceView needs one stride per axis: shape {} has {} "
                                    "axes, strides {} has {}.",
                                    shape_string(shape_), shape_.size(), shape_string(strides_),
                                    strides_.size()));
    }
    element_count(shape_); // rejects negative extents
}

template <typename T>
DeviceView<T>::DeviceView(const ArrayRef& a) : DeviceView(a.ptr, a.shape, a.strides, a.device) {
    if (a.dtype != dtype_of<T>() || !a.is_device_memory) {
        throw UserError(fmt::format("cannot view {} as a DeviceView<{}>: expected {} in device "
                                    "memory.\n"
                                    "  fix: convert or copy the array to that type and device "
                                    "first.",
                                    a.describe(), dtype_name(dtype_of<T>()),
                                    dtype_name(dtype_of<T>())));
    }
}

template <typename T>
DeviceView<T> DeviceView<T>::view(const Shape& offsets, const Shape& shape) const {
    if (offsets.size() != shape_.size() || shape.size() != shape_.size()) {
        throw UserError(fmt::format("sub-view of a {}-D view needs {} offsets and {} extents; "
                                    "got offsets {} and shape {}.",
                                    ndim(), ndim(), ndim(), shape_string(offsets),
                                    shape_string(shape)));
    }
    std::int64_t shift = 0;
    for (std::size_t d = 0; d < shape.size(); ++d) {
        // Compared as shape > shape_ - offset: offset + shape may overflow.
        if (offsets[d] < 0 || shape[d] < 0 || shape[d] > shape_[d] - offsets[d]) {
            throw UserError(fmt::format(
                "sub-view (offsets {}, shape {}) does not fit in the view of shape {}: axis {} "
                "covers [{}, {}) but the view has [0, {}).\n"
                "  fix: keep offsets >= 0 and offsets + shape <= the view's shape.",
                shape_string(offsets), shape_string(shape), shape_string(shape_), d, offsets[d],
                box_end(offsets[d], shape[d]), shape_[d]));
        }
        shift += offsets[d] * strides_[d];
    }
    return DeviceView(advance(ptr_, shift, sizeof(T)), shape, strides_, device_);
}

template <typename T>
std::vector<T> DeviceView<T>::to_host() const {
    std::vector<T> out(static_cast<std::size_t>(size()));
    copy_box_to_host(ptr_, shape_, strides_, device_, sizeof(T), out.data());
    return out;
}

template <typename T>
void DeviceView<T>::copy_from_host(const std::vector<T>& values) const {
    if (static_cast<std::int64_t>(values.size()) != size()) {
        throw UserError(fmt::format("copy_from_host: got {} values for a view of shape {} ({} "
                                    "elements).\n"
                                    "  fix: pass exactly one value per element, in C order.",
                                    values.size(), shape_string(shape_), size()));
    }
    copy_box_from_host(ptr_, shape_, strides_, device_, sizeof(T), values.data());
}

template <typename T>
void DeviceView<T>::fill(T value) const {
    const std::int64_t n = size();
    if (n == 0) return;
    if (is_c_contiguous() || loom::is_f_contiguous(shape_, strides_)) {
        Context::current(device_);
        // A compact box starts at its lowest address, which is ptr_ for non-negative strides.
        Span span = covering_span(shape_, strides_);
        if (memset_fill(advance(ptr_, span.first, sizeof(T)), n, value)) return;
    }
    copy_from_host(std::vector<T>(static_cast<std::size_t>(n), value));
}

template <typename T>
ArrayRef DeviceView<T>::ref() const {
    ArrayRef a;
    a.ptr = ptr_;
    a.dtype = dtype_of<T>();
    a.shape = shape_;
    a.strides = strides_;
    a.device = device_;
    a.is_device_memory = true;
    return a;
}

// ---- DeviceArray ------------------------------------------------------------------------------

void detail::free_device_memory(CUdeviceptr ptr, int device) noexcept {
    if (!ptr) return;
    try {
        Context::get(device).make_current();
        driver().cuMemFree(ptr); // nothing sensible to do with an error during cleanup
    } catch (...) {
    }
}

template <typename T>
DeviceArray<T>::~DeviceArray() {
    detail::free_device_memory(ptr_, device_);
}

template <typename T>
DeviceArray<T>::DeviceArray(DeviceArray&& other) noexcept
    : ptr_(other.ptr_), shape_(std::move(other.shape_)), strides_(std::move(other.strides_)),
      order_(other.order_), device_(other.device_) {
    other.ptr_ = 0;
    other.shape_.clear();
    other.strides_.clear();
}

template <typename T>
DeviceArray<T>& DeviceArray<T>::operator=(DeviceArray&& other) noexcept {
    if (this != &other) {
        detail::free_device_memory(ptr_, device_);
        ptr_ = other.ptr_;
        shape_ = std::move(other.shape_);
        strides_ = std::move(other.strides_);
        order_ = other.order_;
        device_ = other.device_;
        other.ptr_ = 0;
        other.shape_.clear();
        other.strides_.clear();
    }
    return *this;
}

template <typename T>
DeviceArray<T> DeviceArray<T>::uninitialized(const Shape& shape, MemoryOrder order, int device) {
    const std::int64_t n = element_count(shape);
    // The context first, even for empty arrays, so that a missing driver is reported the same
    // way for every shape.
    Context::current(device);
    DeviceArray a;
    a.shape_ = shape;
    a.strides_ = contiguous_strides(shape, order);
    a.order_ = order;
    a.device_ = device;
    if (n == 0) return a; // cuMemAlloc rejects 0 bytes
    if (static_cast<std::uint64_t>(n) > std::numeric_limits<std::size_t>::max() / sizeof(T)) {
        throw UserError(fmt::format("array shape {} needs more bytes than fit in size_t.",
                                    shape_string(shape)));
    }
    const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(T);
    check(driver().cuMemAlloc(&a.ptr_, bytes),
          fmt::format("cuMemAlloc({} bytes for a {}{} array on device {})", bytes,
                      dtype_name(dtype_of<T>()), shape_string(shape), device));
    return a;
}

template <typename T>
DeviceArray<T> DeviceArray<T>::zeros(const Shape& shape, MemoryOrder order, int device) {
    DeviceArray a = uninitialized(shape, order, device);
    if (a.ptr_) {
        check(driver().cuMemsetD8(a.ptr_, 0, a.bytes()),
              fmt::format("cuMemsetD8({} bytes on device {})", a.bytes(), device));
    }
    return a;
}

template <typename T>
DeviceArray<T> DeviceArray<T>::fortran(const Shape& shape, int device) {
    return zeros(shape, MemoryOrder::Fortran, device);
}

template <typename T>
DeviceArray<T> DeviceArray<T>::random(const Shape& shape, std::uint64_t seed,
                                      const Distribution& dist, MemoryOrder order, int device) {
    return from_host(random_values<T>(element_count(shape), seed, dist), shape, order, device);
}

template <typename T>
DeviceArray<T> DeviceArray<T>::from_host(const std::vector<T>& values, const Shape& shape,
                                         MemoryOrder order, int device) {
    if (static_cast<std::int64_t>(values.size()) != element_count(shape)) {
        throw UserError(fmt::format("DeviceArray::from_host: got {} values for shape {} ({} "
                                    "elements).\n"
                                    "  fix: pass exactly one value per element, in C order "
                                    "(last index fastest).",
                                    values.size(), shape_string(shape), element_count(shape)));
    }
    DeviceArray a = uninitialized(shape, order, device);
    a.view().copy_from_host(values);
    return a;
}

template <typename T>
CUdeviceptr DeviceArray<T>::release() {
    CUdeviceptr p = ptr_;
    ptr_ = 0;
    shape_.clear();
    strides_.clear();
    return p;
}

// ---- Random values ----------------------------------------------------------------------------

namespace {

// [0, 1) with 53 random bits, independent of the standard library's distributions (whose
// algorithms differ between implementations).
double unit(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

// The high 64 bits of a 64 x 64-bit product.
std::uint64_t mul_high(std::uint64_t a, std::uint64_t b) {
    __extension__ typedef unsigned __int128 u128;
    return static_cast<std::uint64_t>((static_cast<u128>(a) * b) >> 64);
}

// 2^(bits - 1): integers of type T lie in [-limit, limit), and the bound is exact as a double.
template <typename T>
constexpr double kIntLimit = static_cast<double>(std::uint64_t{1} << (8 * sizeof(T) - 1));

} // namespace

template <typename T>
std::vector<T> random_numbers(std::int64_t count, std::uint64_t seed, const Distribution& dist) {
    std::vector<T> out(static_cast<std::size_t>(count));
    std::mt19937_64 rng(seed);
    if (const auto* u = std::get_if<Uniform>(&dist)) {
        if constexpr (!std::is_integral_v<T>) {
            if (!(u->lo < u->hi) || !std::isfinite(u->hi - u->lo)) {
                throw UserError(fmt::format("Uniform({}, {}): expected finite bounds with lo < "
                                            "hi.",
                                            u->lo, u->hi));
            }
            for (T& v : out) {
                v = static_cast<T>(u->lo + (u->hi - u->lo) * unit(rng));
                if (v >= static_cast<T>(u->hi)) v = std::nextafter(static_cast<T>(u->hi), T(u->lo));
            }
        } else {
            const double lo = std::ceil(u->lo), hi = std::floor(u->hi);
            if (!(lo <= hi) || lo < -kIntLimit<T> || hi >= kIntLimit<T>) {
                throw UserError(fmt::format("Uniform({}, {}) for {}: expected at least one "
                                            "integer in [lo, hi], within the type's range.",
                                            u->lo, u->hi, dtype_name(dtype_of<T>())));
            }
            const auto first = static_cast<std::int64_t>(lo);
            // Unsigned arithmetic: the width of [INT64_MIN, INT64_MAX] does not fit in int64.
            const std::uint64_t range = static_cast<std::uint64_t>(static_cast<std::int64_t>(hi)) -
                                        static_cast<std::uint64_t>(first) + 1;
            for (T& v : out) {
                // Multiply-shift maps 64 random bits onto [0, range); range 0 means all 2^64.
                std::uint64_t r = rng();
                std::uint64_t k = range == 0 ? r : mul_high(r, range);
                // In unsigned arithmetic too: first + k fits T, but k may not fit int64.
                v = static_cast<T>(static_cast<std::int64_t>(static_cast<std::uint64_t>(first) + k));
            }
        }
        return out;
    }
    const Normal& nd = std::get<Normal>(dist);
    if (!(nd.stddev >= 0) || !std::isfinite(nd.mean) || !std::isfinite(nd.stddev)) {
        throw UserError(fmt::format("Normal({}, {}): expected a finite mean and a finite "
                                    "standard deviation >= 0.",
                                    nd.mean, nd.stddev));
    }
    // Box-Muller, both outputs used.
    const double two_pi = 6.283185307179586476925;
    for (std::size_t i = 0; i < out.size(); i += 2) {
        double u1 = 1.0 - unit(rng); // (0, 1]: log stays finite
        double u2 = unit(rng);
        double r = std::sqrt(-2.0 * std::log(u1));
        double z[2] = {r * std::cos(two_pi * u2), r * std::sin(two_pi * u2)};
        for (std::size_t j = 0; j < 2 && i + j < out.size(); ++j) {
            double v = nd.mean + nd.stddev * z[j];
            if constexpr (!std::is_integral_v<T>) {
                out[i + j] = static_cast<T>(v);
            } else {
                // Saturate: out-of-range conversions are undefined behaviour.
                const double top = std::nextafter(kIntLimit<T>, 0.0);
                out[i + j] = static_cast<T>(std::llround(std::clamp(v, -kIntLimit<T>, top)));
            }
        }
    }
    return out;
}

template <typename T>
std::vector<T> random_values(std::int64_t count, std::uint64_t seed, const Distribution& dist) {
    if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
        // The float values, rounded; a value that rounds up to Uniform's open upper bound
        // steps to the next code below it.
        const std::vector<float> wide = random_numbers<float>(count, seed, dist);
        std::vector<T> out(wide.begin(), wide.end());
        if (const auto* u = std::get_if<Uniform>(&dist))
            for (T& v : out)
                if (float(v) >= u->hi)
                    v = T::from_bits(std::uint16_t(v.bits & 0x8000 ? v.bits + 1 : v.bits == 0 ? 0x8001 : v.bits - 1));
        return out;
    } else {
        return random_numbers<T>(count, seed, dist);
    }
}

#define LOOM_INSTANTIATE(T)                                                                        \
    template class DeviceView<T>;                                                                  \
    template class DeviceArray<T>;                                                                 \
    template std::vector<T> random_values<T>(std::int64_t, std::uint64_t, const Distribution&);
LOOM_INSTANTIATE(float)
LOOM_INSTANTIATE(double)
LOOM_INSTANTIATE(std::int32_t)
LOOM_INSTANTIATE(std::int64_t)
LOOM_INSTANTIATE(half) // 16-bit floats: random_values rounds floats (see above)
LOOM_INSTANTIATE(bfloat16)
#undef LOOM_INSTANTIATE

} // namespace loom
