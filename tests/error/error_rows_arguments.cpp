// Error table rows: calls of compiled Target::CPU kernels with bad arguments (names, positions,
// kinds, shapes, strides, types, memory) and launch settings a CPU kernel has no use for. Every
// row is refused before the kernel runs, so no GPU is needed; each kernel compiles once per
// process.
#include "tests/error/error_rows.hpp"
#include "tests/support/cpu_config.hpp"

#include <loom/dlpack.hpp>
#include <loom/loom.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

namespace loom::test {

namespace {

/// f = a * g[1, 0] + n: float32 2D fields, a float32 and an int32 parameter, int32 index math.
KernelFunction stencil() {
    static KernelFunction k = [] {
        auto [f, g] = fields<2>("f, g: float32[2D]");
        KernelConfig c = cpu("table_stencil");
        c.index_type = ScalarType::Int32;
        return create_kernel(Assignment(f.center(), param<float>("a") * g[{1, 0}] +
                                                        cast<float>(param<std::int32_t>("n"))),
                             c)
            .compile();
    }();
    return k;
}

/// out = 2 in and twice = in + 1: pointwise, two outputs, float64 1D.
KernelFunction pointwise() {
    static KernelFunction k = [] {
        auto [in, out, twice] = fields<3>("in, out, twice: float64[1D]");
        return create_kernel({Assignment(out.center(), 2.0 * in.center()),
                              Assignment(twice.center(), in.center() + 1.0)},
                             cpu("table_pointwise"))
            .compile();
    }();
    return k;
}

/// s = u(0) + u(1) + u(2) and h = 2 w: a vector field and a fixed shape [8, 8].
KernelFunction shaped() {
    static KernelFunction k = [] {
        auto [u, s] = fields<2>("u(3), s: float64[8, 8]");
        return create_kernel(Assignment(s.center(), u(0) + u(1) + u(2)), cpu("table_shaped"))
            .compile();
    }();
    return k;
}

/// y = Dense(16 -> 16)(x) on tensor cores (float16 operands): int32 index math, float32 1D.
KernelFunction tensor_core_layer() {
    static KernelFunction k = [] {
        auto [x, y] = fields<2>("x(16), y(16): float32[1D]");
        AssignmentCollection ac;
        nn::Chain(nn::Dense::runtime("tc", 16, 16)).assign(ac, y.vec(), x.vec());
        KernelConfig c = cpu("table_tensor_cores");
        c.index_type = ScalarType::Int32;
        return create_kernel(ac, c, Schedule{.tensor_cores = TensorCores::Float16}).compile();
    }();
    return k;
}

HostArray<float> grid(std::uint64_t seed = 1) {
    return HostArray<float>::random({6, 5}, seed);
}

/// The stencil called with its good arguments, but `name` replaced by `value`.
void call_stencil_with(const char* name, const Arg& value) {
    auto f = grid(), g = grid(2);
    Args a = args("f", f, "g", g, "a", 1.5, "n", 2);
    for (auto& [n, v] : a.named)
        if (n == name)
            v = value;
    stencil()(a);
}

ArrayRef grid_ref() {
    static HostArray<float> g = grid(3);
    return g.ref();
}

} // namespace

std::vector<ErrorRow> argument_rows() {
    const auto U = Expect::User;
    return {
        // ---- names and positions ----
        {"argument_missing",
         [] { stencil()(args("f", grid(), "a", 1.0, "n", 2)); },
         U,
         {"kernel 'table_stencil'", "missing argument(s): g", "args(\"g\", ...)",
          "in the order: f, g, a, n"}},
        {"argument_unknown_name",
         [] { stencil()(args("f", grid(), "g", grid(), "a", 1.0, "n", 2, "b", 3)); },
         U,
         {"kernel 'table_stencil'", "has no argument named 'b'", "its arguments are: f, g, a, n"}},
        {"argument_named_twice",
         [] { stencil()(args("f", grid(), "g", grid(), "a", 1.0, "n", 2, "a", 2.0)); },
         U,
         {"argument 'a' is given twice (by name)", "pass each argument once"}},
        {"argument_by_position_and_name",
         [] {
             Args a = args("f", grid(), "a", 1.0, "n", 2);
             a.positional.push_back(Arg(grid_ref()));
             stencil()(a);
         },
         U,
         {"argument 'f' is given twice", "as argument 1 of positional(...), and by name"}},
        {"too_many_positional_arguments",
         [] { stencil()(positional(grid(), grid(), 1.0, 2, 5)); },
         U,
         {"got 5 positional arguments, but it takes 4: f, g, a, n"}},
        {"like_fields_by_position",
         [] { stencil()(positional(grid(), grid(), 1.0, 2)); },
         U,
         {"takes fields 'f' (written) and 'g' (read), both float32 with 2 axes",
          "got them by position", "overwrite an input", "Pass fields by name"}},
        // ---- kinds and values of scalars ----
        {"number_for_a_field",
         [] { call_stencil_with("g", Arg(1.5)); },
         U,
         {"argument 'g' must be an array for field g", "a floating-point number was passed"}},
        {"array_for_a_scalar",
         [] { call_stencil_with("a", Arg(grid_ref())); },
         U,
         {"argument 'a' is a scalar parameter of type float32", "an array was passed",
          "pass a number"}},
        {"fraction_for_an_int_parameter",
         [] { call_stencil_with("n", Arg(1.5)); },
         U,
         {"argument 'n' is an int32 parameter, but 1.5 was passed", "pass an integer"}},
        {"nan_for_an_int_parameter",
         [] { call_stencil_with("n", Arg(std::nan(""))); },
         U,
         {"argument 'n' = nan does not fit the int32 parameter", "pass a whole number"}},
        {"int32_parameter_overflow",
         [] { call_stencil_with("n", Arg(std::int64_t(3000000000LL))); },
         U,
         {"argument 'n' = 3000000000 does not fit the int32 parameter", "-2147483648..2147483647",
          "param<std::int64_t>"}},
        {"float32_parameter_overflow",
         [] { call_stencil_with("a", Arg(1e300)); },
         U,
         {"argument 'a' = 1e+300 does not fit the float32 parameter", "would become inf",
          "param<double>"}},
        // ---- arrays against their fields ----
        {"array_of_another_type",
         [] {
             call_stencil_with("g", Arg(HostArray<double>::zeros({6, 5}).ref()));
         },
         U,
         {"argument 'g'", "has element type float64, but field g is float32",
          "pass a float32 array"}},
        {"array_of_another_rank",
         [] { call_stencil_with("g", Arg(HostArray<float>::zeros({30}).ref())); },
         U,
         {"argument 'g'", "has 1 dimension(s), but field g needs 2", "reshape it"}},
        {"arrays_of_different_shapes",
         [] {
             call_stencil_with("g", Arg(HostArray<float>::zeros({6, 4}).ref()));
         },
         U,
         {"fields share one iteration space", "'f' has spatial shape [6, 5] and 'g' has [6, 4]",
          "pass arrays of the same shape"}},
        {"array_in_another_layout",
         [] {
             call_stencil_with("g", Arg(HostArray<float>::fortran({6, 5}).ref()));
         },
         U,
         {"argument 'g'", "has stride 6 along axis 1", "generated for the c layout",
          "declare the field with the layout of your array"}},
        {"array_with_a_negative_extent",
         [] {
             ArrayRef r = grid_ref();
             r.shape = {-6, 5};
             call_stencil_with("g", Arg(r));
         },
         U,
         {"argument 'g' has extent -6 along axis 0", "cannot be negative"}},
        {"array_with_too_few_strides",
         [] {
             ArrayRef r = grid_ref();
             r.strides = {5};
             call_stencil_with("g", Arg(r));
         },
         U,
         {"argument 'g' has 1 strides for 2 axes", "one stride per axis"}},
        {"array_with_a_null_pointer",
         [] {
             ArrayRef r = grid_ref();
             r.ptr = 0;
             call_stencil_with("g", Arg(r));
         },
         U,
         {"argument 'g'", "has a null pointer"}},
        {"array_misaligned",
         [] {
             ArrayRef r = grid_ref();
             r.ptr += 2;
             call_stencil_with("g", Arg(r));
         },
         U,
         {"argument 'g'", "not a multiple of its 4-byte elements", "fault on the GPU",
          "offsets count elements, not bytes"}},
        {"array_strides_beyond_the_address_space",
         [] {
             ArrayRef r = grid_ref();
             r.strides = {std::int64_t(1) << 62, 1};
             call_stencil_with("g", Arg(r));
         },
         U,
         {"argument 'g'", "strides [4611686018427387904, 1] reach more than 2^63 bytes",
          "strides count elements, not bytes"}},
        {"array_beyond_int32_index_math",
         [] {
             ArrayRef r = grid_ref();
             r.strides = {std::int64_t(1) << 31, 1};
             call_stencil_with("g", Arg(r));
         },
         U,
         {"argument 'g' spans 10737418244 elements", "too many for the int32 index type",
          "index_type int64", "leave index_type unset"}},
        {"axis_too_long_for_int32_counters",
         [] {
             // 2^31 - 1000 cells along axis 0: the array spans fewer than 2^31 elements, but a
             // thread past the axis' end would count past 2^31 - 1 before its guard. Addresses
             // far apart, never dereferenced: the call is refused before it runs.
             const std::int64_t n = (std::int64_t(1) << 31) - 1000;
             auto at = [](std::uintptr_t a) { return reinterpret_cast<float*>(a); };
             ArrayRef f = HostView<float>(at(std::uintptr_t(1) << 40), {n, 1}, {1, 1}).ref();
             ArrayRef g = HostView<float>(at(std::uintptr_t(1) << 42), {n, 1}, {1, 1}).ref();
             stencil()(args("f", f, "g", g, "a", 1.5, "n", 2));
         },
         U,
         {"argument 'f' has 2147482648 cells along axis 0", "at most 2^31 - 2^24 with int32 counters",
          "too many for the int32 index type;", "index_type int64"}},
        {"tensor_cores_beyond_half_the_int32_range",
         [] {
             // 2^26 + 2 cells of 16 floats: 2^30 + 31 elements, within int32 but not within half
             // its range, where whole warps of tiles past the last cell could overflow.
             // Addresses far apart, never dereferenced: the call is refused before it runs.
             const std::int64_t n = (std::int64_t(1) << 26) + 2;
             auto at = [](std::uintptr_t a) { return reinterpret_cast<float*>(a); };
             ArrayRef x = HostView<float>(at(std::uintptr_t(1) << 40), {n, 16}, {16, 1}).ref();
             ArrayRef y = HostView<float>(at(std::uintptr_t(1) << 41), {n, 16}, {16, 1}).ref();
             static HostArray<float> w = HostArray<float>::random({16, 16}, 4), b = HostArray<float>::random({16}, 5);
             tensor_core_layer()(args("x", x, "y", y, "tc_W", w, "tc_b", b));
         },
         U,
         {"spans 1073741855 elements", "too many for the int32 index type of tensor-core layers (at most 2^30 - 1)",
          "leave index_type unset"}},
        {"read_only_array_written",
         [] {
             static const std::vector<float> frozen(30);
             call_stencil_with("f", Arg(host_view(frozen, {6, 5}).ref()));
         },
         U,
         {"argument 'f'", "(read-only)", "is read-only, but the kernel writes field f"}},
        {"written_array_with_a_zero_stride",
         [] {
             static std::vector<float> row(5);
             call_stencil_with("f", Arg(HostView<float>(row.data(), {6, 5}, {0, 1}).ref()));
         },
         U,
         {"argument 'f'", "is written, but has stride 0 along axis 0",
          "written by several threads at once"}},
        {"device_memory_for_a_cpu_kernel",
         [] {
             ArrayRef r = grid_ref();
             r.is_device_memory = true;
             r.device = 3;
             call_stencil_with("g", Arg(r));
         },
         U,
         {"argument 'g' is device memory", "on cuda:3", "runs on the CPU (Target::CPU)",
          "HostArray<T>::from_vector", "Target::CUDA"}},
        {"cuda_dlpack_tensor_for_a_cpu_kernel",
         [] {
             static std::int64_t shape[] = {6, 5};
             DLTensor t{};
             t.data = reinterpret_cast<void*>(std::uintptr_t{0x10000});
             t.device = {kDLCUDA, 0};
             t.ndim = 2;
             t.dtype = to_dlpack_dtype(DType::Float32);
             t.shape = shape;
             call_stencil_with("g", Arg(from_dlpack(t)));
         },
         U,
         {"argument 'g' is device memory", "Target::CPU"}},
        {"dlpack_strides_in_bytes",
         [] {
             // numpy's strides of a float32 [6, 5] array, in bytes.
             static std::int64_t shape[] = {6, 5}, strides[] = {20, 4};
             static std::vector<float> data(116);
             DLTensor t{};
             t.data = data.data();
             t.device = {kDLCPU, 0};
             t.ndim = 2;
             t.dtype = to_dlpack_dtype(DType::Float32);
             t.shape = shape;
             t.strides = strides;
             call_stencil_with("g", Arg(from_dlpack(t)));
         },
         U,
         {"argument 'g' (float32[6, 5] strides [20, 4] on host)", "has stride 4 along axis 1",
          "is the element size in bytes", "divided by the itemsize"}},
        {"dlpack_strides_beyond_the_address_space",
         [] {
             static std::int64_t shape[] = {6, 5}, strides[] = {std::int64_t(1) << 61, 1};
             static std::vector<float> data(30);
             DLTensor t{};
             t.data = data.data();
             t.device = {kDLCPU, 0};
             t.ndim = 2;
             t.dtype = to_dlpack_dtype(DType::Float32);
             t.shape = shape;
             t.strides = strides;
             call_stencil_with("g", Arg(from_dlpack(t)));
         },
         U,
         {"strides [2305843009213693952, 1] reach more than 2^63 bytes"}},
        {"vector_field_with_other_components",
         [] {
             shaped()(args("u", HostArray<double>::zeros({8, 8, 2}), "s",
                           HostArray<double>::zeros({8, 8})));
         },
         U,
         {"kernel 'table_shaped'", "argument 'u'", "has 2 elements along index axis 0",
          "field u has index shape (3)"}},
        {"fixed_shape_field_of_another_shape",
         [] {
             shaped()(args("u", HostArray<double>::zeros({8, 4, 3}), "s",
                           HostArray<double>::zeros({8, 8})));
         },
         U,
         {"argument 'u'", "has spatial shape [8, 4]", "generated for the fixed shape [8, 8]"}},
        {"fixed_shape_field_with_other_strides",
         [] {
             auto wide = HostArray<double>::zeros({8, 16, 3});
             shaped()(
                 args("u", wide.view({0, 0, 0}, {8, 8, 3}), "s", HostArray<double>::zeros({8, 8})));
         },
         U,
         {"argument 'u'", "has strides [48, 3, 1]",
          "the fixed-shape field u was generated for strides [24, 3, 1]", "pass a compact array"}},
        // ---- overlapping arguments ----
        {"stencil_input_is_its_output",
         [] {
             auto f = grid();
             stencil()(args("f", f, "g", f, "a", 1.0, "n", 0));
         },
         U,
         {"arguments 'f'", "and 'g'", "overlap in memory",
          "reads g at offsets from the cells it writes to f", "Pass separate arrays"}},
        {"shifted_views_of_one_array",
         [] {
             auto b = HostArray<double>::random({12}, 4);
             pointwise()(args("in", b.view({0}, {10}), "out", b.view({2}, {10}), "twice",
                              HostArray<double>::zeros({10})));
         },
         U,
         {"kernel 'table_pointwise'", "overlap in memory", "overlap without being the same view"}},
        {"two_outputs_in_one_array",
         [] {
             auto in = HostArray<double>::random({10}, 5), out = HostArray<double>::zeros({10});
             pointwise()(args("in", in, "out", out, "twice", out));
         },
         U,
         {"arguments 'out'", "and 'twice'", "both are written", "written twice in no order"}},
        // ---- launch settings that mean nothing on the CPU ----
        {"block_size_on_a_cpu_kernel",
         [] {
             KernelFunction k = stencil();
             k.block_size = {128, 1, 1};
             k(args("f", grid(), "g", grid(2), "a", 1.0, "n", 0));
         },
         U,
         {"block_size and num_blocks have no meaning on the CPU target (Target::CPU)",
          "Found block_size = (128, 1, 1)", "k.block_size.reset()"}},
        {"num_blocks_on_a_cpu_kernel",
         [] {
             KernelFunction k = stencil();
             k.num_blocks = {4, 1, 1};
             k(args("f", grid(), "g", grid(2), "a", 1.0, "n", 0));
         },
         U,
         {"Found num_blocks = (4, 1, 1)", "k.num_blocks.reset()"}},
        {"stream_for_a_cpu_kernel",
         [] {
             stencil()(args("f", grid(), "g", grid(2), "a", 1.0, "n", 0),
                       reinterpret_cast<CUstream>(0x1));
         },
         U,
         {"runs on the CPU (Target::CPU) and synchronously", "takes no CUDA stream"}},
        {"benchmark_without_runs",
         [] { stencil().benchmark(args("f", grid(), "g", grid(2), "a", 1.0, "n", 0), 0); },
         U,
         {"kernel 'table_stencil'", "benchmark: runs must be at least 1, but runs = 0",
          "benchmark(args, 20)"}},
    };
}

} // namespace loom::test
