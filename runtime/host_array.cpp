// The type-erased parts of HostView / HostArray: checks with their messages, strided copies.
#include <loom/host_array.hpp>

#include <loom/errors.hpp>

#include <fmt/format.h>

#include <cstring>

namespace loom::detail {

namespace {

/// Calls fn(offset_a, offset_b) for every element of the box in C order, where the offsets are
/// element offsets in two layouts of it. Scalars (ndim 0) are one element.
template <typename Fn>
void for_each_element(const Shape& shape, const Shape& a, const Shape& b, Fn&& fn) {
    if (element_count(shape) == 0) return;
    const int nd = static_cast<int>(shape.size());
    if (nd == 0) {
        fn(0, 0);
        return;
    }
    std::vector<std::int64_t> index(nd, 0);
    std::int64_t oa = 0, ob = 0;
    const std::int64_t inner = shape[nd - 1], sa = a[nd - 1], sb = b[nd - 1];
    while (true) {
        for (std::int64_t i = 0; i < inner; ++i) fn(oa + i * sa, ob + i * sb);
        int d = nd - 2;
        for (; d >= 0; --d) {
            if (++index[d] < shape[d]) {
                oa += a[d];
                ob += b[d];
                break;
            }
            oa -= (shape[d] - 1) * a[d];
            ob -= (shape[d] - 1) * b[d];
            index[d] = 0;
        }
        if (d < 0) return;
    }
}

/// offset + extent for messages, where it may overflow.
std::string box_end(std::int64_t offset, std::int64_t extent) {
    std::int64_t end = 0;
    return __builtin_add_overflow(offset, extent, &end) ? std::string("beyond 2^63")
                                                        : std::to_string(end);
}

} // namespace

void check_host_view(const Shape& shape, const Shape& strides) {
    if (shape.size() != strides.size())
        throw UserError(fmt::format("a HostView needs one stride per axis: shape {} has {} axes, "
                                    "strides {} has {}.",
                                    shape_string(shape), shape.size(), shape_string(strides),
                                    strides.size()));
    element_count(shape); // rejects negative extents
}

std::int64_t host_sub_box(const Shape& shape, const Shape& strides, const Shape& offsets,
                          const Shape& sub) {
    const std::size_t nd = shape.size();
    if (offsets.size() != nd || sub.size() != nd)
        throw UserError(fmt::format("sub-view of a {}-D view needs {} offsets and {} extents; got "
                                    "offsets {} and shape {}.",
                                    nd, nd, nd, shape_string(offsets), shape_string(sub)));
    std::int64_t shift = 0;
    for (std::size_t d = 0; d < nd; ++d) {
        // Compared as sub > shape - offset: offset + sub may overflow (a huge offset wrapped
        // to a pointer before the array).
        if (offsets[d] < 0 || sub[d] < 0 || sub[d] > shape[d] - offsets[d])
            throw UserError(fmt::format(
                "sub-view (offsets {}, shape {}) does not fit in the view of shape {}: axis {} "
                "covers [{}, {}) but the view has [0, {}).\n"
                "  fix: keep offsets >= 0 and offsets + shape <= the view's shape.",
                shape_string(offsets), shape_string(sub), shape_string(shape), d, offsets[d],
                box_end(offsets[d], sub[d]), shape[d]));
        shift += offsets[d] * strides[d];
    }
    return shift;
}

std::int64_t host_index(const Shape& shape, const Shape& strides, const Shape& index) {
    if (index.size() != shape.size())
        throw UserError(fmt::format("index {} has {} entries, but the array of shape {} has {} "
                                    "axes.\n"
                                    "  fix: pass one index per axis, each in [0, extent).",
                                    shape_string(index), index.size(), shape_string(shape),
                                    shape.size()));
    bool inside = true;
    std::int64_t offset = 0;
    for (std::size_t d = 0; inside && d < shape.size(); ++d) {
        inside = index[d] >= 0 && index[d] < shape[d];
        offset += index[d] * strides[d];
    }
    if (!inside)
        throw UserError(fmt::format("index {} is outside the array of shape {}.\n"
                                    "  fix: pass one index per axis, each in [0, extent).",
                                    shape_string(index), shape_string(shape)));
    return offset;
}

void check_host_elements(const Shape& shape, DType dtype, std::size_t max_elements) {
    const std::int64_t n = element_count(shape); // rejects negative extents and overflow
    if (static_cast<std::uint64_t>(n) > max_elements)
        throw UserError(fmt::format("HostArray<{}> of shape {} has {} elements, more than one host "
                                    "allocation can hold ({} elements of {} bytes).\n"
                                    "  fix: check the shape; split the data into smaller arrays.",
                                    dtype_name(dtype), shape_string(shape), n, max_elements,
                                    dtype_size(dtype)));
}

void check_value_count(std::size_t count, const Shape& shape, const char* what) {
    if (static_cast<std::int64_t>(count) != element_count(shape))
        throw UserError(fmt::format("{}: got {} values for shape {} ({} elements).\n"
                                    "  fix: pass exactly one value per element, in C order "
                                    "(last index fastest).",
                                    what, count, shape_string(shape), element_count(shape)));
}

void check_host_writable(const Shape& shape, const Shape& strides) {
    for (std::size_t a = 0; a < shape.size(); ++a)
        if (strides[a] == 0 && shape[a] > 1)
            throw UserError(fmt::format(
                "cannot write into a view with stride 0 along axis {} (shape {}, strides {}): "
                "its elements alias each other.\n"
                "  fix: write into the array the view was made from.",
                a, shape_string(shape), shape_string(strides)));
}

void copy_host_box(const Shape& shape, const char* src, const Shape& src_strides, char* dst,
                   const Shape& dst_strides, std::size_t elem) {
    const auto e = static_cast<std::int64_t>(elem);
    if (element_count(shape) == 0) return;
    if (is_c_contiguous(shape, src_strides) && is_c_contiguous(shape, dst_strides)) {
        std::memcpy(dst, src, static_cast<std::size_t>(element_count(shape)) * elem);
        return;
    }
    for_each_element(shape, src_strides, dst_strides, [&](std::int64_t s, std::int64_t d) {
        std::memcpy(dst + d * e, src + s * e, elem);
    });
}

void fill_host_box(const Shape& shape, char* dst, const Shape& strides, const void* value,
                   std::size_t elem) {
    const auto e = static_cast<std::int64_t>(elem);
    for_each_element(shape, strides, strides,
                     [&](std::int64_t d, std::int64_t) { std::memcpy(dst + d * e, value, elem); });
}

void host_view_mismatch(const ArrayRef& a, DType wanted, bool writable) {
    std::string want = fmt::format("{}{} in host memory", writable ? "writable " : "",
                                   dtype_name(wanted));
    throw UserError(fmt::format("cannot view {} as a HostView<{}{}>: expected {}.\n"
                                "  fix: {}",
                                a.describe(), writable ? "" : "const ", dtype_name(wanted), want,
                                a.is_device_memory
                                    ? "copy device memory to the host first (to_host())."
                                : a.read_only ? "view read-only memory as HostView<const T>."
                                              : "convert the array to that type first."));
}

} // namespace loom::detail
