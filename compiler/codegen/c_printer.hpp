// The C-family printer base shared by the code generators: unique readable names, C literals,
// math functions per type, loads, stores, declarations, guards and loops. A target printer
// (CUDA today, C++ for the CPU target next) supplies type names, thread indices, special float
// literals and the function signature.
#pragma once

#include "compiler/ir/printer.hpp"
#include "compiler/lower.hpp"

#include <map>
#include <set>
#include <string>

namespace loom {

class CFamilyPrinter : public ExprPrinter {
public:
    /// Names the kernel parameters (filling KernelParam::name) so locals never shadow them.
    explicit CFamilyPrinter(LoweredKernel& kernel);

    /// The statements of `s`, indented by `indent` levels of 4 spaces.
    std::string print_stmt(const Stmt& s, int indent);

protected:
    /// A unique, valid identifier close to `hint` (a suffix _1, _2, ... when taken).
    std::string unique_name(const std::string& hint);
    std::string name_of(const void* key, const std::string& hint);

    // Target hooks.
    std::string type_name_of(ScalarType t) override = 0;
    /// inf and nan, which C has no literal for.
    virtual std::string special_float(double value, ScalarType t) = 0;
    /// The math function's name for arguments of type t (sqrtf / sqrt, ...).
    virtual std::string math_name(MathFn fn, ScalarType t);
    virtual std::string min_max_name(BinaryOp op, ScalarType t);

    std::string var_name(const ir::VarNode* v) override;
    std::string literal(const ir::ConstNode* c) override;
    Text counter(const ir::CounterNode* c) override;
    Text field_access(const ir::FieldAccessNode* a) override;
    Text load(const ir::LoadNode* l) override;
    Text call(const ir::CallNode* c) override;
    Text binary(const ir::BinaryNode* b) override;
    Text cast(const ir::CastNode* c) override;

    LoweredKernel& kernel_;
    std::map<const void*, std::string> names_;
    std::set<std::string> used_;
};

} // namespace loom
