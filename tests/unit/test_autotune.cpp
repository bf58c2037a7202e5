// Autotuning without a GPU: the space each kind of kernel gets, every candidate of it lowering
// to valid CUDA (or to a UserError, never an internal one), the search against timing tables
// whose winner is known, the stored record, and the cases with nothing to tune. The GPU side
// (timing, restoring outputs, the winner's results) is tests/gpu/test_autotune_gpu.cpp.
#include "runtime/compile_cache.hpp"
#include "runtime/nvrtc_compiler.hpp"
#include "runtime/tuning_record.hpp"
#include "runtime/tuning_search.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

namespace loom {
namespace {

Kernel five_point(Target target = Target::CUDA, const Schedule& s = {}) {
    auto [src, dst] = fields<2>("src, dst: float32[2D]");
    return create_kernel({Assignment(dst.center(), 0.25 * (src[{1, 0}] + src[{-1, 0}] +
                                                           src[{0, 1}] + src[{0, -1}]))},
                         {.target = target, .name = "five_point"}, s);
}

Kernel pointwise() {
    auto [f, g] = fields<2>("f, g: float32[3D]");
    return create_kernel({Assignment(f.center(), 2.0 * g.center())}, {.name = "scale"});
}

Kernel row_mean() {
    auto [x, y] = fields<2>("x(256), y: float32[1D]");
    IndexVar k("k", 256);
    return create_kernel({Assignment(y.center(), mean(k, x(k)))}, {.name = "row_mean"});
}

std::set<Knob> knobs(const TuningSpace& s) {
    std::set<Knob> out;
    for (const TuningDimension& d : s.dimensions) out.insert(d.knob);
    return out;
}

TEST(AutotuneSpace, AStencilTunesTilesLanesCellsStreamingAndTheBlock) {
    const TuningSpace space = five_point().spec().tuning;
    EXPECT_EQ(knobs(space), (std::set<Knob>{Knob::SharedTiles, Knob::VectorWidth,
                                            Knob::CellsPerThread, Knob::CellsAxis,
                                            Knob::StreamCells, Knob::Block}));
    // The algorithmic choices come first: they change what the later fields mean.
    EXPECT_EQ(space.dimensions.front().knob, Knob::SharedTiles);
    EXPECT_EQ(space.dimensions.back().knob, Knob::Block);
    EXPECT_EQ(space.combinations(), 2u * 3 * 5 * 2 * 2 * 12);
}

TEST(AutotuneSpace, APointwiseKernelHasNoTilesNorStreaming) {
    const std::set<Knob> k = knobs(pointwise().spec().tuning);
    EXPECT_FALSE(k.count(Knob::SharedTiles));
    EXPECT_FALSE(k.count(Knob::StreamCells));
    EXPECT_TRUE(k.count(Knob::VectorWidth));
    EXPECT_TRUE(k.count(Knob::Block));
}

TEST(AutotuneSpace, AReductionTriesABlockPerCell) {
    const TuningSpace space = row_mean().spec().tuning;
    EXPECT_EQ(space.dimensions.front().knob, Knob::ReduceInBlock);
    // 1D: one cell per thread, no cells axis; the blocks are (n, 1, 1).
    EXPECT_FALSE(knobs(space).count(Knob::CellsPerThread));
    for (const TuningDimension& d : space.dimensions)
        if (d.knob == Knob::Block)
            for (const auto& b : d.values) EXPECT_EQ(b[1] * b[2], 1);
}

TEST(AutotuneSpace, FieldsTheRequestSetsAreNotTuned) {
    const Schedule fixed{.block = std::array<int, 3>{32, 8, 1}, .cells_per_thread = 2,
                         .stream_cells = false};
    const std::set<Knob> k = knobs(five_point(Target::CUDA, fixed).spec().tuning);
    EXPECT_FALSE(k.count(Knob::Block));
    EXPECT_FALSE(k.count(Knob::CellsPerThread));
    EXPECT_FALSE(k.count(Knob::StreamCells));
    EXPECT_TRUE(k.count(Knob::CellsAxis));
}

TEST(AutotuneSpace, TheCpuTargetAndManualGridsHaveNone) {
    EXPECT_TRUE(five_point(Target::CPU).spec().tuning.dimensions.empty());
    EXPECT_TRUE(five_point(Target::CUDA, {.manual_launch_grid = true}).spec().tuning.dimensions.empty());
}

/// Every schedule that differs from the request in one field, plus `extra` random combinations:
/// each lowers to CUDA that NVRTC compiles for sm_90, or is refused with a UserError.
void expect_space_compiles(const Kernel& k, int extra, std::uint64_t seed) {
    const KernelSpec spec = k.spec();
    std::vector<Schedule> candidates;
    for (const TuningDimension& d : spec.tuning.dimensions)
        for (const auto& v : d.values) {
            Schedule s = spec.requested_schedule;
            apply_knob(s, d.knob, v);
            candidates.push_back(s);
        }
    std::mt19937_64 rng(seed);
    for (int i = 0; i < extra; ++i) {
        Schedule s = spec.requested_schedule;
        for (const TuningDimension& d : spec.tuning.dimensions)
            apply_knob(s, d.knob, d.values[rng() % d.values.size()]);
        candidates.push_back(s);
    }
    std::set<std::string> sources;
    int lowered = 0, refused = 0;
    for (const Schedule& s : candidates) {
        SCOPED_TRACE(s.describe());
        try {
            KernelSpec c = spec.reschedule(s);
            ++lowered;
            if (!sources.insert(c.source).second) continue;
            NvrtcOptions o;
            o.arch = 90;
            EXPECT_NO_THROW(nvrtc_compile(c.source, c.name, o));
        } catch (const UserError& e) {
            ++refused; // a combination the analysis rejects, with its reason
            EXPECT_NE(std::string(e.what()), "");
        }
    }
    EXPECT_GT(lowered, int(candidates.size()) / 2) << refused << " refused";
}

TEST(AutotuneSpace, EveryCandidateOfAStencilLowersToValidCudaOrAUserError) {
    expect_space_compiles(five_point(), 12, 1);
}

TEST(AutotuneSpace, EveryCandidateOf27PointsIn3DAndOfAReduction) {
    auto [u, v] = fields<2>("u, v: float32[3D]");
    Expr sum;
    for (int z = -1; z <= 1; ++z)
        for (int y = -1; y <= 1; ++y)
            for (int x = -1; x <= 1; ++x) {
                Expr t = (1.0 + 0.1 * (z + 3 * y + 9 * x)) * u[{z, y, x}];
                sum = sum.defined() ? sum + t : t;
            }
    expect_space_compiles(create_kernel({Assignment(v.center(), sum)}, {.name = "box27"}), 8, 2);
    expect_space_compiles(row_mean(), 4, 3);
}

TEST(AutotuneSpace, TensorCoresTuneTheTilesPerWarpAndTheBlockOnly) {
    auto [x, y] = fields<2>("x(32), y(8): float32[1D]");
    AssignmentCollection ac;
    nn::Chain(nn::Dense::runtime("l0", 32, 32, nn::relu), nn::Dense::runtime("l1", 8, 32)).assign(ac, y.vec(), x.vec());
    Kernel k = create_kernel(ac, {.name = "tc_tune"}, Schedule{.tensor_cores = TensorCores::Float16});
    const TuningSpace space = k.spec().tuning;
    EXPECT_EQ(knobs(space), (std::set<Knob>{Knob::CellsPerThread, Knob::Block}));
    EXPECT_EQ(space.combinations(), 5u * 3);
    expect_space_compiles(k, 4, 4);
}

TEST(AutotuneSpace, RescheduleLowersTheSameKernelWithAnotherSchedule) {
    const KernelSpec spec = five_point().spec();
    const KernelSpec two = spec.reschedule({.cells_per_thread = 2});
    EXPECT_EQ(two.schedule.cells_per_thread, 2);
    EXPECT_EQ(spec.schedule.cells_per_thread, 4);
    EXPECT_NE(two.source, spec.source);
    EXPECT_EQ(two.name, spec.name);
    ASSERT_TRUE(two.reschedule); // rescheduled again, as a tuning's second round does
    EXPECT_EQ(two.reschedule({}).source, spec.source);
    try {
        spec.reschedule({.cells_axis = 7});
        ADD_FAILURE() << "cells_axis 7 in 2D was accepted";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("cells_axis"), std::string::npos) << e.what();
    }
}

// ---- The search, against tables ----------------------------------------------------------

/// A space of two knobs and a timing that is the sum of one cost per knob: separable, so the
/// walk finds the optimum in one round.
TuningSpace two_knobs() {
    return {{{Knob::CellsPerThread, {{1}, {2}, {4}, {8}}},
             {Knob::Block, {{32, 4, 1}, {64, 4, 1}, {128, 1, 1}}}}};
}

double separable_ms(const Schedule& s) {
    const std::map<int, double> cells{{0, 5.0}, {1, 4.0}, {2, 3.0}, {4, 1.0}, {8, 2.0}};
    double block = !s.block ? 3.0 : (*s.block)[0] == 128 ? 0.5 : (*s.block)[0] == 64 ? 2.0 : 1.0;
    return cells.at(s.cells_per_thread) + block;
}

TEST(AutotuneSearch, TheWalkFindsTheFastestOfASeparableSpaceTimingEachRequestOnce) {
    std::vector<std::string> timed;
    TimeSchedules time = [&](const std::vector<Schedule>& batch) {
        std::vector<TrialTiming> out;
        for (const Schedule& s : batch) {
            timed.push_back(s.describe());
            out.push_back({separable_ms(s), "", false});
        }
        return out;
    };
    SearchOutcome r = search_schedules(two_knobs(), {}, time, {}, [] { return false; });
    ASSERT_TRUE(r.best_ms);
    EXPECT_DOUBLE_EQ(*r.best_ms, 1.5);
    EXPECT_EQ(r.best.cells_per_thread, 4);
    EXPECT_EQ(r.best.block, (std::array<int, 3>{128, 1, 1}));
    EXPECT_DOUBLE_EQ(*r.start_ms, 8.0);
    std::set<std::string> distinct(timed.begin(), timed.end());
    EXPECT_EQ(distinct.size(), timed.size()) << "a request was timed twice";
    // The start, 4 cells, 3 blocks; the second round times the other 3 cells with the new
    // block, changes nothing, and stops.
    EXPECT_EQ(r.trials.size(), 1u + 4 + 3 + 3);
    EXPECT_FALSE(r.stopped_early);
}

TEST(AutotuneSearch, FailuresAreSkippedAndTheExhaustiveSearchFindsWhatTheWalkMisses) {
    // A valley the walk cannot reach from the start: (8 cells, block 32) alone is fast, and each
    // of its two fields alone is slow.
    auto ms = [](const Schedule& s) -> TrialTiming {
        if (s.cells_per_thread == 2) return {{}, "refused", false};
        const bool b32 = s.block && (*s.block)[0] == 32;
        if (s.cells_per_thread == 8 && b32) return {0.1, "", false};
        return {1.0 + (s.cells_per_thread == 8 || b32 ? 1.0 : 0.0) + 0.01 * s.cells_per_thread,
                "", false};
    };
    TimeSchedules time = [&](const std::vector<Schedule>& batch) {
        std::vector<TrialTiming> out;
        for (const Schedule& s : batch) out.push_back(ms(s));
        return out;
    };
    SearchOutcome walk = search_schedules(two_knobs(), {}, time, {}, [] { return false; });
    EXPECT_GT(*walk.best_ms, 0.5);
    bool saw_refusal = false;
    for (const AutotuneTrial& t : walk.trials) saw_refusal = saw_refusal || t.error == "refused";
    EXPECT_TRUE(saw_refusal);
    SearchOutcome all = search_schedules(two_knobs(), {}, time, {.exhaustive = true},
                                         [] { return false; });
    EXPECT_DOUBLE_EQ(*all.best_ms, 0.1);
    EXPECT_EQ(all.trials.size(), 1u + 4 * 3);
}

TEST(AutotuneSearch, ItStopsWhenOutOfTimeWithTheBestSoFar) {
    int batches = 0;
    TimeSchedules time = [&](const std::vector<Schedule>& batch) {
        ++batches;
        std::vector<TrialTiming> out;
        for (const Schedule& s : batch) out.push_back({separable_ms(s), "", false});
        return out;
    };
    SearchOutcome r = search_schedules(two_knobs(), {}, time, {},
                                       [&] { return batches >= 2; });
    EXPECT_TRUE(r.stopped_early);
    EXPECT_EQ(batches, 2); // the start, then the cells: the blocks were never timed
    EXPECT_EQ(r.best.cells_per_thread, 4);
    EXPECT_FALSE(r.best.block);
}

// ---- The record ----------------------------------------------------------------------------

TEST(AutotuneRecord, TheTextRoundTripsAndDamageIsAMiss) {
    TuningRecord r;
    r.schedule = {.block = std::array<int, 3>{32, 8, 1}, .cells_per_thread = 8, .cells_axis = 0,
                  .stream_cells = true, .vector_width = 1, .shared_tiles = true, .online_softmax = false};
    r.ms = 0.1 + 0.02; // not exact in binary: the text keeps every bit
    r.default_ms = 0.25;
    const std::string text = to_text(r);
    auto back = tuning_record_from_text(text);
    ASSERT_TRUE(back);
    EXPECT_EQ(back->schedule.describe(), r.schedule.describe());
    EXPECT_EQ(back->ms, r.ms);
    EXPECT_DOUBLE_EQ(back->default_ms, 0.25);
    // Open fields stay open.
    auto open = tuning_record_from_text(to_text(TuningRecord{}));
    ASSERT_TRUE(open);
    EXPECT_EQ(open->schedule.describe(), Schedule{}.describe());
    for (const std::string& bad :
         {std::string(), std::string("loom-tuning 2\n") + text.substr(text.find('\n') + 1),
          text.substr(0, text.size() / 2),
          [&] {
              std::string t = text;
              t.replace(t.find("cells_per_thread=8"), 18, "cells_per_thread=x");
              return t;
          }()})
        EXPECT_FALSE(tuning_record_from_text(bad)) << bad;
}

TEST(AutotuneRecord, TheKeyNamesDeviceKernelRequestAndShapeClass) {
    EXPECT_EQ(shape_class({1000, 1024, 1025, 0}), (std::vector<std::int64_t>{1024, 1024, 2048, 1}));
    const std::string base = tuning_key("H100", 90, "k", "src", {}, {1024, 1024});
    EXPECT_EQ(base.size(), 64u);
    EXPECT_EQ(base, tuning_key("H100", 90, "k", "src", {}, {1024, 1024}));
    for (const std::string& other :
         {tuning_key("H200", 90, "k", "src", {}, {1024, 1024}),
          tuning_key("H100", 100, "k", "src", {}, {1024, 1024}),
          tuning_key("H100", 90, "k2", "src", {}, {1024, 1024}),
          tuning_key("H100", 90, "k", "src2", {}, {1024, 1024}),
          tuning_key("H100", 90, "k", "src", {.cells_per_thread = 2}, {1024, 1024}),
          tuning_key("H100", 90, "k", "src", {}, {2048, 1024})})
        EXPECT_NE(other, base);
}

TEST(AutotuneRecord, TheCacheStoresAndFindsItInMemoryAndOnDisk) {
    CompileCache cache; // LOOM_CACHE_DIR: the test binary's scratch directory
    ASSERT_TRUE(cache.disk_enabled());
    const std::string key = tuning_key("dev", 90, "k", "src", {}, {64});
    EXPECT_FALSE(cache.find(key, tuning_entries));
    cache.store(key, tuning_entries, {"payload", ""});
    auto hit = cache.find(key, tuning_entries);
    ASSERT_TRUE(hit);
    EXPECT_EQ(hit->payload, "payload");
    cache.store(key, tuning_entries, {"newer", ""}); // a forced tuning replaces it
    cache.clear_memory();
    hit = cache.find(key, tuning_entries);
    ASSERT_TRUE(hit);
    EXPECT_EQ(hit->payload, "newer");
    EXPECT_GE(cache.stats().disk_hits, 1u);
    bool listed = false;
    for (const CacheFileInfo& e : list_cache_entries(cache.directory()))
        listed = listed || (e.key == key && e.kind == "tune");
    EXPECT_TRUE(listed) << "the entry is not counted as the cache's own (pruning, loom cache)";
    // Another kind under the same key is another entry.
    EXPECT_FALSE(cache.find(key, cubin_entries));
}

// ---- Nothing to tune, and bad options ----------------------------------------------------------

TEST(Autotune, AHostKernelSaysItHasNothingToTune) {
    KernelFunction k = five_point(Target::CPU).compile();
    HostArray<float> a = HostArray<float>::random({16, 16}, 1);
    HostArray<float> b = HostArray<float>::random({16, 16}, 2);
    const AutotuneResult r = k.autotune(args("src", a, "dst", b));
    EXPECT_NE(r.nothing_to_tune.find("CPU target"), std::string::npos) << r.nothing_to_tune;
    EXPECT_TRUE(r.trials.empty());
    EXPECT_NE(r.report().find("nothing to tune"), std::string::npos);
    try {
        k.autotune(args("src", a, "dst", b), {.runs = 0});
        ADD_FAILURE() << "runs = 0 was accepted";
    } catch (const UserError& e) {
        EXPECT_NE(std::string(e.what()).find("runs = 0"), std::string::npos) << e.what();
    }
}

TEST(Autotune, TheReportListsEveryTrialAndTheSpeedup) {
    AutotuneResult r;
    r.schedule = {.block = std::array<int, 3>{32, 8, 1}};
    r.ms = 0.5;
    r.default_ms = 1.0;
    r.trials = {{{}, 1.0, "", false},
                {{.cells_per_thread = 2}, std::nullopt, "kernel 'k': refused\nmore", false},
                {{.cells_per_thread = 4}, 1.0, "", true}};
    const std::string text = r.report();
    EXPECT_NE(text.find("3 schedules tried"), std::string::npos) << text;
    EXPECT_NE(text.find("(2.00x)"), std::string::npos) << text;
    EXPECT_NE(text.find("block = (32, 8, 1)"), std::string::npos) << text;
    EXPECT_NE(text.find("kernel 'k': refused"), std::string::npos) << text;
    EXPECT_EQ(text.find("more"), std::string::npos) << "only an error's first line: " << text;
    EXPECT_NE(text.find("same kernel as before"), std::string::npos) << text;
}

} // namespace
} // namespace loom
