// Differential fuzzing of batched random expressions (random_expression.hpp): where a case
// runs, how its outputs are compared with the reference, and what a failure prints.
//
//   FuzzTally tally;
//   std::string failure = check_case(c, interpreter_path(), tally);  // "" when it passes
//   EXPECT_EQ(failure, "");
//
// A failure is shrunk before it is reported: the failing expression alone in a kernel of the same
// fields, shape and iteration space, then, while it still fails the same way, subtrees replaced
// by one of their operands or by the constant they evaluate to at the failing cell. The report is
// the DSL source of what is left, the inputs it reads at the failing cell, expected and got, the
// seed and the command that reruns it.
//
// The knobs (docs/testing.md):
//   LOOM_FUZZ_SEED=<n>    the base seed of every fuzz test (case k of a test uses seed + k)
//   LOOM_FUZZ_SCALE=<x>   multiplies every fuzz test's count (0.1 for sanitizer builds, 10 for a
//                         long run)
//   LOOM_FUZZ_COUNT=<n>   the count itself (expressions), for one test run by --gtest_filter
#pragma once

#include "tests/support/random_expression.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace loom::stencil_test {

// ---- knobs ----

/// LOOM_FUZZ_SEED if set, else `fallback`.
std::uint64_t fuzz_seed(std::uint64_t fallback);
/// How many expressions a fuzz test checks: LOOM_FUZZ_COUNT if set, else `fallback` times
/// LOOM_FUZZ_SCALE (default 1), at least 1.
std::int64_t fuzz_count(std::int64_t fallback);

// ---- where a case runs ----

/// Runs a case: fills the output buffers of `b` (made from the case: inputs random, outputs
/// poisoned) or throws.
using CaseRunner = std::function<void(const StencilCase& c, HostBuffers& b)>;

/// loom's passes (create_kernel for Target::CPU) and its IR interpreter: no compiler involved.
void run_with_interpreter(const StencilCase& c, HostBuffers& b);
/// The interpreter on a kernel body and signature of the caller's (a deliberately broken one,
/// to show that the fuzzer notices).
void interpret_case_body(const StencilCase& c, HostBuffers& b, const Stmt& body,
                         const std::vector<KernelParam>& params);
/// The generated C++, compiled by the host compiler and called.
void run_on_cpu(const StencilCase& c, HostBuffers& b);
/// The same case for Target::CUDA, compiled by NVRTC for sm_90 (no GPU needed). Throws
/// CompileError when NVRTC rejects it or warns. A slice that follows a counter gets a manual
/// grid; returns false (compiles nothing) for a 4D one, which CUDA cannot map.
bool compile_with_nvrtc(const StencilCase& c);

/// One way of checking cases.
struct FuzzPath {
    std::string name; ///< "loom's passes + IR interpreter", ...
    CaseRunner run;
    bool compare = true; ///< false: only whether it throws (NVRTC)
    /// Generated code: values whose computation overflowed a signed integer are not compared
    /// (C leaves them undefined). loom's interpreter wraps, as the reference does.
    bool skip_overflow = true;
    int shrink_budget = 40; ///< runs of shrunk candidates at most
    std::string rerun;      ///< the command that reruns a test, without the seed
};
FuzzPath interpreter_path();
FuzzPath cpu_path();
FuzzPath nvrtc_path();

// ---- comparing ----

/// What a run compared.
struct FuzzTally {
    std::int64_t kernels = 0, expressions = 0;
    std::int64_t values = 0;    ///< output values the reference computed
    std::int64_t compared = 0;  ///< ... and compared
    std::int64_t wild = 0;      ///< not compared: rounding decides (see reference_evaluator.hpp)
    std::int64_t overflow = 0;  ///< not compared: signed overflow, and the path is generated code
    std::int64_t undefined = 0; ///< not compared: no guard covered it (should stay 0)
    void add(const FuzzTally& o);
    std::string summary() const;
};

/// A difference between a run and the reference.
struct Mismatch {
    int output = -1; ///< the expression (index into outputs), or -1 (a stray write, padding)
    Index cell;      ///< the iteration cell (or the buffer index of a stray write)
    std::string what;
};

/// Compares every element of every output buffer of `c` in `got` with `want`: expressions'
/// values at iterated cells, and the poison everywhere else.
std::vector<Mismatch> compare_case(const StencilCase& c, const Expected& want,
                                   const HostBuffers& got, bool skip_overflow, FuzzTally& tally);

/// Runs, compares and, on a failure, shrinks: the reproducer (see the file comment), or "" when
/// the case passes.
std::string check_case(const StencilCase& c, const FuzzPath& path, FuzzTally& tally);

/// The case with only expression `output` of `c`, whose value is `node` (a node of c.ast),
/// keeping fields, shape and iteration space (automatic ghost layers become the explicit widths
/// the whole kernel had).
StencilCase single_expression_case(const StencilCase& c, int output, int node);

} // namespace loom::stencil_test
