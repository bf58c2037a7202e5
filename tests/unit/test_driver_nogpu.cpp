// The runtime without a GPU: the driver reports its absence cleanly, and everything that needs
// no device (DLPack metadata, views over fake pointers, shapes, random values) works. The
// no-driver tests skip on machines that have one; tests/gpu covers those.
#include "runtime/driver.hpp"
#include "tests/support/expect_error.hpp"

#include <loom/device_array.hpp>
#include <loom/dlpack.hpp>
#include <loom/errors.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace loom {
namespace {

#define SKIP_IF_DRIVER_PRESENT()                                                                   \
    if (cuda_available()) GTEST_SKIP() << "a CUDA device is present; this test needs none"

// The message driver() throws, or "" when it does not throw.
std::string driver_error() {
    try {
        driver();
    } catch (const CudaError& e) {
        return e.what();
    }
    return "";
}

// ---- No driver ----------------------------------------------------------------------------------

TEST(DriverNoGpu, CudaAvailableIsFalseAndDoesNotThrow) {
    SKIP_IF_DRIVER_PRESENT();
    EXPECT_NO_THROW(cuda_available());
    EXPECT_FALSE(cuda_available());
    EXPECT_FALSE(cuda_available()); // cached, same answer
    EXPECT_FALSE(cuda_unavailable_reason().empty());
}

TEST(DriverNoGpu, DriverThrowsCudaErrorSayingNoDriverWasFound) {
    SKIP_IF_DRIVER_PRESENT();
    const std::string reason = cuda_unavailable_reason();
    if (reason.rfind("libcuda.so.1 not found", 0) != 0) {
        // A driver library without a usable device: a different, equally clear message.
        LOOM_EXPECT_ERROR(driver(), CudaError, {"no usable CUDA", reason, "fix:"});
        return;
    }
    EXPECT_NE(reason.find("no NVIDIA driver on this machine"), std::string::npos) << reason;
    LOOM_EXPECT_ERROR(driver(), CudaError,
                      {"no CUDA driver was found", "libcuda.so.1 not found", "NVRTC",
                       "fix:", "LD_LIBRARY_PATH", "loom::cuda_available()"});
    try {
        driver();
    } catch (const CudaError& e) {
        EXPECT_EQ(e.error_name(), "LIBCUDA_NOT_FOUND");
        EXPECT_EQ(e.call(), "dlopen(\"libcuda.so.1\")");
    }
}

TEST(DriverNoGpu, DeviceWorkThrowsTheSameCudaError) {
    SKIP_IF_DRIVER_PRESENT();
    const std::string expected = driver_error();
    ASSERT_FALSE(expected.empty());
    LOOM_EXPECT_ERROR(DeviceArray<float>::zeros({4, 4}), CudaError, {expected});
    LOOM_EXPECT_ERROR(DeviceArray<double>::random({8}, 1), CudaError, {expected});
    LOOM_EXPECT_ERROR(DeviceArray<std::int32_t>::from_host({1, 2, 3}, {3}), CudaError, {expected});
    LOOM_EXPECT_ERROR(Context::current(), CudaError, {expected});
    LOOM_EXPECT_ERROR(memory_info(), CudaError, {expected});
    // Views need no driver to exist, only to copy.
    DeviceView<float> v(0x1000, {2, 2}, {2, 1});
    LOOM_EXPECT_ERROR(v.to_host(), CudaError, {expected});
}

TEST(DriverNoGpu, CheckNamesTheCallAndGivesAHint) {
    EXPECT_NO_THROW(check(CUDA_SUCCESS, "cuInit(0)"));
    try {
        check(CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc(64 bytes)");
        ADD_FAILURE() << "check did not throw";
    } catch (const CudaError& e) {
        std::string msg = e.what();
        EXPECT_EQ(e.call(), "cuMemAlloc(64 bytes)");
        EXPECT_NE(msg.find("cuMemAlloc(64 bytes)"), std::string::npos) << msg;
        EXPECT_NE(msg.find("fix:"), std::string::npos) << msg;
        EXPECT_NE(msg.find("memory_info()"), std::string::npos) << msg;
        // Without a driver there is no cuGetErrorName; the number stands in for the name.
        if (!cuda_available()) EXPECT_EQ(e.error_name(), "CUresult 2");
    }
}

// ---- Shapes, views and random values (host side) ------------------------------------------------

TEST(DeviceArrayHost, ContiguousStrides) {
    EXPECT_EQ(contiguous_strides({2, 3, 4}, MemoryOrder::C), (Shape{12, 4, 1}));
    EXPECT_EQ(contiguous_strides({2, 3, 4}, MemoryOrder::Fortran), (Shape{1, 2, 6}));
    EXPECT_EQ(contiguous_strides({}, MemoryOrder::C), Shape{});
    EXPECT_TRUE(is_c_contiguous({2, 3}, {3, 1}));
    EXPECT_TRUE(is_c_contiguous({2, 1}, {1, 99})); // extent-1 axes may have any stride
    EXPECT_FALSE(is_c_contiguous({2, 3}, {1, 2}));
    EXPECT_TRUE(is_f_contiguous({2, 3}, {1, 2}));
    EXPECT_EQ(element_count({}), 1);
    EXPECT_EQ(element_count({3, 0, 2}), 0);
    LOOM_EXPECT_ERROR(element_count({3, -1}), UserError, {"negative extent", "axis 1"});
}

TEST(DeviceArrayHost, SubViewsComputeTheirOrigin) {
    DeviceView<double> v(0x10000, {4, 6}, {6, 1}, 2);
    DeviceView<double> s = v.view({1, 2}, {2, 3});
    EXPECT_EQ(s.data(), 0x10000u + (1 * 6 + 2) * sizeof(double));
    EXPECT_EQ(s.shape(), (Shape{2, 3}));
    EXPECT_EQ(s.strides(), (Shape{6, 1}));
    EXPECT_EQ(s.device(), 2);
    LOOM_EXPECT_ERROR(v.view({3, 0}, {2, 6}), UserError,
                      {"does not fit", "axis 0", "[3, 5)", "[0, 4)"});
    LOOM_EXPECT_ERROR(v.view({0}, {2}), UserError, {"needs 2 offsets"});
    LOOM_EXPECT_ERROR(DeviceView<float>(0x1000, {2, 2}, {1}), UserError, {"one stride per axis"});
}

TEST(DeviceArrayHost, TypedViewOfArrayRefChecksTypeAndMemory) {
    ArrayRef a = DeviceView<float>(0x2000, {8}, {1}).ref();
    EXPECT_NO_THROW(DeviceView<float>{a});
    LOOM_EXPECT_ERROR(DeviceView<double>{a}, UserError, {"float32[8]", "DeviceView<float64>"});
    a.is_device_memory = false;
    LOOM_EXPECT_ERROR(DeviceView<float>{a}, UserError, {"on host", "device memory"});
}

TEST(DeviceArrayHost, RandomValuesAreDeterministicAndInRange) {
    auto a = random_values<float>(1000, 7, Uniform(-2, 3));
    EXPECT_EQ(a, random_values<float>(1000, 7, Uniform(-2, 3)));
    EXPECT_NE(a, random_values<float>(1000, 8, Uniform(-2, 3)));
    for (float x : a) {
        EXPECT_GE(x, -2.0f);
        EXPECT_LT(x, 3.0f);
    }
    auto ints = random_values<std::int32_t>(2000, 1, Uniform(-1, 1));
    bool seen[3] = {false, false, false};
    for (std::int32_t x : ints) {
        ASSERT_GE(x, -1);
        ASSERT_LE(x, 1); // integer bounds are inclusive
        seen[x + 1] = true;
    }
    EXPECT_TRUE(seen[0] && seen[1] && seen[2]);
    auto big = random_values<std::int64_t>(100, 3, Uniform(-9.2e18, 9.2e18));
    EXPECT_NE(big[0], big[1]);

    auto n = random_values<double>(20001, 5, Normal(10, 2));
    double mean = 0;
    for (double x : n) mean += x;
    mean /= static_cast<double>(n.size());
    EXPECT_NEAR(mean, 10.0, 0.1);
    LOOM_EXPECT_ERROR(random_values<float>(4, 0, Uniform(1, 1)), UserError, {"lo < hi"});
    LOOM_EXPECT_ERROR(random_values<std::int32_t>(4, 0, Uniform(0.2, 0.8)), UserError,
                      {"at least one integer"});
    LOOM_EXPECT_ERROR(random_values<double>(4, 0, Normal(0, -1)), UserError,
                      {"standard deviation"});
}

// ---- DLPack import ------------------------------------------------------------------------------

DLDataType dl_type(std::uint8_t code, std::uint8_t bits, std::uint16_t lanes = 1) {
    DLDataType t;
    t.code = code;
    t.bits = bits;
    t.lanes = lanes;
    return t;
}

struct FakeTensor {
    std::vector<std::int64_t> shape, strides;
    DLTensor t{};
    FakeTensor(DLDeviceType dev, int id, DLDataType dtype, std::vector<std::int64_t> shape_,
               std::vector<std::int64_t> strides_, std::uintptr_t data, std::uint64_t offset)
        : shape(std::move(shape_)), strides(std::move(strides_)) {
        t.data = reinterpret_cast<void*>(data);
        t.device.device_type = dev;
        t.device.device_id = id;
        t.ndim = static_cast<std::int32_t>(shape.size());
        t.dtype = dtype;
        t.shape = shape.data();
        t.strides = strides.empty() ? nullptr : strides.data();
        t.byte_offset = offset;
    }
};

TEST(DLPackImport, CudaTensorMapsShapeStridesDtypeAndOffset) {
    FakeTensor f(kDLCUDA, 1, dl_type(kDLFloat, 32), {3, 4}, {1, 3}, 0x7f0000001000, 16);
    ArrayRef a = from_dlpack(f.t);
    EXPECT_EQ(a.ptr, 0x7f0000001010u);
    EXPECT_EQ(a.dtype, DType::Float32);
    EXPECT_EQ(a.shape, (Shape{3, 4}));
    EXPECT_EQ(a.strides, (Shape{1, 3}));
    EXPECT_EQ(a.device, 1);
    EXPECT_TRUE(a.is_device_memory);
    EXPECT_FALSE(a.read_only);
    EXPECT_TRUE(a.is_f_contiguous());
    EXPECT_EQ(a.describe(), "float32[3, 4] strides [1, 3] on cuda:1");
}

TEST(DLPackImport, CpuTensorWithoutStridesIsCContiguous) {
    FakeTensor f(kDLCPU, 0, dl_type(kDLInt, 64), {2, 4, 5}, {}, 0x5000, 0);
    ArrayRef a = from_dlpack(f.t);
    EXPECT_FALSE(a.is_device_memory);
    EXPECT_EQ(a.dtype, DType::Int64);
    EXPECT_EQ(a.strides, (Shape{20, 5, 1}));
    EXPECT_EQ(a.ptr, 0x5000u);
    EXPECT_NE(a.describe().find("on host"), std::string::npos);
}

TEST(DLPackImport, ScalarsAndEmptyTensors) {
    FakeTensor scalar(kDLCUDA, 0, dl_type(kDLFloat, 64), {}, {}, 0x8000, 0);
    ArrayRef s = from_dlpack(scalar.t);
    EXPECT_EQ(s.ndim(), 0);
    EXPECT_EQ(s.size(), 1);
    FakeTensor empty(kDLCUDA, 0, dl_type(kDLFloat, 32), {0, 3}, {3, 1}, 0, 0);
    EXPECT_EQ(from_dlpack(empty.t).size(), 0); // NULL data is fine without elements
}

TEST(DLPackImport, MapsEverySupportedDtype) {
    struct Case {
        DLDataType dl;
        DType loom;
    };
    const Case cases[] = {
        {dl_type(kDLFloat, 32), DType::Float32},   {dl_type(kDLFloat, 64), DType::Float64},
        {dl_type(kDLInt, 32), DType::Int32},       {dl_type(kDLInt, 64), DType::Int64},
        {dl_type(kDLFloat, 16), DType::Float16},   {dl_type(kDLBfloat, 16), DType::BFloat16},
        {dl_type(kDLBool, 8), DType::Bool},
    };
    for (const Case& c : cases) {
        EXPECT_EQ(dtype_from_dlpack(c.dl), c.loom) << dlpack_dtype_string(c.dl);
        DLDataType back = to_dlpack_dtype(c.loom);
        EXPECT_EQ(back.code, c.dl.code);
        EXPECT_EQ(back.bits, c.dl.bits);
        EXPECT_EQ(back.lanes, 1);
    }
}

TEST(DLPackImport, RejectsUnsupportedDtypesAndLanes) {
    LOOM_EXPECT_ERROR(dtype_from_dlpack(dl_type(kDLUInt, 8)), UserError,
                      {"dtype uint8", "not support", "float32, float64, int32 or int64", "fix:"});
    LOOM_EXPECT_ERROR(dtype_from_dlpack(dl_type(kDLInt, 16)), UserError, {"int16"});
    LOOM_EXPECT_ERROR(dtype_from_dlpack(dl_type(kDLComplex, 64)), UserError, {"complex64"});
    LOOM_EXPECT_ERROR(dtype_from_dlpack(dl_type(kDLFloat8_e4m3fn, 8)), UserError,
                      {"code 10 (8 bits)"});
    LOOM_EXPECT_ERROR(dtype_from_dlpack(dl_type(kDLFloat, 32, 4)), UserError,
                      {"vector dtype float32x4", "4 lanes", "trailing axis of 4"});
    FakeTensor f(kDLCUDA, 0, dl_type(kDLUInt, 16), {2}, {1}, 0x1000, 0);
    LOOM_EXPECT_ERROR(from_dlpack(f.t), UserError, {"uint16"});
}

TEST(DLPackImport, RejectsMalformedTensors) {
    FakeTensor opencl(kDLOpenCL, 0, dl_type(kDLFloat, 32), {2}, {1}, 0x1000, 0);
    LOOM_EXPECT_ERROR(from_dlpack(opencl.t), UserError, {"device type 4", "kDLCUDA", "fix:"});
    FakeTensor negative(kDLCUDA, 0, dl_type(kDLFloat, 32), {2, -3}, {3, 1}, 0x1000, 0);
    LOOM_EXPECT_ERROR(from_dlpack(negative.t), UserError, {"negative extent"});
    FakeTensor no_shape(kDLCUDA, 0, dl_type(kDLFloat, 32), {2}, {1}, 0x1000, 0);
    no_shape.t.shape = nullptr;
    LOOM_EXPECT_ERROR(from_dlpack(no_shape.t), UserError, {"malformed", "shape is NULL"});
    FakeTensor null_data(kDLCUDA, 0, dl_type(kDLFloat, 32), {2}, {1}, 0, 0);
    LOOM_EXPECT_ERROR(from_dlpack(null_data.t), UserError, {"NULL data pointer"});
    FakeTensor misaligned(kDLCUDA, 0, dl_type(kDLFloat, 64), {2}, {1}, 0x1000, 4);
    LOOM_EXPECT_ERROR(from_dlpack(misaligned.t), UserError,
                      {"not aligned", "byte_offset 4", "8-byte"});
}

TEST(DLPackImport, VersionedTensorChecksVersionAndReadsFlags) {
    FakeTensor f(kDLCUDA, 0, dl_type(kDLFloat, 32), {5}, {1}, 0x1000, 0);
    DLManagedTensorVersioned m{};
    m.version.major = DLPACK_MAJOR_VERSION;
    m.version.minor = 0; // an older minor version reads the same
    m.dl_tensor = f.t;
    m.flags = DLPACK_FLAG_BITMASK_READ_ONLY;
    ArrayRef a = from_dlpack(&m);
    EXPECT_TRUE(a.read_only);
    EXPECT_EQ(a.shape, Shape{5});
    m.version.major = DLPACK_MAJOR_VERSION + 1;
    LOOM_EXPECT_ERROR(from_dlpack(&m), UserError, {"ABI version 2.0", "deleter"});
    LOOM_EXPECT_ERROR(from_dlpack(static_cast<const DLManagedTensorVersioned*>(nullptr)),
                      UserError, {"null"});
}

int g_deleted = 0;
void count_delete(DLManagedTensorVersioned*) { ++g_deleted; }

TEST(DLPackImport, DLPackTensorCallsTheDeleterExactlyOnce) {
    FakeTensor f(kDLCUDA, 0, dl_type(kDLFloat, 32), {5}, {1}, 0x1000, 0);
    DLManagedTensorVersioned m{};
    m.version.major = DLPACK_MAJOR_VERSION;
    m.dl_tensor = f.t;
    m.deleter = &count_delete;
    g_deleted = 0;
    {
        DLPackTensor owned(&m);
        EXPECT_EQ(owned.ref().size(), 5);
        DLPackTensor moved(std::move(owned));
        EXPECT_EQ(moved.get(), &m);
    }
    EXPECT_EQ(g_deleted, 1);
    // A tensor that cannot be read is still released.
    m.version.major = 99;
    LOOM_EXPECT_ERROR(DLPackTensor{&m}, UserError, {"ABI version 99"});
    EXPECT_EQ(g_deleted, 2);
}

// ---- DLPack export ------------------------------------------------------------------------------

void expect_same(const ArrayRef& a, const ArrayRef& b) {
    EXPECT_EQ(a.ptr, b.ptr);
    EXPECT_EQ(a.dtype, b.dtype);
    EXPECT_EQ(a.shape, b.shape);
    EXPECT_EQ(a.strides, b.strides);
    EXPECT_EQ(a.device, b.device);
    EXPECT_EQ(a.is_device_memory, b.is_device_memory);
    EXPECT_EQ(a.read_only, b.read_only);
}

TEST(DLPackExport, ViewExportFillsTheTensor) {
    DeviceView<float> whole(0x10000, {4, 6}, {6, 1}, 1);
    DeviceView<float> box = whole.view({1, 2}, {2, 3});
    DLManagedTensorVersioned* m = to_dlpack(box);
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->version.major, static_cast<std::uint32_t>(DLPACK_MAJOR_VERSION));
    EXPECT_EQ(m->flags, 0u);
    const DLTensor& t = m->dl_tensor;
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.data), 0x10000u + 8 * sizeof(float));
    EXPECT_EQ(t.byte_offset, 0u);
    EXPECT_EQ(t.device.device_type, kDLCUDA);
    EXPECT_EQ(t.device.device_id, 1);
    EXPECT_EQ(t.ndim, 2);
    EXPECT_EQ(t.dtype.code, kDLFloat);
    EXPECT_EQ(t.dtype.bits, 32);
    EXPECT_EQ(t.dtype.lanes, 1);
    EXPECT_EQ(Shape(t.shape, t.shape + 2), (Shape{2, 3}));
    EXPECT_EQ(Shape(t.strides, t.strides + 2), (Shape{6, 1}));
    ASSERT_NE(m->deleter, nullptr);
    m->deleter(m); // frees the metadata only; the fake pointer is never touched
}

TEST(DLPackExport, ExportThenImportRoundTripsTheMetadata) {
    const ArrayRef cases[] = {
        DeviceView<double>(0x20000, {3, 5}, {1, 3}).ref(),                  // Fortran order
        DeviceView<std::int32_t>(0x30000, {2, 3, 4}, {12, 4, 1}, 3).ref(),  // C order
        DeviceView<std::int64_t>(0x40000 + 9 * 8, {10}, {-1}).ref(),        // reversed
        DeviceView<float>(0x50000, {}, {}).ref(),                           // scalar
    };
    for (const ArrayRef& a : cases) {
        DLManagedTensorVersioned* m = to_dlpack(a);
        ArrayRef back = from_dlpack(m);
        expect_same(a, back);
        m->deleter(m);
    }
    ArrayRef host = DeviceView<float>(0x60000, {4}, {1}).ref();
    host.is_device_memory = false;
    host.read_only = true;
    DLManagedTensorVersioned* m = to_dlpack(host);
    EXPECT_EQ(m->dl_tensor.device.device_type, kDLCPU);
    EXPECT_EQ(m->flags, static_cast<std::uint64_t>(DLPACK_FLAG_BITMASK_READ_ONLY));
    expect_same(host, from_dlpack(m));
    DLPackTensor owned(m); // and its deleter runs through DLPackTensor
}

} // namespace
} // namespace loom
