// The value handles Expr and Stmt that the DSL hands around, and just enough of the IR behind
// them to make the handles complete types. The node structs themselves, the passes and everything
// else of the compiler live in namespace loom::ir, which `using namespace loom` does not pull in;
// only the library's own headers (compiler/ir/ir.hpp) define them.
#pragma once

#include <loom/types.hpp>

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <type_traits>

// clang-format off
#define LOOM_FOR_EACH_EXPR_NODE(X) \
    X(Const) X(Var) X(Counter) X(FieldAccess) X(ThreadIndex) X(BlockThread) \
    X(BufferLoad) X(Unary) X(Binary) X(Select) X(Call) X(Cast) X(Reduce) X(WarpReduce)
#define LOOM_FOR_EACH_STMT_NODE(X) \
    X(Assign) X(Declare) X(BufferStore) X(Allocate) X(Barrier) X(Block) X(For) \
    X(IfThen) X(Comment) X(Dense) X(Stage) X(VectorLoad) X(VectorStore) X(BasePointer) \
    X(LastBlock) X(MmaChain)
// clang-format on

namespace loom {

/// The deepest expression the DSL builds: a leaf (a field access, a number, a parameter) has depth
/// 1 and every operation adds one to its deepest operand's, so `a + b + c + d` written left to
/// right has depth 4. An operation that would go deeper throws UserError. The compiler's passes
/// and printers recurse once per level, with up to about 380 bytes of stack each (500 in an
/// unoptimized build), so at this depth create_kernel and to_string need about 400 KB of stack
/// (destruction needs none): safe on threads with small stacks, such as 1 MiB or macOS's
/// 512 KiB (tests/unit/test_deep_expressions.cpp measures it). Long sums stay far below it when
/// added as a balanced tree with loom::sum(terms); long formulas can be split into several
/// assignments through temporaries.
inline constexpr int max_expression_depth = 1000;

class Expr;

namespace ir {
enum class ExprKind : std::uint8_t {
#define LOOM_X(N) N,
    LOOM_FOR_EACH_EXPR_NODE(LOOM_X)
#undef LOOM_X
};
enum class StmtKind : std::uint8_t {
#define LOOM_X(N) N,
    LOOM_FOR_EACH_STMT_NODE(LOOM_X)
#undef LOOM_X
};

/// The depth that nodes built by the compiler may reach beyond max_expression_depth: its passes
/// add a few levels to what the DSL built (implicit casts, the index arithmetic of loads).
inline constexpr int compiler_depth_headroom = 64;
/// Throws UserError: `what` would build an expression of depth `depth` (> the limit).
[[noreturn]] void throw_too_deep(int depth, const char* what);

struct ExprNode {
    /// `depth` is 1 for a leaf, else 1 + the deepest operand's (see max_expression_depth).
    ExprNode(ExprKind k, ScalarType t, int depth = 1) : kind(k), type(t), depth(depth) {
        if (depth > max_expression_depth + compiler_depth_headroom)
            throw_too_deep(depth, "building an IR node");
    }
    virtual ~ExprNode() = default;
    const ExprKind kind;
    const ScalarType type;
    const int depth;
};
struct StmtNode {
    explicit StmtNode(StmtKind k) : kind(k) {}
    virtual ~StmtNode() = default;
    const StmtKind kind;
};
#define LOOM_X(N) struct N##Node;
LOOM_FOR_EACH_EXPR_NODE(LOOM_X)
LOOM_FOR_EACH_STMT_NODE(LOOM_X)
#undef LOOM_X

/// The constants a plain C++ number becomes: "weak", so that they adopt the type of the other
/// operand (int64 and float64 until then); a bool is a plain bool constant.
Expr weak_constant(bool value);
Expr weak_constant(std::int64_t value);
Expr weak_constant(double value);
} // namespace ir

namespace detail {
/// Destroys the node that `node` holds the last reference to. Nodes own their operands, so
/// plain destruction would recurse once per level and overflow the stack of a deep chain; here
/// each node's operands are queued on a per-thread list that the outermost call empties, so
/// handles of any depth are destroyed in constant stack.
void release_last(std::shared_ptr<const ir::ExprNode>& node) noexcept;
void release_last(std::shared_ptr<const ir::StmtNode>& node) noexcept;
} // namespace detail

/// A value handle to an immutable expression node. Cheap to copy. Arithmetic values convert
/// implicitly into "weak" constants that adopt the type of the other operand.
class Expr {
public:
    Expr() = default;
    explicit Expr(std::shared_ptr<const ir::ExprNode> node) : node_(std::move(node)) {}
    template <typename T, typename = std::enable_if_t<std::is_arithmetic_v<T>>>
    Expr(T value); // NOLINT(google-explicit-constructor): the DSL relies on it
    Expr(const Expr&) = default;
    Expr(Expr&& o) noexcept = default;
    // By value: the old node is released by `o`'s destructor, without recursion.
    Expr& operator=(Expr o) noexcept {
        node_.swap(o.node_);
        return *this;
    }
    ~Expr() {
        if (node_ && node_.use_count() == 1) detail::release_last(node_);
    }

    bool defined() const { return node_ != nullptr; }
    const ir::ExprNode* get() const { return node_.get(); }
    ir::ExprKind kind() const { return node_->kind; }
    ScalarType type() const { return node_->type; }
    /// The nesting depth: 1 for a leaf, else 1 + the deepest operand's (see
    /// max_expression_depth). 0 for an undefined handle.
    int depth() const { return node_ ? node_->depth : 0; }
    /// The node as T, or nullptr if it is another kind.
    template <typename T>
    const T* as() const {
        return node_ && node_->kind == T::static_kind ? static_cast<const T*>(node_.get()) : nullptr;
    }
    template <typename T>
    bool is() const { return as<T>() != nullptr; }
    /// Identity (the same node object), not structural equality.
    bool same_as(const Expr& o) const { return node_ == o.node_; }

private:
    std::shared_ptr<const ir::ExprNode> node_;
};

/// A value handle to an immutable statement node.
class Stmt {
public:
    Stmt() = default;
    explicit Stmt(std::shared_ptr<const ir::StmtNode> node) : node_(std::move(node)) {}
    Stmt(const Stmt&) = default;
    Stmt(Stmt&& o) noexcept = default;
    Stmt& operator=(Stmt o) noexcept {
        node_.swap(o.node_);
        return *this;
    }
    ~Stmt() {
        if (node_ && node_.use_count() == 1) detail::release_last(node_);
    }
    bool defined() const { return node_ != nullptr; }
    const ir::StmtNode* get() const { return node_.get(); }
    ir::StmtKind kind() const { return node_->kind; }
    template <typename T>
    const T* as() const {
        return node_ && node_->kind == T::static_kind ? static_cast<const T*>(node_.get()) : nullptr;
    }
    template <typename T>
    bool is() const { return as<T>() != nullptr; }
    bool same_as(const Stmt& o) const { return node_ == o.node_; }

private:
    std::shared_ptr<const ir::StmtNode> node_;
};

template <typename T, typename>
Expr::Expr(T value) {
    if constexpr (std::is_same_v<T, bool>)
        *this = ir::weak_constant(value);
    else if constexpr (std::is_integral_v<T>)
        *this = ir::weak_constant(static_cast<std::int64_t>(value));
    else
        *this = ir::weak_constant(static_cast<double>(value));
}

/// The expression (or statement) in loom's IR debug notation, for logs and messages:
/// `to_string(2.0 * f[{1, 0}])` is "(2.0 * f[1, 0])"-like text; `std::cout << e` prints the same.
std::string to_string(const Expr& e);
std::string to_string(const Stmt& s);
std::ostream& operator<<(std::ostream& os, const Expr& e);
std::ostream& operator<<(std::ostream& os, const Stmt& s);

} // namespace loom
