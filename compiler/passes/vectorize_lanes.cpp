#include "compiler/passes/vectorize_lanes.hpp"

#include "compiler/ir/equality.hpp"
#include "compiler/ir/redirect.hpp"
#include "compiler/ir/visitor.hpp"
#include "compiler/passes/simplify.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>

namespace loom::ir {

namespace {

bool lane_type(ScalarType t, int width) {
    const bool scalar = t == ScalarType::Float32 || t == ScalarType::Float64 || t == ScalarType::Int32 ||
                        t == ScalarType::Float16 || t == ScalarType::BFloat16;
    return scalar && width * bit_width(t) / 8 <= 16;
}

/// Whether `e` reads any of `vars`.
bool reads_any(const Expr& e, const std::set<const ExprNode*>& vars) {
    for (const Expr& s : subexpressions(e))
        if (vars.count(s.get())) return true;
    return false;
}
bool reads_any(const Stmt& st, const std::set<const ExprNode*>& vars) {
    for (const Expr& s : subexpressions(st))
        if (vars.count(s.get())) return true;
    return false;
}

/// The local arrays `s` loads or stores.
std::set<const BufferInfo*> local_arrays(const Stmt& s) {
    struct Find : IRVisitor {
        std::set<const BufferInfo*> all;
        void visit_BufferLoad(const BufferLoadNode* l) override {
            if (l->buffer->scope == Scope::Local) all.insert(l->buffer.get());
            IRVisitor::visit_BufferLoad(l);
        }
        void visit_BufferStore(const BufferStoreNode* st) override {
            if (st->buffer->scope == Scope::Local) all.insert(st->buffer.get());
            IRVisitor::visit_BufferStore(st);
        }
    } find;
    find.visit(s);
    return find.all;
}

/// The farthest neighbour along the lanes' axis that comes out of a row of lanes (a 13-point
/// star's x + 3); reads farther away stay scalar.
constexpr std::int64_t kMaxReach = 8;

/// An access at `x + d` along `axis`, contiguous there, at coordinates that stay put from cell to
/// cell: d, or nothing. d lies within `reach` (how far the kernel's relative reads reach below
/// and above the cell along the axis, which its ghost layers or slice keep inside the arrays)
/// and kMaxReach: a row's neighbours are loaded whatever the cell's conditions, so a guarded
/// absolute read (`f.at(y + 1)` under `y + 1 < n`) farther out stays where it is.
std::optional<std::int64_t> contiguous_at(const FieldInfo& f, const std::vector<Expr>& indices, const Expr& x,
                                          int axis, const std::set<const ExprNode*>& cell_vars,
                                          std::pair<int, int> reach) {
    if (f.unit_stride_axis() != axis || std::size_t(axis) >= indices.size()) return std::nullopt;
    const Offset at = split_offset(indices[std::size_t(axis)]);
    if (!at.base.same_as(x) || at.k < -std::min<std::int64_t>(kMaxReach, reach.first) ||
        at.k > std::min<std::int64_t>(kMaxReach, reach.second))
        return std::nullopt;
    for (std::size_t i = 0; i < indices.size(); ++i)
        if (i != std::size_t(axis) && reads_any(indices[i], cell_vars)) return std::nullopt;
    return at.k;
}

/// One row of lanes: the access of the first lane and its local array, which holds the `lo`
/// elements before the first lane and the `hi` after the last that the cells read too (a
/// stencil's neighbours along the lanes' axis).
struct Lanes {
    Expr first; ///< a load of the field's buffer at x_lanes: the element of lane 0
    BufferPtr array;
    std::int64_t lo = 0, hi = 0;
};

class LoweredLanes {
public:
    LoweredLanes(const ForNode* loop, int width, const LaneBounds& bounds, std::size_t max_rows)
        : loop_(loop), width_(width), bounds_(bounds), max_rows_(max_rows) {
        x_ = loop->var;
        const ScalarType t = x_.type();
        x_lanes_ = VarNode::make(t, x_.as<VarNode>()->name + "_lanes", VarRole::Counter, nullptr, -1);
        lane_ = VarNode::make(t, "lane", VarRole::LoopIndex);
    }

    Stmt run() {
        // The cell's statements: inside the loops nested in this one (a thread's other cells,
        // the other axes' grid loops, a fourth axis).
        std::vector<const ForNode*> chain;
        Stmt body = loop_->body;
        while (auto f = body.as<ForNode>()) {
            chain.push_back(f);
            body = f->body;
        }
        Stmt cell_lanes = lanes_of(body);
        if (!cell_lanes.defined() || declined_) return Stmt();
        for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
            const ForNode* f = *it;
            cell_lanes = ForNode::make(f->var, f->start, f->stop, f->step, cell_lanes, f->axis, f->kind, f->dim);
        }
        // Groups start at multiples of the width, where the rows of aligned arrays are aligned
        // for the lanes too (a stencil's first cell is 1, its group 0).
        Expr w = ConstNode::make_int(x_.type(), width_);
        Expr first = simplify(BinaryNode::make(BinaryOp::Mul, BinaryNode::make(BinaryOp::Div, loop_->start, w), w));
        return ForNode::make(x_lanes_, first, loop_->stop, w, cell_lanes, loop_->axis, ForKind::GpuGrid, loop_->dim);
    }

private:
    /// The cell's statements over the lanes: an if/else on what all lanes share (stream_cells'
    /// whole group of cells and its last, partial one) branch by branch, each with its own
    /// rows of lanes; else lanes_of_cell. Nothing when no access goes into lanes.
    Stmt lanes_of(const Stmt& body) {
        auto pair = body.as<BlockNode>();
        auto yes = pair && pair->stmts.size() == 2 ? pair->stmts[0].as<IfThenNode>() : nullptr;
        auto no = pair && pair->stmts.size() == 2 ? pair->stmts[1].as<IfThenNode>() : nullptr;
        auto negated = no ? no->cond.as<UnaryNode>() : nullptr;
        if (!yes || !negated || negated->op != UnaryOp::Not || !negated->a.same_as(yes->cond) ||
            reads_any(yes->cond, {x_.get()}))
            return lanes_of_cell(body);
        Stmt a = lanes_of(yes->then_case), b = lanes_of(no->then_case);
        if (!a.defined() && !b.defined()) return Stmt();
        if (!a.defined()) a = one_by_one(yes->then_case);
        if (!b.defined()) b = one_by_one(no->then_case);
        return BlockNode::make({IfThenNode::make(yes->cond, a), IfThenNode::make(no->cond, b)});
    }

    /// Whether the cell at `cell_x` lies in the loop's range (`start <=` left out from 0).
    Expr in_range(const Expr& cell_x) const {
        Expr below_stop = BinaryNode::make(BinaryOp::Lt, cell_x, loop_->stop);
        if (is_const_value(loop_->start, 0)) return below_stop;
        return BinaryNode::make(BinaryOp::And, BinaryNode::make(BinaryOp::Ge, cell_x, loop_->start), below_stop);
    }

    /// A cell's statements for each lane in turn, where its cell lies in the loop's range.
    Stmt one_by_one(const Stmt& body) const {
        const ScalarType t = x_.type();
        Expr cell_inside = in_range(x_);
        Expr cell_x = BinaryNode::make(BinaryOp::Add, x_lanes_, lane_);
        return ForNode::make(lane_, ConstNode::make_int(t, 0), ConstNode::make_int(t, width_), ConstNode::make_int(t, 1),
                             BlockNode::make({DeclareNode::make(x_, cell_x), IfThenNode::make(cell_inside, body)}), -1,
                             ForKind::Unrolled);
    }

    /// The cell's statements `body` over the lanes (see vectorize_lanes), or nothing when no
    /// access goes into lanes.
    Stmt lanes_of_cell(const Stmt& body) {
        loads_.clear();
        stores_.clear();
        auto block = body.as<BlockNode>();
        std::vector<Stmt> stmts = block ? block->stmts : std::vector<Stmt>{body};
        // What changes from cell to cell: the counter, and every local the cell declares.
        struct Fields : IRVisitor {
            std::set<const ExprNode*> vars;
            std::set<const FieldInfo*> written, read;
            void visit_BufferStore(const BufferStoreNode* s) override {
                written.insert(s->buffer->field_of());
                IRVisitor::visit_BufferStore(s);
            }
            void visit_BufferLoad(const BufferLoadNode* l) override {
                read.insert(l->buffer->field_of());
                IRVisitor::visit_BufferLoad(l);
            }
        } cell;
        cell.visit(body);
        cell.vars = declared_variables(body);
        cell.vars.insert(x_.get());

        // Stores at the top of the cell's statements, of fields the cell does not read.
        std::vector<Stmt> lane_stmts;
        for (const Stmt& s : stmts) {
            auto st = as_field_store(s);
            const FieldInfo* f = st ? st->buffer->field.get() : nullptr;
            if (f && !cell.read.count(f) && lane_type(f->type, width_) &&
                contiguous_at(*f, st->indices, x_, loop_->axis, cell.vars, lane_reach()) == 0) {
                Lanes& l = lanes_for(stores_, BufferLoadNode::make(st->buffer, st->indices));
                if (!l.array) l.array = make_buffer(array_name(st->buffer->name), st->buffer->type, Scope::Local, {width_});
                lane_stmts.push_back(BufferStoreNode::make(l.array, lane_, st->value));
                continue;
            }
            lane_stmts.push_back(s);
        }
        // Loads of fields the cell does not write, anywhere in its statements, at x + d: first
        // the reach of each row of lanes, then its array, then the reads of the array.
        struct ReadLanes : IRMutator {
            LoweredLanes& self;
            const std::set<const ExprNode*>& vars;
            const std::set<const FieldInfo*>& written;
            bool sized = false; ///< false: only measure each row's reach
            int guarded = 0;    ///< inside a select's value, an if's body or a short-circuit operand
            ReadLanes(LoweredLanes& s, const std::set<const ExprNode*>& v, const std::set<const FieldInfo*>& w)
                : self(s), vars(v), written(w) {}
            Expr visit_Select(const SelectNode* n, const Expr& e) override {
                Expr c = mutate(n->cond);
                ++guarded;
                Expr a = mutate(n->if_true), b = mutate(n->if_false);
                --guarded;
                return c.same_as(n->cond) && a.same_as(n->if_true) && b.same_as(n->if_false) ? e : SelectNode::make(c, a, b);
            }
            Expr visit_Binary(const BinaryNode* n, const Expr& e) override {
                if (n->op != BinaryOp::And && n->op != BinaryOp::Or) return IRMutator::visit_Binary(n, e);
                Expr a = mutate(n->a);
                ++guarded;
                Expr b = mutate(n->b);
                --guarded;
                return a.same_as(n->a) && b.same_as(n->b) ? e : BinaryNode::make(n->op, a, b);
            }
            Stmt visit_IfThen(const IfThenNode* n, const Stmt& st) override {
                Expr c = mutate(n->cond);
                ++guarded;
                Stmt body = mutate(n->then_case);
                --guarded;
                return c.same_as(n->cond) && body.same_as(n->then_case) ? st : IfThenNode::make(c, body);
            }
            Expr visit_BufferLoad(const BufferLoadNode* l, const Expr& e) override {
                const FieldInfo* f = l->buffer->scope == Scope::Global ? l->buffer->field.get() : nullptr;
                const auto d = f && !written.count(f) && lane_type(f->type, self.width_) &&
                                       (!guarded || self.inside_when_guarded(*f, l->indices))
                                   ? contiguous_at(*f, l->indices, self.x_, self.loop_->axis, vars, self.lane_reach())
                                   : std::nullopt;
                if (!d) return IRMutator::visit_BufferLoad(l, e);
                Lanes& row = self.lanes_for(self.loads_, e);
                if (!sized) {
                    row.lo = std::max(row.lo, -*d);
                    row.hi = std::max(row.hi, *d);
                    return e;
                }
                const ScalarType t = self.lane_.type();
                Expr at = simplify(BinaryNode::make(BinaryOp::Add, self.lane_, ConstNode::make_int(t, *d + row.lo)));
                return BufferLoadNode::make(row.array, {at});
            }
        } read_lanes(*this, cell.vars, cell.written);
        Stmt lane_block = BlockNode::make(std::move(lane_stmts));
        read_lanes.mutate(lane_block);
        for (Lanes& l : loads_) {
            auto at = l.first.as<BufferLoadNode>();
            l.array = make_buffer(array_name(at->buffer->name), at->buffer->type, Scope::Local,
                                  {l.lo + width_ + l.hi});
        }
        read_lanes.sized = true;
        Stmt lane_body = read_lanes.mutate(lane_block);
        if (loads_.empty() && stores_.empty()) return Stmt(); // nothing in lanes

        const ScalarType t = x_.type();
        auto idx = [t](std::int64_t v) { return ConstNode::make_int(t, v); };
        Expr end = BinaryNode::make(BinaryOp::Add, x_lanes_, idx(width_));
        // A group lies inside when it starts at or after the loop's start and ends by its stop.
        Expr inside = BinaryNode::make(BinaryOp::Le, end, loop_->stop);
        if (!is_const_value(loop_->start, 0))
            inside = BinaryNode::make(BinaryOp::And, BinaryNode::make(BinaryOp::Ge, x_lanes_, loop_->start), inside);
        const std::vector<Segment> segments = segments_of(lane_body);
        if (segments.size() == 1 && loads_.size() > max_rows_) {
            // A group that was to roll and cannot (one run: its cells share a local, or store
            // no lanes apart): no lanes, rather than all its rows in registers at once.
            declined_ = true;
            return Stmt();
        }
        if (!only_local_accesses(lane_body)) {
            // All lanes inside: vectors, the cells unrolled over the lanes; the partial groups
            // at either end: the cells one by one, as before.
            StmtList full;
            for (const Segment& seg : segments) {
                for (const BufferPtr& b : seg.sums) full.allocate(b);
                for (const Lanes* l : seg.rows) {
                    full.allocate(l->array);
                    full.add(whole_row(*l));
                }
                for (const Lanes* l : seg.stores) full.allocate(l->array);
                full.add(over_lanes(seg.body));
                for (const Lanes* l : seg.stores) full.add(VectorStoreNode::make(l->first, l->array));
            }
            return BlockNode::make({IfThenNode::make(inside, full.build()),
                                    IfThenNode::make(UnaryNode::make(UnaryOp::Not, inside), one_by_one(body))});
        }
        return with_partial_groups(inside, segments);
    }

    /// A run of the lanes' statements: the rows first read in it are loaded just before it, the
    /// rows of lanes it fills stored just after it.
    struct Segment {
        Stmt body;
        std::vector<const Lanes*> rows, stores;
        std::vector<BufferPtr> sums; ///< partial sums' arrays, allocated before it
    };

    /// The lanes' statements as one segment with every row and store, or, where they read more
    /// than max_rows_ rows, rolling (see vectorize_lanes): cut after each store into lanes, the
    /// shared loads' registers (`u_r = u_lanes[lane + 1]`) read in place, runs that share a
    /// local joined (a cell's outputs); one segment where that leaves one run.
    std::vector<Segment> segments_of(const Stmt& lane_body) const {
        std::vector<Segment> one(1);
        auto of = lanes_of_array;
        one[0].body = lane_body;
        for (const Lanes& l : loads_) one[0].rows.push_back(&l);
        for (const Lanes& l : stores_) one[0].stores.push_back(&l);
        auto block = lane_body.as<BlockNode>();
        if (loads_.size() <= max_rows_ || stores_.size() < 2 || !block) return one;
        // A shared load's register, read in place: its row element, or, for an element that is
        // no row of lanes (a type without lanes), the load itself where no cell writes its field
        // (else every run would read the first one's register and the group could not roll).
        const std::set<const FieldInfo*> written = written_fields(lane_body);
        std::vector<std::pair<Expr, Expr>> aliases;
        std::vector<Stmt> rest;
        for (const Stmt& st : block->stmts) {
            auto d = st.as<DeclareNode>();
            auto l = d ? d->value.as<BufferLoadNode>() : nullptr;
            const bool global = l && l->buffer->scope == Scope::Global && l->buffer->field_of() &&
                                !written.count(l->buffer->field_of());
            if (l && (of(loads_, l->buffer.get()) || global)) aliases.emplace_back(d->var, d->value);
            else rest.push_back(st);
        }
        std::vector<std::vector<Stmt>> runs(1);
        for (Stmt st : rest) {
            for (const auto& [var, element] : aliases) st = replace_var(st, var, element);
            runs.back().push_back(st);
            auto store = st.as<BufferStoreNode>();
            if (store && of(stores_, store->buffer.get())) runs.emplace_back();
        }
        if (runs.back().empty()) runs.pop_back();
        // A cell with several outputs spans several runs: a run that reads a local of an earlier
        // one (their common subexpression) joins it and every run between, so that the cuts
        // fall between cells.
        std::vector<std::vector<Stmt>> cells;
        for (std::vector<Stmt>& run : runs) {
            std::size_t k = 0;
            while (k < cells.size() && !shares_a_local(cells[k], run)) ++k;
            if (k == cells.size()) {
                cells.push_back(std::move(run));
                continue;
            }
            for (std::size_t m = k + 1; m < cells.size(); ++m)
                cells[k].insert(cells[k].end(), cells[m].begin(), cells[m].end());
            cells.resize(k + 1);
            cells[k].insert(cells[k].end(), run.begin(), run.end());
        }
        runs = std::move(cells);
        if (runs.size() < 2) return one;
        std::vector<Segment> out(runs.size());
        std::set<const Lanes*> loaded;
        for (std::size_t i = 0; i < runs.size(); ++i) {
            out[i].body = BlockNode::make(runs[i]);
            for (const Expr& e : subexpressions(out[i].body)) {
                auto l = e.as<BufferLoadNode>();
                const Lanes* row = l ? of(loads_, l->buffer.get()) : nullptr;
                if (row && loaded.insert(row).second) out[i].rows.push_back(row);
            }
            for (const Stmt& st : runs[i])
                if (auto store = st.as<BufferStoreNode>(); store && of(stores_, store->buffer.get()))
                    out[i].stores.push_back(of(stores_, store->buffer.get()));
        }
        std::size_t stored = 0;
        for (const Segment& seg : out) stored += seg.stores.size();
        if (stored != stores_.size()) return one;
        for (const Lanes& l : loads_) // a row no run reads (none: every row has a reader)
            if (!loaded.count(&l)) out[0].rows.push_back(&l);
        std::vector<Segment> planes = plane_by_plane(runs);
        return planes.empty() ? out : planes;
    }

    /// One term of a cell's sum: `op term` (op Add or Sub; the first term has none), and the
    /// plane of the rows it reads (the offset along the cells' axis).
    struct Term {
        BinaryOp op = BinaryOp::Add;
        Expr value;
        std::int64_t plane = 0;
    };

    /// Rolling runs as partial sums, plane by plane (a hand-written 2.5D kernel's shape), or
    /// nothing: where every run is one store of lanes (and comments) whose value is a chain of
    /// sums `((t1 + t2) - t3) + ...` each of whose terms reads the rows of one plane along the
    /// cells' axis (or no row), in planes that never go back (a 27-point box written plane by
    /// plane), each plane's rows are loaded once and, for every cell that reads it, its terms
    /// there continue that cell's sum in a local array (`<store>_sum`, one element of the sum's
    /// type per lane) from where the last plane left it; a cell is stored after its last plane.
    /// The sum of each cell is computed in its own order, term by term (the same additions; the
    /// compiler may contract a product into an addition differently across the planes'
    /// statements, as FMA contraction goes statement by statement); a thread holds one plane's
    /// rows and a partial sum per cell instead of a cell's 9 rows.
    std::vector<Segment> plane_by_plane(const std::vector<std::vector<Stmt>>& runs) const {
        auto row_of = [&](const BufferInfo* b) { return lanes_of_array(loads_, b); };
        // Each run: its comments and its store of lanes.
        std::vector<const BufferStoreNode*> stores;
        std::vector<std::vector<Stmt>> comments(runs.size());
        for (std::size_t i = 0; i < runs.size(); ++i) {
            const BufferStoreNode* store = nullptr;
            for (const Stmt& st : runs[i]) {
                if (st.is<CommentNode>()) comments[i].push_back(st);
                else if (auto s = st.as<BufferStoreNode>(); s && !store) store = s;
                else return {};
            }
            if (!store || !lanes_of_array(stores_, store->buffer.get())) return {};
            stores.push_back(store);
        }
        // The cells' axis: the one coordinate of the stores' rows that changes from run to run.
        auto first_of = [&](const BufferStoreNode* st) {
            return lanes_of_array(stores_, st->buffer.get())->first.as<BufferLoadNode>(); // checked above
        };
        const BufferLoadNode* a0 = first_of(stores[0]);
        const BufferLoadNode* a1 = first_of(stores[1]);
        if (a0->indices.size() != a1->indices.size()) return {};
        int axis = -1;
        for (std::size_t i = 0; i < a0->indices.size(); ++i)
            if (!structurally_equal(a0->indices[i], a1->indices[i])) {
                if (axis >= 0) return {};
                axis = int(i);
            }
        if (axis < 0) return {};
        const Expr base = split_offset(a0->indices[std::size_t(axis)]).base;
        std::map<const Lanes*, std::int64_t> plane_of;
        for (const Lanes& l : loads_) {
            auto first = l.first.as<BufferLoadNode>();
            if (std::size_t(axis) >= first->indices.size()) return {};
            const Offset at = split_offset(first->indices[std::size_t(axis)]);
            if (!at.base.defined() || !structurally_equal(at.base, base)) return {};
            plane_of[&l] = at.k;
        }
        // Each cell's terms, with their planes.
        std::vector<std::vector<Term>> cells;
        for (const BufferStoreNode* st : stores) {
            std::vector<Term> terms;
            Expr e = st->value;
            while (auto b = e.as<BinaryNode>()) {
                if ((b->op != BinaryOp::Add && b->op != BinaryOp::Sub) || !is_float(b->type)) break;
                terms.push_back({b->op, b->b});
                e = b->a;
            }
            terms.push_back({BinaryOp::Add, e});
            std::reverse(terms.begin(), terms.end());
            // A term without rows (a constant) joins the plane of the term before it (or the
            // first plane).
            constexpr std::int64_t kUnplaced = std::numeric_limits<std::int64_t>::min();
            std::optional<std::int64_t> first, last;
            for (Term& t : terms) {
                std::optional<std::int64_t> plane;
                for (const Expr& x : subexpressions(t.value)) {
                    auto l = x.as<BufferLoadNode>();
                    if (!l) continue;
                    const Lanes* row = row_of(l->buffer.get());
                    if (!row) return {}; // another access: leave the cells whole
                    if (plane && *plane != plane_of.at(row)) return {};
                    plane = plane_of.at(row);
                }
                if (plane && last && *plane < *last) return {}; // back to an earlier plane
                if (plane) last = plane;
                if (plane && !first) first = plane;
                t.plane = last ? *last : kUnplaced;
            }
            if (!first) return {};
            for (Term& t : terms)
                if (t.plane == kUnplaced) t.plane = *first;
            cells.push_back(std::move(terms));
        }
        std::set<std::int64_t> planes;
        for (const auto& terms : cells)
            for (const Term& t : terms) planes.insert(t.plane);
        for (const auto& [row, plane] : plane_of)
            if (!planes.count(plane)) return {};
        if (planes.size() < 2) return {};

        std::vector<Segment> out;
        std::vector<BufferPtr> sums(cells.size());
        std::vector<bool> started(cells.size(), false);
        for (std::int64_t plane : planes) {
            Segment seg;
            for (const auto& [row, p] : plane_of)
                if (p == plane) seg.rows.push_back(row);
            std::sort(seg.rows.begin(), seg.rows.end(), [&](const Lanes* a, const Lanes* b) {
                return a - loads_.data() < b - loads_.data();
            });
            std::vector<Stmt> body;
            for (std::size_t c = 0; c < cells.size(); ++c) {
                const std::vector<Term>& terms = cells[c];
                std::size_t from = 0;
                while (from < terms.size() && terms[from].plane != plane) ++from;
                if (from == terms.size()) continue;
                std::size_t to = from;
                while (to < terms.size() && terms[to].plane == plane) ++to;
                const bool last = to == terms.size();
                Expr sum;
                if (!started[c]) {
                    body.insert(body.end(), comments[c].begin(), comments[c].end());
                    sum = terms[from].value;
                    ++from;
                    started[c] = true;
                } else {
                    sum = BufferLoadNode::make(sums[c], {lane_});
                }
                for (std::size_t i = from; i < to; ++i) sum = BinaryNode::make(terms[i].op, sum, terms[i].value);
                if (last) {
                    body.push_back(BufferStoreNode::make(stores[c]->buffer, stores[c]->indices, sum));
                    seg.stores.push_back(lanes_of_array(stores_, stores[c]->buffer.get()));
                } else {
                    if (!sums[c]) {
                        sums[c] = make_buffer(stores[c]->buffer->name + "_sum", sum.type(), Scope::Local, {width_});
                        seg.sums.push_back(sums[c]);
                    }
                    body.push_back(BufferStoreNode::make(sums[c], {lane_}, sum));
                }
            }
            seg.body = BlockNode::make(std::move(body));
            out.push_back(std::move(seg));
        }
        return out;
    }

    /// Whether `later` reads a variable `earlier` declares or a local array (not a row or a
    /// store of lanes) `earlier` loads or stores.
    bool shares_a_local(const std::vector<Stmt>& earlier, const std::vector<Stmt>& later) const {
        const Stmt first = BlockNode::make(earlier);
        const std::set<const ExprNode*> own = declared_variables(first);
        std::set<const BufferInfo*> locals;
        for (const BufferInfo* b : local_arrays(first))
            if (!lanes_of_array(loads_, b) && !lanes_of_array(stores_, b)) locals.insert(b);
        for (const Stmt& st : later) {
            if (reads_any(st, own)) return true;
            for (const BufferInfo* b : local_arrays(st))
                if (locals.count(b)) return true;
        }
        return false;
    }

    /// The row of lanes in `list` whose local array is `b`, or null.
    static const Lanes* lanes_of_array(const std::vector<Lanes>& list, const BufferInfo* b) {
        for (const Lanes& l : list)
            if (l.array.get() == b) return &l;
        return nullptr;
    }

    /// `body` unrolled over the lanes, with the cell's counter where it still reads it (a
    /// neighbour along another axis, a scalar access); a cell that reads only lanes needs none.
    Stmt over_lanes(const Stmt& body) const {
        const ScalarType t = x_.type();
        auto idx = [t](std::int64_t v) { return ConstNode::make_int(t, v); };
        Expr cell_x = BinaryNode::make(BinaryOp::Add, x_lanes_, lane_);
        Stmt lane_cell = reads_counter(body) ? BlockNode::make({DeclareNode::make(x_, cell_x), body}) : body;
        return ForNode::make(lane_, idx(0), idx(width_), idx(1), lane_cell, -1, ForKind::Unrolled);
    }

    /// A row of lanes where the whole group lies inside: one vector, and the neighbours before
    /// the first lane and after the last one by one.
    Stmt whole_row(const Lanes& l) const {
        const ScalarType t = x_.type();
        auto first = l.first.as<BufferLoadNode>();
        StmtList row;
        row.add(VectorLoadNode::make(l.array, l.first, int(l.lo), width_));
        auto neighbour = [&](std::int64_t k) {
            std::vector<Expr> at = first->indices;
            Expr& x = at[std::size_t(loop_->axis)];
            x = simplify(k < 0 ? BinaryNode::make(BinaryOp::Sub, x, ConstNode::make_int(t, -k))
                               : BinaryNode::make(BinaryOp::Add, x, ConstNode::make_int(t, k)));
            row.add(BufferStoreNode::make(l.array, {ConstNode::make_int(t, k + l.lo)}, BufferLoadNode::make(first->buffer, at)));
        };
        for (std::int64_t k = -l.lo; k < 0; ++k) neighbour(k);
        for (std::int64_t k = width_; k < width_ + l.hi; ++k) neighbour(k);
        return row.build();
    }

    /// The cell's lanes for every group, whole or partial (the first and last of each row):
    /// each row one vector where the group lies within the cells' reach (else its elements the
    /// cells read, one by one, guarded, zero elsewhere), its neighbours one by one, guarded; a
    /// whole group stores its lanes as a vector, a partial one those of its cells. The lanes in
    /// between are one stream of instructions for both. A partial group apart, cell by cell,
    /// would serialise its warp: on a 512^3 grid with lanes of 4, half of the warps hold a
    /// row's first or last group, and the 3D 7-point f32 stencil ran at 0.69 of copy instead of
    /// 0.79 on an H200 (bench/probe_kernels/probe_lane_edges.cu). Only where the lanes'
    /// statements touch nothing but the rows' arrays and locals, since a partial group computes
    /// its outside lanes too, from whatever its rows hold there, and drops them.
    Stmt with_partial_groups(const Expr& inside, const std::vector<Segment>& segments) const {
        const ScalarType t = x_.type();
        auto idx = [t](std::int64_t v) { return ConstNode::make_int(t, v); };
        // The cells of the loop's range read the elements in [start - lo, stop + hi) of a row
        // (the kernel's reach keeps them inside the array), where the range is not empty.
        auto read_by_cells = [&](const Expr& e, std::int64_t lo, std::int64_t hi) {
            Expr from = simplify(BinaryNode::make(BinaryOp::Sub, loop_->start, idx(lo)));
            Expr to = simplify(BinaryNode::make(BinaryOp::Add, loop_->stop, idx(hi)));
            Expr c = BinaryNode::make(BinaryOp::And, BinaryNode::make(BinaryOp::Ge, e, from),
                                      BinaryNode::make(BinaryOp::Lt, e, to));
            // From 0, the grid's own guard (x_lanes < stop) says the range is not empty.
            if (is_const_value(loop_->start, 0)) return c;
            return BinaryNode::make(BinaryOp::And, BinaryNode::make(BinaryOp::Lt, loop_->start, loop_->stop), c);
        };
        // `<x>_whole`: whether the group lies inside the range, named once for its stores (and
        // the rows of a buffer, or of a kernel over whole rows).
        StmtList out;
        const std::string x_name = x_.as<VarNode>()->name;
        const Expr whole_group = VarNode::make(ScalarType::Bool, x_name + "_whole", VarRole::CseTemp);
        out.add(DeclareNode::make(whole_group, inside));
        // `<x>_rows_whole`: whether the group's W elements of every row lie inside its array
        // (a field of the iteration space: [0, size) along the lanes' axis; every group of a
        // row whose length is a multiple of W, the first and last too, whatever the range, its
        // ghost layers or slice). One branch on it for all the group's rows: each row one
        // vector in the first copy, element by element in the second (the end of a row that is
        // no multiple of W); the neighbours before and after the vector load one by one,
        // guarded, in both. A branch between a vector and the elements on every row made the
        // warps that hold a row's first or last group run both: the 27-point box f32 on an
        // H200, 0.56 of copy with a branch per row on the group, 0.67 per row on the rows in
        // reach, 0.70 with one branch (bench/probe_kernels/probe_box27_gap.cu, bench_stencils).
        std::vector<Expr> ends; // the arrays' extents along the lanes' axis
        for (const Lanes& l : loads_) {
            const BufferInfo& b = *l.first.as<BufferLoadNode>()->buffer;
            const Expr end = std::size_t(loop_->axis) < b.shape.size() ? b.shape[std::size_t(loop_->axis)] : Expr();
            if (end.defined() && !bounds_.buffers.count(b.field.get()) &&
                std::none_of(ends.begin(), ends.end(), [&](const Expr& e) { return structurally_equal(e, end); }))
                ends.push_back(end);
        }
        // Over a whole row (a pointwise kernel over [0, size)) the rows are whole where the group
        // is: one copy, a branch per row (Either below), and a partial group runs no other copy.
        const bool whole_rows = is_const_value(loop_->start, 0) && ends.size() == 1 && structurally_equal(ends[0], loop_->stop);
        const bool two_copies = !ends.empty() && !whole_rows;
        Expr rows_whole = whole_group;
        if (two_copies) {
            rows_whole = VarNode::make(ScalarType::Bool, x_name + "_rows_whole", VarRole::CseTemp);
            Expr c;
            for (const Expr& end : ends) {
                Expr le = BinaryNode::make(BinaryOp::Le, BinaryNode::make(BinaryOp::Add, x_lanes_, idx(width_)), end);
                c = c.defined() ? BinaryNode::make(BinaryOp::And, c, le) : le;
            }
            // From a start of 0 or more the groups start at 0 or more (a multiple of W below it).
            if (!(is_const(loop_->start) && loop_->start.as<ConstNode>()->int_value >= 0))
                c = BinaryNode::make(BinaryOp::And, BinaryNode::make(BinaryOp::Ge, x_lanes_, idx(0)), c);
            out.add(DeclareNode::make(rows_whole, c));
        }
        // One copy of the group's statements, its rows as vectors (Vectors), element by element
        // (Elements) or either as the group is whole or not (Either), with local arrays of its
        // own (`arrays`: this copy's for each of the first's).
        enum class Rows { Vectors, Elements, Either };
        using Arrays = std::map<const BufferInfo*, BufferPtr>;
        auto copy = [&](Rows rows, const Arrays& arrays) {
            auto arr = [&](const BufferPtr& b) {
                auto it = arrays.find(b.get());
                return it == arrays.end() ? b : it->second;
            };
            StmtList body;
            for (const Segment& seg : segments) {
                for (const BufferPtr& b : seg.sums) body.allocate(arr(b));
                for (const Lanes* l : seg.rows) {
                    const BufferPtr a = arr(l->array);
                    body.allocate(a);
                    auto first = l->first.as<BufferLoadNode>();
                    // Element k of the array, x_lanes + k - lo of the row, where the cells read
                    // it (zero elsewhere).
                    auto element = [&](const Expr& k) {
                        Expr e = simplify(BinaryNode::make(BinaryOp::Sub, BinaryNode::make(BinaryOp::Add, x_lanes_, k), idx(l->lo)));
                        std::vector<Expr> row_at = first->indices;
                        row_at[std::size_t(loop_->axis)] = e;
                        return BlockNode::make(
                            {BufferStoreNode::make(a, {k}, zero_of(a->type)),
                             IfThenNode::make(simplify(read_by_cells(e, l->lo, l->hi)),
                                              BufferStoreNode::make(a, {k}, BufferLoadNode::make(first->buffer, row_at)))});
                    };
                    Expr k = VarNode::make(t, "k", VarRole::LoopIndex);
                    Stmt elements = ForNode::make(k, idx(l->lo), idx(l->lo + width_), idx(1), element(k), -1, ForKind::Unrolled);
                    Stmt vector = VectorLoadNode::make(a, l->first, int(l->lo), width_);
                    // A buffer has a shape of its own, not the iteration space's.
                    if (rows == Rows::Either || (rows == Rows::Vectors && bounds_.buffers.count(first->buffer->field.get()))) {
                        body.add(IfThenNode::make(whole_group, vector));
                        body.add(IfThenNode::make(UnaryNode::make(UnaryOp::Not, whole_group), elements));
                    } else {
                        body.add(rows == Rows::Vectors ? vector : elements);
                    }
                    // The neighbours one by one, guarded (predicated loads). Selects instead,
                    // read through the cell's pointer, measured slower (the 3D 7-point f32:
                    // 0.82 against 0.85 of copy on an H200).
                    for (std::int64_t n = 0; n < l->lo; ++n) body.add(element(idx(n)));
                    for (std::int64_t n = l->lo + width_; n < l->lo + width_ + l->hi; ++n) body.add(element(idx(n)));
                }
                for (const Lanes* l : seg.stores) body.allocate(arr(l->array));
                body.add(over_lanes(arrays.empty() ? seg.body : RedirectBuffers(arrays, true).mutate(seg.body)));
                for (const Lanes* l : seg.stores) {
                    const BufferPtr a = arr(l->array);
                    auto first = l->first.as<BufferLoadNode>();
                    Expr cell_x = BinaryNode::make(BinaryOp::Add, x_lanes_, lane_);
                    std::vector<Expr> i = first->indices;
                    i[std::size_t(loop_->axis)] = cell_x;
                    Stmt one = IfThenNode::make(in_range(cell_x), BufferStoreNode::make(first->buffer, i, BufferLoadNode::make(a, {lane_})));
                    Stmt lane_by_lane = ForNode::make(lane_, idx(0), idx(width_), idx(1), one, -1, ForKind::Unrolled);
                    // Rows not whole: a partial group; rows whole: either.
                    if (rows == Rows::Elements) {
                        body.add(lane_by_lane);
                    } else {
                        body.add(IfThenNode::make(whole_group, VectorStoreNode::make(l->first, a)));
                        body.add(IfThenNode::make(UnaryNode::make(UnaryOp::Not, whole_group), lane_by_lane));
                    }
                }
            }
            return body.build();
        };
        if (!two_copies) {
            out.add(copy(Rows::Either, {}));
            return out.build();
        }
        // The second copy's arrays: verify wants each array allocated once.
        Arrays fresh;
        for (const Segment& seg : segments) {
            std::vector<BufferPtr> all = seg.sums;
            for (const Lanes* l : seg.rows) all.push_back(l->array);
            for (const Lanes* l : seg.stores) all.push_back(l->array);
            for (const BufferPtr& b : all)
                if (!fresh.count(b.get())) fresh[b.get()] = std::make_shared<BufferInfo>(*b);
        }
        // A warp that holds groups of both kinds runs both copies (a row of 510 cells, its last
        // group), not where the partial group is alone in its warp (514 = 512 + 2 ghost cells:
        // the 129th group).
        out.add(IfThenNode::make(rows_whole, copy(Rows::Vectors, {})));
        out.add(IfThenNode::make(UnaryNode::make(UnaryOp::Not, rows_whole), copy(Rows::Elements, fresh)));
        return out.build();
    }

    /// 0 of type t: a 16-bit float has no literal of its own (it is rounded from a float).
    static Expr zero_of(ScalarType t) {
        if (t == ScalarType::Float16 || t == ScalarType::BFloat16)
            return CastNode::make(t, ConstNode::make(ScalarType::Float32, 0.0));
        return ConstNode::make(t, 0.0);
    }

    /// Whether `s` reads and writes only local arrays and variables (no field, no shared
    /// memory, no barrier or reduction), and does nothing that C++ leaves undefined for the
    /// values a partial group's outside lanes start from (zeros, or whatever the rows hold
    /// outside the range: an integer division or remainder, a float converted to an integer):
    /// the statements of a lane computed only to be dropped.
    static bool only_local_accesses(const Stmt& s) {
        struct Check : IRVisitor {
            bool ok = true;
            void visit_Binary(const BinaryNode* b) override {
                ok &= !((b->op == BinaryOp::Div || b->op == BinaryOp::Mod) && !is_float(b->type));
                IRVisitor::visit_Binary(b);
            }
            void visit_Cast(const CastNode* c) override {
                ok &= !(is_float(c->value.type()) && !is_float(c->type));
                IRVisitor::visit_Cast(c);
            }
            void visit_BufferLoad(const BufferLoadNode* l) override {
                ok &= l->buffer->scope == Scope::Local;
                IRVisitor::visit_BufferLoad(l);
            }
            void visit_BufferStore(const BufferStoreNode* st) override {
                ok &= st->buffer->scope == Scope::Local;
                IRVisitor::visit_BufferStore(st);
            }
            void visit_Reduce(const ReduceNode* r) override {
                ok = false;
                IRVisitor::visit_Reduce(r);
            }
            void visit_WarpReduce(const WarpReduceNode* r) override {
                ok = false;
                IRVisitor::visit_WarpReduce(r);
            }
            void visit_Barrier(const BarrierNode*) override { ok = false; }
            void visit_Stage(const StageNode*) override { ok = false; }
            void visit_LastBlock(const LastBlockNode*) override { ok = false; }
            void visit_VectorLoad(const VectorLoadNode*) override { ok = false; }
            void visit_VectorStore(const VectorStoreNode*) override { ok = false; }
            void visit_Dense(const DenseNode*) override { ok = false; }
            void visit_MmaChain(const MmaChainNode*) override { ok = false; }
        } check;
        check.visit(s);
        return check.ok;
    }

    /// Whether `s` reads the cell's counter x.
    bool reads_counter(const Stmt& s) const {
        for (const Expr& e : subexpressions(s))
            if (e.same_as(x_)) return true;
        return false;
    }

    /// `<field>_lanes` for a field's first row of lanes, `<field>_lanes_<k>` for its others.
    std::string array_name(const std::string& field) {
        const int k = names_[field]++;
        return k == 0 ? field + "_lanes" : fmt::format("{}_lanes_{}", field, k);
    }

    /// The row of lanes of `load` (an access at x + d), made at its first use: at x_lanes, lane 0.
    Lanes& lanes_for(std::vector<Lanes>& list, const Expr& load) {
        auto l = load.as<BufferLoadNode>();
        std::vector<Expr> at = l->indices;
        at[std::size_t(loop_->axis)] = x_lanes_;
        Expr first = BufferLoadNode::make(l->buffer, at);
        for (Lanes& x : list)
            if (structurally_equal(x.first, first)) return x;
        list.push_back({first, nullptr});
        return list.back();
    }

    /// The kernel's reach along the lanes' axis.
    std::pair<int, int> lane_reach() const {
        const auto a = std::size_t(loop_->axis);
        return a < bounds_.reach.size() ? bounds_.reach[a] : std::pair<int, int>{0, 0};
    }

    /// Whether a read under a guard (a select's value, an if's body) lies inside its array for
    /// every cell of the loop's range, as rows of lanes are loaded whatever the guard says: a
    /// field of the iteration space (not a buffer, which has its own shape) at `counter + k` on
    /// every other spatial axis, k within the kernel's reach there (its ghost layers or slice
    /// keep those cells inside). An absolute read past the array's end under a guard
    /// (`u.at(x + 1, y)` under `x + 1 < n`) stays where it is.
    bool inside_when_guarded(const FieldInfo& f, const std::vector<Expr>& indices) const {
        if (bounds_.buffers.count(&f)) return false;
        for (std::size_t i = 0; i < indices.size() && int(i) < f.spatial_dims; ++i) {
            if (int(i) == loop_->axis) continue; // the lanes' axis: contiguous_at checks the reach
            const Offset at = split_offset(indices[i]);
            auto v = at.base.as<VarNode>();
            if (!v || v->role != VarRole::Counter || v->axis != int(i) || i >= bounds_.reach.size() ||
                at.k < -bounds_.reach[i].first || at.k > bounds_.reach[i].second)
                return false;
        }
        return true;
    }

    const ForNode* loop_;
    int width_;
    const LaneBounds& bounds_;
    std::size_t max_rows_;
    bool declined_ = false; ///< a group too wide to load at once did not roll
    Expr x_, x_lanes_, lane_;
    std::vector<Lanes> loads_, stores_;
    std::map<std::string, int> names_;
};

class Vectorize : public IRMutator {
public:
    Vectorize(int width, const LaneBounds& bounds, std::size_t max_rows) : width_(width), bounds_(bounds), max_rows_(max_rows) {}

protected:
    Stmt visit_For(const ForNode* f, const Stmt& self) override {
        if (f->kind != ForKind::GpuGrid || f->dim != 0 || !is_const_value(f->step, 1))
            return IRMutator::visit_For(f, self);
        Stmt lanes = LoweredLanes(f, width_, bounds_, max_rows_).run();
        return lanes.defined() ? lanes : self;
    }

private:
    int width_;
    const LaneBounds& bounds_;
    std::size_t max_rows_;
};

} // namespace

Stmt vectorize_lanes(const Stmt& body, int width, const LaneBounds& bounds, std::size_t max_rows_at_once) {
    if (width <= 1) return body;
    if (width != 2 && width != 4 && width != 8)
        throw InternalError("vectorize_lanes: lanes of 2, 4 or 8 only (check_schedule)");
    return Vectorize(width, bounds, max_rows_at_once).mutate(body);
}

} // namespace loom::ir
