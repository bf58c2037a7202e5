// The few CUDA driver handle types that appear in loom's public API, declared exactly as <cuda.h>
// declares them, so that users need no CUDA headers to include loom and those who include
// <cuda.h> (or <cuda_runtime.h>, whose cudaStream_t is the same type) mix the two freely.
#pragma once

typedef unsigned long long CUdeviceptr_v2; // NOLINT(modernize-use-using): as <cuda.h> spells it
typedef CUdeviceptr_v2 CUdeviceptr;        // NOLINT(modernize-use-using)
typedef struct CUstream_st* CUstream;      // NOLINT(modernize-use-using)
typedef struct CUfunc_st* CUfunction;      // NOLINT(modernize-use-using)
