// The cuBLAS loader (see cublas.hpp).
#include "bench/cublas.hpp"

#include "runtime/driver.hpp"

#include <dlfcn.h>

#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace loom::bench {

namespace {

struct Loaded {
    CublasApi api;
    bool ok = false;
    std::string reason;
};

Loaded load() {
    Loaded out;
    // LOOM_CUBLAS names a library to try first; then the sonames the ldconfig cache or
    // LD_LIBRARY_PATH resolve; then the toolkit's directory (CMake's, and the usual one).
    std::vector<std::string> names;
    if (const char* env = std::getenv("LOOM_CUBLAS"); env && *env)
        names.emplace_back(env);
    names.emplace_back("libcublas.so.13");
    names.emplace_back("libcublas.so");
#ifdef LOOM_CUDA_LIBRARY_DIR
    names.emplace_back(std::string(LOOM_CUDA_LIBRARY_DIR) + "/libcublas.so.13");
    names.emplace_back(std::string(LOOM_CUDA_LIBRARY_DIR) + "/libcublas.so");
#endif
    names.emplace_back("/usr/local/cuda/lib64/libcublas.so.13");
    names.emplace_back("/usr/local/cuda/lib64/libcublas.so");

    void* lib = nullptr;
    std::string tried;
    for (const std::string& n : names) {
        dlerror();
        lib = dlopen(n.c_str(), RTLD_NOW | RTLD_LOCAL);
        if (lib) {
            out.api.path = n;
            break;
        }
        const char* err = dlerror();
        tried += (tried.empty() ? "" : "; ") + n + ": " + (err ? err : "dlopen failed");
    }
    if (!lib) {
        out.reason = "cuBLAS not found (tried " + tried +
                     "); install the CUDA toolkit's libcublas or set LOOM_CUBLAS to its path";
        return out;
    }
    // Never dlclose: cuBLAS may have started threads or registered its kernels with the driver.
    auto resolve = [&](const char* symbol, auto& fn, bool required) {
        dlerror();
        void* p = dlsym(lib, symbol);
        if (!p && required) {
            out.reason = out.api.path + " has no " + symbol + "; it is too old or damaged";
            return false;
        }
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(p);
        return true;
    };
    if (!resolve("cublasCreate_v2", out.api.create, true) ||
        !resolve("cublasDestroy_v2", out.api.destroy, true) ||
        !resolve("cublasSetStream_v2", out.api.set_stream, true) ||
        !resolve("cublasSgemm_v2", out.api.sgemm, true))
        return out;
    resolve("cublasGetVersion_v2", out.api.get_version, false);
    resolve("cublasGetStatusString", out.api.status_string, false);
    out.ok = true;
    return out;
}

const Loaded& loaded() {
    static const Loaded* l = new Loaded(load()); // never destroyed, like the driver
    return *l;
}

} // namespace

const CublasApi* load_cublas(std::string* reason) {
    const Loaded& l = loaded();
    if (reason)
        *reason = l.reason;
    return l.ok ? &l.api : nullptr;
}

CublasHandle::CublasHandle(CUstream stream) {
    std::string why;
    api_ = load_cublas(&why);
    if (!api_)
        throw std::runtime_error(why);
    // cuBLAS (the CUDA runtime inside it) uses the calling thread's current context. Make loom's
    // (device 0's primary context) current, so that both work in one context, and check that
    // creating the handle left it so.
    Context& ctx = Context::current(0);
    check(api_->create(&handle_), "cublasCreate_v2");
    CUcontext now = nullptr;
    loom::check(driver().cuCtxGetCurrent(&now), "cuCtxGetCurrent");
    if (now != ctx.handle())
        throw std::runtime_error("cublasCreate_v2 left another context current than loom's "
                                 "primary context of device 0; cuBLAS and loom would not share "
                                 "memory and streams");
    check(api_->set_stream(handle_, stream), "cublasSetStream_v2");
}

CublasHandle::~CublasHandle() {
    if (handle_ && api_)
        api_->destroy(handle_);
}

void CublasHandle::check(CublasStatus s, const char* call) const {
    if (s == 0)
        return;
    std::string text = api_ && api_->status_string ? api_->status_string(s) : "";
    throw std::runtime_error(std::string(call) + " failed with cublasStatus_t " +
                             std::to_string(s) + (text.empty() ? "" : " (" + text + ")"));
}

void CublasHandle::sgemm(CublasOp transa, CublasOp transb, int m, int n, int k, float alpha,
                         CUdeviceptr a, int lda, CUdeviceptr b, int ldb, float beta,
                         CUdeviceptr c, int ldc) const {
    auto ptr = [](CUdeviceptr p) { return reinterpret_cast<float*>(static_cast<std::uintptr_t>(p)); };
    check(api_->sgemm(handle_, transa, transb, m, n, k, &alpha, ptr(a), lda, ptr(b), ldb, &beta,
                      ptr(c), ldc),
          "cublasSgemm_v2");
}

int CublasHandle::version() const {
    int v = 0;
    if (api_->get_version && api_->get_version(handle_, &v) == 0)
        return v;
    return 0;
}

} // namespace loom::bench
