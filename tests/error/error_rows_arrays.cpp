// Error table rows: host arrays and views, and the device-side types up to the point where they
// would need a driver (shapes, counts, views of an address), so that no row depends on a GPU.
#include "tests/error/error_rows.hpp"

#include <loom/loom.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

namespace loom::test {

namespace {
/// A device view of an address that is never dereferenced: building views needs no driver.
DeviceView<float> fake_device_view() {
    return DeviceView<float>(0x10000, {4, 4}, {4, 1});
}
} // namespace

std::vector<ErrorRow> array_rows() {
    const auto U = Expect::User;
    return {
        // ---- HostArray ----
        {"host_array_negative_extent",
         [] {
             HostArray<float>::zeros({3, -1});
         },
         U,
         {"array shape [3, -1] has a negative extent at axis 1", "0 or more"}},
        {"host_array_element_count_overflow",
         [] {
             HostArray<float>::zeros({std::int64_t(1) << 40, std::int64_t(1) << 40});
         },
         U,
         {"array shape [1099511627776, 1099511627776]", "more elements than fit in 64 bits"}},
        {"host_array_beyond_one_allocation",
         [] { HostArray<float>::zeros({std::int64_t(1) << 62}); },
         U,
         {"HostArray<float32> of shape [4611686018427387904]",
          "more than one host allocation can hold", "check the shape"}},
        {"host_array_from_vector_count",
         [] {
             HostArray<float>::from_vector({1, 2, 3}, {2, 2});
         },
         U,
         {"HostArray::from_vector: got 3 values for shape [2, 2] (4 elements)",
          "one value per element"}},
        {"host_array_random_lo_above_hi",
         [] { HostArray<float>::random({4}, 1, Uniform(1, 0)); },
         U,
         {"Uniform(1, 0)", "finite bounds with lo < hi"}},
        {"host_array_random_nan_bound",
         [] { HostArray<double>::random({4}, 1, Uniform(std::nan(""), 1)); },
         U,
         {"Uniform(nan, 1)", "finite bounds"}},
        {"host_array_random_no_integer_in_range",
         [] { HostArray<std::int32_t>::random({4}, 1, Uniform(0.2, 0.8)); },
         U,
         {"Uniform(0.2, 0.8) for int32", "at least one integer in [lo, hi]"}},
        {"host_array_random_negative_stddev",
         [] { HostArray<float>::random({4}, 1, Normal(0, -1)); },
         U,
         {"Normal(0, -1)", "standard deviation >= 0"}},
        {"host_array_index_outside",
         [] {
             HostArray<float>::zeros({2, 3}).at({2, 0});
         },
         U,
         {"index [2, 0] is outside the array of shape [2, 3]", "each in [0, extent)"}},
        {"host_array_index_arity",
         [] {
             HostArray<float>::zeros({4, 4}).at({1});
         },
         U,
         {"index [1] has 1 entries", "the array of shape [4, 4] has 2 axes", "one index per axis"}},
        // ---- HostView ----
        {"host_view_value_count",
         [] {
             std::vector<float> v(6);
             host_view(v, {2, 2});
         },
         U,
         {"host_view: got 6 values for shape [2, 2] (4 elements)"}},
        {"host_view_stride_count",
         [] {
             std::vector<float> v(6);
             HostView<float>(v.data(), {2, 3}, {3});
         },
         U,
         {"a HostView needs one stride per axis", "shape [2, 3] has 2 axes", "strides [3] has 1"}},
        {"host_view_negative_extent",
         [] {
             std::vector<float> v(4);
             HostView<float>(v.data(), {-1}, {1});
         },
         U,
         {"array shape [-1] has a negative extent at axis 0"}},
        {"host_sub_view_outside",
         [] {
             HostArray<float>::zeros({2, 3}).view({1, 1}, {2, 2});
         },
         U,
         {"sub-view (offsets [1, 1], shape [2, 2]) does not fit in the view of shape [2, 3]",
          "axis 0 covers [1, 3)", "offsets + shape <= the view's shape"}},
        {"host_sub_view_offset_overflow",
         [] {
             HostArray<float>::zeros({4, 4}).view({INT64_MAX, 0}, {1, 1});
         },
         U,
         {"sub-view (offsets [9223372036854775807, 0], shape [1, 1]) does not fit",
          "covers [9223372036854775807, beyond 2^63)"}},
        {"host_sub_view_negative_offset",
         [] { HostArray<float>::zeros({4}).view({-1}, {2}); },
         U,
         {"sub-view (offsets [-1], shape [2]) does not fit", "keep offsets >= 0"}},
        {"host_sub_view_arity",
         [] {
             HostArray<float>::zeros({4, 4}).view({0}, {1});
         },
         U,
         {"sub-view of a 2-D view needs 2 offsets and 2 extents", "got offsets [0] and shape [1]"}},
        {"host_view_copy_into_zero_stride",
         [] {
             std::vector<float> v(4);
             HostView<float>(v.data(), {4}, {0}).copy_from({1, 2, 3, 4});
         },
         U,
         {"cannot write into a view with stride 0 along axis 0", "alias each other",
          "write into the array the view was made from"}},
        {"host_view_copy_value_count",
         [] {
             std::vector<float> v(4);
             host_view(v, {4}).copy_from({1, 2});
         },
         U,
         {"HostView::copy_from: got 2 values for shape [4] (4 elements)"}},
        {"host_view_of_device_memory",
         [] {
             ArrayRef device = HostArray<float>::zeros({2, 3}).ref();
             device.is_device_memory = true;
             HostView<float>{device};
         },
         U,
         {"cannot view", "as a HostView<float32>", "copy device memory to the host"}},
        {"host_view_of_another_type",
         [] { HostView<double>{HostArray<float>::zeros({3}).ref()}; },
         U,
         {"cannot view", "expected writable float64"}},
        {"host_view_writable_of_read_only",
         [] {
             ArrayRef frozen = HostArray<float>::zeros({3}).ref();
             frozen.read_only = true;
             HostView<float>{frozen};
         },
         U,
         {"(read-only)", "HostView<const T>"}},
        // ---- DeviceView and DeviceArray: everything here is refused before the driver ----
        {"device_view_stride_count",
         [] {
             DeviceView<float>(0x10000, {2}, {1, 1});
         },
         U,
         {"a DeviceView needs one stride per axis", "shape [2] has 1 axes",
          "strides [1, 1] has 2"}},
        {"device_view_negative_extent",
         [] {
             DeviceView<float>(0x10000, {2, -3}, {3, 1});
         },
         U,
         {"array shape [2, -3] has a negative extent at axis 1"}},
        {"device_view_of_host_memory",
         [] { DeviceView<float>{HostArray<float>::zeros({4}).ref()}; },
         U,
         {"cannot view float32[4] strides [1] on host as a DeviceView<float32>",
          "expected float32 in device memory"}},
        {"device_view_of_another_type",
         [] {
             ArrayRef r = fake_device_view().ref();
             r.dtype = DType::Float64;
             DeviceView<float>{r};
         },
         U,
         {"cannot view float64[4, 4]", "as a DeviceView<float32>", "convert or copy"}},
        {"device_sub_view_outside",
         [] {
             fake_device_view().view({3, 0}, {2, 4});
         },
         U,
         {"sub-view (offsets [3, 0], shape [2, 4]) does not fit in the view of shape [4, 4]",
          "axis 0 covers [3, 5)"}},
        {"device_sub_view_offset_overflow",
         [] {
             fake_device_view().view({0, INT64_MAX}, {1, 1});
         },
         U,
         {"does not fit in the view of shape [4, 4]", "axis 1 covers [9223372036854775807, "
                                                      "beyond 2^63)"}},
        {"device_view_copy_value_count",
         [] {
             fake_device_view().copy_from_host({1, 2, 3});
         },
         U,
         {"copy_from_host: got 3 values for a view of shape [4, 4] (16 elements)",
          "one value per element"}},
        {"device_array_negative_extent",
         [] {
             DeviceArray<float>::zeros({-2, 4});
         },
         U,
         {"array shape [-2, 4] has a negative extent at axis 0"}},
        {"device_array_from_host_count",
         [] {
             DeviceArray<double>::from_host({1, 2, 3}, {2, 2});
         },
         U,
         {"DeviceArray::from_host: got 3 values for shape [2, 2] (4 elements)"}},
        {"device_array_random_bad_distribution",
         [] { DeviceArray<float>::random({4}, 1, Normal(0, std::nan(""))); },
         U,
         {"Normal(0, nan)", "finite standard deviation"}},
    };
}

} // namespace loom::test
