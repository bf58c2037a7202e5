// Error table rows: DLPack import (devices, dtypes, lanes, shapes, strides, pointers, versions)
// and export. Host memory only, so no row needs a GPU.
#include "tests/error/error_rows.hpp"

#include <loom/dlpack.hpp>
#include <loom/loom.hpp>

#include <cstdint>

namespace loom::test {

namespace {

/// A valid float32[4] host tensor; each row breaks one field of it.
struct Tensor {
    float data[4] = {};
    std::int64_t shape[1] = {4};
    std::int64_t strides[1] = {1};
    DLTensor t{};
    Tensor() {
        t.data = data;
        t.device = {kDLCPU, 0};
        t.ndim = 1;
        t.dtype = to_dlpack_dtype(DType::Float32);
        t.shape = shape;
        t.strides = strides;
    }
};

/// Imports a tensor after `edit` changed it.
template <typename Edit>
void import_edited(Edit edit) {
    Tensor x;
    edit(x.t);
    from_dlpack(x.t);
}

/// Imports it as a versioned managed tensor of version `major`.`minor`.
void import_versioned(std::uint32_t major, std::uint32_t minor) {
    Tensor x;
    DLManagedTensorVersioned m{};
    m.version = {major, minor};
    m.dl_tensor = x.t;
    from_dlpack(&m);
}

} // namespace

std::vector<ErrorRow> dlpack_rows() {
    const auto U = Expect::User;
    return {
        {"dlpack_device_opencl",
         [] { import_edited([](DLTensor& t) {
                  t.device = {kDLOpenCL, 0};
              }); },
         U,
         {"DLPack tensor lives on device type 4 (id 0)", "kDLCUDA (2)", "kDLCPU (1)",
          "fix: move the tensor to a CUDA device first"}},
        {"dlpack_device_unknown",
         [] {
             import_edited(
                 [](DLTensor& t) { t.device.device_type = static_cast<DLDeviceType>(999); });
         },
         U,
         {"device type 999", "kDLCUDAManaged (13)"}},
        {"dlpack_negative_device_id",
         [] { import_edited([](DLTensor& t) { t.device.device_id = -1; }); },
         U,
         {"negative device id -1", "device ids count from 0", "fix: set device.device_id"}},
        {"dlpack_dtype_uint8",
         [] { import_edited([](DLTensor& t) {
                  t.dtype = {kDLUInt, 8, 1};
              }); },
         U,
         {"DLPack tensor has dtype uint8, which loom does not support",
          "expected: float32, float64, int32 or int64", "tensor.to(torch.float32)"}},
        {"dlpack_dtype_complex64",
         [] { import_edited([](DLTensor& t) {
                  t.dtype = {kDLComplex, 64, 1};
              }); },
         U,
         {"dtype complex64", "does not support"}},
        {"dlpack_dtype_one_bit_bool",
         [] { import_edited([](DLTensor& t) {
                  t.dtype = {kDLBool, 1, 1};
              }); },
         U,
         {"dtype bool1", "does not support"}},
        {"dlpack_dtype_float_zero_bits",
         [] { import_edited([](DLTensor& t) {
                  t.dtype = {kDLFloat, 0, 1};
              }); },
         U,
         {"dtype float0", "does not support"}},
        {"dlpack_dtype_unknown_code",
         [] { import_edited([](DLTensor& t) {
                  t.dtype = {200, 32, 1};
              }); },
         U,
         {"dtype code 200 (32 bits)", "does not support"}},
        {"dlpack_vector_lanes",
         [] { import_edited([](DLTensor& t) {
                  t.dtype = {kDLFloat, 32, 4};
              }); },
         U,
         {"the vector dtype float32x4 (4 lanes)", "scalar element types only",
          "a trailing axis of 4"}},
        {"dlpack_zero_lanes",
         [] { import_edited([](DLTensor& t) {
                  t.dtype = {kDLFloat, 32, 0};
              }); },
         U,
         {"malformed DLPack dtype float32x0: 0 lanes", "lanes = 1", "set dtype.lanes to 1"}},
        {"dlpack_negative_ndim",
         [] { import_edited([](DLTensor& t) { t.ndim = -1; }); },
         U,
         {"malformed DLPack tensor: ndim is -1", "expected ndim >= 0",
          "check the producer's export"}},
        {"dlpack_null_shape",
         [] { import_edited([](DLTensor& t) { t.shape = nullptr; }); },
         U,
         {"ndim is 1 and shape is NULL", "a shape array of ndim extents"}},
        {"dlpack_negative_extent",
         [] {
             static std::int64_t negative[] = {-4};
             import_edited([](DLTensor& t) { t.shape = negative; });
         },
         U,
         {"array shape [-4] has a negative extent at axis 0"}},
        {"dlpack_extents_overflow",
         [] {
             static std::int64_t huge[] = {std::int64_t(1) << 33, std::int64_t(1) << 33};
             static std::int64_t strides[] = {std::int64_t(1) << 33, 1};
             import_edited([](DLTensor& t) {
                 t.ndim = 2;
                 t.shape = huge;
                 t.strides = strides;
             });
         },
         U,
         {"array shape [8589934592, 8589934592]", "more elements than fit in 64 bits"}},
        {"dlpack_null_data",
         [] { import_edited([](DLTensor& t) { t.data = nullptr; }); },
         U,
         {"4 elements of shape [4] but a NULL data pointer", "export a tensor that owns memory"}},
        {"dlpack_misaligned",
         [] { import_edited([](DLTensor& t) { t.byte_offset = 2; }); },
         U,
         {"+ byte_offset 2) is not aligned to its 4-byte elements (float32)",
          "export an aligned tensor"}},
        {"dlpack_byte_offset_wraps",
         [] { import_edited([](DLTensor& t) { t.byte_offset = UINT64_MAX - 3; }); },
         U,
         {"byte_offset 18446744073709551612", "passes the end of the address space",
          "check the producer's byte_offset"}},
        {"dlpack_null_managed_tensor",
         [] { from_dlpack(static_cast<const DLManagedTensorVersioned*>(nullptr)); },
         U,
         {"from_dlpack: got a null DLManagedTensorVersioned pointer"}},
        {"dlpack_older_major_version",
         [] { import_versioned(0, 8); },
         U,
         {"ABI version 0.8", "loom reads 1.x",
          "__dlpack__(max_version=", "released with its deleter"}},
        {"dlpack_newer_major_version",
         [] { import_versioned(2, 0); },
         U,
         {"ABI version 2.0", "the fields of another major version cannot be read"}},
        {"dlpack_owning_import_of_null",
         [] { DLPackTensor{nullptr}; },
         U,
         {"got a null DLManagedTensorVersioned pointer"}},
        {"dlpack_export_strides_of_another_rank",
         [] {
             ArrayRef a = HostArray<float>::zeros({4}).ref();
             a.strides = {};
             to_dlpack(a);
         },
         U,
         {"to_dlpack: shape [4] and strides [] differ in length", "one stride per axis"}},
        {"dlpack_export_negative_extent",
         [] {
             ArrayRef a = HostArray<float>::zeros({4}).ref();
             a.shape = {-4};
             to_dlpack(a);
         },
         U,
         {"array shape [-4] has a negative extent at axis 0", "0 or more"}},
    };
}

} // namespace loom::test
