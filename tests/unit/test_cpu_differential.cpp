// Differential tests of the CPU target: random stencils (tests/support/random_stencil.hpp), each
// compiled for Target::CPU, run on host buffers (inputs random and never zero, outputs poisoned)
// and compared cell by cell with the test's own reference evaluator; each is also compiled for
// Target::CUDA by NVRTC for sm_90, which must accept it without a warning. Seeded and
// reproducible: a failure prints the seed, the case and the generated C++.
//
//   LOOM_STENCIL_SEED=<n>   base seed (default 20261121); case k uses seed base + k
//   LOOM_STENCIL_COUNT=<n>  cases per run (default 200), spread over the shards below
//
// Each case is one host-compiler run (c++ -O3), so the 200 cases are split into shards that
// ctest can run in parallel (`ctest -j`), and each shard compiles its cases on two threads.
#include "tests/support/fuzz_check.hpp"
#include "tests/support/random_stencil.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace loom {
namespace {

using namespace loom::stencil_test;

constexpr std::uint64_t kDefaultSeed = 20261121;
constexpr int kDefaultCount = 200;
constexpr int kShards = 8;

/// What one case produced, for the checks on the test thread.
struct Outcome {
    StencilCase c;
    std::optional<Kernel> kernel;
    std::string error; ///< create_kernel, compile or the call threw
    std::unique_ptr<HostBuffers> buffers;
    double compile_s = 0.0;
};

/// Generates, compiles and runs one case (with shared tiles: `tiled`). Never throws: errors
/// land in Outcome::error.
Outcome run_case(std::uint64_t seed, bool tiled = false) {
    Outcome o;
    o.c = generate_stencil(seed);
    if (tiled) o.c = o.c.tiled();
    try {
        o.kernel = o.c.kernel(Target::CPU);
        auto t0 = std::chrono::steady_clock::now();
        KernelFunction k = o.kernel->compile();
        o.compile_s =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        o.buffers = std::make_unique<HostBuffers>(o.c);
        k(o.buffers->args(o.c));
        compile_with_nvrtc(o.c); // (none for a 4D slice that follows a counter: CUDA refuses it)
    } catch (const std::exception& e) {
        o.error = e.what();
    }
    return o;
}

std::string source_of(const Outcome& o) {
    return "\nreproduce: LOOM_STENCIL_SEED=" + std::to_string(o.c.seed) +
           " LOOM_STENCIL_COUNT=1 loom_unit_tests --gtest_filter='Shards/CpuDifferential.*'" +
           (o.kernel ? "\ngenerated C++:\n" + o.kernel->source() : std::string("\n(no kernel)"));
}

/// Checks one outcome; returns the number of output cells it compared.
std::int64_t check_outcome(const Outcome& o) {
    if (!o.error.empty()) {
        ADD_FAILURE() << o.c.describe() << "\nthrew: " << o.error << source_of(o);
        return 0;
    }
    const Expected want = o.c.expected();
    EXPECT_TRUE(o.buffers->check(o.c, want)) << o.c.describe() << source_of(o);
    return want.cells_written;
}

class CpuDifferential : public ::testing::TestWithParam<int> {};

TEST_P(CpuDifferential, RandomStencilsMatchTheReferenceEvaluator) {
    const int shard = GetParam();
    const std::uint64_t base = base_seed(kDefaultSeed);
    const int count = case_count(kDefaultCount);
    std::vector<std::uint64_t> seeds;
    for (int k = shard; k < count; k += kShards)
        seeds.push_back(base + static_cast<std::uint64_t>(k));

    // Two cases in flight: one host-compiler process each.
    auto t0 = std::chrono::steady_clock::now();
    std::int64_t cells = 0;
    double compile_s = 0.0;
    int checked = 0;
    for (std::size_t k = 0; k < seeds.size(); k += 2) {
        std::future<Outcome> second;
        if (k + 1 < seeds.size())
            second = std::async(std::launch::async, run_case, seeds[k + 1], false);
        Outcome first = run_case(seeds[k]);
        cells += check_outcome(first);
        compile_s += first.compile_s;
        ++checked;
        if (second.valid()) {
            Outcome o = second.get();
            cells += check_outcome(o);
            compile_s += o.compile_s;
            ++checked;
        }
        if (HasFatalFailure()) return;
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("[ shard %d ] %d random stencils (seeds %llu + k, k = %d mod %d), %lld cells "
                "compared, %.1f s (compile %.1f s summed over cases)\n",
                shard, checked, static_cast<unsigned long long>(base), shard, kShards,
                static_cast<long long>(cells), wall, compile_s);
    EXPECT_EQ(checked, static_cast<int>(seeds.size()));
}

INSTANTIATE_TEST_SUITE_P(Shards, CpuDifferential, ::testing::Range(0, kShards));

// The same random stencils with Schedule::shared_tiles: the CPU runs the tiled kernel block by
// block (tiles filled, then the block's threads one after the other), so the reference checks
// the tiles' extents, halos and indices in every layout, slice and block shape the cases draw.
class TiledCpuDifferential : public ::testing::TestWithParam<int> {};

TEST_P(TiledCpuDifferential, RandomStencilsWithSharedTilesMatchTheReferenceEvaluator) {
    const int shard = GetParam();
    const std::uint64_t base = base_seed(kDefaultSeed);
    const int count = case_count(kDefaultCount) / 4;
    int checked = 0, tiled = 0;
    std::int64_t cells = 0;
    for (int k = shard; k < count; k += kShards) {
        const std::uint64_t seed = base + static_cast<std::uint64_t>(k);
        if (!generate_stencil(seed).tileable()) continue;
        Outcome o = run_case(seed, true);
        cells += check_outcome(o);
        ++checked;
        tiled += o.kernel && o.kernel->source().find("_tile") != std::string::npos;
        if (HasFatalFailure()) return;
    }
    std::printf("[ shard %d ] %d tiled random stencils (%d with a tile), %lld cells compared\n",
                shard, checked, tiled, static_cast<long long>(cells));
    EXPECT_GT(checked, 0);
}

INSTANTIATE_TEST_SUITE_P(Shards, TiledCpuDifferential, ::testing::Range(0, kShards));

// ---- The generator itself ---------------------------------------------------------------------

TEST(CpuDifferentialGenerator, SameSeedSameCase) {
    for (std::uint64_t seed : {std::uint64_t{1}, std::uint64_t{77}, kDefaultSeed}) {
        StencilCase a = generate_stencil(seed), b = generate_stencil(seed);
        EXPECT_EQ(a.describe(), b.describe());
        ASSERT_EQ(a.fields.size(), b.fields.size());
        for (std::size_t f = 0; f < a.fields.size(); ++f)
            EXPECT_EQ(a.fields[f].values, b.fields[f].values);
        EXPECT_EQ(a.kernel(Target::CPU).source(), b.kernel(Target::CPU).source());
    }
    EXPECT_NE(generate_stencil(1).describe(), generate_stencil(2).describe());
}

TEST(CpuDifferentialGenerator, CoversWhatTheIssueAsksFor) {
    // The cases of one default run draw every feature, each more than a handful of times.
    std::map<std::string, int> seen;
    const std::uint64_t base = base_seed(kDefaultSeed);
    const int count = std::max(case_count(kDefaultCount), kDefaultCount);
    for (int k = 0; k < count; ++k) {
        StencilCase c = generate_stencil(base + static_cast<std::uint64_t>(k));
        ++seen[std::to_string(c.dims) + "D"];
        ++seen[rt_name(c.type)];
        ++seen[c.sliced ? "slice" : c.config.ghost_layers.is_automatic() ? "automatic ghost"
                                                                           : "explicit ghost"];
        if (c.fixed_shape) ++seen["fixed shape"];
        if (c.config.index_type) ++seen["explicit index type"];
        bool vector_read = false, padded = false, mixed = false, writes = false;
        for (const CaseField& f : c.fields) {
            vector_read |= !f.written && f.components > 0;
            padded |= f.padded;
            mixed |= f.type != c.type;
            if (f.layout != Layout::C) ++seen["layout " + std::string(layout_name(f.layout))];
        }
        if (vector_read) ++seen["vector field component"];
        if (padded) ++seen["padded buffer"];
        if (mixed) ++seen["mixed float types"];
        for (const CaseParam& p : c.params) ++seen[p.type == RType::I64 ? "bound parameter"
                                                                          : "value parameter"];
        for (const CaseAxis& a : c.axes) {
            if (!c.sliced) continue;
            if (a.single) ++seen["single index"];
            if (a.step > 1) ++seen["step > 1"];
            if (a.start.kind == CaseBound::Kind::Counter) ++seen["counter bound"];
            if (a.start.kind == CaseBound::Kind::Index && a.start.value < 0)
                ++seen["negative start"];
            if (a.stop.kind == CaseBound::Kind::Index && a.stop.value < 0) ++seen["negative stop"];
        }
        for (const RNode& n : c.ast.nodes) {
            if (n.op == ROp::Select) ++seen["select"];
            if (n.op == ROp::Sqrt) ++seen["sqrt"];
            if (n.op == ROp::Abs) ++seen["abs"];
            if (n.op == ROp::Min || n.op == ROp::Max) ++seen["min/max"];
            if (n.op == ROp::Div) ++seen["division"];
            if (n.op == ROp::Counter) ++seen["counter"];
        }
        if (!c.assignments.subexpressions().empty()) ++seen["subexpression"];
        Expected e = c.expected();
        writes = e.cells_written > 0;
        if (!writes) ++seen["writes nothing"];
    }
    for (const char* feature :
         {"1D", "2D", "3D", "4D", "float32", "float64", "slice", "automatic ghost",
          "explicit ghost", "fixed shape", "explicit index type", "vector field component",
          "padded buffer", "mixed float types", "value parameter", "bound parameter",
          "single index", "step > 1", "counter bound", "negative start", "negative stop",
          "select", "sqrt", "abs", "min/max", "division", "counter", "subexpression",
          "layout fortran", "layout fzyx", "layout zyxf"})
        EXPECT_GE(seen[feature], 4) << feature << " appears in only " << seen[feature] << " of "
                                    << count << " cases";
    std::string summary;
    for (auto& [k, v] : seen) summary += " " + k + ": " + std::to_string(v) + ";";
    std::printf("[ coverage ] %d cases:%s\n", count, summary.c_str());
}

TEST(CpuDifferentialGenerator, ReferenceEvaluatorRoundsFloat32PerOperation) {
    // (a + b) - a in float32 rounds b to a multiple of 8 (the spacing of floats near 1e8); in
    // float64 it does not.
    RefAst ast;
    int a = ast.constant(RType::F32, 1.0e8), b = ast.constant(RType::F32, 5.0);
    int f32 = ast.binary(ROp::Sub, ast.binary(ROp::Add, a, b), a);
    int a64 = ast.constant(RType::F64, 1.0e8), b64 = ast.constant(RType::F64, 5.0);
    int f64 = ast.binary(ROp::Sub, ast.binary(ROp::Add, a64, b64), a64);
    RefEvaluator ev(ast, 0.0);
    EXPECT_EQ(ev.eval(f32).v[0].f, 8.0); // 1e8 + 5 rounds to 100000008 in float
    EXPECT_EQ(ev.eval(f64).v[0].f, 5.0);
    // A comparison within rounding of a tie yields both branches: 0.1 * 3 (rounded once) against
    // 0.3 could go either way in another evaluation order.
    RefEvaluator loose(ast, 2.0);
    int x = ast.binary(ROp::Mul, ast.constant(RType::F64, 0.1), ast.constant(RType::F64, 3.0));
    int y = ast.constant(RType::F64, 0.3);
    int s = ast.select(ast.binary(ROp::Lt, x, y), ast.constant(RType::F64, 5.0),
                       ast.constant(RType::F64, 7.0));
    EXPECT_EQ(loose.eval(s).n, 2);
    EXPECT_EQ(ev.eval(s).n, 1);
}

} // namespace
} // namespace loom
