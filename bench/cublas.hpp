// A tiny cuBLAS loader for the benchmarks: dlopen("libcublas.so.13"), then "libcublas.so" (and
// the same names under the CUDA toolkit's library directory), and the four entry points the MLP
// baseline needs. Nothing links cuBLAS, so bench_nn starts (and skips) on machines without it,
// like loom's own driver loader (runtime/driver.cpp).
//
// The signatures are those of <cublas_api.h> (CUDA 13.0, cuBLAS 13.1), written out here so that
// the benchmark needs no cuBLAS headers:
//   cublasStatus_t cublasCreate_v2(cublasHandle_t*);
//   cublasStatus_t cublasDestroy_v2(cublasHandle_t);
//   cublasStatus_t cublasSetStream_v2(cublasHandle_t, cudaStream_t);
//   cublasStatus_t cublasSgemm_v2(cublasHandle_t, cublasOperation_t transa,
//                                 cublasOperation_t transb, int m, int n, int k,
//                                 const float* alpha, const float* A, int lda, const float* B,
//                                 int ldb, const float* beta, float* C, int ldc);
// cublasStatus_t and cublasOperation_t are C enums (int-sized); cudaStream_t is the runtime's
// name for the driver's CUstream (both `struct CUstream_st*`).
//
// cuBLAS runs on the CUDA runtime, which works in the calling thread's current context, and when
// none is current in the device's primary context. loom's Context is that primary context
// (cuDevicePrimaryCtxRetain), so loom kernels and cuBLAS share one context; CublasHandle makes
// it current before creating the handle and checks afterwards that it still is.
#pragma once

#include <cuda.h>

#include <string>

namespace loom::bench {

/// cublasStatus_t: CUBLAS_STATUS_SUCCESS = 0.
using CublasStatus = int;
/// cublasOperation_t (values from <cublas_api.h>).
enum CublasOp : int { CublasOpN = 0, CublasOpT = 1 };

struct cublasContext; // opaque, as in <cublas_api.h>
using CublasHandleT = cublasContext*;

/// The resolved entry points of the loaded library.
struct CublasApi {
    std::string path; ///< the name dlopen accepted
    CublasStatus (*create)(CublasHandleT*) = nullptr;                   ///< cublasCreate_v2
    CublasStatus (*destroy)(CublasHandleT) = nullptr;                   ///< cublasDestroy_v2
    CublasStatus (*set_stream)(CublasHandleT, CUstream) = nullptr;      ///< cublasSetStream_v2
    CublasStatus (*sgemm)(CublasHandleT, CublasOp, CublasOp, int, int, int, const float*,
                          const float*, int, const float*, int, const float*, float*,
                          int) = nullptr;                                ///< cublasSgemm_v2
    /// Optional (nullptr when missing): cublasGetVersion_v2, cublasGetStatusString.
    CublasStatus (*get_version)(CublasHandleT, int*) = nullptr;
    const char* (*status_string)(CublasStatus) = nullptr;
};

/// Loads cuBLAS once per process. Returns nullptr when it cannot be loaded or lacks an entry
/// point; `reason` (if given) then says why in one sentence, naming every path tried.
const CublasApi* load_cublas(std::string* reason = nullptr);

/// One cuBLAS handle bound to a stream of loom's context (device 0's primary context).
/// Throws std::runtime_error when cuBLAS is missing or a call fails.
class CublasHandle {
public:
    explicit CublasHandle(CUstream stream);
    ~CublasHandle();
    CublasHandle(const CublasHandle&) = delete;
    CublasHandle& operator=(const CublasHandle&) = delete;

    /// C = alpha op(A) op(B) + beta C, column-major, device pointers, host scalars (cuBLAS's
    /// default pointer mode). Asynchronous on the handle's stream.
    void sgemm(CublasOp transa, CublasOp transb, int m, int n, int k, float alpha, CUdeviceptr a,
               int lda, CUdeviceptr b, int ldb, float beta, CUdeviceptr c, int ldc) const;

    /// cuBLAS's version as major * 10000 + minor * 100 + patch (0 if unknown).
    int version() const;
    const CublasApi& api() const { return *api_; }

private:
    void check(CublasStatus s, const char* call) const;
    const CublasApi* api_ = nullptr;
    CublasHandleT handle_ = nullptr;
};

} // namespace loom::bench
