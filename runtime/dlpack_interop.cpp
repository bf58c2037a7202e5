// DLPack import and export.
#include <loom/dlpack.hpp>
#include <loom/errors.hpp>

#include <fmt/format.h>

#include <cstdint>
#include <utility>

namespace loom {

// ---- Types ------------------------------------------------------------------------------------

DLDataType to_dlpack_dtype(DType t) {
    auto make = [](DLDataTypeCode code, int bits) {
        DLDataType d;
        d.code = static_cast<std::uint8_t>(code);
        d.bits = static_cast<std::uint8_t>(bits);
        d.lanes = 1;
        return d;
    };
    switch (t) {
    case DType::Bool: return make(kDLBool, 8);
    case DType::Int32: return make(kDLInt, 32);
    case DType::Int64: return make(kDLInt, 64);
    case DType::Float16: return make(kDLFloat, 16);
    case DType::BFloat16: return make(kDLBfloat, 16);
    case DType::Float32: return make(kDLFloat, 32);
    case DType::Float64: return make(kDLFloat, 64);
    }
    throw InternalError("to_dlpack_dtype: unknown DType");
}

std::string dlpack_dtype_string(DLDataType t) {
    const char* base = nullptr;
    switch (t.code) {
    case kDLInt: base = "int"; break;
    case kDLUInt: base = "uint"; break;
    case kDLFloat: base = "float"; break;
    case kDLBfloat: base = "bfloat"; break;
    case kDLComplex: base = "complex"; break;
    case kDLBool: base = "bool"; break;
    case kDLOpaqueHandle: base = "handle"; break;
    default: break;
    }
    std::string s = base ? fmt::format("{}{}", base, t.bits)
                         : fmt::format("code {} ({} bits)", t.code, t.bits);
    if (t.code == kDLBool && t.bits == 8) s = "bool";
    if (t.lanes != 1) s += fmt::format("x{}", t.lanes);
    return s;
}

DType dtype_from_dlpack(DLDataType t) {
    if (t.lanes == 0)
        throw UserError(fmt::format("malformed DLPack dtype {}: 0 lanes; a scalar element type "
                                    "has lanes = 1.\n"
                                    "  fix: set dtype.lanes to 1 where the tensor is made.",
                                    dlpack_dtype_string(t)));
    if (t.lanes != 1) {
        throw UserError(fmt::format(
            "DLPack tensor has the vector dtype {} ({} lanes); loom reads scalar element types "
            "only.\n"
            "  fix: export it with a trailing axis of {} instead (a field with components).",
            dlpack_dtype_string(t), t.lanes, t.lanes));
    }
    if (t.code == kDLFloat && t.bits == 32) return DType::Float32;
    if (t.code == kDLFloat && t.bits == 64) return DType::Float64;
    if (t.code == kDLInt && t.bits == 32) return DType::Int32;
    if (t.code == kDLInt && t.bits == 64) return DType::Int64;
    if (t.code == kDLFloat && t.bits == 16) return DType::Float16;
    if (t.code == kDLBfloat && t.bits == 16) return DType::BFloat16;
    if (t.code == kDLBool && t.bits == 8) return DType::Bool;
    throw UserError(fmt::format(
        "DLPack tensor has dtype {}, which loom does not support.\n"
        "  expected: float32, float64, int32 or int64 (bool, float16 and bfloat16 import too).\n"
        "  fix: convert the tensor first, e.g. tensor.to(torch.float32) or "
        "array.astype(cupy.float32).",
        dlpack_dtype_string(t)));
}

// ---- Import -----------------------------------------------------------------------------------

ArrayRef from_dlpack(const DLTensor& t) {
    ArrayRef a;
    switch (t.device.device_type) {
    case kDLCUDA:
    case kDLCUDAManaged: a.is_device_memory = true; break;
    case kDLCPU:
    case kDLCUDAHost: a.is_device_memory = false; break;
    default:
        throw UserError(fmt::format(
            "DLPack tensor lives on device type {} (id {}); loom reads kDLCUDA ({}) and "
            "kDLCUDAManaged ({}) device memory, and kDLCPU ({}) or kDLCUDAHost ({}) host memory.\n"
            "  fix: move the tensor to a CUDA device first.",
            static_cast<int>(t.device.device_type), t.device.device_id,
            static_cast<int>(kDLCUDA), static_cast<int>(kDLCUDAManaged),
            static_cast<int>(kDLCPU), static_cast<int>(kDLCUDAHost)));
    }
    if (t.device.device_id < 0) {
        throw UserError(fmt::format("DLPack tensor has the negative device id {}; device ids "
                                    "count from 0.\n"
                                    "  fix: set device.device_id to the tensor's device (0 for "
                                    "host memory).",
                                    t.device.device_id));
    }
    a.device = t.device.device_id;
    a.dtype = dtype_from_dlpack(t.dtype);
    if (t.ndim < 0 || (t.ndim > 0 && !t.shape)) {
        throw UserError(fmt::format("malformed DLPack tensor: ndim is {} and shape is {}; "
                                    "expected ndim >= 0 and a shape array of ndim extents.\n"
                                    "  fix: check the producer's export (DLTensor::ndim and "
                                    "DLTensor::shape).",
                                    t.ndim, t.shape ? "set" : "NULL"));
    }
    a.shape.assign(t.shape, t.shape + t.ndim);
    const std::int64_t n = element_count(a.shape); // rejects negative extents
    // DLPack 1.x requires strides, but NULL still means compact row-major in older producers.
    a.strides = t.strides ? Shape(t.strides, t.strides + t.ndim)
                          : contiguous_strides(a.shape, MemoryOrder::C);
    a.ptr = static_cast<CUdeviceptr>(reinterpret_cast<std::uintptr_t>(t.data)) + t.byte_offset;
    if (n > 0 && !t.data) {
        throw UserError(fmt::format("malformed DLPack tensor: {} elements of shape {} but a NULL "
                                    "data pointer.\n"
                                    "  fix: export a tensor that owns memory (or one with a 0 "
                                    "extent, which needs none).",
                                    n, shape_string(a.shape)));
    }
    // data + byte_offset must not wrap around the address space (to a pointer before data).
    if (n > 0 && a.ptr < reinterpret_cast<std::uintptr_t>(t.data)) {
        throw UserError(fmt::format("malformed DLPack tensor: byte_offset {} added to data {:#x} "
                                    "passes the end of the address space.\n"
                                    "  fix: check the producer's byte_offset; it counts bytes "
                                    "from data to the first element.",
                                    t.byte_offset, reinterpret_cast<std::uintptr_t>(t.data)));
    }
    const std::size_t elem = dtype_size(a.dtype);
    if (n > 0 && a.ptr % elem != 0) {
        throw UserError(fmt::format(
            "DLPack tensor data at {:#x} (data {:#x} + byte_offset {}) is not aligned to its "
            "{}-byte elements ({}).\n"
            "  fix: export an aligned tensor (a contiguous copy usually is).",
            a.ptr, reinterpret_cast<std::uintptr_t>(t.data), t.byte_offset, elem,
            dtype_name(a.dtype)));
    }
    return a;
}

ArrayRef from_dlpack(const DLManagedTensorVersioned* m) {
    if (!m) throw UserError("from_dlpack: got a null DLManagedTensorVersioned pointer.");
    if (m->version.major != DLPACK_MAJOR_VERSION) {
        throw UserError(fmt::format(
            "DLPack tensor has ABI version {}.{}; loom reads {}.x, and the fields of another "
            "major version cannot be read.\n"
            "  fix: ask the producer for DLPack {}.x (e.g. __dlpack__(max_version=({}, {}))); "
            "the tensor still has to be released with its deleter.",
            m->version.major, m->version.minor, DLPACK_MAJOR_VERSION, DLPACK_MAJOR_VERSION,
            DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION));
    }
    ArrayRef a = from_dlpack(m->dl_tensor);
    a.read_only = (m->flags & DLPACK_FLAG_BITMASK_READ_ONLY) != 0;
    return a;
}

// ---- Export -----------------------------------------------------------------------------------

namespace {

// Everything an exported tensor points to, freed together by the deleter.
struct Export {
    DLManagedTensorVersioned tensor{};
    Shape shape, strides;
    CUdeviceptr owned = 0; ///< freed by the deleter when set
    int device = 0;
};

void delete_export(DLManagedTensorVersioned* self) {
    if (!self) return;
    auto* e = static_cast<Export*>(self->manager_ctx);
    detail::free_device_memory(e->owned, e->device); // never throws
    delete e;
}

DLManagedTensorVersioned* make_export(const ArrayRef& a, CUdeviceptr owned) {
    if (a.shape.size() != a.strides.size()) {
        throw UserError(fmt::format("to_dlpack: shape {} and strides {} differ in length.\n"
                                    "  fix: give the ArrayRef one stride per axis.",
                                    shape_string(a.shape), shape_string(a.strides)));
    }
    element_count(a.shape); // a negative extent would reach the consumer as a malformed tensor
    auto* e = new Export();
    e->shape = a.shape;
    e->strides = a.strides;
    e->owned = owned;
    e->device = a.device;
    DLManagedTensorVersioned& m = e->tensor;
    m.version.major = DLPACK_MAJOR_VERSION;
    m.version.minor = DLPACK_MINOR_VERSION;
    m.manager_ctx = e;
    m.deleter = &delete_export;
    m.flags = a.read_only ? DLPACK_FLAG_BITMASK_READ_ONLY : 0;
    DLTensor& t = m.dl_tensor;
    t.data = reinterpret_cast<void*>(static_cast<std::uintptr_t>(a.ptr));
    t.device.device_type = a.is_device_memory ? kDLCUDA : kDLCPU;
    t.device.device_id = a.is_device_memory ? a.device : 0;
    t.ndim = static_cast<std::int32_t>(a.shape.size());
    t.dtype = to_dlpack_dtype(a.dtype);
    t.shape = e->shape.data();
    t.strides = e->strides.data();
    t.byte_offset = 0;
    return &m;
}

} // namespace

DLManagedTensorVersioned* to_dlpack(const ArrayRef& array) { return make_export(array, 0); }

DLManagedTensorVersioned* detail::to_dlpack_owning(const ArrayRef& array, CUdeviceptr owned) {
    return make_export(array, owned);
}

// ---- DLPackTensor -----------------------------------------------------------------------------

DLPackTensor::DLPackTensor(DLManagedTensorVersioned* tensor) : tensor_(tensor) {
    try {
        ref_ = from_dlpack(tensor);
    } catch (...) {
        // Ownership was handed over, so the tensor is released even when it cannot be read.
        if (tensor && tensor->deleter) tensor->deleter(tensor);
        tensor_ = nullptr;
        throw;
    }
}

DLPackTensor::~DLPackTensor() {
    if (tensor_ && tensor_->deleter) tensor_->deleter(tensor_);
}

DLPackTensor::DLPackTensor(DLPackTensor&& other) noexcept
    : tensor_(std::exchange(other.tensor_, nullptr)), ref_(std::move(other.ref_)) {}

DLPackTensor& DLPackTensor::operator=(DLPackTensor&& other) noexcept {
    if (this != &other) {
        if (tensor_ && tensor_->deleter) tensor_->deleter(tensor_);
        tensor_ = std::exchange(other.tensor_, nullptr);
        ref_ = std::move(other.ref_);
    }
    return *this;
}

DLManagedTensorVersioned* DLPackTensor::release() { return std::exchange(tensor_, nullptr); }

} // namespace loom
