#include "tests/support/random_expression.hpp"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

namespace loom::stencil_test {

namespace {

constexpr RType kNumeric[] = {RType::I32, RType::I64, RType::F32, RType::F64};

const char* short_name(RType t) {
    switch (t) {
    case RType::I32: return "i32";
    case RType::I64: return "i64";
    case RType::F32: return "f32";
    case RType::F64: return "f64";
    default: return "bool";
    }
}

const char* cpp_type(RType t) {
    switch (t) {
    case RType::I32: return "std::int32_t";
    case RType::I64: return "std::int64_t";
    case RType::F32: return "float";
    case RType::F64: return "double";
    default: return "bool";
    }
}

int index_of(RType t) {
    for (int k = 0; k < 4; ++k)
        if (kNumeric[k] == t) return k;
    throw std::logic_error("not a numeric type");
}

/// Types that promote to `t` when they meet (a, b): common_rtype(a, b) == t, not both t.
std::vector<std::pair<RType, RType>> promotions_to(RType t) {
    std::vector<std::pair<RType, RType>> out;
    for (RType a : kNumeric)
        for (RType b : kNumeric)
            if (common_rtype(a, b) == t && !(a == t && b == t)) out.emplace_back(a, b);
    return out;
}

/// Types a value of type `t` may be stored from without a cast (implicit widening).
std::vector<RType> narrower_sources(RType t) {
    std::vector<RType> out;
    for (RType s : kNumeric) {
        if (s == t) continue;
        const bool ok = rt_is_float(t) ? !rt_is_float(s) || (s == RType::F32 && t == RType::F64)
                                       : rt_is_int(s) && s == RType::I32 && t == RType::I64;
        if (ok) out.push_back(s);
    }
    return out;
}

/// The spelling of a double that C++ reads back exactly as a double literal.
std::string double_literal(double v) {
    std::ostringstream s;
    s << std::setprecision(17) << v;
    std::string t = s.str();
    if (t.find_first_of(".en") == std::string::npos) t += ".0";
    return t;
}

std::string int_literal(std::int64_t v) {
    if (v == std::numeric_limits<std::int64_t>::min()) return "(-9223372036854775807LL - 1)";
    const bool wide = v > std::numeric_limits<std::int32_t>::max() ||
                      v < std::numeric_limits<std::int32_t>::min() + 1;
    std::string t = std::to_string(v) + (wide ? "LL" : "");
    return v < 0 ? "(" + t + ")" : t;
}

// ==== The generator ============================================================================

class ExpressionGenerator : public detail::Generator {
public:
    ExpressionGenerator(std::uint64_t seed, const ExpressionOptions& o)
        : Generator(seed, options_for(o)), opt_(o) {}

    StencilCase run_case() {
        max_params_ = 8; // four value parameters come first, then up to a few slice bounds
        choose_small_shape();
        choose_inputs();
        choose_params();
        choose_outputs();
        choose_temps();
        for (const Planned& p : planned_) {
            int node = gen(p.value, uniform(1, std::max(1, opt_.max_depth)));
            node = c_.ast.cast(p.store, node, /*implicit=*/true); // the store's widening
            c_.outputs.push_back({p.field, p.component, node, 0});
        }
        choose_iteration_space();
        lay_out_buffers();
        if (opt_.avoid_overflow) remove_overflows();
        c_.config.name = "random_expressions";
        const int index_choice = uniform(0, 2);
        if (index_choice == 1) c_.config.index_type = ScalarType::Int32;
        if (index_choice == 2) c_.config.index_type = ScalarType::Int64;
        // CUDA's cells per thread (the CPU ignores it): the default 4 unrolls the body four
        // times, which NVRTC pays for; one is as good a test of the source.
        const int cells = uniform(0, 9);
        c_.schedule.cells_per_thread = cells < 3 ? 0 : cells < 8 ? 1 : 2;
        for (CaseOutput& o : c_.outputs) o.operations = c_.ast.operations(o.node);
        c_.mark_used();
        rebuild_assignments(c_);
        return std::move(c_);
    }

private:
    static GeneratorOptions options_for(const ExpressionOptions& o) {
        GeneratorOptions g;
        g.counter_bounds = o.counter_bounds;
        return g;
    }

    struct Planned {
        RType store = RType::F64, value = RType::F64;
        int field = -1, component = -1;
    };
    struct Inputs {
        int scalar = -1, vector = -1, buffer = -1, param = -1;
    };

    // ---- the kernel's frame ----
    void choose_small_shape() {
        const int r = uniform(0, 99);
        c_.dims = r < 35 ? 1 : r < 70 ? 2 : r < 95 ? 3 : 4;
        c_.type = RType::F64;
        radius_ = c_.dims == 1 ? uniform(1, 3) : c_.dims == 4 ? 1 : uniform(1, 2);
        c_.fixed_shape = coin(0.1);
        // Few cells (the reference and loom's interpreter visit each): interiors of about
        // max_cells in all, plus room for the reach (and, for fixed shapes, wider ghost layers).
        const int min_size = 2 * radius_ + (c_.fixed_shape ? 6 : 2);
        const int budget = std::max(2, opt_.max_cells);
        const int extra = c_.dims == 1   ? budget
                          : c_.dims == 2 ? static_cast<int>(std::sqrt(budget))
                          : c_.dims == 3 ? static_cast<int>(std::cbrt(budget))
                                         : 1;
        c_.shape.clear();
        for (int d = 0; d < c_.dims; ++d) c_.shape.push_back(min_size + uniform(0, extra));
        reach_.assign(static_cast<std::size_t>(c_.dims), {0, 0});
    }

    void choose_inputs() {
        for (RType t : kNumeric) {
            Inputs& in = inputs_[index_of(t)];
            const std::string s = short_name(t);
            in.scalar = add_field("a_" + s, t, 0, false);
            if (coin(0.5)) in.vector = add_field("v_" + s, t, uniform(2, 3), false);
            if (coin(0.5)) in.buffer = add_buffer("w_" + s, t);
        }
    }

    int add_buffer(const std::string& name, RType t) {
        const int dims = coin(0.7) ? 1 : 2;
        Shape own;
        for (int d = 0; d < dims; ++d) own.push_back(dims == 1 ? uniform(3, 9) : uniform(2, 5));
        FieldOptions o;
        o.layout = random_layout();
        const int components = coin(0.2) ? 2 : 0;
        if (components > 0) o.index_shape = {components};
        Field f = coin(0.3) ? loom::make_field(name, to_scalar_type(t), own, o)
                            : loom::make_field(name, to_scalar_type(t), dims, o);
        CaseField cf{f,  t,  components, f.info().layout, false, false, true, {}, {}, 0, 0,
                     {}, {}, own};
        c_.fields.push_back(std::move(cf));
        return static_cast<int>(c_.fields.size()) - 1;
    }

    void choose_params() {
        for (RType t : kNumeric) {
            CaseParam p;
            p.name = std::string("p_") + short_name(t);
            p.type = t;
            if (rt_is_int(t))
                p.int_value = random_int(t);
            else
                p.value = random_float(t, /*specials=*/false);
            p.expr = param(p.name, to_scalar_type(t));
            inputs_[index_of(t)].param = static_cast<int>(c_.params.size());
            c_.params.push_back(p);
        }
    }

    void choose_outputs() {
        int count[4] = {0, 0, 0, 0};
        for (int j = 0; j < opt_.expressions; ++j) {
            Planned p;
            p.store = kNumeric[uniform(0, 3)];
            p.value = p.store;
            const std::vector<RType> narrower = narrower_sources(p.store);
            if (!narrower.empty() && coin(0.15))
                p.value = narrower[static_cast<std::size_t>(
                    uniform(0, static_cast<int>(narrower.size()) - 1))];
            p.component = count[index_of(p.store)]++;
            planned_.push_back(p);
        }
        // The first output field decides the loop order and the GPU mapping: vary it.
        int order[4] = {0, 1, 2, 3};
        std::shuffle(order, order + 4, rng_);
        int field_of[4] = {-1, -1, -1, -1};
        for (int k : order)
            if (count[k] > 0)
                field_of[k] = add_field(std::string("o_") + short_name(kNumeric[k]), kNumeric[k],
                                        count[k], true);
        for (Planned& p : planned_) p.field = field_of[index_of(p.store)];
    }

    void choose_temps() {
        const int n = uniform(0, 3);
        for (int k = 0; k < n; ++k) {
            const RType t = kNumeric[uniform(0, 3)];
            const int node = gen(t, uniform(1, 3));
            c_.temps.push_back({"t" + std::to_string(k), node});
            temps_of_[index_of(t)].push_back(node);
        }
    }

    // ---- signed overflow, on this case's data ----
    /// The integer operations that overflow at some iterated cell while their operands do not.
    std::set<int> overflowing_operations() {
        std::set<int> out;
        RefEvaluator ev(c_.ast, 2.0);
        c_.bind(ev);
        std::vector<int> nodes;
        std::set<int> seen;
        for (const CaseOutput& o : c_.outputs)
            for (int n : tree_nodes(c_.ast, o.node))
                if (seen.insert(n).second) nodes.push_back(n);
        for_each_index(c_.shape, [&](const Index& cell) {
            if (!c_.iterated(cell)) return;
            ev.cell = cell;
            ev.next();
            for (int n : nodes) {
                const RNode& x = c_.ast[n];
                const bool arith = x.op == ROp::Add || x.op == ROp::Sub || x.op == ROp::Mul ||
                                   x.op == ROp::Neg || x.op == ROp::Abs;
                if (!arith || !rt_is_int(x.type) || out.count(n)) continue;
                try {
                    bool inherited = false;
                    for (int k : c_.ast.operands(n)) inherited |= ev.eval(k).overflow();
                    if (!inherited && ev.eval(n).overflow()) out.insert(n);
                } catch (const RefUndefined&) {
                }
            }
        });
        return out;
    }

    /// The same operation without overflow for any operands: int32 computed in int64 and
    /// narrowed (the wrapped value, defined); int64 on operands divided first, by 2 (by 2^32
    /// for a product).
    int without_overflow(int n) {
        const RNode x = c_.ast[n];
        std::vector<int> ops;
        for (int k : c_.ast.operands(n)) ops.push_back(c_.ast.standalone(k));
        auto apply = [&](const std::vector<int>& a) {
            return a.size() == 1 ? c_.ast.unary(x.op, a[0]) : c_.ast.binary(x.op, a[0], a[1]);
        };
        if (x.type == RType::I32) {
            std::vector<int> wide;
            for (int k : ops) wide.push_back(c_.ast.cast(RType::I64, k));
            return c_.ast.cast(RType::I32, apply(wide));
        }
        const std::int64_t by = x.op == ROp::Mul ? std::int64_t{1} << 32 : 2;
        std::vector<int> smaller;
        for (int k : ops) smaller.push_back(c_.ast.binary(ROp::Div, k, weak_int(RType::I64, by)));
        return apply(smaller);
    }

    void remove_overflows() {
        for (int round = 0; round < 8; ++round) {
            const std::set<int> bad = overflowing_operations();
            if (bad.empty()) return;
            std::map<int, int> with;
            for (int n : bad) with[n] = without_overflow(n);
            std::map<int, int> memo;
            for (CaseOutput& o : c_.outputs) o.node = c_.ast.replaced(o.node, with, memo);
            for (CaseTemp& t : c_.temps) t.node = c_.ast.replaced(t.node, with, memo);
        }
        throw std::logic_error("the generator could not remove every signed overflow");
    }

    // ---- values ----
    std::int64_t random_int(RType t) {
        const bool i32 = t == RType::I32;
        const int r = uniform(0, 99);
        if (r < 70) return uniform(-20, 20);
        if (r < 85) return uniform(-1000, 1000);
        if (r < 93) {
            if (i32) return uniform(-(1 << 20), 1 << 20);
            const std::int64_t big = (std::int64_t{1} << 31) + uniform(0, 1 << 30);
            return coin(0.5) ? big * uniform(1, 4096) : -big;
        }
        if (i32) {
            const std::int64_t picks[] = {std::numeric_limits<std::int32_t>::max(),
                                          std::numeric_limits<std::int32_t>::min(),
                                          std::numeric_limits<std::int32_t>::min() + 1,
                                          1 << 30,
                                          -(1 << 30),
                                          46341,
                                          -46341,
                                          65536};
            return picks[uniform(0, 7)];
        }
        const std::int64_t picks[] = {std::numeric_limits<std::int64_t>::max(),
                                      std::numeric_limits<std::int64_t>::min(),
                                      std::numeric_limits<std::int64_t>::min() + 1,
                                      std::int64_t{1} << 62,
                                      -(std::int64_t{1} << 62),
                                      3037000500,
                                      std::int64_t{1} << 32,
                                      5000000000};
        return picks[uniform(0, 7)];
    }

    double random_float(RType t, bool specials) {
        const int r = uniform(0, 999);
        double v;
        if (r < 800) {
            v = (coin(0.5) ? 1.0 : -1.0) * real(0.1, 4.0);
        } else if (r < 880) {
            v = 0.5 * uniform(-6, 6); // small integers and halves, +0 included
            if (v == 0.0 && coin(0.5)) v = -0.0;
        } else if (r < 940) {
            v = (coin(0.5) ? 1.0 : -1.0) * std::pow(10.0, uniform(-8, 8)) * real(1.0, 9.9);
        } else if (r < 990 || !specials) {
            const double big = t == RType::F32 ? 1e20 : 1e30;
            const double tiny = t == RType::F32 ? 1e-40 : 1e-310; // subnormal
            const double picks[] = {big, -big, 1e-30, tiny, -tiny, 16777217.0, 0.1, 1e10};
            v = picks[uniform(0, 7)];
        } else {
            const double picks[] = {HUGE_VAL, -HUGE_VAL, std::nan("")};
            v = picks[uniform(0, 2)];
        }
        return t == RType::F32 ? static_cast<double>(static_cast<float>(v)) : v;
    }

    void fill_values(CaseField& f) override {
        const auto n = static_cast<std::size_t>(f.buffer_size);
        if (rt_is_int(f.type)) {
            f.ints.resize(n);
            for (auto& v : f.ints) v = random_int(f.type);
        } else {
            f.values.resize(n);
            for (auto& v : f.values) v = random_float(f.type, /*specials=*/true);
        }
    }

    // ---- literals ----
    std::int64_t literal_int(RType t) {
        const int r = uniform(0, 99);
        if (r < 75) return uniform(-9, 9);
        if (r < 88) return uniform(-1000, 1000);
        if (t == RType::I32) {
            const std::int64_t picks[] = {std::numeric_limits<std::int32_t>::max(),
                                          std::numeric_limits<std::int32_t>::min(), 65536, -65536,
                                          46341};
            return picks[uniform(0, 4)];
        }
        // int64 literals beyond 2^31 (defect 9 showed only with those).
        const std::int64_t picks[] = {3000000000,
                                      -3000000000,
                                      5000000000,
                                      std::int64_t{1} << 40,
                                      -(std::int64_t{1} << 40) - 7,
                                      std::numeric_limits<std::int64_t>::max(),
                                      std::numeric_limits<std::int64_t>::min() + 1,
                                      std::int64_t{1} << 62};
        return picks[uniform(0, 7)];
    }
    double literal_float() {
        if (coin(0.5)) {
            const double picks[] = {0.5, 2.0, -1.5, 0.25, 3.0, 0.1, -0.75, 1e-3, 1e3, 10.0};
            return picks[uniform(0, 9)];
        }
        return (coin(0.5) ? 1.0 : -1.0) * real(0.05, 4.0);
    }

    /// A typed constant: constant<T>(v) in the DSL.
    int strong_literal(RType t) {
        if (rt_is_int(t)) return c_.ast.const_int(t, literal_int(t));
        return c_.ast.constant(t, literal_float());
    }
    /// A plain C++ number that takes the type `t` of its partner. For an int32 partner it fits
    /// int32 (a wider one would make the partner int64: see weak_promotion).
    int weak_literal(RType t, bool allow_int_spelling = true) {
        int n;
        bool int_spelling = false;
        if (rt_is_int(t)) {
            std::int64_t v = literal_int(t);
            if (t == RType::I32) v = static_cast<std::int32_t>(v);
            n = c_.ast.const_int(t, v);
        } else if (allow_int_spelling && coin(0.2)) {
            n = c_.ast.constant(t, static_cast<double>(uniform(-9, 9)));
            int_spelling = true;
        } else {
            n = c_.ast.constant(t, literal_float());
        }
        c_.ast.nodes[static_cast<std::size_t>(n)].weak = true;
        c_.ast.nodes[static_cast<std::size_t>(n)].int_spelling = int_spelling;
        return n;
    }
    int weak_int(RType t, std::int64_t v) {
        const int n = rt_is_int(t) ? c_.ast.const_int(t, v) : c_.ast.constant(t, double(v));
        c_.ast.nodes[static_cast<std::size_t>(n)].weak = true;
        c_.ast.nodes[static_cast<std::size_t>(n)].int_spelling = rt_is_float(t);
        return n;
    }
    int weak_float(RType t, double v) {
        const int n = c_.ast.constant(t, v);
        c_.ast.nodes[static_cast<std::size_t>(n)].weak = true;
        return n;
    }

    // ---- guards: the one place that keeps generated code free of undefined behaviour ----
    /// n / d, n % d on integers: max(n, -INT_MAX) / select(d == 0, k, d).
    int guarded_division(ROp op, int n, int d) {
        n = c_.ast.standalone(n); // the guard's own plain numbers need a typed partner
        d = c_.ast.standalone(d);
        const RType t = c_.ast.type(n);
        const std::int64_t most = t == RType::I32 ? std::numeric_limits<std::int32_t>::max()
                                                  : std::numeric_limits<std::int64_t>::max();
        const int numerator = c_.ast.binary(ROp::Max, n, weak_int(t, -most));
        const std::int64_t ks[] = {1, 2, 3, -1, -2, 7};
        const int divisor = c_.ast.select(c_.ast.binary(ROp::Eq, d, weak_int(t, 0)),
                                          weak_int(t, ks[uniform(0, 5)]), d);
        return c_.ast.binary(op, numerator, divisor);
    }
    /// cast<I>(x) of a float: cast<I>(select(abs(x) < L, x, 0.5)); NaN fails the test too.
    int guarded_float_to_int(RType to, int x) {
        const RType t = c_.ast.type(x);
        const double lim = to == RType::I32 ? 1e9 : 1e18;
        const int fits = c_.ast.binary(ROp::Lt, c_.ast.unary(ROp::Abs, x), weak_float(t, lim));
        return c_.ast.cast(to, c_.ast.select(fits, x, weak_float(t, 0.5)));
    }
    /// An absolute index along an axis of `size` cells: min(max(i, 0), size - 1).
    int guarded_index(int i, std::int64_t size) {
        const RType t = c_.ast.type(i);
        return c_.ast.binary(ROp::Min, c_.ast.binary(ROp::Max, i, weak_int(t, 0)),
                             weak_int(t, size - 1));
    }

    // ---- expressions ----
    RType random_numeric() { return kNumeric[uniform(0, 3)]; }

    int gen(RType t, int depth) {
        if (t == RType::Bool) return condition(depth);
        auto& pool = pool_[index_of(t)];
        if (!pool.empty() && coin(0.06))
            return pool[static_cast<std::size_t>(uniform(0, static_cast<int>(pool.size()) - 1))];
        const int n = depth <= 0 || coin(0.15) ? leaf(t)
                      : rt_is_float(t)         ? float_op(t, depth)
                                               : int_op(t, depth);
        if (c_.ast[n].op != ROp::Const) pool.push_back(n);
        return n;
    }

    /// Two operands that meet in a binary operation of type t: mostly of type t, sometimes a
    /// plain number beside one, sometimes of types the DSL promotes to t (implicit casts).
    std::pair<int, int> operands(RType t, int depth) {
        const int r = uniform(0, 99);
        int a, b;
        if (r < 15) {
            a = gen(t, depth - 1);
            b = weak_literal(t);
        } else if (r < 32 && weak_promotion(t, depth, a, b)) {
        } else if (r < 40 && t != RType::I32) {
            const auto pairs = promotions_to(t);
            const auto [u, v] =
                pairs[static_cast<std::size_t>(uniform(0, static_cast<int>(pairs.size()) - 1))];
            a = c_.ast.cast(t, gen(u, depth - 1), true);
            b = c_.ast.cast(t, gen(v, depth - 1), true);
        } else {
            a = gen(t, depth - 1);
            b = gen(t, depth - 1);
        }
        if (coin(0.5)) std::swap(a, b);
        return {a, b};
    }
    /// The DSL's two promotions of a strong operand by a plain number: a float number makes an
    /// integer float64, an integer number beyond int32 makes an int32 int64.
    bool weak_promotion(RType t, int depth, int& a, int& b) {
        if (t == RType::F64) {
            a = c_.ast.cast(t, gen(coin(0.5) ? RType::I32 : RType::I64, depth - 1), true);
            b = weak_literal(t, /*allow_int_spelling=*/false);
            return true;
        }
        if (t == RType::I64) {
            a = c_.ast.cast(t, gen(RType::I32, depth - 1), true);
            std::int64_t v;
            do v = literal_int(RType::I64);
            while (v >= std::numeric_limits<std::int32_t>::min() &&
                   v <= std::numeric_limits<std::int32_t>::max());
            b = weak_int(t, v);
            c_.ast.nodes[static_cast<std::size_t>(b)].int_spelling = false;
            return true;
        }
        return false;
    }

    int arith(RType t, int depth) {
        // Weighted: + - * / min max % (% on floats is fmod).
        static const ROp ops[] = {ROp::Add, ROp::Add, ROp::Add, ROp::Sub, ROp::Sub,
                                  ROp::Mul, ROp::Mul, ROp::Mul, ROp::Div, ROp::Div,
                                  ROp::Min, ROp::Max, ROp::Mod};
        const ROp op = ops[uniform(0, 12)];
        if (rt_is_int(t) && (op == ROp::Div || op == ROp::Mod)) {
            const int n = overflow_free(t, depth - 1), d = overflow_free(t, depth - 1);
            return guarded_division(op, n, d);
        }
        auto [a, b] = operands(t, depth);
        return c_.ast.binary(op, a, b);
    }

    /// select(c, x, y): the branches meet as operands do (plain numbers, promotions).
    int selection(RType t, int depth) {
        const int cond = condition(depth - 1);
        const auto [x, y] = operands(t, depth);
        return c_.ast.select(cond, x, y);
    }

    /// cast<t>(x), x an integer or a float that fits t. The DSL refuses to convert a constant
    /// that does not fit (3e9 to int32): such a constant is given as the int32 it wraps to.
    int conversion_of(RType t, int x) {
        const RNode& n = c_.ast[x];
        if (t == RType::I32 && n.op == ROp::Const && rt_is_int(n.type) &&
            (n.i < std::numeric_limits<std::int32_t>::min() ||
             n.i > std::numeric_limits<std::int32_t>::max()))
            return c_.ast.const_int(t, n.i);
        return c_.ast.cast(t, x);
    }

    /// An explicit conversion to t from another type (guarded from float to integer).
    int conversion(RType t, int depth) {
        RType u;
        do u = random_numeric();
        while (u == t);
        const int x = gen(u, depth - 1);
        if (rt_is_float(u) && rt_is_int(t)) return guarded_float_to_int(t, x);
        return conversion_of(t, x);
    }

    /// An argument of a math function of type t: an integer argument of a float64 function is
    /// converted by the DSL (sqrt(int) is double, as in C++).
    /// (Not for abs, floor and ceil, which keep integers integers.)
    int math_arg(RType t, int depth) {
        if (t == RType::F64 && coin(0.15))
            return c_.ast.cast(t, gen(coin(0.5) ? RType::I32 : RType::I64, depth - 1), true);
        return gen(t, depth - 1);
    }

    int float_op(RType t, int depth) {
        const int r = uniform(0, 99);
        if (r < 30) return arith(t, depth);
        if (r < 35) return c_.ast.unary(ROp::Neg, gen(t, depth - 1));
        if (r < 39) return c_.ast.unary(ROp::Abs, gen(t, depth - 1));
        if (r < 48) return selection(t, depth);
        if (r < 56) return conversion(t, depth);
        if (r < 93) {
            static const ROp fns[] = {ROp::Sqrt, ROp::Rsqrt, ROp::Exp,  ROp::Log, ROp::Sin,
                                      ROp::Cos,  ROp::Tan,   ROp::Tanh, ROp::Erf, ROp::Floor,
                                      ROp::Ceil, ROp::Pow,   ROp::Pow,  ROp::Sqrt};
            const ROp fn = fns[uniform(0, 13)];
            if (fn == ROp::Floor || fn == ROp::Ceil) return c_.ast.unary(fn, gen(t, depth - 1));
            if (fn != ROp::Pow) return c_.ast.unary(fn, math_arg(t, depth));
            const int base = math_arg(t, depth);
            const int exponent = coin(0.35) ? weak_literal(t) : math_arg(t, depth);
            return c_.ast.binary(ROp::Pow, base, exponent);
        }
        return c_.ast.fma(math_arg(t, depth), math_arg(t, depth), math_arg(t, depth));
    }

    int int_op(RType t, int depth) {
        const int r = uniform(0, 99);
        if (r < 45) return arith(t, depth);
        if (r < 50) return c_.ast.unary(ROp::Neg, gen(t, depth - 1));
        if (r < 54) return c_.ast.unary(ROp::Abs, gen(t, depth - 1));
        if (r < 57) return c_.ast.unary(coin(0.5) ? ROp::Floor : ROp::Ceil, gen(t, depth - 1));
        if (r < 70) return selection(t, depth);
        if (r < 87) return conversion(t, depth);
        return gather(t, depth);
    }

    int condition(int depth) {
        const int r = uniform(0, 99);
        if (depth <= 0 || r < 60) {
            static const ROp ops[] = {ROp::Lt, ROp::Le, ROp::Gt, ROp::Ge, ROp::Eq, ROp::Ne};
            const RType u = random_numeric();
            auto [a, b] = depth <= 0
                              ? std::pair<int, int>{leaf(u), coin(0.3) ? weak_literal(u) : leaf(u)}
                              : operands(u, depth);
            return c_.ast.binary(ops[uniform(0, 5)], a, b);
        }
        if (r < 75)
            return c_.ast.binary(coin(0.5) ? ROp::And : ROp::Or, condition(depth - 1),
                                 condition(depth - 1));
        if (r < 85) return c_.ast.unary(ROp::Not, condition(depth - 1));
        if (r < 94)
            return c_.ast.binary(coin(0.5) ? ROp::Eq : ROp::Ne, condition(depth - 1),
                                 condition(depth - 1));
        // x == x and x != x: false and true, except for NaN.
        const int x = gen(random_numeric(), depth - 1);
        return c_.ast.binary(coin(0.5) ? ROp::Eq : ROp::Ne, x, x);
    }

    int read_input(RType t) {
        const Inputs& in = inputs_[index_of(t)];
        const int f = in.vector >= 0 && coin(0.3) ? in.vector : in.scalar;
        const CaseField& cf = c_.fields[static_cast<std::size_t>(f)];
        std::vector<int> offset;
        for (int d = 0; d < c_.dims; ++d) {
            const int o = coin(0.4) ? 0 : uniform(-radius_, radius_);
            offset.push_back(o);
            auto& reach = reach_[static_cast<std::size_t>(d)];
            reach.first = std::max(reach.first, -o);
            reach.second = std::max(reach.second, o);
        }
        return c_.ast.read(t, f, offset, cf.components > 0 ? uniform(0, cf.components - 1) : -1);
    }

    /// A read of the buffer of type t at computed (guarded) positions.
    int gather(RType t, int depth) {
        const Inputs& in = inputs_[index_of(t)];
        if (in.buffer < 0) return read_input(t);
        const CaseField& b = c_.fields[static_cast<std::size_t>(in.buffer)];
        std::vector<int> indices;
        for (std::int64_t size : b.own_shape) {
            const RType it = coin(0.5) ? RType::I32 : RType::I64;
            const int r = uniform(0, 99);
            int i;
            if (r < 35) {
                i = read_input(it); // a data-dependent gather
            } else if (r < 60) {
                i = c_.ast.cast(it, c_.ast.counter(uniform(0, c_.dims - 1)));
                if (coin(0.5)) i = c_.ast.binary(ROp::Add, i, weak_int(it, uniform(-3, 3)));
            } else if (r < 85) {
                i = overflow_free(it, std::min(depth - 1, 2));
            } else {
                i = c_.ast.const_int(it, uniform(-2, static_cast<int>(size) + 1));
            }
            indices.push_back(guarded_index(i, size));
        }
        return c_.ast.read_at(t, in.buffer, indices,
                              b.components > 0 ? uniform(0, b.components - 1) : -1);
    }

    /// An integer expression that no input can make overflow: leaves, min, max, select, casts
    /// and guarded divisions of such. Guards take these as their operands: C lets a compiler
    /// assume that signed arithmetic does not overflow, so with abs(INT_MIN) as an index, the
    /// max(i, 0) of the clamp may be optimized away (a crash this fuzzer met; -fwrapv cured it).
    int overflow_free(RType t, int depth) {
        const int r = uniform(0, 99);
        if (depth <= 0 || r < 40) {
            const Inputs& in = inputs_[index_of(t)];
            const int k = uniform(0, 99);
            if (k < 45) return read_input(t);
            if (k < 60) return c_.ast.var(t, in.param);
            if (k < 75) return strong_literal(t);
            if (k < 85) return c_.ast.cast(t, c_.ast.counter(uniform(0, c_.dims - 1)));
            return gather(t, depth);
        }
        if (r < 60)
            return c_.ast.binary(coin(0.5) ? ROp::Min : ROp::Max, overflow_free(t, depth - 1),
                                 overflow_free(t, depth - 1));
        if (r < 72)
            return c_.ast.select(condition(depth - 1), overflow_free(t, depth - 1),
                                 overflow_free(t, depth - 1));
        if (r < 88) {
            RType u;
            do u = random_numeric();
            while (u == t);
            if (rt_is_float(u)) return guarded_float_to_int(t, gen(u, depth - 1));
            return conversion_of(t, overflow_free(u, depth - 1)); // int64 -> int32: the low bits
        }
        return guarded_division(coin(0.7) ? ROp::Div : ROp::Mod, overflow_free(t, depth - 1),
                                overflow_free(t, depth - 1));
    }

    int leaf(RType t) {
        const Inputs& in = inputs_[index_of(t)];
        const int r = uniform(0, 99);
        if (r < 40) return read_input(t);
        if (r < 50) return c_.ast.var(t, in.param);
        if (r < 60) return strong_literal(t);
        if (r < 68) {
            const auto& temps = temps_of_[index_of(t)];
            if (!temps.empty())
                return temps[static_cast<std::size_t>(
                    uniform(0, static_cast<int>(temps.size()) - 1))];
            return read_input(t);
        }
        if (r < 76) return c_.ast.cast(t, c_.ast.counter(uniform(0, c_.dims - 1)));
        if (r < 88) return gather(t, 1);
        RType u;
        do u = random_numeric();
        while (u == t);
        const int x = read_input(u);
        if (rt_is_float(u) && rt_is_int(t)) return guarded_float_to_int(t, x);
        return conversion_of(t, x);
    }

    ExpressionOptions opt_;
    Inputs inputs_[4];
    std::vector<Planned> planned_;
    std::vector<int> pool_[4], temps_of_[4];
};

} // namespace

StencilCase generate_expression_case(std::uint64_t seed, const ExpressionOptions& options) {
    return ExpressionGenerator(seed, options).run_case();
}

// ==== The DSL of reference nodes ===============================================================

std::vector<int> tree_nodes(const RefAst& ast, int root) {
    std::vector<int> out, todo{root};
    std::set<int> seen;
    while (!todo.empty()) {
        const int n = todo.back();
        todo.pop_back();
        if (!seen.insert(n).second) continue;
        out.push_back(n);
        const std::vector<int> ops = ast.operands(n);
        for (auto it = ops.rbegin(); it != ops.rend(); ++it) todo.push_back(*it);
    }
    return out;
}

Expr DslBuilder::build(int node) {
    if (auto it = memo_.find(node); it != memo_.end()) return it->second;
    Expr e = make(node);
    memo_[node] = e;
    return e;
}

Expr DslBuilder::make(int node) {
    const RefAst& ast = c_.ast;
    const RNode& x = ast[node];
    auto arg = [&](int k) { return build(k); };
    auto field = [&](int slot) -> const Field& {
        return c_.fields.at(static_cast<std::size_t>(slot)).field;
    };
    Expr e;
    switch (x.op) {
    case ROp::Const:
        if (x.weak) {
            if (rt_is_int(x.type)) return Expr(x.i);
            if (x.int_spelling) return Expr(static_cast<std::int64_t>(x.f));
            return Expr(x.f);
        }
        if (x.type == RType::Bool)
            e = Expr(x.i != 0);
        else if (x.type == RType::I32)
            e = constant<std::int32_t>(static_cast<std::int32_t>(x.i));
        else if (x.type == RType::I64)
            e = constant<std::int64_t>(x.i);
        else
            e = constant(to_scalar_type(x.type), x.f);
        break;
    case ROp::Var: e = c_.params.at(static_cast<std::size_t>(x.slot)).expr; break;
    case ROp::Counter: e = ctr(x.slot); break;
    case ROp::Read: {
        Access a = field(x.slot)[x.offset];
        if (x.component >= 0) a = a(x.component);
        e = a.expr();
        break;
    }
    case ROp::ReadAt: {
        std::vector<Expr> indices;
        for (int k : ast.operands(node)) indices.push_back(arg(k));
        Access a = field(x.slot).at(indices);
        if (x.component >= 0) a = a(x.component);
        e = a.expr();
        break;
    }
    case ROp::Cast:
        if (x.implicit) return arg(x.a); // the DSL converts it where it meets its partner
        e = cast(to_scalar_type(x.type), arg(x.a));
        break;
    case ROp::Neg: e = -arg(x.a); break;
    case ROp::Not: e = !arg(x.a); break;
    case ROp::Abs: e = abs(arg(x.a)); break;
    case ROp::Sqrt: e = sqrt(arg(x.a)); break;
    case ROp::Rsqrt: e = rsqrt(arg(x.a)); break;
    case ROp::Floor: e = floor(arg(x.a)); break;
    case ROp::Ceil: e = ceil(arg(x.a)); break;
    case ROp::Exp: e = exp(arg(x.a)); break;
    case ROp::Log: e = log(arg(x.a)); break;
    case ROp::Sin: e = sin(arg(x.a)); break;
    case ROp::Cos: e = cos(arg(x.a)); break;
    case ROp::Tan: e = tan(arg(x.a)); break;
    case ROp::Tanh: e = tanh(arg(x.a)); break;
    case ROp::Erf: e = erf(arg(x.a)); break;
    case ROp::Add: e = arg(x.a) + arg(x.b); break;
    case ROp::Sub: e = arg(x.a) - arg(x.b); break;
    case ROp::Mul: e = arg(x.a) * arg(x.b); break;
    case ROp::Div: e = arg(x.a) / arg(x.b); break;
    case ROp::Mod: e = arg(x.a) % arg(x.b); break;
    case ROp::Min: e = min(arg(x.a), arg(x.b)); break;
    case ROp::Max: e = max(arg(x.a), arg(x.b)); break;
    case ROp::Pow: e = pow(arg(x.a), arg(x.b)); break;
    case ROp::Lt: e = arg(x.a) < arg(x.b); break;
    case ROp::Le: e = arg(x.a) <= arg(x.b); break;
    case ROp::Gt: e = arg(x.a) > arg(x.b); break;
    case ROp::Ge: e = arg(x.a) >= arg(x.b); break;
    case ROp::Eq: e = arg(x.a) == arg(x.b); break;
    case ROp::Ne: e = arg(x.a) != arg(x.b); break;
    case ROp::And: e = arg(x.a) && arg(x.b); break;
    case ROp::Or: e = arg(x.a) || arg(x.b); break;
    case ROp::Fma: e = fma(arg(x.a), arg(x.b), arg(x.c)); break;
    case ROp::Select: e = select(arg(x.a), arg(x.b), arg(x.c)); break;
    }
    if (e.type() != to_scalar_type(x.type))
        throw std::logic_error(std::string("the expression generator's reference types `") +
                               ast.to_string(node) + "` as " + rt_name(x.type) +
                               ", but the DSL gives " + std::string(type_name(e.type())) + ": `" +
                               to_string(e) + "`");
    return e;
}

std::string DslBuilder::text(int node, bool define) const {
    const RefAst& ast = c_.ast;
    const RNode& x = ast[node];
    if (!define)
        for (const CaseTemp& t : c_.temps)
            if (t.node == node) return t.name;
    auto arg = [&](int k) { return text(k); };
    auto call = [&](const char* fn) {
        std::string s = std::string(fn) + "(";
        const char* sep = "";
        for (int k : ast.operands(node)) s += sep + arg(k), sep = ", ";
        return s + ")";
    };
    auto infix = [&](const char* op) { return "(" + arg(x.a) + " " + op + " " + arg(x.b) + ")"; };
    std::ostringstream s;
    switch (x.op) {
    case ROp::Const:
        if (x.weak) {
            if (rt_is_int(x.type)) return int_literal(x.i);
            if (x.int_spelling) return int_literal(static_cast<std::int64_t>(x.f));
            return x.f < 0 || (x.f == 0 && std::signbit(x.f)) ? "(" + double_literal(x.f) + ")"
                                                              : double_literal(x.f);
        }
        if (x.type == RType::Bool) return x.i ? "Expr(true)" : "Expr(false)";
        if (rt_is_int(x.type))
            return std::string("constant<") + cpp_type(x.type) + ">(" + int_literal(x.i) + ")";
        return std::string("constant(ScalarType::") +
               (x.type == RType::F32 ? "Float32" : "Float64") + ", " + double_literal(x.f) + ")";
    case ROp::Var: return c_.params.at(static_cast<std::size_t>(x.slot)).name;
    case ROp::Counter: return "ctr(" + std::to_string(x.slot) + ")";
    case ROp::Read: {
        s << c_.fields.at(static_cast<std::size_t>(x.slot)).name() << "[{";
        for (std::size_t d = 0; d < x.offset.size(); ++d) s << (d ? ", " : "") << x.offset[d];
        s << "}]";
        if (x.component >= 0) s << "(" << x.component << ")";
        return s.str();
    }
    case ROp::ReadAt: {
        s << c_.fields.at(static_cast<std::size_t>(x.slot)).name() << ".at({";
        const char* sep = "";
        for (int k : ast.operands(node)) s << sep << arg(k), sep = ", ";
        s << "})";
        if (x.component >= 0) s << "(" << x.component << ")";
        return s.str();
    }
    case ROp::Cast:
        if (x.implicit) return arg(x.a);
        return std::string("cast<") + cpp_type(x.type) + ">(" + arg(x.a) + ")";
    case ROp::Neg: return "-" + arg(x.a);
    case ROp::Not: return "!" + arg(x.a);
    case ROp::Add: return infix("+");
    case ROp::Sub: return infix("-");
    case ROp::Mul: return infix("*");
    case ROp::Div: return infix("/");
    case ROp::Mod: return infix("%");
    case ROp::Lt: return infix("<");
    case ROp::Le: return infix("<=");
    case ROp::Gt: return infix(">");
    case ROp::Ge: return infix(">=");
    case ROp::Eq: return infix("==");
    case ROp::Ne: return infix("!=");
    case ROp::And: return infix("&&");
    case ROp::Or: return infix("||");
    default: return call(rop_name(x.op));
    }
}

void rebuild_assignments(StencilCase& c) {
    c.assignments = AssignmentCollection();
    DslBuilder b(c);
    std::set<int> reached;
    for (const CaseOutput& o : c.outputs)
        for (int n : tree_nodes(c.ast, o.node)) reached.insert(n);
    for (const CaseTemp& t : c.temps) {
        if (!reached.count(t.node)) continue;
        const Expr value = b.build(t.node);
        b.bind(t.node, c.assignments.subexpression(t.name, value));
    }
    for (const CaseOutput& o : c.outputs) {
        const CaseField& f = c.fields.at(static_cast<std::size_t>(o.field));
        const Access lhs = f.components > 0 ? f.field.center(o.component) : f.field.center();
        c.assignments.add(Assignment(lhs, b.build(o.node)));
    }
}

} // namespace loom::stencil_test
