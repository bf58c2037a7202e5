// Analysis before translation: rejects kernels that would be wrong on the target, with a message
// that names the field, the offsets and the fix, and collects what later passes need.
#pragma once

#include "compiler/ir/ir.hpp"
#include "compiler/lower.hpp"

#include <loom/config.hpp>
#include <loom/schedule.hpp>

#include <utility>
#include <vector>

namespace loom::ir {

struct KernelAnalysis {
    int spatial_dims = 0;
    std::vector<FieldPtr> fields;   ///< in order of first appearance (each lhs before its rhs)
    std::vector<FieldPtr> written;  ///< fields the kernel writes
    /// Fields read only at absolute positions (W.at({i, j})): arguments, but not part of the
    /// iteration space. Also listed in `fields`.
    std::vector<FieldPtr> buffers;
    /// Fields read anywhere but at the cell being written: at a nonzero offset, or at absolute
    /// positions. An array passed for one of them must not overlap an output (runtime check).
    std::vector<FieldPtr> shifted_reads;
    std::vector<Expr> parameters;   ///< scalar parameters, in order of first appearance
    /// Per spatial axis: how far accesses reach below and above the cell (both >= 0).
    std::vector<std::pair<int, int>> reach;
    /// Ghost layers per axis (low, high), resolved from the config; zeros when a slice is set.
    std::vector<std::pair<int, int>> ghost_layers;
    bool bounds_depend_on_counters = false; ///< a slice bound uses another counter
    int stages = 1; ///< the kernel's stages (Stages); 1 for a kernel of plain assignments
    /// A later stage reads a field an earlier stage writes at a neighbouring cell: the body holds
    /// one Stage per stage, which fuse_stages computes per block with halos. Without such a read
    /// the stages are one sequence of statements per cell, and the body has no Stage.
    bool stage_halos = false;
    /// On-chip fields (Stages::on_chip), also in `fields` and `written`: never arguments, held
    /// in the tiles of fuse_stages. Each with its value outside the iteration space, of its type:
    /// a constant, or a FieldAccess at the cell of another field (a field of the kernel then).
    std::vector<std::pair<FieldPtr, Expr>> on_chip;
    bool is_on_chip(const FieldInfo* f) const {
        for (auto& [g, outside] : on_chip)
            if (g.get() == f) return true;
        return false;
    }
    FieldPtr primary;               ///< the field whose layout decides the thread mapping
    const FieldInfo* fixed_shape_source = nullptr; ///< a fixed-shape field, if any
    /// The kernel body: for each assignment a Comment with its DSL text, then the Assign, with
    /// implicit conversions made explicit (Cast nodes) and weak constants typed. Before the first
    /// assignment that reads a layer's array, the layer's statements (its ArrayDefinition): a
    /// Comment, an Allocate and a Dense, after those of the arrays it reads (and the Allocate
    /// and ArrayStores of a `<name>_in` array when its inputs are not one whole array). With
    /// stage_halos, a Stage per stage holds its statements.
    Stmt body;
};

/// Checks the assignments, the config and the schedule (check_schedule.hpp); throws UserError
/// with a precise message on bad input. Of the schedule it reads only manual_launch_grid, which
/// counter-dependent slice bounds need on the GPU.
KernelAnalysis analyze_kernel(const std::vector<SourceAssignment>& assignments,
                              const KernelConfig& config, const Schedule& schedule);

} // namespace loom::ir
