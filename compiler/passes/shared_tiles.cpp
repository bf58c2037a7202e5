#include "compiler/passes/shared_tiles.hpp"

#include "compiler/ir/visitor.hpp"
#include "compiler/passes/choose_schedule.hpp"
#include "compiler/passes/simplify.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace loom::ir {

namespace {


/// One field at one literal component: what a tile holds.
struct TileKey {
    const FieldInfo* field;
    std::vector<std::int64_t> components;
    bool operator<(const TileKey& o) const {
        return field != o.field ? field < o.field : components < o.components;
    }
};

struct Tile {
    FieldPtr field;
    std::vector<std::int64_t> components;
    std::vector<int> below, above; ///< per tile axis (the order of `tiles`): reach, >= 0
    bool offset = false;           ///< read at a nonzero offset somewhere: worth a tile
    ArrayPtr array;
    std::vector<std::int64_t> extent, stride; ///< per tile axis
};

class TileReads {
public:
    explicit TileReads(const std::vector<BlockTileAxis>& tiles) : tiles_(tiles) {}

    /// The offset from the counter of every tiled axis (`counter`, `counter + k`,
    /// `counter - k`) and the literal components, if `load` reads a tile's element.
    bool match(const LoadNode* load, std::vector<int>& offsets, std::vector<std::int64_t>& comps) const {
        const FieldInfo& f = *load->field;
        if (load->flat() && f.array_dims() != 1) return false;
        if (f.spatial_dims != int(tiles_.size())) return false;
        offsets.assign(tiles_.size(), 0);
        for (std::size_t i = 0; i < tiles_.size(); ++i) {
            const Expr& c = load->indices[std::size_t(tiles_[i].axis)];
            if (c.same_as(tiles_[i].counter)) continue;
            auto b = c.as<BinaryNode>();
            auto k = b ? b->b.as<ConstNode>() : nullptr;
            if (!k || !b->a.same_as(tiles_[i].counter) ||
                (b->op != BinaryOp::Add && b->op != BinaryOp::Sub) || std::abs(k->int_value) > 1024)
                return false;
            offsets[i] = int(b->op == BinaryOp::Add ? k->int_value : -k->int_value);
        }
        comps.clear();
        for (std::size_t c = std::size_t(f.spatial_dims); c < load->indices.size(); ++c) {
            auto k = load->indices[c].as<ConstNode>();
            if (!k) return false;
            comps.push_back(k->int_value);
        }
        return true;
    }

private:
    const std::vector<BlockTileAxis>& tiles_;
};

/// The tiles the body's reads ask for, with their reach.
std::map<TileKey, Tile> find_tiles(const Stmt& body, const TileReads& reads, std::size_t axes) {
    struct Find : IRVisitor {
        const TileReads& reads;
        std::size_t axes;
        std::map<TileKey, Tile> tiles;
        std::vector<const FieldInfo*> written;
        Find(const TileReads& r, std::size_t n) : reads(r), axes(n) {}
        void visit_Load(const LoadNode* l) override {
            IRVisitor::visit_Load(l);
            std::vector<int> offsets;
            std::vector<std::int64_t> comps;
            if (!reads.match(l, offsets, comps)) return;
            Tile& t = tiles[{l->field.get(), comps}];
            if (!t.field) {
                t.field = l->field;
                t.components = comps;
                t.below.assign(axes, 0);
                t.above.assign(axes, 0);
            }
            for (std::size_t i = 0; i < axes; ++i) {
                t.below[i] = std::max(t.below[i], -offsets[i]);
                t.above[i] = std::max(t.above[i], offsets[i]);
                t.offset |= offsets[i] != 0;
            }
        }
        void visit_Store(const StoreNode* s) override {
            IRVisitor::visit_Store(s);
            written.push_back(s->field.get());
        }
    } find(reads, axes);
    find.visit(body);
    std::map<TileKey, Tile> out;
    for (auto& [key, tile] : find.tiles)
        if (tile.offset && std::find(find.written.begin(), find.written.end(), key.field) == find.written.end())
            out.emplace(key, tile);
    return out;
}

/// Reads of tiled fields become reads of their tiles.
class ReadTiles : public IRMutator {
public:
    ReadTiles(const TileReads& reads, const std::map<TileKey, Tile>& tiles,
              const std::vector<BlockTileAxis>& axes)
        : reads_(reads), tiles_(tiles), axes_(axes) {}

protected:
    Expr visit_Load(const LoadNode* n, const Expr& self) override {
        std::vector<int> offsets;
        std::vector<std::int64_t> comps;
        if (!reads_.match(n, offsets, comps)) return IRMutator::visit_Load(n, self);
        auto it = tiles_.find({n->field.get(), comps});
        if (it == tiles_.end()) return self;
        const Tile& t = it->second;
        const ScalarType type = axes_[0].local.type();
        Expr index;
        for (std::size_t i = 0; i < axes_.size(); ++i) {
            Expr at = BinaryNode::make(BinaryOp::Add, axes_[i].local,
                                       ConstNode::make_int(type, offsets[i] + t.below[i]));
            if (t.stride[i] != 1) at = BinaryNode::make(BinaryOp::Mul, ConstNode::make_int(type, t.stride[i]), at);
            index = index.defined() ? BinaryNode::make(BinaryOp::Add, index, at) : at;
        }
        return ArrayLoadNode::make(t.array, simplify(index));
    }

private:
    const TileReads& reads_;
    const std::map<TileKey, Tile>& tiles_;
    const std::vector<BlockTileAxis>& axes_;
};

/// The copy of a tile: a cooperative loop over its elements, each from the field's element at
/// origin - reach below + its position, where that lies before the end plus the reach above.
std::vector<Stmt> fill(const Tile& t, const std::vector<BlockTileAxis>& axes) {
    const ScalarType type = axes[0].origin.type();
    auto idx = [type](std::int64_t v) { return ConstNode::make_int(type, v); };
    Expr k = VarNode::make(type, "k", VarRole::LoopIndex);
    std::vector<Stmt> body;
    std::vector<Expr> at(std::size_t(t.field->array_dims()));
    Expr inside;
    for (std::size_t i = 0; i < axes.size(); ++i) {
        const BlockTileAxis& a = axes[i];
        Expr position = t.stride[i] == 1 ? k : BinaryNode::make(BinaryOp::Div, k, idx(t.stride[i]));
        // the slowest tile axis needs no modulo: k / stride is below its extent
        const bool slowest = std::all_of(t.stride.begin(), t.stride.end(),
                                         [&](std::int64_t s) { return s <= t.stride[i]; });
        if (!slowest) position = BinaryNode::make(BinaryOp::Mod, position, idx(t.extent[i]));
        Expr cell = VarNode::make(type, a.counter.as<VarNode>()->name, VarRole::LoopIndex);
        body.push_back(DeclareNode::make(
            cell, simplify(BinaryNode::make(BinaryOp::Add, BinaryNode::make(BinaryOp::Sub, a.origin, idx(t.below[i])), position))));
        at[std::size_t(a.axis)] = cell;
        Expr below_end = BinaryNode::make(BinaryOp::Lt, cell, simplify(BinaryNode::make(BinaryOp::Add, a.stop, idx(t.above[i]))));
        inside = inside.defined() ? BinaryNode::make(BinaryOp::And, inside, below_end) : below_end;
    }
    for (std::size_t c = 0; c < t.components.size(); ++c)
        at[std::size_t(t.field->spatial_dims) + c] = idx(t.components[c]);
    body.push_back(IfThenNode::make(inside, ArrayStoreNode::make(t.array, k, LoadNode::make(t.field, at))));
    return {ForNode::make(k, idx(0), idx(t.array->size), idx(1), BlockNode::make(std::move(body)), -1,
                          ForKind::Cooperative)};
}

std::string tile_name(const Tile& t) {
    std::string name = t.field->name + "_tile";
    for (std::int64_t c : t.components) name += "_" + std::to_string(c);
    return name;
}

/// The body of the innermost GpuBlock loop: its origin declarations, then the thread loops.
class InsertInBlock : public IRMutator {
public:
    InsertInBlock(std::vector<Stmt> fills, ReadTiles& reads) : fills_(std::move(fills)), reads_(reads) {}
    bool done = false;

protected:
    Stmt visit_For(const ForNode* f, const Stmt& self) override {
        if (f->kind != ForKind::GpuBlock) return IRMutator::visit_For(f, self);
        if (f->body.is<ForNode>()) return IRMutator::visit_For(f, self); // an outer block loop
        auto block = f->body.as<BlockNode>();
        if (!block) throw InternalError("stage_tiles_in_shared: a block loop without origins");
        std::vector<Stmt> stmts;
        for (const Stmt& s : block->stmts) {
            if (auto loop = s.as<ForNode>(); loop && loop->kind == ForKind::GpuThread) {
                stmts.insert(stmts.end(), fills_.begin(), fills_.end());
                stmts.push_back(reads_.mutate(s));
                continue;
            }
            stmts.push_back(s);
        }
        done = true;
        return ForNode::make(f->var, f->start, f->stop, f->step, BlockNode::make(std::move(stmts)),
                             f->axis, f->kind, f->dim);
    }

private:
    std::vector<Stmt> fills_;
    ReadTiles& reads_;
};

} // namespace

SharedTiles stage_tiles_in_shared(const Stmt& body, const std::vector<BlockTileAxis>& axes,
                                  std::size_t budget, const std::string& kernel) {
    SharedTiles out;
    out.body = body;
    if (axes.empty()) return out;
    TileReads reads(axes);
    std::map<TileKey, Tile> tiles = find_tiles(body, reads, axes.size());
    if (tiles.empty()) return out;

    // Shapes: hardware dimension x fastest (the threads of a warp read along it).
    std::vector<std::size_t> order(axes.size()); // tile axes, slowest first
    for (std::size_t i = 0; i < axes.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return axes[a].dim > axes[b].dim; });
    std::vector<std::string> sizes;
    for (auto& [key, t] : tiles) {
        t.extent.assign(axes.size(), 0);
        t.stride.assign(axes.size(), 0);
        std::int64_t n = 1;
        for (auto it = order.rbegin(); it != order.rend(); ++it) {
            t.extent[*it] = axes[*it].span + t.below[*it] + t.above[*it];
            t.stride[*it] = n;
            n *= t.extent[*it];
        }
        auto array = std::make_shared<ArrayInfo>();
        array->name = tile_name(t);
        array->type = t.field->type;
        array->size = int(std::min<std::int64_t>(n, INT32_MAX));
        for (std::size_t i : order) array->shape.push_back(t.extent[i]);
        array->space = MemorySpace::Shared;
        array->static_shared = true;
        t.array = array;
        const std::size_t bytes = std::size_t(n) * std::size_t(bit_width(t.field->type) / 8);
        out.bytes += (bytes + 15) / 16 * 16;
        sizes.push_back(array->describe());
        out.staged.push_back(fmt::format("{}, {} bytes", array->describe(), bytes));
    }
    const std::size_t limit = std::min(budget, kMaxStaticSharedMemory);
    if (out.bytes > limit) {
        std::string list;
        for (const std::string& s : sizes) list += (list.empty() ? "" : ", ") + s;
        throw UserError(fmt::format(
            "kernel '{}' has Schedule::shared_tiles = true, but its tiles need {} bytes of shared "
            "memory per block ({}), more than the {} {}; use a smaller Schedule::block or fewer "
            "cells_per_thread{}",
            kernel, out.bytes, list, limit,
            limit == budget && budget < kMaxStaticSharedMemory ? "bytes of Schedule::shared_memory_budget"
                                                           : "bytes (48 KB) of static shared memory a block may have",
            limit == budget && budget < kMaxStaticSharedMemory ? ", or raise shared_memory_budget" : ""));
    }

    std::vector<Stmt> fills;
    for (auto& [key, t] : tiles) {
        std::string where;
        for (std::size_t i : order) {
            const std::string& o = axes[i].origin.as<VarNode>()->name;
            where += fmt::format("{}[{} - {}, {} + {})", where.empty() ? "" : " x ", o, t.below[i], o,
                                 axes[i].span + t.above[i]);
        }
        fills.push_back(CommentNode::make(fmt::format("{} holds the cells {}", t.array->describe(), where)));
        fills.push_back(AllocateNode::make(t.array));
        for (Stmt& s : fill(t, axes)) fills.push_back(std::move(s));
    }
    fills.push_back(BarrierNode::make());
    ReadTiles read_tiles(reads, tiles, axes);
    InsertInBlock insert(std::move(fills), read_tiles);
    out.body = insert.mutate(body);
    if (!insert.done) throw InternalError("stage_tiles_in_shared: no GpuBlock loop to fill tiles in");
    return out;
}

} // namespace loom::ir
