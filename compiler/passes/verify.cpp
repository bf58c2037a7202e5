#include "compiler/passes/verify.hpp"

#include "compiler/ir/printer.hpp"
#include "compiler/ir/visitor.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>

#include <set>
#include <vector>

namespace loom::ir {

namespace {

class Verifier : public IRVisitor {
public:
    explicit Verifier(const std::vector<KernelParam>& params) {
        for (auto& p : params)
            if (p.var.defined()) defined_.insert(p.var.get());
    }

protected:
    void visit_Assign(const AssignNode* n) override {
        // An accumulator's update (lower_reductions) is the one assignment the printers accept.
        auto v = n->lhs.as<VarNode>();
        if (!v || v->role != VarRole::Accumulator) fail("an Assign statement", "lower_iteration_space");
        visit(n->lhs);
        visit(n->rhs);
    }
    void visit_Reduce(const ReduceNode*) override { fail("a reduction", "lower_reductions"); }
    void visit_FieldAccess(const FieldAccessNode* n) override {
        fail(fmt::format("a field access to {}", n->field->name), "lower_iteration_space");
    }
    void visit_Counter(const CounterNode*) override {
        fail("a DSL spatial counter", "lower_iteration_space");
    }
    void visit_Dense(const DenseNode* n) override {
        fail(fmt::format("a Dense statement computing {}", n->output->name), "lower_layers");
    }
    /// Its arrays in scope, its weights staged; its activations are functions of a placeholder.
    void visit_MmaChain(const MmaChainNode* n) override {
        if (n->weights.empty()) fail(fmt::format("a chain of layers computing {} without staged weights", n->output->name), "stage_layer_weights");
        // Streamed inputs (outputs) go between the field and the warp's tile: no array holds them.
        if (!n->stream) check_array(n->input.get(), "used");
        if (!n->stream || !n->stream->outputs()) check_array(n->output.get(), "used");
        if (n->stream)
            for (const Expr& e : n->stream->exprs())
                if (e.defined()) visit(e);
        for (const BufferPtr& b : n->weights) check_array(b.get(), "read");
        for (const BufferPtr& b : n->biases) check_array(b.get(), "read");
        if (n->tile) check_array(n->tile.get(), "used");
    }
    void visit_Var(const VarNode* v) override {
        if (!defined_.count(v))
            throw InternalError(fmt::format("verify: variable '{}' is used before it is declared",
                                            v->name));
    }
    void visit_Declare(const DeclareNode* n) override {
        visit(n->value);
        declare(n->var);
    }
    // A buffer is in scope in its allocation's body only; what the body declares stays in
    // scope after it, as the printers put the body in the enclosing C block.
    void visit_Allocate(const AllocateNode* n) override {
        if (n->buffer->definition)
            fail(fmt::format("the definition of array '{}'", n->buffer->name), "analyze_kernel");
        if (!allocated_.insert(n->buffer.get()).second || !arrays_.insert(n->buffer.get()).second)
            throw InternalError(fmt::format("verify: array '{}' is allocated twice", n->buffer->name));
        visit(n->body);
        arrays_.erase(n->buffer.get());
    }
    // A field's memory (Global) is the kernel's argument, never allocated; other buffers are
    // used inside their allocation only. Every address is linear by now.
    void visit_BufferLoad(const BufferLoadNode* n) override {
        if (n->buffer->scope != Scope::Global) check_array(n->buffer.get(), "read");
        if (!n->flat()) fail(fmt::format("a load of {} at coordinates", n->buffer->name), "flatten_addresses");
        IRVisitor::visit_BufferLoad(n);
    }
    void visit_BufferStore(const BufferStoreNode* n) override {
        if (!n->flat()) fail(fmt::format("a store to {} at coordinates", n->buffer->name), "flatten_addresses");
        if (n->buffer->scope != Scope::Global) {
            check_array(n->buffer.get(), "written");
        } else if (blocks_ > 0 && owned_ == 0) {
            // In a block, the statements outside thread loops run on every thread alike: a
            // store to a field there would be made by all of them.
            throw InternalError(fmt::format("verify: a store to {} in a block but in no thread or "
                                            "cooperative loop: every thread would make it",
                                            n->buffer->name));
        }
        IRVisitor::visit_BufferStore(n);
    }
    // A loop's variable, and what its body or a guarded statement declares, is in scope there
    // only (as in C): two sibling loops may use one variable (two reductions over k), and a
    // use after the scope is an error.
    void visit_For(const ForNode* n) override {
        visit(n->start);
        visit(n->stop);
        visit(n->step);
        if ((n->kind == ForKind::GpuBlock || n->kind == ForKind::GpuThread) &&
            (!is_const_value(n->start, 0) || !is_const_value(n->step, 1) ||
             (n->kind == ForKind::GpuThread && !is_const(n->stop))))
            throw InternalError(fmt::format("verify: the {} loop over '{}' is not over [0, n) in steps "
                                            "of 1{}", for_kind_name(n->kind), n->var.as<VarNode>()->name,
                                            n->kind == ForKind::GpuThread ? " with n constant" : ""));
        const bool per_thread = n->kind == ForKind::GpuThread || n->kind == ForKind::GpuGrid ||
                                n->kind == ForKind::GpuWarp || n->kind == ForKind::WarpLane;
        const bool shared = per_thread || n->kind == ForKind::Cooperative;
        divergent_ += per_thread;
        const int lanes_at = lanes_at_;
        if (n->kind == ForKind::WarpLane) lanes_at_ = divergent_;
        owned_ += shared;
        blocks_ += n->kind == ForKind::GpuBlock;
        scopes_.emplace_back();
        declare(n->var);
        visit(n->body);
        close_scope();
        lanes_at_ = lanes_at;
        divergent_ -= per_thread;
        owned_ -= shared;
        blocks_ -= n->kind == ForKind::GpuBlock;
    }
    // The last block's body: a scope of its own (the printers put it in braces), run by all the
    // block's threads alike, so its barriers and warp collectives stand as at block level.
    void visit_LastBlock(const LastBlockNode* n) override {
        visit(n->blocks);
        scopes_.emplace_back();
        visit(n->body);
        close_scope();
    }
    void visit_IfThen(const IfThenNode* n) override {
        visit(n->cond);
        ++divergent_;
        scopes_.emplace_back();
        visit(n->then_case);
        close_scope();
        --divergent_;
    }
    // A warp collective needs all 32 lanes: it stands in a lane loop, under no guard or thread
    // loop of its own there.
    void visit_WarpReduce(const WarpReduceNode* n) override {
        if (lanes_at_ == 0 || divergent_ != lanes_at_)
            throw InternalError(fmt::format("verify: the warp reduction `{}` is outside a warp's lane loop or "
                                            "under a condition in it, where some lanes would not take part",
                                            to_string(n->value)));
        IRVisitor::visit_WarpReduce(n);
    }
    // Every thread of the block must reach a barrier: none inside a thread's own loop or guard.
    void visit_Barrier(const BarrierNode*) override {
        if (divergent_ > 0)
            throw InternalError("verify: a barrier inside a thread loop or a guard, which some "
                                "threads of the block would never reach");
    }
    void visit_Stage(const StageNode* n) override {
        fail(fmt::format("stage {} left as a Stage", n->index), "fuse_stages");
    }
private:
    void check_array(const BufferInfo* a, const char* what) const {
        if (!arrays_.count(a))
            throw InternalError(fmt::format("verify: array '{}' is {} before it is allocated",
                                            a->name, what));
    }
    std::set<const BufferInfo*> arrays_;    ///< in scope here
    std::set<const BufferInfo*> allocated_; ///< anywhere so far
    void declare(const Expr& var) {
        if (!defined_.insert(var.get()).second)
            throw InternalError(fmt::format("verify: variable '{}' is declared twice",
                                            var.as<VarNode>()->name));
        scopes_.back().vars.push_back(var.get());
    }
    void close_scope() {
        for (const void* v : scopes_.back().vars) defined_.erase(v);
        scopes_.pop_back();
    }
    struct LexicalScope {
        std::vector<const void*> vars;
    };
    std::vector<LexicalScope> scopes_{1}; ///< the kernel body, then one per loop and guard
    [[noreturn]] static void fail(const std::string& what, const char* pass) {
        throw InternalError(fmt::format("verify: {} reached the printer; the pass {} must run "
                                        "before printing", what, pass));
    }
    std::set<const void*> defined_;
    int divergent_ = 0; ///< thread loops and guards around the statement
    int lanes_at_ = 0;  ///< divergent_ just inside the innermost lane loop; 0 outside any
    int owned_ = 0;     ///< thread, grid and cooperative loops around it: who runs it is decided
    int blocks_ = 0;    ///< GpuBlock loops around it
};

} // namespace

void verify_lowered(const Stmt& body, const std::vector<KernelParam>& params) {
    Verifier(params).visit(body);
}

} // namespace loom::ir
