#include "compiler/passes/name_parameters.hpp"

#include "compiler/codegen/cpp_printer.hpp"
#include "compiler/codegen/cuda_printer.hpp"
#include "compiler/ir/visitor.hpp"

#include <fmt/format.h>

namespace loom::ir {

namespace {

/// The loops over the user's IndexVars, in the order they appear.
std::vector<const VarNode*> index_variables(const Stmt& body) {
    struct Find : IRVisitor {
        std::vector<const VarNode*> found;
        void visit_For(const ForNode* f) override {
            if (auto v = f->var.as<VarNode>(); v->role == VarRole::Index) found.push_back(v);
            IRVisitor::visit_For(f);
        }
    } find;
    if (body.defined()) find.visit(body);
    return find.found;
}

} // namespace

void name_parameters(LoweredKernel& kernel) {
    const bool cuda = kernel.config.target == Target::CUDA;
    auto type_name = [&](ScalarType t) { return cuda ? cuda_type_name(t) : cpp_type_name(t); };
    CNames names;
    for (bool user : {true, false}) {
        for (KernelParam& p : kernel.params) {
            const bool user_named = p.role == ParamRole::FieldPointer || p.role == ParamRole::Scalar;
            if (user_named != user) continue;
            const bool pointer = p.role == ParamRole::FieldPointer;
            const void* key = pointer ? static_cast<const void*>(p.field.get())
                                      : static_cast<const void*>(p.var.get());
            p.name = names.name_of(key, pointer ? p.field->name : p.var.as<VarNode>()->name);
            p.c_type = pointer ? fmt::format("{}{}* __restrict__", p.read_only ? "const " : "",
                                             type_name(p.type))
                               : "const " + type_name(p.type);
        }
        // The user's IndexVars (k in sum(k, ...)) keep their names over loom's own loops.
        if (user)
            for (const VarNode* v : index_variables(kernel.body)) names.name_of(v, v->name);
    }
    kernel.names = std::move(names);
}

} // namespace loom::ir
