#include "compiler/passes/shared_tiles.hpp"

#include "compiler/ir/visitor.hpp"
#include "compiler/passes/choose_schedule.hpp"
#include "compiler/passes/simplify.hpp"
#include "compiler/passes/tile_layout.hpp"

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
    // By name, which is unique in a kernel (analyze_kernel): the tiles' order, and so the
    // source and its cache key, must not depend on where the fields lie in memory.
    bool operator<(const TileKey& o) const {
        return field != o.field ? field->name < o.field->name : components < o.components;
    }
};

struct Tile {
    FieldPtr field;
    BufferPtr global; ///< the field's buffer, which the fill reads
    std::vector<std::int64_t> components;
    std::vector<int> below, above; ///< per tile axis (the order of `tiles`): reach, >= 0
    bool offset = false;           ///< read at a nonzero offset somewhere: worth a tile
    TileLayout layout;
};

/// The tiles the body's reads ask for, with their reach.
std::map<TileKey, Tile> find_tiles(const Stmt& body, const std::vector<BlockTileAxis>& axes) {
    struct Find : IRVisitor {
        const std::vector<BlockTileAxis>& axes;
        std::vector<Expr> counters;
        std::map<TileKey, Tile> tiles;
        std::vector<const FieldInfo*> written;
        explicit Find(const std::vector<BlockTileAxis>& a) : axes(a), counters(tile_counters(a)) {}
        void visit_BufferLoad(const BufferLoadNode* l) override {
            IRVisitor::visit_BufferLoad(l);
            std::optional<TileAccess> at = match_tile_access(l, axes, counters);
            if (!at) return;
            Tile& t = tiles[{l->buffer->field.get(), at->components}];
            if (!t.field) {
                t.field = l->buffer->field;
                t.global = l->buffer;
                t.components = at->components;
                t.below.assign(axes.size(), 0);
                t.above.assign(axes.size(), 0);
            }
            for (std::size_t i = 0; i < axes.size(); ++i) {
                t.below[i] = std::max(t.below[i], -at->offsets[i]);
                t.above[i] = std::max(t.above[i], at->offsets[i]);
                t.offset |= at->offsets[i] != 0;
            }
        }
        void visit_BufferStore(const BufferStoreNode* s) override {
            IRVisitor::visit_BufferStore(s);
            if (const FieldInfo* f = s->buffer->field_of()) written.push_back(f);
        }
    } find(axes);
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
    ReadTiles(const std::map<TileKey, Tile>& tiles, const std::vector<BlockTileAxis>& axes)
        : tiles_(tiles), axes_(axes), counters_(tile_counters(axes)) {
        for (const BlockTileAxis& a : axes) locals_.push_back(a.local);
    }

protected:
    Expr visit_BufferLoad(const BufferLoadNode* n, const Expr& self) override {
        std::optional<TileAccess> at = match_tile_access(n, axes_, counters_);
        if (!at) return IRMutator::visit_BufferLoad(n, self);
        auto it = tiles_.find({n->buffer->field.get(), at->components});
        if (it == tiles_.end()) return self;
        return BufferLoadNode::make(it->second.layout.buffer, tile_element(it->second.layout, locals_, at->offsets));
    }

private:
    const std::map<TileKey, Tile>& tiles_;
    const std::vector<BlockTileAxis>& axes_;
    std::vector<Expr> counters_, locals_;
};

/// The copy of a tile: a cooperative loop over its elements, each from the field's element at
/// origin - reach below + its position, where that lies before the end plus the reach above.
Stmt fill(const Tile& t, const std::vector<BlockTileAxis>& axes) {
    return tile_loop(t.layout, axes, [&](const std::vector<Expr>& cells, const std::vector<Expr>&, const Expr& k) {
        const ScalarType type = cells[0].type();
        std::vector<Expr> at(std::size_t(t.field->array_dims()));
        Expr inside;
        for (std::size_t i = 0; i < axes.size(); ++i) {
            at[std::size_t(axes[i].axis)] = cells[i];
            Expr end = simplify(BinaryNode::make(BinaryOp::Add, axes[i].stop, ConstNode::make_int(type, t.above[i])));
            Expr below_end = BinaryNode::make(BinaryOp::Lt, cells[i], end);
            inside = inside.defined() ? BinaryNode::make(BinaryOp::And, inside, below_end) : below_end;
        }
        for (std::size_t c = 0; c < t.components.size(); ++c)
            at[std::size_t(t.field->spatial_dims) + c] = ConstNode::make_int(type, t.components[c]);
        return IfThenNode::make(inside, BufferStoreNode::make(t.layout.buffer, k, BufferLoadNode::make(t.global, at)));
    });
}

std::string tile_name(const Tile& t) {
    std::string name = t.field->name + "_tile";
    for (std::int64_t c : t.components) name += "_" + std::to_string(c);
    return name;
}

} // namespace

SharedTiles stage_tiles_in_shared(const Stmt& body, const std::vector<BlockTileAxis>& axes,
                                  std::size_t budget, const std::string& kernel) {
    SharedTiles out;
    out.body = body;
    if (axes.empty()) return out;
    std::map<TileKey, Tile> tiles = find_tiles(body, axes);
    if (tiles.empty()) return out;

    std::vector<std::string> sizes;
    for (auto& [key, t] : tiles) {
        t.layout = lay_out_tile(tile_name(t), t.field->type, axes, t.below, t.above);
        out.bytes += rounded_shared_bytes(t.layout.bytes);
        sizes.push_back(t.layout.buffer->describe());
        out.staged.push_back(fmt::format("{}, {} bytes", t.layout.buffer->describe(), t.layout.bytes));
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
    const std::vector<std::size_t> order = slowest_first(axes);
    StmtList fills;
    for (auto& [key, t] : tiles) {
        std::string where;
        for (std::size_t i : order) {
            const std::string& o = axes[i].origin.as<VarNode>()->name;
            where += fmt::format("{}[{} - {}, {} + {})", where.empty() ? "" : " x ", o, t.below[i], o,
                                 axes[i].span + t.above[i]);
        }
        fills.add(CommentNode::make(fmt::format("{} holds the cells {}", t.layout.buffer->describe(), where)));
        fills.allocate(t.layout.buffer);
        fills.add(fill(t, axes));
    }
    fills.add(BarrierNode::make());
    ReadTiles read_tiles(tiles, axes);
    out.body = insert_before_threads(body, fills, [&](const Stmt& s) { return read_tiles.mutate(s); },
                                     "stage_tiles_in_shared");
    return out;
}

} // namespace loom::ir
