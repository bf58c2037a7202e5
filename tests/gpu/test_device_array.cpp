// DeviceArray, DeviceView, contexts and DLPack on a real device. Every test skips without one.
#include "runtime/driver.hpp"
#include "tests/support/expect_error.hpp"

#include <loom/device_array.hpp>
#include <loom/dlpack.hpp>
#include <loom/errors.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace loom {
namespace {

// Distinct, exactly representable values 0, 1, 2, ... in logical C order.
template <typename T>
std::vector<T> iota_values(std::int64_t n) {
    std::vector<T> v(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = static_cast<T>(i);
    return v;
}

// The sub-box (offsets, box) of a C-ordered host array of `shape`, in C order.
template <typename T>
std::vector<T> host_box(const std::vector<T>& full, const Shape& shape, const Shape& offsets,
                        const Shape& box) {
    std::vector<T> out;
    const Shape strides = contiguous_strides(shape, MemoryOrder::C);
    Shape index(box.size(), 0);
    const std::int64_t n = element_count(box);
    for (std::int64_t k = 0; k < n; ++k) {
        std::int64_t rest = k, off = 0;
        for (int d = static_cast<int>(box.size()) - 1; d >= 0; --d) {
            index[d] = rest % box[d];
            rest /= box[d];
            off += (offsets[d] + index[d]) * strides[d];
        }
        out.push_back(full[static_cast<std::size_t>(off)]);
    }
    return out;
}

TEST(DeviceContext, PropertiesAndCurrentInEveryThread) {
    if (!loom::cuda_available()) GTEST_SKIP() << loom::cuda_unavailable_reason();
    EXPECT_GE(driver().version(), 12000);
    EXPECT_GE(driver().device_count(), 1);
    Context& ctx = Context::current();
    const DeviceProperties& p = ctx.properties();
    EXPECT_FALSE(p.name.empty());
    EXPECT_GE(p.compute_capability(), 50);
    EXPECT_EQ(p.warp_size, 32);
    EXPECT_GE(p.max_threads_per_block, 512);
    EXPECT_GE(p.max_block_dims[0], 512);
    EXPECT_GE(p.max_grid_dims[0], 65535);
    EXPECT_GE(p.max_shared_memory_per_block, 48 * 1024);
    EXPECT_GE(p.max_shared_memory_per_block_optin, p.max_shared_memory_per_block);
    EXPECT_GT(p.multiprocessor_count, 0);
    EXPECT_GT(p.total_memory, 0u);
    EXPECT_EQ(&Context::get(0), &ctx); // retained once

    CUcontext seen = nullptr;
    std::thread worker([&] {
        Context::current();
        driver().cuCtxGetCurrent(&seen);
    });
    worker.join();
    EXPECT_EQ(seen, ctx.handle());
    LOOM_EXPECT_ERROR(Context::get(4096), UserError, {"CUDA device 4096 does not exist"});
}

template <typename T>
class DeviceArrayTyped : public ::testing::Test {};
using ElementTypes = ::testing::Types<float, double, std::int32_t, std::int64_t>;
TYPED_TEST_SUITE(DeviceArrayTyped, ElementTypes);

TYPED_TEST(DeviceArrayTyped, ZerosAndFill) {
    if (!loom::cuda_available()) GTEST_SKIP() << loom::cuda_unavailable_reason();
    using T = TypeParam;
    auto a = DeviceArray<T>::zeros({3, 5, 7});
    EXPECT_NE(a.data(), 0u);
    EXPECT_EQ(a.size(), 105);
    EXPECT_EQ(a.bytes(), 105 * sizeof(T));
    EXPECT_EQ(a.strides(), (Shape{35, 7, 1}));
    EXPECT_EQ(a.to_host(), std::vector<T>(105, T(0)));
    a.fill(T(3));
    EXPECT_EQ(a.to_host(), std::vector<T>(105, T(3)));
    a.fill(T(-1)); // for doubles: halves differ, so this takes the host path
    EXPECT_EQ(a.to_host(), std::vector<T>(105, T(-1)));
    a.view({1, 1, 1}, {1, 2, 3}).fill(T(7));
    std::vector<T> expected(105, T(-1));
    for (int j = 1; j < 3; ++j)
        for (int k = 1; k < 4; ++k) expected[35 + j * 7 + k] = T(7);
    EXPECT_EQ(a.to_host(), expected);
}

TYPED_TEST(DeviceArrayTyped, FromHostRoundTripsInBothOrders) {
    if (!loom::cuda_available()) GTEST_SKIP() << loom::cuda_unavailable_reason();
    using T = TypeParam;
    const Shape shape{4, 3, 5};
    const std::vector<T> values = iota_values<T>(60);
    auto c = DeviceArray<T>::from_host(values, shape);
    EXPECT_EQ(c.to_host(), values);
    auto f = DeviceArray<T>::from_host(values, shape, MemoryOrder::Fortran);
    EXPECT_EQ(f.order(), MemoryOrder::Fortran);
    EXPECT_EQ(f.strides(), (Shape{1, 4, 12}));
    EXPECT_EQ(f.to_host(), values); // host vectors are in logical C order either way
    // The memory really is column-major: element (i, j, k) lies at i + 4 j + 12 k.
    std::vector<T> raw = DeviceView<T>(f.data(), {60}, {1}).to_host();
    for (std::int64_t i = 0; i < 4; ++i)
        for (std::int64_t j = 0; j < 3; ++j)
            for (std::int64_t k = 0; k < 5; ++k)
                ASSERT_EQ(raw[i + 4 * j + 12 * k], values[i * 15 + j * 5 + k]);
}

TYPED_TEST(DeviceArrayTyped, RandomIsDeterministic) {
    if (!loom::cuda_available()) GTEST_SKIP() << loom::cuda_unavailable_reason();
    using T = TypeParam;
    auto a = DeviceArray<T>::random({64, 33}, 42, Uniform(-100, 100));
    auto b = DeviceArray<T>::random({64, 33}, 42, Uniform(-100, 100), MemoryOrder::Fortran);
    auto c = DeviceArray<T>::random({64, 33}, 43, Uniform(-100, 100));
    EXPECT_EQ(a.to_host(), random_values<T>(64 * 33, 42, Uniform(-100, 100)));
    EXPECT_EQ(a.to_host(), b.to_host());
    EXPECT_NE(a.to_host(), c.to_host());
    auto n = DeviceArray<T>::random({1000}, 1, Normal(5, 2));
    EXPECT_EQ(n.to_host(), random_values<T>(1000, 1, Normal(5, 2)));
}

TYPED_TEST(DeviceArrayTyped, SubBoxViewsReadAndWriteOnlyTheirElements) {
    if (!loom::cuda_available()) GTEST_SKIP() << loom::cuda_unavailable_reason();
    using T = TypeParam;
    const Shape shape{6, 8, 5};
    const std::vector<T> values = iota_values<T>(240);
    for (MemoryOrder order : {MemoryOrder::C, MemoryOrder::Fortran}) {
        auto a = DeviceArray<T>::from_host(values, shape, order);
        const Shape off{1, 2, 3}, box{3, 4, 2};
        DeviceView<T> v = a.view(off, box);
        EXPECT_EQ(v.to_host(), host_box(values, shape, off, box));
        // A view of a view composes the offsets.
        EXPECT_EQ(v.view({1, 1, 0}, {2, 2, 1}).to_host(),
                  host_box(values, shape, {2, 3, 3}, {2, 2, 1}));

        std::vector<T> patch(24);
        for (std::size_t i = 0; i < patch.size(); ++i) patch[i] = static_cast<T>(1000 + i);
        v.copy_from_host(patch);
        std::vector<T> expected = values;
        std::size_t next = 0;
        for (std::int64_t i = 0; i < 3; ++i)
            for (std::int64_t j = 0; j < 4; ++j)
                for (std::int64_t k = 0; k < 2; ++k)
                    expected[(1 + i) * 40 + (2 + j) * 5 + (3 + k)] = patch[next++];
        EXPECT_EQ(a.to_host(), expected);
    }
}

TEST(DeviceArray, NegativeStridesScalarsAndEmptyArrays) {
    if (!loom::cuda_available()) GTEST_SKIP() << loom::cuda_unavailable_reason();
    auto a = DeviceArray<float>::from_host(iota_values<float>(10), {10});
    DeviceView<float> reversed(a.data() + 9 * sizeof(float), {10}, {-1});
    EXPECT_EQ(reversed.to_host(), (std::vector<float>{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
    auto s = DeviceArray<double>::from_host({2.5}, {});
    EXPECT_EQ(s.ndim(), 0);
    EXPECT_EQ(s.to_host(), std::vector<double>{2.5});
    auto e = DeviceArray<std::int32_t>::zeros({0, 4});
    EXPECT_EQ(e.data(), 0u);
    EXPECT_TRUE(e.to_host().empty());
    DeviceView<float> broadcast(a.data(), {3, 4}, {0, 1});
    EXPECT_EQ(broadcast.to_host(), (std::vector<float>{0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3}));
    LOOM_EXPECT_ERROR(broadcast.copy_from_host(std::vector<float>(12)), UserError,
                      {"stride 0 along axis 0", "alias"});
    LOOM_EXPECT_ERROR(DeviceArray<float>::from_host({1, 2, 3}, {2, 2}), UserError,
                      {"got 3 values for shape [2, 2] (4 elements)"});
}

TEST(DeviceArray, MoveTransfersOwnership) {
    if (!loom::cuda_available()) GTEST_SKIP() << loom::cuda_unavailable_reason();
    auto a = DeviceArray<float>::zeros({16});
    const CUdeviceptr p = a.data();
    DeviceArray<float> b = std::move(a);
    EXPECT_EQ(a.data(), 0u);
    EXPECT_EQ(b.data(), p);
    b = DeviceArray<float>::from_host(std::vector<float>(4, 1.0f), {4}); // frees the old block
    EXPECT_EQ(b.to_host(), std::vector<float>(4, 1.0f));

    int ordinal = -1;
    check(driver().cuPointerGetAttribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, b.data()),
          "cuPointerGetAttribute");
    EXPECT_EQ(ordinal, 0);
}

TEST(DeviceArray, MemoryInfoFollowsAllocations) {
    if (!loom::cuda_available()) GTEST_SKIP() << loom::cuda_unavailable_reason();
    const std::size_t mib = std::size_t(1) << 20;
    const MemoryInfo before = memory_info();
    EXPECT_GT(before.total, 0u);
    EXPECT_LE(before.free, before.total);
    const std::size_t bytes = std::min<std::size_t>(512 * mib, before.free / 4);
    {
        auto big = DeviceArray<float>::uninitialized({static_cast<std::int64_t>(bytes / 4)});
        const MemoryInfo during = memory_info();
        // Other processes may allocate too: only ask for most of the drop.
        EXPECT_LE(during.free + bytes / 2, before.free);
    }
    const MemoryInfo after = memory_info();
    EXPECT_GE(after.free + 64 * mib, before.free);
}

TEST(DeviceArray, AllocationFailureIsACudaError) {
    if (!loom::cuda_available()) GTEST_SKIP() << loom::cuda_unavailable_reason();
    // 2^50 bytes: no device has that much.
    LOOM_EXPECT_ERROR(DeviceArray<double>::zeros({std::int64_t(1) << 47}), CudaError,
                      {"cuMemAlloc(", "CUDA_ERROR_"});
}

TEST(DeviceDLPack, OwningExportImportsBackAndFrees) {
    if (!loom::cuda_available()) GTEST_SKIP() << loom::cuda_unavailable_reason();
    const std::vector<float> values = iota_values<float>(20);
    auto a = DeviceArray<float>::from_host(values, {4, 5});
    const CUdeviceptr p = a.data();
    DLManagedTensorVersioned* m = to_dlpack(std::move(a));
    EXPECT_EQ(a.data(), 0u); // the memory moved into the tensor
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(m->dl_tensor.data), p);
    EXPECT_EQ(m->dl_tensor.device.device_type, kDLCUDA);
    {
        DLPackTensor owned(m);
        DeviceView<float> v(owned.ref());
        EXPECT_EQ(v.to_host(), values);
        EXPECT_EQ(v.view({1, 1}, {2, 3}).to_host(), host_box(values, {4, 5}, {1, 1}, {2, 3}));
    } // the deleter frees the device memory here
}

TEST(DeviceDLPack, ViewExportLeavesTheArrayAlive) {
    if (!loom::cuda_available()) GTEST_SKIP() << loom::cuda_unavailable_reason();
    const std::vector<std::int64_t> values = iota_values<std::int64_t>(42);
    auto a = DeviceArray<std::int64_t>::from_host(values, {6, 7}, MemoryOrder::Fortran);
    DLManagedTensorVersioned* m = to_dlpack(a.view({2, 1}, {3, 4}));
    ArrayRef r = from_dlpack(m);
    EXPECT_EQ(DeviceView<std::int64_t>(r).to_host(), host_box(values, {6, 7}, {2, 1}, {3, 4}));
    m->deleter(m);
    EXPECT_EQ(a.to_host(), values);
}

} // namespace
} // namespace loom
