// The compiler pipeline: from DSL assignments to printed CUDA (Target::CUDA) or C++ with OpenMP
// (Target::CPU). lower.cpp lists the passes in order; read it top to bottom to learn the compiler.
#pragma once

#include "compiler/codegen/c_names.hpp"
#include "compiler/ir/ir.hpp"
#include "compiler/slice_bounds.hpp"

#include <loom/config.hpp>
#include <loom/kernel_param.hpp>
#include <loom/launch.hpp>
#include <loom/schedule.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace loom {
enum class CellReduction : std::uint8_t; // loom/assignment.hpp
} // namespace loom

namespace loom::ir {

/// One scalar assignment as the frontend hands it over, with its DSL text for the comment.
struct SourceAssignment {
    Expr lhs, rhs;
    std::string text;
    int stage = 1; ///< the stage it belongs to (Stages), counting from 1
    /// Not a computation: lhs's field is on chip (Stages::on_chip), rhs its value outside the
    /// iteration space (a constant, or another field at the cell).
    bool on_chip = false;
    /// A reduction across cells (sum_over_cells, ...): lhs, one element of a fixed-shape field,
    /// receives the reduction of rhs over every cell.
    std::optional<CellReduction> over_cells;
};

/// What the pipeline produces.
struct LoweredKernel {
    std::string name;
    KernelConfig config;
    /// The schedule as create_kernel was given it (lowered again for the int64 variant), and as
    /// used: CUDA fills in what the request left open (choose_schedule.hpp); the CPU target uses
    /// none of it and keeps the request.
    Schedule requested_schedule;
    Schedule schedule;
    /// __maxnreg__ for the printer (CUDA), from the schedule; 0: the compiler's choice.
    int max_registers = 0;
    std::vector<FieldPtr> fields;    ///< in order of first appearance
    std::vector<FieldPtr> buffers;   ///< fields read only at absolute positions (also in fields)
    std::vector<FieldPtr> shifted_reads; ///< fields read away from the cell (KernelAnalysis)
    std::vector<std::pair<int, int>> ghost_layers; ///< (low, high) per axis; zeros with a slice
    /// Per axis, how far accesses reach below and above the cell (KernelAnalysis::reach).
    std::vector<std::pair<int, int>> reach;
    /// The slice's loop bounds, for the launch's check that it stays inside the arrays; no axes
    /// without a slice (ghost layers stay inside by construction).
    SliceBounds slice_bounds;
    std::vector<KernelParam> params; ///< the signature, named by name_parameters
    CNames names;                    ///< the parameters' printed names, for the printer
    LaunchDescription launch;        ///< has_grid false on the CPU target
    Stmt body;                       ///< the final IR (the kernel body)
    std::string source;              ///< the printed CUDA, or C++ for the CPU target
};

/// Runs the whole pipeline. Throws UserError for bad input, InternalError for a loom bug. Only
/// the passes read the schedule; the printers read what they need from the LoweredKernel.
LoweredKernel lower(const std::vector<SourceAssignment>& assignments, const KernelConfig& config,
                    const Schedule& schedule);

} // namespace loom::ir
