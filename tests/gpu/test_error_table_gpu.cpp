// The GPU half of the error table (tests/error/test_error_table.cpp holds the rest): bad inputs
// that only a CUDA kernel, a device allocation or a launch reaches. Each row is its own test case,
// GpuErrors/ErrorTable.Row/<name>, and skips without a GPU. Every row is refused before any
// kernel runs, so none leaves the context unusable for the next. Rows are built when the tests are
// registered, before any GPU check: their messages must not ask the device (grid limits are
// 65535 along y and z on every CUDA GPU).
#include "tests/gpu/gpu_test_support.hpp"
#include "tests/support/error_table.hpp"

#include "runtime/driver.hpp"

#include <loom/dlpack.hpp>
#include <loom/loom.hpp>
#include <loom/nn.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace loom::test {
namespace {

using namespace loom::counters;

/// dst = 0.5 (src[1, 0] + src[-1, 0]): float32 2D, int32 index math, an inferred grid.
KernelFunction stencil() {
    static KernelFunction k = [] {
        auto [src, dst] = fields<2>("src, dst: float32[2D]");
        KernelConfig c;
        c.name = "gpu_table_stencil";
        c.index_type = ScalarType::Int32;
        return create_kernel(Assignment(dst.center(), 0.5 * (src[{1, 0}] + src[{-1, 0}])), c)
            .compile();
    }();
    return k;
}

/// f = 1 over the triangle y >= x: a grid the caller sets.
KernelFunction manual() {
    static KernelFunction k = [] {
        Field f = field("f: float32[2D]");
        KernelConfig c;
        c.name = "gpu_table_manual";
        c.iteration_slice = Slice{all(), from(x)};
        return create_kernel(Assignment(f.center(), 1.0), c, {.manual_launch_grid = true})
            .compile();
    }();
    return k;
}

struct Arrays {
    DeviceArray<float> src = DeviceArray<float>::random({64, 48}, 1);
    DeviceArray<float> dst = DeviceArray<float>::zeros({64, 48});
};

/// The stencil with good arrays, `src` replaced by `bad`.
void call_with_src(const ArrayRef& bad) {
    Arrays a;
    stencil()(args("src", bad, "dst", a.dst));
}

/// The stencil on good arrays with a block and grid set by `set`.
template <typename Set>
void launch_with(Set set) {
    Arrays a;
    KernelFunction k = stencil();
    set(k);
    k(args("src", a.src, "dst", a.dst));
}

std::vector<ErrorRow> gpu_rows() {
    const auto U = Expect::User;
    return {
        // ---- arrays a CUDA kernel cannot take ----
        {"host_array_for_a_cuda_kernel",
         [] {
             call_with_src(HostArray<float>::random({64, 48}, 2));
         },
         U,
         {"kernel 'gpu_table_stencil'", "argument 'src'", "on host", "is host memory",
          "runs on the GPU", "DeviceArray<T>::from_host"}},
        {"host_dlpack_tensor_for_a_cuda_kernel",
         [] {
             auto h = HostArray<float>::random({64, 48}, 3);
             DLManagedTensorVersioned* t = to_dlpack(h.ref());
             DLPackTensor owned(t);
             call_with_src(owned.ref());
         },
         U,
         {"argument 'src' (float32[64, 48] strides [48, 1] on host)", "is host memory"}},
        {"array_on_another_device",
         [] {
             Arrays a;
             ArrayRef r = a.src.ref();
             r.device = 5;
             call_with_src(r);
         },
         U,
         {"lives on device 5, but the kernel was loaded on device 0",
          "move the array or compile the kernel for that device"}},
        {"null_device_pointer",
         [] {
             Arrays a;
             ArrayRef r = a.src.ref();
             r.ptr = 0;
             call_with_src(r);
         },
         U,
         {"argument 'src'", "has a null device pointer"}},
        {"misaligned_device_pointer",
         [] {
             Arrays a;
             ArrayRef r = a.src.ref();
             r.ptr += 2;
             call_with_src(r);
         },
         U,
         {"argument 'src'", "not a multiple of its 4-byte elements", "fault on the GPU"}},
        {"device_strides_beyond_the_address_space",
         [] {
             Arrays a;
             ArrayRef r = a.src.ref();
             r.strides = {std::int64_t(1) << 62, 1};
             call_with_src(r);
         },
         U,
         {"argument 'src'", "reach more than 2^63 bytes", "strides count elements, not bytes"}},
        {"device_array_beyond_int32_index_math",
         [] {
             Arrays a;
             ArrayRef r = a.src.ref();
             r.strides = {std::int64_t(1) << 31, 1};
             call_with_src(r);
         },
         U,
         {"argument 'src' spans", "too many for the int32 index type", "index_type int64"}},
        {"read_only_device_output",
         [] {
             Arrays a;
             ArrayRef r = a.dst.ref();
             r.read_only = true;
             stencil()(args("src", a.src, "dst", r));
         },
         U,
         {"argument 'dst'", "(read-only)", "is read-only, but the kernel writes field dst"}},
        {"device_input_is_its_output",
         [] {
             Arrays a;
             stencil()(args("src", a.dst, "dst", a.dst));
         },
         U,
         {"arguments 'dst'", "and 'src'", "overlap in memory",
          "reads src at offsets from the cells it writes to dst"}},
        // ---- block and grid ----
        {"manual_grid_without_block_and_grid",
         [] {
             manual()(args("f", DeviceArray<float>::zeros({16, 16})));
         },
         U,
         {"kernel 'gpu_table_manual'", "has a manual launch grid",
          "set both block_size and "
          "num_blocks",
          "Missing: both"}},
        {"manual_grid_without_num_blocks",
         [] {
             KernelFunction k = manual();
             k.block_size = {8, 8, 1};
             k(args("f", DeviceArray<float>::zeros({16, 16})));
         },
         U,
         {"has a manual launch grid", "Missing: num_blocks"}},
        {"block_size_zero_with_an_inferred_grid",
         [] { launch_with([](KernelFunction& k) {
                  k.block_size = {0, 4, 1};
              }); },
         U,
         {"block_size (0, 4, 1) is invalid: x must be between 1 and 1024"}},
        {"block_size_z_beyond_the_device",
         [] { launch_with([](KernelFunction& k) {
                  k.block_size = {1, 1, 65};
              }); },
         U,
         {"block_size (1, 1, 65) is invalid: z must be between 1 and 64"}},
        {"block_size_with_too_many_threads",
         [] { launch_with([](KernelFunction& k) {
                  k.block_size = {32, 32, 2};
              }); },
         U,
         {"block_size (32, 32, 2) has 2048 threads", "allows at most 1024 per block",
          "use fewer threads"}},
        {"num_blocks_zero",
         [] {
             launch_with([](KernelFunction& k) {
                 k.block_size = {32, 4, 1};
                 k.num_blocks = {1, 1, 0};
             });
         },
         U,
         {"num_blocks (1, 1, 0) is invalid: z must be between 1 and"}},
        {"num_blocks_beyond_the_device",
         [] {
             launch_with([](KernelFunction& k) {
                 k.num_blocks = {1, std::int64_t(Context::get().properties().max_grid_dims[1]) + 1,
                                 1};
             });
         },
         U,
         {"is invalid: y must be between 1 and 65535"}},
        {"inferred_grid_beyond_the_device",
         [] {
             // 4 rows per thread and one thread per block along y: more than max_y blocks.
             const std::int64_t max_y = Context::get().properties().max_grid_dims[1];
             const Shape tall{4 * max_y + 4465, 3};
             auto src = DeviceArray<float>::random(tall, 4), dst = DeviceArray<float>::zeros(tall);
             KernelFunction k = stencil();
             k.block_size = {32, 1, 1};
             k(args("src", src, "dst", dst));
         },
         U,
         {"the inferred grid", "exceeds the device limit 65535 along y",
          "use a larger block_size"}},
        // ---- devices and allocations ----
        {"device_that_does_not_exist",
         [] { DeviceArray<float>::zeros({4}, MemoryOrder::C, 99); },
         U,
         {"CUDA device 99 does not exist", "visible device(s)"}},
        {"kernel_for_a_negative_device",
         [] {
             auto [f, g] = fields<2>("f, g: float32[1D]");
             create_kernel(Assignment(f.center(), g.center()), {.name = "gpu_table_dev"})
                 .compile(-1);
         },
         U,
         {"CUDA device -1 does not exist"}},
        {"allocation_beyond_size_t",
         [] {
             DeviceArray<float>::zeros({std::int64_t(1) << 60, 4});
         },
         U,
         {"array shape [1152921504606846976, 4] needs more bytes than fit in size_t"}},
        {"allocation_beyond_device_memory",
         [] { DeviceArray<float>::zeros({std::int64_t(1) << 40}); },
         Expect::Cuda,
         {"cuMemAlloc(4398046511104 bytes for a float32[1099511627776] array on device 0)",
          "CUDA_ERROR_OUT_OF_MEMORY"}},
    };
}

class GpuErrorTable : public ::testing::TestWithParam<ErrorRow> {};

TEST_P(GpuErrorTable, Row) {
    LOOM_REQUIRE_GPU();
    check_row(GetParam());
}

INSTANTIATE_TEST_SUITE_P(GpuErrors, GpuErrorTable, ::testing::ValuesIn(gpu_rows()), row_name);

} // namespace
} // namespace loom::test
