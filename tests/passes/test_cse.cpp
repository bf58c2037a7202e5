#include "compiler/ir/equality.hpp"
#include "compiler/ir/ir.hpp"
#include "compiler/ir/printer.hpp"
#include "compiler/passes/cse.hpp"
#include "tests/support/field_buffer.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>

namespace loom {
namespace {
using namespace ir;

FieldPtr field(const char* name, ScalarType t = ScalarType::Float64, int dims = 1) {
    auto info = std::make_shared<FieldInfo>();
    info->name = name;
    info->type = t;
    info->spatial_dims = dims;
    return info;
}

Expr at(const FieldPtr& f, int offset = 0) { return FieldAccessNode::make(f, {offset}, {}); }
Expr f64(double v) { return ConstNode::make(ScalarType::Float64, v); }
Expr param(const char* name, ScalarType t = ScalarType::Float64) {
    return VarNode::make(t, name, VarRole::Parameter);
}
Expr bin(BinaryOp op, Expr a, Expr b) { return BinaryNode::make(op, a, b); }
Expr add(Expr a, Expr b) { return bin(BinaryOp::Add, a, b); }
Expr sub(Expr a, Expr b) { return bin(BinaryOp::Sub, a, b); }
Expr mul(Expr a, Expr b) { return bin(BinaryOp::Mul, a, b); }
Expr div(Expr a, Expr b) { return bin(BinaryOp::Div, a, b); }
Expr sqrt(Expr a) { return CallNode::make(MathFn::Sqrt, {a}); }
Stmt assign(Expr lhs, Expr rhs) { return AssignNode::make(lhs, rhs); }
Stmt declare(Expr var, Expr value) { return DeclareNode::make(var, value); }
Stmt comment(const char* text) { return CommentNode::make(text); }
Stmt block(std::vector<Stmt> stmts) { return BlockNode::make(std::move(stmts)); }

/// The variable of the k-th declaration CSE added to `out`.
Expr temp(const Stmt& out, int k) {
    for (const Stmt& s : out.as<BlockNode>()->stmts)
        if (auto d = s.as<DeclareNode>(); d && d->var.as<VarNode>()->role == VarRole::CseTemp)
            if (k-- == 0) return d->var;
    ADD_FAILURE() << "no CSE temp #" << k << " in\n" << out;
    return VarNode::make(ScalarType::Float64, "missing", VarRole::CseTemp);
}

std::string name_of(const Expr& var) { return var.as<VarNode>()->name; }

::testing::AssertionResult same_ir(const Stmt& got, const Stmt& expected) {
    if (structurally_equal(got, expected)) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "\ngot:\n" << got << "expected:\n" << expected;
}

const FieldPtr U = field("u"), V = field("v"), F = field("f"), G = field("g"), H = field("h"),
               K = field("k");
const Expr a = param("a"), b = param("b"), c = param("c"), d = param("d");

TEST(Cse, NothingRepeatedReturnsTheSameHandle) {
    Stmt body = block({comment("f[0] = a * u[0] + b"), assign(at(F), add(mul(a, at(U)), b)),
                       assign(at(G), sub(at(U, 1), at(U, -1)))});
    EXPECT_TRUE(eliminate_common_subexpressions(body).same_as(body));
    Stmt empty = block({});
    EXPECT_TRUE(eliminate_common_subexpressions(empty).same_as(empty));
}

TEST(Cse, TrivialRepeatsAreNotExtracted) {
    Expr x = param("x", ScalarType::Int64);
    Stmt body = block({
        assign(at(F), add(add(UnaryNode::make(UnaryOp::Neg, a), at(U, 1)),
                          CastNode::make(ScalarType::Float64, x))),
        assign(at(G), mul(mul(UnaryNode::make(UnaryOp::Neg, a), at(U, 1)),
                          CastNode::make(ScalarType::Float64, x))),
        assign(at(H), add(f64(2.0), f64(2.0))),
    });
    EXPECT_TRUE(eliminate_common_subexpressions(body).same_as(body));
}

TEST(Cse, RepeatedSumAcrossTwoAssignments) {
    Stmt body = block({assign(at(F), mul(add(a, b), c)), assign(at(G), mul(add(a, b), d))});
    Stmt out = eliminate_common_subexpressions(body);
    Expr t = temp(out, 0);
    EXPECT_EQ(name_of(t), "sum_a_b");
    EXPECT_EQ(t.type(), ScalarType::Float64);
    EXPECT_EQ(t.as<VarNode>()->role, VarRole::CseTemp);
    EXPECT_TRUE(same_ir(out, block({declare(t, add(a, b)), assign(at(F), mul(t, c)),
                                    assign(at(G), mul(t, d))})));
}

TEST(Cse, WholeRightHandSidesRepeat) {
    Stmt body = block({assign(at(F), add(mul(a, b), c)), assign(at(G), add(mul(a, b), c))});
    Stmt out = eliminate_common_subexpressions(body);
    Expr t = temp(out, 0);
    EXPECT_EQ(name_of(t), "sum_prod_c");
    EXPECT_TRUE(same_ir(out, block({declare(t, add(mul(a, b), c)), assign(at(F), t),
                                    assign(at(G), t)})));
}

TEST(Cse, LargestFirstThenNestedRepeats) {
    Stmt body = block({assign(at(F), add(mul(add(a, b), c), d)),
                       assign(at(G), sub(mul(add(a, b), c), d)),
                       assign(at(H), add(add(a, b), f64(1.0)))});
    Stmt out = eliminate_common_subexpressions(body);
    // (a + b) * c is taken first; a + b then still occurs in its definition and in h.
    Expr sum = temp(out, 0), prod = temp(out, 1);
    EXPECT_EQ(name_of(sum), "sum_a_b");
    EXPECT_EQ(name_of(prod), "prod_sum_c");
    EXPECT_TRUE(same_ir(out, block({declare(sum, add(a, b)), declare(prod, mul(sum, c)),
                                    assign(at(F), add(prod, d)), assign(at(G), sub(prod, d)),
                                    assign(at(H), add(sum, f64(1.0)))})));
}

TEST(Cse, DependenciesAreDeclaredBeforeTheFirstIndirectUse) {
    Stmt body = block({assign(at(F), mul(a, f64(2.0))),
                       assign(at(G), add(mul(add(a, b), c), f64(1.0))),
                       assign(at(H), add(mul(add(a, b), c), f64(2.0))),
                       assign(at(K), sub(add(a, b), d))});
    Stmt out = eliminate_common_subexpressions(body);
    Expr sum = temp(out, 0), prod = temp(out, 1);
    EXPECT_TRUE(same_ir(out, block({assign(at(F), mul(a, f64(2.0))), declare(sum, add(a, b)),
                                    declare(prod, mul(sum, c)),
                                    assign(at(G), add(prod, f64(1.0))),
                                    assign(at(H), add(prod, f64(2.0))),
                                    assign(at(K), sub(sum, d))})));
}

TEST(Cse, DeclarationsGoAboveTheCommentOfTheirFirstUser) {
    Expr cd = mul(c, d);
    Stmt body = block({comment("f[0] = (a + b) * c"), assign(at(F), mul(add(a, b), c)),
                       comment("g[0] = (a + b) * d + c * d * (c * d)"),
                       assign(at(G), add(mul(add(a, b), d), mul(cd, cd)))});
    Stmt out = eliminate_common_subexpressions(body);
    Expr sum = temp(out, 0), prod = temp(out, 1);
    EXPECT_EQ(name_of(prod), "prod_c_d");
    EXPECT_TRUE(same_ir(out, block({declare(sum, add(a, b)), comment("f[0] = (a + b) * c"),
                                    assign(at(F), mul(sum, c)), declare(prod, mul(c, d)),
                                    comment("g[0] = (a + b) * d + c * d * (c * d)"),
                                    assign(at(G), add(mul(sum, d), mul(prod, prod)))})));
}

TEST(Cse, TemporaryAssignedEarlierIsUsedByLaterTemps) {
    Expr t = VarNode::make(ScalarType::Float64, "t", VarRole::Temporary);
    Stmt body = block({assign(t, mul(a, b)), assign(at(F), mul(add(t, c), f64(2.0))),
                       assign(at(G), mul(add(t, c), f64(3.0)))});
    Stmt out = eliminate_common_subexpressions(body);
    Expr sum = temp(out, 0);
    EXPECT_EQ(name_of(sum), "sum_t_c");
    EXPECT_TRUE(same_ir(out, block({assign(t, mul(a, b)), declare(sum, add(t, c)),
                                    assign(at(F), mul(sum, f64(2.0))),
                                    assign(at(G), mul(sum, f64(3.0)))})));
}

TEST(Cse, WritesBetweenReadsSeparateValues) {
    // t holds another value after its second assignment: t + c is not the same value twice.
    Expr t = VarNode::make(ScalarType::Float64, "t", VarRole::Temporary);
    Stmt reassigned = block({assign(t, a), assign(at(F), mul(add(t, c), f64(2.0))),
                             assign(t, b), assign(at(G), mul(add(t, c), f64(2.0)))});
    EXPECT_TRUE(eliminate_common_subexpressions(reassigned).same_as(reassigned));
    // Likewise a field read before and after a write to it.
    Stmt rewritten = block({assign(at(G), add(mul(at(F), c), d)), assign(at(F), a),
                            assign(at(H), add(mul(at(F), c), d))});
    EXPECT_TRUE(eliminate_common_subexpressions(rewritten).same_as(rewritten));
}

TEST(Cse, Float32TempsKeepTheirType) {
    FieldPtr u32 = field("u", ScalarType::Float32), v32 = field("v", ScalarType::Float32);
    FieldPtr f32 = field("f", ScalarType::Float32), g32 = field("g", ScalarType::Float32);
    Expr s = param("s", ScalarType::Float32);
    auto norm = [&] {
        return sqrt(add(mul(at(u32), at(u32)), mul(at(v32), at(v32))));
    };
    Stmt body = block({assign(at(f32), mul(norm(), s)), assign(at(g32), div(norm(), s))});
    Stmt out = eliminate_common_subexpressions(body);
    Expr t = temp(out, 0);
    EXPECT_EQ(t.type(), ScalarType::Float32);
    EXPECT_EQ(name_of(t), "sqrt_sum");
    EXPECT_TRUE(same_ir(out, block({declare(t, norm()), assign(at(f32), mul(t, s)),
                                    assign(at(g32), div(t, s))})));
}

TEST(Cse, DeclarationsOfTheInputAreCandidatesToo) {
    Expr t = VarNode::make(ScalarType::Float64, "t", VarRole::Temporary);
    Stmt body = block({declare(t, mul(add(a, b), c)), assign(at(F), add(mul(add(a, b), c), t))});
    Stmt out = eliminate_common_subexpressions(body);
    Expr prod = temp(out, 0);
    EXPECT_TRUE(same_ir(out, block({declare(prod, mul(add(a, b), c)), declare(t, prod),
                                    assign(at(F), add(prod, t))})));
}

TEST(Cse, NamesSayWhatTheValueIs) {
    auto first_temp_name = [](Expr repeated, Expr other) {
        Stmt body =
            block({assign(at(F), add(repeated, other)), assign(at(G), sub(repeated, other))});
        return name_of(temp(eliminate_common_subexpressions(body), 0));
    };
    Expr alpha = param("alpha");
    FieldPtr S = field("src");
    EXPECT_EQ(first_temp_name(mul(alpha, at(U)), a), "prod_alpha_u");
    EXPECT_EQ(first_temp_name(add(add(at(S, -1), at(S, 0)), at(S, 1)), a), "sum_src");
    Expr t = VarNode::make(ScalarType::Float64, "t", VarRole::Temporary);
    EXPECT_EQ(first_temp_name(sqrt(t), a), "sqrt_t");
    EXPECT_EQ(first_temp_name(sqrt(f64(2.0)), a), "sqrt_val");
    EXPECT_EQ(first_temp_name(SelectNode::make(bin(BinaryOp::Lt, a, b), c, d), a), "sel_c_d");
    EXPECT_EQ(first_temp_name(CastNode::make(ScalarType::Float64,
                                             CastNode::make(ScalarType::Float32, add(a, b))),
                              a),
              "conv_conv");
    EXPECT_EQ(first_temp_name(bin(BinaryOp::Min, div(a, b), a), c), "min_quot_a");
    Expr p = bin(BinaryOp::And, bin(BinaryOp::Lt, a, b), bin(BinaryOp::Gt, c, d));
    Stmt logic = block({assign(VarNode::make(ScalarType::Bool, "p", VarRole::Temporary), p),
                        assign(VarNode::make(ScalarType::Bool, "q", VarRole::Temporary), p)});
    EXPECT_EQ(name_of(temp(eliminate_common_subexpressions(logic), 0)), "all_cmp");
}

TEST(Cse, IsDeterministic) {
    auto build = [] {
        return block({assign(at(F), add(mul(add(a, b), c), mul(add(c, d), a))),
                      assign(at(G), sub(mul(add(a, b), c), mul(add(c, d), a))),
                      assign(at(H), mul(add(c, d), add(a, b)))});
    };
    Stmt body = build();
    Stmt one = eliminate_common_subexpressions(body);
    Stmt two = eliminate_common_subexpressions(body);
    EXPECT_EQ(to_string(one), to_string(two));
    EXPECT_EQ(to_string(one), to_string(eliminate_common_subexpressions(build())));
    EXPECT_FALSE(one.same_as(body));
}

TEST(Cse, RejectsStatementsOtherThanCommentsAssignmentsAndDeclarations) {
    EXPECT_THROW(eliminate_common_subexpressions(assign(at(F), a)), InternalError);
    Stmt store = BufferStoreNode::make(test::global_of(F), ConstNode::make_int(ScalarType::Int64, 0), a);
    EXPECT_THROW(eliminate_common_subexpressions(block({store})), InternalError);
}

/// A 27-point stencil and a 10-assignment kernel with shared terms: the pipeline's budget is
/// 1 ms for each, so CSE must stay far below that.
TEST(Cse, IsFastOnStencils) {
    FieldPtr src = field("src", ScalarType::Float64, 3), dst = field("dst", ScalarType::Float64, 3);
    std::vector<Expr> weights;
    for (int k = 0; k < 4; ++k) weights.push_back(param(fmt::format("w{}", k).c_str()));
    Expr sum;
    for (int z = -1; z <= 1; ++z)
        for (int y = -1; y <= 1; ++y)
            for (int x = -1; x <= 1; ++x) {
                Expr term = mul(weights[std::abs(x) + std::abs(y) + std::abs(z)],
                                FieldAccessNode::make(src, {x, y, z}, {}));
                sum = sum.defined() ? add(sum, term) : term;
            }
    Stmt stencil = block({assign(FieldAccessNode::make(dst, {0, 0, 0}, {}), sum)});

    std::vector<Stmt> ten;
    Expr grad = sub(at(U, 1), at(U, -1)), nu = param("nu");
    for (int k = 0; k < 10; ++k) {
        Expr lhs = VarNode::make(ScalarType::Float64, fmt::format("t{}", k), VarRole::Temporary);
        Expr rhs = add(mul(mul(grad, grad), nu), sqrt(add(mul(at(V), at(V)), f64(k))));
        ten.push_back(comment("..."));
        ten.push_back(assign(lhs, rhs));
    }
    Stmt kernel = block(ten);

    using clock = std::chrono::steady_clock;
    auto time = [](const Stmt& s) {
        Stmt out;
        auto start = clock::now();
        const int reps = 20;
        for (int r = 0; r < reps; ++r) out = eliminate_common_subexpressions(s);
        return std::chrono::duration<double, std::milli>(clock::now() - start).count() / reps;
    };
    double stencil_ms = time(stencil), kernel_ms = time(kernel);
    RecordProperty("stencil_us", int(stencil_ms * 1000));
    RecordProperty("kernel_us", int(kernel_ms * 1000));
    std::printf("  cse: 27-point stencil %.1f us, 10-assignment kernel %.1f us\n",
                stencil_ms * 1000, kernel_ms * 1000);
    EXPECT_TRUE(eliminate_common_subexpressions(stencil).same_as(stencil));
    EXPECT_EQ(eliminate_common_subexpressions(kernel).as<BlockNode>()->stmts.size(), 20u + 3u);
    // Generous, to hold in unoptimized builds on a busy machine.
    EXPECT_LT(stencil_ms, 5.0);
    EXPECT_LT(kernel_ms, 5.0);
}

} // namespace
} // namespace loom

