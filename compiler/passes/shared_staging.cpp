#include "compiler/passes/shared_staging.hpp"

#include "compiler/ir/redirect.hpp"
#include "compiler/ir/visitor.hpp"
#include "compiler/passes/choose_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace loom::ir {

namespace {


/// Elements of a fixed-shape field: the product of its spatial and index sizes. Fixed shapes
/// are dense in every layout, so these are the elements from the pointer on.
std::int64_t element_count(const FieldInfo& f) {
    std::int64_t n = 1;
    for (auto s : f.fixed_shape) n *= s;
    return n * f.num_components();
}

/// The shared arrays `body` allocates already: the bytes of the static ones (tiles), each
/// 16-byte aligned, and the end of the dynamic ones (the tensor-core layers' arrays).
struct SharedInUse {
    std::size_t static_bytes = 0, dynamic_end = 0;
};
SharedInUse shared_bytes_of(const Stmt& body) {
    struct Sum : IRVisitor {
        SharedInUse in_use;
        void visit_Allocate(const AllocateNode* a) override {
            const BufferInfo& b = *a->buffer;
            const std::size_t bytes = std::size_t(b.size()) * std::size_t(bit_width(b.type) / 8);
            if (b.scope == Scope::Shared && !b.grid_scratch) {
                if (b.static_shared) in_use.static_bytes += (bytes + 15) / 16 * 16;
                else in_use.dynamic_end = std::max(in_use.dynamic_end, b.shared_offset + bytes);
            }
            IRVisitor::visit_Allocate(a);
        }
    } sum;
    sum.visit(body);
    return sum.in_use;
}

/// Whether `body` reads `buffer` at an element that depends on the cell (an index that reads a
/// spatial counter: a bias at the cell's column, a coarse grid at x / 2): each thread then reads
/// elements of its own, and copying the whole buffer into every block costs more than it saves.
bool read_at_cells(const Stmt& body, const BufferPtr& buffer) {
    for (const Expr& e : subexpressions(body)) {
        auto l = e.as<BufferLoadNode>();
        if (!l || l->buffer != buffer) continue;
        for (const Expr& i : l->indices)
            for (const Expr& s : subexpressions(i))
                if (auto v = s.as<VarNode>(); v && v->role == VarRole::Counter && v->axis >= 0) return true;
    }
    return false;
}

} // namespace

SharedStaging stage_buffers_in_shared(const Stmt& body, const std::vector<BufferPtr>& buffers,
                                      std::size_t budget) {
    SharedStaging out;
    // After the arrays the body has: the tiles' (static) ones, and the dynamic ones, after
    // which these go (the dynamic memory is one block of the launch's size).
    const SharedInUse in_use = shared_bytes_of(body);
    const std::size_t reserved = in_use.static_bytes;
    budget = budget > reserved ? budget - reserved : 0;
    std::size_t used = in_use.dynamic_end; // bytes of dynamic shared memory so far
    // 1. Which buffers fit, and where.
    std::vector<std::pair<BufferPtr, std::shared_ptr<BufferInfo>>> staged;
    for (const BufferPtr& global : buffers) {
        const FieldPtr& f = global->field;
        if (!f->is_fixed() || read_at_cells(body, global)) continue;
        const std::int64_t n = element_count(*f);
        const std::size_t bytes = std::size_t(n) * std::size_t(bit_width(f->type) / 8);
        const std::size_t offset = (used + 15) / 16 * 16; // 16-byte aligned
        if (n > INT32_MAX || offset + bytes > budget) continue;
        // The field's shape (spatial axes, then components), row-major: fixed shapes are dense.
        std::vector<std::int64_t> shape = f->fixed_shape;
        shape.insert(shape.end(), f->index_shape.begin(), f->index_shape.end());
        auto array = make_buffer(f->name + "_shared", f->type, Scope::Shared, shape);
        array->shared_offset = offset;
        used = offset + bytes;
        out.staged.push_back(fmt::format("{}: {} {} at byte {}", f->name, n, type_name(f->type), offset));
        staged.emplace_back(global, std::move(array));
    }
    if (staged.empty()) {
        out.body = body;
        return out;
    }
    // 2. Static arrays while everything fits the static limit (see BufferInfo::static_shared).
    for (auto& entry : staged)
        entry.second->static_shared = in_use.dynamic_end == 0 && used + reserved <= kMaxStaticSharedMemory;

    // 3. The copies: a cooperative loop each (the block's threads share its iterations),
    // W_shared[k] = W[k].
    std::map<const BufferInfo*, BufferPtr> shared;
    StmtList copies;
    for (auto& [global, mutable_array] : staged) {
        BufferPtr array = mutable_array;
        const FieldPtr& f = global->field;
        shared[global.get()] = array;
        Expr k = VarNode::make(ScalarType::Int32, "k", VarRole::LoopIndex);
        Stmt copy = BufferStoreNode::make(array, k, BufferLoadNode::make(global, k));
        copies.add(CommentNode::make(fmt::format(
            "stage {} in shared memory ({} bytes)", f->name,
            std::size_t(array->size()) * std::size_t(bit_width(f->type) / 8))));
        copies.allocate(array);
        copies.add(ForNode::make(k, ConstNode::make_int(ScalarType::Int32, 0),
                                       ConstNode::make_int(ScalarType::Int32, array->size()),
                                       ConstNode::make_int(ScalarType::Int32, 1), copy, -1,
                                       ForKind::Cooperative));
    }
    copies.add(BarrierNode::make());
    copies.add(RedirectBuffers(shared, false).mutate(body));
    out.body = copies.build();
    return out;
}

} // namespace loom::ir
