// The host runtime without a GPU: host arrays, the host compiler through the compile cache, and
// KernelFunction calling hand-written kernels that follow the Target::CPU contract (C++ with
// extern "C" <name>(...) and loom_kernel_<name>_entry(void* const* args), one 8-byte slot per
// parameter).
#include "runtime/compile_cache.hpp"
#include "runtime/host_library.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/scoped_env.hpp"

#include <loom/dlpack.hpp>
#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace loom {
namespace {

using loom::test::ScopedEnv;

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const std::string& path, const std::string& data) {
    std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

// ---- Host arrays ------------------------------------------------------------------------------

TEST(HostArray, ZerosFromVectorAndRoundTrip) {
    auto z = HostArray<float>::zeros({3, 4});
    EXPECT_EQ(z.shape(), (Shape{3, 4}));
    EXPECT_EQ(z.strides(), (Shape{4, 1}));
    EXPECT_EQ(z.to_vector(), std::vector<float>(12, 0.0f));

    std::vector<std::int64_t> v(24);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::int64_t(i) * 7 - 30;
    auto a = HostArray<std::int64_t>::from_vector(v, {2, 3, 4});
    EXPECT_EQ(a.to_vector(), v);
    EXPECT_EQ(a.to_host(), v);
    EXPECT_EQ(a.at({1, 2, 3}), v[23]);
    EXPECT_EQ(a.bytes(), 24 * sizeof(std::int64_t));
    EXPECT_EQ(std::vector<std::int64_t>(a.data(), a.data() + 24), v) << "C order in memory";

    HostArray<std::int64_t> copy = a;
    copy.fill(5);
    EXPECT_EQ(a.to_vector(), v) << "copies are deep";
    HostArray<std::int64_t> moved = std::move(copy);
    EXPECT_EQ(moved.to_vector(), std::vector<std::int64_t>(24, 5));
    EXPECT_TRUE(copy.shape().empty()) << "a moved-from array holds nothing"; // NOLINT
    EXPECT_EQ(copy.bytes(), 0u);                                             // NOLINT
}

TEST(HostArray, FortranOrderKeepsLogicalOrder) {
    std::vector<double> v = {0, 1, 2, 3, 4, 5}; // [[0, 1, 2], [3, 4, 5]]
    auto f = HostArray<double>::from_vector(v, {2, 3}, MemoryOrder::Fortran);
    EXPECT_EQ(f.order(), MemoryOrder::Fortran);
    EXPECT_EQ(f.strides(), (Shape{1, 2}));
    EXPECT_EQ(f.to_vector(), v);
    EXPECT_EQ(std::vector<double>(f.data(), f.data() + 6), (std::vector<double>{0, 3, 1, 4, 2, 5}));
    EXPECT_EQ(f.at({0, 2}), 2.0);
    auto z = HostArray<float>::fortran({4, 5});
    EXPECT_EQ(z.strides(), (Shape{1, 4}));
    ArrayRef r = f;
    EXPECT_TRUE(r.is_f_contiguous());
    EXPECT_FALSE(r.is_c_contiguous());
}

TEST(HostArray, SubBoxViewsReadAndWriteOnlyTheirBox) {
    std::vector<float> v(5 * 6);
    for (std::size_t i = 0; i < v.size(); ++i) v[i] = float(i);
    auto a = HostArray<float>::from_vector(v, {5, 6});
    HostView<float> box = a.view({1, 2}, {3, 2});
    EXPECT_EQ(box.shape(), (Shape{3, 2}));
    EXPECT_EQ(box.strides(), (Shape{6, 1}));
    EXPECT_EQ(box.to_vector(), (std::vector<float>{8, 9, 14, 15, 20, 21}));
    EXPECT_EQ(box.view({1, 1}, {2, 1}).to_vector(), (std::vector<float>{15, 21}));

    box.fill(-1);
    box.view({0, 0}, {1, 2}).copy_from({100, 101});
    std::vector<float> expected = v;
    for (int i : {14, 15, 20, 21}) expected[i] = -1;
    expected[8] = 100;
    expected[9] = 101;
    EXPECT_EQ(a.to_vector(), expected);

    // A Fortran-order box: the gather follows the strides.
    auto f = HostArray<float>::from_vector(v, {5, 6}, MemoryOrder::Fortran);
    EXPECT_EQ(f.view({1, 2}, {3, 2}).to_vector(), (std::vector<float>{8, 9, 14, 15, 20, 21}));

    const HostArray<float>& ca = a;
    HostView<const float> read = ca.view({0, 0}, {1, 3});
    EXPECT_EQ(read.to_vector(), (std::vector<float>{0, 1, 2}));
    EXPECT_TRUE(read.ref().read_only);
    EXPECT_FALSE(ArrayRef(a).read_only) << "an array's ref is writable (args() takes const&)";
}

TEST(HostArray, NegativeAndZeroStrides) {
    std::vector<int> v = {1, 2, 3, 4};
    HostView<int> reversed(v.data() + 3, {4}, {-1});
    EXPECT_EQ(reversed.to_vector(), (std::vector<int>{4, 3, 2, 1}));
    reversed.copy_from({10, 20, 30, 40});
    EXPECT_EQ(v, (std::vector<int>{40, 30, 20, 10}));
    HostView<int> broadcast(v.data(), {3}, {0});
    EXPECT_EQ(broadcast.to_vector(), (std::vector<int>{40, 40, 40}));
    EXPECT_THROW(broadcast.copy_from({1, 2, 3}), UserError) << "writes would alias";
}

TEST(HostArray, RandomIsDeterministicAndMatchesRandomValues) {
    auto a = HostArray<float>::random({16, 8}, 42);
    auto b = HostArray<float>::random({16, 8}, 42);
    auto c = HostArray<float>::random({16, 8}, 43);
    EXPECT_EQ(a.to_vector(), b.to_vector());
    EXPECT_NE(a.to_vector(), c.to_vector());
    EXPECT_EQ(a.to_vector(), random_values<float>(128, 42, Uniform())) << "as DeviceArray::random";
    auto f = HostArray<float>::random({16, 8}, 42, Uniform(), MemoryOrder::Fortran);
    EXPECT_EQ(f.to_vector(), a.to_vector()) << "the order changes memory, not values";
    auto n = HostArray<std::int32_t>::random({1000}, 7, Normal(10, 2));
    EXPECT_EQ(n.to_vector(), random_values<std::int32_t>(1000, 7, Normal(10, 2)));
    for (float x : a.to_vector()) {
        EXPECT_GE(x, 0.0f);
        EXPECT_LT(x, 1.0f);
    }
}

TEST(HostArray, HostViewOfPointersAndRanges) {
    std::vector<double> v(12, 1.5);
    HostView<double> p = host_view(v.data(), {3, 4});
    EXPECT_EQ(p.strides(), (Shape{4, 1}));
    HostView<double> r = host_view(v, {4, 3});
    EXPECT_EQ(r.data(), v.data());
    EXPECT_EQ(r.strides(), (Shape{3, 1}));
    HostView<double> fr = host_view(v, {4, 3}, MemoryOrder::Fortran);
    EXPECT_EQ(fr.strides(), (Shape{1, 4}));

    const std::vector<double>& cv = v;
    HostView<const double> c = host_view(cv, {12});
    ArrayRef ref = c;
    EXPECT_TRUE(ref.read_only) << "a const range gives a read-only argument";
    EXPECT_FALSE(ref.is_device_memory);
    EXPECT_EQ(ref.ptr, reinterpret_cast<std::uintptr_t>(v.data()));
    EXPECT_EQ(ref.dtype, DType::Float64);
    EXPECT_NE(ref.describe().find("on host"), std::string::npos);

    std::array<float, 6> arr{};
    HostView<float> av = host_view(arr, {2, 3});
    av.fill(2.0f);
    EXPECT_EQ(arr[5], 2.0f);

    // A typed view back from a type-erased host array (a DLPack import, say).
    HostView<double> back{r.ref()};
    EXPECT_EQ(back.data(), v.data());
    EXPECT_EQ(back.shape(), (Shape{4, 3}));
    HostView<const double> back_const(ref);
    EXPECT_EQ(back_const.to_vector(), v);
}

TEST(HostArray, DLPackExportAndImportIsHostMemory) {
    auto a = HostArray<float>::random({3, 5}, 1);
    DLManagedTensorVersioned* m = to_dlpack(a.ref());
    EXPECT_EQ(m->dl_tensor.device.device_type, kDLCPU);
    DLPackTensor t(m);
    EXPECT_FALSE(t.ref().is_device_memory);
    EXPECT_EQ(HostView<float>(t.ref()).to_vector(), a.to_vector());
}

// ---- Hand-written kernels that follow the Target::CPU contract --------------------------------

/// dst = alpha * src over a 2D C-layout box: dst, src, size_0, size_1, dst_stride_0,
/// src_stride_0, alpha. `extra` goes in front (a #warning, say).
std::string scale_source(const std::string& name, const std::string& index = "long long",
                         const std::string& extra = "") {
    std::string s = extra + R"(#include <math.h>
#include <stdint.h>
#include <stdlib.h>

extern "C" void NAME(float* __restrict__ dst, const float* __restrict__ src,
                     const INDEX size_0, const INDEX size_1,
                     const INDEX dst_stride_0, const INDEX src_stride_0, const float alpha)
{
#pragma omp parallel for
    for (INDEX ctr_0 = 0; ctr_0 < size_0; ++ctr_0)
        for (INDEX ctr_1 = 0; ctr_1 < size_1; ++ctr_1)
            dst[dst_stride_0 * ctr_0 + ctr_1] = alpha * src[src_stride_0 * ctr_0 + ctr_1];
}

extern "C" void loom_kernel_NAME_entry(void* const* args)
{
    NAME((float*)(uintptr_t)*(const uint64_t*)args[0],
         (const float*)(uintptr_t)*(const uint64_t*)args[1],
         *(const INDEX*)args[2], *(const INDEX*)args[3],
         *(const INDEX*)args[4], *(const INDEX*)args[5],
         *(const float*)args[6]);
}
)";
    auto replace_all = [&](const std::string& from, const std::string& to) {
        for (std::size_t at = s.find(from); at != std::string::npos;
             at = s.find(from, at + to.size()))
            s.replace(at, from.size(), to);
    };
    replace_all("NAME", name);
    replace_all("INDEX", index);
    return s;
}

FieldSpec field_2d(const std::string& name, DType t, bool written) {
    FieldSpec f;
    f.name = name;
    f.dtype = t;
    f.spatial_dims = 2;
    f.unit_stride_axis = 1;
    f.layout = "c";
    f.written = written;
    return f;
}

ParamSpec param(const std::string& name, ArgRole role, DType t, int field = -1, int axis = -1) {
    ParamSpec p;
    p.name = name;
    p.role = role;
    p.dtype = t;
    p.field = field;
    p.axis = axis;
    return p;
}

KernelSpec scale_spec(const std::string& name = "scale", const std::string& extra = "") {
    KernelSpec s;
    s.name = name;
    s.source = scale_source(name, "long long", extra);
    s.backend = Backend::Host;
    s.index_type = DType::Int64;
    s.fields = {field_2d("dst", DType::Float32, true), field_2d("src", DType::Float32, false)};
    s.params = {param("dst", ArgRole::FieldPointer, DType::Float32, 0),
                param("src", ArgRole::FieldPointer, DType::Float32, 1),
                param("size_0", ArgRole::Size, DType::Int64, -1, 0),
                param("size_1", ArgRole::Size, DType::Int64, -1, 1),
                param("dst_stride_0", ArgRole::Stride, DType::Int64, 0, 0),
                param("src_stride_0", ArgRole::Stride, DType::Int64, 1, 0),
                param("alpha", ArgRole::Scalar, DType::Float32)};
    return s;
}

std::vector<float> scaled(const std::vector<float>& v, float alpha) {
    std::vector<float> out;
    for (float x : v) out.push_back(alpha * x);
    return out;
}

TEST(HostKernel, NamedPositionalAndScalarArguments) {
    KernelFunction k(scale_spec());
    EXPECT_EQ(k.backend(), Backend::Host);
    EXPECT_FALSE(k.block_size.is_set()) << "no block on the CPU";
    EXPECT_FALSE(k.num_blocks.is_set());
    EXPECT_EQ(k.handle(), nullptr);

    auto src = HostArray<float>::random({37, 29}, 3);
    auto dst = HostArray<float>::zeros({37, 29});
    k(args("src", src, "dst", dst, "alpha", 2.5));
    EXPECT_EQ(dst.to_vector(), scaled(src.to_vector(), 2.5f));
    EXPECT_EQ(k.last_grid(), (Dim3{0, 0, 0}));

    // Two float32 2D fields by position: refused, since swapping them would pass every check.
    LOOM_EXPECT_ERROR(k(positional(dst, src, 3)), UserError,
                      {"takes fields 'dst' (written) and 'src' (read), both float32 with 2 axes",
                       "overwrite an input", "Pass fields by name"});
    EXPECT_EQ(dst.to_vector(), scaled(src.to_vector(), 2.5f)) << "untouched by the refused call";

    Args mixed = positional(dst); // one field by position, the rest by name
    mixed.named.emplace_back("src", Arg(src.ref()));
    mixed.named.emplace_back("alpha", Arg(std::int64_t(3))); // an integer for a float converts
    k(mixed);
    EXPECT_EQ(dst.to_vector(), scaled(src.to_vector(), 3.0f));
    k.synchronize(); // a no-op: the call has finished
}

TEST(HostKernel, StridedSubBoxesAndRawBuffers) {
    KernelFunction k(scale_spec());
    // Views into larger arrays: strides come from the arrays, only the box is written.
    auto big_src = HostArray<float>::random({10, 12}, 5);
    auto big_dst = HostArray<float>::zeros({9, 20});
    k(args("dst", big_dst.view({2, 3}, {4, 5}), "src", big_src.view({1, 1}, {4, 5}), "alpha", 2));
    EXPECT_EQ(big_dst.view({2, 3}, {4, 5}).to_vector(),
              scaled(big_src.view({1, 1}, {4, 5}).to_vector(), 2));
    float sum = 0;
    for (float x : big_dst.to_vector()) sum += x == 0 ? 0 : 1;
    EXPECT_EQ(sum, 20) << "nothing outside the box is written";

    // Plain buffers with a shape; a const one is read-only, fine for the read field.
    const std::vector<float> in = random_values<float>(6 * 7, 9, Uniform());
    std::vector<float> out(6 * 7);
    k(args("dst", host_view(out, {6, 7}), "src", host_view(in, {6, 7}), "alpha", 0.5));
    EXPECT_EQ(out, scaled(in, 0.5f));
}

TEST(HostKernel, DLPackCpuTensorsAreArguments) {
    KernelFunction k(scale_spec());
    std::vector<float> in = random_values<float>(4 * 6, 2, Uniform());
    std::vector<float> out(4 * 6, 0.0f);
    std::int64_t shape[] = {4, 6};
    std::int64_t strides[] = {6, 1};
    DLTensor t{};
    t.data = in.data();
    t.device = {kDLCPU, 0};
    t.ndim = 2;
    t.dtype = to_dlpack_dtype(DType::Float32);
    t.shape = shape;
    t.strides = strides;
    DLTensor o = t;
    o.data = out.data();
    k(args("src", from_dlpack(t), "dst", from_dlpack(o), "alpha", 4));
    EXPECT_EQ(out, scaled(in, 4.0f));

    // A managed (versioned) export of a HostArray, imported back.
    auto dst = HostArray<float>::zeros({4, 6});
    DLPackTensor managed(to_dlpack(dst.ref()));
    k(args("src", from_dlpack(t), "dst", managed, "alpha", 1));
    EXPECT_EQ(dst.to_vector(), in);
}

TEST(HostKernel, CompileLogAndBenchmark) {
    KernelFunction k(scale_spec("scale_warns", "#warning \"loom test warning\"\n"));
    EXPECT_NE(k.compile_log().find("loom test warning"), std::string::npos) << k.compile_log();
    auto src = HostArray<float>::random({64, 64}, 1);
    auto dst = HostArray<float>::zeros({64, 64});
    double ms = k.benchmark(args("src", src, "dst", dst, "alpha", 2), 5);
    EXPECT_GT(ms, 0.0);
    EXPECT_EQ(dst.to_vector(), scaled(src.to_vector(), 2.0f));
}

TEST(HostKernel, CopiesShareTheLibrary) {
    auto src = HostArray<float>::random({8, 8}, 1);
    auto dst = HostArray<float>::zeros({8, 8});
    std::optional<KernelFunction> copy;
    {
        KernelFunction k(scale_spec());
        copy = k;
    }
    (*copy)(args("src", src, "dst", dst, "alpha", 3)); // the first is gone, the library is not
    EXPECT_EQ(dst.to_vector(), scaled(src.to_vector(), 3.0f));
}

// The automatic index type: an int32 kernel, with the int64 variant loaded on first need. Each
// variant writes sizeof(its index type) into out[0], so the test sees which one ran.
std::string marker_source(const std::string& index) {
    return "#include <stdint.h>\n"
           "extern \"C\" void mark(double* out, const " + index + " size_0, const " + index +
           " size_1, const " + index + " out_stride_0)\n"
           "{ out[0] = (double)sizeof(size_0) + 0 * (size_1 + out_stride_0); }\n"
           "extern \"C\" void loom_kernel_mark_entry(void* const* args)\n"
           "{ mark((double*)(uintptr_t)*(const uint64_t*)args[0], *(const " + index + "*)args[1],"
           " *(const " + index + "*)args[2], *(const " + index + "*)args[3]); }\n";
}

KernelSpec marker_spec(DType index) {
    KernelSpec s;
    s.name = "mark";
    s.source = marker_source(index == DType::Int32 ? "int" : "long long");
    s.backend = Backend::Host;
    s.index_type = index;
    s.fields = {field_2d("out", DType::Float64, true)};
    s.params = {param("out", ArgRole::FieldPointer, DType::Float64, 0),
                param("size_0", ArgRole::Size, index, -1, 0),
                param("size_1", ArgRole::Size, index, -1, 1),
                param("out_stride_0", ArgRole::Stride, index, 0, 0)};
    return s;
}

TEST(HostKernel, AutomaticIndexTypeLoadsTheInt64VariantOnNeed) {
    KernelSpec spec = marker_spec(DType::Int32);
    spec.wide = std::make_shared<const KernelSpec>(marker_spec(DType::Int64));
    CompileCache::global().clear_memory();
    auto before = CompileCache::global().stats();
    KernelFunction k(spec);
    auto loaded = CompileCache::global().stats();
    EXPECT_EQ(loaded.compiles + loaded.disk_hits, before.compiles + before.disk_hits + 1)
        << "only the int32 variant is built up front";

    std::vector<double> out(4, 0.0);
    k(args("out", host_view(out, {2, 2})));
    EXPECT_EQ(out[0], 4.0) << "small arrays run the int32 variant";

    // Axis 0 strided by 2^31 elements: int32 cannot address it (only out[0] is ever touched).
    HostView<double> huge(out.data(), {2, 1}, {std::int64_t(1) << 31, 1});
    k(args("out", huge));
    EXPECT_EQ(out[0], 8.0) << "the int64 variant ran";
    k(args("out", host_view(out, {2, 2})));
    EXPECT_EQ(out[0], 4.0);
}

// ---- The host compiler through the compile cache ----------------------------------------------

class HostCacheTest : public ::testing::Test {
protected:
    void SetUp() override {
        std::string pattern = (fs::temp_directory_path() / "loom_host_cache_XXXXXX").string();
        ASSERT_NE(mkdtemp(pattern.data()), nullptr);
        dir_ = pattern;
        cache_dir_.emplace("LOOM_CACHE_DIR", dir_.c_str());
        cache_switch_.emplace("LOOM_CACHE", nullptr);
        cxx_.emplace("LOOM_CXX", nullptr);
    }
    void TearDown() override {
        cxx_.reset();
        cache_switch_.reset();
        cache_dir_.reset();
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    std::string dir_;
    std::optional<ScopedEnv> cache_dir_, cache_switch_, cxx_;
};

TEST_F(HostCacheTest, CompilesOnceThenMemoryThenDisk) {
    CompileCache cache;
    const std::string src = scale_source("scale_cache");
    HostCompilerOptions o = HostCompilerOptions::from_environment();
    CachedArtifact a = cache.get_host(src, "scale_cache", o);
    EXPECT_EQ(a.source, CachedArtifact::Compiled);
    EXPECT_EQ(a.payload.compare(0, 4, "\x7f" "ELF"), 0) << "a shared library";
    EXPECT_TRUE(fs::exists(cache.entry_path(a.key, "hostlib")));

    CachedArtifact b = cache.get_host(src, "scale_cache", o);
    EXPECT_EQ(b.source, CachedArtifact::Memory);
    EXPECT_EQ(b.payload, a.payload);

    cache.clear_memory();
    CachedArtifact c = cache.get_host(src, "scale_cache", o);
    EXPECT_EQ(c.source, CachedArtifact::Disk);
    EXPECT_EQ(c.payload, a.payload);
    EXPECT_EQ(cache.stats().compiles, 1u);

    // Loading writes the verified bytes to <key>.so and resolves the entry point.
    auto lib = HostLibrary::load(c, cache, "scale_cache", src, "");
    EXPECT_EQ(lib->path(), cache.entry_path(a.key, "so"));
    EXPECT_EQ(read_file(lib->path()), a.payload);
    EXPECT_NE(lib->entry(), nullptr);
    EXPECT_EQ(HostLibrary::load(c, cache, "scale_cache", src, ""), lib) << "one load per key";
}

TEST_F(HostCacheTest, KeyCoversSourceNameFlagsAndCompiler) {
    CompileCache cache;
    const std::string src = scale_source("scale");
    HostCompilerOptions base;
    HostCompilerOptions fast;
    fast.fast_math = true;
    HostCompilerOptions extra;
    extra.extra = {"-DLOOM_TEST=1"};
    HostCompilerOptions env_cxx;
    env_cxx.compiler = {"env", "c++"};
    std::vector<std::string> keys = {cache.host_key(src, "scale", base),
                                     cache.host_key(src + " ", "scale", base),
                                     cache.host_key(src, "other", base),
                                     cache.host_key(src, "scale", fast),
                                     cache.host_key(src, "scale", extra),
                                     cache.host_key(src, "scale", env_cxx)};
    EXPECT_EQ(cache.host_key(src, "scale", base), keys[0]) << "keys are deterministic";
    for (std::size_t i = 0; i < keys.size(); ++i)
        for (std::size_t j = i + 1; j < keys.size(); ++j)
            EXPECT_NE(keys[i], keys[j]) << "variants " << i << " and " << j << " share a key";
    EXPECT_NE(cache.key(src, "scale", {}), keys[0]) << "CUDA and host keys never meet";
    EXPECT_NE(fast.flags(), base.flags());
    EXPECT_EQ(base.command("scale").back(), "scale.cpp");
    EXPECT_NE(host_compiler_identity({"c++"}), "");
}

TEST_F(HostCacheTest, LoomCxxIsSplitIntoProgramAndArguments) {
    ScopedEnv cxx("LOOM_CXX", "  env   c++ ");
    HostCompilerOptions o = HostCompilerOptions::from_environment();
    EXPECT_EQ(o.compiler, (std::vector<std::string>{"env", "c++"}));
    CompileCache cache;
    EXPECT_EQ(cache.get_host(scale_source("scale_env"), "scale_env", o).source,
              CachedArtifact::Compiled);
}

TEST_F(HostCacheTest, CorruptEntriesAreRebuiltAndDamagedLibrariesRewritten) {
    const std::string src = scale_source("scale_corrupt");
    HostCompilerOptions o;
    std::string entry, good, key;
    {
        CompileCache cache;
        CachedArtifact a = cache.get_host(src, "scale_corrupt", o);
        key = a.key;
        entry = cache.entry_path(key, "hostlib");
        good = read_file(entry);
    }
    std::string bad = good;
    bad[bad.size() / 2] = char(bad[bad.size() / 2] ^ 0x5a);
    write_file(entry, bad);
    CompileCache cache;
    CachedArtifact r = cache.get_host(src, "scale_corrupt", o);
    EXPECT_EQ(r.source, CachedArtifact::Compiled);
    EXPECT_EQ(cache.stats().corrupt_entries, 1u);
    EXPECT_EQ(read_file(entry).size(), good.size()) << "the entry was rewritten";

    // A damaged <key>.so beside a good entry is rewritten before dlopen, never loaded.
    const std::string so = cache.entry_path(key, "so");
    write_file(so, "not a shared library");
    auto lib = HostLibrary::load(r, cache, "scale_corrupt", src, "");
    EXPECT_EQ(read_file(so), r.payload);
    EXPECT_NE(lib->entry(), nullptr);
}

TEST_F(HostCacheTest, WithoutDiskCacheLoadsFromATempFile) {
    ScopedEnv off("LOOM_CACHE", "0");
    CompileCache cache;
    EXPECT_FALSE(cache.disk_enabled());
    const std::string src = scale_source("scale_nodisk");
    CachedArtifact a = cache.get_host(src, "scale_nodisk", {});
    auto lib = HostLibrary::load(a, cache, "scale_nodisk", src, "");
    EXPECT_EQ(lib->path(), "") << "the temp file is removed once loaded";
    EXPECT_NE(lib->entry(), nullptr);
    EXPECT_TRUE(fs::is_empty(dir_));
}

TEST(HostKernel, SecondKernelFunctionHitsMemoryThenDisk) {
    CompileCache& cache = CompileCache::global();
    KernelSpec spec = scale_spec("scale_global");
    auto s0 = cache.stats();
    KernelFunction first(spec);
    auto s1 = cache.stats();
    EXPECT_EQ(s1.compiles + s1.disk_hits, s0.compiles + s0.disk_hits + 1);
    KernelFunction second(spec);
    EXPECT_EQ(cache.stats().memory_hits, s1.memory_hits + 1);
    if (!cache.disk_enabled()) GTEST_SKIP() << "the global disk cache is off here";
    cache.clear_memory();
    KernelFunction third(spec);
    EXPECT_EQ(cache.stats().disk_hits, s1.disk_hits + 1);
    auto src = HostArray<float>::random({5, 5}, 1);
    auto dst = HostArray<float>::zeros({5, 5});
    third(args("src", src, "dst", dst, "alpha", 2));
    EXPECT_EQ(dst.to_vector(), scaled(src.to_vector(), 2.0f));
}

// ---- Kernel::spec() for the CPU target --------------------------------------------------------

TEST(HostKernel, CpuTargetSpecIsHostBackend) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    Kernel k = create_kernel(Assignment(f.center(), 2 * g.center()), {.target = Target::CPU});
    KernelSpec s = k.spec();
    EXPECT_EQ(s.backend, Backend::Host);
    EXPECT_FALSE(s.launch.extents) << "no grid to infer";
    if (s.wide) EXPECT_EQ(s.wide->backend, Backend::Host);
    EXPECT_EQ(create_kernel(Assignment(f.center(), 2 * g.center())).spec().backend, Backend::Cuda);

    KernelFunction fn = k.compile(/*device ignored*/ 3);
    auto gv = HostArray<double>::random({6, 7}, 2);
    auto fv = HostArray<double>::zeros({6, 7});
    fn(args("f", fv, "g", gv));
    std::vector<double> expected;
    for (double x : gv.to_vector()) expected.push_back(2 * x);
    EXPECT_EQ(fv.to_vector(), expected);
}

} // namespace
} // namespace loom
