// What create_kernel is asked to build: the target, the iteration space and code options. How the
// GPU computes it is a Schedule (loom/schedule.hpp).
#pragma once

#include <loom/detail/ir_handle.hpp>
#include <loom/types.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace loom {

/// CUDA: a __global__ function, the loops mapped onto threads. CPU: a C++ function whose loops
/// stay loops, the outermost parallel with OpenMP and the innermost vectorized.
enum class Target : std::uint8_t { CUDA, CPU };

std::string_view target_name(Target t); ///< "CUDA", "CPU"

/// One end of a slice range: a literal index (negative counts from the end, as in numpy), the end
/// of the axis, or an expression over scalar parameters and other spatial counters.
class Bound {
public:
    enum class Kind : std::uint8_t { Index, End, Expression };
    Bound(int index) : kind_(Kind::Index), index_(index) {}          // NOLINT: reads like numpy
    Bound(std::int64_t index) : kind_(Kind::Index), index_(index) {} // NOLINT
    Bound(Expr e) : kind_(Kind::Expression), expr_(std::move(e)) {}  // NOLINT
    static Bound end() {
        Bound b(0);
        b.kind_ = Kind::End;
        return b;
    }
    Kind kind() const { return kind_; }
    std::int64_t index() const { return index_; }
    const Expr& expr() const { return expr_; }
    std::string describe() const;

private:
    Kind kind_;
    std::int64_t index_ = 0;
    Expr expr_;
};

/// One axis of an iteration slice: [start, stop) with a positive step, or a single index.
struct SliceDim {
    Bound start = 0;
    Bound stop = Bound::end();
    std::int64_t step = 1;
    bool single = false; ///< a single index: start only
    std::string describe() const;   ///< numpy's notation: "1:-1", "x:", "::2"
    /// In the DSL's notation: "range(1, -1)", "range(x, end)" (for from(x)), "at(5)", "all()".
    std::string as_written() const;
};

/// An iteration slice over the spatial axes (axis 0 first). It replaces the ghost layers.
struct Slice {
    std::vector<SliceDim> dims;
    Slice() = default;
    Slice(std::initializer_list<SliceDim> d) : dims(d) {}
    explicit Slice(std::vector<SliceDim> d) : dims(std::move(d)) {}
    std::string describe() const; ///< "[:, x:]"
};

/// Ghost layers: automatic (the largest offset of the stencil), one width for every side, or a
/// (low, high) pair per spatial axis.
class GhostLayers {
public:
    GhostLayers() = default; ///< automatic
    GhostLayers(int width) : uniform_(width) {} // NOLINT
    GhostLayers(std::initializer_list<std::pair<int, int>> per_axis) : per_axis_(per_axis) {}
    explicit GhostLayers(std::vector<std::pair<int, int>> per_axis) : per_axis_(std::move(per_axis)) {}
    static GhostLayers automatic() { return {}; }
    bool is_automatic() const { return !uniform_ && per_axis_.empty(); }
    std::optional<int> uniform() const { return uniform_; }
    const std::vector<std::pair<int, int>>& per_axis() const { return per_axis_; }

private:
    std::optional<int> uniform_;
    std::vector<std::pair<int, int>> per_axis_;
};

struct KernelConfig {
    Target target = Target::CUDA;
    std::string name = "kernel";          ///< the function name in the generated code
    GhostLayers ghost_layers;             ///< automatic unless set; excludes iteration_slice
    std::optional<Slice> iteration_slice; ///< replaces the ghost layers when set
    /// Type of counters, sizes and strides. Unset (the default): int32, the faster, wherever the
    /// arrays of a call allow it, with an int64 variant compiled on first need (create_kernel
    /// generates both; lower() treats unset as int64).
    std::optional<ScalarType> index_type;
    /// The type of floating-point values nothing else types, as pystencils' default_dtype:
    /// plain numbers that meet no typed operand and no typed store target (a subexpression
    /// `2.0 * 3.0`, both sides of `1.0 < 2.0`), and untyped parameters, `param("omega")`, that
    /// no use gives a type. float32 or float64. Plain integers stay int64 whatever this says.
    /// create_kernel applies it (frontend/resolve_types.hpp); lower() never reads it.
    ScalarType default_type = ScalarType::Float64;
    bool fast_math = false;               ///< NVRTC --use_fast_math; -ffast-math on the CPU
    /// Temporal blocking: the assignments are one time step that reads a field `src` and writes
    /// `dst` (a ping-pong pair), and one call runs this many steps, src -> dst -> ... -> dst,
    /// each block over its tile plus a halo that shrinks by the stencil's reach per step, the
    /// steps between in shared memory (Stages::on_chip). dst gets what the same number of
    /// separate sweeps alternating between the pair computes (step k reading src's ghost cells
    /// where k is odd, dst's where it is even); src is left as it was.
    int time_steps = 1;
    /// The ping-pong pairs {src, dst} by field name, for time_steps > 1. Empty: loom pairs the
    /// one field the step writes with the one field of its type and shape the step reads.
    std::vector<std::pair<std::string, std::string>> ping_pong;
    // How the GPU computes it (block, cells per thread, shared memory, registers, a manual grid)
    // is not here but in a Schedule, create_kernel's third argument (loom/schedule.hpp).
    bool ghost_layers_set() const { return !ghost_layers.is_automatic(); }
};

} // namespace loom
