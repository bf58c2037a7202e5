// create_kernel and the Kernel it returns: the generated source, its parameters and its launch
// description. Kernel::compile() hands it to the runtime: NVRTC and the driver for Target::CUDA,
// the host compiler and dlopen for Target::CPU.
#pragma once

#include "compiler/kernel_config.hpp"
#include "compiler/launch.hpp"
#include "compiler/lower.hpp"
#include "frontend/assignment.hpp"
#include "runtime/kernel_function.hpp"

#include <memory>
#include <string>
#include <vector>

namespace loom {

struct SourceOptions {
    /// Reformat by running clang-format (see format_source).
    bool formatted = false;
};

class Kernel {
public:
    /// `assignments` are kept when the index type is automatic, to lower the int64 variant.
    Kernel(LoweredKernel lowered, std::vector<SourceAssignment> assignments, bool automatic_index);

    const std::string& name() const { return k_->name; }
    /// The generated source: CUDA, or C++ with OpenMP for Target::CPU. With an automatic index
    /// type this is the int32 variant; the int64 one is generated when compile() needs it.
    std::string source(SourceOptions options = {}) const;
    /// Parameters in signature order: name, C type, role (field pointer, size, stride, scalar).
    const std::vector<KernelParam>& parameters() const { return k_->params; }
    const LaunchDescription& launch() const { return k_->launch; }
    const KernelConfig& config() const { return k_->config; }
    const std::vector<FieldPtr>& fields() const { return k_->fields; }
    /// The final IR of the kernel body.
    const Stmt& ir() const { return k_->body; }
    /// Everything at once, as pystencils' `ps.inspect`: fields, parameters, launch, source.
    std::string inspect() const;

    /// What the runtime needs to compile, load and launch this kernel (Backend::Host for
    /// Target::CPU).
    KernelSpec spec() const;
    /// Compiles through the memory and disk caches, loads and returns a callable kernel.
    /// Target::CUDA: NVRTC for the device's architecture; throws CudaError without a driver.
    /// Target::CPU: $LOOM_CXX (default c++) into a shared library, dlopen'ed; `device` is
    /// ignored and no GPU is needed. Throws UserError naming LOOM_CXX without a compiler.
    KernelFunction compile(int device = 0) const;

private:
    std::shared_ptr<const LoweredKernel> k_;
    std::shared_ptr<const std::vector<SourceAssignment>> assignments_; ///< automatic index only
};

/// Generates a kernel from assignments. Throws UserError with a precise message on bad input.
Kernel create_kernel(const AssignmentCollection& assignments, const KernelConfig& config = {});

/// Whether format_source finds clang-format: $LOOM_CLANG_FORMAT (a path, or a name on PATH) when
/// set, else clang-format, clang-format-19, ..., clang-format-14 on PATH.
bool source_formatting_available();
/// Reformats C++/CUDA source with loom's .clang-format style by running clang-format (no shell,
/// the source on stdin). Throws UserError when clang-format is not found, fails, or takes longer
/// than $LOOM_CLANG_FORMAT_TIMEOUT_MS (default 10000) milliseconds.
std::string format_source(const std::string& source);

} // namespace loom
