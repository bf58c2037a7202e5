// Every argument and launch error of KernelFunction on a real device: each is a UserError whose
// message names the kernel, the argument and the fix; nothing is launched (the poisoned output
// stays poisoned), and the corrected call then runs without a CudaError and computes the right
// cells.
#include "gpu_test_support.hpp"
#include "runtime/driver.hpp"
#include "tests/support/expect_error.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace loom {
namespace {

using namespace loom::gpu_test;

/// The Jacobi kernel (fields dst, src) with good arguments. A test breaks one thing, checks the
/// error, then calls expect_untouched_then_fixed().
struct JacobiCall {
    KernelFunction k = jacobi_kernel().compile();
    Shape shape{40, 56};
    Input<float> src = random_input<float>(shape, 3001);
    DeviceArray<float> dst = poisoned<float>(shape);

    Args good() const { return args("src", src.device, "dst", dst); }

    /// The failed calls wrote nothing; the good call launches and computes the right cells.
    void expect_untouched_then_fixed() {
        EXPECT_TRUE(all_poison(dst)) << "a call that threw must not launch";
        try {
            k(good());
            k.synchronize();
        } catch (const std::exception& e) {
            ADD_FAILURE() << "the corrected call threw: " << e.what();
            return;
        }
        EXPECT_TRUE(check_output(dst, jacobi_cells(src.host, interior(shape, 1))));
    }
};

TEST(GpuRuntimeErrors, MissingArgument) {
    LOOM_REQUIRE_GPU();
    JacobiCall c;
    LOOM_EXPECT_ERROR(c.k(args("src", c.src.device)), UserError,
                      {"kernel 'jacobi'", "missing argument(s): dst", "args(\"dst\", ...)",
                       "in the order: dst, src"});
    LOOM_EXPECT_ERROR(c.k(args()), UserError, {"missing argument(s): dst, src"});
    // Positional arguments bind in the kernel's order: the one array given is dst.
    LOOM_EXPECT_ERROR(c.k(positional(c.dst)), UserError, {"missing argument(s): src"});
    c.expect_untouched_then_fixed();
}

TEST(GpuRuntimeErrors, UnknownName) {
    LOOM_REQUIRE_GPU();
    JacobiCall c;
    LOOM_EXPECT_ERROR(
        c.k(args("src", c.src.device, "dst", c.dst, "alpha", 0.5)), UserError,
        {"kernel 'jacobi'", "has no argument named 'alpha'", "its arguments are: dst, src"});
    LOOM_EXPECT_ERROR(c.k(args("scr", c.src.device, "dst", c.dst)), UserError,
                      {"has no argument named 'scr'"});
    c.expect_untouched_then_fixed();
}

TEST(GpuRuntimeErrors, NameGivenTwice) {
    LOOM_REQUIRE_GPU();
    JacobiCall c;
    LOOM_EXPECT_ERROR(c.k(args("src", c.src.device, "dst", c.dst, "src", c.src.device)), UserError,
                      {"kernel 'jacobi'", "argument 'src' is given twice"});
    // By position and by name.
    Args both = positional(c.dst);
    both.named.emplace_back("dst", Arg(c.dst.ref()));
    both.named.emplace_back("src", Arg(c.src.device.ref()));
    LOOM_EXPECT_ERROR(c.k(both), UserError, {"argument 'dst' is given twice"});
    // Too many by position.
    LOOM_EXPECT_ERROR(c.k(positional(c.dst, c.src.device, 1.0)), UserError,
                      {"got 3 positional arguments, but it takes 2: dst, src"});
    c.expect_untouched_then_fixed();
}

TEST(GpuRuntimeErrors, WrongElementType) {
    LOOM_REQUIRE_GPU();
    JacobiCall c;
    DeviceArray<double> f64 = DeviceArray<double>::random(c.shape, 3002);
    LOOM_EXPECT_ERROR(c.k(args("src", f64, "dst", c.dst)), UserError,
                      {"kernel 'jacobi'", "argument 'src'", "float64[40, 56]",
                       "has element type float64, but field src is float32",
                       "pass a float32 array"});
    DeviceArray<std::int32_t> i32 = DeviceArray<std::int32_t>::zeros(c.shape);
    LOOM_EXPECT_ERROR(c.k(args("src", c.src.device, "dst", i32)), UserError,
                      {"argument 'dst'", "has element type int32, but field dst is float32"});
    c.expect_untouched_then_fixed();
}

TEST(GpuRuntimeErrors, WrongNumberOfDimensions) {
    LOOM_REQUIRE_GPU();
    JacobiCall c;
    DeviceArray<float> three = DeviceArray<float>::random({40, 56, 2}, 3003);
    LOOM_EXPECT_ERROR(
        c.k(args("src", three, "dst", c.dst)), UserError,
        {"argument 'src'", "has 3 dimension(s), but field src needs 2 (2 spatial)", "reshape it"});
    DeviceArray<float> one = DeviceArray<float>::random({40 * 56}, 3004);
    LOOM_EXPECT_ERROR(c.k(args("src", c.src.device, "dst", one)), UserError,
                      {"argument 'dst'", "has 1 dimension(s), but field dst needs 2"});
    c.expect_untouched_then_fixed();
}

TEST(GpuRuntimeErrors, ShapesDifferBetweenFields) {
    LOOM_REQUIRE_GPU();
    JacobiCall c;
    DeviceArray<float> wider = DeviceArray<float>::random({40, 57}, 3005);
    LOOM_EXPECT_ERROR(c.k(args("src", wider, "dst", c.dst)), UserError,
                      {"kernel 'jacobi'", "fields share one iteration space",
                       "'dst' has spatial shape [40, 56] and 'src' has [40, 57]",
                       "pass arrays of the same shape"});
    c.expect_untouched_then_fixed();
}

TEST(GpuRuntimeErrors, FixedShapeMismatch) {
    LOOM_REQUIRE_GPU();
    KernelFunction k = golden::fixed_shape_i32().create().compile(); // float32[64, 128]
    Input<float> good_a = random_input<float>({64, 128}, 3006);
    DeviceArray<float> out = poisoned<float>({64, 128});

    DeviceArray<float> small = DeviceArray<float>::random({64, 127}, 3007);
    LOOM_EXPECT_ERROR(k(args("a", small, "b", out)), UserError,
                      {"kernel 'fixed_diff'", "argument 'a'",
                       "has spatial shape [64, 127], but field a was generated for the fixed "
                       "shape [64, 128]"});
    // The right shape in the wrong memory order: the strides are baked in too.
    DeviceArray<float> fortran =
        DeviceArray<float>::random({64, 128}, 3008, Uniform(), MemoryOrder::Fortran);
    LOOM_EXPECT_ERROR(k(args("a", fortran, "b", out)), UserError,
                      {"has strides [1, 64], but the fixed-shape field a was generated for "
                       "strides [128, 1]",
                       "pass a compact array in the c layout"});
    // A view of the right shape inside a larger array has the parent's strides.
    DeviceArray<float> big = DeviceArray<float>::random({70, 130}, 3009);
    LOOM_EXPECT_ERROR(k(args("a", big.view({1, 1}, {64, 128}), "b", out)), UserError,
                      {"has strides [130, 1]", "generated for strides [128, 1]"});

    EXPECT_TRUE(all_poison(out));
    k(args("a", good_a.device, "b", out));
    k.synchronize();
    const CellSet cells = interior({64, 128}, 1);
    EXPECT_TRUE(check_output(out, [&](const Index& i) {
        return cells.contains(i)
                   ? Cell::of(double(good_a.host(i[0], i[1] + 1)) - good_a.host(i[0], i[1] - 1))
                   : Cell::untouched();
    }));
}

TEST(GpuRuntimeErrors, WrongIndexDimensionSize) {
    LOOM_REQUIRE_GPU();
    KernelFunction k = golden::vector_momentum().create().compile(); // m(2) = rho * u(2)
    const std::int64_t n0 = 20, n1 = 30;
    Input<double> r = random_input<double>({n0, n1}, 3010);
    DeviceArray<double> u3 =
        DeviceArray<double>::random({n0, n1, 3}, 3011, Uniform(), MemoryOrder::Fortran);
    DeviceArray<double> mout = poisoned<double>({n0, n1, 2});
    LOOM_EXPECT_ERROR(k(args("m", mout, "rho", r.device, "u", u3)), UserError,
                      {"kernel 'momentum'", "argument 'u'",
                       "has 3 elements along index axis 0 (array axis 2), but field u has index "
                       "shape (2)"});
    DeviceArray<double> m1 = poisoned<double>({n0, n1, 1});
    Input<double> u2 = random_input<double>({n0, n1, 2}, 3012, MemoryOrder::Fortran);
    LOOM_EXPECT_ERROR(k(args("m", m1, "rho", r.device, "u", u2.device)), UserError,
                      {"argument 'm'", "has 1 elements along index axis 0"});
    // A C-order u: the SoA code addresses axis 0 with stride 1.
    DeviceArray<double> u_c = DeviceArray<double>::random({n0, n1, 2}, 3013);
    LOOM_EXPECT_ERROR(k(args("m", mout, "rho", r.device, "u", u_c)), UserError,
                      {"argument 'u'", "has stride 60 along axis 0", "fzyx layout"});

    EXPECT_TRUE(all_poison(mout));
    k(args("m", mout, "rho", r.device, "u", u2.device));
    k.synchronize();
    EXPECT_TRUE(check_output(
        mout, [&](const Index& i) { return Cell::of(r.host(i[0], i[1]) * u2.host(i)); }));
}

TEST(GpuRuntimeErrors, StridesTheKernelCannotUse) {
    LOOM_REQUIRE_GPU();
    JacobiCall c;
    // Every other element of a [40, 112] array: stride 2 along the unit-stride axis 1.
    DeviceArray<float> base = DeviceArray<float>::random({40, 112}, 3014);
    DeviceView<float> every_other(base.data(), {40, 56}, {112, 2});
    LOOM_EXPECT_ERROR(c.k(args("src", every_other, "dst", c.dst)), UserError,
                      {"kernel 'jacobi'", "argument 'src'", "strides [112, 2]",
                       "has stride 2 along axis 1, but field src was generated for the c layout",
                       "addresses axis 1 with stride 1", "a sub-box view keeps it"});
    // A Fortran-order array for a C-layout field.
    DeviceArray<float> fortran =
        DeviceArray<float>::random(c.shape, 3015, Uniform(), MemoryOrder::Fortran);
    LOOM_EXPECT_ERROR(c.k(args("src", fortran, "dst", c.dst)), UserError,
                      {"argument 'src'", "has stride 40 along axis 1"});
    // And a C-order array for a Fortran-layout field.
    KernelFunction kf = jacobi_kernel(Layout::Fortran, "jacobi_f").compile();
    DeviceArray<float> f_dst = poisoned<float>(c.shape, MemoryOrder::Fortran);
    LOOM_EXPECT_ERROR(kf(args("src", c.src.device, "dst", f_dst)), UserError,
                      {"kernel 'jacobi_f'", "argument 'src'",
                       "has stride 56 along axis 0, but field src was generated for the fortran "
                       "layout"});
    EXPECT_TRUE(all_poison(f_dst));
    c.expect_untouched_then_fixed();
}

TEST(GpuRuntimeErrors, HostMemoryPassed) {
    LOOM_REQUIRE_GPU();
    JacobiCall c;
    std::vector<float> host(static_cast<std::size_t>(element_count(c.shape)), 1.0f);
    ArrayRef ref = c.src.device.ref();
    ref.ptr = reinterpret_cast<CUdeviceptr>(host.data());
    ref.is_device_memory = false;
    LOOM_EXPECT_ERROR(c.k(args("src", ref, "dst", c.dst)), UserError,
                      {"kernel 'jacobi'", "argument 'src'", "on host",
                       "is host memory, but the kernel runs on the GPU",
                       "DeviceArray<T>::from_host"});
    c.expect_untouched_then_fixed();
}

TEST(GpuRuntimeErrors, BufferOnAnotherDevice) {
    LOOM_REQUIRE_GPU();
    JacobiCall c;
    ArrayRef ref = c.dst.ref();
    ref.device = 1;
    LOOM_EXPECT_ERROR(c.k(args("src", c.src.device, "dst", ref)), UserError,
                      {"argument 'dst'", "on cuda:1",
                       "lives on device 1, but the kernel was loaded on device 0"});
    c.expect_untouched_then_fixed();
}

TEST(GpuRuntimeErrors, NullPointerAndReadOnlyOutput) {
    LOOM_REQUIRE_GPU();
    JacobiCall c;
    ArrayRef null_ref = c.src.device.ref();
    null_ref.ptr = 0;
    LOOM_EXPECT_ERROR(c.k(args("src", null_ref, "dst", c.dst)), UserError,
                      {"argument 'src'", "has a null device pointer"});
    ArrayRef read_only = c.dst.ref();
    read_only.read_only = true;
    LOOM_EXPECT_ERROR(
        c.k(args("src", c.src.device, "dst", read_only)), UserError,
        {"argument 'dst'", "(read-only)", "is read-only, but the kernel writes field dst"});
    c.expect_untouched_then_fixed();
    // A read-only input is fine.
    ArrayRef src_ro = c.src.device.ref();
    src_ro.read_only = true;
    DeviceArray<float> dst2 = poisoned<float>(c.shape);
    c.k(args("src", src_ro, "dst", dst2));
    c.k.synchronize();
    EXPECT_TRUE(check_output(dst2, jacobi_cells(c.src.host, interior(c.shape, 1))));
}

TEST(GpuRuntimeErrors, ManualGridCalledBeforeBlockSizeAndNumBlocksAreSet) {
    LOOM_REQUIRE_GPU();
    KernelFunction k = golden::triangle_slice().create().compile(); // [:, x:], manual grid
    DeviceArray<double> out = poisoned<double>({16, 16});

    LOOM_EXPECT_ERROR(k(args("f", out)), UserError,
                      {"kernel 'triangle'", "has a manual launch grid",
                       "set both block_size and num_blocks before calling it",
                       "k.block_size = {8, 8, 1}; k.num_blocks = {2, 2, 1}", "Missing: both"});
    k.block_size = {8, 8, 1};
    LOOM_EXPECT_ERROR(k(args("f", out)), UserError, {"Missing: num_blocks"});
    k.block_size.reset();
    k.num_blocks = {2, 2, 1};
    LOOM_EXPECT_ERROR(k(args("f", out)), UserError, {"Missing: block_size"});
    EXPECT_TRUE(all_poison(out));

    k.block_size = {8, 8, 1};
    k(args("f", out));
    k.synchronize();
    EXPECT_TRUE(check_output(
        out, [](const Index& i) { return i[1] >= i[0] ? Cell::of(1.0) : Cell::untouched(); }));
}

TEST(GpuRuntimeErrors, BlockSizeOutsideTheDeviceLimits) {
    LOOM_REQUIRE_GPU();
    JacobiCall c;
    const DeviceProperties& dev = Context::get().properties();
    const std::string max_threads = std::to_string(dev.max_threads_per_block);

    c.k.block_size = {32, 32, 2}; // every dimension allowed, the product is not
    LOOM_EXPECT_ERROR(c.k(c.good()), UserError,
                      {"kernel 'jacobi'", "block_size (32, 32, 2) has 2048 threads",
                       "allows at most " + max_threads + " per block", "use fewer threads"});
    c.k.block_size = {dev.max_block_dims[0] + 1, 1, 1};
    LOOM_EXPECT_ERROR(
        c.k(c.good()), UserError,
        {"is invalid: x must be between 1 and " + std::to_string(dev.max_block_dims[0])});
    c.k.block_size = {1, 1, 65};
    LOOM_EXPECT_ERROR(c.k(c.good()), UserError,
                      {"block_size (1, 1, 65) is invalid: z must be between 1 and " +
                       std::to_string(dev.max_block_dims[2])});
    EXPECT_EQ(dev.max_block_dims[2], 64);
    // A zero dimension, with the grid set by hand (see
    // ZeroBlockDimensionWithAnInferredGrid for the inferred grid).
    c.k.block_size = {0, 4, 1};
    c.k.num_blocks = {1, 1, 1};
    LOOM_EXPECT_ERROR(c.k(c.good()), UserError,
                      {"block_size (0, 4, 1) is invalid: x must be between 1 and"});
    c.k.num_blocks.reset();
    c.k.block_size.reset(); // back to the default block
    c.expect_untouched_then_fixed();
    KernelFunction fresh = jacobi_kernel().compile();
    fresh(c.good());
    fresh.synchronize();
    EXPECT_EQ(c.k.last_block(), fresh.last_block()) << "reset() gives the default block back";
}

// Disabled until the library is fixed: KernelFunction::prepare computes the inferred grid as
// (extent + block - 1) / block before it checks the block, so a zero block dimension is an integer
// division by zero (SIGFPE kills the test binary) instead of this UserError.
TEST(GpuRuntimeErrors, ZeroBlockDimensionWithAnInferredGrid) {
    LOOM_REQUIRE_GPU();
    JacobiCall c;
    c.k.block_size = {0, 4, 1};
    LOOM_EXPECT_ERROR(c.k(c.good()), UserError,
                      {"block_size (0, 4, 1) is invalid: x must be between 1 and"});
    c.k.block_size = {64, 0, 1};
    LOOM_EXPECT_ERROR(c.k(c.good()), UserError,
                      {"block_size (64, 0, 1) is invalid: y must be between 1 and"});
    c.k.block_size = {64, 4, 1};
    c.expect_untouched_then_fixed();
}

TEST(GpuRuntimeErrors, GridOutsideTheDeviceLimits) {
    LOOM_REQUIRE_GPU();
    JacobiCall c;
    const DeviceProperties& dev = Context::get().properties();
    const std::int64_t max_y = dev.max_grid_dims[1];

    c.k.num_blocks = {1, max_y + 1, 1};
    LOOM_EXPECT_ERROR(c.k(c.good()), UserError,
                      {"kernel 'jacobi'", "num_blocks (1, " + std::to_string(max_y + 1) +
                                              ", 1) is invalid: y must "
                                              "be between 1 and " +
                                              std::to_string(max_y)});
    c.k.num_blocks = {std::int64_t(dev.max_grid_dims[0]) + 1, 1, 1};
    LOOM_EXPECT_ERROR(
        c.k(c.good()), UserError,
        {"is invalid: x must be between 1 and " + std::to_string(dev.max_grid_dims[0])});
    c.k.num_blocks = {1, 1, 0};
    LOOM_EXPECT_ERROR(c.k(c.good()), UserError, {"num_blocks (1, 1, 0) is invalid: z must be"});
    c.k.num_blocks.reset();

    // An inferred grid can exceed the limit too: with 4 rows per thread and one thread per block
    // along y, 4 * max_y + 4463 rows need more than max_y blocks.
    const Dim3 per_thread = c.k.spec().launch.cells_per_thread;
    ASSERT_EQ(per_thread[1], 4);
    const Shape tall{4 * max_y + 4465, 3};
    Input<float> tsrc = random_input<float>(tall, 3016);
    DeviceArray<float> tdst = poisoned<float>(tall);
    c.k.block_size = {32, 1, 1};
    LOOM_EXPECT_ERROR(c.k(args("src", tsrc.device, "dst", tdst)), UserError,
                      {"the inferred grid (1, " + std::to_string((tall[0] - 2 + 3) / 4) +
                           ", 1) exceeds the device limit " + std::to_string(max_y) + " along y",
                       "use a larger block_size"});
    EXPECT_TRUE(all_poison(tdst));
    c.k.block_size = {32, 4, 1}; // about 16 700 blocks along y
    c.k(args("src", tsrc.device, "dst", tdst));
    c.k.synchronize();
    EXPECT_TRUE(check_output(tdst, jacobi_cells(tsrc.host, interior(tall, 1))));

    c.k.block_size = {64, 4, 1};
    c.expect_untouched_then_fixed();
}

TEST(GpuRuntimeErrors, ScalarArgumentsOfTheWrongKind) {
    LOOM_REQUIRE_GPU();
    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    Expr alpha = param<float>("alpha");
    Expr n = param<std::int32_t>("n");
    KernelConfig cfg;
    cfg.name = "scaled";
    KernelFunction k =
        create_kernel(Assignment(dst.center(), src.center() * alpha + n), cfg).compile();
    const Shape shape{30, 45};
    Input<float> s = random_input<float>(shape, 3017);
    DeviceArray<float> d = poisoned<float>(shape);

    LOOM_EXPECT_ERROR(k(args("src", s.device, "dst", d, "alpha", s.device, "n", 2)), UserError,
                      {"kernel 'scaled'",
                       "argument 'alpha' is a scalar parameter of type float32, but an array was "
                       "passed"});
    LOOM_EXPECT_ERROR(k(args("src", s.device, "dst", d, "alpha", 1.5, "n", 0.5)), UserError,
                      {"argument 'n' is an int32 parameter, but 0.5 was passed; pass an integer"});
    LOOM_EXPECT_ERROR(k(args("src", s.device, "dst", d, "alpha", 1.5, "n", 3000000000LL)),
                      UserError, {"argument 'n' = 3000000000 does not fit the int32 parameter"});
    LOOM_EXPECT_ERROR(k(args("src", 1.5, "dst", d, "alpha", 1.5, "n", 2)), UserError,
                      {"argument 'src' must be an array for field src, but a floating-point "
                       "number was passed"});
    LOOM_EXPECT_ERROR(k(args("src", s.device, "dst", 7, "alpha", 1.5, "n", 2)), UserError,
                      {"argument 'dst' must be an array for field dst, but an integer was passed"});
    EXPECT_TRUE(all_poison(d));

    k(args("src", s.device, "dst", d, "alpha", 1.5, "n", -2));
    k.synchronize();
    EXPECT_TRUE(check_output(d, [&](const Index& i) { return Cell::of(s.host(i) * 1.5 - 2.0); }));
}

TEST(GpuRuntimeErrors, Int32IndexTypeRefusesArraysThatSpanTooMuch) {
    LOOM_REQUIRE_GPU();
    KernelFunction k = jacobi_kernel(Layout::C, "jacobi_i32", ScalarType::Int32).compile();
    const Shape shape{3, 4};
    Input<float> s = random_input<float>(shape, 3018);
    DeviceArray<float> d = poisoned<float>(shape);
    // Never launched: a stride this large only describes memory, it is checked before use.
    ArrayRef huge = s.device.ref();
    huge.strides = {std::int64_t{1} << 31, 1};
    LOOM_EXPECT_ERROR(k(args("src", huge, "dst", d)), UserError,
                      {"kernel 'jacobi_i32'", "argument 'src' spans",
                       "too many for the int32 index type", "index_type int64"});
    EXPECT_TRUE(all_poison(d));
    k(args("src", s.device, "dst", d));
    k.synchronize();
    EXPECT_TRUE(check_output(d, jacobi_cells(s.host, interior(shape, 1))));
}

TEST(GpuRuntimeErrors, BenchmarkNeedsAtLeastOneRun) {
    LOOM_REQUIRE_GPU();
    JacobiCall c;
    LOOM_EXPECT_ERROR(c.k.benchmark(c.good(), 0), UserError,
                      {"benchmark: runs must be at least 1"});
    c.expect_untouched_then_fixed();
}

TEST(GpuRuntimeErrors, ManyErrorsInARowThenACleanLaunch) {
    LOOM_REQUIRE_GPU();
    JacobiCall c;
    DeviceArray<double> f64 = DeviceArray<double>::random(c.shape, 3019);
    for (int round = 0; round < 3; ++round) {
        EXPECT_THROW(c.k(args("src", c.src.device)), UserError);
        EXPECT_THROW(c.k(args("src", f64, "dst", c.dst)), UserError);
        EXPECT_THROW(c.k(args("src", c.src.device, "dst", c.dst, "x", 1)), UserError);
        c.k.block_size = {2048, 1, 1};
        EXPECT_THROW(c.k(c.good()), UserError);
        c.k.block_size = {64, 4, 1};
        c.k.num_blocks = {1, 1, 1 << 20};
        EXPECT_THROW(c.k(c.good()), UserError);
        c.k.num_blocks.reset();
    }
    // No CudaError anywhere: the context is healthy and the launch is right.
    c.expect_untouched_then_fixed();
    EXPECT_NO_THROW(Context::current().synchronize());
}

} // namespace
} // namespace loom
