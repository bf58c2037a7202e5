// Deep and large expressions (issue 11, defect 3). The DSL refuses an expression deeper than
// loom::max_expression_depth with a UserError; one at the limit goes through create_kernel (both
// targets), the printers, CSE and destruction, also on a thread with a 1 MiB stack, and runs
// correctly on the CPU. Destroying a handle never recurses, however long the chain of nodes it
// owns. create_kernel is close to linear in the node count.
#include "compiler/ir/ir.hpp"
#include "compiler/ir/visitor.hpp"
#include "tests/support/cpu_config.hpp"
#include "tests/support/nvrtc_check.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <exception>
#include <functional>
#include <random>
#include <string>
#include <vector>

namespace loom {
namespace {

constexpr int L = max_expression_depth;

// ---- Running code on a thread with a small stack ----------------------------------------------

/// Runs `fn` on a new thread whose stack is `stack_bytes` of fresh memory above an inaccessible
/// guard page (an overflow is a crash, never silent corruption), and returns the most stack it
/// used: the memory is filled with a pattern first, and the deepest byte that changed counts.
/// An exception from `fn` is rethrown here.
std::size_t run_on_small_stack(std::size_t stack_bytes, const std::function<void()>& fn) {
    const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    void* mem = mmap(nullptr, stack_bytes + page, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        throw std::runtime_error("mmap failed");
    auto* guard = static_cast<unsigned char*>(mem);
    unsigned char* stack = guard + page;
    mprotect(guard, page, PROT_NONE);
    std::memset(stack, 0xA5, stack_bytes);

    struct Job {
        const std::function<void()>* fn;
        std::exception_ptr error;
    } job{&fn, nullptr};
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstack(&attr, stack, stack_bytes);
    pthread_t thread;
    const int rc = pthread_create(
        &thread, &attr,
        [](void* p) -> void* {
            auto* j = static_cast<Job*>(p);
            try {
                (*j->fn)();
            } catch (...) {
                j->error = std::current_exception();
            }
            return nullptr;
        },
        &job);
    pthread_attr_destroy(&attr);
    if (rc != 0)
        throw std::runtime_error("pthread_create failed");
    pthread_join(thread, nullptr);
    std::size_t untouched = 0;
    while (untouched < stack_bytes && stack[untouched] == 0xA5)
        ++untouched;
    munmap(mem, stack_bytes + page);
    if (job.error)
        std::rethrow_exception(job.error);
    return stack_bytes - untouched;
}

// ---- Shapes of deep expressions ---------------------------------------------------------------

/// Applies `step` until the expression has depth `depth`.
Expr grow(Expr e, int depth, const std::function<Expr(const Expr&)>& step) {
    while (e.depth() < depth)
        e = step(e);
    return e;
}

struct DeepShape {
    std::string name;
    std::function<Expr(int depth)> build; ///< a float64 value of exactly this depth
};

/// Chains of every kind of node the DSL builds, each grown one level per step as a loop would.
std::vector<DeepShape> shapes(const Field& f, const Field& i32, const Field& f32, const Field& w) {
    using Step = std::function<Expr(const Expr&)>;
    auto chain = [](Expr start, Step step) {
        return [start, step](int depth) { return grow(start, depth, step); };
    };
    return {
        {"left_sum", chain(f.center(), [](const Expr& e) { return e + 1.0; })},
        {"right_difference", chain(f.center(),
                                   [&f](const Expr& e) {
                                       return f[{1, 0}] - e;
                                   })},
        {"negation", chain(f.center(), [](const Expr& e) { return -e; })},
        {"negation_and_product",
         chain(f.center(), [](const Expr& e) { return e.depth() % 2 ? -e : e * 0.5; })},
        {"sqrt", chain(f.center(), [](const Expr& e) { return sqrt(e); })},
        {"fma", chain(f.center(),
                      [&f](const Expr& e) {
                          return fma(f[{0, 1}], e, 1.0);
                      })},
        {"min", chain(f.center(),
                      [&f](const Expr& e) {
                          return min(e, f[{0, 1}]);
                      })},
        {"select", chain(f.center(),
                         [&f](const Expr& e) {
                             return select(f[{1, 0}] > 0.0, e, 1.0);
                         })},
        // float32 at odd depths, float64 at even ones (the limit is even).
        {"casts", chain(f32.center(),
                        [](const Expr& e) {
                            return e.type() == ScalarType::Float32 ? cast<double>(e)
                                                                   : cast<float>(e);
                        })},
        {"untyped_parameter",
         chain(param("omega"), [](const Expr& e) { return e.depth() % 2 ? e * 0.5 : e + 1.0; })},
        {"integers",
         [&i32](int depth) {
             return cast<double>(grow(i32.center(), depth - 1, [&i32](const Expr& e) {
                 return e.depth() % 2 ? e * 3 : i32[{0, 1}] - e;
             }));
         }},
        {"conditions",
         [&f](int depth) {
             return select(grow(f.center() > 0.0, depth - 1,
                                [&f](const Expr& e) {
                                    return e && f[{1, 0}] < 2.0;
                                }),
                           1.0, 2.0);
         }},
        {"absolute_index",
         [&w](int depth) {
             return w.at({grow(Expr(counters::x), depth - 1, [](const Expr& e) { return e + 1; })})
                 .expr();
         }},
    };
}

// ---- The limit --------------------------------------------------------------------------------

TEST(DeepExpressions, DepthCountsTheLevelsOfAnExpression) {
    Field f = field("f: float64[2D]");
    EXPECT_EQ(Expr().depth(), 0);
    EXPECT_EQ(f.center().expr().depth(), 1);
    EXPECT_EQ((f.center() + 1.0).depth(), 2);
    EXPECT_EQ((f.center() + 1.0 + 1.0).depth(), 3);
    EXPECT_EQ((f.center() + (f[{1, 0}] + (f[{2, 0}] + 1.0))).depth(), 4);
    EXPECT_EQ(sqrt(-f.center()).depth(), 3);
    EXPECT_EQ(select(f.center() > 0.0, f.center(), 1.0).depth(), 3);
}

/// Applies `step` up to a million times; the step that would reach depth L + 1 must throw a
/// UserError that says what, found, expected and how to fix, and nothing before it.
void expect_refused_beyond_the_limit(Expr e, const std::function<Expr(const Expr&)>& step,
                                     const std::string& op) {
    for (int i = 0; i < 1000000; ++i) {
        Expr next;
        try {
            next = step(e);
        } catch (const UserError& error) {
            EXPECT_EQ(e.depth(), L) << op << " was refused before the limit";
            const std::string msg = error.what();
            for (const std::string& fragment :
                 {std::string("expression too deep"), op, std::to_string(L + 1) + " levels deep",
                  "at most " + std::to_string(L), std::string("loom::max_expression_depth"),
                  std::string("loom::sum(terms)"), std::string("ac.subexpression(")})
                EXPECT_NE(msg.find(fragment), std::string::npos)
                    << "message lacks \"" << fragment << "\":\n"
                    << msg;
            EXPECT_LT(msg.size(), 1000u) << "the message should not print the deep expression";
            return;
        }
        ASSERT_LE(next.depth(), L) << op;
        e = next;
    }
    ADD_FAILURE() << "a chain of a million " << op << " was never refused";
}

TEST(DeepExpressions, EveryOperationStopsAtTheLimitWithAUserError) {
    auto [f, g] = fields<2>("f, g: float64[2D]");
    Field i = field("i: int32[2D]");
    Field w = field("w: float64[1D]");
    const Expr x = f.center();
    expect_refused_beyond_the_limit(
        x, [](const Expr& e) { return e + 1.0; }, "'+'");
    expect_refused_beyond_the_limit(
        x, [&g](const Expr& e) { return g.center() * e; }, "'*'");
    expect_refused_beyond_the_limit(
        x, [](const Expr& e) { return -e; }, "unary '-'");
    expect_refused_beyond_the_limit(
        x, [](const Expr& e) { return sqrt(e); }, "sqrt()");
    expect_refused_beyond_the_limit(
        x, [](const Expr& e) { return max(e, 0.0); }, "'max'");
    expect_refused_beyond_the_limit(
        x, [&g](const Expr& e) { return select(g.center() > 0.0, e, 1.0); }, "select()");
    expect_refused_beyond_the_limit(
        x,
        [](const Expr& e) {
            return e.type() == ScalarType::Float32 ? cast<double>(e) : cast<float>(e);
        },
        "cast()");
    expect_refused_beyond_the_limit(
        x > 0.0, [&g](const Expr& e) { return e || g.center() > 0.0; }, "'||'");
    expect_refused_beyond_the_limit(
        x > 0.0, [](const Expr& e) { return !e; }, "'!'");
    expect_refused_beyond_the_limit(
        param("omega"), [](const Expr& e) { return e * 0.5; }, "'*'");
    expect_refused_beyond_the_limit(
        i.center(), [](const Expr& e) { return e % 7; }, "'%'");
    // An absolute index one level below the limit makes the access one level too deep.
    const Expr index = grow(Expr(counters::x), L, [](const Expr& e) { return e + 1; });
    try {
        (void)w.at({index});
        ADD_FAILURE() << "an absolute access of depth " << L + 1 << " was accepted";
    } catch (const UserError& error) {
        const std::string msg = error.what();
        EXPECT_NE(msg.find("w.at()"), std::string::npos) << msg;
        EXPECT_NE(msg.find(std::to_string(L + 1) + " levels deep"), std::string::npos) << msg;
    }
    EXPECT_EQ(
        w.at({grow(Expr(counters::x), L - 1, [](const Expr& e) { return e + 1; })}).expr().depth(),
        L);
}

TEST(DeepExpressions, SumAddsAsABalancedTree) {
    Field f = field("f: float64[1D]");
    std::vector<Expr> terms;
    for (int k = 0; k < 5; ++k)
        terms.push_back(f[{k}]);
    EXPECT_EQ(to_string(sum(terms)), "f[0] + f[1] + (f[2] + (f[3] + f[4]))");
    EXPECT_EQ(to_string(sum({})), "0");
    EXPECT_EQ(to_string(sum({f[{3}]})), "f[3]");
    // A million terms: depth 2 (a term) + ceil(log2(10^6)) = 22, where a loop stops at the limit.
    std::vector<Expr> many(1000000, f.center() * 2.0);
    EXPECT_EQ(sum(many).depth(), 2 + 20);
}

// ---- Destruction ------------------------------------------------------------------------------

// Before the fix each node's destructor destroyed its operands recursively: a chain of 10^6
// overflowed the 8 MiB main stack (so would a recursion of these chains on the 64 KiB stack of
// this test: that is a crash at the guard page).
TEST(DeepExpressions, DestroyingAMillionDeepChainTakesConstantStack) {
    using namespace ir;
    constexpr int n = 1000000;
    const Expr cond = FieldAccessNode::make(field("c: float64[1D]").ptr(), {0}, {}) > 0.0;
    Stmt nested = CommentNode::make("innermost");
    for (int k = 0; k < n; ++k)
        nested = IfThenNode::make(cond, nested);

    // A layer's output array carries its definition, which reads the previous layer's output:
    // a chain of loads, arrays and definitions that the depth of one expression does not count
    // (each load has depth 2). A tenth as long, since each link holds a whole layer.
    DenseLayer layer;
    layer.outputs = layer.inputs = 1;
    layer.type = ScalarType::Float64;
    layer.weights = {0.5};
    layer.activation.name = "identity";
    const Expr zero = ConstNode::make_int(ScalarType::Int32, 0);
    Expr layers = ConstNode::make(ScalarType::Float64, 1.0);
    for (int k = 0; k < n / 10; ++k)
        layers = BufferLoadNode::make(make_layer_array("layer", {layers}, layer), zero);
    EXPECT_EQ(layers.depth(), 2);

    // The DSL's own deepest: a chain at the limit, plus what the chains above hold.
    Field f = field("f: float64[2D]");
    Expr dsl = grow(f.center(), L, [](const Expr& e) { return -e; });

    std::size_t used = run_on_small_stack(64 << 10, [&] {
        Stmt s = std::move(nested);
        Expr e = std::move(layers);
        Expr d = std::move(dsl);
        s = Stmt(); // assignment releases the old chain
        e = Expr();
    }); // `d` by the end of its scope
    EXPECT_FALSE(nested.defined());
    EXPECT_LT(used, std::size_t(32) << 10) << "bytes of stack"; // about 5 KB: the thread's own
}

// ---- At the limit -----------------------------------------------------------------------------

/// f + 1.0 + ... + 1.0 at depth L, and (0.5 - (0.5 - (... - f))) at depth L - 1 squared: CSE
/// computes the squared chain once. On the CPU with random data, against the same recurrences
/// in double (no multiplications that could contract into an fma, so the results are exact).
TEST(DeepExpressions, AnExpressionAtTheLimitCompilesAndRunsOnTheCpu) {
    auto [f, g, h] = fields<3>("f, g, h: float64[2D]");
    const Expr sum_chain = grow(f.center(), L, [](const Expr& e) { return e + 1.0; });
    const Expr difference = grow(f.center(), L - 1, [](const Expr& e) { return 0.5 - e; });
    ASSERT_EQ(sum_chain.depth(), L);
    ASSERT_EQ((difference * difference).depth(), L);

    std::string expected = "f[0, 0]";
    for (int k = 1; k < L; ++k)
        expected += " + 1.0";
    EXPECT_EQ(to_string(sum_chain), expected);
    const std::string text = to_string(difference);
    EXPECT_EQ(std::count(text.begin(), text.end(), '('), L - 3) << "nested parentheses";
    EXPECT_EQ(text.substr(0, 14), "0.5 - (0.5 - (");
    EXPECT_EQ(text.substr(text.size() - (L - 3) - 13), "0.5 - f[0, 0]" + std::string(L - 3, ')'));

    AssignmentCollection ac{{g.center(), sum_chain}, {h.center(), difference * difference}};
    Kernel cuda = create_kernel(ac);
    const std::string src = cuda.source();
    EXPECT_NE(src.find("const double diff_f = 0.5 - (0.5 - ("), std::string::npos)
        << src.substr(0, 2000);
    EXPECT_NE(src.find("diff_f * diff_f;"), std::string::npos);
    test::expect_compiles_for_sm90(cuda);

    Kernel cpu = create_kernel(ac, test::cpu("deep_at_limit"));
    EXPECT_NE(cpu.source().find("const double diff_f = 0.5 - (0.5 - ("), std::string::npos);
    KernelFunction run = cpu.compile();
    const Shape shape{13, 17};
    std::mt19937_64 rng(2024);
    std::vector<double> in(13 * 17);
    for (double& v : in)
        v = std::uniform_real_distribution<double>(0.5, 2.0)(rng) * (rng() % 2 ? 1 : -1);
    const double poison = -7.0e300;
    HostArray<double> fa = HostArray<double>::from_vector(in, shape);
    HostArray<double> ga =
        HostArray<double>::from_vector(std::vector<double>(in.size(), poison), shape);
    HostArray<double> ha =
        HostArray<double>::from_vector(std::vector<double>(in.size(), poison), shape);
    run(args("f", fa, "g", ga, "h", ha));
    const std::vector<double> gout = ga.to_host(), hout = ha.to_host();
    for (std::size_t k = 0; k < in.size(); ++k) {
        double s = in[k];
        for (int j = 1; j < L; ++j)
            s = s + 1.0;
        double d = in[k];
        for (int j = 1; j < L - 1; ++j)
            d = 0.5 - d;
        ASSERT_EQ(gout[k], s) << "cell " << k;
        ASSERT_EQ(hout[k], d * d) << "cell " << k;
    }
}

/// Every shape at the limit through everything that walks expressions (to_string, both targets,
/// CSE of a value used twice, the int64 variant of spec(), destruction) on a thread with a 1 MiB
/// stack, measuring the stack it used.
/// Sanitizer builds instrument every frame (redzones, shadow checks) and need several times the
/// stack: there the walk runs on 8 MiB, and only the plain builds measure the 1 MiB claim.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kStackMeasured = false;
#else
constexpr bool kStackMeasured = true;
#endif

TEST(DeepExpressions, EveryShapeAtTheLimitFitsAOneMiBStack) {
    auto [f, g, h] = fields<3>("f, g, h: float64[2D]");
    Field i32 = field("i: int32[2D]");
    Field f32 = field("s: float32[2D]");
    Field w = field("w: float64[1D]");
    for (const DeepShape& shape : shapes(f, i32, f32, w)) {
        SCOPED_TRACE(shape.name);
        std::size_t used = run_on_small_stack(kStackMeasured ? 1 << 20 : 8 << 20, [&] {
            const Expr e = shape.build(L);
            ASSERT_EQ(e.depth(), L);
            ASSERT_EQ(e.type(), ScalarType::Float64);
            EXPECT_FALSE(to_string(e).empty());
            // The same value twice: CSE computes it once.
            AssignmentCollection ac{{g.center(), e}, {h.center(), e}};
            Kernel cuda = create_kernel(ac);
            EXPECT_NE(cuda.source().find("const "), std::string::npos);
            // The passes add a few levels (the index arithmetic of loads, casts): 4 here.
            int deepest = 0;
            for (const Expr& x : ir::subexpressions(cuda.ir()))
                deepest = std::max(deepest, x.depth());
            EXPECT_LE(deepest, L + ir::compiler_depth_headroom / 4);
            KernelSpec spec = cuda.spec(); // lowers the int64 variant too
            EXPECT_TRUE(spec.wide != nullptr);
            Kernel cpu = create_kernel(ac, test::cpu("deep_" + shape.name));
            EXPECT_FALSE(cpu.source().empty());
            EXPECT_FALSE(to_string(cpu.ir()).empty());
        });
        // About 380 KB in optimized builds, 500 KB unoptimized: the rest of the MiB is the
        // caller's.
        if (kStackMeasured)
            EXPECT_LT(used, std::size_t(640) << 10) << "bytes of stack at depth " << L;
    }
}

// ---- Size -------------------------------------------------------------------------------------

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__) || !defined(__OPTIMIZE__)
constexpr bool kTimingMeaningful = false;
#else
constexpr bool kTimingMeaningful = true;
#endif

/// Seconds that create_kernel and source() take for `rhs` stored into `out`.
double seconds_to_create(const Field& out, const Expr& rhs) {
    const auto start = std::chrono::steady_clock::now();
    Kernel k = create_kernel({Assignment(out.center(), rhs)});
    EXPECT_FALSE(k.source().empty());
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Before the fix a balanced tree of 1.3e5 nodes took 11 s (printing copied every operand's text
// into its parent's, line wrapping tried every break for every piece of a line, CSE renumbered
// all trees after each extraction, unique names probed from _1 up). The target is 1 s per 1e5
// nodes. An absolute bound failed on a busy 2-core machine (3.35 s against 3 s under ctest -j2),
// so each case is timed at a quarter of its size too: linear work takes about 4 times as long,
// quadratic work 16 times; the bound is 8, plus 0.3 s for the fixed cost. Optimized builds only.
void expect_close_to_linear(const Field& out, const std::function<Expr(int)>& make, int n,
                            const std::string& what) {
    const double quarter = seconds_to_create(out, make(n / 4));
    const double full = seconds_to_create(out, make(n));
    EXPECT_LT(full, 8 * quarter + 0.3) << what << ": " << full << " s at full size, " << quarter
                                       << " s at a quarter";
    EXPECT_LT(full, 10.0) << what; // a gross regression, whatever the machine
}

TEST(DeepExpressions, CreateKernelIsCloseToLinearInTheNodeCount) {
    if (!kTimingMeaningful)
        GTEST_SKIP() << "timing bound checked in optimized builds without sanitizers";
    auto [f, g, out] = fields<3>("f, g, out: float64[2D]");

    // 2^15 distinct products summed as a balanced tree: 131,071 nodes, nothing to share.
    expect_close_to_linear(out, [&](int n) {
        std::vector<Expr> terms;
        for (int k = 0; k < n; ++k) terms.push_back(f[{k % 5 - 2, k / 5 % 5 - 2}] * double(k + 1));
        return sum(terms);
    }, 1 << 15, "131,071 distinct nodes");

    // One value doubled 15 times: a tree of 131,071 nodes over 19 shared ones; CSE keeps 15.
    expect_close_to_linear(out, [&](int n) {
        Expr doubled = f.center() * 2.0 + g[{1, 0}];
        for (int k = 1; k < n; k *= 2) doubled = doubled + doubled;
        return doubled;
    }, 1 << 15, "a repeated value");

    // 20,000 products, each used twice: 20,000 CSE temporaries of one name in 139,999 nodes.
    expect_close_to_linear(out, [&](int n) {
        std::vector<Expr> pairs;
        for (int k = 0; k < n; ++k) {
            Expr p = f[{k % 5 - 2, 0}] * double(k + 1);
            pairs.push_back(p);
            pairs.push_back(p * g.center());
        }
        return sum(pairs);
    }, 20000, "20,000 shared values");
}

} // namespace
} // namespace loom
