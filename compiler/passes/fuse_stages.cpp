#include "compiler/passes/fuse_stages.hpp"

#include "compiler/ir/visitor.hpp"
#include "compiler/passes/choose_schedule.hpp"
#include "compiler/passes/simplify.hpp"
#include "compiler/passes/tile_layout.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <functional>
#include <map>

namespace loom::ir {

namespace {

/// One field at one literal component: what a stage tile holds.
struct Key {
    const FieldInfo* field;
    std::vector<std::int64_t> components;
    // By name, unique in a kernel: the order must not depend on addresses (see shared_tiles).
    bool operator<(const Key& o) const {
        return field != o.field ? field->name < o.field->name : components < o.components;
    }
};

/// A field a stage writes and a later stage reads, with how far those reads reach.
struct StageTile {
    FieldPtr field;
    BufferPtr global; ///< the field's buffer
    std::vector<std::int64_t> components;
    int stage = 0;
    std::vector<int> reach_below, reach_above; ///< per tile axis, of the later stages' reads
    TileLayout layout;
};

/// A load of a field an earlier stage writes, in stage `reader`.
struct StageRead {
    int reader;
    Key key;
    std::vector<int> offsets;
};

std::vector<std::int64_t> components_of(const FieldInfo& f, const std::vector<Expr>& indices) {
    std::vector<std::int64_t> out;
    for (std::size_t c = std::size_t(f.spatial_dims); c < indices.size(); ++c) {
        auto k = indices[c].as<ConstNode>();
        if (!k) throw InternalError("fuse_stages: a stage writes a component that is not a literal (analyze_kernel)");
        out.push_back(k->int_value);
    }
    return out;
}

/// The Block of Stages inside the threads, if any.
const BlockNode* find_stages(const Stmt& body) {
    struct Find : IRVisitor {
        const BlockNode* found = nullptr;
        void visit_Block(const BlockNode* b) override {
            if (!b->stmts.empty() && b->stmts[0].is<StageNode>()) found = b;
            else IRVisitor::visit_Block(b);
        }
    } f;
    f.visit(body);
    return f.found;
}

/// The fields each stage writes: (field, components) -> stage.
std::map<Key, int> find_writers(const std::vector<const StageNode*>& stages) {
    struct Find : IRVisitor {
        std::map<Key, int>& out;
        int stage = 0;
        explicit Find(std::map<Key, int>& o) : out(o) {}
        void visit_BufferStore(const BufferStoreNode* s) override {
            IRVisitor::visit_BufferStore(s);
            if (const FieldPtr& f = s->buffer->field) out[{f.get(), components_of(*f, s->indices)}] = stage;
        }
    };
    std::map<Key, int> out;
    Find find(out);
    for (const StageNode* s : stages) {
        find.stage = s->index;
        find.visit(s->body);
    }
    return out;
}

/// Every read of a field an earlier stage writes, relative to the counters.
std::vector<StageRead> find_stage_reads(const std::vector<const StageNode*>& stages,
                                        const std::map<Key, int>& writers,
                                        const std::vector<BlockTileAxis>& axes) {
    struct Find : IRVisitor {
        const std::map<Key, int>& writers;
        const std::vector<BlockTileAxis>& axes;
        std::vector<Expr> counters;
        std::vector<StageRead> out;
        int stage = 0;
        Find(const std::map<Key, int>& w, const std::vector<BlockTileAxis>& a)
            : writers(w), axes(a), counters(tile_counters(a)) {}
        void visit_BufferLoad(const BufferLoadNode* l) override {
            IRVisitor::visit_BufferLoad(l);
            const FieldInfo* f = l->buffer->field.get();
            bool earlier = false;
            for (auto& [key, s] : writers) earlier |= f && key.field == f && s < stage;
            if (!earlier) return;
            std::optional<TileAccess> at = match_tile_access(l, axes, counters);
            if (!at)
                throw InternalError(fmt::format("fuse_stages: stage {} reads {}, which an earlier stage "
                                                "writes, in a form other than counter +- k (analyze_kernel)",
                                                stage, f->name));
            Key key{f, at->components};
            auto w = writers.find(key);
            if (w == writers.end() || w->second >= stage) return; // a component no stage writes
            out.push_back({stage, key, at->offsets});
        }
    } find(writers, axes);
    for (const StageNode* s : stages) {
        find.stage = s->index;
        find.visit(s->body);
    }
    return find.out;
}

/// Counters replaced by a fill loop's cells.
class Rebind : public IRMutator {
public:
    Rebind(const std::vector<Expr>& from, const std::vector<Expr>& to) : from_(from), to_(to) {}

protected:
    Expr visit_Var(const VarNode*, const Expr& self) override {
        for (std::size_t i = 0; i < from_.size(); ++i)
            if (self.same_as(from_[i])) return to_[i];
        return self;
    }

private:
    const std::vector<Expr>& from_;
    const std::vector<Expr>& to_;
};

/// Reads of earlier stages' fields, at `cells +- k`, become reads of their tiles at `positions`.
class ReadStageTiles : public IRMutator {
public:
    ReadStageTiles(const std::map<Key, StageTile>& tiles, const std::vector<BlockTileAxis>& axes,
                   std::vector<Expr> cells, std::vector<Expr> positions, int stage)
        : tiles_(tiles), axes_(axes), cells_(std::move(cells)), positions_(std::move(positions)), stage_(stage) {}

protected:
    Expr visit_BufferLoad(const BufferLoadNode* n, const Expr& self) override {
        std::optional<TileAccess> at = match_tile_access(n, axes_, cells_);
        if (!at) return IRMutator::visit_BufferLoad(n, self);
        auto it = tiles_.find({n->buffer->field.get(), at->components});
        if (it == tiles_.end() || it->second.stage >= stage_) return self;
        const TileLayout& t = it->second.layout;
        return BufferLoadNode::make(t.buffer, tile_element(t, positions_, at->offsets));
    }

private:
    const std::map<Key, StageTile>& tiles_;
    const std::vector<BlockTileAxis>& axes_;
    std::vector<Expr> cells_, positions_;
    int stage_;
};

/// A stage's stores in its fill loop: into the field's tile (when a later stage reads it), and
/// into the field where the cell is the block's own.
class StoreStageTiles : public IRMutator {
public:
    StoreStageTiles(const std::map<Key, StageTile>& tiles, const OnChipValues& on_chip, Expr k, Expr own)
        : tiles_(tiles), on_chip_(on_chip), k_(std::move(k)), own_(std::move(own)) {}

protected:
    Stmt visit_BufferStore(const BufferStoreNode* n, const Stmt& self) override {
        const FieldPtr& f = n->buffer->field;
        if (!f) return IRMutator::visit_BufferStore(n, self); // a local array's
        auto it = tiles_.find({f.get(), components_of(*f, n->indices)});
        if (it == tiles_.end()) return IfThenNode::make(own_, self);
        const BufferPtr& tile = it->second.layout.buffer;
        if (on_chip_.count(f.get())) return BufferStoreNode::make(tile, k_, n->value); // never in memory
        return BlockNode::make({BufferStoreNode::make(tile, k_, n->value),
                                IfThenNode::make(own_, BufferStoreNode::make(n->buffer, n->indices, BufferLoadNode::make(tile, k_)))});
    }

private:
    const std::map<Key, StageTile>& tiles_;
    const OnChipValues& on_chip_;
    Expr k_, own_;
};

Expr all_of(const std::vector<Expr>& conditions) {
    Expr out;
    for (const Expr& c : conditions) out = out.defined() ? BinaryNode::make(BinaryOp::And, out, c) : c;
    return out;
}

/// `lo <= v && v < hi`, each side with an offset folded in.
void within(std::vector<Expr>& out, const Expr& v, const Expr& lo, std::int64_t below, const Expr& hi,
            std::int64_t above) {
    const ScalarType t = v.type();
    out.push_back(BinaryNode::make(BinaryOp::Ge, v, simplify(BinaryNode::make(BinaryOp::Sub, lo, ConstNode::make_int(t, below)))));
    out.push_back(BinaryNode::make(BinaryOp::Lt, v, simplify(BinaryNode::make(BinaryOp::Add, hi, ConstNode::make_int(t, above)))));
}

/// The loop that computes stage `s` over its region (see fuse_stages).
Stmt stage_loop(const StageNode* s, const TileLayout& region, const std::map<Key, StageTile>& tiles,
                const OnChipValues& on_chip, const std::vector<BlockTileAxis>& axes, int threads) {
    const std::vector<Expr> counters = tile_counters(axes);
    // Whether the block's whole region lies in the iteration space, once per block: most
    // blocks' do, and then no cell needs the guards (a block-uniform branch).
    const ScalarType type = axes[0].origin.type();
    std::vector<Expr> inside_terms;
    for (std::size_t i = 0; i < axes.size(); ++i) {
        Expr first = BinaryNode::make(BinaryOp::Sub, axes[i].origin, ConstNode::make_int(type, region.below[i]));
        Expr end = BinaryNode::make(BinaryOp::Add, axes[i].origin,
                                    ConstNode::make_int(type, axes[i].span + region.above[i]));
        inside_terms.push_back(BinaryNode::make(BinaryOp::Ge, simplify(first), axes[i].start));
        inside_terms.push_back(BinaryNode::make(BinaryOp::Le, simplify(end), axes[i].stop));
    }
    Expr inside = VarNode::make(ScalarType::Bool, fmt::format("stage_{}_inside", s->index), VarRole::LoopIndex);
    // The stage at one cell of the region: computed where the cell is in the iteration space
    // (everywhere in a block whose region is: `guarded` false), stored into the tiles, and into
    // memory where the cell is the block's own.
    auto cell = [&](bool guarded, const std::vector<Expr>& cells, const std::vector<Expr>& positions, const Expr& k) {
        std::vector<Expr> in_space, own;
        for (std::size_t i = 0; i < axes.size(); ++i) {
            within(in_space, cells[i], axes[i].start, 0, axes[i].stop, 0);
            within(own, positions[i], ConstNode::make_int(type, 0), 0, ConstNode::make_int(type, axes[i].span), 0);
        }
        Stmt body = Rebind(counters, cells).mutate(s->body);
        body = ReadStageTiles(tiles, axes, cells, positions, s->index).mutate(body);
        body = StoreStageTiles(tiles, on_chip, k, all_of(own)).mutate(body);
        if (!guarded) return body;
        std::vector<Stmt> out{IfThenNode::make(all_of(in_space), body)};
        // Past the iteration space, the field's own value (an on-chip field's: what it holds
        // there), as far as a later stage reads it.
        for (auto& [key, t] : tiles) {
            if (t.stage != s->index) continue;
            std::vector<Expr> near, at(std::size_t(t.field->array_dims()));
            for (std::size_t i = 0; i < axes.size(); ++i) {
                within(near, cells[i], axes[i].start, t.reach_below[i], axes[i].stop, t.reach_above[i]);
                at[std::size_t(axes[i].axis)] = cells[i];
            }
            for (std::size_t c = 0; c < t.components.size(); ++c)
                at[std::size_t(t.field->spatial_dims) + c] = ConstNode::make_int(type, t.components[c]);
            Expr outside = BinaryNode::make(BinaryOp::And, all_of(near), UnaryNode::make(UnaryOp::Not, all_of(in_space)));
            auto given = on_chip.find(t.field.get());
            Expr value = given != on_chip.end() ? Rebind(counters, cells).mutate(given->second)
                                                : BufferLoadNode::make(t.global, at);
            out.push_back(IfThenNode::make(outside, BufferStoreNode::make(t.layout.buffer, k, value)));
        }
        return BlockNode::make(std::move(out));
    };
    using namespace std::placeholders;
    // Blocks inside: rows without guards, whose neighbouring rows share their loads. Blocks at
    // the edges (few): the flat loop with every guard, in less code.
    Stmt fast = tile_loop(region, axes, std::bind(cell, false, _1, _2, _3), threads);
    Stmt edge = tile_loop(region, axes, std::bind(cell, true, _1, _2, _3));
    return BlockNode::make({DeclareNode::make(inside, all_of(inside_terms)), IfThenNode::make(inside, fast),
                            IfThenNode::make(UnaryNode::make(UnaryOp::Not, inside), edge)});
}

/// In the threads: the last stage alone, its reads of earlier stages' fields from their tiles.
/// With `unguarded`, for blocks whose cells all lie in the iteration space: the guard around
/// each cell's stages dropped, so that NVRTC merges what a thread's neighbouring cells read of
/// the tiles alike.
class ComputeLastStage : public IRMutator {
public:
    ComputeLastStage(const std::map<Key, StageTile>& tiles, const std::vector<BlockTileAxis>& axes, bool unguarded)
        : tiles_(tiles), axes_(axes), unguarded_(unguarded) {}

protected:
    Stmt visit_IfThen(const IfThenNode* n, const Stmt& self) override {
        auto b = n->then_case.as<BlockNode>();
        if (unguarded_ && b && !b->stmts.empty() && b->stmts[0].is<StageNode>()) return mutate(n->then_case);
        return IRMutator::visit_IfThen(n, self);
    }
    Stmt visit_Block(const BlockNode* b, const Stmt& self) override {
        if (b->stmts.empty() || !b->stmts[0].is<StageNode>()) return IRMutator::visit_Block(b, self);
        auto last = b->stmts.back().as<StageNode>();
        std::vector<Expr> locals;
        for (const BlockTileAxis& a : axes_) locals.push_back(a.local);
        return ReadStageTiles(tiles_, axes_, tile_counters(axes_), locals, last->index).mutate(last->body);
    }

private:
    const std::map<Key, StageTile>& tiles_;
    const std::vector<BlockTileAxis>& axes_;
    bool unguarded_;
};

std::string tile_name(const StageTile& t) {
    std::string name = t.field->name + "_tile";
    for (std::int64_t c : t.components) name += "_" + std::to_string(c);
    return name;
}

} // namespace

FusedStages fuse_stages(const Stmt& body, const std::vector<BlockTileAxis>& axes, std::size_t budget,
                        const std::string& kernel, const OnChipValues& on_chip, int threads) {
    FusedStages out;
    out.body = body;
    const BlockNode* block = find_stages(body);
    if (!block) return out;
    if (axes.empty()) throw InternalError("fuse_stages needs the tiled form (map_to_gpu with tiles)");
    std::vector<const StageNode*> stages;
    for (const Stmt& s : block->stmts) {
        stages.push_back(s.as<StageNode>());
        if (!stages.back() || stages.back()->index != int(stages.size()))
            throw InternalError("fuse_stages: a block of stages holds something else, or skips a stage");
    }
    const int last = int(stages.size());
    const std::size_t n = axes.size();

    // What each stage reads of the earlier ones, and so how far each stage's halo reaches:
    // backwards, a stage's halo covers its readers' halos plus how far they read.
    std::map<Key, int> writers = find_writers(stages);
    std::vector<StageRead> reads = find_stage_reads(stages, writers, axes);
    std::vector<std::vector<int>> below(std::size_t(last) + 1, std::vector<int>(n, 0)), above = below;
    std::map<Key, StageTile> tiles;
    for (int s = last - 1; s >= 1; --s)
        for (const StageRead& r : reads) {
            if (writers.at(r.key) != s) continue;
            StageTile& t = tiles[r.key];
            if (t.stage == 0) {
                t.stage = s;
                t.components = r.key.components;
                t.reach_below.assign(n, 0);
                t.reach_above.assign(n, 0);
            }
            for (std::size_t i = 0; i < n; ++i) {
                below[std::size_t(s)][i] = std::max(below[std::size_t(s)][i], below[std::size_t(r.reader)][i] - std::min(0, r.offsets[i]));
                above[std::size_t(s)][i] = std::max(above[std::size_t(s)][i], above[std::size_t(r.reader)][i] + std::max(0, r.offsets[i]));
                t.reach_below[i] = std::max(t.reach_below[i], -r.offsets[i]);
                t.reach_above[i] = std::max(t.reach_above[i], r.offsets[i]);
            }
        }
    // The fields themselves, for the tiles' types and names (the keys hold bare pointers).
    struct Fields : IRVisitor {
        std::map<const FieldInfo*, BufferPtr> of;
        void visit_BufferStore(const BufferStoreNode* s) override {
            IRVisitor::visit_BufferStore(s);
            if (s->buffer->field) of[s->buffer->field.get()] = s->buffer;
        }
    } fields;
    fields.visit(body);
    std::vector<std::string> sizes;
    for (auto& [key, t] : tiles) {
        t.global = fields.of.at(key.field);
        t.field = t.global->field;
        t.layout = lay_out_tile(tile_name(t), t.field->type, axes, below[std::size_t(t.stage)], above[std::size_t(t.stage)]);
        out.bytes += rounded_shared_bytes(t.layout.bytes);
        sizes.push_back(t.layout.buffer->describe());
        out.staged.push_back(fmt::format("stage {}: {}, {} bytes", t.stage, t.layout.buffer->describe(), t.layout.bytes));
    }
    const std::size_t limit = std::min(budget, kMaxStaticSharedMemory);
    if (out.bytes > limit) {
        out.too_big = fmt::format(
            "kernel '{}' has {} stages, and the tiles its blocks compute the earlier stages into need "
            "{} bytes of shared memory per block ({}), more than the {} bytes {}; use a smaller "
            "Schedule::block or fewer cells_per_thread, or split the stages into kernels of their own",
            kernel, last, out.bytes, fmt::join(sizes, ", "), limit,
            limit == budget && budget < kMaxStaticSharedMemory ? "of Schedule::shared_memory_budget"
                                                           : "(48 KB) of static shared memory a block may have");
        return out;
    }

    // Each earlier stage: its tiles, the loop over its region, a barrier.
    const std::vector<std::size_t> order = slowest_first(axes);
    StmtList before;
    for (const StageNode* s : stages) {
        if (s->index == last) break;
        const std::vector<int>& lo = below[std::size_t(s->index)];
        const std::vector<int>& hi = above[std::size_t(s->index)];
        std::string where, computed;
        for (std::size_t i : order) {
            const std::string& o = axes[i].origin.as<VarNode>()->name;
            where += fmt::format("{}[{} - {}, {} + {})", where.empty() ? "" : " x ", o, lo[i], o, axes[i].span + hi[i]);
        }
        std::vector<BufferPtr> allocs;
        for (auto& [key, t] : tiles)
            if (t.stage == s->index) {
                computed += (computed.empty() ? "" : ", ") + t.layout.buffer->describe();
                allocs.push_back(t.layout.buffer);
            }
        before.add(CommentNode::make(fmt::format(
            "stage {} over the cells {}{}", s->index, where,
            computed.empty() ? std::string() : ": into " + computed)));
        for (const BufferPtr& b : allocs) before.allocate(b);
        TileLayout region = lay_out_tile("stage", ScalarType::Float32, axes, lo, hi);
        before.add(stage_loop(s, region, tiles, on_chip, axes, threads));
        before.add(BarrierNode::make());
    }
    // The last stage in the threads: without guards in blocks whose tile lies in the iteration
    // space (most), with them elsewhere.
    const ScalarType type = axes[0].origin.type();
    std::vector<Expr> whole;
    for (const BlockTileAxis& a : axes)
        whole.push_back(BinaryNode::make(BinaryOp::Le, BinaryNode::make(BinaryOp::Add, a.origin, ConstNode::make_int(type, a.span)), a.stop));
    Expr tile_inside = VarNode::make(ScalarType::Bool, "tile_inside", VarRole::LoopIndex);
    before.add(DeclareNode::make(tile_inside, all_of(whole)));
    ComputeLastStage guarded(tiles, axes, false), unguarded(tiles, axes, true);
    out.body = insert_before_threads(body, before, [&](const Stmt& s) {
        Stmt free = unguarded.mutate(s), kept = guarded.mutate(s);
        return BlockNode::make({IfThenNode::make(tile_inside, free),
                                IfThenNode::make(UnaryNode::make(UnaryOp::Not, tile_inside), kept)});
    }, "fuse_stages");
    // On-chip fields have no memory: every access went to a tile.
    struct Left : IRVisitor {
        const OnChipValues& on_chip;
        explicit Left(const OnChipValues& o) : on_chip(o) {}
        void check(const BufferPtr& b) const {
            if (b->field && on_chip.count(b->field.get()))
                throw InternalError("fuse_stages: an access to the on-chip field " + b->field->name +
                                    " outside its tiles");
        }
        void visit_BufferLoad(const BufferLoadNode* l) override { check(l->buffer); IRVisitor::visit_BufferLoad(l); }
        void visit_BufferStore(const BufferStoreNode* s) override { check(s->buffer); IRVisitor::visit_BufferStore(s); }
    } left(on_chip);
    left.visit(out.body);
    return out;
}

} // namespace loom::ir
