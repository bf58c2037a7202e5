// The expression fuzzer itself (tests/support/random_expression.hpp, fuzz_check.hpp): the same
// seed gives the same kernel, a default run draws every operator, type and kernel shape the issue
// asks for, the guards leave nothing undefined, the DSL printed for reproducers is the DSL that
// was built, and a bug planted in loom's IR is caught and shrunk to a few nodes.
#include "tests/support/fuzz_check.hpp"
#include "tests/support/ir_interpreter.hpp"

#include "compiler/ir/ir.hpp"
#include "compiler/ir/visitor.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <regex>
#include <set>
#include <string>

namespace loom {
namespace {

using namespace loom::stencil_test;

ExpressionOptions hundred() {
    ExpressionOptions o;
    o.expressions = 100;
    return o;
}

TEST(FuzzHarness, SameSeedSameCase) {
    for (std::uint64_t seed : {std::uint64_t{3}, std::uint64_t{20261125}}) {
        const StencilCase a = generate_expression_case(seed, hundred());
        const StencilCase b = generate_expression_case(seed, hundred());
        EXPECT_EQ(a.describe(), b.describe());
        ASSERT_EQ(a.fields.size(), b.fields.size());
        for (std::size_t f = 0; f < a.fields.size(); ++f) {
            // Bit for bit (the inputs hold NaNs now and then).
            const auto& x = a.fields[f].values;
            const auto& y = b.fields[f].values;
            ASSERT_EQ(x.size(), y.size());
            if (!x.empty()) // (memcmp of an empty vector's null data is undefined)
                EXPECT_EQ(std::memcmp(x.data(), y.data(), x.size() * sizeof(double)), 0);
            EXPECT_EQ(a.fields[f].ints, b.fields[f].ints);
        }
        EXPECT_EQ(a.kernel(Target::CPU).source(), b.kernel(Target::CPU).source());
    }
    EXPECT_NE(generate_expression_case(1).describe(), generate_expression_case(2).describe());
}

TEST(FuzzHarness, ADefaultRunDrawsEveryOperatorTypeAndShape) {
    // 40 kernels (4,000 expressions), fewer than one CI shard checks.
    std::map<std::string, int> seen;
    for (std::uint64_t k = 0; k < 40; ++k) {
        const StencilCase c = generate_expression_case(20261125 + k, hundred());
        ++seen[std::to_string(c.dims) + "D"];
        ++seen[c.sliced ? "slice" : "ghost layers"];
        if (c.fixed_shape) ++seen["fixed shape"];
        if (c.schedule.cells_per_thread == 1) ++seen["one cell per thread"];
        for (const CaseField& f : c.fields) {
            if (!f.used) continue;
            ++seen[std::string(f.written ? "output " : "input ") + rt_name(f.type)];
            if (f.layout != Layout::C) ++seen["layout " + std::string(layout_name(f.layout))];
            if (!f.written && f.components > 0) ++seen["vector input"];
            if (!f.own_shape.empty()) ++seen["buffer"];
            if (f.padded) ++seen["padded"];
        }
        if (!c.temps.empty()) ++seen["subexpression"];
        std::set<int> reached;
        for (const CaseOutput& o : c.outputs)
            for (int n : tree_nodes(c.ast, o.node)) reached.insert(n);
        for (int n : reached) {
            const RNode& x = c.ast[n];
            ++seen[rop_name(x.op) + std::string(" ") + rt_name(x.type)];
            if (x.op == ROp::Cast)
                ++seen[std::string(x.implicit ? "implicit " : "cast ") + rt_name(c.ast.type(x.a)) +
                       " -> " + rt_name(x.type)];
            if (x.op == ROp::Const)
                ++seen[std::string(x.weak ? "weak " : "typed ") + rt_name(x.type)];
            if (x.op == ROp::Const && x.weak && x.int_spelling) ++seen["plain integer for a float"];
            if (x.op == ROp::Const && x.type == RType::I64 &&
                (x.i > 2147483647 || x.i < -2147483648LL))
                ++seen["int64 literal beyond 2^31"];
            if (x.op == ROp::Read && x.component >= 0) ++seen["component read"];
            if (x.op == ROp::ReadAt) ++seen["gather"];
            if (x.op == ROp::Var) ++seen["parameter"];
            if (x.op == ROp::Counter) ++seen["counter"];
        }
    }
    std::vector<std::string> want = {"1D",
                                     "2D",
                                     "3D",
                                     "slice",
                                     "ghost layers",
                                     "fixed shape",
                                     "one cell per thread",
                                     "layout fortran",
                                     "layout fzyx",
                                     "layout zyxf",
                                     "vector input",
                                     "buffer",
                                     "padded",
                                     "subexpression",
                                     "component read",
                                     "gather",
                                     "parameter",
                                     "counter",
                                     "plain integer for a float",
                                     "int64 literal beyond 2^31"};
    for (RType t : {RType::I32, RType::I64, RType::F32, RType::F64}) {
        const std::string n = rt_name(t);
        for (const char* what : {"input ", "output ", "typed ", "weak "}) want.push_back(what + n);
        for (const char* op : {"+ ", "- ", "* ", "/ ", "% ", "min ", "max ", "select ", "abs "})
            want.push_back(op + n);
        for (RType u : {RType::I32, RType::I64, RType::F32, RType::F64})
            if (u != t) want.push_back("cast " + std::string(rt_name(u)) + " -> " + n);
    }
    for (const char* fn : {"sqrt", "rsqrt", "exp", "log", "pow", "sin", "cos", "tan", "tanh", "erf",
                           "floor", "ceil", "fma"})
        for (const char* t : {" float32", " float64"}) want.push_back(fn + std::string(t));
    for (const char* op : {"<", "<=", ">", ">=", "==", "!=", "&&", "||", "!"})
        want.push_back(op + std::string(" bool"));
    for (const char* promotion :
         {"implicit int32 -> int64", "implicit int32 -> float64", "implicit int64 -> float64",
          "implicit float32 -> float64", "implicit int32 -> float32", "implicit int64 -> float32"})
        want.push_back(promotion);
    for (const std::string& w : want)
        EXPECT_GE(seen[w], 3) << "'" << w << "' appears only " << seen[w] << " times";
    std::string summary;
    for (const auto& [k, v] : seen) summary += " " + k + ": " + std::to_string(v) + ";";
    std::printf("[ coverage ] 40 kernels:%s\n", summary.c_str());
}

/// Output values of a case whose computation overflowed a signed integer.
std::int64_t overflowed_values(const StencilCase& c, const Expected& e) {
    std::int64_t n = 0;
    for (const Expected::Buffer& b : e.buffers)
        for (std::size_t p = 0; p < b.values.size(); ++p)
            n += b.written[p] && !b.undefined[p] && b.values[p].overflow();
    (void)c;
    return n;
}

TEST(FuzzHarness, TheGuardsLeaveNothingUndefined) {
    // Every integer division, float-to-int conversion and gather is guarded; the reference
    // would throw RefUndefined (and count it) for any that is not. With avoid_overflow, no
    // signed operation overflows on the case's data either (without it, some do).
    std::int64_t values = 0, overflowed = 0, overflowed_avoided = 0;
    ExpressionOptions avoiding = hundred();
    avoiding.avoid_overflow = true;
    for (std::uint64_t k = 0; k < 60; ++k) {
        const StencilCase c = generate_expression_case(7000 + k, hundred());
        const Expected e = c.expected();
        EXPECT_EQ(e.cells_undefined, 0) << "seed " << c.seed;
        values += e.cells_written;
        overflowed += overflowed_values(c, e);
        const StencilCase d = generate_expression_case(7000 + k, avoiding);
        const Expected f = d.expected();
        EXPECT_EQ(f.cells_undefined, 0) << "seed " << d.seed;
        overflowed_avoided += overflowed_values(d, f);
    }
    EXPECT_GT(values, 60 * 100 * 5);
    EXPECT_GT(overflowed, 100);
    EXPECT_EQ(overflowed_avoided, 0);
}

/// A 1D case to build known expressions in (fields a_i32, a_f32, ..., parameters p_i64, ...).
StencilCase a_1d_case() {
    for (std::uint64_t seed = 1;; ++seed) {
        StencilCase c = generate_expression_case(seed, hundred());
        if (c.dims == 1) return c;
    }
}

int field_slot(const StencilCase& c, const std::string& name) {
    for (std::size_t f = 0; f < c.fields.size(); ++f)
        if (c.fields[f].name() == name) return static_cast<int>(f);
    ADD_FAILURE() << "no field " << name;
    return 0;
}
int param_slot(const StencilCase& c, const std::string& name) {
    for (std::size_t p = 0; p < c.params.size(); ++p)
        if (c.params[p].name == name) return static_cast<int>(p);
    ADD_FAILURE() << "no parameter " << name;
    return 0;
}

TEST(FuzzHarness, ReproducerDslIsTheDslThatWasBuilt) {
    StencilCase c = a_1d_case();
    RefAst& ast = c.ast;
    // select(a_i32[{1}] < 3, cast<float>(p_i64), 2.5) * a_f32[{-1}]: a plain 3 and 2.5, typed
    // by their partners, and an explicit cast.
    const int three = ast.const_int(RType::I32, 3);
    ast.nodes[static_cast<std::size_t>(three)].weak = true;
    const int two_and_a_half = ast.constant(RType::F32, 2.5);
    ast.nodes[static_cast<std::size_t>(two_and_a_half)].weak = true;
    const int cond =
        ast.binary(ROp::Lt, ast.read(RType::I32, field_slot(c, "a_i32"), {1}, -1), three);
    const int pick = ast.select(
        cond, ast.cast(RType::F32, ast.var(RType::I64, param_slot(c, "p_i64"))), two_and_a_half);
    const int e =
        ast.binary(ROp::Mul, pick, ast.read(RType::F32, field_slot(c, "a_f32"), {-1}, -1));
    DslBuilder b(c);
    EXPECT_EQ(b.text(e), "(select((a_i32[{1}] < 3), cast<float>(p_i64), 2.5) * a_f32[{-1}])");
    const Field& a_i32 = c.fields[static_cast<std::size_t>(field_slot(c, "a_i32"))].field;
    const Field& a_f32 = c.fields[static_cast<std::size_t>(field_slot(c, "a_f32"))].field;
    const Expr p_i64 = c.params[static_cast<std::size_t>(param_slot(c, "p_i64"))].expr;
    const Expr direct = select(a_i32[{1}] < 3, cast<float>(p_i64), 2.5) * a_f32[{-1}];
    EXPECT_EQ(to_string(b.build(e)), to_string(direct));
}

TEST(FuzzHarness, TheDslBuilderRefusesAReferenceThatTypesOtherwise) {
    // The reference claims int32 + int32 promotes to int64 (as if both sides were converted);
    // the DSL keeps int32. A generator that drifted from loom's typing rules fails loudly.
    StencilCase c = a_1d_case();
    const int a = c.ast.read(RType::I32, field_slot(c, "a_i32"), {0}, -1);
    const int wrong = c.ast.binary(ROp::Add, c.ast.cast(RType::I64, a, /*implicit=*/true),
                                   c.ast.cast(RType::I64, a, /*implicit=*/true));
    DslBuilder b(c);
    try {
        b.build(wrong);
        ADD_FAILURE() << "built without noticing";
    } catch (const std::logic_error& e) {
        EXPECT_NE(std::string(e.what()).find("as int64, but the DSL gives int32"),
                  std::string::npos)
            << e.what();
    }
}

/// loom's CPU IR with one operation changed everywhere, run by the interpreter: a planted bug.
struct PlantedBug : ir::IRMutator {
    ir::BinaryOp from, to;
    ScalarType type;
    PlantedBug(ir::BinaryOp f, ir::BinaryOp t, ScalarType ty) : from(f), to(t), type(ty) {}
    Expr visit_Binary(const ir::BinaryNode* n, const Expr& self) override {
        Expr e = ir::IRMutator::visit_Binary(n, self);
        auto b = e.as<ir::BinaryNode>();
        if (b->op == from && b->type == type) return ir::BinaryNode::make(to, b->a, b->b);
        return e;
    }
};

FuzzPath with_planted_bug(ir::BinaryOp from, ir::BinaryOp to, ScalarType type) {
    FuzzPath path = interpreter_path();
    path.name = "a planted bug";
    path.rerun = "(a planted bug)";
    path.run = [=](const StencilCase& c, HostBuffers& b) {
        const Kernel k = c.kernel(Target::CPU);
        PlantedBug bug(from, to, type);
        interpret_case_body(c, b, bug.mutate(k.ir()), k.parameters());
    };
    return path;
}

/// The first failure of `path` in the first `kernels` kernels, or "".
std::string first_failure(const FuzzPath& path, int kernels) {
    FuzzTally tally;
    for (int k = 0; k < kernels; ++k) {
        const std::string f = check_case(generate_expression_case(900 + k, hundred()), path, tally);
        if (!f.empty()) return f;
    }
    return "";
}

/// The node count the reproducer says the expression was shrunk to (-1 if it does not say).
int shrunk_to(const std::string& report) {
    std::smatch m;
    if (!std::regex_search(report, m, std::regex("shrunk from [0-9]+ to ([0-9]+) nodes")))
        return -1;
    return std::stoi(m[1]);
}

TEST(FuzzHarness, APlantedBugIsCaughtAndShrunkToAFewNodes) {
    for (auto [from, to, type] :
         {std::tuple{ir::BinaryOp::Sub, ir::BinaryOp::Add, ScalarType::Float32},
          std::tuple{ir::BinaryOp::Mod, ir::BinaryOp::Div, ScalarType::Int32},
          std::tuple{ir::BinaryOp::Lt, ir::BinaryOp::Le, ScalarType::Bool}}) {
        // (A comparison's type is bool: < becomes <= for every operand type.)
        const std::string report = first_failure(with_planted_bug(from, to, type), 30);
        ASSERT_FALSE(report.empty()) << "the bug " << ir::op_name(from) << " -> " << ir::op_name(to)
                                     << " went unnoticed in 3,000 expressions";
        for (const char* part : {"==== fuzz failure: a planted bug", "rerun: LOOM_FUZZ_SEED=",
                                 "Expr e = ", "inputs at cell", "expected", "got "})
            EXPECT_NE(report.find(part), std::string::npos) << part << " missing in" << report;
        const int nodes = shrunk_to(report);
        EXPECT_GE(nodes, 2) << report;
        EXPECT_LE(nodes, 10) << report;
    }
}

TEST(FuzzHarness, AThrowingKernelIsNarrowedToTheExpressionThatThrows) {
    // A path that refuses every kernel with a pow in it: the batch throws, halving finds one
    // expression that throws alone, and shrinking keeps the pow and little else.
    FuzzPath path = interpreter_path();
    path.name = "a planted refusal";
    path.rerun = "(a planted refusal)";
    path.run = [](const StencilCase& c, HostBuffers& b) {
        for (const CaseOutput& o : c.outputs)
            for (int n : tree_nodes(c.ast, o.node))
                if (c.ast[n].op == ROp::Pow) throw UserError("planted: no pow");
        run_with_interpreter(c, b);
    };
    FuzzTally tally;
    const std::string report = check_case(generate_expression_case(5, hundred()), path, tally);
    ASSERT_FALSE(report.empty());
    EXPECT_NE(report.find("threw UserError: planted: no pow"), std::string::npos) << report;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(report, m, std::regex("Expr e = (.*);"))) << report;
    EXPECT_NE(m[1].str().find("pow("), std::string::npos) << report;
    EXPECT_LE(shrunk_to(report), 5) << report; // pow(x, y), x and y maybe converted
}

TEST(FuzzHarness, TheInterpreterRunsAKernelAsALoopWould) {
    // out[i] = a[i - 1] - 2 * a[i + 1] on the interior of 10 cells, against a hand loop.
    auto [a, out] = fields<2>("a, out: float64[1D]");
    const Kernel k = create_kernel(Assignment(out.center(), a[{-1}] - 2.0 * a[{1}]), [] {
        KernelConfig c;
        c.target = Target::CPU;
        c.name = "interpreted";
        return c;
    }());
    std::vector<double> in(10), got(10, -99.0);
    for (int i = 0; i < 10; ++i) in[static_cast<std::size_t>(i)] = 0.5 + 1.25 * i * i;
    std::map<std::string, test::InterpretedArray> arrays = {
        {"a", {ScalarType::Float64, in.data(), {10}, {1}}},
        {"out", {ScalarType::Float64, got.data(), {10}, {1}}}};
    test::interpret_kernel(k, {10}, arrays, {});
    for (std::size_t i = 0; i < 10; ++i)
        EXPECT_EQ(got[i], i == 0 || i == 9 ? -99.0 : in[i - 1] - 2.0 * in[i + 1]) << i;
    // Arrays too short for the loop: the interpreter refuses to read past them.
    arrays.at("a").shape = {5};
    arrays.at("out").shape = {5};
    EXPECT_THROW(test::interpret_kernel(k, {10}, arrays, {}), std::logic_error);
}

} // namespace
} // namespace loom
