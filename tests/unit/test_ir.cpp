// IR basics: the checking make() functions, structural equality and hashing, the mutator's
// identity guarantee, and the debug printer's parenthesization.
#include "compiler/ir/equality.hpp"
#include "compiler/ir/ir.hpp"
#include "compiler/ir/printer.hpp"
#include "compiler/ir/visitor.hpp"
#include "loom/loom.hpp"
#include "tests/support/expect_error.hpp"
#include "tests/support/field_buffer.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <unordered_set>

using namespace loom;
using namespace loom::ir;

namespace {

const ScalarType F32 = ScalarType::Float32, F64 = ScalarType::Float64, I32 = ScalarType::Int32,
                 I64 = ScalarType::Int64;

Expr var(const char* name, ScalarType t = F64) {
    return VarNode::make(t, name, VarRole::Parameter);
}
Expr f64(double v) {
    return ConstNode::make(F64, v);
}
Expr i64(std::int64_t v) {
    return ConstNode::make_int(I64, v);
}
Expr bin(BinaryOp op, Expr a, Expr b) {
    return BinaryNode::make(op, std::move(a), std::move(b));
}
Expr neg(Expr a) {
    return UnaryNode::make(UnaryOp::Neg, std::move(a));
}
Expr f32(double v) {
    return ConstNode::make(F32, v);
}
Expr i32(std::int64_t v) {
    return ConstNode::make_int(I32, v);
}
ir::BufferPtr global(const Field& f) { return test::global_of(f.ptr()); }

} // namespace

// ---- make() rejects ill-typed nodes ----

TEST(IRMake, BinaryOperandTypesDiffer) {
    LOOM_EXPECT_ERROR(bin(BinaryOp::Add, var("a"), var("b", F32)), InternalError,
                      {"internal error in loom (please report this)", "ill-formed Binary node",
                       "operand types differ: float64 + float32"});
}

TEST(IRMake, BinaryLogicOnNumbers) {
    LOOM_EXPECT_ERROR(bin(BinaryOp::And, var("a"), var("b")), InternalError,
                      {"ill-formed Binary node", "logical operator on non-bool"});
}

TEST(IRMake, BinaryArithmeticOnBools) {
    Expr t = ConstNode::make_bool(true);
    LOOM_EXPECT_ERROR(bin(BinaryOp::Add, t, t), InternalError,
                      {"ill-formed Binary node", "on bool operands"});
    LOOM_EXPECT_ERROR(bin(BinaryOp::Lt, t, t), InternalError, {"on bool operands"});
}

TEST(IRMake, BinaryUndefinedOperand) {
    LOOM_EXPECT_ERROR(bin(BinaryOp::Mul, var("a"), Expr()), InternalError,
                      {"ill-formed Binary node", "undefined"});
}

TEST(IRMake, UnaryTypes) {
    LOOM_EXPECT_ERROR(UnaryNode::make(UnaryOp::Not, var("a")), InternalError,
                      {"ill-formed Unary node", "! needs a bool operand"});
    LOOM_EXPECT_ERROR(neg(ConstNode::make_bool(false)), InternalError,
                      {"ill-formed Unary node", "- needs a numeric operand"});
}

TEST(IRMake, Select) {
    Expr c = bin(BinaryOp::Lt, var("a"), var("b"));
    LOOM_EXPECT_ERROR(SelectNode::make(var("a"), var("a"), var("b")), InternalError,
                      {"ill-formed Select node", "condition is not bool"});
    LOOM_EXPECT_ERROR(SelectNode::make(c, var("a"), var("b", F32)), InternalError,
                      {"ill-formed Select node", "branch types differ"});
}

TEST(IRMake, Call) {
    LOOM_EXPECT_ERROR(CallNode::make(MathFn::Sqrt, {var("n", I32)}), InternalError,
                      {"ill-formed Call node", "sqrt on int32"});
    LOOM_EXPECT_ERROR(CallNode::make(MathFn::Pow, {var("a")}), InternalError,
                      {"ill-formed Call node", "pow takes 2 arguments"});
    LOOM_EXPECT_ERROR(CallNode::make(MathFn::Pow, {var("a"), var("b", F32)}), InternalError,
                      {"argument types differ"});
    // Abs, Floor and Ceil are also defined on integers.
    EXPECT_EQ(CallNode::make(MathFn::Abs, {var("n", I32)}).type(), I32);
}

TEST(IRMake, FieldAccessArity) {
    Field f = field("f(3): float64[2D]");
    LOOM_EXPECT_ERROR(FieldAccessNode::make(f.ptr(), {0}, {1}), InternalError,
                      {"ill-formed FieldAccess node", "offset count"});
    LOOM_EXPECT_ERROR(FieldAccessNode::make(f.ptr(), {0, 0}, {}), InternalError,
                      {"ill-formed FieldAccess node", "component count"});
    LOOM_EXPECT_ERROR(FieldAccessNode::make(nullptr, {0, 0}, {}), InternalError, {"no field"});
}

TEST(IRMake, LoadAndStore) {
    Field f = field("f: float32[2D]");
    LOOM_EXPECT_ERROR(BufferLoadNode::make(global(f), var("i")), InternalError,
                      {"ill-formed BufferLoad node", "index is not an integer"});
    LOOM_EXPECT_ERROR(BufferStoreNode::make(global(f), i64(0), var("v")), InternalError,
                      {"ill-formed BufferStore node", "storing float64 into float32 buffer f"});
    EXPECT_EQ(BufferLoadNode::make(global(f), i64(0)).type(), F32);
    LOOM_EXPECT_ERROR(BufferLoadNode::make(global(f), {i64(0), i64(1), i64(2)}), InternalError,
                      {"ill-formed BufferLoad node", "neither one linear index nor one index per axis"});
}

TEST(IRMake, Buffers) {
    Field f = field("f(3): float32[2D]");
    BufferPtr g = global(f);
    EXPECT_EQ(g->scope, Scope::Global);
    EXPECT_EQ(g->field, f.ptr());
    EXPECT_EQ(g->describe(), "float32 f[?][?][3] (global)");
    BufferPtr tile = make_buffer("t", ScalarType::Float64, Scope::Shared, {10, 34});
    EXPECT_EQ(tile->describe(), "float64 t[10][34] (shared)");
    EXPECT_EQ(to_string(tile->strides[0]), "34");
    EXPECT_EQ(tile->elements(), 340);
    EXPECT_EQ(g->elements(), -1);
    LOOM_EXPECT_ERROR(BufferLoadNode::make(tile, {i64(10), i64(0)}), InternalError,
                      {"ill-formed BufferLoad node", "constant index out of range"});
    LOOM_EXPECT_ERROR(BufferLoadNode::make(tile, i64(340)), InternalError, {"constant index out of range"});
    EXPECT_EQ(to_string(BufferLoadNode::make(tile, {i64(9), i64(33)})), "t[9, 33]");
    // Only local and shared buffers are allocated, around a body.
    Stmt use = BufferStoreNode::make(tile, i64(0), f64(1.0));
    EXPECT_EQ(to_string(AllocateNode::make(tile, use)), "alloc float64 t[10][34] (shared):\n  t[0] = 1.0\n");
    LOOM_EXPECT_ERROR(AllocateNode::make(g, use), InternalError, {"ill-formed Allocate node"});
    LOOM_EXPECT_ERROR(AllocateNode::make(make_buffer("m", F32, Scope::Fragment, {16, 8}), use), InternalError,
                      {"only local and shared buffers are allocated"});
    // A view shares its buffer's strides and names no field.
    BufferPtr v = make_view(g, "f_c");
    EXPECT_EQ(v->base, g);
    EXPECT_EQ(v->field, nullptr);
    EXPECT_EQ(v->field_of(), f.ptr().get());
    EXPECT_TRUE(v->strides[1].same_as(g->strides[1]));
}

TEST(IRMake, SplitOffsetFoldsChainsOfLiteralSums) {
    Expr x = VarNode::make(I64, "x", VarRole::Counter, nullptr, 0);
    Offset plain = split_offset(x);
    EXPECT_TRUE(plain.base.same_as(x));
    EXPECT_EQ(plain.k, 0);
    Offset chain = split_offset(bin(BinaryOp::Sub, bin(BinaryOp::Add, x, i64(1)), i64(3)));
    EXPECT_TRUE(chain.base.same_as(x));
    EXPECT_EQ(chain.k, -2);
    // Not a literal sum: the expression itself.
    Expr scaled = bin(BinaryOp::Mul, x, i64(2));
    EXPECT_TRUE(split_offset(scaled).base.same_as(scaled));
    Expr by_var = bin(BinaryOp::Add, x, VarNode::make(I64, "n", VarRole::Parameter));
    EXPECT_TRUE(split_offset(by_var).base.same_as(by_var));
}

TEST(IRMake, AStatementListAllocatesForWhatFollows) {
    BufferPtr a = make_buffer("a", F32, Scope::Local, {2});
    BufferPtr b = make_buffer("b", F32, Scope::Local, {3});
    StmtList list;
    list.add(CommentNode::make("before"));
    list.allocate(a);
    list.add(BufferStoreNode::make(a, i32(0), f32(1.0)));
    list.allocate(b);
    list.add(BufferStoreNode::make(b, i32(2), f32(2.0)));
    EXPECT_EQ(to_string(list.build()), "# before\n"
                                       "alloc float32 a[2] (local):\n"
                                       "  a[0] = 1.0f\n"
                                       "  alloc float32 b[3] (local):\n"
                                       "    b[2] = 2.0f\n");
    std::vector<BufferPtr> outer;
    Stmt inner = inside_allocations(allocate_all({a, b}, CommentNode::make("x")), outer);
    EXPECT_EQ(outer, (std::vector<BufferPtr>{a, b}));
    EXPECT_TRUE(inner.is<CommentNode>());
}

TEST(IRMake, Statements) {
    LOOM_EXPECT_ERROR(DeclareNode::make(var("t", F32), var("a")), InternalError,
                      {"ill-formed Declare node", "t declared as float32 from a float64 value"});
    LOOM_EXPECT_ERROR(DeclareNode::make(f64(1), var("a")), InternalError, {"not a variable"});
    LOOM_EXPECT_ERROR(IfThenNode::make(var("a"), CommentNode::make("x")), InternalError,
                      {"ill-formed IfThen node", "condition is not bool"});
    Expr i = VarNode::make(I64, "i", VarRole::Counter, nullptr, 0);
    LOOM_EXPECT_ERROR(
        ForNode::make(i, i64(0), ConstNode::make_int(I32, 8), i64(1), CommentNode::make("x"), 0),
        InternalError, {"ill-formed For node", "bound type differs"});
    LOOM_EXPECT_ERROR(AssignNode::make(f64(1), f64(2)), InternalError,
                      {"ill-formed Assign node", "lhs is not a field access or variable"});
    LOOM_EXPECT_ERROR(BlockNode::make({Stmt()}), InternalError, {"undefined statement"});
}

TEST(IRMake, Leaves) {
    LOOM_EXPECT_ERROR(CounterNode::make(4), InternalError, {"ill-formed Counter node", "axis 4"});
    LOOM_EXPECT_ERROR(ThreadIndexNode::make(F32, 0), InternalError, {"ill-formed ThreadIndex"});
    LOOM_EXPECT_ERROR(ThreadIndexNode::make(I32, 3), InternalError, {"ill-formed ThreadIndex"});
    LOOM_EXPECT_ERROR(VarNode::make(F64, "", VarRole::Temporary), InternalError, {"empty name"});
}

TEST(IRMake, ResultTypes) {
    EXPECT_EQ(bin(BinaryOp::Lt, var("a"), var("b")).type(), ScalarType::Bool);
    EXPECT_EQ(bin(BinaryOp::Min, var("a"), var("b")).type(), F64);
    EXPECT_EQ(CastNode::make(I32, var("a")).type(), I32);
    Expr c = bin(BinaryOp::Gt, var("a"), f64(0));
    EXPECT_EQ(SelectNode::make(c, var("x", F32), var("y", F32)).type(), F32);
}

TEST(IRMake, ConstantsAreRoundedToTheirType) {
    EXPECT_EQ(ConstNode::make(F32, 0.1).as<ConstNode>()->float_value, double(0.1f));
    EXPECT_EQ(ConstNode::make_int(I32, 0x100000001LL).as<ConstNode>()->int_value, 1);
    // make() of an int type and make_int() of a float type route to the other.
    EXPECT_EQ(ConstNode::make(I64, 2.9).as<ConstNode>()->int_value, 2);
    EXPECT_EQ(ConstNode::make_int(F64, 3).as<ConstNode>()->float_value, 3.0);
}

// ---- structural equality and hashing ----

TEST(IREquality, SeparatelyBuiltTreesAreEqual) {
    Expr a = var("a"), b = var("b");
    Expr t1 = bin(BinaryOp::Mul, bin(BinaryOp::Add, a, f64(1)), neg(b));
    Expr t2 = bin(BinaryOp::Mul, bin(BinaryOp::Add, a, f64(1)), neg(b));
    EXPECT_FALSE(t1.same_as(t2));
    EXPECT_TRUE(structurally_equal(t1, t2));
    EXPECT_EQ(structural_hash(t1), structural_hash(t2));
}

TEST(IREquality, VariablesByIdentityNotName) {
    Expr a1 = var("a"), a2 = var("a");
    EXPECT_TRUE(structurally_equal(a1, a1));
    EXPECT_FALSE(structurally_equal(a1, a2));
    EXPECT_FALSE(
        structurally_equal(bin(BinaryOp::Add, a1, f64(1)), bin(BinaryOp::Add, a2, f64(1))));
}

TEST(IREquality, FieldsByIdentity) {
    Field f1 = field("f: float64[2D]");
    Field f2 = field("f: float64[2D]");
    Expr x1 = FieldAccessNode::make(f1.ptr(), {1, 0}, {});
    EXPECT_TRUE(structurally_equal(x1, FieldAccessNode::make(f1.ptr(), {1, 0}, {})));
    EXPECT_FALSE(structurally_equal(x1, FieldAccessNode::make(f2.ptr(), {1, 0}, {})));
    EXPECT_FALSE(structurally_equal(x1, FieldAccessNode::make(f1.ptr(), {0, 1}, {})));
    EXPECT_FALSE(
        structurally_equal(BufferLoadNode::make(global(f1), i64(3)), BufferLoadNode::make(global(f2), i64(3))));
}

TEST(IREquality, Components) {
    Field u = field("u(3): float64[2D]");
    EXPECT_FALSE(structurally_equal(FieldAccessNode::make(u.ptr(), {0, 0}, {1}),
                                    FieldAccessNode::make(u.ptr(), {0, 0}, {2})));
}

TEST(IREquality, SignedZerosAreDistinct) {
    // -0.0 == 0.0 numerically, but 1/x tells them apart, so CSE must not merge them.
    EXPECT_FALSE(structurally_equal(f64(0.0), f64(-0.0)));
    EXPECT_TRUE(structurally_equal(f64(-0.0), f64(-0.0)));
}

TEST(IREquality, NaNEqualsItself) {
    // Equality is on bits, so the relation stays reflexive and usable as a hash-map key.
    double nan = std::numeric_limits<double>::quiet_NaN();
    EXPECT_TRUE(structurally_equal(f64(nan), f64(nan)));
    EXPECT_EQ(structural_hash(f64(nan)), structural_hash(f64(nan)));
}

TEST(IREquality, TypeMatters) {
    EXPECT_FALSE(structurally_equal(i64(1), ConstNode::make_int(I32, 1)));
    EXPECT_FALSE(structurally_equal(f64(0.5), ConstNode::make(F32, 0.5)));
    EXPECT_FALSE(structurally_equal(CastNode::make(F32, var("a")), CastNode::make(I32, var("a"))));
}

TEST(IREquality, OperatorAndOperandOrderMatter) {
    Expr a = var("a"), b = var("b");
    EXPECT_FALSE(structurally_equal(bin(BinaryOp::Sub, a, b), bin(BinaryOp::Sub, b, a)));
    // No canonical ordering even for commutative operators: a + b and b + a differ.
    EXPECT_FALSE(structurally_equal(bin(BinaryOp::Add, a, b), bin(BinaryOp::Add, b, a)));
    EXPECT_FALSE(structurally_equal(bin(BinaryOp::Add, a, b), bin(BinaryOp::Mul, a, b)));
    EXPECT_FALSE(
        structurally_equal(CallNode::make(MathFn::Sin, {a}), CallNode::make(MathFn::Cos, {a})));
    EXPECT_FALSE(structurally_equal(CounterNode::make(0), CounterNode::make(1)));
    EXPECT_FALSE(structurally_equal(a, Expr()));
    EXPECT_TRUE(structurally_equal(Expr(), Expr()));
}

TEST(IREquality, HashContainers) {
    Expr a = var("a");
    std::unordered_set<Expr, ExprHash, ExprEqual> set;
    set.insert(bin(BinaryOp::Add, a, f64(1)));
    set.insert(bin(BinaryOp::Add, a, f64(1)));
    set.insert(bin(BinaryOp::Add, a, f64(2)));
    set.insert(bin(BinaryOp::Add, var("a"), f64(1))); // another variable named a
    EXPECT_EQ(set.size(), 3u);
}

TEST(IREquality, Statements) {
    Field f = field("f: float64[2D]");
    Expr fa = FieldAccessNode::make(f.ptr(), {0, 0}, {});
    Expr a = var("a");
    auto body = [&](const char* comment) {
        return BlockNode::make({CommentNode::make(comment), AssignNode::make(fa, a)});
    };
    EXPECT_TRUE(structurally_equal(body("f = a"), body("f = a")));
    EXPECT_EQ(structural_hash(body("f = a")), structural_hash(body("f = a")));
    EXPECT_FALSE(structurally_equal(body("f = a"), body("f = b")));

    Expr i = VarNode::make(I64, "i", VarRole::Counter, nullptr, 0);
    Stmt s = BufferStoreNode::make(global(f), i, a);
    EXPECT_TRUE(structurally_equal(ForNode::make(i, i64(0), i64(8), i64(1), s, 0),
                                   ForNode::make(i, i64(0), i64(8), i64(1), s, 0)));
    EXPECT_FALSE(structurally_equal(ForNode::make(i, i64(0), i64(8), i64(1), s, 0),
                                    ForNode::make(i, i64(0), i64(8), i64(1), s, 1)));
    Field g = field("f: float64[2D]");
    EXPECT_FALSE(structurally_equal(s, BufferStoreNode::make(global(g), i, a)));
}

// ---- IRMutator ----

namespace {

/// Replaces one variable by another.
class Substitute : public IRMutator {
public:
    Substitute(Expr from, Expr to) : from_(std::move(from)), to_(std::move(to)) {}

protected:
    Expr visit_Var(const VarNode*, const Expr& self) override {
        return self.same_as(from_) ? to_ : self;
    }

private:
    Expr from_, to_;
};

/// Rebuilds every constant as a new but equal node.
class CopyConstants : public IRMutator {
protected:
    Expr visit_Const(const ConstNode* c, const Expr&) override {
        return Expr(std::make_shared<ConstNode>(c->type, c->int_value, c->float_value, c->weak));
    }
};

} // namespace

TEST(IRMutatorTest, UnchangedExpressionKeepsItsHandle) {
    Field f = field("f: float32[2D]");
    Expr a = var("a", F32), b = var("b", F32);
    Expr cond = bin(BinaryOp::Lt, a, b);
    Expr e =
        SelectNode::make(cond, CallNode::make(MathFn::Sqrt, {neg(a)}),
                         bin(BinaryOp::Mul, CastNode::make(F32, var("n", I32)),
                             BufferLoadNode::make(global(f), CastNode::make(I64, CounterNode::make(1)))));
    IRMutator identity;
    EXPECT_TRUE(identity.mutate(e).same_as(e));
    EXPECT_TRUE(Substitute(var("unused"), b).mutate(e).same_as(e));
}

TEST(IRMutatorTest, UnchangedStatementKeepsItsHandle) {
    Field f = field("f: float64[2D]");
    Expr i = VarNode::make(I64, "i", VarRole::Counter, nullptr, 0);
    Expr t = VarNode::make(F64, "t", VarRole::CseTemp);
    Stmt body = BlockNode::make(
        {CommentNode::make("loop"),
         ForNode::make(i, i64(0), i64(8), i64(1),
                       IfThenNode::make(bin(BinaryOp::Lt, i, i64(4)),
                                        BlockNode::make({DeclareNode::make(t, f64(2)),
                                                         BufferStoreNode::make(global(f), i, t)})),
                       0)});
    IRMutator identity;
    EXPECT_TRUE(identity.mutate(body).same_as(body));
}

TEST(IRMutatorTest, ChangeRebuildsOnlyThePath) {
    Expr a = var("a"), b = var("b"), c = var("c");
    Expr left = bin(BinaryOp::Mul, a, a);
    Expr e = bin(BinaryOp::Add, left, bin(BinaryOp::Sub, b, f64(1)));
    Expr r = Substitute(b, c).mutate(e);
    EXPECT_FALSE(r.same_as(e));
    EXPECT_TRUE(structurally_equal(r, bin(BinaryOp::Add, left, bin(BinaryOp::Sub, c, f64(1)))));
    // The untouched subtree is shared, not copied.
    EXPECT_TRUE(r.as<BinaryNode>()->a.same_as(left));
}

TEST(IRMutatorTest, NewButEqualChildrenCountAsChange) {
    // Change is detected by identity: equal copies still rebuild the parents.
    Expr e = bin(BinaryOp::Add, var("a"), f64(1));
    Expr r = CopyConstants().mutate(e);
    EXPECT_FALSE(r.same_as(e));
    EXPECT_TRUE(structurally_equal(r, e));
}

// ---- debug printer ----

TEST(IRPrinter, LeftAssociativeOperators) {
    Expr a = var("a"), b = var("b"), c = var("c");
    EXPECT_EQ(to_string(bin(BinaryOp::Sub, a, bin(BinaryOp::Sub, b, c))), "a - (b - c)");
    EXPECT_EQ(to_string(bin(BinaryOp::Sub, bin(BinaryOp::Sub, a, b), c)), "a - b - c");
    // Float addition is not associative: the grouping the IR has is the one printed.
    EXPECT_EQ(to_string(bin(BinaryOp::Add, a, bin(BinaryOp::Add, b, c))), "a + (b + c)");
    EXPECT_EQ(to_string(bin(BinaryOp::Div, a, bin(BinaryOp::Mul, b, c))), "a / (b * c)");
    EXPECT_EQ(to_string(bin(BinaryOp::Div, bin(BinaryOp::Mul, a, b), c)), "a * b / c");
}

TEST(IRPrinter, Precedence) {
    Expr a = var("a"), b = var("b"), c = var("c");
    EXPECT_EQ(to_string(bin(BinaryOp::Mul, bin(BinaryOp::Add, a, b), c)), "(a + b) * c");
    EXPECT_EQ(to_string(bin(BinaryOp::Add, a, bin(BinaryOp::Mul, b, c))), "a + b * c");
    Expr lt = bin(BinaryOp::Lt, a, b), gt = bin(BinaryOp::Gt, c, f64(0));
    EXPECT_EQ(to_string(bin(BinaryOp::And, lt, gt)), "a < b && c > 0.0");
    EXPECT_EQ(to_string(bin(BinaryOp::And, bin(BinaryOp::Or, lt, gt), lt)),
              "(a < b || c > 0.0) && a < b");
    EXPECT_EQ(to_string(bin(BinaryOp::Or, bin(BinaryOp::And, lt, gt), lt)),
              "a < b && c > 0.0 || a < b");
}

TEST(IRPrinter, Unary) {
    Expr x = var("x");
    EXPECT_EQ(to_string(neg(x)), "-x");
    EXPECT_EQ(to_string(neg(neg(x))), "-(-x)");
    EXPECT_EQ(to_string(neg(bin(BinaryOp::Add, x, f64(1)))), "-(x + 1.0)");
    EXPECT_EQ(to_string(neg(f64(-1))), "-(-1.0)");
    Expr lt = bin(BinaryOp::Lt, x, f64(0));
    EXPECT_EQ(to_string(UnaryNode::make(UnaryOp::Not, lt)), "!(x < 0.0)");
    // A negative literal as the right operand needs no parentheses in C.
    EXPECT_EQ(to_string(bin(BinaryOp::Sub, x, f64(-1))), "x - -1.0");
}

TEST(IRPrinter, SelectAsOperand) {
    Expr a = var("a"), b = var("b"), c = var("c");
    Expr sel = SelectNode::make(bin(BinaryOp::Lt, a, b), a, b);
    EXPECT_EQ(to_string(sel), "a < b ? a : b");
    EXPECT_EQ(to_string(bin(BinaryOp::Add, sel, f64(1))), "(a < b ? a : b) + 1.0");
    EXPECT_EQ(to_string(bin(BinaryOp::Mul, c, sel)), "c * (a < b ? a : b)");
    // Nested in the false branch the ternary is right-associative; elsewhere it is wrapped.
    Expr gt = bin(BinaryOp::Gt, c, f64(0));
    EXPECT_EQ(to_string(SelectNode::make(gt, c, sel)), "c > 0.0 ? c : a < b ? a : b");
    EXPECT_EQ(to_string(SelectNode::make(gt, sel, c)), "c > 0.0 ? (a < b ? a : b) : c");
}

TEST(IRPrinter, CastsCallsAndLeaves) {
    Expr a = var("a"), b = var("b");
    EXPECT_EQ(to_string(CastNode::make(F32, a)), "(float32) a");
    EXPECT_EQ(to_string(CastNode::make(F32, bin(BinaryOp::Add, a, b))), "(float32) (a + b)");
    EXPECT_EQ(to_string(bin(BinaryOp::Min, a, b)), "min(a, b)");
    EXPECT_EQ(to_string(CallNode::make(MathFn::Pow, {a, f64(2)})), "pow(a, 2.0)");
    EXPECT_EQ(to_string(CounterNode::make(0)), "x");
    EXPECT_EQ(to_string(CounterNode::make(2)), "z");
    Field u = field("u(3): float64[2D]");
    EXPECT_EQ(to_string(FieldAccessNode::make(u.ptr(), {1, -1}, {2})), "u[1, -1](2)");
}

TEST(IRPrinter, Literals) {
    EXPECT_EQ(to_string(ConstNode::make(F32, 0.5)), "0.5f");
    EXPECT_EQ(to_string(f64(2)), "2.0");
    EXPECT_EQ(to_string(i64(-3)), "-3");
    EXPECT_EQ(to_string(ConstNode::make_bool(true)), "true");
    EXPECT_EQ(format_float(0.1, F32), "0.1");
    EXPECT_EQ(format_float(1e-8, F64), "1e-08");
    EXPECT_EQ(format_float(std::numeric_limits<double>::infinity(), F64), "inf");
}

TEST(IRPrinter, Statements) {
    Field f = field("f: float64[2D]");
    Expr fa = FieldAccessNode::make(f.ptr(), {0, 0}, {});
    Stmt s = BlockNode::make({CommentNode::make("copy"), AssignNode::make(fa, var("a"))});
    EXPECT_EQ(to_string(s), "# copy\nf[0, 0] = a\n");
}
