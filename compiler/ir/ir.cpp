#include "compiler/ir/ir.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>

#include <cstdint>
#include <vector>

namespace loom::ir {

void throw_too_deep(int depth, const char* what) {
    throw UserError(fmt::format(
        "expression too deep: {} would nest it {} levels deep, but loom accepts at most {} "
        "(loom::max_expression_depth), since the compiler walks expressions recursively. Add long "
        "sums as a balanced tree with loom::sum(terms) (depth about log2 of the count), or split "
        "the expression into several assignments through temporaries, e.g. "
        "`Expr t = ac.subexpression(\"t\", first_half);` then use t",
        what, depth, max_expression_depth));
}

std::string_view op_name(UnaryOp op) {
    return op == UnaryOp::Neg ? "-" : "!";
}

std::string_view op_name(BinaryOp op) {
    switch (op) {
    case BinaryOp::Add:
        return "+";
    case BinaryOp::Sub:
        return "-";
    case BinaryOp::Mul:
        return "*";
    case BinaryOp::Div:
        return "/";
    case BinaryOp::Mod:
        return "%";
    case BinaryOp::Min:
        return "min";
    case BinaryOp::Max:
        return "max";
    case BinaryOp::Eq:
        return "==";
    case BinaryOp::Ne:
        return "!=";
    case BinaryOp::Lt:
        return "<";
    case BinaryOp::Le:
        return "<=";
    case BinaryOp::Gt:
        return ">";
    case BinaryOp::Ge:
        return ">=";
    case BinaryOp::And:
        return "&&";
    case BinaryOp::Or:
        return "||";
    }
    return "?";
}

std::string_view fn_name(MathFn fn) {
    switch (fn) {
    case MathFn::Sqrt:
        return "sqrt";
    case MathFn::Rsqrt:
        return "rsqrt";
    case MathFn::Exp:
        return "exp";
    case MathFn::Log:
        return "log";
    case MathFn::Pow:
        return "pow";
    case MathFn::Sin:
        return "sin";
    case MathFn::Cos:
        return "cos";
    case MathFn::Tan:
        return "tan";
    case MathFn::Tanh:
        return "tanh";
    case MathFn::Erf:
        return "erf";
    case MathFn::Abs:
        return "abs";
    case MathFn::Floor:
        return "floor";
    case MathFn::Ceil:
        return "ceil";
    case MathFn::Fma:
        return "fma";
    }
    return "?";
}

std::string_view reduce_op_name(ReduceOp op) {
    switch (op) {
    case ReduceOp::Sum: return "sum";
    case ReduceOp::Max: return "max";
    case ReduceOp::Min: return "min";
    }
    return "?";
}

std::string_view for_kind_name(ForKind k) {
    switch (k) {
    case ForKind::Serial:
        return "serial";
    case ForKind::Parallel:
        return "parallel";
    case ForKind::Vectorized:
        return "vectorized";
    case ForKind::ParallelVectorized:
        return "parallel, vectorized";
    case ForKind::Unrolled:
        return "unrolled";
    case ForKind::Rolled:
        return "rolled";
    case ForKind::GpuGrid:
        return "gpu grid";
    case ForKind::Cooperative:
        return "cooperative";
    case ForKind::GpuBlock:
        return "gpu block";
    case ForKind::GpuThread:
        return "gpu thread";
    case ForKind::GpuWarp:
        return "gpu warp";
    case ForKind::WarpLane:
        return "warp lane";
    }
    return "?";
}

bool is_gpu_bound(ForKind k) {
    return k == ForKind::GpuGrid || k == ForKind::Cooperative || k == ForKind::GpuBlock ||
           k == ForKind::GpuThread || k == ForKind::GpuWarp || k == ForKind::WarpLane;
}

bool is_parallel(ForKind k) {
    return k == ForKind::Parallel || k == ForKind::ParallelVectorized;
}
bool is_vectorized(ForKind k) {
    return k == ForKind::Vectorized || k == ForKind::ParallelVectorized;
}

int fn_arity(MathFn fn) {
    if (fn == MathFn::Pow)
        return 2;
    if (fn == MathFn::Fma)
        return 3;
    return 1;
}

bool is_comparison(BinaryOp op) {
    return op >= BinaryOp::Eq && op <= BinaryOp::Ge;
}
bool is_logical(BinaryOp op) {
    return op == BinaryOp::And || op == BinaryOp::Or;
}
bool is_commutative(BinaryOp op) {
    switch (op) {
    case BinaryOp::Add:
    case BinaryOp::Mul:
    case BinaryOp::Min:
    case BinaryOp::Max:
    case BinaryOp::Eq:
    case BinaryOp::Ne:
    case BinaryOp::And:
    case BinaryOp::Or:
        return true;
    default:
        return false;
    }
}

bool is_const_value(const Expr& e, double v) {
    auto c = e.as<ir::ConstNode>();
    return c && c->type != ScalarType::Bool && c->as_double() == v;
}

Offset split_offset(const Expr& e) {
    auto b = e.as<BinaryNode>();
    auto c = b ? b->b.as<ConstNode>() : nullptr;
    if (!c || !is_int(c->type) || (b->op != BinaryOp::Add && b->op != BinaryOp::Sub)) return {e, 0};
    Offset inner = split_offset(b->a);
    inner.k += b->op == BinaryOp::Add ? c->int_value : -c->int_value;
    return inner;
}

namespace {
[[noreturn]] void fail(const char* node, const std::string& why) {
    throw InternalError(fmt::format("ill-formed {} node: {}", node, why));
}
// Literal messages only: the check runs on every node built, so it must not allocate.
void require(bool ok, const char* node, const char* why) {
    if (!ok)
        fail(node, why);
}
void require_defined(const Expr& e, const char* node) {
    require(e.defined(), node, "an operand is undefined");
}
} // namespace

Expr ConstNode::make(ScalarType t, double value, bool weak) {
    if (!is_float(t))
        return make_int(t, static_cast<std::int64_t>(value), weak);
    if (t == ScalarType::Float32)
        value = static_cast<double>(static_cast<float>(value));
    return Expr(std::make_shared<ConstNode>(t, 0, value, weak));
}

Expr ConstNode::make_int(ScalarType t, std::int64_t value, bool weak) {
    if (is_float(t))
        return make(t, static_cast<double>(value), weak);
    if (t == ScalarType::Int32)
        value = static_cast<std::int32_t>(value);
    if (t == ScalarType::Bool)
        value = value != 0;
    return Expr(std::make_shared<ConstNode>(t, value, 0.0, weak));
}

Expr ConstNode::make_bool(bool value) {
    return Expr(std::make_shared<ConstNode>(ScalarType::Bool, value ? 1 : 0, 0.0, false));
}

Expr weak_constant(bool value) { return ConstNode::make_bool(value); }
Expr weak_constant(std::int64_t value) { return ConstNode::make_int(ScalarType::Int64, value, true); }
Expr weak_constant(double value) { return ConstNode::make(ScalarType::Float64, value, true); }

Expr VarNode::make(ScalarType t, std::string name, VarRole role, FieldPtr field, int axis,
                   bool weak) {
    require(!name.empty(), "Var", "empty name");
    require(!weak || role == VarRole::Parameter || role == VarRole::Temporary, "Var",
            "only parameters and temporaries can be untyped (weak)");
    return Expr(std::make_shared<VarNode>(t, std::move(name), role, std::move(field), axis, weak));
}

Expr VarNode::make_index(std::string name, std::int64_t extent) {
    require(!name.empty(), "Var", "empty name");
    require(extent >= 1 && extent <= INT32_MAX, "Var", "index extent outside [1, 2^31 - 1]");
    return Expr(std::make_shared<VarNode>(ScalarType::Int32, std::move(name), VarRole::Index,
                                          nullptr, -1, false, extent));
}

Expr CounterNode::make(int axis) {
    if (axis < 0 || axis > 3)
        fail("Counter", fmt::format("axis {} out of range", axis));
    return Expr(std::make_shared<CounterNode>(axis));
}

Expr FieldAccessNode::make(FieldPtr field, std::vector<int> offsets, std::vector<int> components) {
    require(field != nullptr, "FieldAccess", "no field");
    require(int(offsets.size()) == field->spatial_dims, "FieldAccess", "offset count");
    require(int(components.size()) == field->index_dims(), "FieldAccess", "component count");
    return Expr(std::make_shared<FieldAccessNode>(std::move(field), std::move(offsets),
                                                  std::move(components), std::vector<Expr>{}));
}

Expr FieldAccessNode::make_absolute(FieldPtr field, std::vector<Expr> indices,
                                    std::vector<int> components) {
    require(field != nullptr, "FieldAccess", "no field");
    require(int(indices.size()) == field->spatial_dims, "FieldAccess", "index count");
    require(int(components.size()) == field->index_dims(), "FieldAccess", "component count");
    for (auto& i : indices) {
        require_defined(i, "FieldAccess");
        require(is_int(i.type()), "FieldAccess", "absolute index is not an integer");
    }
    std::vector<int> zeros(std::size_t(field->spatial_dims), 0);
    return Expr(std::make_shared<FieldAccessNode>(std::move(field), std::move(zeros),
                                                  std::move(components), std::move(indices)));
}

Expr FieldAccessNode::make_indexed(const FieldAccessNode* access, std::vector<Expr> vars) {
    require(access != nullptr, "FieldAccess", "no access");
    require(int(vars.size()) == access->field->index_dims(), "FieldAccess", "index variable count");
    for (const Expr& v : vars) {
        auto var = v.as<VarNode>();
        require(var && var->role == VarRole::Index, "FieldAccess",
                "a component index is not an Index variable");
    }
    std::vector<int> zeros(vars.size(), 0);
    return Expr(std::make_shared<FieldAccessNode>(access->field, access->offsets, std::move(zeros),
                                                  access->indices, std::move(vars)));
}

Expr ReduceNode::make(ReduceOp op, Expr var, Expr start, Expr stop, Expr body) {
    auto v = var.as<VarNode>();
    require(v && (v->role == VarRole::Index || v->role == VarRole::LoopIndex), "Reduce",
            "the variable is not an index variable");
    require_defined(start, "Reduce");
    require_defined(stop, "Reduce");
    require_defined(body, "Reduce");
    require(start.type() == var.type() && stop.type() == var.type(), "Reduce",
            "range bounds are not of the variable's type");
    require(body.type() != ScalarType::Bool, "Reduce", "the body is bool");
    return Expr(std::make_shared<ReduceNode>(op, std::move(var), std::move(start), std::move(stop),
                                             std::move(body)));
}

Expr WarpReduceNode::make(BinaryOp op, Expr value) {
    require_defined(value, "WarpReduce");
    require(op == BinaryOp::Add || op == BinaryOp::Mul || op == BinaryOp::Max || op == BinaryOp::Min,
            "WarpReduce", "not a sum, product, max or min");
    require(is_numeric(value.type()), "WarpReduce", "the value is not a number");
    return Expr(std::make_shared<WarpReduceNode>(op, std::move(value)));
}

Expr BlockThreadNode::make(ScalarType type, bool count) {
    require(is_int(type), "BlockThread", "type is not an integer");
    return Expr(std::make_shared<BlockThreadNode>(type, count));
}

Expr ThreadIndexNode::make(ScalarType index_type, int dim, GpuIndex which) {
    require(is_int(index_type) && dim >= 0 && dim < 3, "ThreadIndex", "bad type or dim");
    return Expr(std::make_shared<ThreadIndexNode>(index_type, dim, which));
}

namespace {
const Expr& require_flat(const std::vector<Expr>& indices, const char* node) {
    if (indices.size() != 1)
        throw InternalError(fmt::format("{}: not flat ({} coordinates); run flatten_addresses first",
                                        node, indices.size()));
    return indices[0];
}
/// Checks the indices of a load or store of `buffer`: one linear index, or one per axis of its
/// shape, all integers; a literal index must lie inside a literal shape.
void require_buffer_indices(const BufferInfo& buffer, const std::vector<Expr>& indices, const char* node) {
    require(!indices.empty() && (indices.size() == 1 || int(indices.size()) == buffer.dims()), node,
            "neither one linear index nor one index per axis of the buffer");
    for (std::size_t a = 0; a < indices.size(); ++a) {
        require_defined(indices[a], node);
        require(is_int(indices[a].type()), node, "index is not an integer");
        auto c = indices[a].as<ConstNode>();
        // Only an allocation's extents bound a literal: a field's reads are checked by the
        // analysis, and a view's coordinates are offsets from where it points (-1 is fine).
        if (!c || buffer.scope == Scope::Global) continue;
        const std::int64_t extent = indices.size() == 1 ? buffer.elements() : [&] {
            auto e = buffer.shape[a].as<ConstNode>();
            return e ? e->int_value : std::int64_t(-1);
        }();
        require(c->int_value >= 0 && (extent < 0 || c->int_value < extent), node, "constant index out of range");
    }
}
} // namespace

const Expr& BufferLoadNode::index() const { return require_flat(indices, "BufferLoad"); }
const Expr& BufferStoreNode::index() const { return require_flat(indices, "BufferStore"); }

Expr BufferLoadNode::make(BufferPtr buffer, std::vector<Expr> indices) {
    require(buffer != nullptr, "BufferLoad", "no buffer");
    require_buffer_indices(*buffer, indices, "BufferLoad");
    return Expr(std::make_shared<BufferLoadNode>(std::move(buffer), std::move(indices)));
}

Expr UnaryNode::make(UnaryOp op, Expr a) {
    require_defined(a, "Unary");
    if (op == UnaryOp::Not)
        require(a.type() == ScalarType::Bool, "Unary", "! needs a bool operand");
    else
        require(is_numeric(a.type()), "Unary", "- needs a numeric operand");
    ScalarType t = a.type();
    return Expr(std::make_shared<UnaryNode>(t, op, std::move(a)));
}

Expr BinaryNode::make(BinaryOp op, Expr a, Expr b) {
    require_defined(a, "Binary");
    require_defined(b, "Binary");
    if (a.type() != b.type())
        fail("Binary", fmt::format("operand types differ: {} {} {}", type_name(a.type()),
                                   op_name(op), type_name(b.type())));
    ScalarType t = a.type();
    if (is_logical(op)) {
        require(t == ScalarType::Bool, "Binary", "logical operator on non-bool operands");
    } else {
        require(is_numeric(t), "Binary", "arithmetic or comparison on bool operands");
        if (is_comparison(op))
            t = ScalarType::Bool;
    }
    return Expr(std::make_shared<BinaryNode>(t, op, std::move(a), std::move(b)));
}

Expr SelectNode::make(Expr cond, Expr if_true, Expr if_false) {
    require_defined(cond, "Select");
    require_defined(if_true, "Select");
    require_defined(if_false, "Select");
    require(cond.type() == ScalarType::Bool, "Select", "condition is not bool");
    require(if_true.type() == if_false.type(), "Select", "branch types differ");
    return Expr(
        std::make_shared<SelectNode>(std::move(cond), std::move(if_true), std::move(if_false)));
}

Expr CallNode::make(MathFn fn, std::vector<Expr> args) {
    if (int(args.size()) != fn_arity(fn))
        fail("Call", fmt::format("{} takes {} arguments", fn_name(fn), fn_arity(fn)));
    for (auto& a : args) {
        require_defined(a, "Call");
        require(a.type() == args[0].type(), "Call", "argument types differ");
    }
    ScalarType t = args[0].type();
    bool int_ok = fn == MathFn::Abs || fn == MathFn::Floor || fn == MathFn::Ceil;
    if (!(is_float(t) || (int_ok && is_int(t))))
        fail("Call", fmt::format("{} on {}", fn_name(fn), type_name(t)));
    return Expr(std::make_shared<CallNode>(t, fn, std::move(args)));
}

Expr CastNode::make(ScalarType t, Expr value) {
    require_defined(value, "Cast");
    return Expr(std::make_shared<CastNode>(t, std::move(value)));
}

Stmt AssignNode::make(Expr lhs, Expr rhs) {
    require_defined(lhs, "Assign");
    require_defined(rhs, "Assign");
    require(lhs.is<FieldAccessNode>() || lhs.is<VarNode>(), "Assign",
            "lhs is not a field access or variable");
    return Stmt(std::make_shared<AssignNode>(std::move(lhs), std::move(rhs)));
}

Stmt DeclareNode::make(Expr var, Expr value) {
    require(var.is<VarNode>(), "Declare", "not a variable");
    require_defined(value, "Declare");
    if (var.type() != value.type())
        fail("Declare", fmt::format("{} declared as {} from a {} value", var.as<VarNode>()->name,
                                    type_name(var.type()), type_name(value.type())));
    return Stmt(std::make_shared<DeclareNode>(std::move(var), std::move(value)));
}

Stmt BufferStoreNode::make(BufferPtr buffer, std::vector<Expr> indices, Expr value) {
    require(buffer != nullptr, "BufferStore", "no buffer");
    require_buffer_indices(*buffer, indices, "BufferStore");
    require_defined(value, "BufferStore");
    if (value.type() != buffer->type)
        fail("BufferStore", fmt::format("storing {} into {} buffer {}", type_name(value.type()),
                                        type_name(buffer->type), buffer->name));
    return Stmt(std::make_shared<BufferStoreNode>(std::move(buffer), std::move(indices), std::move(value)));
}

Stmt AllocateNode::make(BufferPtr buffer, Stmt body) {
    require(buffer != nullptr && buffer->elements() > 0, "Allocate", "no buffer, or not of a literal shape");
    require(buffer->scope == Scope::Local || buffer->scope == Scope::Shared || buffer->grid_scratch, "Allocate",
            "only local and shared buffers are allocated by a kernel, besides grid scratch");
    require(body.defined(), "Allocate", "no body");
    return Stmt(std::make_shared<AllocateNode>(std::move(buffer), std::move(body)));
}

Stmt allocate_all(const std::vector<BufferPtr>& buffers, Stmt body) {
    for (auto b = buffers.rbegin(); b != buffers.rend(); ++b) body = AllocateNode::make(*b, std::move(body));
    return body;
}

Stmt inside_allocations(const Stmt& s, std::vector<BufferPtr>& buffers) {
    Stmt inner = s;
    while (auto a = inner.as<AllocateNode>()) {
        buffers.push_back(a->buffer);
        inner = a->body;
    }
    return inner;
}

Stmt StmtList::build() const {
    std::vector<Stmt> tail; // the statements after the last allocation seen, walking backwards
    for (auto it = items_.rbegin(); it != items_.rend(); ++it) {
        if (it->stmt.defined()) {
            tail.insert(tail.begin(), it->stmt);
            continue;
        }
        Stmt body = tail.size() == 1 ? tail[0] : BlockNode::make(std::move(tail));
        tail = {AllocateNode::make(it->buffer, std::move(body))};
    }
    return BlockNode::make(std::move(tail));
}

Stmt BarrierNode::make(bool warp) { return Stmt(std::make_shared<BarrierNode>(warp)); }

Stmt BlockNode::make(std::vector<Stmt> stmts) {
    for (auto& s : stmts)
        require(s.defined(), "Block", "undefined statement");
    return Stmt(std::make_shared<BlockNode>(std::move(stmts)));
}

Stmt ForNode::make(Expr var, Expr start, Expr stop, Expr step, Stmt body, int axis, ForKind kind,
                   int dim) {
    require(var.is<VarNode>(), "For", "loop variable is not a Var");
    for (auto* e : {&start, &stop, &step}) {
        require_defined(*e, "For");
        require(e->type() == var.type(), "For", "bound type differs from the loop variable");
    }
    require(body.defined(), "For", "no body");
    const bool bound = kind == ForKind::GpuGrid || kind == ForKind::GpuBlock || kind == ForKind::GpuThread ||
                       kind == ForKind::GpuWarp || kind == ForKind::WarpLane;
    require(bound ? dim >= 0 && dim < 3 : dim == -1, "For",
            "a GpuGrid, GpuBlock, GpuThread, GpuWarp or WarpLane loop needs a hardware dimension 0-2, "
            "and only they have one");
    if (kind == ForKind::GpuWarp || kind == ForKind::WarpLane)
        require(dim == 0 && is_const_value(start, 0) && is_const_value(step, 1) && stop.is<ConstNode>() &&
                    (kind == ForKind::GpuWarp || is_const_value(stop, 32)),
                "For", "warps and lanes are along x, over [0, n) in steps of 1, n constant (32 lanes)");
    return Stmt(std::make_shared<ForNode>(std::move(var), std::move(start), std::move(stop),
                                          std::move(step), std::move(body), axis, kind, dim));
}

Stmt IfThenNode::make(Expr cond, Stmt then_case) {
    require_defined(cond, "IfThen");
    require(cond.type() == ScalarType::Bool, "IfThen", "condition is not bool");
    require(then_case.defined(), "IfThen", "no body");
    return Stmt(std::make_shared<IfThenNode>(std::move(cond), std::move(then_case)));
}

namespace {
void check_lanes(const BufferPtr& lanes, const Expr& first, const char* node, int offset, int width) {
    require(lanes != nullptr, node, "no lanes");
    require(lanes->scope == Scope::Local, node, "lanes not in local memory");
    require(width == 2 || width == 4 || width == 8, node, "lanes not 2, 4 or 8 wide");
    require(width * bit_width(lanes->type) <= 128, node, "lanes wider than 16 bytes");
    require(offset >= 0 && offset + width <= lanes->elements(), node, "lanes outside their array");
    auto load = as_field_load(first);
    require(load != nullptr, node, "first is not a load of a field");
    require(load->buffer->type == lanes->type, node, "lanes of another type than the field");
}
} // namespace

Stmt VectorLoadNode::make(BufferPtr lanes, Expr first, int offset, int width) {
    if (width == 0 && lanes) width = int(lanes->elements());
    check_lanes(lanes, first, "VectorLoad", offset, width);
    return Stmt(std::make_shared<VectorLoadNode>(std::move(lanes), std::move(first), offset, width));
}

Stmt VectorStoreNode::make(Expr first, BufferPtr lanes) {
    check_lanes(lanes, first, "VectorStore", 0, lanes ? int(lanes->elements()) : 0);
    return Stmt(std::make_shared<VectorStoreNode>(std::move(first), std::move(lanes)));
}

Stmt BasePointerNode::make(BufferPtr buffer, BufferPtr view, std::vector<Expr> at, bool writes) {
    require(buffer != nullptr && view != nullptr, "BasePointer", "no buffer");
    require(buffer->scope == Scope::Global && buffer->field && view->scope == Scope::Global &&
                !view->field && view->type == buffer->type && view->dims() == buffer->dims(),
            "BasePointer", "the pointer is not a view of a field's buffer");
    require(at.size() == 1 || int(at.size()) == buffer->dims(), "BasePointer",
            "neither coordinates nor a linear index");
    for (const Expr& e : at) require_defined(e, "BasePointer");
    return Stmt(std::make_shared<BasePointerNode>(std::move(buffer), std::move(view), std::move(at), writes));
}

Stmt LastBlockNode::make(Expr blocks, std::shared_ptr<const BufferInfo> ticket, Stmt body) {
    require(blocks.defined() && blocks.type() == ScalarType::Int32, "LastBlock", "blocks must be int32");
    require(ticket && ticket->scope == Scope::Global && ticket->grid_scratch && ticket->type == ScalarType::Int32,
            "LastBlock", "the ticket must be an int32 grid scratch buffer");
    require(body.defined(), "LastBlock", "no body");
    return Stmt(std::make_shared<LastBlockNode>(std::move(blocks), std::move(ticket), std::move(body)));
}

Stmt StageNode::make(int index, Stmt body) {
    require(index >= 1, "Stage", "index below 1");
    require(body.defined(), "Stage", "no body");
    return Stmt(std::make_shared<StageNode>(index, std::move(body)));
}

Stmt CommentNode::make(std::string text) {
    return Stmt(std::make_shared<CommentNode>(std::move(text)));
}

std::string_view scope_name(Scope s) {
    switch (s) {
    case Scope::Global: return "global";
    case Scope::Shared: return "shared";
    case Scope::Local: return "local";
    case Scope::Fragment: return "fragment";
    }
    return "?";
}

std::int64_t BufferInfo::elements() const {
    std::int64_t n = 1;
    for (const Expr& e : shape) {
        auto c = e.as<ConstNode>();
        if (!c || c->int_value < 0) return -1;
        n = c->int_value != 0 && n > INT64_MAX / c->int_value ? INT64_MAX : n * c->int_value;
    }
    return shape.empty() ? -1 : n;
}

int BufferInfo::size() const {
    const std::int64_t n = elements();
    if (n < 0 || n > INT32_MAX)
        throw InternalError(fmt::format("buffer {} has no literal shape of at most 2^31 - 1 elements", name));
    return int(n);
}

BufferPtr make_global_buffer(FieldPtr field, std::vector<Expr> shape, std::vector<Expr> strides) {
    require(field != nullptr, "Buffer", "a global buffer without its field");
    require(int(shape.size()) == field->array_dims() && strides.size() == shape.size(), "Buffer",
            "not an extent and a stride per array axis of the field");
    for (const Expr& s : strides) require(s.defined() && is_int(s.type()), "Buffer", "a stride is not an integer");
    auto b = std::make_shared<BufferInfo>();
    b->name = field->name;
    b->type = field->type;
    b->scope = Scope::Global;
    b->shape = std::move(shape);
    b->strides = std::move(strides);
    b->field = std::move(field);
    return b;
}

BufferPtr make_view(const BufferPtr& of, std::string name) {
    require(of != nullptr && of->scope == Scope::Global, "Buffer", "a view of a buffer that is not global");
    auto v = std::make_shared<BufferInfo>(*of);
    v->name = std::move(name);
    v->field = nullptr;
    v->base = of;
    return v;
}

const BufferLoadNode* as_field_load(const Expr& e) {
    auto l = e.as<BufferLoadNode>();
    return l && l->buffer->scope == Scope::Global ? l : nullptr;
}

const BufferStoreNode* as_field_store(const Stmt& s) {
    auto st = s.as<BufferStoreNode>();
    return st && st->buffer->scope == Scope::Global ? st : nullptr;
}

std::shared_ptr<BufferInfo> make_buffer(std::string name, ScalarType type, Scope scope,
                                        const std::vector<std::int64_t>& shape) {
    require(!shape.empty(), "Buffer", "no extents");
    auto b = std::make_shared<BufferInfo>();
    b->name = std::move(name);
    b->type = type;
    b->scope = scope;
    std::vector<std::int64_t> strides(shape.size(), 1);
    for (std::size_t a = shape.size(); a-- > 1;) strides[a - 1] = strides[a] * shape[a];
    for (std::size_t a = 0; a < shape.size(); ++a) {
        require(shape[a] >= 1, "Buffer", "an extent below 1");
        b->shape.push_back(ConstNode::make_int(ScalarType::Int64, shape[a]));
        b->strides.push_back(ConstNode::make_int(ScalarType::Int64, strides[a]));
    }
    return b;
}

std::string BufferInfo::describe() const {
    std::string extents;
    for (const Expr& e : shape) {
        auto c = e.as<ConstNode>();
        extents += (extents.empty() ? "" : "][") + (c ? std::to_string(c->int_value) : std::string("?"));
    }
    return fmt::format("{} {}[{}] ({})", type_name(type), name, extents, scope_name(scope));
}

} // namespace loom::ir

namespace loom::detail {

namespace {
/// Nodes whose last reference went while an outer release_last was destroying a node.
struct Released {
    std::vector<std::shared_ptr<const ir::ExprNode>> exprs;
    std::vector<std::shared_ptr<const ir::StmtNode>> stmts;
};
/// The list of the outermost release_last on this thread, or null. A plain pointer (no
/// destructor), so handles destroyed during static destruction still find it valid.
thread_local Released* active = nullptr;

template <typename Node>
void release(std::shared_ptr<const Node>& node, std::vector<std::shared_ptr<const Node>> Released::*list) {
    if (active) {
        // An operand of a node being destroyed: queued, its own operands are not touched yet.
        (active->*list).push_back(std::move(node));
        return;
    }
    Released released;
    active = &released;
    node.reset(); // queues its operands
    while (!released.exprs.empty() || !released.stmts.empty()) {
        if (!released.exprs.empty()) {
            auto next = std::move(released.exprs.back());
            released.exprs.pop_back();
            next.reset();
        } else {
            auto next = std::move(released.stmts.back());
            released.stmts.pop_back();
            next.reset();
        }
    }
    active = nullptr;
}
} // namespace

void release_last(std::shared_ptr<const ir::ExprNode>& node) noexcept { release(node, &Released::exprs); }
void release_last(std::shared_ptr<const ir::StmtNode>& node) noexcept { release(node, &Released::stmts); }

} // namespace loom::detail
