// KernelConfig::default_type (issue 2): untyped parameters, untyped temporaries and the plain
// numbers nothing types. Each rule is checked on the built expression where that is what it
// says, else on the kernel create_kernel returns (its parameters and the declared types of its
// body); every CUDA kernel is compiled by NVRTC, and one kernel runs on the CPU target.
#include "compiler/ir/equality.hpp"
#include "compiler/ir/ir.hpp"
#include "compiler/ir/visitor.hpp"
#include "tests/support/nvrtc_check.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

using namespace loom;
using namespace loom::ir;

namespace {

const ScalarType F32 = ScalarType::Float32, F64 = ScalarType::Float64;

std::string show(const Expr& e) {
    return e.defined() ? to_string(e) + "  : " + std::string(type_name(e.type())) : "<undefined>";
}

testing::AssertionResult same_ir(const Expr& actual, const Expr& expected) {
    if (structurally_equal(actual, expected)) return testing::AssertionSuccess();
    return testing::AssertionFailure() << "\n  actual:   " << show(actual)
                                       << "\n  expected: " << show(expected);
}

/// Declared types of the locals (temporaries) of a kernel body, and any untyped variable left.
class BodyScan : public IRVisitor {
public:
    std::vector<std::pair<std::string, ScalarType>> declared;
    int untyped = 0;

protected:
    void visit_Declare(const DeclareNode* n) override {
        declared.emplace_back(n->var.as<VarNode>()->name, n->var.type());
        IRVisitor::visit_Declare(n);
    }
    void visit_Var(const VarNode* v) override { untyped += v->weak; }
};

std::optional<ScalarType> declared_type(const Kernel& k, const std::string& name) {
    BodyScan scan;
    scan.visit(k.ir());
    for (auto& [n, t] : scan.declared)
        if (n == name) return t;
    return std::nullopt;
}

std::optional<ScalarType> parameter_type(const Kernel& k, const std::string& name) {
    for (const KernelParam& p : k.parameters())
        if (p.role == ParamRole::Scalar && p.name == name) return p.type;
    return std::nullopt;
}

/// Compiles a CUDA kernel with NVRTC and checks that no untyped variable reached the compiler.
void check_kernel(const Kernel& k) {
    BodyScan scan;
    scan.visit(k.ir());
    EXPECT_EQ(scan.untyped, 0) << "an untyped variable reached the generated code:\n" << k.source();
    if (k.config().target == Target::CUDA) test::expect_compiles_for_sm90(k);
}

KernelConfig config(const std::string& name, ScalarType default_type) {
    KernelConfig c;
    c.name = name;
    c.default_type = default_type;
    return c;
}

} // namespace

// ---- plain numbers nothing types ----

TEST(DefaultType, IsFloat64UnlessSet) { EXPECT_EQ(KernelConfig{}.default_type, F64); }

TEST(DefaultType, LiteralOnlySubexpressionTakesIt) {
    // t meets no typed value (only a plain number in a comparison): default_type decides.
    for (ScalarType dt : {F64, F32}) {
        auto [src, dst] = fields<2>("src, dst: float64[2D]");
        AssignmentCollection ac;
        Expr t = ac.subexpression("t", 2.0 * 3.0);
        ac.add(Assignment(dst.center(), select(t > 1.0, src.center(), 0.0)));
        Kernel k = create_kernel(ac, config("literal_temp", dt));
        EXPECT_EQ(declared_type(k, "t"), dt) << k.source();
        const std::string decl = dt == F32 ? "const float t = 6.0f;" : "const double t = 6.0;";
        EXPECT_NE(k.source().find(decl), std::string::npos) << k.source();
        check_kernel(k);
    }
}

TEST(DefaultType, IntegerSubexpressionStaysInt64) {
    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    AssignmentCollection ac;
    Expr n = ac.subexpression("n", 3);
    ac.add(Assignment(dst.center(), select(n > 2, src.center(), 0.0)));
    Kernel k = create_kernel(ac, config("int_temp", F32));
    EXPECT_EQ(declared_type(k, "n"), ScalarType::Int64);
    check_kernel(k);
}

TEST(DefaultType, ComparisonOfPlainNumbersIsDoneInIt) {
    // 0.1 + 0.2 == 0.3 is false in float64 and true in float32; simplify folds the select.
    // (Expr(0.1) keeps C++ from evaluating the comparison itself.)
    auto [src, dst] = fields<2>("src, dst: float32[1D]");
    auto kernel = [&](ScalarType dt) {
        return create_kernel(Assignment(dst.center(), select(Expr(0.1) + 0.2 == 0.3, src.center(), 0.0)),
                             config("compare_literals", dt));
    };
    Kernel k64 = kernel(F64), k32 = kernel(F32);
    EXPECT_NE(k64.source().find("dst_lanes[lane] = 0.0f;"), std::string::npos) << k64.source();
    EXPECT_NE(k32.source().find("dst_lanes[lane] = src_lanes[lane];"), std::string::npos) << k32.source();
    check_kernel(k64);
    check_kernel(k32);
}

TEST(DefaultType, MustBeAFloatType) {
    auto [src, dst] = fields<2>("src, dst: float32[1D]");
    for (ScalarType t : {ScalarType::Int32, ScalarType::Int64, ScalarType::Bool, ScalarType::Float16})
        EXPECT_THROW(create_kernel(Assignment(dst.center(), src.center()), config("k", t)), UserError)
            << type_name(t);
}

TEST(DefaultType, TypedProgramsAreUnchanged) {
    // Nothing untyped: create_kernel hands the compiler the very same expressions.
    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    Expr rhs = 0.25 * (src[{1, 0}] + src[{-1, 0}]) + param<float>("a");
    Kernel a = create_kernel(Assignment(dst.center(), rhs), config("same", F64));
    Kernel b = create_kernel(Assignment(dst.center(), rhs), config("same", F32));
    EXPECT_EQ(a.source(), b.source());
    check_kernel(a);
}

// ---- untyped parameters while the expression is built ----

TEST(UntypedParam, IsWeakAndNominallyFloat64) {
    Expr omega = param("omega");
    auto v = omega.as<VarNode>();
    ASSERT_NE(v, nullptr);
    EXPECT_TRUE(v->weak);
    EXPECT_EQ(v->role, VarRole::Parameter);
    EXPECT_EQ(omega.type(), F64);
    EXPECT_FALSE(param<float>("omega").as<VarNode>()->weak); // the typed overload is untouched
    EXPECT_EQ(param<float>("omega").type(), F32);
    EXPECT_FALSE(param("omega", F32).as<VarNode>()->weak);
}

TEST(UntypedParam, AdoptsItsPartnersTypeLikeAPlainNumber) {
    Field s = field("s: float32[2D]");
    Expr S = FieldAccessNode::make(s.ptr(), {0, 0}, {});
    Expr omega = param("omega");
    // The use is recorded as Cast(float32, omega); the plain number next to it adopts float32 too.
    EXPECT_TRUE(same_ir(omega * s.center(),
                        BinaryNode::make(BinaryOp::Mul, CastNode::make(F32, omega), S)));
    Expr scaled = (omega * 2.0) * s.center();
    EXPECT_TRUE(same_ir(scaled, BinaryNode::make(BinaryOp::Mul,
                                                 BinaryNode::make(BinaryOp::Mul, CastNode::make(F32, omega),
                                                                  ConstNode::make(F32, 2.0)),
                                                 S)));
    // Next to an integer it is a float, as 0.5 is: the integer converts to float64.
    Field i = field("i: int32[2D]");
    EXPECT_EQ((omega * i.center()).type(), F64);
    // Untyped values combined stay untyped (float64 until they meet something typed).
    EXPECT_EQ((omega * 2).type(), F64);
    EXPECT_EQ((sqrt(omega) + 1).type(), F64);
}

TEST(UntypedParam, EqualityIsByObject) {
    Expr a = param("a"), a2 = param("a"), typed = param<double>("a");
    EXPECT_TRUE(structurally_equal(a, a));
    EXPECT_EQ(structural_hash(a), structural_hash(a));
    EXPECT_FALSE(structurally_equal(a, a2)); // two parameters that happen to share a name
    EXPECT_FALSE(structurally_equal(a, typed));
    EXPECT_TRUE(structurally_equal(a * 2.0, a * 2.0));
    EXPECT_FALSE(structurally_equal(a * 2.0, typed * 2.0));
}

TEST(UntypedParam, SelectBetweenPlainFloatsAdoptsToo) {
    // A select between untyped floats is untyped, so select(c, 1.0, 0.0) * f32 stays float32.
    Field s = field("s: float32[2D]");
    Expr c = s.center() > 0;
    EXPECT_EQ((select(c, 1.0, 0.0) * s.center()).type(), F32);
    EXPECT_EQ((select(c, param("p"), 0.0) * s.center()).type(), F32);
    EXPECT_EQ(select(c, 1, 0).type(), ScalarType::Int64); // integer selects stay int64
}

// ---- untyped parameters in create_kernel ----

TEST(UntypedParam, AdoptsFloat32FromAFloat32Field) {
    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    Expr omega = param("omega");
    Kernel k = create_kernel(Assignment(dst.center(), (1.0 - omega) * src.center() +
                                                          omega * src[{1, 0}]),
                             config("relax", F64));
    EXPECT_EQ(parameter_type(k, "omega"), F32);
    EXPECT_NE(k.source().find("const float omega"), std::string::npos) << k.source();
    EXPECT_EQ(k.source().find("double"), std::string::npos) << k.source();
    check_kernel(k);
}

TEST(UntypedParam, WithoutATypedUseGetsDefaultType) {
    for (ScalarType dt : {F64, F32}) {
        auto [src, dst] = fields<2>("src, dst: float32[2D]");
        Expr threshold = param("threshold");
        // Compared only with a plain number: nothing types it.
        Kernel k = create_kernel(Assignment(dst.center(), select(threshold > 0.5, src.center(), 0.0)),
                                 config("gate", dt));
        EXPECT_EQ(parameter_type(k, "threshold"), dt);
        std::string decl = std::string("const ") + (dt == F32 ? "float" : "double") + " threshold";
        EXPECT_NE(k.source().find(decl), std::string::npos) << k.source();
        check_kernel(k);
    }
}

TEST(UntypedParam, StoredIntoAFieldTakesItsType) {
    auto out = field("out: float32[1D]");
    Expr omega = param("omega");
    Kernel k = create_kernel(Assignment(out.center(), omega * 2.0), config("fill", F64));
    EXPECT_EQ(parameter_type(k, "omega"), F32);
    EXPECT_NE(k.source().find("omega * 2.0f"), std::string::npos) << k.source();
    check_kernel(k);
}

TEST(UntypedParam, UsesThatAgreeDecideTogether) {
    auto [a, b, c] = fields<3>("a, b, c: float32[2D]");
    Expr omega = param("omega");
    Kernel k = create_kernel({Assignment(b.center(), omega * a.center()),
                              Assignment(c.center(), select(omega > 1.0, a.center(), 2.0 * omega))},
                             config("agree", F64));
    EXPECT_EQ(parameter_type(k, "omega"), F32);
    EXPECT_EQ(k.source().find("double"), std::string::npos) << k.source(); // omega > 1.0f
    check_kernel(k);
}

TEST(UntypedParam, NextToAnIntegerFieldIsFloat64) {
    auto i = field("i: int32[2D]");
    auto d = field("d: float64[2D]");
    Expr scale = param("scale");
    Kernel k = create_kernel(Assignment(d.center(), scale * i.center()), config("widen", F32));
    EXPECT_EQ(parameter_type(k, "scale"), F64); // as 0.5 * int_field is float64
    check_kernel(k);
}

TEST(UntypedParam, CastGivesItAType) {
    auto d = field("d: float64[2D]");
    Expr omega = param("omega");
    Kernel k = create_kernel(Assignment(d.center(), cast<float>(omega) * 2.0), config("cast", F64));
    EXPECT_EQ(parameter_type(k, "omega"), F32);
    check_kernel(k);
}

TEST(UntypedParam, CastToAnIntegerConvertsTheDefaultTypedValue) {
    auto i = field("i: int32[1D]");
    Expr n = param("n");
    Kernel k = create_kernel(Assignment(i.center(), cast<std::int32_t>(n * 2.0)), config("to_int", F32));
    EXPECT_EQ(parameter_type(k, "n"), F32);
    EXPECT_NE(k.source().find("(int) (n * 2.0f)"), std::string::npos) << k.source();
    check_kernel(k);
}

TEST(UntypedParam, SameObjectInEveryUse) {
    auto [a, b] = fields<2>("a, b: float64[2D]");
    Expr omega = param("omega");
    Kernel k = create_kernel({Assignment(b.center(), omega * a.center() + omega)}, config("once", F32));
    ASSERT_EQ(parameter_type(k, "omega"), F64);
    int scalars = 0;
    for (auto& p : k.parameters()) scalars += p.role == ParamRole::Scalar;
    EXPECT_EQ(scalars, 1);
    check_kernel(k);
}

// ---- untyped temporaries ----

TEST(UntypedTemporary, AdoptsTheTypeOfItsUses) {
    // A subexpression of a plain number behaves like the number: float32 next to float32 data.
    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    AssignmentCollection ac;
    Expr h = ac.subexpression("h", 0.5);
    EXPECT_EQ(h.type(), F64); // nominal until create_kernel
    EXPECT_TRUE(h.as<VarNode>()->weak);
    ac.add(Assignment(dst.center(), h * (src[{1, 0}] - src[{-1, 0}])));
    Kernel k = create_kernel(ac, config("half", F64));
    EXPECT_EQ(declared_type(k, "h"), F32);
    EXPECT_NE(k.source().find("const float h = 0.5f;"), std::string::npos) << k.source();
    check_kernel(k);
}

TEST(UntypedTemporary, ItsUsesTypeTheParametersInItsValue) {
    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    Expr omega = param("omega");
    AssignmentCollection ac;
    Expr w = ac.subexpression("w", 1.0 - omega);
    ac.add(Assignment(dst.center(), w * src.center()));
    Kernel k = create_kernel(ac, config("weights", F64));
    EXPECT_EQ(declared_type(k, "w"), F32);
    EXPECT_EQ(parameter_type(k, "omega"), F32);
    check_kernel(k);
}

TEST(UntypedTemporary, UsesThatDisagreeConvertIt) {
    // Declared with default_type; each use converts it, as it would convert the plain number.
    auto [s, t] = fields<2>("s, t: float32[2D]");
    auto [d, e] = fields<2>("d, e: float64[2D]");
    AssignmentCollection ac;
    Expr c = ac.subexpression("c", 0.1);
    ac.add(Assignment(t.center(), c * s.center()));
    ac.add(Assignment(e.center(), c * d.center()));
    Kernel k = create_kernel(ac, config("mixed", F64));
    EXPECT_EQ(declared_type(k, "c"), F64);
    EXPECT_NE(k.source().find("(float) c * s_lanes[lane]"), std::string::npos) << k.source();
    check_kernel(k);
}

// ---- a kernel that runs ----

TEST(UntypedParam, CpuKernelRunsWithResolvedTypes) {
    // omega adopts float64 from src; gamma meets only a plain number and gets default_type.
    auto [src, dst] = fields<2>("src, dst: float64[2D]");
    Expr omega = param("omega"), gamma = param("gamma");
    KernelConfig cfg = config("scale_shift", F32);
    cfg.target = Target::CPU;
    Kernel kernel = create_kernel(
        Assignment(dst.center(), omega * src.center() + select(gamma > 0.5, 1.0, -1.0)), cfg);
    ASSERT_EQ(parameter_type(kernel, "omega"), F64);
    ASSERT_EQ(parameter_type(kernel, "gamma"), F32);
    check_kernel(kernel);

    KernelFunction k = kernel.compile();
    const Shape shape{5, 7};
    std::vector<double> in(35);
    for (std::size_t n = 0; n < in.size(); ++n) in[n] = 0.25 * double(n) - 3.0;
    HostArray<double> a = HostArray<double>::from_host(in, shape);
    for (float g : {0.75f, 0.25f}) {
        HostArray<double> out = HostArray<double>::zeros(shape);
        k(args("src", a, "dst", out, "omega", 2.5, "gamma", g));
        std::vector<double> got = out.to_host();
        for (std::size_t n = 0; n < in.size(); ++n)
            EXPECT_EQ(got[n], 2.5 * in[n] + (g > 0.5f ? 1.0 : -1.0)) << "element " << n << ", gamma " << g;
    }
}
