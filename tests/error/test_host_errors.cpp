// Errors of the host runtime (Target::CPU kernels), checked without a GPU: arguments in device
// memory, launch settings that have no meaning on the CPU, compiler failures and a missing
// compiler.
#include "runtime/nvrtc_compiler.hpp"
#include "tests/support/cpu_config.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/scoped_env.hpp"

#include <loom/dlpack.hpp>
#include <loom/loom.hpp>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>

namespace {
using namespace loom;
using namespace loom::ir;

using loom::test::ScopedEnv;

/// out[i] = x[i] + 1 over a 1D array: out, x, size_0. The contract of Target::CPU by hand.
std::string add_one_source(const std::string& name, const std::string& body) {
    return "#include <stdint.h>\n"
           "extern \"C\" void " + name + "(float* out, const float* x, const long long size_0)\n"
           "{\n" + body + "}\n"
           "extern \"C\" void loom_kernel_" + name + "_entry(void* const* args)\n"
           "{\n"
           "    " + name + "((float*)(uintptr_t)*(const uint64_t*)args[0],\n"
           "        (const float*)(uintptr_t)*(const uint64_t*)args[1],\n"
           "        *(const long long*)args[2]);\n"
           "}\n";
}

const char* kGoodBody = "    for (long long i = 0; i < size_0; ++i) out[i] = x[i] + 1;\n";

KernelSpec add_one_spec(const std::string& name = "add_one", const std::string& body = kGoodBody) {
    KernelSpec s;
    s.name = name;
    s.source = add_one_source(name, body);
    s.backend = Backend::Host;
    for (const char* f : {"out", "x"}) {
        FieldSpec fs;
        fs.name = f;
        fs.dtype = DType::Float32;
        fs.spatial_dims = 1;
        fs.unit_stride_axis = 0;
        fs.layout = "c";
        fs.written = std::string(f) == "out";
        s.fields.push_back(fs);
    }
    auto param = [](const char* n, ArgRole r, DType t, int field, int axis) {
        ParamSpec p;
        p.name = n;
        p.role = r;
        p.dtype = t;
        p.field = field;
        p.axis = axis;
        return p;
    };
    s.params = {param("out", ArgRole::FieldPointer, DType::Float32, 0, -1),
                param("x", ArgRole::FieldPointer, DType::Float32, 1, -1),
                param("size_0", ArgRole::Size, DType::Int64, -1, 0)};
    return s;
}

TEST(HostErrors, DeviceMemoryPassedToACpuKernel) {
    KernelFunction k(add_one_spec());
    auto out = HostArray<float>::zeros({8});
    ArrayRef device = HostArray<float>::zeros({8}).ref();
    device.is_device_memory = true; // never dereferenced: validation comes first
    device.ptr = 0x1000;
    LOOM_EXPECT_ERROR(k(args("out", out, "x", device)), UserError,
                      {"kernel 'add_one'", "argument 'x' is device memory", "on cuda:0",
                       "this kernel runs on the CPU (Target::CPU)", "HostArray<T>::from_vector",
                       "Target::CUDA"});

    // The same through DLPack: a kDLCUDA tensor is device memory.
    std::int64_t shape[] = {8};
    DLTensor t{};
    t.data = reinterpret_cast<void*>(std::uintptr_t{0x1000});
    t.device = {kDLCUDA, 0};
    t.ndim = 1;
    t.dtype = to_dlpack_dtype(DType::Float32);
    t.shape = shape;
    LOOM_EXPECT_ERROR(k(args("out", from_dlpack(t), "x", out)), UserError,
                      {"argument 'out' is device memory", "runs on the CPU (Target::CPU)"});
    EXPECT_EQ(out.to_vector(), std::vector<float>(8, 0.0f)) << "nothing ran";
}

TEST(HostErrors, BlockSizeAndNumBlocksHaveNoMeaningOnTheCpu) {
    KernelFunction k(add_one_spec());
    auto out = HostArray<float>::zeros({4});
    auto x = HostArray<float>::zeros({4});
    k.block_size = {128, 1, 1};
    LOOM_EXPECT_ERROR(k(args("out", out, "x", x)), UserError,
                      {"kernel 'add_one'",
                       "block_size and num_blocks have no meaning on the CPU target (Target::CPU)",
                       "Found block_size = (128, 1, 1)", "k.block_size.reset()"});
    k.block_size.reset();
    k.num_blocks = {4, 1, 1};
    LOOM_EXPECT_ERROR(k(args("out", out, "x", x)), UserError,
                      {"Found num_blocks = (4, 1, 1)", "k.num_blocks.reset()"});
    k.block_size = {32, 1, 1};
    LOOM_EXPECT_ERROR(k.benchmark(args("out", out, "x", x)), UserError,
                      {"block_size = (32, 1, 1) and num_blocks = (4, 1, 1)"});
    k.block_size.reset();
    k.num_blocks.reset();
    k(args("out", out, "x", x));
    EXPECT_EQ(out.to_vector(), std::vector<float>(4, 1.0f)) << "works once both are unset";
}

TEST(HostErrors, AStreamHasNoMeaningOnTheCpu) {
    KernelFunction k(add_one_spec());
    auto a = HostArray<float>::zeros({4});
    LOOM_EXPECT_ERROR(k(args("out", a, "x", a), reinterpret_cast<CUstream>(0x1)), UserError,
                      {"runs on the CPU (Target::CPU) and synchronously", "takes no CUDA stream"});
}

TEST(HostErrors, SharedValidationAppliesToHostArrays) {
    KernelFunction k(add_one_spec());
    auto out = HostArray<float>::zeros({6});
    LOOM_EXPECT_ERROR(k(args("out", out, "x", HostArray<double>::zeros({6}))), UserError,
                      {"argument 'x'", "has element type float64, but field x is float32"});
    LOOM_EXPECT_ERROR(k(args("out", out, "x", HostArray<float>::zeros({7}))), UserError,
                      {"fields share one iteration space"});
    auto wide = HostArray<float>::zeros({6, 2});
    LOOM_EXPECT_ERROR(k(args("out", out, "x", wide.view({0, 0}, {6, 1}))), UserError,
                      {"has 2 dimension(s), but field x needs 1"});
    std::vector<float> strided(12);
    LOOM_EXPECT_ERROR(k(args("out", out, "x", HostView<float>(strided.data(), {6}, {2}))),
                      UserError, {"has stride 2 along axis 0", "contiguous"});
    const std::vector<float> frozen(6);
    LOOM_EXPECT_ERROR(k(args("out", host_view(frozen, {6}), "x", out)), UserError,
                      {"is read-only, but the kernel writes field out"});
    LOOM_EXPECT_ERROR(k(args("out", out)), UserError, {"missing argument(s): x"});
    LOOM_EXPECT_ERROR(k(args("out", out, "x", 1.5)), UserError,
                      {"argument 'x' must be an array"});
    ArrayRef null = out.ref();
    null.ptr = 0;
    LOOM_EXPECT_ERROR(k(args("out", null, "x", out)), UserError, {"has a null pointer"});
}

TEST(HostErrors, HostViewsCheckWhatTheyWrap) {
    std::vector<float> v(6);
    LOOM_EXPECT_ERROR(host_view(v, {2, 2}), UserError,
                      {"host_view: got 6 values for shape [2, 2] (4 elements)"});
    LOOM_EXPECT_ERROR(HostView<float>(v.data(), {2, 3}, {3}), UserError,
                      {"one stride per axis"});
    auto a = HostArray<float>::zeros({2, 3});
    LOOM_EXPECT_ERROR(a.view({1, 1}, {2, 2}), UserError,
                      {"does not fit in the view of shape [2, 3]"});
    LOOM_EXPECT_ERROR(a.at({2, 0}), UserError,
                      {"index [2, 0] is outside the array of shape [2, 3]"});
    ArrayRef device = a.ref();
    device.is_device_memory = true;
    LOOM_EXPECT_ERROR(HostView<float>{device}, UserError,
                      {"cannot view", "as a HostView<float32>", "copy device memory to the host"});
    LOOM_EXPECT_ERROR(HostView<double>{a.ref()}, UserError, {"expected writable float64"});
    ArrayRef frozen = a.ref();
    frozen.read_only = true;
    LOOM_EXPECT_ERROR(HostView<float>{frozen}, UserError, {"HostView<const T>"});
    LOOM_EXPECT_ERROR(HostArray<float>::from_vector({1, 2, 3}, {2, 2}), UserError,
                      {"HostArray::from_vector: got 3 values for shape [2, 2]"});
}

TEST(HostErrors, CompileErrorCarriesCompilerOutputAndNumberedSource) {
    ScopedEnv dump("LOOM_DUMP_SOURCE_ON_ERROR", nullptr);
    KernelSpec s = add_one_spec("broken", "    out[0] = undefined_thing;\n");
    try {
        KernelFunction k(s);
        FAIL() << "expected a CompileError";
    } catch (const CompileError& e) {
        std::string msg = e.what();
        EXPECT_NE(msg.find("the host compiler could not compile kernel 'broken' (exit status"),
                  std::string::npos) << msg;
        EXPECT_NE(msg.find("set LOOM_DUMP_SOURCE_ON_ERROR=1"), std::string::npos) << msg;
        EXPECT_NE(e.log().find("undefined_thing"), std::string::npos) << e.log();
        EXPECT_NE(e.log().find("broken.cpp:4"), std::string::npos) << "file:line of the error";
        // The compile step failed, so the link step (-shared) never ran.
        for (const char* flag : {"-std=c++17", "-O3", "-march=native", "-fopenmp", "-fPIC",
                                 "-c -o broken.o broken.cpp"})
            EXPECT_NE(e.options().find(flag), std::string::npos) << e.options();
        EXPECT_EQ(e.options().find("-shared"), std::string::npos) << e.options();
        EXPECT_NE(e.numbered_source().find("   4 |     out[0] = undefined_thing;"),
                  std::string::npos) << e.numbered_source();
        EXPECT_NE(msg.find(e.numbered_source()), std::string::npos) << "the message has it all";
    }
    // Failures are not cached: the next attempt compiles (and fails) again.
    LOOM_EXPECT_ERROR(KernelFunction{s}, CompileError, {"undefined_thing"});
}

TEST(HostErrors, MissingEntryPointIsACompileError) {
    KernelSpec s = add_one_spec("no_entry");
    s.source = "extern \"C\" void no_entry(float*, const float*, long long) {}\n";
    LOOM_EXPECT_ERROR(KernelFunction{s}, CompileError,
                      {"the host compiler built kernel 'no_entry'",
                       "does not define the entry point extern \"C\" void loom_kernel_no_entry_entry",
                       "-fopenmp", "   1 | extern"});
}

TEST(HostErrors, MissingCompilerNamesLoomCxx) {
    {
        ScopedEnv cxx("LOOM_CXX", "/nonexistent/c++");
        LOOM_EXPECT_ERROR(KernelFunction{add_one_spec("no_cxx")}, UserError,
                          {"cannot run the host compiler for Target::CPU kernels",
                           "LOOM_CXX is '/nonexistent/c++'", "could not be started",
                           "set LOOM_CXX to one", "LOOM_CXX=g++"});
    }
    {
        // A wrapper that runs but cannot find the compiler exits 127 (as a shell would).
        ScopedEnv cxx("LOOM_CXX", "env /nonexistent/g++");
        LOOM_EXPECT_ERROR(KernelFunction{add_one_spec("no_cxx")}, UserError,
                          {"LOOM_CXX is 'env /nonexistent/g++'", "exit status 127",
                           "set LOOM_CXX"});
    }
    // And with LOOM_CXX restored, the same kernel compiles.
    KernelFunction k(add_one_spec("no_cxx"));
    EXPECT_EQ(k.backend(), Backend::Host);
}

TEST(HostErrors, VariantsMustShareTheBackend) {
    KernelSpec s = add_one_spec();
    KernelSpec wide = s;
    wide.backend = Backend::Cuda;
    s.wide = std::make_shared<const KernelSpec>(wide);
    LOOM_EXPECT_ERROR(KernelFunction{s}, UserError, {"int64 variant", "same target"});
}

} // namespace

namespace {

// Issue 11, weak spots: a raw ArrayRef with a negative extent was accepted, and a float32
// parameter of 1e300 silently became inf.
TEST(HostErrors, NegativeExtentsAreRefused) {
    KernelFunction k(add_one_spec());
    auto out = HostArray<float>::zeros({6});
    auto x = HostArray<float>::zeros({6});
    ArrayRef bad = x.ref();
    bad.shape = {-6};
    LOOM_EXPECT_ERROR(k(args("out", out, "x", bad)), UserError,
                      {"argument 'x' has extent -6 along axis 0", "cannot be negative"});
}

TEST(HostErrors, Float32ParametersOutsideTheFloatRangeAreRefused) {
    auto [x, y] = loom::fields<2>("x, y: float32[1D]");
    Kernel kernel = create_kernel({Assignment(y.center(), param<float>("alpha") * x.center())},
                                  loom::test::cpu("host_err_alpha"));
    KernelFunction k = kernel.compile();
    auto xs = HostArray<float>::random({8}, 3);
    auto ys = HostArray<float>::zeros({8});
    LOOM_EXPECT_ERROR(k(args("x", xs, "y", ys, "alpha", 1e300)), UserError,
                      {"argument 'alpha' = 1e+300 does not fit the float32 parameter",
                       "would become inf", "param<double>"});
    LOOM_EXPECT_ERROR(k(args("x", xs, "y", ys, "alpha", -1e39)), UserError,
                      {"argument 'alpha'", "does not fit the float32 parameter"});
    // inf itself and values in range are what the user asked for.
    k(args("x", xs, "y", ys, "alpha", 2.0));
    EXPECT_EQ(ys.to_vector()[3], 2.0f * xs.to_vector()[3]);
    k(args("x", xs, "y", ys, "alpha", std::numeric_limits<double>::infinity()));
    EXPECT_TRUE(std::isinf(ys.to_vector()[3]));
}

} // namespace
