// DLPack 1.x interop: import tensors from other frameworks as ArrayRefs, export loom arrays.
//
// Imports never copy and never take ownership (except DLPackTensor): the producer's tensor must
// stay alive while the ArrayRef is used. Exports carry their shape and strides in the managed
// tensor itself, so they stay valid after the loom object is gone (for owning exports) and the
// consumer frees everything by calling the deleter once.
#pragma once

#include <loom/detail/dlpack/dlpack.h>
#include <loom/device_array.hpp>

namespace loom {

/// DLPack's dtype for a loom dtype.
DLDataType to_dlpack_dtype(DType t);
/// loom's dtype for a DLPack dtype; throws UserError for vector types (lanes != 1) and types loom
/// has no counterpart for (unsigned, int8/16, complex, fp8, ...).
DType dtype_from_dlpack(DLDataType t);
/// "float32", "uint8", "float32x4", "code 9 (8 bits)": a DLPack dtype for messages.
std::string dlpack_dtype_string(DLDataType t);

/// Describes a DLTensor: applies byte_offset, reads strides == NULL as C-contiguous, maps kDLCUDA
/// and kDLCUDAManaged to device memory and kDLCPU and kDLCUDAHost to host memory. Throws
/// UserError for other devices, unsupported dtypes, malformed shapes and misaligned data.
ArrayRef from_dlpack(const DLTensor& tensor);
/// The same for a versioned managed tensor; also checks the major version and reads the read-only
/// flag. The caller keeps ownership (and must still call the deleter, even after an error).
ArrayRef from_dlpack(const DLManagedTensorVersioned* tensor);

/// A non-owning export: the deleter frees only the tensor's own metadata, so the memory behind
/// `array` must outlive every use of the result.
DLManagedTensorVersioned* to_dlpack(const ArrayRef& array);

template <typename T>
DLManagedTensorVersioned* to_dlpack(const DeviceView<T>& view) {
    return to_dlpack(view.ref());
}

namespace detail {
/// An export whose deleter also frees `owned` (a cuMemAlloc'ed block on array.device).
DLManagedTensorVersioned* to_dlpack_owning(const ArrayRef& array, CUdeviceptr owned);
} // namespace detail

/// An owning export: the memory moves into the tensor (`array` is left empty) and the consumer's
/// call of the deleter frees it. (An lvalue array converts to ArrayRef instead: a borrow.)
template <typename T>
DLManagedTensorVersioned* to_dlpack(DeviceArray<T>&& array) {
    DLManagedTensorVersioned* t = detail::to_dlpack_owning(array.ref(), array.data());
    array.release(); // only once the export exists, so a failed export leaves the array intact
    return t;
}

/// Takes ownership of an imported managed tensor and calls its deleter on destruction.
class DLPackTensor {
public:
    /// Validates like from_dlpack; on failure calls the deleter, then throws.
    explicit DLPackTensor(DLManagedTensorVersioned* tensor);
    ~DLPackTensor();
    DLPackTensor(DLPackTensor&& other) noexcept;
    DLPackTensor& operator=(DLPackTensor&& other) noexcept;
    DLPackTensor(const DLPackTensor&) = delete;
    DLPackTensor& operator=(const DLPackTensor&) = delete;

    const ArrayRef& ref() const { return ref_; }
    operator const ArrayRef&() const { return ref_; }
    DLManagedTensorVersioned* get() const { return tensor_; }
    /// Gives the tensor back without calling its deleter.
    DLManagedTensorVersioned* release();

private:
    DLManagedTensorVersioned* tensor_ = nullptr;
    ArrayRef ref_;
};

} // namespace loom
