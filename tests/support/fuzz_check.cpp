#include "tests/support/fuzz_check.hpp"

#include "runtime/nvrtc_compiler.hpp"
#include "tests/support/ir_interpreter.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <typeinfo>

namespace loom::stencil_test {

// ==== Knobs ====================================================================================

std::uint64_t fuzz_seed(std::uint64_t fallback) {
    if (const char* s = std::getenv("LOOM_FUZZ_SEED")) return std::strtoull(s, nullptr, 0);
    return fallback;
}

std::int64_t fuzz_count(std::int64_t fallback) {
    if (const char* s = std::getenv("LOOM_FUZZ_COUNT"))
        return std::max<std::int64_t>(1, std::atoll(s));
    double scale = 1.0;
    if (const char* s = std::getenv("LOOM_FUZZ_SCALE")) scale = std::atof(s);
    return std::max<std::int64_t>(1, std::llround(static_cast<double>(fallback) * scale));
}

// ==== Paths ====================================================================================

void run_with_interpreter(const StencilCase& c, HostBuffers& b) {
    const Kernel k = c.kernel(Target::CPU);
    interpret_case_body(c, b, k.ir(), k.parameters());
}

void interpret_case_body(const StencilCase& c, HostBuffers& b, const Stmt& body,
                         const std::vector<KernelParam>& params) {
    std::map<std::string, test::InterpretedArray> arrays;
    for (std::size_t f = 0; f < c.fields.size(); ++f) {
        const CaseField& cf = c.fields[f];
        if (!cf.used) continue;
        test::InterpretedArray a;
        a.type = to_scalar_type(cf.type);
        a.shape = cf.shape;
        a.strides = cf.strides;
        with_element_type(cf.type, [&](auto zero) {
            using T = decltype(zero);
            a.data = b.of<T>(f).data() + cf.offset;
        });
        arrays[cf.name()] = a;
    }
    std::map<std::string, test::InterpretedScalar> scalars;
    for (const CaseParam& p : c.params)
        if (p.used) scalars[p.name] = {p.int_value, p.value};
    test::interpret_body(body, params, c.shape, arrays, scalars);
}

void run_on_cpu(const StencilCase& c, HostBuffers& b) {
    KernelFunction f = c.kernel(Target::CPU).compile();
    f(b.args(c));
}

namespace {
/// The case for Target::CUDA: a slice that follows a counter needs a manual grid, and none for
/// a 4D kernel, which CUDA cannot map (nullopt).
std::optional<Kernel> cuda_kernel(const StencilCase& c) {
    KernelConfig config = c.config;
    config.target = Target::CUDA;
    Schedule schedule = c.schedule;
    bool counter_bound = false;
    for (const CaseAxis& a : c.axes)
        counter_bound |= c.sliced && a.start.kind == CaseBound::Kind::Counter;
    if (counter_bound) {
        if (c.dims > 3) return std::nullopt;
        schedule.manual_launch_grid = true;
    }
    return create_kernel(c.assignments, config, schedule);
}
} // namespace

bool compile_with_nvrtc(const StencilCase& c) {
    const std::optional<Kernel> cuda = cuda_kernel(c);
    if (!cuda) return false;
    const Kernel& k = *cuda;
    NvrtcOptions o;
    o.arch = 90;
    const NvrtcResult r = nvrtc_compile(k.source(), k.name(), o);
    if (r.cubin.empty() || !r.log.empty())
        throw CompileError("NVRTC " + std::string(r.cubin.empty() ? "made no CUBIN" : "warned") +
                               ":\n" + r.log,
                           r.log, {}, numbered_source(k.source()));
    return true;
}

FuzzPath interpreter_path() {
    FuzzPath p;
    p.name = "loom's passes (create_kernel, Target::CPU) and its IR interpreter";
    p.run = run_with_interpreter;
    p.skip_overflow = false;
    p.shrink_budget = 400;
    return p;
}

FuzzPath cpu_path() {
    FuzzPath p;
    p.name = "generated C++ (Target::CPU, host compiler)";
    p.run = run_on_cpu;
    p.shrink_budget = 100; // each run a host compile, well under a second for one expression
    return p;
}

FuzzPath nvrtc_path() {
    FuzzPath p;
    p.name = "generated CUDA compiled by NVRTC for sm_90";
    p.run = [](const StencilCase& c, HostBuffers&) { compile_with_nvrtc(c); };
    p.compare = false;
    p.shrink_budget = 100;
    return p;
}

// ==== Comparing ================================================================================

void FuzzTally::add(const FuzzTally& o) {
    kernels += o.kernels;
    expressions += o.expressions;
    values += o.values;
    compared += o.compared;
    wild += o.wild;
    overflow += o.overflow;
    undefined += o.undefined;
}

std::string FuzzTally::summary() const {
    std::ostringstream s;
    s << expressions << " expressions in " << kernels << " kernels, " << values
      << " values: " << compared << " compared, " << wild << " left to rounding, " << overflow
      << " after a signed overflow, " << undefined << " undefined";
    return s.str();
}

namespace {

template <typename T>
std::string text_of(T v) {
    if (is_poison(v)) return "the poison";
    std::ostringstream s;
    s << std::setprecision(17) << v;
    return s.str();
}

/// The cell, and for vector outputs the component, of buffer position `pos` of an output.
struct Where {
    int output = -1;
    Index cell;
};

} // namespace

std::vector<Mismatch> compare_case(const StencilCase& c, const Expected& want,
                                   const HostBuffers& got, bool skip_overflow, FuzzTally& tally) {
    std::vector<Mismatch> out;
    // Which expression each buffer element holds.
    std::map<std::pair<int, int>, int> output_of; // (field, component) -> output
    for (std::size_t j = 0; j < c.outputs.size(); ++j)
        output_of[{c.outputs[j].field, c.outputs[j].component}] = static_cast<int>(j);
    for (const Expected::Buffer& b : want.buffers) {
        const CaseField& f = c.fields[static_cast<std::size_t>(b.field)];
        with_element_type(f.type, [&](auto zero) {
            using T = decltype(zero);
            const std::vector<T>& values = got.of<T>(static_cast<std::size_t>(b.field));
            std::map<std::int64_t, Where> where;
            for_each_index(f.shape, [&](const Index& i) {
                Where w;
                w.cell = Index(i.begin(), i.begin() + c.dims);
                const int component = f.components > 0 ? static_cast<int>(i.back()) : -1;
                auto it = output_of.find({b.field, component});
                w.output = it == output_of.end() ? -1 : it->second;
                where[f.position(i)] = w;
            });
            for (std::size_t p = 0; p < values.size(); ++p) {
                const T v = values[p];
                auto at = where.find(static_cast<std::int64_t>(p));
                Mismatch m;
                if (at != where.end()) m.output = at->second.output, m.cell = at->second.cell;
                if (!b.written[p]) {
                    if (is_poison(v)) continue;
                    m.what = "holds " + text_of(v) + " where the kernel must not write (" +
                             (at == where.end() ? "padding" : "outside the iteration space") + ")";
                    out.push_back(m);
                    continue;
                }
                ++tally.values;
                if (b.undefined[p]) {
                    ++tally.undefined;
                    continue;
                }
                const RCands& w = b.values[p];
                if (w.wild()) {
                    ++tally.wild;
                    continue;
                }
                if (skip_overflow && w.overflow()) {
                    ++tally.overflow;
                    continue;
                }
                ++tally.compared;
                const bool ok =
                    !is_poison(v) && matches_value(f.type, w, static_cast<double>(v),
                                                   static_cast<std::int64_t>(v), want.factor);
                if (ok) continue;
                m.what =
                    "got " + text_of(v) + ", expected " + candidates_text(f.type, w, want.factor);
                out.push_back(m);
            }
        });
    }
    return out;
}

// ==== Single expressions and shrinking =========================================================

StencilCase single_expression_case(const StencilCase& c, int output, int node) {
    StencilCase m = c;
    CaseOutput o = c.outputs.at(static_cast<std::size_t>(output));
    o.node = node;
    o.operations = m.ast.operations(node);
    m.outputs = {o};
    if (!m.sliced && m.config.ghost_layers.is_automatic()) {
        // Its own reads may reach less far: keep the whole kernel's iteration space.
        std::vector<std::pair<int, int>> widths;
        for (const CaseAxis& a : m.axes)
            widths.emplace_back(static_cast<int>(a.ghost_lo), static_cast<int>(a.ghost_hi));
        m.config.ghost_layers = GhostLayers(widths);
    }
    m.mark_used();
    rebuild_assignments(m);
    return m;
}

namespace {

/// How a run went, for comparing a shrunk candidate's failure with the original one.
struct Outcome {
    std::string threw; ///< the exception's kind ("" when it did not throw)
    std::string message;
    std::vector<Mismatch> mismatches;
    bool failed() const { return !threw.empty() || !mismatches.empty(); }
};

std::string kind_of(const std::exception& e) {
    if (dynamic_cast<const InternalError*>(&e)) return "InternalError";
    if (dynamic_cast<const CompileError*>(&e)) return "CompileError";
    if (dynamic_cast<const UserError*>(&e)) return "UserError";
    if (dynamic_cast<const CudaError*>(&e)) return "CudaError";
    if (dynamic_cast<const std::logic_error*>(&e)) return "std::logic_error (the test harness)";
    return std::string("exception ") + typeid(e).name();
}

Outcome run_once(const StencilCase& c, const FuzzPath& path, const Expected& want,
                 FuzzTally& tally) {
    Outcome o;
    HostBuffers b(c);
    try {
        path.run(c, b);
    } catch (const std::exception& e) {
        o.threw = kind_of(e);
        o.message = e.what();
        return o;
    }
    if (path.compare) o.mismatches = compare_case(c, want, b, path.skip_overflow, tally);
    return o;
}

/// The case with only the given outputs.
StencilCase subset_case(const StencilCase& c, const std::vector<int>& outputs) {
    StencilCase m = single_expression_case(c, outputs.at(0), c.outputs[outputs[0]].node);
    m.outputs.clear();
    for (int j : outputs) m.outputs.push_back(c.outputs[static_cast<std::size_t>(j)]);
    m.mark_used();
    rebuild_assignments(m);
    return m;
}

class Shrinker {
public:
    Shrinker(const StencilCase& c, int output, const FuzzPath& path, const Outcome& original)
        : work_(c), output_(output), path_(path), original_(original) {}

    /// Greedy: the first replacement that still fails and is smaller, again and again.
    int shrink(int root, const Index& cell) {
        cell_ = cell;
        int best = root;
        for (bool improved = true; improved && calls_ < path_.shrink_budget;) {
            improved = false;
            std::vector<int> nodes = tree_nodes(work_.ast, best);
            const std::size_t size = nodes.size();
            // The largest subtrees first: one success there saves the most runs.
            std::map<int, std::size_t> below;
            for (int x : nodes) below[x] = tree_nodes(work_.ast, x).size();
            std::stable_sort(nodes.begin(), nodes.end(),
                             [&](int a, int b) { return below[a] > below[b]; });
            for (int x : nodes) {
                for (int y : replacements(x)) {
                    std::map<int, int> memo;
                    const int candidate = work_.ast.replaced(best, {{x, y}}, memo);
                    if (tree_nodes(work_.ast, candidate).size() >= size) continue;
                    if (calls_ >= path_.shrink_budget) break;
                    ++calls_;
                    if (still_fails(candidate)) {
                        best = candidate;
                        improved = true;
                        break;
                    }
                }
                if (improved || calls_ >= path_.shrink_budget) break;
            }
        }
        return best;
    }

    StencilCase& work() { return work_; }
    int calls() const { return calls_; }

    bool still_fails(int node) {
        StencilCase m;
        try {
            m = single_expression_case(work_, output_, node);
        } catch (const std::exception&) {
            return false; // the DSL types it otherwise, or refuses it: not a candidate
        }
        const Expected want = m.expected();
        if (want.cells_undefined > 0) return false; // a guard was lost
        // Generated code may do anything after a signed overflow, to other cells too.
        if (path_.skip_overflow)
            for (const Expected::Buffer& b : want.buffers)
                for (std::size_t p = 0; p < b.values.size(); ++p)
                    if (b.written[p] && !b.undefined[p] && b.values[p].overflow()) return false;
        FuzzTally ignored;
        const Outcome o = run_once(m, path_, want, ignored);
        if (!original_.threw.empty()) return o.threw == original_.threw;
        return o.threw.empty() && !o.mismatches.empty();
    }

private:
    /// What may stand for x: its operands of its own type, and the constant it evaluates to at
    /// the failing cell. Plain numbers and implicit conversions become typed (they depend on a
    /// partner the new place may lack).
    std::vector<int> replacements(int x) {
        std::vector<int> out;
        const RNode n = work_.ast[x]; // a copy: adding nodes below moves the node vector
        if (!(n.op == ROp::Cast || n.op == ROp::ReadAt))
            for (int k : work_.ast.operands(x))
                if (work_.ast.type(k) == n.type) out.push_back(work_.ast.standalone(k));
        if (n.op != ROp::Const && !(n.op == ROp::Cast && n.implicit)) {
            const int k = value_at_cell(x);
            if (k >= 0) out.push_back(k);
        }
        return out;
    }

    int value_at_cell(int x) {
        RefEvaluator ev(work_.ast, 2.0);
        work_.bind(ev);
        ev.cell = cell_;
        try {
            const RCands& v = ev.eval(x);
            if (v.n != 1 || v.wild()) return -1;
            const RType t = work_.ast.type(x);
            if (rt_is_float(t)) {
                if (!std::isfinite(v.v[0].f)) return -1;
                return work_.ast.constant(t, v.v[0].f);
            }
            return work_.ast.const_int(t, v.v[0].i);
        } catch (const std::exception&) {
            return -1;
        }
    }

    StencilCase work_;
    int output_;
    const FuzzPath& path_;
    Outcome original_;
    Index cell_;
    int calls_ = 0;
};

/// The inputs a tree reads at `cell`, one line each: "a_f32[{1, 0}] = 0.5".
std::string inputs_at(const StencilCase& c, int root, const Index& cell) {
    RefEvaluator ev(c.ast, 2.0);
    c.bind(ev);
    ev.cell = cell;
    DslBuilder text(c);
    std::ostringstream s;
    s << std::setprecision(17);
    std::set<std::string> seen;
    for (int n : tree_nodes(c.ast, root)) {
        const RNode& x = c.ast[n];
        if (x.op != ROp::Read && x.op != ROp::ReadAt && x.op != ROp::Var && x.op != ROp::Counter)
            continue;
        auto value = [&](int k) {
            try {
                const RCands& v = ev.eval(k);
                std::ostringstream t;
                t << std::setprecision(17);
                for (int i = 0; i < v.n; ++i) {
                    t << (i ? " or " : "");
                    if (v.v[i].wild)
                        t << "?";
                    else if (rt_is_float(c.ast.type(k)))
                        t << v.v[i].f;
                    else
                        t << v.v[i].i;
                }
                return t.str();
            } catch (const std::exception& e) {
                return std::string("(") + e.what() + ")";
            }
        };
        std::string line = "    " + text.text(n) + " = " + value(n);
        if (x.op == ROp::ReadAt) {
            line += "   (at";
            for (int k : c.ast.operands(n)) line += " " + value(k);
            line += ")";
        }
        if (seen.insert(line).second) s << line << "\n";
    }
    return s.str();
}

std::string frame_of(const StencilCase& c) {
    std::ostringstream s;
    s << c.dims << "D, shape " << shape_string(c.shape)
      << (c.fixed_shape ? " (fixed in the kernel)" : "") << ", iteration space ";
    if (c.sliced)
        s << "slice " << c.config.iteration_slice->describe();
    else if (c.config.ghost_layers.is_automatic())
        s << "automatic ghost layers";
    else if (c.config.ghost_layers.uniform())
        s << "ghost layers " << *c.config.ghost_layers.uniform();
    else {
        s << "ghost layers per axis";
        for (auto [lo, hi] : c.config.ghost_layers.per_axis()) s << " (" << lo << ", " << hi << ")";
    }
    s << ", index type "
      << (c.config.index_type ? std::string(type_name(*c.config.index_type)) : "automatic");
    return s.str();
}

std::string report(const StencilCase& c, const FuzzPath& path, const std::string& headline,
                   const std::string& details) {
    std::ostringstream s;
    s << "\n==== fuzz failure: " << path.name << " ====\n"
      << headline << "\n"
      << "  seed " << c.seed << "; rerun: LOOM_FUZZ_SEED=" << c.seed << " LOOM_FUZZ_COUNT=1 "
      << path.rerun << "\n  kernel: " << frame_of(c) << "\n"
      << details;
    return s.str();
}

std::string reproduce(const StencilCase& c, int output, const FuzzPath& path,
                      const Outcome& original, const Index& cell) {
    const CaseOutput& o = c.outputs.at(static_cast<std::size_t>(output));
    Shrinker shrinker(c, output, path, original);
    // Alone in a kernel first: is it this expression, or the company it kept?
    const bool alone = shrinker.still_fails(o.node);
    const int best = alone ? shrinker.shrink(o.node, cell) : o.node;
    StencilCase& work = shrinker.work();
    StencilCase m = single_expression_case(work, output, best);
    const Expected want = m.expected();
    FuzzTally ignored;
    const Outcome now = alone ? run_once(m, path, want, ignored) : original;

    const CaseField& f = c.fields.at(static_cast<std::size_t>(o.field));
    DslBuilder dsl(m);
    std::ostringstream s;
    s << "  expression " << output << " of " << c.outputs.size() << ", stored into " << f.name()
      << "(" << o.component << ") (" << rt_name(f.type) << ")";
    if (alone)
        s << "; shrunk from " << tree_nodes(c.ast, o.node).size() << " to "
          << tree_nodes(work.ast, best).size() << " nodes in " << shrinker.calls() << " runs\n";
    else
        s << "; it passes alone in a kernel: the failure needs the rest of the batch (not "
             "shrunk)\n";
    s << "  the DSL:\n";
    std::set<int> reached;
    for (int n : tree_nodes(work.ast, best)) reached.insert(n);
    for (const CaseTemp& t : work.temps)
        if (reached.count(t.node))
            s << "    Expr " << t.name << " = ac.subexpression(\"" << t.name << "\", "
              << dsl.text(t.node, true) << ");\n";
    s << "    Expr e = " << dsl.text(best) << ";\n";
    s << "  fields:\n";
    for (const CaseField& cf : m.fields)
        if (cf.used)
            s << "    " << cf.field.info().describe() << "  array " << shape_string(cf.shape)
              << " strides " << shape_string(cf.strides) << (cf.written ? "  [written]" : "")
              << "\n";
    Index at = cell;
    if (!now.threw.empty()) {
        s << "  threw " << now.threw << ": " << now.message << "\n";
    } else if (!now.mismatches.empty()) {
        const Mismatch& first = now.mismatches.front();
        at = first.cell;
        s << "  at cell " << shape_string(first.cell) << ": " << first.what << " ("
          << now.mismatches.size() << " value(s) differ)\n";
    }
    if (at.empty())
        s << "  (the kernel iterates no cell)\n";
    else
        s << "  inputs at cell " << shape_string(at) << ":\n" << inputs_at(m, best, at);
    try {
        if (path.compare) {
            s << "  generated C++ of the shrunk kernel:\n" << m.kernel(Target::CPU).source();
        } else if (const std::optional<Kernel> cuda = cuda_kernel(m)) {
            s << "  generated CUDA of the shrunk kernel:\n" << cuda->source();
        }
    } catch (const std::exception& e) {
        s << "  (create_kernel threw: " << e.what() << ")\n";
    }
    return report(c, path,
                  original.threw.empty() ? std::string("a wrong result")
                                         : "threw " + original.threw + ": " + original.message,
                  s.str());
}

} // namespace

std::string check_case(const StencilCase& c, const FuzzPath& path, FuzzTally& tally) {
    const Expected want = c.expected();
    FuzzTally t;
    const Outcome o = run_once(c, path, want, t);
    t.kernels = 1;
    t.expressions = static_cast<std::int64_t>(c.outputs.size());
    tally.add(t);
    if (!o.failed()) return "";
    if (o.threw.empty()) {
        for (const Mismatch& m : o.mismatches)
            if (m.output >= 0) return reproduce(c, m.output, path, o, m.cell);
        std::ostringstream s;
        for (std::size_t k = 0; k < o.mismatches.size() && k < 6; ++k)
            s << "  " << shape_string(o.mismatches[k].cell) << ": " << o.mismatches[k].what << "\n";
        return report(c, path, "stray writes", s.str() + c.describe());
    }
    // It threw: find one expression that throws alone (halving the batch), then shrink that.
    std::vector<int> outputs;
    for (std::size_t j = 0; j < c.outputs.size(); ++j) outputs.push_back(static_cast<int>(j));
    while (outputs.size() > 1) {
        const std::size_t half = outputs.size() / 2;
        const std::vector<int> first(outputs.begin(), outputs.begin() + half),
            second(outputs.begin() + half, outputs.end());
        bool narrowed = false;
        for (const std::vector<int>* part : {&first, &second}) {
            const StencilCase m = subset_case(c, *part);
            FuzzTally ignored;
            if (run_once(m, path, m.expected(), ignored).threw == o.threw) {
                outputs = *part;
                narrowed = true;
                break;
            }
        }
        if (!narrowed) break;
    }
    Index first_cell;
    for_each_index(c.shape, [&](const Index& i) {
        if (first_cell.empty() && c.iterated(i)) first_cell = i;
    });
    if (outputs.size() == 1) return reproduce(c, outputs[0], path, o, first_cell);
    return report(c, path, "threw " + o.threw + ": " + o.message,
                  "  (only the whole batch throws)\n" + c.describe());
}

} // namespace loom::stencil_test
