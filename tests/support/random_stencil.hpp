// Random stencil kernels for differential tests, checked with the tests' own reference evaluator.
//
//   StencilCase c = generate_stencil(seed);      // seeded: the same seed gives the same case
//   Kernel k = c.kernel(Target::CPU);             // create_kernel(assignments, config, schedule)
//   ... give every field the buffer c.fields[f] describes (inputs random, outputs poisoned),
//       run the kernel, read the output buffers back ...
//   Expected want = c.expected();                 // the reference, every cell of every output
//   EXPECT_TRUE(check_buffer(c, want, f, got));   // written cells match, all others hold poison
//
// Each case draws 1-4 spatial dimensions (4 rarely), float32 or float64, 1-3 source fields (some of
// the other float type, some vector fields read one component at a time, any of the four
// layouts, some passed as sub-boxes of larger buffers), offsets within a random radius, random
// coefficients, sometimes a scalar parameter, a counter, a named subexpression, and the math
// functions abs, sqrt(|e| + 1), min, max, division and select; ghost layers (automatic, uniform
// or per axis, at least the reach) or an iteration slice (start, stop, step, single indices,
// negative ends, a parameter bound, a bound that follows an earlier counter) that stays inside
// the arrays; and small random shapes (some fixed in the kernel).
//
// The reference side is a tiny AST (RefAst, tests/support/reference_evaluator.hpp) built next to
// the DSL expression, mirroring the DSL's typing rules (weak literals take their partner's type,
// float32 meeting float64 widens), and evaluated in plain C++: float32 operations in float, one
// rounding per operation as the generated code does, float64 in double. It never calls loom's
// compiler, interpreter or runtime. tests/passes/test_simplify_property_reference.cpp evaluates
// loom IR with the same evaluator.
//
// The case, its buffers and its checks also carry int32 and int64 fields: the expression fuzzer
// (random_expression.hpp) builds its batched kernels as StencilCases on the same machinery.
#pragma once

#include "tests/support/reference_evaluator.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iomanip>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace loom::stencil_test {

// ==== Poison, cells, buffers ===================================================================

/// Floats: a quiet NaN with a payload no computation produces; integers: a value the generators
/// never compute by chance (compared bit for bit).
template <typename T>
T poison() {
    T value;
    if constexpr (std::is_same_v<T, std::int32_t>) {
        value = 0x7A5A5A5B;
    } else if constexpr (std::is_same_v<T, std::int64_t>) {
        value = 0x7A5A5A5A5A5A5A5Bll;
    } else if constexpr (std::is_same_v<T, float>) {
        std::uint32_t bits = 0x7FC5A5A5u;
        std::memcpy(&value, &bits, sizeof value);
    } else {
        std::uint64_t bits = 0x7FF85A5A5A5A5A5Aull;
        std::memcpy(&value, &bits, sizeof value);
    }
    return value;
}
template <typename T>
bool is_poison(T value) {
    T p = poison<T>();
    return std::memcmp(&value, &p, sizeof(T)) == 0;
}

/// Calls fn(index) for every index of `shape` in C order (last axis fastest).
template <typename Fn>
void for_each_index(const Shape& shape, Fn&& fn) {
    std::int64_t n = 1;
    for (auto e : shape) n *= e;
    if (n <= 0) return;
    Index index(shape.size(), 0);
    for (std::int64_t k = 0; k < n; ++k) {
        fn(static_cast<const Index&>(index));
        for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
            if (++index[static_cast<std::size_t>(d)] < shape[static_cast<std::size_t>(d)]) break;
            index[static_cast<std::size_t>(d)] = 0;
        }
    }
}

/// Calls fn(T{}) with the C++ element type of a field type (float, double, int32_t, int64_t).
template <typename Fn>
void with_element_type(RType t, Fn&& fn) {
    switch (t) {
    case RType::F32: fn(float{}); return;
    case RType::F64: fn(double{}); return;
    case RType::I32: fn(std::int32_t{}); return;
    case RType::I64: fn(std::int64_t{}); return;
    case RType::Bool: break;
    }
    throw std::logic_error("the random cases have no bool fields");
}

// ==== The generated case =======================================================================

/// One field of a case and the buffer the test gives it: the kernel sees `shape` (spatial axes,
/// then components) with `strides`, starting at element `offset` of a flat buffer of
/// `buffer_size` elements. Strides are compact in the field's layout (so fixed-shape fields get
/// the strides baked into the code), or those of a larger padded box when `padded`.
struct CaseField {
    Field field;
    RType type = RType::F64;
    int components = 0; ///< 0 for a scalar field
    Layout layout = Layout::C;
    bool written = false;
    bool padded = false;
    bool used = true; ///< read or written by the kernel (a drawn source may go unread)
    Shape shape, strides;
    std::int64_t offset = 0, buffer_size = 0;
    /// Inputs: the whole buffer (random, never zero; the padding too). Outputs: empty, the test
    /// fills the buffer with poison<T>(). Integer fields hold theirs in `ints`.
    std::vector<double> values;
    std::vector<std::int64_t> ints;
    /// A buffer (read only at absolute positions): its own spatial shape, not the case's.
    Shape own_shape;

    const std::string& name() const { return field.name(); }
    /// The buffer position of array index `i`.
    std::int64_t position(const Index& i) const {
        std::int64_t at = offset;
        for (std::size_t d = 0; d < shape.size(); ++d) at += i[d] * strides[d];
        return at;
    }
    /// The buffer as T (inputs), or all poison (outputs).
    template <typename T>
    std::vector<T> buffer_as() const {
        if (written) return std::vector<T>(static_cast<std::size_t>(buffer_size), poison<T>());
        if constexpr (std::is_integral_v<T>) {
            std::vector<T> out(ints.size());
            for (std::size_t k = 0; k < ints.size(); ++k) out[k] = static_cast<T>(ints[k]);
            return out;
        } else {
            std::vector<T> out(values.size());
            for (std::size_t k = 0; k < values.size(); ++k) out[k] = static_cast<T>(values[k]);
            return out;
        }
    }
};

struct CaseParam {
    std::string name;
    RType type = RType::F64;
    double value = 0.0;          ///< floats: exactly representable in `type`
    std::int64_t int_value = 0;  ///< integers (exact beyond 2^53)
    Expr expr;
    bool used = true;   ///< a drawn value parameter may go unused
    bool bound = false; ///< a slice bound (always an argument)
    /// The value as the reference sees it.
    RVal rval() const {
        RVal v;
        v.f = value;
        v.i = int_value;
        return v;
    }
};

/// One end of a slice range, resolved per cell by the reference.
struct CaseBound {
    enum class Kind { Index, End, Param, Counter } kind = Kind::Index;
    std::int64_t value = 0; ///< Index: the literal (negative from the end); Param/Counter: + value
    int param = -1;         ///< Param: index into params
    int axis = -1;          ///< Counter: the earlier axis
};

/// The iteration space along one axis: ghost layers, or a slice.
struct CaseAxis {
    std::int64_t ghost_lo = 0, ghost_hi = 0;
    CaseBound start, stop;
    std::int64_t step = 1;
    bool single = false;
};

/// A scalar written by the kernel: component `component` (or -1) of field `field`, the value of
/// reference node `node` converted to the field's type.
struct CaseOutput {
    int field = -1;
    int component = -1;
    int node = -1;
    std::int64_t operations = 0;
};

/// A named subexpression (DSL temporary) whose value is reference node `node`.
struct CaseTemp {
    std::string name;
    int node = -1;
};

struct GeneratorOptions {
    /// Slices whose start follows an earlier counter (the triangle). The CPU target runs them as
    /// they are; CUDA needs a manual grid, so the GPU tests turn them off.
    bool counter_bounds = true;
};

/// The reference values of every cell of every output buffer.
struct Expected {
    struct Buffer {
        int field = -1;
        std::vector<char> written;   ///< per buffer element
        std::vector<char> undefined; ///< per buffer element: the reference threw RefUndefined
        std::vector<RCands> values;  ///< per buffer element, where written and defined
    };
    std::vector<Buffer> buffers;
    double factor = 0.0;             ///< the tolerance factor (see RefEvaluator)
    std::int64_t cells_written = 0;
    std::int64_t cells_undefined = 0;
    const Buffer& of(int field) const {
        for (const Buffer& b : buffers)
            if (b.field == field) return b;
        throw std::logic_error("no expected values for that field");
    }
    Buffer& of(int field) {
        return const_cast<Buffer&>(static_cast<const Expected&>(*this).of(field));
    }
};

class StencilCase {
public:
    std::uint64_t seed = 0;
    int dims = 1;
    RType type = RType::F64;
    Shape shape;              ///< the spatial shape of every array
    bool fixed_shape = false; ///< fields declared with this shape baked in
    bool sliced = false;
    std::vector<CaseField> fields;
    std::vector<CaseParam> params;
    std::vector<CaseAxis> axes;
    std::vector<CaseOutput> outputs;
    std::vector<CaseTemp> temps; ///< the expression fuzzer's (random stencils keep theirs inline)
    AssignmentCollection assignments;
    KernelConfig config; ///< target CUDA; kernel() sets the target
    Schedule schedule;   ///< the CPU target ignores it (but shared_tiles)
    RefAst ast;

    /// Whether Schedule::shared_tiles applies: at most three axes and unit steps (the GPU tests
    /// leave out slices that follow a counter already).
    bool tileable() const {
        if (dims > 3) return false;
        if (config.iteration_slice)
            for (const SliceDim& d : config.iteration_slice->dims)
                if (d.step != 1) return false;
        return true;
    }
    /// This case with shared tiles, in a block and with cells per thread drawn from its seed
    /// (small blocks, so that every tile fits the 48 KB of static shared memory).
    StencilCase tiled() const {
        StencilCase t = *this;
        static const std::array<std::array<int, 3>, 4> blocks{{{32, 4, 1}, {16, 8, 2}, {64, 2, 1}, {8, 4, 4}}};
        t.schedule = Schedule{};
        t.schedule.block = blocks[seed % blocks.size()];
        t.schedule.cells_per_thread = int(1 + (seed / 4) % 3); // 1 to 3: odd spans too
        t.schedule.shared_tiles = true;
        return t;
    }

    /// This case with lanes (Schedule::vector_width 2 or 4, drawn from its seed): contiguous
    /// cells along the fastest axis, so unit slice steps.
    bool laneable() const {
        if (config.iteration_slice)
            for (const SliceDim& d : config.iteration_slice->dims)
                if (d.step != 1) return false;
        return true;
    }
    StencilCase laned() const {
        StencilCase t = *this;
        t.schedule = Schedule{};
        t.schedule.vector_width = seed % 2 ? 4 : 2;
        return t;
    }

    /// This case streamed (Schedule::stream_cells forced on, 2 to 5 cells per thread drawn from
    /// its seed): wherever two of a thread's cells read one element, it is loaded once.
    StencilCase streamed() const {
        StencilCase t = *this;
        t.schedule = Schedule{};
        t.schedule.cells_per_thread = int(2 + seed % 4);
        t.schedule.stream_cells = true;
        return t;
    }

    Kernel kernel(Target target) const {
        KernelConfig c = config;
        c.target = target;
        return create_kernel(assignments, c, schedule);
    }

    /// Whether the kernel computes spatial cell `i` (the reference's reading of the slice or the
    /// ghost layers, resolved with this case's shape and parameter values).
    bool iterated(const Index& i) const {
        for (int d = 0; d < dims; ++d) {
            const CaseAxis& ax = axes[static_cast<std::size_t>(d)];
            const std::int64_t n = shape[static_cast<std::size_t>(d)],
                               c = i[static_cast<std::size_t>(d)];
            if (!sliced) {
                if (c < ax.ghost_lo || c >= n - ax.ghost_hi) return false;
                continue;
            }
            const std::int64_t start = resolve(ax.start, d, i);
            if (ax.single) {
                if (c != start) return false;
                continue;
            }
            const std::int64_t stop = resolve(ax.stop, d, i);
            if (c < start || c >= stop || (c - start) % ax.step != 0) return false;
        }
        return true;
    }

    /// Gives `ev` (an evaluator of this case's ast) the case's arrays and parameter values.
    void bind(RefEvaluator& ev) const {
        ev.arrays.resize(fields.size());
        for (std::size_t f = 0; f < fields.size(); ++f) {
            const CaseField& cf = fields[f];
            ev.arrays[f] = RefArray{cf.shape, cf.strides, cf.offset, &cf.values, &cf.ints};
        }
        ev.vars.clear();
        for (const CaseParam& p : params) ev.vars.push_back(p.rval());
    }

    /// The reference result of every output buffer element.
    Expected expected() const {
        Expected e;
        // err bounds one evaluation's distance from the exact value with twice the unit
        // roundoff per operation, so it already covers the reference and the kernel together;
        // the factor 2 leaves room for libm's last bit.
        e.factor = 2.0;
        RefEvaluator ev(ast, e.factor);
        bind(ev);
        for (std::size_t f = 0; f < fields.size(); ++f) {
            const CaseField& cf = fields[f];
            if (cf.written) {
                Expected::Buffer b;
                b.field = static_cast<int>(f);
                b.written.assign(static_cast<std::size_t>(cf.buffer_size), 0);
                b.undefined.assign(static_cast<std::size_t>(cf.buffer_size), 0);
                b.values.resize(static_cast<std::size_t>(cf.buffer_size));
                e.buffers.push_back(std::move(b));
            }
        }
        for_each_index(shape, [&](const Index& cell) {
            if (!iterated(cell)) return;
            ev.cell = cell;
            ev.next();
            for (const CaseOutput& o : outputs) {
                const CaseField& cf = fields[static_cast<std::size_t>(o.field)];
                Index at = cell;
                if (cf.components > 0) at.push_back(o.component);
                const auto pos = static_cast<std::size_t>(cf.position(at));
                Expected::Buffer& b = e.of(o.field);
                // The generators store a value of the field's type: they mirror the store's
                // implicit conversion with a cast node.
                if (ast.type(o.node) != cf.type)
                    throw std::logic_error(std::string("reference: a ") +
                                           rt_name(ast.type(o.node)) + " value stored into " +
                                           rt_name(cf.type));
                b.written[pos] = 1;
                ++e.cells_written;
                try {
                    b.values[pos] = ev.eval(o.node);
                } catch (const RefUndefined&) {
                    b.undefined[pos] = 1; // no guard covered it: the checks skip it
                    ++e.cells_undefined;
                }
            }
        });
        return e;
    }

    /// Sources no expression reads and a value parameter no expression uses are not kernel
    /// arguments (loom rejects arguments a kernel does not have): marks the fields the outputs
    /// write and what they and the extra `roots` (temporaries) reach as used, besides slice
    /// bounds.
    void mark_used(const std::vector<int>& roots = {}) {
        for (CaseField& f : fields) f.used = false;
        for (CaseParam& p : params) p.used = p.bound;
        std::vector<char> seen(ast.nodes.size(), 0);
        std::vector<int> todo = roots;
        for (const CaseOutput& o : outputs) {
            todo.push_back(o.node);
            fields[static_cast<std::size_t>(o.field)].used = true;
        }
        while (!todo.empty()) {
            const int n = todo.back();
            todo.pop_back();
            if (seen[static_cast<std::size_t>(n)]) continue;
            seen[static_cast<std::size_t>(n)] = 1;
            const RNode& x = ast[n];
            if (x.op == ROp::Read || x.op == ROp::ReadAt)
                fields[static_cast<std::size_t>(x.slot)].used = true;
            if (x.op == ROp::Var) params[static_cast<std::size_t>(x.slot)].used = true;
            for (int k : ast.operands(n)) todo.push_back(k);
        }
    }

    /// Everything needed to reproduce and read a failure.
    std::string describe() const {
        std::ostringstream s;
        s << "random stencil, seed " << seed << ": " << dims << "D " << rt_name(type)
          << ", shape " << shape_string(shape) << (fixed_shape ? " (fixed in the kernel)" : "")
          << "\n  fields:";
        for (const CaseField& f : fields) {
            s << "\n    " << f.field.info().describe()
              << (f.written ? "  [written]" : f.used ? "" : "  [unused]")
              << "  array " << shape_string(f.shape) << " strides " << shape_string(f.strides)
              << " at " << f.offset << " of " << f.buffer_size << (f.padded ? " (padded)" : "");
        }
        for (std::size_t p = 0; p < params.size(); ++p) {
            s << "\n  parameter " << params[p].name << " (" << rt_name(params[p].type) << ") = ";
            if (rt_is_int(params[p].type))
                s << params[p].int_value;
            else
                s << std::setprecision(17) << params[p].value;
            s << "  [v" << p << "]" << (params[p].used ? "" : "  [unused]");
        }
        s << "\n  iteration space: ";
        if (sliced)
            s << "slice " << config.iteration_slice->describe();
        else if (config.ghost_layers.is_automatic())
            s << "automatic ghost layers";
        else if (config.ghost_layers.uniform())
            s << "ghost layers " << *config.ghost_layers.uniform();
        else {
            s << "ghost layers per axis";
            for (auto [lo, hi] : config.ghost_layers.per_axis())
                s << " (" << lo << ", " << hi << ")";
        }
        s << "; index type "
          << (config.index_type ? std::string(type_name(*config.index_type)) : "automatic");
        s << "\n  assignments:";
        for (const Assignment& a : assignments.all()) s << "\n    " << a.to_string();
        std::vector<std::string> names;
        for (const CaseField& f : fields) names.push_back(f.name());
        s << "\n  reference:";
        for (const CaseOutput& o : outputs) {
            s << "\n    " << fields[static_cast<std::size_t>(o.field)].name();
            if (o.component >= 0) s << "(" << o.component << ")";
            s << " = " << ast.to_string(o.node, names);
        }
        return s.str();
    }

private:
    std::int64_t resolve(const CaseBound& b, int d, const Index& i) const {
        const std::int64_t n = shape[static_cast<std::size_t>(d)];
        switch (b.kind) {
        case CaseBound::Kind::End: return n;
        case CaseBound::Kind::Index: return b.value >= 0 ? b.value : n + b.value;
        case CaseBound::Kind::Param:
            return params[static_cast<std::size_t>(b.param)].int_value + b.value;
        case CaseBound::Kind::Counter: return i[static_cast<std::size_t>(b.axis)] + b.value;
        }
        return 0;
    }
};

// ==== Checking =================================================================================

/// Whether `got` (a T) is one of the reference candidates, within factor * its error bound.
/// Integers exactly, floats within factor * err; a wild candidate takes anything but the poison.
template <typename T>
bool matches(const RCands& want, T got, double factor) {
    if (is_poison(got)) return false;
    if constexpr (std::is_integral_v<T>)
        return matches_value(RType::I64, want, 0.0, static_cast<std::int64_t>(got), factor);
    else
        return matches_value(RType::F64, want, static_cast<double>(got), 0, factor);
}

/// The candidates of a reference value, for messages: "3 or 4", "1.5 (tolerance 2e-16)".
inline std::string candidates_text(RType t, const RCands& want, double factor) {
    std::ostringstream s;
    s << std::setprecision(17);
    for (int k = 0; k < want.n; ++k) {
        const RVal& w = want.v[k];
        s << (k ? " or " : "");
        if (w.wild)
            s << "anything (rounding decides)";
        else if (!rt_is_float(t))
            s << w.i;
        else
            s << w.f << " (tolerance " << factor * w.err << ")";
        if (w.overflow) s << " [signed overflow on the way]";
    }
    return s.str();
}

template <typename T>
std::string value_text(T v) {
    if (is_poison(v)) return "the poison";
    std::ostringstream s;
    s << std::setprecision(std::numeric_limits<T>::max_digits10) << v;
    return s.str();
}

/// Array index of buffer position `pos` of field `f`, or empty when `pos` is padding.
inline Index index_of_position(const CaseField& f, std::int64_t pos) {
    Index found;
    for_each_index(f.shape, [&](const Index& i) {
        if (found.empty() && f.position(i) == pos) found = i;
    });
    return found;
}

/// Checks every element of the output buffer of field `field`: written cells must match the
/// reference, every other element (cells outside the iteration space, unwritten components,
/// padding) must still hold the poison. Names the first bad elements by array index.
template <typename T>
::testing::AssertionResult check_buffer(const StencilCase& c, const Expected& e, int field,
                                        const std::vector<T>& got) {
    const CaseField& f = c.fields.at(static_cast<std::size_t>(field));
    const Expected::Buffer& b = e.of(field);
    if (static_cast<std::int64_t>(got.size()) != f.buffer_size)
        return ::testing::AssertionFailure() << got.size() << " values for a buffer of "
                                             << f.buffer_size;
    std::int64_t wrong = 0, missing = 0, stray = 0, to_write = 0;
    std::ostringstream first;
    int listed = 0;
    for (std::size_t p = 0; p < got.size(); ++p) {
        const T v = got[p];
        std::string problem;
        if (b.written[p]) {
            ++to_write;
            if (is_poison(v)) {
                ++missing;
                problem = "still holds the poison, but the kernel must write it";
            } else if (!b.undefined[p] && !matches(b.values[p], v, e.factor)) {
                ++wrong;
                problem = "got " + value_text(v) + ", expected " +
                          candidates_text(f.type, b.values[p], e.factor);
            }
        } else if (!is_poison(v)) {
            ++stray;
            problem = "got " + value_text(v) + ", but the kernel must not write it";
        }
        if (!problem.empty() && listed < 6) {
            Index i = index_of_position(f, static_cast<std::int64_t>(p));
            first << "\n  " << f.name() << " "
                  << (i.empty() ? "padding element " + std::to_string(p)
                                : "cell " + shape_string(i))
                  << ": " << problem;
            ++listed;
        }
    }
    if (wrong + missing + stray == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << f.name() << ": " << to_write << " cells to write: " << wrong << " wrong, " << missing
           << " not written, " << stray << " written that must not be; the first:"
           << first.str();
}

/// Checks that two runs (e.g. GPU and CPU) agree on the buffer of `field`: the same elements
/// written, the values within twice the rounding tolerance of each other (or, where a
/// comparison was too close to call, each a reference candidate).
template <typename T>
::testing::AssertionResult buffers_agree(const StencilCase& c, const Expected& e, int field,
                                         const std::vector<T>& a, const std::vector<T>& b,
                                         const char* a_name, const char* b_name) {
    const CaseField& f = c.fields.at(static_cast<std::size_t>(field));
    const Expected::Buffer& want = e.of(field);
    if (a.size() != b.size() || static_cast<std::int64_t>(a.size()) != f.buffer_size)
        return ::testing::AssertionFailure() << "buffer sizes differ";
    std::int64_t differ = 0;
    std::ostringstream first;
    for (std::size_t p = 0; p < a.size(); ++p) {
        bool ok;
        if (is_poison(a[p]) || is_poison(b[p])) {
            ok = is_poison(a[p]) && is_poison(b[p]);
        } else if (!want.written[p]) {
            ok = false;
        } else if (want.undefined[p]) {
            ok = true;
        } else if constexpr (std::is_integral_v<T>) {
            ok = a[p] == b[p];
        } else {
            const RCands& w = want.values[p];
            double err = 0.0;
            for (int k = 0; k < w.n; ++k) err = std::max(err, w.v[k].err);
            const double tol = 2.0 * e.factor * err + std::numeric_limits<double>::min();
            const double da = static_cast<double>(a[p]), db = static_cast<double>(b[p]);
            ok = std::fabs(da - db) <= tol || (std::isnan(da) && std::isnan(db)) ||
                 (w.n > 1 && matches(w, a[p], e.factor) && matches(w, b[p], e.factor));
        }
        if (!ok && differ++ < 6) {
            Index i = index_of_position(f, static_cast<std::int64_t>(p));
            first << "\n  " << f.name() << " "
                  << (i.empty() ? "padding element " + std::to_string(p)
                                : "cell " + shape_string(i))
                  << ": " << a_name << " " << value_text(a[p]) << ", " << b_name << " "
                  << value_text(b[p]);
        }
    }
    if (differ == 0) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure()
           << f.name() << ": " << differ << " element(s) differ between " << a_name << " and "
           << b_name << "; the first:" << first.str();
}

// ==== The generator ============================================================================

namespace detail {

/// The random-stencil generator. Its steps are protected so that the expression fuzzer's
/// generator (random_expression.cpp) can reuse the shapes, layouts, iteration spaces and buffers.
class Generator {
public:
    Generator(std::uint64_t seed, const GeneratorOptions& options)
        : rng_(seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull), options_(options) {
        c_.seed = seed;
    }
    virtual ~Generator() = default;

    StencilCase run() {
        choose_shape();
        choose_fields();
        if (coin(0.3)) choose_param();
        build_assignments();
        choose_iteration_space();
        lay_out_buffers();
        c_.config.name = "random_stencil";
        const int index_choice = uniform(0, 2);
        if (index_choice == 1) c_.config.index_type = ScalarType::Int32;
        if (index_choice == 2) c_.config.index_type = ScalarType::Int64;
        for (CaseOutput& o : c_.outputs) o.operations = c_.ast.operations(o.node);
        std::vector<int> roots;
        for (const Term& t : temps_) roots.push_back(t.node);
        c_.mark_used(roots);
        return std::move(c_);
    }

protected:
    struct Term {
        Expr e;
        int node = -1;
        RType t = RType::F64;
    };

    // ---- randomness ----
    int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
    double real(double lo, double hi) {
        return std::uniform_real_distribution<double>(lo, hi)(rng_);
    }
    bool coin(double p) { return real(0.0, 1.0) < p; }
    /// A coefficient: a "nice" one (1, -1, 0.5, 0.25, 2) or a random one of magnitude 0.1..2.
    double coefficient() {
        if (coin(0.3)) {
            const double nice[] = {1.0, -1.0, 0.5, 0.25, 2.0, -0.5};
            return nice[uniform(0, 5)];
        }
        return (coin(0.5) ? 1.0 : -1.0) * real(0.1, 2.0);
    }

    // ---- shape and fields ----
    void choose_shape() {
        const int r = uniform(0, 99);
        c_.dims = r < 20 ? 1 : r < 55 ? 2 : r < 90 ? 3 : 4;
        c_.type = coin(0.5) ? RType::F32 : RType::F64;
        radius_ = c_.dims == 1 ? uniform(1, 3) : c_.dims == 4 ? 1 : uniform(1, 2);
        c_.fixed_shape = coin(0.12);
        // Room for a slice of a few cells (fixed shapes: for wider ghost layers too, which
        // must leave something to iterate); now and then an axis too small for any cell.
        const int min_size = 2 * radius_ + (c_.fixed_shape ? 6 : 2);
        const int max_size = std::max(min_size + 1, c_.dims == 1   ? 300
                                                    : c_.dims == 2 ? 40
                                                    : c_.dims == 3 ? 14
                                                                   : 7);
        c_.shape.clear();
        for (int d = 0; d < c_.dims; ++d)
            c_.shape.push_back(!c_.fixed_shape && coin(0.01) ? uniform(1, 2 * radius_)
                                                             : uniform(min_size, max_size));
        reach_.assign(static_cast<std::size_t>(c_.dims), {0, 0});
    }

    Layout random_layout() {
        const int r = uniform(0, 99);
        return r < 55 ? Layout::C : r < 70 ? Layout::Fortran : r < 85 ? Layout::SoA : Layout::AoS;
    }

    int add_field(const std::string& name, RType t, int components, bool written) {
        CaseField f{make_field(name, t, components, written), t, components, Layout::C,
                    written, false, true, {}, {}, 0, 0, {}, {}, {}};
        f.layout = f.field.info().layout;
        c_.fields.push_back(std::move(f));
        return static_cast<int>(c_.fields.size()) - 1;
    }

    Field make_field(const std::string& name, RType t, int components, bool written) {
        FieldOptions o;
        if (components > 0) o.index_shape = {components};
        o.layout = written && coin(0.6) ? Layout::C : random_layout();
        if (c_.fixed_shape) return loom::make_field(name, to_scalar_type(t), c_.shape, o);
        return loom::make_field(name, to_scalar_type(t), c_.dims, o);
    }

    void choose_fields() {
        const int sources = uniform(1, 3);
        for (int s = 0; s < sources; ++s) {
            RType t = coin(0.2) ? (c_.type == RType::F32 ? RType::F64 : RType::F32) : c_.type;
            int components = coin(0.25) ? uniform(2, 3) : 0;
            sources_.push_back(add_field("u" + std::to_string(s), t, components, false));
        }
        const int r = uniform(0, 99);
        if (r < 70) {
            out_fields_.push_back(add_field("out", output_type(), 0, true));
        } else if (r < 85) {
            out_fields_.push_back(add_field("out", output_type(), 0, true));
            out_fields_.push_back(add_field("out2", output_type(), 0, true));
        } else {
            out_fields_.push_back(add_field("vout", output_type(), 2, true));
        }
    }
    /// The kernel type, or now and then float64 for a float32 kernel (a widening store).
    RType output_type() { return c_.type == RType::F32 && coin(0.1) ? RType::F64 : c_.type; }

    void choose_param() {
        CaseParam p;
        p.name = "alpha";
        p.type = c_.type;
        double v = (coin(0.5) ? 1.0 : -1.0) * real(0.5, 1.5);
        p.value = p.type == RType::F32 ? static_cast<double>(static_cast<float>(v)) : v;
        p.expr = param(p.name, to_scalar_type(p.type));
        c_.params.push_back(p);
        value_param_ = static_cast<int>(c_.params.size()) - 1;
    }

    // ---- expressions, mirrored in the reference ----
    /// Brings two terms to one type, as the DSL's promotion does (float32 -> float64 is exact).
    std::pair<int, int> unify(const Term& a, const Term& b) {
        RType t = wider(a.t, b.t);
        return {c_.ast.cast(t, a.node), c_.ast.cast(t, b.node)};
    }
    Term binary(ROp op, const Term& a, const Term& b) {
        auto [na, nb] = unify(a, b);
        Expr e;
        switch (op) {
        case ROp::Add: e = a.e + b.e; break;
        case ROp::Sub: e = a.e - b.e; break;
        case ROp::Mul: e = a.e * b.e; break;
        case ROp::Div: e = a.e / b.e; break;
        case ROp::Min: e = min(a.e, b.e); break;
        case ROp::Max: e = max(a.e, b.e); break;
        default: throw std::logic_error("generator: binary op");
        }
        return {e, c_.ast.binary(op, na, nb), wider(a.t, b.t)};
    }
    /// A plain C++ number `c` (a weak literal) combined with `x`: it takes x's type.
    Term literal_times(double c, const Term& x) {
        return {c * x.e, c_.ast.binary(ROp::Mul, c_.ast.constant(x.t, c), x.node), x.t};
    }
    Term plus_literal(const Term& x, double c) {
        return {x.e + c, c_.ast.binary(ROp::Add, x.node, c_.ast.constant(x.t, c)), x.t};
    }

    Term read() {
        const int f =
            sources_[static_cast<std::size_t>(uniform(0, static_cast<int>(sources_.size()) - 1))];
        const CaseField& cf = c_.fields[static_cast<std::size_t>(f)];
        std::vector<int> offset;
        for (int d = 0; d < c_.dims; ++d) {
            int o = coin(0.35) ? 0 : uniform(-radius_, radius_);
            offset.push_back(o);
            auto& r = reach_[static_cast<std::size_t>(d)];
            r.first = std::max(r.first, -o);
            r.second = std::max(r.second, o);
        }
        const int comp = cf.components > 0 ? uniform(0, cf.components - 1) : -1;
        Access access = cf.field[offset];
        if (comp >= 0) access = access(comp);
        Term t{access.expr(), c_.ast.read(cf.type, f, offset, comp), cf.type};
        if (cf.type == RType::F64 && c_.type == RType::F32)
            t = {cast(ScalarType::Float32, t.e), c_.ast.cast(RType::F32, t.node), RType::F32};
        return t;
    }

    Term leaf() {
        if (!temps_.empty() && coin(0.2))
            return temps_[static_cast<std::size_t>(
                uniform(0, static_cast<int>(temps_.size()) - 1))];
        const int r = uniform(0, 99);
        if (r < 6) {
            // A counter, converted to the kernel's type: the value depends on the cell index.
            const int axis = uniform(0, c_.dims - 1);
            Term t{cast(to_scalar_type(c_.type), ctr(axis)),
                   c_.ast.cast(c_.type, c_.ast.counter(axis)), c_.type};
            return literal_times(real(0.01, 0.2), t);
        }
        Term t = read();
        if (value_param_ >= 0 && r < 18) {
            const CaseParam& p = c_.params[static_cast<std::size_t>(value_param_)];
            return binary(ROp::Mul, Term{p.expr, c_.ast.var(p.type, value_param_), p.type}, t);
        }
        if (r < 70) return literal_times(coefficient(), t);
        return t;
    }

    Term gen(int depth) {
        if (depth <= 0 || coin(0.25)) return leaf();
        const int r = uniform(0, 99);
        if (r < 30) {
            Term acc = gen(depth - 1);
            for (int k = uniform(1, 3); k > 0; --k)
                acc = binary(coin(0.65) ? ROp::Add : ROp::Sub, acc, gen(depth - 1));
            return acc;
        }
        if (r < 40) return literal_times(coefficient(), gen(depth - 1));
        if (r < 48) return binary(ROp::Mul, gen(depth - 1), gen(depth - 1));
        if (r < 53) {
            Term a = gen(depth - 1);
            return {-a.e, c_.ast.unary(ROp::Neg, a.node), a.t};
        }
        if (r < 59) {
            Term a = gen(depth - 1);
            return {abs(a.e), c_.ast.unary(ROp::Abs, a.node), a.t};
        }
        if (r < 67) {
            // sqrt(|e| + 1): defined everywhere, never near zero.
            Term a = gen(depth - 1);
            Term inner = plus_literal({abs(a.e), c_.ast.unary(ROp::Abs, a.node), a.t}, 1.0);
            return {sqrt(inner.e), c_.ast.unary(ROp::Sqrt, inner.node), inner.t};
        }
        if (r < 77) return binary(coin(0.5) ? ROp::Min : ROp::Max, gen(depth - 1), gen(depth - 1));
        if (r < 84) {
            // e1 / (|e2| + k): the divisor stays at least k.
            Term d = gen(depth - 1);
            Term divisor = plus_literal({abs(d.e), c_.ast.unary(ROp::Abs, d.node), d.t},
                                        real(0.5, 2.0));
            return binary(ROp::Div, gen(depth - 1), divisor);
        }
        // select(a < b, x, y) (or >, <=, >=)
        Term a = gen(depth - 1), b = gen(depth - 1), x = gen(depth - 1), y = gen(depth - 1);
        auto [na, nb] = unify(a, b);
        const ROp ops[] = {ROp::Lt, ROp::Gt, ROp::Le, ROp::Ge};
        const ROp op = ops[uniform(0, 3)];
        Expr cond = op == ROp::Lt ? a.e < b.e : op == ROp::Gt ? a.e > b.e
                    : op == ROp::Le ? a.e <= b.e : a.e >= b.e;
        auto [nx, ny] = unify(x, y);
        return {select(cond, x.e, y.e), c_.ast.select(c_.ast.binary(op, na, nb), nx, ny),
                wider(x.t, y.t)};
    }

    void build_assignments() {
        if (coin(0.3)) {
            // A named subexpression, used as a leaf below (maybe several times).
            Term s = gen(uniform(1, 2));
            Expr t = c_.assignments.subexpression("t0", s.e);
            temps_.push_back({t, s.node, s.t});
        }
        const int depth = uniform(1, 3);
        std::vector<Term> rhs_pool;
        auto rhs = [&]() {
            // Now and then the same right side twice: common subexpressions across outputs.
            if (!rhs_pool.empty() && coin(0.15)) return rhs_pool.back();
            Term t = gen(depth);
            rhs_pool.push_back(t);
            return t;
        };
        for (int f : out_fields_) {
            const CaseField& cf = c_.fields[static_cast<std::size_t>(f)];
            const int n = cf.components > 0 ? cf.components : 1;
            // A vector output sometimes leaves a component unwritten (it must keep the poison).
            const int skip = cf.components > 0 && coin(0.3) ? uniform(0, n - 1) : -1;
            for (int k = 0; k < n; ++k) {
                if (k == skip) continue;
                Term t = rhs();
                Access lhs = cf.components > 0 ? cf.field.center(k) : cf.field.center();
                int node = t.node;
                if (cf.type == RType::F32 && t.t == RType::F64)
                    throw std::logic_error("generator: float64 into a float32 output");
                if (cf.type != t.t) node = c_.ast.cast(cf.type, node); // the implicit widening
                c_.assignments.add(Assignment(lhs, t.e));
                c_.outputs.push_back({f, cf.components > 0 ? k : -1, node, 0});
            }
        }
    }

    // ---- iteration space ----
    void choose_iteration_space() {
        const int D = c_.dims;
        c_.axes.assign(static_cast<std::size_t>(D), CaseAxis{});
        std::int64_t reach = 0;
        for (auto [lo, hi] : reach_) reach = std::max<std::int64_t>({reach, lo, hi});
        bool too_small = false;
        for (int d = 0; d < D; ++d)
            too_small |= c_.shape[static_cast<std::size_t>(d)] < 2 * reach + 2;
        if (too_small || coin(0.62)) {
            const int r = uniform(0, 99);
            if (r < 40) {
                for (CaseAxis& a : c_.axes) a.ghost_lo = a.ghost_hi = reach;
            } else if (r < 70) {
                const int w = static_cast<int>(reach) + (coin(0.5) ? 0 : uniform(1, 2));
                c_.config.ghost_layers = GhostLayers(w);
                for (CaseAxis& a : c_.axes) a.ghost_lo = a.ghost_hi = w;
            } else {
                std::vector<std::pair<int, int>> per_axis;
                for (int d = 0; d < D; ++d) {
                    auto [lo, hi] = reach_[static_cast<std::size_t>(d)];
                    const int l = lo + (coin(0.6) ? 0 : uniform(1, 2));
                    const int h = hi + (coin(0.6) ? 0 : uniform(1, 2));
                    per_axis.emplace_back(l, h);
                    c_.axes[static_cast<std::size_t>(d)].ghost_lo = l;
                    c_.axes[static_cast<std::size_t>(d)].ghost_hi = h;
                }
                c_.config.ghost_layers = GhostLayers(per_axis);
            }
            return;
        }
        c_.sliced = true;
        std::vector<SliceDim> dims;
        for (int d = 0; d < D; ++d) dims.push_back(slice_axis(d));
        c_.config.iteration_slice = Slice(dims);
    }

    SliceDim slice_axis(int d) {
        CaseAxis& ax = c_.axes[static_cast<std::size_t>(d)];
        const std::int64_t n = c_.shape[static_cast<std::size_t>(d)];
        const auto [lo, hi] = reach_[static_cast<std::size_t>(d)];
        // Valid cells: lo <= c <= n - 1 - hi.
        const std::int64_t first = lo, last = n - 1 - hi;
        if (coin(0.12)) {
            // A single index, sometimes counted from the end.
            const std::int64_t k = first + uniform(0, static_cast<int>(last - first));
            ax.single = true;
            ax.start.kind = CaseBound::Kind::Index;
            ax.start.value = coin(0.4) ? k - n : k;
            return at(Bound(ax.start.value));
        }
        ax.step = coin(0.6) ? 1 : uniform(2, 3);
        Bound start(0), stop = Bound::end();
        // The first cell s, then the stop in (s, last + 1] (now and then s: an empty range).
        const std::int64_t s =
            first + uniform(0, static_cast<int>(std::min<std::int64_t>(last - first, 4)));
        const std::int64_t stop_at =
            coin(0.03)
                ? s
                : last + 1 - uniform(0, static_cast<int>(std::min<std::int64_t>(last - s, 3)));
        // Start: a literal (maybe from the end), a parameter or an earlier counter.
        const int r = uniform(0, 99);
        if (r < 8 && static_cast<int>(c_.params.size()) < max_params_) {
            CaseParam p;
            p.name = "lo" + std::to_string(d);
            p.type = RType::I64;
            p.value = static_cast<double>(s);
            p.int_value = s;
            p.bound = true;
            p.expr = param(p.name, ScalarType::Int64);
            c_.params.push_back(p);
            ax.start.kind = CaseBound::Kind::Param;
            ax.start.param = static_cast<int>(c_.params.size()) - 1;
            start = Bound(p.expr);
        } else if (r < 22 && d > 0 && options_.counter_bounds) {
            // start = ctr(e) + k: cells of earlier axes are >= 0, so k >= lo keeps it in bounds.
            const int e = uniform(0, d - 1);
            const std::int64_t k = lo + uniform(0, 2);
            ax.start.kind = CaseBound::Kind::Counter;
            ax.start.axis = e;
            ax.start.value = k;
            start = Bound(ctr(e) + k);
        } else {
            ax.start.kind = CaseBound::Kind::Index;
            ax.start.value = s > 0 && coin(0.3) ? s - n : s;
            start = Bound(ax.start.value);
        }
        // Stop: the end, a distance from the end, or a literal index.
        ax.stop.kind = CaseBound::Kind::Index;
        if (stop_at == n && coin(0.7)) {
            ax.stop.kind = CaseBound::Kind::End;
        } else if (stop_at < n && coin(0.55)) {
            ax.stop.value = stop_at - n;
            stop = Bound(ax.stop.value);
        } else {
            ax.stop.value = stop_at;
            stop = Bound(ax.stop.value);
        }
        return range(start, stop, ax.step);
    }

    // ---- buffers ----
    /// Array axes in memory order, slowest first, for a layout (the test's own reading of
    /// Layout's documentation, not loom's FieldInfo::memory_order).
    static std::vector<int> memory_order(Layout layout, int dims, int comp_axes) {
        std::vector<int> order;
        const int A = dims + comp_axes;
        switch (layout) {
        case Layout::C:
            for (int a = 0; a < A; ++a) order.push_back(a);
            break;
        case Layout::Fortran:
            for (int a = A - 1; a >= 0; --a) order.push_back(a);
            break;
        case Layout::SoA: // components slowest, then z, y, x: axis 0 fastest
            for (int a = dims; a < A; ++a) order.push_back(a);
            for (int a = dims - 1; a >= 0; --a) order.push_back(a);
            break;
        case Layout::AoS: // z, y, x, then components fastest
            for (int a = dims - 1; a >= 0; --a) order.push_back(a);
            for (int a = dims; a < A; ++a) order.push_back(a);
            break;
        }
        return order;
    }

    void lay_out_buffers() {
        for (CaseField& f : c_.fields) {
            f.shape = f.own_shape.empty() ? c_.shape : f.own_shape;
            const int dims = static_cast<int>(f.shape.size());
            if (f.components > 0) f.shape.push_back(f.components);
            const int A = static_cast<int>(f.shape.size());
            // Fixed-shape fields have their strides baked in: compact only. Others may be a
            // sub-box of a larger buffer (strides of the larger box, an offset).
            f.padded = !f.field.info().is_fixed() && coin(0.2);
            Shape box = f.shape, at(static_cast<std::size_t>(A), 0);
            if (f.padded)
                for (int a = 0; a < A; ++a) {
                    const std::int64_t extra = uniform(0, 3);
                    box[static_cast<std::size_t>(a)] += extra;
                    at[static_cast<std::size_t>(a)] = uniform(0, static_cast<int>(extra));
                }
            f.strides.assign(static_cast<std::size_t>(A), 0);
            std::int64_t stride = 1;
            const std::vector<int> order = memory_order(f.layout, dims, A - dims);
            for (auto it = order.rbegin(); it != order.rend(); ++it) {
                f.strides[static_cast<std::size_t>(*it)] = stride;
                stride *= box[static_cast<std::size_t>(*it)];
            }
            f.buffer_size = stride;
            f.offset = 0;
            for (int a = 0; a < A; ++a)
                f.offset +=
                    at[static_cast<std::size_t>(a)] * f.strides[static_cast<std::size_t>(a)];
            if (!f.written) fill_values(f);
        }
    }

    /// Random input values for the whole buffer (the padding too).
    virtual void fill_values(CaseField& f) {
        // Never zero, exactly representable in the field's type.
        f.values.resize(static_cast<std::size_t>(f.buffer_size));
        for (double& v : f.values) {
            const double x = (coin(0.5) ? 1.0 : -1.0) *
                             (f.type == RType::F32 ? real(0.25, 1.0) : real(0.5, 2.0));
            v = f.type == RType::F32 ? static_cast<double>(static_cast<float>(x)) : x;
        }
    }

    std::mt19937_64 rng_;
    GeneratorOptions options_;
    StencilCase c_;
    int radius_ = 1;
    std::vector<std::pair<int, int>> reach_; ///< per axis: cells read below, above
    std::vector<int> sources_, out_fields_;
    std::vector<Term> temps_;
    int value_param_ = -1;
    int max_params_ = 3; ///< slice-bound parameters are drawn while there are fewer parameters
};

} // namespace detail

/// The random stencil of `seed`: the same seed gives the same case on every machine.
inline StencilCase generate_stencil(std::uint64_t seed, const GeneratorOptions& options = {}) {
    return detail::Generator(seed, options).run();
}

/// The scalar arguments of a case, by name: parameter values (float or integer).
inline void add_scalar_args(const StencilCase& c, Args& a) {
    for (const CaseParam& p : c.params) {
        if (!p.used) continue;
        if (rt_is_float(p.type))
            a.named.emplace_back(p.name, Arg(p.value));
        else
            a.named.emplace_back(p.name, Arg(p.int_value));
    }
}

/// The host buffers of a case, one per field and of the field's type (inputs random, outputs
/// poisoned), and the arguments that pass them to a Target::CPU kernel: a HostView per field
/// (read-only for inputs) over the buffer at the field's offset and strides, plus the scalar
/// parameters.
struct HostBuffers {
    std::vector<std::vector<float>> f32;
    std::vector<std::vector<double>> f64;
    std::vector<std::vector<std::int32_t>> i32;
    std::vector<std::vector<std::int64_t>> i64;

    explicit HostBuffers(const StencilCase& c)
        : f32(c.fields.size()), f64(c.fields.size()), i32(c.fields.size()), i64(c.fields.size()) {
        for (std::size_t f = 0; f < c.fields.size(); ++f)
            with_element_type(c.fields[f].type, [&](auto zero) {
                using T = decltype(zero);
                of<T>(f) = c.fields[f].buffer_as<T>();
            });
    }

    /// The buffer of field `f` as T (one of float, double, int32_t, int64_t).
    template <typename T>
    std::vector<T>& of(std::size_t f) {
        if constexpr (std::is_same_v<T, float>) return f32[f];
        else if constexpr (std::is_same_v<T, double>) return f64[f];
        else if constexpr (std::is_same_v<T, std::int32_t>) return i32[f];
        else return i64[f];
    }
    template <typename T>
    const std::vector<T>& of(std::size_t f) const {
        return const_cast<HostBuffers*>(this)->of<T>(f);
    }

    Args args(const StencilCase& c) {
        Args a;
        for (std::size_t f = 0; f < c.fields.size(); ++f) {
            const CaseField& cf = c.fields[f];
            if (!cf.used) continue;
            ArrayRef ref;
            with_element_type(cf.type, [&](auto zero) {
                using T = decltype(zero);
                T* p = of<T>(f).data() + cf.offset;
                ref = cf.written ? HostView<T>(p, cf.shape, cf.strides).ref()
                                 : HostView<const T>(p, cf.shape, cf.strides).ref();
            });
            a.named.emplace_back(cf.name(), Arg(ref));
        }
        add_scalar_args(c, a);
        return a;
    }

    /// check_buffer on every output buffer.
    ::testing::AssertionResult check(const StencilCase& c, const Expected& e) const {
        for (std::size_t f = 0; f < c.fields.size(); ++f) {
            if (!c.fields[f].written) continue;
            ::testing::AssertionResult r = ::testing::AssertionSuccess();
            with_element_type(c.fields[f].type, [&](auto zero) {
                using T = decltype(zero);
                r = check_buffer(c, e, static_cast<int>(f), of<T>(f));
            });
            if (!r) return r;
        }
        return ::testing::AssertionSuccess();
    }
};

/// The base seed of a run: LOOM_STENCIL_SEED if set, else `fallback`.
inline std::uint64_t base_seed(std::uint64_t fallback) {
    if (const char* s = std::getenv("LOOM_STENCIL_SEED")) return std::strtoull(s, nullptr, 0);
    return fallback;
}
/// How many cases a run checks: LOOM_STENCIL_COUNT if set, else `fallback`.
inline int case_count(int fallback) {
    if (const char* s = std::getenv("LOOM_STENCIL_COUNT")) return std::atoi(s);
    return fallback;
}

} // namespace loom::stencil_test
