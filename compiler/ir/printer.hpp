// Printing IR as C-like text.
//
// ExprPrinter is the one printer base: the IR debug printer uses its defaults, and the CUDA (and
// later C++) code generators override the hooks for names, types, literals and functions. It
// emits only the parentheses that C precedence needs, and keeps evaluation order exact (a + (b + c)
// stays parenthesized, because float addition is not associative).
#pragma once

#include "compiler/ir/ir.hpp"

#include <initializer_list>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace loom::ir {

/// The shortest text that reads back as the same value: "2.0", "0.25", "1e-08", "inf".
std::string format_float(double value, ScalarType type);

class ExprPrinter {
public:
    virtual ~ExprPrinter() = default;
    std::string print(const Expr& e);

protected:
    static constexpr int kPrimary = 16, kUnary = 14, kMul = 13, kAdd = 12, kCompare = 10,
                         kEquality = 9, kAnd = 5, kOr = 4, kTernary = 3;

    /// Appends `e` to `out`, in parentheses when it binds looser than `min_precedence`. Every
    /// node appends to the one string, so printing is linear in the size of the text (building
    /// each operand's text and pasting it into its parent's would copy a deep chain's text
    /// once per level).
    void emit(const Expr& e, int min_precedence, std::string& out);
    /// C precedence of the outermost operator of the text `emit` writes for `e`; higher binds
    /// tighter. A printer that overrides a hook so that it writes another operator overrides
    /// this too.
    virtual int precedence(const Expr& e);
    static int binary_precedence(BinaryOp op);

    // Hooks. The defaults produce the debug notation; those of nodes append to `out`.
    virtual std::string var_name(const ir::VarNode* v);
    virtual std::string type_name_of(ScalarType t);
    virtual std::string literal(const ir::ConstNode* c);
    virtual void counter(const ir::CounterNode* c, std::string& out);
    virtual void field_access(const ir::FieldAccessNode* a, std::string& out);
    virtual void thread_index(const ir::ThreadIndexNode* t, std::string& out);
    virtual void block_thread(const ir::BlockThreadNode* t, std::string& out);
    virtual void buffer_load(const ir::BufferLoadNode* l, std::string& out);
    virtual void call(const ir::CallNode* c, std::string& out);
    virtual void binary(const ir::BinaryNode* b, std::string& out);
    virtual void cast(const ir::CastNode* c, std::string& out);
    /// The debug notation; the code printers never see a Reduce (lower_reductions removes them).
    virtual void reduce(const ir::ReduceNode* r, std::string& out);
    virtual void warp_reduce(const ir::WarpReduceNode* r, std::string& out);
    /// `name(a, b, ...)` with each argument printed in full.
    void emit_call(std::string_view name, std::initializer_list<const Expr*> args, std::string& out);
    void emit_call(std::string_view name, const std::vector<Expr>& args, std::string& out);
};

} // namespace loom::ir
