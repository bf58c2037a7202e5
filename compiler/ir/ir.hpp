// The IR: immutable, typed nodes in namespace loom::ir, behind the value handles Expr and Stmt
// (loom/detail/ir_handle.hpp, which users see).
//
// Adding a node is one line in the lists of loom/detail/ir_handle.hpp plus its struct here; the
// kind enums, the visitor, the mutator and the dispatch are generated from the lists. Nodes are built only through their
// checking `make` functions, so a node that exists is well typed.
#pragma once

#include <loom/detail/ir_handle.hpp>
#include <loom/field_info.hpp>
#include <loom/types.hpp>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

namespace loom::ir {

enum class UnaryOp : std::uint8_t { Neg, Not };
enum class BinaryOp : std::uint8_t {
    Add, Sub, Mul, Div, Mod, Min, Max,  // arithmetic: operands and result share one type
    Eq, Ne, Lt, Le, Gt, Ge,             // comparisons: numeric operands, bool result
    And, Or                             // logic: bool operands and result
};
enum class MathFn : std::uint8_t {
    Sqrt, Rsqrt, Exp, Log, Pow, Sin, Cos, Tan, Tanh, Erf, Abs, Floor, Ceil, Fma
};

/// How a loop runs. Parallel: its iterations are spread over threads (OpenMP `parallel for`);
/// Vectorized: its iterations are independent, so the compiler may run them in SIMD lanes
/// (`omp simd`). Only the CPU target sets anything but Serial (map_to_cpu).
/// Unrolled: a loop with constant bounds inside one cell (a layer's rows and columns), fully
/// unrolled so the local arrays it indexes stay in registers. Rolled: a loop inside one cell
/// that stays a loop (a wide layer's inputs, lower_layers): `#pragma unroll 1` in CUDA.
///
/// Loops bound to the GPU (map_to_gpu, stage_buffers_in_shared) say who runs which iteration:
/// GpuGrid: one iteration per thread of the launch along hardware dimension `dim` (x, y, z):
///   the thread with global index g = blockIdx * blockDim + threadIdx runs start + g * step, if
///   that is below stop. The launch grid is read off these loops (launch_grid.hpp).
/// Cooperative: the threads of a block share the iterations, each running every
///   (threads per block)-th one from its rank in the block on; a barrier after it is block-wide.
/// GpuBlock: over [0, n), one iteration per block of the launch along `dim` (blockIdx): the
///   launch has exactly n blocks there. What it holds runs once per block (shared tiles).
/// GpuThread: over [0, n), n constant, one iteration per thread of the block along `dim`
///   (threadIdx): the block has exactly n threads there. It holds no barrier.
/// The CPU runs GpuBlock, GpuThread and Cooperative loops as loops (the outermost GpuBlock loop
/// in parallel), one block after the other and the threads of a block one after the other: the
/// same result, because a barrier only ever stands between the thread loops of a block.
/// GpuWarp and WarpLane split a block's threads along x into warps and the 32 lanes of each:
/// `for warp in [0, W) # gpu warp` runs on the threads of warps 0..W-1 (threadIdx.x / 32), and a
/// `for lane in [0, 32) # warp lane` inside it on each of the warp's 32 threads (threadIdx.x %
/// 32), all of them, so that warp collectives (WarpReduce) may stand in its body.
enum class ForKind : std::uint8_t {
    Serial, Parallel, Vectorized, ParallelVectorized, Unrolled, Rolled, GpuGrid, Cooperative,
    GpuBlock, GpuThread, GpuWarp, WarpLane
};

/// The threads of a warp: a WarpLane loop's extent, and what every warp form counts in.
inline constexpr int kWarpSize = 32;

std::string_view op_name(UnaryOp op);   // "-", "!"
std::string_view op_name(BinaryOp op);  // "+", "<=", "min", ...
std::string_view fn_name(MathFn fn);    // "sqrt", ...
std::string_view for_kind_name(ForKind k); // "serial", "parallel", "vectorized", ...
bool is_gpu_bound(ForKind k);              // GpuGrid, Cooperative, GpuBlock, GpuThread, GpuWarp, WarpLane
bool is_parallel(ForKind k);
bool is_vectorized(ForKind k);
int fn_arity(MathFn fn);
bool is_comparison(BinaryOp op);
bool is_logical(BinaryOp op);
bool is_commutative(BinaryOp op);

/// What a variable stands for. Variables are identified by object; the name is only a hint that
/// the printer makes unique.
enum class VarRole : std::uint8_t {
    Temporary,   ///< a named subexpression of the DSL
    CseTemp,     ///< introduced by common-subexpression elimination
    Parameter,   ///< a scalar kernel argument
    Size,        ///< the iteration-space size along `axis` (a kernel argument)
    Stride,      ///< the element stride of `field` along array axis `axis` (a kernel argument)
    Counter,     ///< the loop counter of spatial axis `axis`
    LoopIndex,   ///< the counter of a loop inside one cell (a layer's row or column)
    Index,       ///< a DSL index variable (loom::IndexVar) over [0, extent): the variable of a
                 ///< reduction, or of an assignment that writes every element of an index axis
    Accumulator, ///< a reduction's running value: declared mutable, updated in its loop
    Placeholder, ///< stands for a value a pass substitutes (a layer's sum, in its activation)
};

/// Where a buffer lives. Global: device memory, a field's elements (a kernel argument) or the
/// kernel's own scratch (BufferInfo::grid_scratch: a reduction across blocks' partials). Shared:
/// per GPU block, filled by its threads together (tiles, staged weights, a reduction's
/// partials). Local: per thread (per cell), registers when every index is a constant after
/// unrolling. Fragment: a warp's share of a matrix tile in mma registers (reserved for tensor
/// cores; no pass makes one yet and the printers refuse it).
enum class Scope : std::uint8_t { Global, Shared, Local, Fragment };
std::string_view scope_name(Scope s); // "global", "shared", "local", "fragment"

/// A layer's activation as an expression of one variable: `value` computes it from `input` (a
/// Placeholder Var that stands for each output's sum, replaced when the layer is lowered). An
/// undefined `value` is the identity. Built by the frontend from any nn::Activation.
struct LayerActivation {
    std::string name; ///< "relu", "leaky_relu(0.1)": for the IR notation and comments
    Expr input, value;
    bool identity() const { return !value.defined(); }
};

/// A fully connected layer, out_i = act(b_i + sum_j W_ij in_j) (bias first, j ascending), without
/// its arrays: what a Dense statement computes and what defines a layer's output array.
struct DenseLayer {
    int outputs = 0, inputs = 0;
    ScalarType type = ScalarType::Float32;
    /// The weights: constants (outputs x inputs, row-major), or else a fixed-shape buffer
    /// [outputs, inputs] read at run time (Dense::runtime).
    std::vector<double> weights;
    FieldPtr weight_field;
    /// The bias, optional: constants (outputs values), or a fixed-shape buffer [outputs].
    std::vector<double> bias;
    FieldPtr bias_field;
    LayerActivation activation;
    bool runtime_weights() const { return weight_field != nullptr; }
    /// "Dense 4 -> 4, relu, weights hidden_W, bias hidden_b" (constants say "constant weights").
    std::string describe() const;
};

/// How the frontend defines an array (a layer's output): the layer and its input values. The
/// array holds it (BufferInfo::definition), so every load of any element reaches it; analyze_kernel
/// places the statements that compute the array before the first assignment that reads it. The
/// definition does not name its own array (that would be a cycle of owners): the analysis adds
/// it, and it reads a previous layer's array through loads of it (so no definition holds an
/// BufferPtr, and a chain of any length is destroyed through handles, in constant stack).
struct ArrayDefinition {
    /// The layer's input values. The loads of one whole defined array, in order (a chain's
    /// previous layer), are read from that array; other values fill a new local array first.
    std::vector<Expr> inputs;
    DenseLayer layer;
};

/// A buffer: elements of one type in a scope, with a multi-dimensional shape and element strides
/// as expressions (literals for the buffers the passes allocate; kernel arguments for a field's
/// global memory, once fields become buffers). Today: a layer's activations and lanes (Local), a
/// tile, a staged weight buffer or a reduction's partials (Shared). Identified by object; the
/// name is a hint that the printer makes unique.
struct BufferInfo {
    std::string name;
    ScalarType type = ScalarType::Float32;
    Scope scope = Scope::Local;
    /// Extents, slowest first (a plain array has one), and the element stride of each axis:
    /// row-major over `shape` for the buffers make_buffer makes.
    std::vector<Expr> shape, strides;
    /// A Global buffer's field: the kernel argument whose memory it is (the printer names the
    /// buffer after it). Null for a view into it (a base pointer) and in other scopes.
    FieldPtr field;
    /// A view's buffer (make_view); null otherwise.
    std::shared_ptr<const BufferInfo> base;
    /// The field whose memory a Global buffer or a view of one is; null in other scopes.
    const FieldInfo* field_of() const { return field ? field.get() : base ? base->field_of() : nullptr; }
    std::size_t shared_offset = 0; ///< byte offset in the block's dynamic shared memory
    /// A Shared buffer declared as a static `__shared__` array (no offset): what staging does
    /// while the whole kernel's shared memory fits in 48 KB, so NVVM can prove the alignment
    /// of its rows and load them as float4 (it does not for windows into dynamic memory).
    bool static_shared = false;
    /// A Global buffer the kernel owns (no field): a reduction across blocks' partials and ticket,
    /// which keep their values from block to block of a launch. CUDA declares it at file scope
    /// (`__device__`, zero when the module loads), the CPU on the kernel's stack.
    bool grid_scratch = false;
    /// What computes the buffer, for the arrays the frontend makes (layers); null for the
    /// buffers of the passes. analyze_kernel turns it into statements, and its body reads
    /// copies of the arrays without it (verify_lowered checks that none is left).
    std::shared_ptr<const ArrayDefinition> definition;
    int dims() const { return int(shape.size()); }
    /// The number of elements, the product of a literal shape; -1 if an extent is not a literal.
    std::int64_t elements() const;
    /// elements() of a buffer that must have a literal shape (an allocation): InternalError if
    /// it has not, or if it exceeds INT32_MAX.
    int size() const;
    std::string describe() const;  ///< "float32 dense0[16] (local)", "float32 t[10][34] (shared)"
};
using BufferPtr = std::shared_ptr<const BufferInfo>;

/// The Global buffer of `field`: its shape (one extent per array axis, spatial then index
/// axes; an extent may be undefined where only the launch knows it) and element strides.
BufferPtr make_global_buffer(FieldPtr field, std::vector<Expr> shape, std::vector<Expr> strides);
/// A view of a Global buffer: its type and strides, no field, named `name`, whose element 0 is
/// where a BasePointer points it.
BufferPtr make_view(const BufferPtr& of, std::string name);

/// A buffer `name` of `type` in `scope` with literal extents (slowest first, each >= 1) and
/// row-major literal strides; mutable, for the pass that makes it to set what else it needs.
std::shared_ptr<BufferInfo> make_buffer(std::string name, ScalarType type, Scope scope,
                                        const std::vector<std::int64_t>& shape);

/// A local array named `name` defined as `layer` applied to `inputs` (one value per input, all
/// of the layer's type); checks both, as DenseNode::make does, and throws InternalError.
BufferPtr make_layer_array(std::string name, std::vector<Expr> inputs, DenseLayer layer);


/// The depth of a node over these operands: 1 + the deepest (undefined ones count 0).
template <typename... E>
int depth_above(const E&... operands) {
    int d = 0;
    ((d = operands.depth() > d ? operands.depth() : d), ...);
    return d + 1;
}
inline int depth_above(const std::vector<Expr>& operands) {
    int d = 0;
    for (const Expr& e : operands) d = e.depth() > d ? e.depth() : d;
    return d + 1;
}

/// A literal. Ints and bools keep their value in `int_value`, floats in `float_value`.
/// A weak constant comes from a plain C++ number and takes the type of the other operand when it
/// meets a strongly typed value, like a numpy scalar.
struct ConstNode : ExprNode {
    static constexpr ExprKind static_kind = ExprKind::Const;
    ConstNode(ScalarType t, std::int64_t i, double f, bool w)
        : ExprNode(static_kind, t), int_value(i), float_value(f), weak(w) {}
    const std::int64_t int_value;
    const double float_value;
    const bool weak;
    /// The value as double, whatever the type.
    double as_double() const { return is_float(type) ? float_value : double(int_value); }
    static Expr make(ScalarType t, double value, bool weak = false);
    static Expr make_int(ScalarType t, std::int64_t value, bool weak = false);
    static Expr make_bool(bool value);
};

/// A weak (untyped) variable is an untyped parameter, `param("omega")`, or the temporary of a
/// subexpression made of plain numbers: like a weak constant it takes the type of what it meets
/// (the frontend marks each such use as Cast(type, var)); its `type` is only nominal (float64).
/// create_kernel replaces it by a typed variable before lowering (frontend/resolve_types.cpp).
struct VarNode : ExprNode {
    static constexpr ExprKind static_kind = ExprKind::Var;
    VarNode(ScalarType t, std::string n, VarRole r, FieldPtr f, int a, bool w = false,
            std::int64_t e = 0)
        : ExprNode(static_kind, t), name(std::move(n)), role(r), field(std::move(f)), axis(a),
          weak(w), extent(e) {}
    const std::string name;
    const VarRole role;
    const FieldPtr field; ///< for Stride
    const int axis;       ///< for Size, Stride and Counter; -1 otherwise
    const bool weak;      ///< untyped until create_kernel resolves it (Parameter, Temporary)
    const std::int64_t extent; ///< for Index: the variable runs over [0, extent); 0 otherwise
    static Expr make(ScalarType t, std::string name, VarRole role, FieldPtr field = nullptr,
                     int axis = -1, bool weak = false);
    /// An Index variable (int32) over [0, extent), extent >= 1.
    static Expr make_index(std::string name, std::int64_t extent);
};

/// The DSL's spatial counter of `axis` (x is axis 0). Replaced by a loop counter during lowering.
struct CounterNode : ExprNode {
    static constexpr ExprKind static_kind = ExprKind::Counter;
    explicit CounterNode(int a) : ExprNode(static_kind, ScalarType::Int64), axis(a) {}
    const int axis;
    static Expr make(int axis);
};

/// A read or write of a field, before lowering to address arithmetic: at a relative offset from
/// the current cell, or (absolute) at integer coordinates computed by expressions, `W.at({i, j})`.
/// An absolute access has all-zero `offsets`; only reads may be absolute.
/// Components are literals, or (`component_indices`) chosen by Index variables: `x(k)` reads
/// element k of x's index axis, inside a reduction over k or an assignment that writes y(k).
struct FieldAccessNode : ExprNode {
    static constexpr ExprKind static_kind = ExprKind::FieldAccess;
    FieldAccessNode(FieldPtr f, std::vector<int> o, std::vector<int> c, std::vector<Expr> i,
                    std::vector<Expr> ci = {})
        : ExprNode(static_kind, f->type, std::max(depth_above(i), depth_above(ci))),
          field(std::move(f)), offsets(std::move(o)), components(std::move(c)),
          indices(std::move(i)), component_indices(std::move(ci)) {}
    const FieldPtr field;
    const std::vector<int> offsets;    ///< one per spatial axis
    const std::vector<int> components; ///< one per index axis (zeros where component_indices)
    const std::vector<Expr> indices;   ///< absolute coordinates, one per spatial axis; or empty
    /// One Index variable per index axis, or empty (the literal `components` apply).
    const std::vector<Expr> component_indices;
    bool absolute() const { return !indices.empty(); }
    bool indexed_components() const { return !component_indices.empty(); }
    /// This access with its components chosen by the Index variables `vars` (one per index axis).
    static Expr make_indexed(const FieldAccessNode* access, std::vector<Expr> vars);
    static Expr make(FieldPtr field, std::vector<int> offsets, std::vector<int> components);
    /// An absolute access: `indices` are integer expressions, one per spatial axis.
    static Expr make_absolute(FieldPtr field, std::vector<Expr> indices, std::vector<int> components);
};

/// Which index of a thread ThreadIndexNode reads.
enum class GpuIndex : std::uint8_t {
    Global, ///< blockIdx * blockDim + threadIdx: the thread's index in the whole launch
    Block,  ///< blockIdx: the block's index in the launch
    Thread, ///< threadIdx: the thread's index in its block
};

/// A thread's index along hardware dimension `dim` (0 = x), global (blockIdx * blockDim +
/// threadIdx), or of its block, or in its block.
struct ThreadIndexNode : ExprNode {
    static constexpr ExprKind static_kind = ExprKind::ThreadIndex;
    ThreadIndexNode(ScalarType t, int d, GpuIndex w) : ExprNode(static_kind, t), dim(d), which(w) {}
    const int dim;
    const GpuIndex which;
    static Expr make(ScalarType index_type, int dim, GpuIndex which = GpuIndex::Global);
};

/// The thread's rank inside its GPU block (threadIdx flattened, x fastest), or with `count` the
/// number of threads in the block. Used by cooperative copies into shared memory.
struct BlockThreadNode : ExprNode {
    static constexpr ExprKind static_kind = ExprKind::BlockThread;
    BlockThreadNode(ScalarType t, bool c) : ExprNode(static_kind, t), count(c) {}
    const bool count;
    static Expr make(ScalarType type, bool count);
};

/// A read of `buffer`: at coordinates, one per axis of its shape, or (flat) at one linear element
/// index; flatten_addresses turns coordinates into the index by the buffer's strides. A field's
/// access is a load of its Global buffer (lower_iteration_space), at one coordinate per array
/// axis (its spatial axes, then its index axes). What computes a layer's array is a statement of
/// its own (the array carries its ArrayDefinition until analyze_kernel places those statements).
struct BufferLoadNode : ExprNode {
    static constexpr ExprKind static_kind = ExprKind::BufferLoad;
    BufferLoadNode(BufferPtr b, std::vector<Expr> i)
        : ExprNode(static_kind, b->type, depth_above(i)), buffer(std::move(b)), indices(std::move(i)) {}
    const BufferPtr buffer;
    const std::vector<Expr> indices;
    bool flat() const { return indices.size() == 1; }
    /// The linear element index of a flat load; InternalError at coordinates.
    const Expr& index() const;
    static Expr make(BufferPtr buffer, std::vector<Expr> indices);
    static Expr make(BufferPtr buffer, Expr index) { return make(std::move(buffer), std::vector<Expr>{std::move(index)}); }
};

struct UnaryNode : ExprNode {
    static constexpr ExprKind static_kind = ExprKind::Unary;
    UnaryNode(ScalarType t, UnaryOp o, Expr x) : ExprNode(static_kind, t, depth_above(x)), op(o), a(std::move(x)) {}
    const UnaryOp op;
    const Expr a;
    static Expr make(UnaryOp op, Expr a);
};

/// Arithmetic follows C semantics on the operand type: integer division truncates toward zero
/// and Mod takes the sign of the dividend; float Mod is fmod. Division by zero is undefined for
/// ints and IEEE for floats.
struct BinaryNode : ExprNode {
    static constexpr ExprKind static_kind = ExprKind::Binary;
    BinaryNode(ScalarType t, BinaryOp o, Expr x, Expr y)
        : ExprNode(static_kind, t, depth_above(x, y)), op(o), a(std::move(x)), b(std::move(y)) {}
    const BinaryOp op;
    const Expr a, b;
    static Expr make(BinaryOp op, Expr a, Expr b);
};

struct SelectNode : ExprNode {
    static constexpr ExprKind static_kind = ExprKind::Select;
    SelectNode(Expr c, Expr t, Expr f)
        : ExprNode(static_kind, t.type(), depth_above(c, t, f)), cond(std::move(c)), if_true(std::move(t)), if_false(std::move(f)) {}
    const Expr cond, if_true, if_false;
    static Expr make(Expr cond, Expr if_true, Expr if_false);
};

/// A math function on floats (Abs, Floor, Ceil also on ints). All arguments share the type.
struct CallNode : ExprNode {
    static constexpr ExprKind static_kind = ExprKind::Call;
    CallNode(ScalarType t, MathFn f, std::vector<Expr> a)
        : ExprNode(static_kind, t, depth_above(a)), fn(f), args(std::move(a)) {}
    const MathFn fn;
    const std::vector<Expr> args;
    static Expr make(MathFn fn, std::vector<Expr> args);
};

/// What a reduction combines its terms with.
enum class ReduceOp : std::uint8_t { Sum, Max, Min };
std::string_view reduce_op_name(ReduceOp op); // "sum", "max", "min"

/// `op` over var in [start, stop) of `body`: sum(k, x(k)). The body may read `var`, which is bound
/// here and nowhere else. Lowered by lower_reductions to an accumulator and a loop.
struct ReduceNode : ExprNode {
    static constexpr ExprKind static_kind = ExprKind::Reduce;
    ReduceNode(ReduceOp o, Expr v, Expr a, Expr s, Expr b)
        : ExprNode(static_kind, b.type(), depth_above(a, s, b)), op(o), var(std::move(v)),
          start(std::move(a)), stop(std::move(s)), body(std::move(b)) {}
    const ReduceOp op;
    const Expr var;          ///< an Index variable
    const Expr start, stop;  ///< integers, of var's type
    const Expr body;
    static Expr make(ReduceOp op, Expr var, Expr start, Expr stop, Expr body);
};

/// `value` combined by `op` (Add, Mul, Max or Min) over the 32 lanes of a warp, every lane getting
/// the result: in rounds with lane distances 16, 8, 4, 2, 1, each lane combines its value with
/// the value of the lane at its index xor the distance (`v op other`), so every lane computes
/// the same sums in the same order, on the GPU (register shuffles) and on the CPU
/// (warp_lockstep). Stands only in the body of a WarpLane loop, outside any condition there.
struct WarpReduceNode : ExprNode {
    static constexpr ExprKind static_kind = ExprKind::WarpReduce;
    WarpReduceNode(BinaryOp o, Expr v) : ExprNode(static_kind, v.type(), depth_above(v)), op(o), value(std::move(v)) {}
    const BinaryOp op;
    const Expr value;
    static Expr make(BinaryOp op, Expr value);
};

/// Conversion with C semantics (float to int truncates toward zero).
struct CastNode : ExprNode {
    static constexpr ExprKind static_kind = ExprKind::Cast;
    CastNode(ScalarType t, Expr v) : ExprNode(static_kind, t, depth_above(v)), value(std::move(v)) {}
    const Expr value;
    static Expr make(ScalarType t, Expr value);
};

// ---- statements ----

/// A DSL assignment before lowering: lhs is a FieldAccess (a write) or a Temporary Var.
struct AssignNode : StmtNode {
    static constexpr StmtKind static_kind = StmtKind::Assign;
    AssignNode(Expr l, Expr r) : StmtNode(static_kind), lhs(std::move(l)), rhs(std::move(r)) {}
    const Expr lhs, rhs;
    static Stmt make(Expr lhs, Expr rhs);
};

/// Defines a local constant `var` (a Var) from `value`.
struct DeclareNode : StmtNode {
    static constexpr StmtKind static_kind = StmtKind::Declare;
    DeclareNode(Expr v, Expr x) : StmtNode(static_kind), var(std::move(v)), value(std::move(x)) {}
    const Expr var, value;
    static Stmt make(Expr var, Expr value);
};

/// Writes `value` into `buffer`, at coordinates or at one linear index, as BufferLoadNode.
struct BufferStoreNode : StmtNode {
    static constexpr StmtKind static_kind = StmtKind::BufferStore;
    BufferStoreNode(BufferPtr b, std::vector<Expr> i, Expr v)
        : StmtNode(static_kind), buffer(std::move(b)), indices(std::move(i)), value(std::move(v)) {}
    const BufferPtr buffer;
    const std::vector<Expr> indices;
    const Expr value;
    bool flat() const { return indices.size() == 1; }
    const Expr& index() const; ///< as BufferLoadNode::index
    static Stmt make(BufferPtr buffer, std::vector<Expr> indices, Expr value);
    static Stmt make(BufferPtr buffer, Expr index, Expr value) {
        return make(std::move(buffer), std::vector<Expr>{std::move(index)}, std::move(value));
    }
};

/// Allocates `buffer` (uninitialised, Local or Shared or grid scratch, of a literal shape) for `body`: the
/// statements that use it, so that its lifetime is visible in the IR. The printers declare it
/// and then print the body in the same C block.
struct AllocateNode : StmtNode {
    static constexpr StmtKind static_kind = StmtKind::Allocate;
    AllocateNode(BufferPtr b, Stmt s) : StmtNode(static_kind), buffer(std::move(b)), body(std::move(s)) {}
    const BufferPtr buffer;
    const Stmt body;
    static Stmt make(BufferPtr buffer, Stmt body);
};

/// `body` inside one Allocate per buffer, the first outermost (`body` itself if there is none).
Stmt allocate_all(const std::vector<BufferPtr>& buffers, Stmt body);
/// The statement inside the Allocates that `s` begins with, their buffers appended to
/// `buffers` outermost first: what a pass that reads a list of statements walks (the list of a
/// cell inside the arrays of its layers), before allocate_all puts them back.
Stmt inside_allocations(const Stmt& s, std::vector<BufferPtr>& buffers);

/// Builds a list of statements in which an allocation covers every statement added after it:
/// `list.add(s0); list.allocate(t); list.add(s1); list.add(s2);` is
/// `{s0; Allocate(t, {s1; s2})}`, which prints as the C it stands for.
class StmtList {
public:
    void add(Stmt s) { items_.push_back({std::move(s), nullptr}); }
    void add(const std::vector<Stmt>& stmts) {
        for (const Stmt& s : stmts) add(s);
    }
    void allocate(BufferPtr buffer) { items_.push_back({Stmt(), std::move(buffer)}); }
    /// Appends `other`: its allocations then cover what it holds and everything added after.
    void add(const StmtList& other) { items_.insert(items_.end(), other.items_.begin(), other.items_.end()); }
    bool empty() const { return items_.empty(); }
    Stmt build() const;

private:
    struct Item {
        Stmt stmt;
        BufferPtr buffer; ///< an allocation, where `stmt` is undefined
    };
    std::vector<Item> items_;
};

/// Every thread of the GPU block waits here (__syncthreads): shared memory is filled. A warp
/// barrier (__syncwarp) orders only the threads of each warp: enough between steps whose
/// writers and readers all lie in one warp (a reduction tree's last steps).
struct BarrierNode : StmtNode {
    static constexpr StmtKind static_kind = StmtKind::Barrier;
    explicit BarrierNode(bool w) : StmtNode(static_kind), warp(w) {}
    const bool warp;
    static Stmt make(bool warp = false);
};

struct BlockNode : StmtNode {
    static constexpr StmtKind static_kind = StmtKind::Block;
    explicit BlockNode(std::vector<Stmt> s) : StmtNode(static_kind), stmts(std::move(s)) {}
    const std::vector<Stmt> stmts;
    static Stmt make(std::vector<Stmt> stmts);
};

/// for (var = start; var < stop; var += step) body. `axis` is the spatial axis it walks (-1 for
/// a helper loop such as the cells of one GPU thread); `kind` says how it runs (ForKind), and
/// `dim` is the hardware dimension (0, 1, 2 for x, y, z) of a GpuGrid loop, -1 otherwise.
struct ForNode : StmtNode {
    static constexpr StmtKind static_kind = StmtKind::For;
    ForNode(Expr v, Expr a, Expr o, Expr s, Stmt b, int ax, ForKind k, int d)
        : StmtNode(static_kind), var(std::move(v)), start(std::move(a)), stop(std::move(o)),
          step(std::move(s)), body(std::move(b)), axis(ax), kind(k), dim(d) {}
    const Expr var, start, stop, step;
    const Stmt body;
    const int axis;
    const ForKind kind;
    const int dim;
    static Stmt make(Expr var, Expr start, Expr stop, Expr step, Stmt body, int axis,
                     ForKind kind = ForKind::Serial, int dim = -1);
};

struct IfThenNode : StmtNode {
    static constexpr StmtKind static_kind = StmtKind::IfThen;
    IfThenNode(Expr c, Stmt t) : StmtNode(static_kind), cond(std::move(c)), then_case(std::move(t)) {}
    const Expr cond;
    const Stmt then_case;
    static Stmt make(Expr cond, Stmt then_case);
};

/// A line of commentary kept in the generated code (the DSL text of each assignment).
struct CommentNode : StmtNode {
    static constexpr StmtKind static_kind = StmtKind::Comment;
    explicit CommentNode(std::string t) : StmtNode(static_kind), text(std::move(t)) {}
    const std::string text;
    static Stmt make(std::string text);
};

/// One stage of a multi-stage kernel (KernelConfig-level `Stages`): its statements run over the
/// whole iteration space after those of every earlier stage, as if each stage were a kernel of
/// its own launched in order. `index` counts from 1. Made by analyze_kernel only when a later
/// stage reads an earlier stage's field at a neighbouring cell; fuse_stages replaces the stages by
/// per-block computation with halos, and no later pass or printer accepts it.
struct StageNode : StmtNode {
    static constexpr StmtKind static_kind = StmtKind::Stage;
    StageNode(int i, Stmt b) : StmtNode(static_kind), index(i), body(std::move(b)) {}
    const int index;
    const Stmt body;
    static Stmt make(int index, Stmt body);
};

/// The end of a reduction across blocks: `body` runs in the block that arrives here last of the
/// `blocks` blocks of the launch (all of its threads), after every block's stores before this
/// point are visible to it; the other blocks skip it. `ticket` (a Global scratch buffer of one
/// int32, zero before the launch) counts the arrivals, and the last block resets it to zero for
/// the next launch. Made by reduce_across_blocks; the CUDA printer spells it
/// `loom::last_block(ticket, blocks)` (templates/loom/grid.cuh), the C++ printer an atomic count
/// over the OpenMP threads that run the blocks.
struct LastBlockNode : StmtNode {
    static constexpr StmtKind static_kind = StmtKind::LastBlock;
    LastBlockNode(Expr n, std::shared_ptr<const BufferInfo> t, Stmt b)
        : StmtNode(static_kind), blocks(std::move(n)), ticket(std::move(t)), body(std::move(b)) {}
    const Expr blocks;
    const std::shared_ptr<const BufferInfo> ticket;
    const Stmt body;
    static Stmt make(Expr blocks, std::shared_ptr<const BufferInfo> ticket, Stmt body);
};

/// Lanes: elements [offset, offset + width) of `lanes` (a local array) get the `width` (2, 4 or 8, at most 16 bytes)
/// consecutive elements of a field that begin at `first` (a load of a Global buffer: the
/// element of the first lane), in one vector load where the address is aligned to them (float4,
/// float2, double2, int4, ...; templates/loom/lanes.cuh) and element by element where it is not.
/// The array's other elements (a stencil's neighbours of the first and last lane) are loaded
/// apart. Made by vectorize_lanes; CUDA only.
struct VectorLoadNode : StmtNode {
    static constexpr StmtKind static_kind = StmtKind::VectorLoad;
    VectorLoadNode(BufferPtr l, Expr f, int o, int w)
        : StmtNode(static_kind), lanes(std::move(l)), first(std::move(f)), offset(o), width(w) {}
    const BufferPtr lanes;
    const Expr first;
    const int offset;
    const int width;
    /// width 0: the whole array, from element 0.
    static Stmt make(BufferPtr lanes, Expr first, int offset = 0, int width = 0);
};

/// The other way: the W elements of `lanes` into the field's W consecutive elements that begin
/// at `first` (a load of a Global buffer that names the element of the first lane).
struct VectorStoreNode : StmtNode {
    static constexpr StmtKind static_kind = StmtKind::VectorStore;
    VectorStoreNode(Expr f, BufferPtr l) : StmtNode(static_kind), first(std::move(f)), lanes(std::move(l)) {}
    const Expr first;
    const BufferPtr lanes;
    static Stmt make(Expr first, BufferPtr lanes);
};

/// A base pointer: `view` (a view of the Global buffer `buffer`, make_view) points at the
/// buffer's element at `at` (coordinates, one per axis, or one linear index after
/// flatten_addresses), for the rest of the enclosing block. Loads and stores of the view are
/// relative to it: `src_c[src_stride_0]` for `src[x + 1, y]`. Made by point_at_cells; CUDA only.
struct BasePointerNode : StmtNode {
    static constexpr StmtKind static_kind = StmtKind::BasePointer;
    BasePointerNode(BufferPtr b, BufferPtr v, std::vector<Expr> a, bool w)
        : StmtNode(static_kind), buffer(std::move(b)), view(std::move(v)), at(std::move(a)), writes(w) {}
    const BufferPtr buffer, view;
    const std::vector<Expr> at;
    const bool writes; ///< the kernel stores to the field (anywhere): neither const nor restrict
    static Stmt make(BufferPtr buffer, BufferPtr view, std::vector<Expr> at, bool writes);
};

/// A fully connected layer over local arrays: output[i] = act(b_i + sum_j W_ij input[j]) for
/// every i. Made by analyze_kernel from a layer's ArrayDefinition (after the Allocate of
/// `output`), lowered to loops by lower_layers; no later pass or printer accepts it.
struct DenseNode : StmtNode {
    static constexpr StmtKind static_kind = StmtKind::Dense;
    DenseNode(BufferPtr o, BufferPtr i, DenseLayer l)
        : StmtNode(static_kind), output(std::move(o)), input(std::move(i)), layer(std::move(l)) {}
    const BufferPtr output, input;
    const DenseLayer layer;
    /// Checks: local arrays of the layer's type and sizes; exactly one kind of weights, of the
    /// right count or fixed shape and type; the same for a bias; the activation a `type` value
    /// of its Placeholder input.
    static Stmt make(BufferPtr output, BufferPtr input, DenseLayer layer);
};

/// Streamed inputs (and outputs) of an MmaChain (CUDA, converge_warps): the chain's inputs are a
/// 16-bit field's components 0 .. K-1 at the warp's 32 consecutive cells, contiguous along the
/// cells. The warp copies them as they lie (cp.async) into its tile, one tile ahead: the copy of
/// the next tile's inputs flies while this tile's layers run. Where the outputs go to such a
/// field too, the last layer writes them through the tile, 16 components at a time, and the warp
/// stores them 16 bytes a lane. Each expression is warp-uniform.
struct ChainStream {
    Expr first;      ///< the input field's load of component 0 at the tile's first cell
    Expr second;     ///< component 1 there (component 0 when K = 1): the component stride
    Expr valid;      ///< cells of this tile in range (32 or fewer at the end; the rest are clamped)
    Expr next;       ///< the load of component 0 at the warp's next tile's first cell
    Expr next_valid; ///< cells of the next tile in range; <= 0 where there is no next tile
    Expr starts;     ///< true at the warp's first tile: no copy was issued for it before
    Expr out_first;  ///< the output field's component 0 at the tile's first cell; undefined if
                     ///< the outputs do not stream (each lane stores its own)
    Expr out_second; ///< its component 1 (component 0 when N = 1)
    bool outputs() const { return out_first.defined(); }
    std::vector<Expr> exprs() const { return {first, second, valid, next, next_valid, starts, out_first, out_second}; }
};

/// A chain of Dense layers on tensor cores (Schedule::tensor_cores): `output` =
/// layers.back()(... layers.front()(input)), each layer's inputs, weights and outputs (but the
/// last layer's) rounded to `operand`, bias and activation applied to the float32 sums. The
/// operand is Float16 or BFloat16 (mma m16n8k16), or Float32 for tf32 (m16n8k8: float32
/// values rounded to 10 bits of mantissa, to nearest with ties away from zero, as
/// cvt.rna.tf32.f32 does). Widths are padded with zeros: each layer's inputs to a multiple of
/// the k-step (16, or 8 for tf32; k_pad), its outputs to the next layer's k-step, the last
/// layer's to 8 (n_pad). Made by lower_layers from consecutive float32 Dense statements with
/// runtime weights, each reading the one before; stage_layer_weights gives it, per layer, the
/// weights in a shared array of n_pad rows of row_stride elements (`weights`: rounded there;
/// tf32 ones are float32 arrays, which the printers round as they store to them) and the biases
/// as float32 n_pad (`biases`), and on CUDA the warps' shared tile (`tile`, float32, shared by
/// all chains: each warp's part as long as the largest chain's tile_floats). The CUDA printer
/// computes it with mma.sync by the 32 lanes of a warp together, a cell per lane (every lane must
/// reach it: converge_warps), the C++ printer as loops over the same arrays.
struct MmaChainNode : StmtNode {
    static constexpr StmtKind static_kind = StmtKind::MmaChain;
    MmaChainNode(BufferPtr o, BufferPtr i, std::vector<DenseLayer> l, ScalarType t,
                 std::vector<BufferPtr> w, std::vector<BufferPtr> b, BufferPtr tl,
                 std::shared_ptr<const ChainStream> st)
        : StmtNode(static_kind), output(std::move(o)), input(std::move(i)), layers(std::move(l)),
          operand(t), weights(std::move(w)), biases(std::move(b)), tile(std::move(tl)), stream(std::move(st)) {}
    const BufferPtr output, input;
    const std::vector<DenseLayer> layers;
    const ScalarType operand;
    const std::vector<BufferPtr> weights, biases; ///< empty until stage_layer_weights
    const BufferPtr tile;                         ///< null until stage_layer_weights (CUDA)
    /// Set by converge_warps where the inputs stream (then `input` and its stores are gone, and
    /// `output` and its reads where the outputs stream too).
    const std::shared_ptr<const ChainStream> stream;

    /// tf32 operands (m16n8k8), float32 in registers and shared memory.
    bool tf32() const { return operand == ScalarType::Float32; }
    /// Bytes of one staged weight (and of a register's share of an operand fragment per value).
    int operand_bytes() const { return tf32() ? 4 : 2; }
    /// Inputs one mma takes: 16 (16-bit operands) or 8 (tf32).
    int k_step() const { return tf32() ? 8 : 16; }
    int k_pad(std::size_t l) const { return (layers[l].inputs + k_step() - 1) / k_step() * k_step(); }
    int n_pad(std::size_t l) const {
        const int m = l + 1 == layers.size() ? 8 : k_step();
        return (layers[l].outputs + m - 1) / m * m;
    }
    /// Elements per row of a staged weight array (and of the tile's input rows). 16-bit: 8 more
    /// than k_pad, so that the 8 rows an ldmatrix reads start 16 bytes apart modulo 128 and fall
    /// into distinct banks. tf32: a stride of 8 modulo 16 words, so that the 64-bit pairs a
    /// half-warp reads (4 rows, 4 pairs each) cover the 32 banks once.
    int row_stride(std::size_t l) const { return tf32() ? k_pad(l) + (k_pad(l) % 16 == 0 ? 8 : 0) : k_pad(l) + 8; }
    /// Inputs that may stream (ChainStream): 16-bit values of the operand type already
    /// (narrow_chain_io).
    bool streamable() const { return !tf32() && input->type == operand; }
    /// float32 words of a warp's tile. Streamed inputs (`stream`, set by converge_warps): their
    /// [k_pad(0)][32 cells] 16-bit buffer, then the outputs' rows; others: 32 rows of the first
    /// layer's inputs (16-bit, or float32 for tf32) or the outputs' rows, one after the other in
    /// the same words. The outputs' rows: 32, of up to 32 outputs at a time (float32, or the
    /// operand's 16 bits in pairs where the outputs are of the operand type and the inputs
    /// stream), each row 4 words longer, for the same reason.
    std::int64_t tile_floats() const { return tile_floats_if(stream != nullptr); }
    /// The most tile_floats() may be once converge_warps has decided whether the inputs stream:
    /// what choose_schedule sizes the block for, before that (after narrow_chain_io, which gives
    /// the inputs that may stream their 16-bit type).
    std::int64_t largest_tile_floats() const { return tile_floats_if(streamable()); }
    std::int64_t tile_floats_if(bool streams) const {
        const int chunk = std::min(n_pad(layers.size() - 1), 32);
        if (streams) return stream_floats() + 32 * ((output->type == operand ? chunk / 2 : chunk) + 4);
        const std::int64_t in = tf32() ? row_stride(0) : row_stride(0) / 2;
        return 32 * std::max<std::int64_t>(in, chunk + 4);
    }
    /// float32 words of the streamed inputs' buffer at the start of the warp's tile.
    std::int64_t stream_floats() const { return std::int64_t(k_pad(0)) * 16; }
    /// Bytes of the staged weights, all layers.
    std::int64_t weight_bytes() const {
        std::int64_t b = 0;
        for (std::size_t l = 0; l < layers.size(); ++l)
            b += std::int64_t(n_pad(l)) * row_stride(l) * operand_bytes();
        return b;
    }
    /// Checks: local arrays of the first layer's inputs and the last layer's outputs, float32 or
    /// of the operand type (narrow_chain_io: the values are the operand's already, or rounded to
    /// it once the chain is done);
    /// layers that chain, each float32 with runtime weights; operand Float16, BFloat16 or
    /// Float32 (tf32); one weight and one bias array per layer or none, as described above.
    static Stmt make(BufferPtr output, BufferPtr input, std::vector<DenseLayer> layers, ScalarType operand,
                     std::vector<BufferPtr> weights = {}, std::vector<BufferPtr> biases = {},
                     BufferPtr tile = nullptr, std::shared_ptr<const ChainStream> stream = nullptr);
};


/// Accessors used everywhere.
inline bool is_const(const Expr& e) { return e.is<ir::ConstNode>(); }
/// `e` as a load of a field's memory (a Global buffer, or a view of one); null otherwise.
const BufferLoadNode* as_field_load(const Expr& e);
/// `s` as a store into a field's memory; null otherwise.
const BufferStoreNode* as_field_store(const Stmt& s);
/// True if `e` is a constant equal to `v`.
bool is_const_value(const Expr& e, double v);
/// `e` as a base plus a literal offset: `base + k` or `base - k` (a chain of them folds: `x + 1 - 3`
/// is x and -2), else `e` itself and 0. How the passes see where an access lies: `counter + k`.
struct Offset {
    Expr base;
    std::int64_t k = 0;
};
Offset split_offset(const Expr& e);

} // namespace loom::ir
