// Property test of simplify + CSE against the test suite's own reference evaluator: random
// expression trees over variables of every type (bool, int32, int64, float32, float64), put
// into blocks of assignments, go through simplify() and eliminate_common_subexpressions(); the
// value of every output before and after must agree: integers and booleans exactly, floats
// within rounding (or both NaN). Both sides are evaluated by RefEvaluator from
// tests/support/random_stencil.hpp (float32 in float, one rounding per operation), which the
// IR is translated into here; loom's own interpreter (compiler/ir/evaluate) is never used, so a
// folding bug that the interpreter shares cannot hide.
//
// At least 10,000 blocks of 2-3 trees each per run, 3 variable bindings each; seeded
// (LOOM_PROPERTY_SEED overrides the seed) and reproducible: a failure prints the seed, the
// iteration, the IR before and after, and the variable values.
#include "compiler/ir/ir.hpp"
#include "compiler/ir/printer.hpp"
#include "compiler/passes/cse.hpp"
#include "compiler/passes/simplify.hpp"
#include "tests/support/random_stencil.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace loom {
namespace {

using namespace ir;
using stencil_test::RCands;
using stencil_test::RefAst;
using stencil_test::RefEvaluator;
using stencil_test::RefUndefined;
using stencil_test::ROp;
using stencil_test::RType;
using stencil_test::RVal;
using stencil_test::rt_is_float;
using stencil_test::to_rtype;

// ---- Translation of loom IR into the reference AST --------------------------------------------

/// Translates the expressions of a block into one RefAst. Variables become Var slots (by node
/// identity, as loom binds them); temporaries and CSE temporaries become the node of their value.
class Translator {
public:
    RefAst ast;
    std::map<const VarNode*, int> slots;      ///< free variables
    std::map<const VarNode*, int> defined;    ///< temporaries: the node of their value
    std::vector<int> declared_order;          ///< values of Declare/temporary Assign, in order

    /// The node of `e`; one node per IR node object, so shared subtrees stay shared.
    int expr(const Expr& e) {
        if (auto it = memo_.find(e.get()); it != memo_.end()) return it->second.second;
        const int n = translate(e);
        memo_[e.get()] = {e, n}; // the handle keeps the node (and so its address) alive
        return n;
    }

private:
    std::map<const ExprNode*, std::pair<Expr, int>> memo_;

    int translate(const Expr& e) {
        switch (e.kind()) {
        case ExprKind::Const: {
            auto c = e.as<ConstNode>();
            RType t = to_rtype(c->type);
            return rt_is_float(t) ? ast.constant(t, c->float_value)
                                  : ast.const_int(t, c->int_value);
        }
        case ExprKind::Var: {
            auto v = e.as<VarNode>();
            if (auto it = defined.find(v); it != defined.end()) return it->second;
            auto it = slots.find(v);
            if (it == slots.end())
                throw std::logic_error("translator: variable " + v->name +
                                       " read before its value");
            return ast.var(to_rtype(v->type), it->second);
        }
        case ExprKind::Unary: {
            auto u = e.as<UnaryNode>();
            return ast.unary(u->op == UnaryOp::Neg ? ROp::Neg : ROp::Not, expr(u->a));
        }
        case ExprKind::Binary: {
            auto b = e.as<BinaryNode>();
            static const ROp ops[] = {ROp::Add, ROp::Sub, ROp::Mul, ROp::Div, ROp::Mod,
                                      ROp::Min, ROp::Max, ROp::Eq,  ROp::Ne,  ROp::Lt,
                                      ROp::Le,  ROp::Gt,  ROp::Ge,  ROp::And, ROp::Or};
            return ast.binary(ops[static_cast<int>(b->op)], expr(b->a), expr(b->b));
        }
        case ExprKind::Select: {
            auto s = e.as<SelectNode>();
            return ast.select(expr(s->cond), expr(s->if_true), expr(s->if_false));
        }
        case ExprKind::Call: {
            auto c = e.as<CallNode>();
            switch (c->fn) {
            case MathFn::Sqrt: return ast.unary(ROp::Sqrt, expr(c->args[0]));
            case MathFn::Abs: return ast.unary(ROp::Abs, expr(c->args[0]));
            case MathFn::Floor: return ast.unary(ROp::Floor, expr(c->args[0]));
            case MathFn::Ceil: return ast.unary(ROp::Ceil, expr(c->args[0]));
            case MathFn::Exp: return ast.unary(ROp::Exp, expr(c->args[0]));
            case MathFn::Tanh: return ast.unary(ROp::Tanh, expr(c->args[0]));
            case MathFn::Fma:
                return ast.fma(expr(c->args[0]), expr(c->args[1]), expr(c->args[2]));
            default:
                throw std::logic_error("translator: no reference for " +
                                       std::string(fn_name(c->fn)));
            }
        }
        case ExprKind::Cast: {
            auto c = e.as<CastNode>();
            const int v = expr(c->value);
            RType to = to_rtype(c->type);
            if (ast.type(v) == to) {
                // A cast to the same type is a no-op; keep a node so the shapes stay honest.
                return v;
            }
            return ast.cast(to, v);
        }
        default: throw std::logic_error("translator: unexpected expression kind");
        }
    }

public:
    /// The output nodes of a block of Assign (field or temporary) and Declare statements, in
    /// order; temporaries are bound to their values as they are defined.
    std::vector<int> block(const Stmt& s) {
        std::vector<int> outputs;
        auto b = s.as<BlockNode>();
        if (!b) throw std::logic_error("translator: not a block");
        for (const Stmt& st : b->stmts) {
            if (auto d = st.as<DeclareNode>()) {
                int v = expr(d->value);
                defined[d->var.as<VarNode>()] = v;
                declared_order.push_back(v);
            } else if (auto a = st.as<AssignNode>()) {
                int v = expr(a->rhs);
                if (auto var = a->lhs.as<VarNode>()) {
                    defined[var] = v;
                    declared_order.push_back(v);
                } else {
                    outputs.push_back(v);
                }
            } else if (!st.is<CommentNode>()) {
                throw std::logic_error("translator: unexpected statement");
            }
        }
        return outputs;
    }
};

// ---- Random IR --------------------------------------------------------------------------------

constexpr ScalarType kTypes[] = {ScalarType::Bool, ScalarType::Int32, ScalarType::Int64,
                                 ScalarType::Float32, ScalarType::Float64};
int type_index(ScalarType t) {
    for (int k = 0; k < 5; ++k)
        if (kTypes[k] == t) return k;
    return 0;
}

/// Random expression trees over three variables of each type. Repeats come from a pool, so
/// x - x, select(c, a, a), min(a, a) and common subexpressions are frequent. Float divisors are
/// always guarded against zero (select(d == 0, 1, d)): simplify's x + 0.0 -> x turns a -0 into
/// +0 (IEEE: -0 + 0 == +0), which only a division by that zero can tell apart (the sign of an
/// infinity); the values compare equal otherwise. Integer divisors are guarded most of the time.
class RandomTrees {
public:
    explicit RandomTrees(std::uint64_t seed) : rng_(seed) {
        const char* names[] = {"a", "b", "c"};
        for (ScalarType t : kTypes)
            for (int k = 0; k < 3; ++k)
                vars_[type_index(t)].push_back(
                    VarNode::make(t, std::string(names[k]) + "_" + std::string(type_name(t)),
                                  VarRole::Parameter));
    }

    std::vector<Expr> all_vars() const {
        std::vector<Expr> v;
        for (const auto& vs : vars_) v.insert(v.end(), vs.begin(), vs.end());
        return v;
    }

    /// Random values of the right type for every variable.
    RVal value_for(ScalarType t) {
        RVal v;
        if (t == ScalarType::Bool) {
            v.i = coin(0.5);
        } else if (is_int(t)) {
            const int r = uniform(0, 9);
            std::int64_t x = r < 6   ? uniform(-9, 9)
                             : r < 8 ? static_cast<std::int64_t>(rng_())
                             : r < 9 ? std::numeric_limits<std::int64_t>::min()
                                     : std::numeric_limits<std::int64_t>::max();
            v.i = t == ScalarType::Int32 ? static_cast<std::int32_t>(x) : x;
        } else {
            const double picks[] = {0.0, -0.0, 1.0, -2.5, 0.1, 3.0e-310, 1e30};
            double x = coin(0.6) ? std::uniform_real_distribution<double>(-8, 8)(rng_)
                                 : picks[uniform(0, 6)];
            v.f = t == ScalarType::Float32 ? static_cast<double>(static_cast<float>(x)) : x;
        }
        return v;
    }

    void forget_pool() {
        for (auto& p : pool_) p.clear();
    }

    Expr numeric(int depth) {
        const ScalarType t = kTypes[uniform(1, 4)];
        return gen(t, depth);
    }

    Expr gen(ScalarType t, int depth) {
        auto& pool = pool_[type_index(t)];
        if (!pool.empty() && coin(0.15))
            return pool[static_cast<std::size_t>(uniform(0, static_cast<int>(pool.size()) - 1))];
        Expr e = depth <= 0 || coin(0.2) ? leaf(t)
                 : t == ScalarType::Bool ? logic(depth)
                                         : arith(t, depth);
        if (!e.is<ConstNode>()) pool.push_back(e);
        return e;
    }

private:
    int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
    bool coin(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }

    Expr leaf(ScalarType t) {
        if (t == ScalarType::Bool) return coin(0.3) ? ConstNode::make_bool(coin(0.5)) : var(t);
        if (coin(0.55)) return var(t);
        if (is_float(t)) {
            const double picks[] = {0.0, -0.0, 1.0, -1.0, 2.0, 0.5, 3.25, 0.1, -7.0, 1e20};
            return ConstNode::make(t, picks[uniform(0, 9)]);
        }
        const std::int64_t picks[] = {0, 1, -1, 2, 3, -7, 2147483647, -2147483648LL, 64};
        return ConstNode::make_int(t, picks[uniform(0, 8)]);
    }
    Expr var(ScalarType t) {
        const auto& vs = vars_[type_index(t)];
        return vs[static_cast<std::size_t>(uniform(0, static_cast<int>(vs.size()) - 1))];
    }
    Expr nonzero(const Expr& d) {
        Expr zero = is_float(d.type()) ? ConstNode::make(d.type(), 0.0)
                                       : ConstNode::make_int(d.type(), 0);
        Expr one = is_float(d.type()) ? ConstNode::make(d.type(), 1.0)
                                      : ConstNode::make_int(d.type(), 1);
        return SelectNode::make(BinaryNode::make(BinaryOp::Eq, d, zero), one, d);
    }

    Expr arith(ScalarType t, int depth) {
        auto sub = [&] { return gen(t, depth - 1); };
        const int choice = uniform(0, 17);
        if (choice < 9) {
            static const BinaryOp ops[] = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul,
                                           BinaryOp::Div, BinaryOp::Mod, BinaryOp::Min,
                                           BinaryOp::Max, BinaryOp::Add, BinaryOp::Mul};
            const BinaryOp op = ops[choice];
            Expr a = sub(), b = sub();
            // Float divisors always (see the class comment); integer ones mostly, so that some
            // trials divide by zero and are skipped as undefined.
            if ((op == BinaryOp::Div || op == BinaryOp::Mod) && (is_float(t) || coin(0.85)))
                b = nonzero(b);
            return BinaryNode::make(op, a, b);
        }
        if (choice == 9) return UnaryNode::make(UnaryOp::Neg, sub());
        if (choice == 10) return SelectNode::make(gen(ScalarType::Bool, depth - 1), sub(), sub());
        if (choice == 11 || choice == 12) {
            // A conversion: from any type; float to int only of values that fit.
            ScalarType from = kTypes[uniform(0, 4)];
            Expr v = gen(from, depth - 1);
            if (is_float(from) && is_int(t)) {
                Expr lim = ConstNode::make(from, 1e9);
                Expr fits = BinaryNode::make(BinaryOp::Lt, CallNode::make(MathFn::Abs, {v}), lim);
                v = SelectNode::make(fits, v, ConstNode::make(from, 0.5));
            }
            return CastNode::make(t, v);
        }
        if (is_int(t)) return CallNode::make(MathFn::Abs, {sub()});
        static const MathFn fns[] = {MathFn::Sqrt, MathFn::Abs,  MathFn::Floor,
                                     MathFn::Ceil, MathFn::Fma,  MathFn::Exp,
                                     MathFn::Tanh};
        const MathFn fn = fns[uniform(0, 6)];
        if (fn == MathFn::Fma) return CallNode::make(fn, {sub(), sub(), sub()});
        return CallNode::make(fn, {sub()});
    }

    Expr logic(int depth) {
        const int choice = uniform(0, 4);
        if (choice == 0) return UnaryNode::make(UnaryOp::Not, gen(ScalarType::Bool, depth - 1));
        if (choice == 1)
            return BinaryNode::make(coin(0.5) ? BinaryOp::And : BinaryOp::Or,
                                    gen(ScalarType::Bool, depth - 1),
                                    gen(ScalarType::Bool, depth - 1));
        const ScalarType t = kTypes[uniform(1, 4)];
        static const BinaryOp ops[] = {BinaryOp::Eq, BinaryOp::Ne, BinaryOp::Lt,
                                       BinaryOp::Le, BinaryOp::Gt, BinaryOp::Ge};
        return BinaryNode::make(ops[uniform(0, 5)], gen(t, depth - 1), gen(t, depth - 1));
    }

    std::mt19937_64 rng_;
    std::vector<Expr> vars_[5];
    std::vector<Expr> pool_[5];
};

FieldPtr output_field(const std::string& name, ScalarType t) {
    auto info = std::make_shared<FieldInfo>();
    info->name = name + "_" + std::string(type_name(t));
    info->type = t;
    info->spatial_dims = 1;
    return info;
}

// ---- Comparing values -------------------------------------------------------------------------

/// Integers and booleans exactly; floats within rounding of each other (the larger of the two
/// error bounds the evaluator tracks, one rounding per operation in its own type), +0 equal to
/// -0, NaN equal to NaN, infinities exactly.
bool agree(RType t, const RVal& a, const RVal& b) {
    if (!rt_is_float(t)) return a.i == b.i;
    if (std::isnan(a.f) || std::isnan(b.f)) return std::isnan(a.f) && std::isnan(b.f);
    if (a.f == b.f) return true; // +0 == -0 too
    if (std::isinf(a.f) || std::isinf(b.f)) return false;
    return std::fabs(a.f - b.f) <= std::max(a.err, b.err);
}

std::string show(RType t, const RVal& v) {
    std::ostringstream s;
    s << stencil_test::rt_name(t) << " ";
    if (rt_is_float(t))
        s << std::setprecision(17) << v.f;
    else
        s << v.i;
    return s.str();
}

std::uint64_t property_seed() {
    if (const char* s = std::getenv("LOOM_PROPERTY_SEED")) return std::strtoull(s, nullptr, 0);
    return 20261121;
}

// ---- The property -----------------------------------------------------------------------------

TEST(SimplifyCseReferenceProperty, ValuesAgreeBeforeAndAfter) {
    const std::uint64_t seed = property_seed();
    RandomTrees random(seed);
    const std::vector<Expr> vars = random.all_vars();
    std::map<ScalarType, FieldPtr> outs[3];
    for (int k = 0; k < 3; ++k)
        for (ScalarType t : kTypes) outs[k][t] = output_field("out" + std::to_string(k), t);

    constexpr int kBlocks = 10000;
    std::int64_t trees = 0, evaluations = 0, undefined = 0, simplified = 0, with_cse = 0,
                 with_temps = 0, bit_identical = 0, float_values = 0;
    for (int iter = 0; iter < kBlocks; ++iter) {
        random.forget_pool(); // shared within one block only: common subexpressions for CSE
        const int depth = 1 + iter % 6;
        std::vector<Stmt> stmts;
        // Sometimes a DSL temporary first, read by the trees below.
        Expr temp;
        if (iter % 4 == 0) {
            Expr value = random.numeric(depth);
            temp = VarNode::make(value.type(), "t", VarRole::Temporary);
            stmts.push_back(AssignNode::make(temp, value));
        }
        const int n_out = 2 + iter % 2;
        for (int k = 0; k < n_out; ++k) {
            Expr rhs = random.numeric(depth);
            if (temp.defined() && k == 0 && temp.type() != ScalarType::Bool) {
                if (is_float(rhs.type()) == is_float(temp.type()) && rhs.type() == temp.type())
                    rhs = BinaryNode::make(BinaryOp::Add, rhs, temp);
            }
            stmts.push_back(
                AssignNode::make(FieldAccessNode::make(outs[k][rhs.type()], {0}, {}), rhs));
            ++trees;
        }
        const Stmt before = BlockNode::make(stmts);
        const Stmt simple = simplify(before);
        const Stmt after = eliminate_common_subexpressions(simple);
        simplified += !simple.same_as(before);
        with_cse += !after.same_as(simple);
        with_temps += temp.defined();

        Translator tb, ta;
        std::vector<int> out_before, out_after;
        for (Translator* t : {&tb, &ta})
            for (std::size_t v = 0; v < vars.size(); ++v)
                t->slots[vars[v].as<VarNode>()] = static_cast<int>(v);
        out_before = tb.block(before);
        out_after = ta.block(after);
        ASSERT_EQ(out_before.size(), out_after.size()) << "the passes changed the outputs:\n"
                                                       << before << "after:\n" << after;

        for (int trial = 0; trial < 3; ++trial) {
            RefEvaluator eb(tb.ast, 0.0), ea(ta.ast, 0.0);
            std::vector<RVal> values;
            for (const Expr& v : vars) values.push_back(random.value_for(v.type()));
            eb.vars = ea.vars = values;
            auto describe = [&] {
                std::ostringstream s;
                s << "\n  seed " << seed << ", block " << iter << ", trial " << trial
                  << "\n  before:\n" << before << "  after simplify + CSE:\n" << after
                  << "  variables:";
                for (std::size_t v = 0; v < vars.size(); ++v)
                    s << " " << vars[v].as<VarNode>()->name << "="
                      << show(to_rtype(vars[v].type()), values[v]);
                return s.str();
            };
            // Before: the original statements in order; anything undefined (integer division
            // by zero, INT_MIN / -1) makes the whole trial undefined. Signed overflow (abs of
            // INT_MIN too) wraps on both sides, as loom's interpreter and folding do.
            std::vector<RCands> want;
            try {
                for (int d : tb.declared_order) eb.eval(d);
                for (int o : out_before) want.push_back(eb.eval(o));
            } catch (const RefUndefined&) {
                ++undefined;
                continue;
            }
            // After: every declared temporary is computed where it stands (CSE hoists them), so
            // the passes must not introduce undefined behaviour either.
            std::vector<RCands> got;
            try {
                for (int d : ta.declared_order) ea.eval(d);
                for (int o : out_after) got.push_back(ea.eval(o));
            } catch (const RefUndefined& e) {
                FAIL() << "undefined after the passes but not before (" << e.what() << ")"
                       << describe();
            }
            for (std::size_t k = 0; k < want.size(); ++k) {
                const RType t = tb.ast.type(out_before[k]);
                ASSERT_EQ(t, ta.ast.type(out_after[k])) << describe();
                const RVal& w = want[k].v[0];
                const RVal& g = got[k].v[0];
                ASSERT_TRUE(agree(t, w, g))
                    << "output " << k << ": before " << show(t, w) << ", after " << show(t, g)
                    << describe();
                ++evaluations;
                if (rt_is_float(t)) {
                    ++float_values;
                    bit_identical += w.f == g.f || (std::isnan(w.f) && std::isnan(g.f));
                }
            }
        }
    }
    std::printf("[ property ] seed %llu: %d blocks, %lld trees, %lld values compared (%lld float, "
                "%lld of them identical), %lld undefined trials skipped; simplify changed %lld "
                "blocks, CSE %lld\n",
                static_cast<unsigned long long>(seed), kBlocks, static_cast<long long>(trees),
                static_cast<long long>(evaluations), static_cast<long long>(float_values),
                static_cast<long long>(bit_identical), static_cast<long long>(undefined),
                static_cast<long long>(simplified), static_cast<long long>(with_cse));
    EXPECT_GE(trees, 10000);
    EXPECT_GT(evaluations, 3 * 10000);
    EXPECT_GT(simplified, 2000) << "the trees rarely give simplify anything to do";
    EXPECT_GT(with_cse, 1000) << "the trees rarely repeat a subexpression";
}

TEST(SimplifyCseReferenceProperty, TranslatorAndEvaluatorAgreeOnKnownValues) {
    // The harness itself: a few expressions with known values.
    Expr x = VarNode::make(ScalarType::Float32, "x", VarRole::Parameter);
    Expr n = VarNode::make(ScalarType::Int32, "n", VarRole::Parameter);
    Translator t;
    t.slots[x.as<VarNode>()] = 0;
    t.slots[n.as<VarNode>()] = 1;
    // (x + 1e8f) - 1e8f in float32 is 8 for x = 5 (floats near 1e8 are 8 apart), not 5.
    Expr big = ConstNode::make(ScalarType::Float32, 1e8);
    int e1 = t.expr(BinaryNode::make(BinaryOp::Sub, BinaryNode::make(BinaryOp::Add, x, big), big));
    // int32 wraps: n * 65536 * 65536 == 0; -7 / 2 == -3; -7 % 2 == -1.
    Expr k = ConstNode::make_int(ScalarType::Int32, 65536);
    int e2 = t.expr(BinaryNode::make(BinaryOp::Mul, BinaryNode::make(BinaryOp::Mul, n, k), k));
    int e3 = t.expr(BinaryNode::make(BinaryOp::Div, n, ConstNode::make_int(ScalarType::Int32, 2)));
    int e4 = t.expr(BinaryNode::make(BinaryOp::Mod, n, ConstNode::make_int(ScalarType::Int32, 2)));
    int e5 = t.expr(BinaryNode::make(BinaryOp::Div, n, ConstNode::make_int(ScalarType::Int32, 0)));
    RefEvaluator ev(t.ast, 0.0);
    RVal xv, nv;
    xv.f = 5.0;
    nv.i = -7;
    ev.vars = {xv, nv};
    EXPECT_EQ(ev.eval(e1).v[0].f, 8.0);
    EXPECT_EQ(ev.eval(e2).v[0].i, 0);
    EXPECT_EQ(ev.eval(e3).v[0].i, -3);
    EXPECT_EQ(ev.eval(e4).v[0].i, -1);
    EXPECT_THROW(ev.eval(e5), RefUndefined);
}

} // namespace
} // namespace loom
