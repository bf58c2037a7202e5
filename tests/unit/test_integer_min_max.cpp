// Integer min and max, int32 and int64 in one kernel, against constants (INT64_MIN and INT64_MAX
// included) and against each other: the CUDA source compiles with NVRTC (whose min and max are
// overloaded per type, so a plain int literal next to a long long was ambiguous), and the CPU
// kernel (whose prelude overloads loom_min and loom_max per type) runs and matches a reference loop
// on random data with negative values.
#include "tests/support/cpu_config.hpp"
#include "tests/support/nvrtc_check.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace loom {
namespace {

using test::cpu;

constexpr std::int64_t i64_min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t i64_max = std::numeric_limits<std::int64_t>::max();

template <typename T>
std::vector<T> random_values(std::size_t n, std::int64_t magnitude, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::uniform_int_distribution<std::int64_t> dist(-magnitude, magnitude);
    std::vector<T> v(n);
    for (T& x : v) x = static_cast<T>(dist(rng));
    return v;
}

/// The kernel: a, b int32 and c, d int64 inputs; o32 (int32), o64, p64, q64 (int64) outputs.
AssignmentCollection min_max_assignments() {
    auto [a, b, o32] = fields<3>("a, b, o32: int32[2D]");
    auto [c, d, o64, p64, q64] = fields<5>("c, d, o64, p64, q64: int64[2D]");
    Expr A = a.center(), B = b.center(), C = c.center(), D = d.center();
    return {
        // int32 against constants and against each other
        Assignment(o32.center(), min(A, 3) + max(A, -5) * 2 + min(A, B) - max(B, A) + max(-7, B)),
        // int64 against small and large constants, each other, and an int32 (converted)
        Assignment(o64.center(), min(C, 3) + max(C, -7) + min(C, D) - max(D, C) + max(A, C) +
                                     min(5000000000, C) + max(C, -5000000000)),
        // INT64_MIN and INT64_MAX as operands
        Assignment(p64.center(), min(C, i64_max) - max(D, i64_min) + min(B, i64_max)),
        Assignment(q64.center(), select(C > D, max(C, i64_max), min(D, i64_min))),
    };
}

TEST(IntegerMinMax, CudaSourceCompiles) {
    KernelConfig c;
    c.name = "int_min_max";
    Kernel k = create_kernel(min_max_assignments(), c);
    test::expect_compiles_for_sm90(k);
    for (ScalarType index : {ScalarType::Int32, ScalarType::Int64}) {
        c.index_type = index;
        test::expect_compiles_for_sm90(create_kernel(min_max_assignments(), c));
    }
}

TEST(IntegerMinMax, TheIssueKernelsCompile) {
    // The two reports of issue 11: min(int64, 3) on the GPU, max of int32 and of int64 in one
    // CPU kernel.
    auto [s, o] = fields<2>("s, o: int64[2D]");
    KernelConfig c;
    c.name = "min_i64";
    test::expect_compiles_for_sm90(create_kernel(Assignment(o.center(), min(s.center(), 3)), c));
    auto [i, oi] = fields<2>("i, oi: int32[1D]");
    auto [l, d] = fields<2>("l, d: int64[1D]");
    KernelFunction f = create_kernel({Assignment(oi.center(), max(i.center(), 1)),
                                      Assignment(d.center(), max(l.center(), 3))},
                                     cpu("max_i32_i64"))
                           .compile();
    std::vector<std::int32_t> iv = {-4, 0, 1, 7};
    std::vector<std::int64_t> lv = {-9000000000, 2, 3, 9000000000};
    std::vector<std::int32_t> oiv(4, 0);
    std::vector<std::int64_t> dv(4, 0);
    f(args("i", host_view(iv, {4}), "oi", host_view(oiv, {4}), "l", host_view(lv, {4}), "d",
           host_view(dv, {4})));
    EXPECT_EQ(oiv, (std::vector<std::int32_t>{1, 1, 1, 7}));
    EXPECT_EQ(dv, (std::vector<std::int64_t>{3, 3, 3, 9000000000}));
}

TEST(IntegerMinMax, CpuMatchesAReferenceLoop) {
    const std::int64_t n0 = 17, n1 = 29;
    const std::size_t n = static_cast<std::size_t>(n0 * n1);
    const Shape shape{n0, n1};
    for (ScalarType index : {ScalarType::Int32, ScalarType::Int64}) {
        KernelConfig config = cpu(index == ScalarType::Int32 ? "int_min_max_32" : "int_min_max_64");
        config.index_type = index;
        KernelFunction k = create_kernel(min_max_assignments(), config).compile();
        // Small values around the constants, and int64 values beyond 5e9 (and past int32).
        auto a = random_values<std::int32_t>(n, 10, 1), b = random_values<std::int32_t>(n, 1000, 2);
        auto c = random_values<std::int64_t>(n, 10, 3), d = random_values<std::int64_t>(n, 8000000000, 4);
        for (std::size_t i = 0; i < n; i += 3) c[i] = d[(i * 7) % n]; // large values in c too
        std::vector<std::int32_t> o32(n, 0x5A5A5A5A);
        std::vector<std::int64_t> o64(n, 0x5A5A5A5A), p64(n, 0x5A5A5A5A), q64(n, 0x5A5A5A5A);
        k(args("a", host_view(a, shape), "b", host_view(b, shape), "c", host_view(c, shape), "d",
               host_view(d, shape), "o32", host_view(o32, shape), "o64", host_view(o64, shape),
               "p64", host_view(p64, shape), "q64", host_view(q64, shape)));
        for (std::size_t i = 0; i < n; ++i) {
            const std::int32_t A = a[i], B = b[i];
            const std::int64_t C = c[i], D = d[i];
            ASSERT_EQ(o32[i], std::min(A, 3) + std::max(A, -5) * 2 + std::min(A, B) -
                                  std::max(B, A) + std::max(-7, B))
                << "cell " << i;
            ASSERT_EQ(o64[i], std::min<std::int64_t>(C, 3) + std::max<std::int64_t>(C, -7) +
                                  std::min(C, D) - std::max(D, C) + std::max<std::int64_t>(A, C) +
                                  std::min<std::int64_t>(5000000000, C) +
                                  std::max<std::int64_t>(C, -5000000000))
                << "cell " << i;
            ASSERT_EQ(p64[i], std::min(C, i64_max) - std::max(D, i64_min) +
                                  std::min<std::int64_t>(B, i64_max))
                << "cell " << i;
            ASSERT_EQ(q64[i], C > D ? i64_max : i64_min) << "cell " << i;
        }
    }
}

TEST(IntegerMinMax, AbsOfAnInt64MeetsMinAndMax) {
    // abs of an int64 was printed llabs, whose long long is not the CPU's int64_t (long on
    // LP64): next to the int32 overloads of the prelude, loom_max(llabs(x), y) was ambiguous and
    // the kernel did not compile (found by the expression fuzzer).
    auto [i, oi] = fields<2>("i, oi: int32[1D]");
    auto [l, m, d] = fields<3>("l, m, d: int64[1D]");
    AssignmentCollection ac = {Assignment(oi.center(), max(abs(i.center()), 2)),
                               Assignment(d.center(), max(abs(l.center()), abs(m.center())))};
    KernelConfig c;
    c.name = "abs_i64";
    test::expect_compiles_for_sm90(create_kernel(ac, c));
    KernelFunction f = create_kernel(ac, cpu("abs_i64")).compile();
    std::vector<std::int32_t> iv = {-4, 0, 1, -7}, oiv(4, 0);
    std::vector<std::int64_t> lv = {-9000000000, 2, -3, 5}, mv = {1, -8000000000, 4, -2};
    std::vector<std::int64_t> dv(4, 0);
    f(args("i", host_view(iv, {4}), "oi", host_view(oiv, {4}), "l", host_view(lv, {4}), "m",
           host_view(mv, {4}), "d", host_view(dv, {4})));
    EXPECT_EQ(oiv, (std::vector<std::int32_t>{4, 2, 2, 7}));
    EXPECT_EQ(dv, (std::vector<std::int64_t>{9000000000, 8000000000, 4, 5}));
}

TEST(IntegerMinMax, Int64LiteralsHaveTheirExactType) {
    // An int64 constant prints with its type, so that an overloaded call (min, max, the CPU
    // prelude's helpers) resolves exactly; INT64_MIN has no literal and prints as an expression.
    auto [s, o] = fields<2>("s, o: int64[1D]");
    KernelConfig c;
    c.name = "i64_literals";
    Kernel cuda = create_kernel(Assignment(o.center(), min(s.center(), 3) + max(s.center(), i64_min) -
                                                           min(s.center(), i64_max)),
                                c);
    EXPECT_NE(cuda.source().find("min(s[x], 3LL)"), std::string::npos) << cuda.source();
    EXPECT_NE(cuda.source().find("(-9223372036854775807LL - 1)"), std::string::npos) << cuda.source();
    EXPECT_NE(cuda.source().find("9223372036854775807LL)"), std::string::npos) << cuda.source();
    test::expect_compiles_for_sm90(cuda);
    c.target = Target::CPU;
    Kernel host = create_kernel(Assignment(o.center(), min(s.center(), 3)), c);
    const std::string suffix = std::is_same_v<std::int64_t, long> ? "3L)" : "3LL)";
    EXPECT_NE(host.source().find("loom_min(s[x], " + suffix), std::string::npos) << host.source();
}

} // namespace
} // namespace loom

namespace loom {
namespace {

TEST(IntegerMinMax, TypedInt64ConstantsAreExact) {
    // constant<int64_t> kept every bit: it used to go through double, where INT64_MAX rounds to
    // 2^63, which does not fit (its conversion back was undefined).
    auto [s, o] = fields<2>("s, o: int64[1D]");
    KernelConfig c;
    c.name = "typed_i64";
    Kernel k = create_kernel(
        Assignment(o.center(), min(s.center(), constant<std::int64_t>(i64_max)) +
                                   max(s.center(), constant<std::int64_t>(i64_min)) +
                                   constant<std::int64_t>(9007199254740993)), // 2^53 + 1
        c);
    EXPECT_NE(k.source().find("9223372036854775807LL)"), std::string::npos) << k.source();
    EXPECT_NE(k.source().find("(-9223372036854775807LL - 1)"), std::string::npos) << k.source();
    EXPECT_NE(k.source().find("9007199254740993LL"), std::string::npos) << k.source();
    test::expect_compiles_for_sm90(k);
}

} // namespace
} // namespace loom
