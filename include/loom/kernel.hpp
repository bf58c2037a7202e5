// create_kernel and the Kernel it returns: the generated source, its parameters and its launch
// description. Kernel::compile() hands it to the runtime: NVRTC and the driver for Target::CUDA,
// the host compiler and dlopen for Target::CPU.
#pragma once

#include <loom/assignment.hpp>
#include <loom/config.hpp>
#include <loom/kernel_function.hpp>
#include <loom/kernel_param.hpp>
#include <loom/launch.hpp>
#include <loom/schedule.hpp>

#include <memory>
#include <string>
#include <vector>

namespace loom {

namespace ir {
struct LoweredKernel;
struct SourceAssignment;
} // namespace ir

struct SourceOptions {
    /// Reformat by running clang-format (see format_source).
    bool formatted = false;
};

class Kernel {
public:
    /// `assignments` are kept to lower the kernel again: the int64 variant when the index type
    /// is automatic, other schedules for autotuning.
    Kernel(ir::LoweredKernel lowered, std::vector<ir::SourceAssignment> assignments,
           bool automatic_index);

    const std::string& name() const;
    /// The generated source: CUDA, or C++ with OpenMP for Target::CPU. With an automatic index
    /// type this is the int32 variant; the int64 one is generated when compile() needs it.
    std::string source(SourceOptions options = {}) const;
    /// Parameters in signature order: name, C type, role (field pointer, size, stride, scalar).
    const std::vector<KernelParam>& parameters() const;
    const LaunchDescription& launch() const;
    const KernelConfig& config() const;
    /// The schedule used: the one create_kernel was given, with what it left open filled in by
    /// loom's heuristic (docs/guide.md, "Launch configuration"). For Target::CPU, which has no
    /// threads, the request as given. `schedule().describe(requested_schedule())` marks what loom
    /// chose.
    const Schedule& schedule() const;
    /// The schedule as create_kernel was given it.
    const Schedule& requested_schedule() const;
    const std::vector<FieldPtr>& fields() const;
    /// The final IR of the kernel body.
    const Stmt& ir() const;
    /// Everything at once, as pystencils' `ps.inspect`: fields, parameters, launch, source.
    std::string inspect() const;

    /// The CUBIN NVRTC makes of the CUDA source for sm_<arch> (90: Hopper), through the compile
    /// cache. Needs no GPU and no driver, so it checks on any machine that the source is valid
    /// CUDA. Throws UserError for a Target::CPU kernel, CompileError if NVRTC rejects the source.
    std::string cubin(int arch = 90) const;

    /// What the runtime needs to compile, load and launch this kernel (Backend::Host for
    /// Target::CPU).
    KernelSpec spec() const;
    /// Compiles through the memory and disk caches, loads and returns a callable kernel.
    /// Target::CUDA: NVRTC for the device's architecture; throws CudaError without a driver.
    /// Target::CPU: $LOOM_CXX (default c++) into a shared library, dlopen'ed; `device` is
    /// ignored and no GPU is needed. Throws UserError naming LOOM_CXX without a compiler.
    KernelFunction compile(int device = 0) const;

private:
    friend Kernel fuse(const Kernel& first, const Kernel& second, const std::string& name,
                       const Schedule& schedule);
    std::shared_ptr<const ir::LoweredKernel> k_;
    /// The source, kept to lower the kernel again: the int64 variant (an automatic index type)
    /// and other schedules (autotuning).
    std::shared_ptr<const std::vector<ir::SourceAssignment>> assignments_;
    bool automatic_index_ = false;
};

/// Generates a kernel from assignments: `config` says what it computes, `schedule` how the GPU
/// computes it (what it leaves open, by default all, loom chooses). Throws UserError with a
/// precise message on bad input.
Kernel create_kernel(const AssignmentCollection& assignments, const KernelConfig& config = {},
                     const Schedule& schedule = {});
/// Generates one kernel from several stages (see Stages): the same as running each stage as a
/// kernel of its own, in order, over the same iteration space. Throws UserError when a stage is
/// empty, or when the stages race (a stage writes a field that an earlier stage reads at
/// neighbouring cells, or two stages write one field).
Kernel create_kernel(const Stages& stages, const KernelConfig& config = {}, const Schedule& schedule = {});

/// One kernel that computes `first`, then `second`: the same as launching the two one after the
/// other, as the stages of one kernel (Stages: `first`'s stages, then `second`'s), so `second` may
/// read what `first` writes at neighbouring cells, computed per block over a halo in shared memory
/// instead of written and read back. Both must be for one target, iterate over one space (the same
/// ghost layers, automatic ones included, or the same slice), use one index type and fast-math
/// setting, and name each field with one Field (two different Fields of one name are refused).
/// The fused kernel takes every argument of both. `name` defaults to "<first>_<second>";
/// `schedule` applies to the fused kernel (open fields chosen as for Stages). Throws UserError when
/// the two cannot be one kernel: also when `second` writes a field that `first` reads at
/// neighbouring cells, or both write one field (the stage checks; stage numbers count `first`'s
/// stages first).
Kernel fuse(const Kernel& first, const Kernel& second, const std::string& name = "",
            const Schedule& schedule = {});

/// Whether format_source finds clang-format: $LOOM_CLANG_FORMAT (a path, or a name on PATH) when
/// set, else clang-format, clang-format-19, ..., clang-format-14 on PATH.
bool source_formatting_available();
/// Reformats C++/CUDA source with loom's .clang-format style by running clang-format (no shell,
/// the source on stdin). Throws UserError when clang-format is not found, fails, or takes longer
/// than $LOOM_CLANG_FORMAT_TIMEOUT_MS (default 10000) milliseconds.
std::string format_source(const std::string& source);

} // namespace loom
