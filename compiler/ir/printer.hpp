// Printing IR as C-like text.
//
// ExprPrinter is the one printer base: the IR debug printer uses its defaults, and the CUDA (and
// later C++) code generators override the hooks for names, types, literals and functions. It
// emits only the parentheses that C precedence needs, and keeps evaluation order exact (a + (b + c)
// stays parenthesized, because float addition is not associative).
#pragma once

#include "compiler/ir/ir.hpp"

#include <ostream>
#include <string>

namespace loom::ir {

/// The shortest text that reads back as the same value: "2.0", "0.25", "1e-08", "inf".
std::string format_float(double value, ScalarType type);

class ExprPrinter {
public:
    virtual ~ExprPrinter() = default;
    std::string print(const Expr& e);

protected:
    struct Text {
        std::string text;
        int precedence; ///< C precedence of the outermost operator; higher binds tighter
    };
    static constexpr int kPrimary = 16, kUnary = 14, kMul = 13, kAdd = 12, kCompare = 10,
                         kEquality = 9, kAnd = 5, kOr = 4, kTernary = 3;

    Text print_prec(const Expr& e);
    /// `e` as an operand that must bind at least as tightly as `min_precedence`.
    std::string operand(const Expr& e, int min_precedence);

    // Hooks. The defaults produce the debug notation.
    virtual std::string var_name(const ir::VarNode* v);
    virtual std::string type_name_of(ScalarType t);
    virtual std::string literal(const ir::ConstNode* c);
    virtual Text counter(const ir::CounterNode* c);
    virtual Text field_access(const ir::FieldAccessNode* a);
    virtual Text thread_index(const ir::ThreadIndexNode* t);
    virtual Text load(const ir::LoadNode* l);
    virtual Text block_thread(const ir::BlockThreadNode* t);
    virtual Text array_load(const ir::ArrayLoadNode* l);
    virtual Text call(const ir::CallNode* c);
    virtual Text binary(const ir::BinaryNode* b);
    virtual Text cast(const ir::CastNode* c);
};

} // namespace loom::ir
