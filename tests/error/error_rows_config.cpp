// Error table rows: KernelConfig (targets, names, index and default types) and the launch
// description, all checked without a GPU. The Schedule's rows are in error_rows_schedule.cpp.
#include "tests/error/error_rows.hpp"
#include "tests/support/cpu_config.hpp"

#include "compiler/ir/evaluate.hpp"

#include <loom/loom.hpp>

namespace loom::test {

using namespace loom::counters;

namespace {
/// A valid copy kernel, so that only the config can be wrong.
Kernel copy_with(const KernelConfig& cfg) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    return create_kernel(Assignment(f.center(), g.center()), cfg);
}
KernelConfig with(void (*set)(KernelConfig&)) {
    KernelConfig c;
    set(c);
    return c;
}
} // namespace

std::vector<ErrorRow> config_rows() {
    const auto U = Expect::User;
    return {
        // ---- target, name, types ----
        {"target_out_of_range",
         [] { copy_with(with([](KernelConfig& c) { c.target = static_cast<Target>(7); })); },
         U,
         {"has target 7", "neither Target::CUDA (0) nor Target::CPU (1)",
          "set KernelConfig::target"}},
        {"kernel_name_with_space",
         [] { copy_with(with([](KernelConfig& c) { c.name = "my kernel"; })); },
         U,
         {"invalid kernel name 'my kernel'", "C identifiers"}},
        {"kernel_name_reserved",
         [] { copy_with(with([](KernelConfig& c) { c.name = "switch"; })); },
         U,
         {"invalid kernel name 'switch'", "reserved word", "'switch_'"}},
        {"kernel_name_empty",
         [] { copy_with(with([](KernelConfig& c) { c.name = ""; })); },
         U,
         {"invalid kernel name ''", "C identifiers"}},
        {"index_type_float",
         [] { copy_with(with([](KernelConfig& c) { c.index_type = ScalarType::Float32; })); },
         U,
         {"index_type float32", "must be int32 or int64", "unset to let loom choose"}},
        {"index_type_bool",
         [] { copy_with(with([](KernelConfig& c) { c.index_type = ScalarType::Bool; })); },
         U,
         {"index_type bool", "must be int32 or int64"}},
        {"index_type_int32_for_a_huge_fixed_shape",
         [] {
             Field f = field<float>("big", {50000, 50000}),
                   g = field<float>("big_out", {50000, 50000});
             KernelConfig c;
             c.index_type = ScalarType::Int32;
             create_kernel({Assignment(g.center(), 2.0 * f.center())}, c);
         },
         U,
         {"has index_type int32", "field big_out: float32[50000, 50000]", "2500000000 elements",
          "set index_type to int64"}},
        {"default_type_int",
         [] { copy_with(with([](KernelConfig& c) { c.default_type = ScalarType::Int32; })); },
         U,
         {"has default_type int32", "must be float32 or float64"}},
        {"default_type_float16",
         [] { copy_with(with([](KernelConfig& c) { c.default_type = ScalarType::Float16; })); },
         U,
         {"has default_type float16", "must be float32 or float64"}},
        // ---- what a kernel of one target cannot do ----
        {"cubin_of_a_cpu_kernel",
         [] { copy_with(cpu("cpu_only")).cubin(); },
         U,
         {"kernel 'cpu_only'", "cubin() compiles CUDA", "created for Target::CPU", "Target::CUDA"}},
        {"cubin_for_arch_zero",
         [] { copy_with({.name = "arch0"}).cubin(0); },
         Expect::Compile,
         {"NVRTC could not compile kernel 'arch0'", "--gpu-architecture=sm_0",
          "invalid value for --gpu-architecture"}},
        // ---- the launch description ----
        {"extents_of_a_cpu_kernel",
         [] { copy_with(cpu("no_grid")).launch().evaluate_extents({}); },
         U,
         {"this kernel has no launch grid", "CPU target: loops, no launch grid",
          "no extents to evaluate"}},
        {"extents_of_a_manual_grid",
         [] {
             KernelConfig c;
             c.iteration_slice = Slice{all(), from(x)};
             auto [f, g] = fields<2>("f, g: float64[2D]");
             create_kernel(Assignment(f.center(), g.center()), c, {.manual_launch_grid = true})
                 .launch()
                 .evaluate_extents({});
         },
         U,
         {"this kernel has a manual launch grid", "depend on another counter",
          "set block_size and num_blocks"}},
        {"grid_for_a_zero_block",
         [] {
             LaunchDescription::grid_for({64, 1, 1}, {0, 1, 1});
         },
         U,
         {"grid_for: the block (0, 1, 1) has x = 0", "at least 1 thread along x, y and z"}},
        {"grid_for_a_negative_block",
         [] {
             LaunchDescription::grid_for({64, 8, 1}, {32, 1, -2});
         },
         U,
         {"the block (32, 1, -2) has z = -2"}},
    };
}

} // namespace loom::test
