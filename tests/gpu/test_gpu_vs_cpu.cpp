// The random stencils of the CPU differential tests (tests/support/random_stencil.hpp), run on
// both targets: each case is compiled for Target::CUDA and Target::CPU, run on the same input
// buffers (outputs poisoned), and the GPU result must agree with the CPU result cell by cell
// (both also match the reference evaluator). Cases whose slice follows a counter are left out
// (CUDA needs a manual grid for them). Skips with the driver's reason without a GPU.
//
//   LOOM_STENCIL_SEED=<n>       base seed (default 20261121, as the CPU tests)
//   LOOM_GPU_STENCIL_COUNT=<n>  cases per run (default 100)
#include "tests/support/random_stencil.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace loom {
namespace {

using namespace loom::stencil_test;

/// The device buffers of a case: one flat DeviceArray per field holding the same elements as
/// the host buffers (padding included), and views at the field's offset and strides.
struct DeviceBuffers {
    std::vector<DeviceArray<float>> f32;
    std::vector<DeviceArray<double>> f64;

    explicit DeviceBuffers(const StencilCase& c) : f32(c.fields.size()), f64(c.fields.size()) {
        for (std::size_t f = 0; f < c.fields.size(); ++f) {
            const CaseField& cf = c.fields[f];
            if (cf.type == RType::F32)
                f32[f] = DeviceArray<float>::from_host(cf.buffer_as<float>(), {cf.buffer_size});
            else
                f64[f] = DeviceArray<double>::from_host(cf.buffer_as<double>(), {cf.buffer_size});
        }
    }

    Args args(const StencilCase& c) const {
        Args a;
        for (std::size_t f = 0; f < c.fields.size(); ++f) {
            const CaseField& cf = c.fields[f];
            if (!cf.used) continue;
            ArrayRef ref =
                cf.type == RType::F32
                    ? DeviceView<float>(f32[f].data() + cf.offset * sizeof(float), cf.shape,
                                        cf.strides)
                          .ref()
                    : DeviceView<double>(f64[f].data() + cf.offset * sizeof(double), cf.shape,
                                         cf.strides)
                          .ref();
            a.named.emplace_back(cf.name(), Arg(ref));
        }
        add_scalar_args(c, a);
        return a;
    }
};

int gpu_case_count() {
    if (const char* s = std::getenv("LOOM_GPU_STENCIL_COUNT")) return std::atoi(s);
    return 100;
}

/// How the GPU runs the cases: as generated, with shared tiles (StencilCase::tiled), with lanes
/// (StencilCase::laned) or with its cells streamed (StencilCase::streamed). The CPU kernel uses
/// none of them, so the two share no lowering past the loop nest.
enum class Form { Plain, Tiled, Laned, Streamed };

const char* form_name(Form form) {
    switch (form) {
    case Form::Tiled: return " with shared tiles on the GPU";
    case Form::Laned: return " with lanes on the GPU";
    case Form::Streamed: return " with streamed cells on the GPU";
    case Form::Plain: break;
    }
    return "";
}

/// Runs `count` random stencils on both targets. Stops at the first failing case.
void run_cases(int count, Form form) {
    const bool tiled = form == Form::Tiled;
    const std::uint64_t base = base_seed(20261121);
    GeneratorOptions options;
    options.counter_bounds = false;
    std::int64_t cells = 0;
    int ran = 0;
    for (int k = 0; k < count; ++k) {
        const std::uint64_t seed = base + static_cast<std::uint64_t>(k);
        const StencilCase plain = generate_stencil(seed, options);
        // Streaming needs consecutive cells as lanes do: unit steps.
        const bool unit_steps = plain.laneable();
        if ((tiled && !plain.tileable()) || (form != Form::Plain && !tiled && !unit_steps)) continue;
        const StencilCase c = tiled ? plain.tiled() : form == Form::Laned ? plain.laned()
                            : form == Form::Streamed ? plain.streamed() : plain;
        ++ran;
        std::optional<Kernel> gpu_kernel, cpu_kernel;
        std::string stage = "create_kernel (CUDA)";
        try {
            gpu_kernel = c.kernel(Target::CUDA);
            stage = "create_kernel (CPU)";
            cpu_kernel = plain.kernel(Target::CPU);
            stage = "the CPU run";
            KernelFunction on_cpu = cpu_kernel->compile();
            HostBuffers host(c);
            on_cpu(host.args(c));
            stage = "the GPU run";
            KernelFunction on_gpu = gpu_kernel->compile();
            DeviceBuffers device(c);
            on_gpu(device.args(c));
            on_gpu.synchronize();

            const Expected want = c.expected();
            cells += want.cells_written;
            EXPECT_TRUE(host.check(c, want))
                << "the CPU result\n" << c.describe() << "\nC++:\n" << cpu_kernel->source();
            for (std::size_t f = 0; f < c.fields.size(); ++f) {
                if (!c.fields[f].written) continue;
                const int field = static_cast<int>(f);
                ::testing::AssertionResult gpu_ok = ::testing::AssertionSuccess();
                ::testing::AssertionResult agree = ::testing::AssertionSuccess();
                if (c.fields[f].type == RType::F32) {
                    std::vector<float> got = device.f32[f].to_host();
                    gpu_ok = check_buffer(c, want, field, got);
                    agree = buffers_agree(c, want, field, got, host.f32[f], "GPU", "CPU");
                } else {
                    std::vector<double> got = device.f64[f].to_host();
                    gpu_ok = check_buffer(c, want, field, got);
                    agree = buffers_agree(c, want, field, got, host.f64[f], "GPU", "CPU");
                }
                EXPECT_TRUE(agree) << c.describe() << "\nCUDA:\n" << gpu_kernel->source();
                EXPECT_TRUE(gpu_ok) << "the GPU result against the reference\n"
                                    << c.describe() << "\nCUDA:\n" << gpu_kernel->source();
            }
        } catch (const std::exception& e) {
            ADD_FAILURE() << c.describe() << "\n" << stage << " threw: " << e.what()
                          << (gpu_kernel ? "\nCUDA:\n" + gpu_kernel->source() : std::string());
        }
        if (::testing::Test::HasFailure()) {
            std::printf("stopping after the first failing case (seed %llu)\n",
                        static_cast<unsigned long long>(seed));
            return;
        }
    }
    std::printf("[ gpu vs cpu ] %d random stencils%s (seeds %llu + k), %lld cells compared\n", ran,
                form_name(form), static_cast<unsigned long long>(base),
                static_cast<long long>(cells));
    EXPECT_GT(ran, 0);
}

TEST(GpuVsCpu, RandomStencilsAgreeAcrossTargets) {
    if (!cuda_available()) GTEST_SKIP() << cuda_unavailable_reason();
    run_cases(gpu_case_count(), Form::Plain);
}

// Shared tiles are filled by every thread of a block and read by its neighbours: racecheck
// (tools/gpu-check) watches these cases.
TEST(GpuVsCpu, RandomStencilsWithSharedTilesAgreeAcrossTargets) {
    if (!cuda_available()) GTEST_SKIP() << cuda_unavailable_reason();
    run_cases(gpu_case_count() / 2, Form::Tiled);
}

// Lanes: vector loads and stores where the views are aligned, elements where they are not (the
// cases' views start at random offsets into their buffers), partial groups at both ends.
TEST(GpuVsCpu, RandomStencilsWithLanesAgreeAcrossTargets) {
    if (!cuda_available()) GTEST_SKIP() << cuda_unavailable_reason();
    run_cases(gpu_case_count() / 2, Form::Laned);
}

// Streamed cells: a thread's cells as one group where the group lies inside, each element two
// of them read loaded once; the last group cell by cell (the cases' shapes are no multiples of
// the cells).
TEST(GpuVsCpu, RandomStencilsWithStreamedCellsAgreeAcrossTargets) {
    if (!cuda_available()) GTEST_SKIP() << cuda_unavailable_reason();
    run_cases(gpu_case_count() / 2, Form::Streamed);
}

} // namespace
} // namespace loom
