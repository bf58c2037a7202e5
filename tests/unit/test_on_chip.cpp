// On-chip stage fields (Stages::on_chip) and time steps in one kernel (KernelConfig::time_steps)
// on the CPU target, which runs the fused form block by block, against hand-written double loops
// (tests/support/stage_cases.hpp); the CUDA forms compile for sm_90. Then each refusal, by its
// message.
#include "tests/support/nvrtc_check.hpp"
#include "tests/support/stage_cases.hpp"

#include <loom/loom.hpp>

#include <gtest/gtest.h>

#include <array>

namespace loom {
namespace {

using test::StageCase;

KernelFunction compile_cpu(StageCase& c, const Schedule& s = {}) {
    c.config.target = Target::CPU;
    return create_kernel(c.stages, c.config, s).compile();
}

Schedule tiles(std::array<int, 3> block, int cells) { return {.block = block, .cells_per_thread = cells}; }

template <typename Make>
std::string refusal(Make&& make) {
    try {
        make();
    } catch (const UserError& e) {
        return e.what();
    }
    return "";
}

#define EXPECT_SAYS(message, text) EXPECT_NE((message).find(text), std::string::npos) << (message)

TEST(OnChip, ConvReluConvKeepsTheIntermediateOutOfMemory) {
    for (Shape shape : {Shape{37, 70}, Shape{3, 3}, Shape{66, 9}}) {
        SCOPED_TRACE(::testing::Message() << "shape " << shape[0] << " x " << shape[1]);
        StageCase c = test::conv_relu_conv_on_chip(shape, 7 + std::uint64_t(shape[0]));
        test::expect_stage_case<HostArray, double>(c, compile_cpu(c));
        test::expect_stage_case<HostArray, double>(c, compile_cpu(c, tiles({16, 4, 1}, 3)));
    }
    StageCase c = test::conv_relu_conv_on_chip({20, 20}, 1);
    c.config.target = Target::CUDA;
    const Kernel k = create_kernel(c.stages, c.config);
    ASSERT_EQ(k.fields().size(), 2u); // u and v: t is no argument
    EXPECT_EQ(k.fields()[0]->name, "u");
    EXPECT_EQ(k.fields()[1]->name, "v");
    EXPECT_EQ(k.source().find("t_stride"), std::string::npos) << k.source();
    EXPECT_SAYS(k.source(), "t_tile[k] = 0.0;"); // zero padding past the iteration space (edge blocks)
    test::expect_compiles_for_sm90(k);
}

TEST(OnChip, ThreeStagesIn3DWithValuesOutsideFromAFieldAndANumber) {
    StageCase c = test::on_chip_3d({13, 11, 40}, 17);
    test::expect_stage_case<HostArray, double>(c, compile_cpu(c));
    test::expect_stage_case<HostArray, double>(c, compile_cpu(c, tiles({16, 2, 2}, 2)));
    c.config.target = Target::CUDA;
    const Kernel k = create_kernel(c.stages, c.config);
    EXPECT_EQ(k.fields().size(), 3u); // u, b (the outside values), v
    test::expect_compiles_for_sm90(k);
}

TEST(TimeSteps, StepsInOneKernelMatchSeparateSweepsThatAlternate) {
    for (int steps : {2, 3, 4}) {
        for (Shape shape : {Shape{41, 67}, Shape{4, 5}}) {
            SCOPED_TRACE(::testing::Message() << steps << " steps, shape " << shape[0] << " x " << shape[1]);
            StageCase c = test::heat_time_steps_2d(shape, steps, 100 + std::uint64_t(steps));
            test::expect_stage_case<HostArray, double>(c, compile_cpu(c));
            test::expect_stage_case<HostArray, double>(c, compile_cpu(c, tiles({8, 4, 1}, 2)));
        }
    }
    StageCase c = test::heat_time_steps_2d({30, 30}, 4, 5);
    c.config.target = Target::CUDA;
    const Kernel k = create_kernel(c.stages, c.config);
    EXPECT_EQ(k.fields().size(), 2u);
    EXPECT_SAYS(k.source(), "dst_step3_tile");
    test::expect_compiles_for_sm90(k);
}

TEST(TimeSteps, TwoPairsAndACoefficientIn3DNamedByPingPong) {
    StageCase c = test::coupled_time_steps_3d({12, 14, 35}, 41);
    test::expect_stage_case<HostArray, float>(c, compile_cpu(c));
    test::expect_stage_case<HostArray, float>(c, compile_cpu(c, tiles({16, 2, 2}, 2)));
    c.config.target = Target::CUDA;
    test::expect_compiles_for_sm90(create_kernel(c.stages, c.config));
}

TEST(OnChip, AFixedShapeOnChipFieldFixesNoSize) {
    // t's fixed shape is no array's: the sizes come from u and v, whatever they are.
    auto [u, v] = fields<2>("u, v: float64[2D]");
    Field t = field("t: float64[64, 64]");
    KernelFunction k = create_kernel(Stages({{Assignment(t.center(), u[{1, 0}] + u[{0, -1}])},
                                             {Assignment(v.center(), t[{-1, 0}] - t[{0, 1}])}})
                                         .on_chip(t),
                                     {.target = Target::CPU, .name = "fixed_t"})
                           .compile();
    auto hu = HostArray<double>::random({9, 12}, 5, Uniform(-1, 1));
    auto hv = HostArray<double>::zeros({9, 12});
    k(args("u", hu, "v", hv));
    const std::vector<double> uu = hu.to_host(), got = hv.to_host();
    auto tt = [&](std::int64_t i, std::int64_t j) {
        const bool inside = i >= 1 && i < 8 && j >= 1 && j < 11;
        return inside ? uu[std::size_t((i + 1) * 12 + j)] + uu[std::size_t(i * 12 + j - 1)] : 0.0;
    };
    for (std::int64_t i = 1; i < 8; ++i)
        for (std::int64_t j = 1; j < 11; ++j)
            EXPECT_NEAR(got[std::size_t(i * 12 + j)], tt(i - 1, j) - tt(i, j + 1), 1e-12) << i << ", " << j;
}

TEST(OnChip, FuseNamesAnOnChipFieldThatClashes) {
    auto [src, dst, other] = fields<3>("src, dst, other: float64[2D]");
    KernelConfig steps{.target = Target::CPU, .name = "steps"};
    steps.time_steps = 2;
    Kernel a = create_kernel({Assignment(dst.center(), src[{1, 0}] + src[{-1, 0}])}, steps);
    Field clash = field("dst_step1: float64[2D]");
    Kernel b = create_kernel({Assignment(clash.center(), 2.0 * dst[{0, 1}])},
                             {.target = Target::CPU, .name = "b", .ghost_layers = 1});
    const std::string m = refusal([&] { fuse(a, b); });
    EXPECT_SAYS(m, "both have a field named 'dst_step1'");
    EXPECT_SAYS(m, "on chip in 'steps'");
    EXPECT_SAYS(m, "an on-chip field of time_steps is named <dst>_step<k>");
}

TEST(OnChip, RefusalsSayWhatIsWrong) {
    auto [u, t, v] = fields<3>("u, t, v: float64[2D]");
    const Assignment make_t(t.center(), u[{1, 0}] - u[{-1, 0}]);
    const Assignment read_t(v.center(), t[{0, 1}] + t[{0, -1}]);
    auto kernel = [](Stages s) { return create_kernel(s, {.target = Target::CPU, .name = "k"}); };

    std::string m = refusal([&] { kernel(Stages({{make_t}, {read_t}}).on_chip(v)); });
    EXPECT_SAYS(m, "keeps field v on chip (Stages::on_chip), but the last stage (stage 2) writes it");
    m = refusal([&] { kernel(Stages({{make_t}, {read_t}}).on_chip(field("w: float64[2D]"))); });
    EXPECT_SAYS(m, "keeps field w on chip (Stages::on_chip), but no stage writes it");
    Field s = field("s: float64[2D]");
    m = refusal([&] { kernel(Stages({{make_t, Assignment(s.center(), t.center())}, {read_t}}).on_chip(t)); });
    EXPECT_SAYS(m, "reads the on-chip field t in stage 1");
    EXPECT_SAYS(m, "hold the value in a temporary");
    m = refusal([&] {
        kernel(Stages({{make_t}, {Assignment(v.center(), u.center())}, {Assignment(s.center(), v[{1, 0}])}}).on_chip(t));
    });
    EXPECT_SAYS(m, "keeps field t on chip (Stages::on_chip), and stage 1 writes it, but no later stage reads it");
    m = refusal([&] { kernel(Stages({{make_t}, {Assignment(v.center(), 2.0 * t.center())}}).on_chip(t)); });
    EXPECT_SAYS(m, "no stage reads an earlier stage's field at a neighbouring cell");
    m = refusal([&] { Stages({{make_t}, {read_t}}).on_chip(t).on_chip(t); });
    EXPECT_SAYS(m, "Stages::on_chip(t): t is on chip already");
    m = refusal([&] { Stages().on_chip(field("a(2): float64[2D]")); });
    EXPECT_SAYS(m, "on-chip fields are scalar fields so far");
    m = refusal([&] { Stages().on_chip(t, t); });
    EXPECT_SAYS(m, "cannot take its values outside the iteration space from itself");
    m = refusal([&] { Stages().on_chip(t, field("q: float64[3D]")); });
    EXPECT_SAYS(m, "must be a scalar field of as many spatial axes as t (2)");
    m = refusal([&] {
        kernel(Stages({{make_t}, {Assignment(s.center(), t[{1, 0}])}, {Assignment(v.center(), s[{0, 1}])}})
                   .on_chip(t)
                   .on_chip(s, t));
    });
    EXPECT_SAYS(m, "keeps s on chip with the values of t outside the iteration space, but t is on chip too");
    m = refusal([&] { kernel(Stages({{Assignment(t.center(), u[{1, 0}])}, {Assignment(v.center(), t[{1, 0}])}}).on_chip(t).on_chip(v)); });
    EXPECT_SAYS(m, "writes only on-chip fields (Stages::on_chip), so it would have no effect");
}

TEST(TimeSteps, RefusalsSayWhatIsWrong) {
    auto [src, dst, k] = fields<3>("src, dst, k: float64[2D]");
    const Assignment heat(dst.center(), src.center() + 0.1 * (src[{1, 0}] - 2.0 * src.center() + src[{-1, 0}]));
    auto make = [](const Assignment& a, int steps, std::vector<std::pair<std::string, std::string>> pairs = {}) {
        KernelConfig c{.target = Target::CPU, .name = "h"};
        c.time_steps = steps;
        c.ping_pong = std::move(pairs);
        return create_kernel(AssignmentCollection{a}, c);
    };
    std::string m = refusal([&] { make(heat, 0); });
    EXPECT_SAYS(m, "kernel 'h' has time_steps = 0; give 1 (one step per call) to 16 steps per call");
    m = refusal([&] { make(heat, 17); });
    EXPECT_SAYS(m, "time_steps = 17");
    m = refusal([&] { make(heat, 1, {{"src", "dst"}}); });
    EXPECT_SAYS(m, "has ping_pong pairs but time_steps = 1");
    const Assignment with_k(dst.center(), k.center() * (src[{1, 0}] + src[{-1, 0}]));
    m = refusal([&] { make(with_k, 2); });
    EXPECT_SAYS(m, "reads 2 field(s) like it (k, src), so which one holds the previous step is ambiguous");
    EXPECT_SAYS(m, "ping_pong = {{\"src\", \"dst\"}}");
    EXPECT_NO_THROW(make(with_k, 2, {{"src", "dst"}}));
    m = refusal([&] { make(with_k, 2, {{"source", "dst"}}); });
    EXPECT_SAYS(m, "ping_pong names 'source' as the field a step reads, but the step reads no field of that name (it reads k, src)");
    m = refusal([&] { make(with_k, 2, {{"src", "k"}}); });
    EXPECT_SAYS(m, "ping_pong names 'k' as the field a step writes");
    m = refusal([&] { make(Assignment(dst.center(), dst.center() + src[{1, 0}]), 2, {{"src", "dst"}}); });
    EXPECT_SAYS(m, "the step reads dst, which it writes");
    m = refusal([&] { make(Assignment(dst.center(), 2.0 * dst[{1, 0}]), 3); });
    EXPECT_SAYS(m, "reads 0 field(s) like it (), so which one holds the previous step is missing");
    m = refusal([&] {
        KernelConfig c{.target = Target::CPU, .name = "h"};
        c.time_steps = 2;
        create_kernel(Stages({{heat}, {Assignment(k.center(), dst[{1, 0}])}}), c);
    });
    EXPECT_SAYS(m, "has time_steps = 2 (or ping_pong pairs) and 2 stages");
    m = refusal([&] { make(heat, 2, {{"src", "dst"}, {"src", "dst"}}); });
    EXPECT_SAYS(m, "ping_pong names 'src' in two pairs");
}

TEST(TimeSteps, APointwiseStepRunsItsStepsAsTemporariesOfOneStage) {
    auto [src, dst] = fields<2>("src, dst: float64[2D]");
    KernelConfig c{.target = Target::CPU, .name = "logistic"};
    c.time_steps = 3;
    const Kernel k = create_kernel({Assignment(dst.center(), 3.5 * src.center() * (1.0 - src.center()))}, c);
    EXPECT_FALSE(k.schedule().shared_tiles) << "no tiles: no step reads a neighbour";
    auto a = HostArray<double>::random({9, 13}, 3, Uniform(0.1, 0.9));
    auto b = HostArray<double>::random({9, 13}, 4, Uniform(-1, 1));
    {
        // A temporary named like the states between the steps: the names stay apart.
        AssignmentCollection step;
        Expr d = step.subexpression("dst", 1.0 - src.center());
        step.add(Assignment(dst.center(), 3.5 * src.center() * d));
        auto a2 = HostArray<double>::from_host(a.to_host(), {9, 13});
        auto b2 = HostArray<double>::zeros({9, 13});
        create_kernel(step, c).compile()(args("src", a2, "dst", b2));
        const std::vector<double> in = a.to_host(), out = b2.to_host();
        for (std::size_t i = 0; i < in.size(); ++i) {
            double x = in[i];
            for (int s = 0; s < 3; ++s) x = 3.5 * x * (1.0 - x);
            EXPECT_NEAR(out[i], x, 1e-12) << i;
        }
    }
    const std::vector<double> a0 = a.to_host();
    k.compile()(args("src", a, "dst", b));
    const std::vector<double> got = b.to_host();
    for (std::size_t i = 0; i < a0.size(); ++i) {
        double x = a0[i];
        for (int s = 0; s < 3; ++s) x = 3.5 * x * (1.0 - x);
        EXPECT_NEAR(got[i], x, 1e-12) << i;
    }
    EXPECT_EQ(a.to_host(), a0);
    KernelConfig cuda = c;
    cuda.target = Target::CUDA;
    test::expect_compiles_for_sm90(create_kernel({Assignment(dst.center(), 3.5 * src.center() * (1.0 - src.center()))}, cuda));
}

} // namespace
} // namespace loom
