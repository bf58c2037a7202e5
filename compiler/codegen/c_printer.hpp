// The C-family printer base shared by the code generators: unique readable names, C literals,
// math functions per type, loads, stores, declarations, guards and loops, the header comment and
// the grouped signature. A target printer (CUDA, C++ for the CPU) supplies type names, thread
// indices, special float literals, loop pragmas and the function qualifiers.
#pragma once

#include "compiler/codegen/c_names.hpp"
#include "compiler/ir/printer.hpp"
#include "compiler/lower.hpp"

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace loom::ir {

/// `source` with every line longer than `width` columns broken where C allows (never inside a
/// string, never a preprocessor line): code at the loosest-binding operator or comma that fits,
/// continued 8 columns deeper; a comment at the same places, continued as `//` indented by 4; a
/// trailing comment moves above its line. Deterministic, and changes only whitespace (and the
/// `//` that a wrapped comment repeats).
std::string wrap_long_lines(const std::string& source, std::size_t width = 100);

class CFamilyPrinter : public ExprPrinter {
public:
    /// Names the kernel parameters (filling KernelParam::name) so locals never shadow them.
    explicit CFamilyPrinter(LoweredKernel& kernel);

    /// The statements of `s`, indented by `indent` levels of 4 spaces.
    std::string print_stmt(const Stmt& s, int indent);

protected:
    /// The comment block at the top of every generated file: loom version, kernel and
    /// `target_label`, options, iteration space, fields, launch description.
    std::string header(std::string_view target_label) const;
    /// `qualifiers void name(...)` with one line per parameter group (pointers, sizes, strides,
    /// scalars); fills KernelParam::c_type: `[const ]T* __restrict__` or `const T`.
    std::string signature(std::string_view qualifiers);
    /// The parameters, each rendered by `item(param, position)`, one line per group, the lines
    /// joined by `separator` (the signature's layout, shared by the C++ entry point).
    std::string grouped_params(const std::function<std::string(KernelParam&, std::size_t)>& item,
                               std::string_view separator);

    /// A unique, valid identifier close to `hint` (a suffix _1, _2, ... when taken).
    std::string unique_name(const std::string& hint);
    std::string name_of(const void* key, const std::string& hint);
    /// A buffer's name in the code: its field's (the parameter's) for a field's buffer.
    std::string buffer_name(const ir::BufferInfo& b);

    // Target hooks.
    std::string type_name_of(ScalarType t) override = 0;
    /// The suffix that gives an integer literal exactly the type type_name_of(Int64) spells, so
    /// that overloaded calls (min, max, loom_min) resolve exactly: "LL" for `long long`.
    virtual std::string int64_suffix();
    /// The abs function whose argument and result have exactly the type of an int64 (so that
    /// overloaded calls around it resolve): "llabs" for `long long`.
    virtual std::string int64_abs_name();
    /// inf and nan, which C has no literal for.
    virtual std::string special_float(double value, ScalarType t) = 0;
    /// The math function's name for arguments of type t (sqrtf / sqrt, ...).
    virtual std::string math_name(MathFn fn, ScalarType t);
    virtual std::string min_max_name(BinaryOp op, ScalarType t);
    /// The kernel function's name in the source: the kernel's name (CUDA looks it up by it).
    virtual std::string function_name();
    /// Printed between `void` and the kernel's name (`__maxnreg__(64) `), or "".
    virtual std::string function_attributes();
    /// A pragma line (without indentation) to print above `loop`, or "" for none.
    virtual std::string loop_pragma(const ir::ForNode* loop);
    /// Lines printed at the end of `loop`'s body (indented by `pad`), or "".
    virtual std::string loop_body_end(const ir::ForNode* loop, const std::string& pad);
    /// One parameter as declared in the signature; c_type and name are set.
    virtual std::string param_declaration(const KernelParam& p);
    /// Printed before `const T name = value;`: `[[maybe_unused]] ` for a variable the body never
    /// reads, else "".
    virtual std::string declaration_prefix(const ir::VarNode* var);

    std::string var_name(const ir::VarNode* v) override;
    std::string literal(const ir::ConstNode* c) override;
    int precedence(const Expr& e) override;
    void counter(const ir::CounterNode* c, std::string& out) override;
    void field_access(const ir::FieldAccessNode* a, std::string& out) override;
    void buffer_load(const ir::BufferLoadNode* l, std::string& out) override;
    void block_thread(const ir::BlockThreadNode* t, std::string& out) override;
    void warp_reduce(const ir::WarpReduceNode* r, std::string& out) override;
    /// `T name[N];` for a local array; shared arrays are the CUDA printer's.
    virtual std::string allocate(const ir::AllocateNode* a, const std::string& pad);
    /// `array[index] = value;` (or `+=` for an accumulation); a tf32 chain's weight array
    /// stores its values rounded (round_tf32).
    virtual std::string buffer_store(const ir::BufferStoreNode* st, const std::string& pad);
    /// `value` (a float expression) rounded to tf32 as cvt.rna.tf32.f32 rounds: each printer's
    /// helper. The staged weights of a tf32 chain hold tf32 values, rounded once per block as
    /// they are staged, not in every warp's fragment loads.
    virtual std::string round_tf32(const std::string& value) = 0;
    /// Whether `b` is a tf32 chain's staged weight array, whose stores round (no plain copy).
    bool holds_tf32(const ir::BufferInfo* b) { return tf32_weights().count(b) > 0; }
    /// A block-wide barrier; only the CUDA printer has one.
    virtual std::string barrier(const std::string& pad, bool warp);
    /// The last block's part of a reduction across blocks (LastBlockNode); the CUDA and C++
    /// printers each spell it.
    virtual std::string last_block(const ir::LastBlockNode* n, int indent);
    /// A chain of layers on tensor cores (MmaChainNode): warps with mma.sync on CUDA, loops over
    /// the same staged arrays in C++.
    virtual std::string mma_chain(const ir::MmaChainNode* n, int indent) = 0;
    /// `[](float v) -> float { return ...; }`: the layer's activation as a function of one float.
    std::string activation_lambda(const ir::DenseLayer& l);
    /// A base pointer at a field's cell; only the CUDA printer has them (point_at_cells).
    virtual std::string base_pointer(const ir::BasePointerNode* n, const std::string& pad);
    /// A load's or store's element index: a lone int64 literal within int32 without its suffix.
    std::string element_index(const Expr& index);
    /// `if (c) {a} else {b}` for the complementary pair a, b (see print_stmt's Block).
    std::string if_else(const ir::IfThenNode* a, const ir::IfThenNode* b, int indent);
    /// Lanes loaded or stored at once (VectorLoad, VectorStore); only the CUDA printer has them.
    virtual std::string lanes(const ir::StmtNode* s, const std::string& pad);
    /// `pragma` (if any), then `for (T var = first; var < stop; var += step) { body }`; what the
    /// loop declares is named in its scope only (CNames::mark).
    std::string c_loop(const ir::ForNode* loop, const Expr& first, const Expr& step,
                       const std::string& pragma, int indent);
    /// A loop bound to the GPU (ForKind::GpuGrid, Cooperative); only the CUDA printer has them.
    virtual std::string bound_loop(const ir::ForNode* loop, int indent);
    void call(const ir::CallNode* c, std::string& out) override;
    void binary(const ir::BinaryNode* b, std::string& out) override;
    /// Conversions to and from float16 and bfloat16 through loom's helpers; others as C casts.
    void cast(const ir::CastNode* c, std::string& out) override;
    static bool is_16_bit_float(ScalarType t) { return t == ScalarType::Float16 || t == ScalarType::BFloat16; }
    /// Whether the kernel printed so far, or its parameters, name a 16-bit float type.
    bool prints_16_bit_floats() const;

    LoweredKernel& kernel_;
    CNames names_; ///< the parameters' names (name_parameters), then the locals'
    std::set<const ir::VarNode*> read_; ///< the variables the body reads
    /// Whether the printed code names loom::half or loom::bfloat16 (the helpers' header, the
    /// CPU's prelude); set by type_name_of's users through uses_type.
    bool uses_16_bit_floats_ = false;

private:
    /// The staged weight arrays of the kernel's tf32 chains (found on first use).
    const std::set<const ir::BufferInfo*>& tf32_weights();
    std::optional<std::set<const ir::BufferInfo*>> tf32_weights_;
};

} // namespace loom::ir
