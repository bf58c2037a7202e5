#include "frontend/kernel.hpp"

#include "compiler/ir/printer.hpp"
#include "runtime/errors.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace loom {

Kernel::Kernel(LoweredKernel lowered) : k_(std::make_shared<const LoweredKernel>(std::move(lowered))) {}

std::string Kernel::source(SourceOptions options) const {
    return options.formatted ? format_source(k_->source) : k_->source;
}

std::string Kernel::inspect() const {
    std::string out = fmt::format("Kernel {} (target {})\n", k_->name, target_name(k_->config.target));
    out += "Fields:\n";
    for (auto& f : k_->fields) out += fmt::format("  {}\n", f->describe());
    out += "Parameters:\n";
    std::size_t w = 0;
    for (auto& p : k_->params) w = std::max(w, p.c_type.size() + 1 + p.name.size());
    for (auto& p : k_->params) {
        std::string decl = p.c_type + " " + p.name;
        std::string what;
        switch (p.role) {
        case ParamRole::FieldPointer: what = fmt::format("field {}{}", p.field->name, p.read_only ? " (read)" : " (written)"); break;
        case ParamRole::Size: what = fmt::format("size of axis {}", p.axis); break;
        case ParamRole::Stride: what = fmt::format("stride of {} along axis {}", p.field->name, p.axis); break;
        case ParamRole::Scalar: what = "scalar"; break;
        }
        out += fmt::format("  {:<{}}  {:<13}  {}\n", decl, w, role_name(p.role), what);
    }
    const LaunchDescription& L = k_->launch;
    out += "Launch:\n";
    if (L.manual) {
        out += fmt::format("  manual: {}\n  set block_size and num_blocks before calling\n", L.manual_reason);
    } else {
        static const char* dims[] = {"x", "y", "z"};
        for (int d = 0; d < 3; ++d) {
            std::string axis = L.axis_of_dim[d] >= 0 ? fmt::format("axis {}", L.axis_of_dim[d]) : "unused";
            out += fmt::format("  {}: {:<7} threads {}\n", dims[d], axis, to_string(L.extents[d]));
        }
        out += fmt::format("  default block ({}), grid = ceil(threads / block)\n", fmt::join(L.default_block, ", "));
    }
    out += "Source:\n" + k_->source;
    return out;
}

Kernel create_kernel(const AssignmentCollection& assignments, const KernelConfig& config) {
    check_identifier(config.name, "kernel");
    std::vector<SourceAssignment> flat;
    for (const Assignment& a : assignments.all())
        for (auto& [lhs, rhs] : a.parts())
            flat.push_back({lhs, rhs, to_string(lhs) + " = " + to_string(rhs)});
    return Kernel(lower(flat, config));
}

} // namespace loom
