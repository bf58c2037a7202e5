// Assignments: what a kernel computes per cell.
#pragma once

#include <loom/expr.hpp>
#include <loom/field.hpp>
#include <loom/vec.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace loom {

/// How a reduction across cells (sum_over_cells, ...) combines the cells' values.
enum class CellReduction : std::uint8_t { Sum, Max, Min, Mean };

/// `lhs = rhs` per cell. The left side is a field access (a write) or a temporary. A vector
/// assignment (`u.vec() = ...`) is one component-wise assignment per element.
class Assignment {
public:
    Assignment(const Expr& lhs, const Expr& rhs);
    Assignment(const Access& lhs, const Expr& rhs) : Assignment(lhs.expr(), rhs) {}
    Assignment(const Vec& lhs, const Vec& rhs);

    /// The scalar (lhs, rhs) pairs, in order.
    const std::vector<std::pair<Expr, Expr>>& parts() const { return parts_; }
    /// Set for a reduction across cells (sum_over_cells, ...): lhs receives the reduction of
    /// rhs over every cell, not a value per cell.
    const std::optional<CellReduction>& over_cells() const { return over_cells_; }
    std::string to_string() const;

private:
    friend Assignment reduce_over_cells(CellReduction op, const Access& target, const Expr& value);
    Assignment() = default;
    std::vector<std::pair<Expr, Expr>> parts_;
    std::optional<CellReduction> over_cells_;
};

/// A reduction across cells: `target`, one element of a fixed-shape field read with .at() at
/// integer literals, receives the sum (max, min, mean) of `value` over every cell of the
/// iteration space, as one launch computes it on the GPU: each block combines its share of the
/// cells, and the last block to finish combines the blocks' results in a fixed order, so the
/// result has the same bits on every run (and on the CPU target, which runs the same blocks).
/// `value` is computed per cell like the right side of any assignment; the kernel computes only
/// such reductions (several, each into its own element) and the temporaries they use. max and
/// min of floats follow fmax/fmin (a NaN term is skipped); mean divides the sum by the number of
/// cells.
///
///     Field total = field<float>("total", std::vector<std::int64_t>{2});
///     create_kernel({sum_over_cells(total.at({0}), x.center()),
///                    sum_over_cells(total.at({1}), x.center() * x.center())});
Assignment reduce_over_cells(CellReduction op, const Access& target, const Expr& value);
Assignment sum_over_cells(const Access& target, const Expr& value);
Assignment max_over_cells(const Access& target, const Expr& value);
Assignment min_over_cells(const Access& target, const Expr& value);
Assignment mean_over_cells(const Access& target, const Expr& value);
std::string_view cell_reduction_name(CellReduction op); // "sum", "max", "min", "mean"

/// A list of assignments plus named subexpressions (temporaries) that come first.
class AssignmentCollection {
public:
    AssignmentCollection() = default;
    AssignmentCollection(std::initializer_list<Assignment> main) : main_(main) {}
    AssignmentCollection(const Assignment& a) : main_{a} {} // NOLINT: create_kernel(update, cfg)
    AssignmentCollection(std::vector<Assignment> main, std::vector<Assignment> subexpressions = {})
        : main_(std::move(main)), subexpressions_(std::move(subexpressions)) {}

    /// Adds `name = value` as a subexpression and returns the temporary, typed like `value`. A
    /// value of plain floating-point numbers or untyped parameters gives an untyped temporary:
    /// it adopts the type of what it meets, as its value would, and create_kernel declares it with
    /// the type its uses agree on, else its value's (KernelConfig::default_type for plain numbers).
    /// A use of another type converts it there, as it would convert a plain number.
    Expr subexpression(const std::string& name, const Expr& value);
    void add(const Assignment& a) { main_.push_back(a); }
    void add_subexpression(const Assignment& a) { subexpressions_.push_back(a); }

    const std::vector<Assignment>& main_assignments() const { return main_; }
    const std::vector<Assignment>& subexpressions() const { return subexpressions_; }
    /// Subexpressions first, then the main assignments: the order of evaluation.
    std::vector<Assignment> all() const;

private:
    std::vector<Assignment> main_;
    std::vector<Assignment> subexpressions_;
};

/// The stages of a multi-stage kernel, in order: a stencil of a stencil in one kernel. Each stage
/// computes over the whole iteration space after the stage before it, exactly as if the stages
/// were separate kernels launched one after another, so a later stage may read what an earlier
/// one wrote at neighbouring cells. create_kernel checks the dependencies between the stages
/// (a later stage writing what an earlier one reads at neighbouring cells is a race and refused)
/// and fuses them: each block computes the earlier stages over its tile plus the halo the later
/// stages read, in shared memory (docs/guide.md, "Multi-stage kernels").
///
///     auto k = create_kernel(Stages({{t.center() = ...}, {v.center() = t[1, 0] - t[-1, 0]}}));
class Stages {
public:
    Stages() = default;
    explicit Stages(std::vector<AssignmentCollection> stages) : stages_(std::move(stages)) {}
    /// Appends a stage that runs after the ones before it.
    Stages& then(const AssignmentCollection& stage) {
        stages_.push_back(stage);
        return *this;
    }
    /// Keeps `field` on chip: a stage computes it into its blocks' tiles in shared memory, later
    /// stages read it there, and it is never an argument nor written to memory (seed 003's
    /// "the intermediate is reused without writing it back"). An earlier stage writes it and a
    /// later one reads it; outside the iteration space (in the ghost layers) it holds `outside`,
    /// as a zero-padded convolution's input does.
    Stages& on_chip(const Field& field, double outside = 0.0);
    /// As above, holding `outside`'s values (at the same cell) outside the iteration space: the
    /// boundary values of a field the kernel reads, as time steps of a ping-pong pair need.
    Stages& on_chip(const Field& field, const Field& outside);

    const std::vector<AssignmentCollection>& stages() const { return stages_; }
    /// The on-chip fields, each with its value outside the iteration space (a number, or the
    /// other field at the cell).
    const std::vector<std::pair<Field, Expr>>& on_chip_fields() const { return on_chip_; }

private:
    std::vector<AssignmentCollection> stages_;
    std::vector<std::pair<Field, Expr>> on_chip_;
};

} // namespace loom
