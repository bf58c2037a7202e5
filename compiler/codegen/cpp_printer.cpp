#include "compiler/codegen/cpp_printer.hpp"

#include "compiler/codegen/c_printer.hpp"
#include "compiler/ir/visitor.hpp"
#include "runtime/embedded_templates.hpp"

#include <loom/errors.hpp>
#include <loom/kernel_spec.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <cstdint>
#include <set>
#include <type_traits>
#include <utility>

namespace loom::ir {

std::string cpp_type_name(ScalarType t) {
    switch (t) {
    case ScalarType::Bool: return "bool";
    case ScalarType::Int32: return "int32_t";
    case ScalarType::Int64: return "int64_t";
    case ScalarType::Float16: return "loom::half"; // the prelude's (software conversions)
    case ScalarType::BFloat16: return "loom::bfloat16";
    case ScalarType::Float32: return "float";
    case ScalarType::Float64: return "double";
    }
    return "?";
}

namespace {

class CppPrinter : public CFamilyPrinter {
public:
    using CFamilyPrinter::CFamilyPrinter;

    std::string kernel_source() {
        // The body first: it names the locals and tells which helpers are used.
        std::string body = print_stmt(kernel_.body, 1);
        std::string sig = signature("static");
        std::string entry_point = entry();
        return header("CPU, C++ with OpenMP") + prelude() + sig + "{\n" + body + "}\n\n" + entry_point;
    }

protected:
    std::string type_name_of(ScalarType t) override {
        uses_16_bit_floats_ = uses_16_bit_floats_ || is_16_bit_float(t);
        return cpp_type_name(t);
    }

    // int64_t is `long` on LP64 (Linux, where 3LL would be a long long, another type) and
    // `long long` elsewhere; the kernel is compiled for the host loom runs on.
    std::string int64_suffix() override { return std::is_same_v<std::int64_t, long> ? "L" : "LL"; }
    // Likewise llabs returns a long long, which loom_max(int32_t) and loom_max(int64_t) would
    // both take as well: labs where int64_t is a long.
    std::string int64_abs_name() override {
        return std::is_same_v<std::int64_t, long> ? "labs" : "llabs";
    }

    std::string special_float(double v, ScalarType t) override {
        const bool f32 = t == ScalarType::Float32;
        if (std::isnan(v)) return f32 ? "__builtin_nanf(\"\")" : "__builtin_nan(\"\")";
        std::string inf = f32 ? "__builtin_inff()" : "__builtin_inf()";
        return v > 0 ? inf : "-" + inf;
    }

    void thread_index(const ThreadIndexNode*, std::string&) override {
        throw InternalError("a thread index reached the C++ printer; the CPU target keeps its "
                            "loops (map_to_cpu), it does not run map_to_gpu");
    }

    void call(const CallNode* c, std::string& out) override {
        // C has no rsqrt: (1 / sqrt(x)), parenthesized, so primary as any call.
        if (c->fn == MathFn::Rsqrt) {
            const bool f32 = c->type == ScalarType::Float32;
            out += f32 ? "(1.0f / " : "(1.0 / ";
            emit_call(f32 ? "sqrtf" : "sqrt", {&c->args[0]}, out);
            out += ')';
            return;
        }
        CFamilyPrinter::call(c, out);
    }

    std::string min_max_name(BinaryOp op, ScalarType t) override {
        if (is_float(t)) return CFamilyPrinter::min_max_name(op, t);
        helpers_.insert({op, t}); // C has no integer min and max: the prelude defines them
        return op == BinaryOp::Min ? "loom_min" : "loom_max";
    }

    std::string loop_pragma(const ForNode* f) override {
        switch (f->kind) {
        case ForKind::Serial: return "";
        case ForKind::Parallel: return "#pragma omp parallel for";
        case ForKind::Vectorized: return "#pragma omp simd";
        case ForKind::ParallelVectorized: return "#pragma omp parallel for simd";
        // A layer's loops: the compiler unrolls small constant trip counts by itself.
        case ForKind::Unrolled:
        case ForKind::Rolled: return "";
        case ForKind::GpuGrid:
        case ForKind::Cooperative:
        case ForKind::GpuBlock:
        case ForKind::GpuThread: return ""; // bound_loop prints these
        }
        return "";
    }

    // The CPU runs each block with one thread that does the work of all the block's threads: a
    // cooperative loop runs every iteration, then the thread loops run one after the other, and
    // the barrier between has nothing to wait for. Blocks (tiles) are loops too, the outermost
    // one spread over OpenMP threads. A grid loop never reaches the CPU (map_to_cpu keeps its
    // loops in memory order, and a tiled kernel is bound to blocks and threads).
    std::string bound_loop(const ForNode* f, int indent) override {
        if (f->kind == ForKind::GpuGrid) return CFamilyPrinter::bound_loop(f, indent);
        const bool parallel = f->kind == ForKind::GpuBlock && block_loops_ == 0;
        block_loops_ += f->kind == ForKind::GpuBlock;
        std::string out = c_loop(f, f->start, f->step, parallel ? "#pragma omp parallel for" : "", indent);
        block_loops_ -= f->kind == ForKind::GpuBlock;
        return out;
    }
    std::string barrier(const std::string& pad, bool) override {
        return pad + "// (barrier: on the CPU one thread ran all of the block's threads above)\n";
    }
    // A shared array is one per block: declared in the block loop, so each OpenMP thread has its
    // own; staged buffers are declared before any loop, one per call, shared by the threads.
    // A reduction's scratch (partials, ticket) is one per call, on its stack: zero, so the
    // ticket starts its count there.
    std::string allocate(const AllocateNode* a, const std::string& pad) override {
        return fmt::format("{}{} {}[{}]{};\n", pad, type_name_of(a->buffer->type),
                           buffer_name(*a->buffer), a->buffer->size(), a->buffer->grid_scratch ? " = {0}" : "");
    }
    std::string round_tf32(const std::string& value) override {
        tf32_ = true;
        return "loom_to_tf32(" + value + ")";
    }
    // A chain of layers on tensor cores, as the GPU computes it up to the order of the float32
    // sums: the same staged (rounded, padded) weights and biases, each layer's inputs rounded.
    std::string mma_chain(const MmaChainNode* n, int indent) override {
        if (n->stream) throw InternalError("C++ printer: a chain's inputs stream only on CUDA (converge_warps)");
        const std::string pad(std::size_t(indent) * 4, ' '), in = pad + "    ";
        tf32_ = tf32_ || n->tf32();
        const std::string round = n->tf32()                             ? "loom_to_tf32({})"
                                  : n->operand == ScalarType::BFloat16 ? "loom::to_float(loom::to_bfloat16({}))"
                                                                       : "loom::to_float(loom::to_half({}))";
        // 16-bit weights widen; tf32 ones were rounded as they were staged (round_tf32).
        const std::string weight = n->tf32() ? "{}" : "loom::to_float({})";
        std::string out = pad + "{\n";
        out += fmt::format("{}float loom_x0[{}];\n", in, n->k_pad(0));
        // Inputs of the operand type (narrow_chain_io) are rounded already.
        const std::string first = buffer_name(*n->input) + "[loom_k]";
        out += fmt::format("{}for (int loom_k = 0; loom_k < {}; ++loom_k) loom_x0[loom_k] = loom_k < {} ? {} : 0.0f;\n", in, n->k_pad(0),
                           n->layers[0].inputs,
                           !n->tf32() && n->input->type == n->operand ? "loom::to_float(" + first + ")"
                                                                      : fmt::format(fmt::runtime(round), first));
        for (std::size_t l = 0; l < n->layers.size(); ++l) {
            const bool last = l + 1 == n->layers.size();
            out += fmt::format("{}float loom_x{}[{}];\n", in, l + 1, n->n_pad(l));
            out += fmt::format("{}for (int loom_n = 0; loom_n < {}; ++loom_n) {{\n", in, n->n_pad(l));
            out += fmt::format("{}    float loom_sum = {}[loom_n];\n", in, buffer_name(*n->biases[l]));
            const std::string w = fmt::format("{}[loom_n * {} + loom_k]", buffer_name(*n->weights[l]), n->row_stride(l));
            out += fmt::format("{}    for (int loom_k = 0; loom_k < {}; ++loom_k) loom_sum += {} * loom_x{}[loom_k];\n",
                               in, n->k_pad(l), fmt::format(fmt::runtime(weight), w), l);
            out += fmt::format("{}    const float loom_value = ({})(loom_sum);\n", in, activation_lambda(n->layers[l]));
            out += fmt::format("{}    loom_x{}[loom_n] = {};\n", in, l + 1,
                               last ? std::string("loom_value") : fmt::format(fmt::runtime(round), "loom_value"));
            out += in + "}\n";
        }
        // Outputs of the operand type (narrow_chain_io) are rounded to it here.
        const std::string last = fmt::format("loom_x{}[loom_n]", n->layers.size());
        const std::string value = n->output->type == ScalarType::Float32 ? last
                                  : n->output->type == ScalarType::BFloat16 ? "loom::to_bfloat16(" + last + ")"
                                                                             : "loom::to_half(" + last + ")";
        out += fmt::format("{}for (int loom_n = 0; loom_n < {}; ++loom_n) {}[loom_n] = {};\n", in, n->layers.back().outputs,
                           buffer_name(*n->output), value);
        return out + pad + "}\n";
    }

    // The blocks run on OpenMP threads: each takes a ticket (acquire-release, so the last one
    // sees every block's partials), and the thread that takes the last runs the body.
    std::string last_block(const LastBlockNode* n, int indent) override {
        const std::string pad(std::size_t(indent) * 4, ' ');
        std::string cond = fmt::format("__atomic_add_fetch(&{}[0], 1, __ATOMIC_ACQ_REL) == {}",
                                       buffer_name(*n->ticket), print(n->blocks));
        const std::size_t scope = names_.mark();
        std::string body = print_stmt(n->body, indent + 1);
        names_.release(scope);
        return fmt::format("{}if ({}) {{\n{}{}}}\n", pad, cond, body, pad);
    }

    // A literal slice may leave a size unread: say so rather than have the host compiler warn
    // (-Wunused-parameter; NVRTC does not warn about parameters).
    std::string param_declaration(const KernelParam& p) override {
        bool unread = p.var.defined() && !read_.count(p.var.as<VarNode>());
        return (unread ? "[[maybe_unused]] " : "") + CFamilyPrinter::param_declaration(p);
    }

private:
    std::string prelude() const {
        std::string out = "#include <math.h>\n#include <stdint.h>\n#include <stdlib.h>\n\n";
        if (prints_16_bit_floats()) out += half_prelude();
        // cvt.rna.tf32.f32: to nearest with ties away from zero (sign and magnitude: add half of
        // the 13 dropped bits' unit, then drop them), infinities and NaNs as they are.
        if (tf32_)
            out += "static inline float loom_to_tf32(float v) {\n"
                   "    uint32_t b;\n"
                   "    __builtin_memcpy(&b, &v, 4);\n"
                   "    if ((b & 0x7f800000u) != 0x7f800000u) b = (b + 0x1000u) & 0xffffe000u;\n"
                   "    __builtin_memcpy(&v, &b, 4);\n"
                   "    return v;\n"
                   "}\n\n";
        for (auto [op, t] : helpers_) {
            std::string type = cpp_type_name(t);
            const bool min = op == BinaryOp::Min;
            out += fmt::format(
                "static inline {0} loom_{1}({0} a, {0} b) {{ return a {2} b ? a : b; }}\n", type,
                min ? "min" : "max", min ? "<" : ">");
        }
        return helpers_.empty() ? out : out + "\n";
    }

    /// loom::half and loom::bfloat16 for the CPU: the bit conversions the GPU's slow paths and
    /// the host's loom::half use (templates/loom/float16_bits.cuh, pasted: the host compiler has
    /// no include path), under the names the CUDA kernel calls (loom/half.cuh).
    static std::string half_prelude() {
        std::string bits;
        for (const auto& [name, text] : embedded_templates())
            if (name == "loom/float16_bits.cuh") bits = text;
        if (bits.empty()) throw InternalError("the template loom/float16_bits.cuh is not embedded");
        if (std::size_t at = bits.find("#pragma once\n"); at != std::string::npos) bits.erase(at, 13);
        return bits +
               "\nnamespace loom {\n"
               "struct half { uint16_t bits; };\n"
               "struct bfloat16 { uint16_t bits; };\n"
               "static inline float to_float(half h) { return bits16::float_from_half(h.bits); }\n"
               "static inline float to_float(bfloat16 b) { return bits16::float_from_bfloat16(b.bits); }\n"
               "// From float too: float to double is exact, so one rounding.\n"
               "static inline half to_half(double v) { return {bits16::half_from_double(v)}; }\n"
               "static inline bfloat16 to_bfloat16(double v) { return {bits16::bfloat16_from_double(v)}; }\n"
               "} // namespace loom\n\n";
    }

    /// The kernel itself is `static void loom_kernel_<name>(...)`: a loom-owned name that no
    /// library defines, and not exported, so a kernel may be named like any C library or OpenMP
    /// symbol (memcpy, GOMP_parallel, tanhf) without taking its place.
    std::string function_name() override { return host_kernel_symbol(kernel_.name); }

    /// `loom_kernel_<name>_entry(void* const* args)`, the library's only exported symbol:
    /// unpacks each parameter from its slot, calls the kernel.
    std::string entry() {
        const std::string args = "args"; // the callee's name starts with loom_kernel_
        std::string unpacked = grouped_params(
            [&](KernelParam& p, std::size_t i) {
                if (p.role == ParamRole::FieldPointer)
                    return fmt::format("*({}{}* const*) {}[{}]", p.read_only ? "const " : "",
                                       cpp_type_name(p.type), args, i);
                return fmt::format("*(const {}*) {}[{}]", cpp_type_name(p.type), args, i);
            },
            ",\n        ");
        return fmt::format(
            "// The runtime's entry point: args[i] points to the 8-byte slot of parameter i.\n"
            "extern \"C\" void {0}(void* const* {1})\n"
            "{{\n"
            "    {2}(\n"
            "        {3});\n"
            "}}\n",
            host_entry_symbol(kernel_.name), args, function_name(), unpacked);
    }

    std::set<std::pair<BinaryOp, ScalarType>> helpers_;
    bool tf32_ = false; ///< a chain on tf32 operands: the prelude defines loom_to_tf32
    int block_loops_ = 0; ///< GpuBlock loops around the one printing
};

} // namespace

std::string host_kernel_symbol(const std::string& kernel_name) {
    return "loom_kernel_" + kernel_name;
}

void print_cpp(LoweredKernel& kernel) {
    kernel.source = wrap_long_lines(CppPrinter(kernel).kernel_source());
}

} // namespace loom::ir
