#include "compiler/codegen/cuda_printer.hpp"

#include "compiler/codegen/c_printer.hpp"
#include "compiler/ir/visitor.hpp"
#include "compiler/passes/lower_layers.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace loom::ir {

std::string cuda_type_name(ScalarType t) {
    switch (t) {
    case ScalarType::Bool: return "bool";
    case ScalarType::Int32: return "int";
    case ScalarType::Int64: return "long long";
    case ScalarType::Float16: return "loom::half"; // templates/loom/half.cuh
    case ScalarType::BFloat16: return "loom::bfloat16";
    case ScalarType::Float32: return "float";
    case ScalarType::Float64: return "double";
    }
    return "?";
}

namespace {

class CudaPrinter : public CFamilyPrinter {
public:
    using CFamilyPrinter::CFamilyPrinter;

    std::string kernel_source() {
        // The thread's rank in its block and the block's size, named once for every
        // cooperative loop, before the body's own names.
        std::string prologue;
        if (contains_cooperative_loop(kernel_.body)) {
            rank_ = VarNode::make(ScalarType::Int32, "thread_in_block", VarRole::LoopIndex);
            count_ = VarNode::make(ScalarType::Int32, "threads_per_block", VarRole::LoopIndex);
            read_.insert(rank_.as<VarNode>()); // by the cooperative loops, as they print
            read_.insert(count_.as<VarNode>());
            prologue = print_stmt(DeclareNode::make(rank_, BlockThreadNode::make(ScalarType::Int32, false)), 1) +
                       print_stmt(DeclareNode::make(count_, BlockThreadNode::make(ScalarType::Int32, true)), 1);
        }
        // The chains share one tile (stage_layer_weights): each warp's part is as long as the
        // largest chain's, the same for every chain, so that no warp's part reaches into another's
        // while the two run different chains.
        tile_floats_ = mma_chain_sizes(kernel_.body).tile_bytes / 4;
        staged_weights_ = staged_weight_shapes(kernel_.body);
        std::string body = prologue + print_stmt(kernel_.body, 1); // params are named already
        std::string includes = staged_ ? "#include \"loom/stage.cuh\"\n" : "";
        if (prints_16_bit_floats()) includes += "#include \"loom/half.cuh\"\n";
        if (fast_tanh_) includes += "#include \"loom/fast_math.cuh\"\n";
        if (lanes_) includes += "#include \"loom/lanes.cuh\"\n";
        if (warps_) includes += "#include \"loom/warp.cuh\"\n";
        if (grid_) includes += "#include \"loom/grid.cuh\"\n";
        if (mma_) includes += "#include \"loom/mma.cuh\"\n";
        if (!includes.empty()) includes += "\n";
        if (!scratch_.empty()) scratch_ += "\n";
        return header("CUDA") + includes + scratch_ + signature("extern \"C\" __global__") + "{\n" + body + "}\n";
    }

protected:
    std::string type_name_of(ScalarType t) override {
        uses_16_bit_floats_ = uses_16_bit_floats_ || is_16_bit_float(t);
        return cuda_type_name(t);
    }

    // Under fast_math, float tanh is one instruction (templates/loom/fast_math.cuh); NVRTC's
    // --use_fast_math approximates exp, log, sin, ... itself but keeps tanhf exact.
    std::string math_name(MathFn fn, ScalarType t) override {
        if (fn == MathFn::Tanh && t == ScalarType::Float32 && kernel_.config.fast_math) {
            fast_tanh_ = true;
            return "loom::tanh_approx";
        }
        return CFamilyPrinter::math_name(fn, t);
    }

    std::string special_float(double v, ScalarType t) override {
        // NVRTC has no <cmath>: spell inf and nan through their bit patterns.
        if (t == ScalarType::Float32) {
            const char* bits = std::isnan(v) ? "0x7fffffff" : v > 0 ? "0x7f800000" : "0xff800000";
            return fmt::format("__int_as_float({})", bits);
        }
        const char* bits = std::isnan(v) ? "0x7ff8000000000000LL"
                           : v > 0       ? "0x7ff0000000000000LL"
                                         : "0xfff0000000000000LL";
        return fmt::format("__longlong_as_double({})", bits);
    }

    int precedence(const Expr& e) override {
        if (auto t = e.as<ThreadIndexNode>())
            return t->type == ScalarType::Int64 && t->which == GpuIndex::Global ? kAdd : kUnary;
        if (e.is<BlockThreadNode>()) return kUnary;
        return CFamilyPrinter::precedence(e);
    }

    // x / 0.0 is defined for floats (+-inf, or nan), but NVRTC warns about a literal `/ 0.0f`
    // (#39-D): spell a zero divisor through its bit pattern too.
    void binary(const BinaryNode* b, std::string& out) override {
        auto zero = b->b.as<ConstNode>();
        if (b->op != BinaryOp::Div || !is_float(b->type) || !zero || zero->float_value != 0.0) {
            CFamilyPrinter::binary(b, out);
            return;
        }
        const bool negative = std::signbit(zero->float_value);
        emit(b->a, kMul, out);
        out += " / ";
        if (b->type == ScalarType::Float32)
            out += negative ? "__int_as_float(0x80000000)" : "__int_as_float(0)";
        else
            out += negative ? "__longlong_as_double(0x8000000000000000LL)" : "__longlong_as_double(0LL)";
    }

    void thread_index(const ThreadIndexNode* t, std::string& out) override {
        char d = "xyz"[t->dim];
        if (t->which != GpuIndex::Global) {
            const char* what = t->which == GpuIndex::Block ? "blockIdx" : "threadIdx";
            out += fmt::format("({}) {}.{}", t->type == ScalarType::Int64 ? "long long" : "int", what, d);
            return;
        }
        if (t->type == ScalarType::Int64)
            out += fmt::format("(long long) blockIdx.{0} * blockDim.{0} + threadIdx.{0}", d);
        else
            out += fmt::format("(int) (blockIdx.{0} * blockDim.{0} + threadIdx.{0})", d);
    }

    void block_thread(const BlockThreadNode* t, std::string& out) override {
        if (t->count)
            out += "(int) (blockDim.x * blockDim.y * blockDim.z)";
        else
            out += "(int) (threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z))";
    }

    std::string allocate(const AllocateNode* a, const std::string& pad) override {
        if (a->buffer->scope == Scope::Local) return CFamilyPrinter::allocate(a, pad);
        // A reduction's scratch lives in the module, from launch to launch: declared at file
        // scope, zero when the module loads.
        if (a->buffer->grid_scratch) {
            scratch_ += fmt::format("__device__ {} {}[{}];\n", type_name_of(a->buffer->type),
                                    buffer_name(*a->buffer), a->buffer->size());
            return "";
        }
        // Over 48 KB: one dynamic shared-memory block per kernel (its size is a launch
        // parameter), each staged buffer a typed window into it.
        std::string t = type_name_of(a->buffer->type);
        const std::string name = buffer_name(*a->buffer);
        if (a->buffer->static_shared)
            return fmt::format("{}__shared__ __align__(16) {} {}[{}];\n", pad, t, name, a->buffer->size());
        std::string out;
        if (!declared_shared_) {
            out = pad + "extern __shared__ __align__(16) unsigned char loom_shared[];\n";
            declared_shared_ = true;
        }
        return out + fmt::format("{}{}* const {} = reinterpret_cast<{}*>(loom_shared + {});\n", pad,
                                 t, name, t, a->buffer->shared_offset);
    }

    // CUDA allows one of the two on a kernel: a register cap is the stronger request.
    std::string function_attributes() override {
        const int r = kernel_.max_registers;
        if (r > 0) return fmt::format("__maxnreg__({}) ", r);
        const int threads = kernel_.launch.max_threads_per_block;
        return threads > 0 ? fmt::format("__launch_bounds__({}) ", threads) : "";
    }

    // A staging copy (a global load stored into a shared array) starts without waiting; the
    // barrier then waits for the thread's copies first (templates/loom/stage.cuh).
    std::string round_tf32(const std::string& value) override {
        mma_ = true;
        return "loom::mma::tf32::rounded(" + value + ")";
    }
    std::string buffer_store(const BufferStoreNode* st, const std::string& pad) override {
        auto load = as_field_load(st->value);
        if (st->buffer->scope != Scope::Shared || !load || holds_tf32(st->buffer.get()))
            return CFamilyPrinter::buffer_store(st, pad);
        staged_ = waiting_ = true;
        return fmt::format("{}loom::stage(&{}[{}], &{}[{}]);\n", pad, buffer_name(*st->buffer),
                           print(st->index()), buffer_name(*load->buffer), print(load->index()));
    }

    // Another block's partial, read through L2: this SM's L1 may hold an older launch's.
    void buffer_load(const BufferLoadNode* l, std::string& out) override {
        if (!l->buffer->grid_scratch) return CFamilyPrinter::buffer_load(l, out);
        out += "__ldcg(&";
        CFamilyPrinter::buffer_load(l, out);
        out += ')';
    }

    // loom::last_block (templates/loom/grid.cuh): a ticket per block, the last one's threads
    // run the body.
    std::string last_block(const LastBlockNode* n, int indent) override {
        grid_ = true;
        const std::string pad(std::size_t(indent) * 4, ' ');
        std::string cond = fmt::format("loom::last_block({}[0], {})", buffer_name(*n->ticket), print(n->blocks));
        const std::size_t scope = names_.mark();
        std::string body = print_stmt(n->body, indent + 1);
        names_.release(scope);
        return fmt::format("{}if ({}) {{\n{}{}}}\n", pad, cond, body, pad);
    }

    // A chain of layers on tensor cores: the warp's 32 cells through loom::mma
    // (templates/loom/mma.cuh), the activations in registers from layer to layer.
    std::string mma_chain(const MmaChainNode* n, int indent) override {
        mma_ = true;
        const std::string pad(std::size_t(indent) * 4, ' '), in = pad + "    ";
        // 16-bit operands: loom::mma's functions with a last template argument saying bfloat16;
        // tf32: loom::mma::tf32's, fragments of 8 inputs a k-step.
        const std::string ns = n->tf32() ? "loom::mma::tf32::" : "loom::mma::";
        const std::string bf16 = n->tf32() ? "" : n->operand == ScalarType::BFloat16 ? ", true" : ", false";
        std::string out = pad + "{\n";
        out += fmt::format("{}float* const loom_tile = loom::mma::warp_tile({}, {});\n", in, buffer_name(*n->tile),
                           tile_floats_);
        std::string a = "loom_a0";
        out += fmt::format("{}unsigned {}[2][{}][4];\n", in, a, n->k_pad(0) / n->k_step());
        std::string out_tile = "loom_tile";
        if (n->stream) {
            // The inputs as they lie in the field, copied a tile ahead (cp.async) into the
            // start of the warp's tile; the outputs' rows after them.
            const ChainStream& st = *n->stream;
            out += fmt::format("{}loom::mma::stream_inputs<{}, {}>({}, loom_tile, &{}, &{}, {}, &{}, {}, {});\n", in,
                               n->layers[0].inputs, n->k_pad(0), a, print(st.first), print(st.second),
                               print(st.valid), print(st.next), print(st.next_valid), print(st.starts));
            out_tile = fmt::format("loom_tile + {}", n->stream_floats());
        } else {
            out += fmt::format("{}{}load_inputs<{}, {}, {}{}>({}, loom_tile, {});\n", in, ns, n->layers[0].inputs,
                               n->k_pad(0), n->row_stride(0), bf16, a, buffer_name(*n->input));
        }
        for (std::size_t l = 0; l < n->layers.size(); ++l) {
            const std::string act = activation_lambda(n->layers[l]);
            const std::string w = buffer_name(*n->weights[l]), b = buffer_name(*n->biases[l]);
            if (l + 1 < n->layers.size()) {
                const std::string next = fmt::format("loom_a{}", l + 1);
                out += fmt::format("{}unsigned {}[2][{}][4];\n", in, next, n->n_pad(l) / n->k_step());
                out += fmt::format("{}{}hidden<{}, {}, {}{}>({}, {}, {}, {}, {});\n", in, ns, n->k_pad(l), n->n_pad(l),
                                   n->row_stride(l), bf16, a, next, w, b, act);
                a = next;
            } else if (n->stream && n->stream->outputs()) {
                // Through the outputs' rows of the tile, 16 components at a time, to the field.
                const ChainStream& st = *n->stream;
                out += fmt::format("{}loom::mma::stream_outputs<{}, {}, {}, {}{}>({}, {}, {}, {}, {}, &{}, &{}, {});\n",
                                   in, n->k_pad(l), n->n_pad(l), n->layers[l].outputs, n->row_stride(l), bf16, a,
                                   out_tile, w, b, act, print(st.out_first), print(st.out_second), print(st.valid));
            } else {
                out += fmt::format("{}{}store_outputs<{}, {}, {}, {}{}>({}, {}, {}, {}, {}, {});\n", in, ns,
                                   n->k_pad(l), n->n_pad(l), n->layers[l].outputs, n->row_stride(l), bf16,
                                   buffer_name(*n->output), a, out_tile, w, b, act);
            }
        }
        return out + pad + "}\n";
    }

    // loom::warp_reduce (templates/loom/warp.cuh), the combination spelled as the IR's operator
    // on two values of the type, as every other printer spells it.
    void warp_reduce(const WarpReduceNode* r, std::string& out) override {
        warps_ = true;
        const std::string t = type_name_of(r->type);
        Expr a = VarNode::make(r->type, "mine", VarRole::LoopIndex), b = VarNode::make(r->type, "other", VarRole::LoopIndex);
        const std::size_t scope = names_.mark();
        const std::string combine = fmt::format("[]({0} {1}, {0} {2}) {{ return {3}; }}", t, print(a), print(b),
                                                print(BinaryNode::make(r->op, a, b)));
        names_.release(scope);
        out += "loom::warp_reduce(" + print(r->value) + ", " + combine + ")";
    }

    // loom::load_lanes / store_lanes (templates/loom/lanes.cuh): one vector access where the
    // address is aligned to the lanes, element by element where it is not.
    std::string lanes(const StmtNode* s, const std::string& pad) override {
        lanes_ = true;
        if (s->kind == StmtKind::VectorLoad) {
            auto n = static_cast<const VectorLoadNode*>(s);
            if (n->offset == 0 && n->width == n->lanes->elements())
                return fmt::format("{}loom::load_lanes({}, &{});\n", pad, buffer_name(*n->lanes),
                                   print(n->first));
            return fmt::format("{}loom::load_lanes<{}>({} + {}, &{});\n", pad, n->width, buffer_name(*n->lanes),
                               n->offset, print(n->first));
        }
        auto n = static_cast<const VectorStoreNode*>(s);
        return fmt::format("{}loom::store_lanes(&{}, {});\n", pad, print(n->first),
                           buffer_name(*n->lanes));
    }

    // `const float* __restrict__ src_c = src + index;` for a field the kernel only reads, as its
    // parameter; `float* const dst_c = dst + index;` for one it writes (no __restrict__: the
    // field's own pointer may reach the same elements in the pointer's scope).
    std::string base_pointer(const BasePointerNode* n, const std::string& pad) override {
        if (n->at.size() != 1) throw InternalError("a base pointer at coordinates reached the printer");
        std::string field = buffer_name(*n->buffer);
        std::string at = print(n->at[0]);
        std::string cell = buffer_name(*n->view);
        const std::string t = type_name_of(n->buffer->type);
        if (n->writes) return fmt::format("{}{}* const {} = {} + {};\n", pad, t, cell, field, at);
        return fmt::format("{}const {}* __restrict__ {} = {} + {};\n", pad, t, cell, field, at);
    }

    std::string barrier(const std::string& pad, bool warp) override {
        if (warp) return pad + "__syncwarp();\n";
        // The copies started since the last barrier are waited for at this one.
        std::string wait = waiting_ ? pad + "loom::stage_wait();\n" : std::string();
        waiting_ = false;
        return wait + pad + "__syncthreads();\n";
    }

    // Constant trip counts (the cells of one thread) unroll, so their loads overlap; a Rolled
    // loop (a wide layer's inputs) stays a loop, which keeps NVRTC's time linear in its body.
    std::string loop_pragma(const ForNode* f) override {
        if (f->kind == ForKind::Rolled) return "#pragma unroll 1";
        // A loop over an IndexVar (a reduction, or the elements of an index axis) may run
        // hundreds of times: NVCC chooses how far to unroll it.
        if (f->var.as<VarNode>()->role == VarRole::Index) return "";
        return is_const(f->start) && is_const(f->stop) ? "#pragma unroll" : "";
    }

    // NVVM's load/store vectorizer is quadratic in the loads of a basic block: a fully unrolled
    // 64 x 64 layer (4096 weight loads in one block) took 60 s to compile, 32 x 32 9 s. An empty
    // asm with a memory clobber at the end of each row splits the block (1.2 s at 32 wide, 10 s
    // at 64) and costs nothing at run time: it emits no instruction, and the row's own loads
    // still vectorize.
    std::string loop_body_end(const ForNode* f, const std::string& pad) override {
        if (f->kind != ForKind::Unrolled || !contains_loop(f->body)) return "";
        return pad + "asm volatile(\"\" ::: \"memory\"); // compile-time barrier, see loom's cuda_printer\n";
    }
    static bool contains_loop(const Stmt& s) {
        if (s.is<ForNode>()) return true;
        if (auto b = s.as<BlockNode>())
            return std::any_of(b->stmts.begin(), b->stmts.end(), contains_loop);
        return false;
    }

    // A chain of directly nested grid loops: each counter declared from the thread's global
    // index, then one guard for them all. A cooperative loop: from the thread's rank in the
    // block, in steps of the block's size.
    std::string bound_loop(const ForNode* f, int indent) override {
        const std::string pad(std::size_t(indent) * 4, ' ');
        if (f->kind == ForKind::Cooperative) {
            if (std::string w = staged_weights(f, pad); !w.empty()) return w;
            if (std::string row = staged_row(f, pad); !row.empty()) return row;
            ScalarType t = f->var.type();
            Expr rank = rank_.type() == t ? rank_ : CastNode::make(t, rank_);
            Expr count = count_.type() == t ? count_ : CastNode::make(t, count_);
            Expr first = is_const_value(f->step, 1) ? rank : mul(rank, f->step);
            if (!is_const_value(f->start, 0)) first = add(first, f->start);
            Expr stride = is_const_value(f->step, 1) ? count : mul(count, f->step);
            return c_loop(f, first, stride, "", indent);
        }
        if (f->kind == ForKind::GpuWarp || f->kind == ForKind::WarpLane) {
            // The block's threads along x as warps of 32 and their lanes: warp = x / 32 (the
            // warps past the loop's skip it), lane = x % 32 (every lane runs).
            const ScalarType t = f->var.type();
            Expr x = ThreadIndexNode::make(t, 0, GpuIndex::Thread);
            Expr k32 = ConstNode::make_int(t, 32);
            const bool warp = f->kind == ForKind::GpuWarp;
            Stmt decl = DeclareNode::make(f->var, BinaryNode::make(warp ? BinaryOp::Div : BinaryOp::Mod, x, k32));
            const std::int64_t threads = warp ? f->stop.as<ConstNode>()->int_value * 32 : 32;
            if (!warp || threads >= kernel_.launch.default_block[0])
                return print_stmt(decl, indent) + print_stmt(f->body, indent);
            Expr below = BinaryNode::make(BinaryOp::Lt, x, ConstNode::make_int(t, threads));
            return print_stmt(IfThenNode::make(below, BlockNode::make({decl, f->body})), indent);
        }
        if (f->kind == ForKind::GpuBlock || f->kind == ForKind::GpuThread) {
            // The launch has exactly as many blocks, and the block exactly as many threads, as
            // the loop has iterations (LaunchDescription::exact_block): a declaration, no guard.
            const GpuIndex which = f->kind == ForKind::GpuBlock ? GpuIndex::Block : GpuIndex::Thread;
            Expr pos = ThreadIndexNode::make(f->var.type(), f->dim, which);
            if (!is_const_value(f->step, 1)) pos = mul(pos, f->step);
            if (!is_const_value(f->start, 0)) pos = add(pos, f->start);
            // A thread loop over fewer threads than the block has (a reduction's tree step, a
            // store one thread makes): the others skip it, and its index is named inside.
            auto n = f->stop.as<ConstNode>();
            Stmt decl = DeclareNode::make(f->var, pos);
            if (f->kind == ForKind::GpuBlock || (n && n->int_value == kernel_.launch.default_block[std::size_t(f->dim)])) {
                std::string out = print_stmt(decl, indent); // names the index before the body
                return out + print_stmt(f->body, indent);
            }
            Expr below = BinaryNode::make(BinaryOp::Lt, ThreadIndexNode::make(f->var.type(), f->dim, which), f->stop);
            return print_stmt(IfThenNode::make(below, BlockNode::make({decl, f->body})), indent);
        }
        std::string out, guard;
        Stmt body;
        for (const ForNode* g = f; g; g = body.as<ForNode>()) {
            if (g->kind != ForKind::GpuGrid) break;
            // start + g * step, with start's terms added after (`g * 4 + cell + 1`)
            Expr pos = ThreadIndexNode::make(g->var.type(), g->dim);
            if (!is_const_value(g->step, 1)) pos = mul(pos, g->step);
            for (const Expr& term : add_terms(g->start))
                if (!is_const_value(term, 0)) pos = add(pos, term);
            out += print_stmt(DeclareNode::make(g->var, pos), indent);
            guard += (guard.empty() ? "" : " && ") + print(BinaryNode::make(BinaryOp::Lt, g->var, g->stop));
            body = g->body;
        }
        return out + fmt::format("{}if ({}) {{\n{}{}}}\n", pad, guard,
                                 print_stmt(body, indent + 1), pad);
    }
    /// A staged array's layer: its weights' rows (outputs) and their length (inputs), and the
    /// array's rows (n_pad) and row stride.
    struct StagedShape {
        int outputs, inputs, rows, stride;
    };
    static std::map<const BufferInfo*, StagedShape> staged_weight_shapes(const Stmt& body) {
        struct Find : IRVisitor {
            std::map<const BufferInfo*, StagedShape> shapes;
            void visit_MmaChain(const MmaChainNode* n) override {
                for (std::size_t l = 0; l < n->weights.size(); ++l)
                    shapes[n->weights[l].get()] = {n->layers[l].outputs, n->layers[l].inputs, n->n_pad(l),
                                                   n->row_stride(l)};
            }
        } find;
        find.visit(body);
        return find.shapes;
    }

    // The cooperative copy of a tensor-core layer's weights into its staged array
    // (stage_layer_weights: `W_mma[k] = round(W[k / stride][k % stride])`, zero in the padding):
    // loom::mma::stage_weights, which computes the same values four at a time.
    std::string staged_weights(const ForNode* f, const std::string& pad) {
        auto st = f->body.as<BufferStoreNode>();
        auto shape = st ? staged_weights_.find(st->buffer.get()) : staged_weights_.end();
        if (shape == staged_weights_.end()) return "";
        const BufferLoadNode* weights = nullptr;
        for (const Expr& e : subexpressions(st->value))
            if (auto load = e.as<BufferLoadNode>(); load && load->buffer->scope == Scope::Global) weights = load;
        if (!weights) throw InternalError("a staged layer's copy reads no weights: " + print(st->value));
        const StagedShape& w = shape->second;
        // On two lines of its own: the line wrapper would break inside the template's arguments.
        return fmt::format("{}loom::mma::stage_weights<{}, {}, {}, {}>(\n{}        {}, {}, {}, {});\n", pad, w.outputs,
                           w.inputs, w.rows, w.stride, pad, buffer_name(*st->buffer), buffer_name(*weights->buffer),
                           print(rank_), print(count_));
    }

    // A cooperative copy of a contiguous row into shared memory (`S[k] = G[base + k]` for k in
    // [0, n)): loom::stage_row, which copies 16 bytes at a time where the addresses allow
    // (a quarter of the instructions of one element at a time: 0.80 -> 0.85 of copy for a
    // LayerNorm of 4096 kept in shared memory, bench/probe_kernels/probe_rows.cu; for 16-bit
    // elements, which cp.async cannot copy one by one, an eighth).
    std::string staged_row(const ForNode* f, const std::string& pad) {
        auto st = f->body.as<BufferStoreNode>();
        auto load = st ? as_field_load(st->value) : nullptr;
        auto n = f->stop.as<ConstNode>();
        if (!load || st->buffer->scope != Scope::Shared || holds_tf32(st->buffer.get()) || !is_const_value(f->start, 0) ||
            !is_const_value(f->step, 1) ||
            !n || n->int_value > INT32_MAX || !st->index().same_as(f->var) || bit_width(st->buffer->type) < 16)
            return "";
        Expr base;
        if (load->index().same_as(f->var)) {
            base = ConstNode::make_int(f->var.type(), 0);
        } else {
            auto sum = load->index().as<BinaryNode>();
            if (!sum || sum->op != BinaryOp::Add) return "";
            base = sum->b.same_as(f->var) ? sum->a : sum->a.same_as(f->var) ? sum->b : Expr();
            if (!base.defined()) return "";
            // The same row for every thread: the cell's coordinates, sizes, strides, literals.
            for (const Expr& e : subexpressions(base)) {
                auto v = e.as<VarNode>();
                if (v && !(v->role == VarRole::Size || v->role == VarRole::Stride ||
                           (v->role == VarRole::Counter && v->axis >= 0)))
                    return "";
            }
        }
        staged_ = waiting_ = true;
        const std::string array = buffer_name(*st->buffer), field = buffer_name(*load->buffer);
        const std::string at = is_const_value(base, 0) ? field : fmt::format("&{}[{}]", field, print(base));
        return fmt::format("{}loom::stage_row({}, {}, {}, {}, {});\n", pad, array, at, n->int_value, print(rank_),
                           print(count_));
    }
    static std::vector<Expr> add_terms(const Expr& e) {
        auto b = e.as<BinaryNode>();
        if (!b || b->op != BinaryOp::Add) return {e};
        std::vector<Expr> terms = add_terms(b->a);
        terms.push_back(b->b);
        return terms;
    }
    static Expr add(Expr a, Expr b) { return BinaryNode::make(BinaryOp::Add, a, b); }
    static Expr mul(Expr a, Expr b) { return BinaryNode::make(BinaryOp::Mul, a, b); }
    static bool contains_cooperative_loop(const Stmt& s) {
        struct Find : IRVisitor {
            bool found = false;
            void visit_For(const ForNode* f) override {
                found |= f->kind == ForKind::Cooperative;
                IRVisitor::visit_For(f);
            }
        } find;
        find.visit(s);
        return find.found;
    }

    std::int64_t tile_floats_ = 0; ///< of a warp's part of the chains' tile
    std::map<const BufferInfo*, StagedShape> staged_weights_; ///< staged_weight_shapes
    Expr rank_, count_; ///< thread_in_block and threads_per_block, when a cooperative loop needs them
    bool declared_shared_ = false;
    bool staged_ = false; ///< a staging copy was printed: include stage.cuh
    bool lanes_ = false;  ///< lanes were loaded or stored: include lanes.cuh
    bool warps_ = false;  ///< a warp reduction was printed: include warp.cuh
    bool fast_tanh_ = false; ///< tanh under fast_math was printed: include fast_math.cuh
    bool grid_ = false;   ///< a reduction across blocks was printed: include grid.cuh
    bool mma_ = false;    ///< a chain of layers on tensor cores was printed: include mma.cuh
    std::string scratch_; ///< the `__device__` scratch arrays, at file scope
    bool waiting_ = false; ///< a staging copy was printed since the last barrier: wait there
};

} // namespace

void print_cuda(LoweredKernel& kernel) {
    kernel.source = wrap_long_lines(CudaPrinter(kernel).kernel_source());
}

} // namespace loom::ir
