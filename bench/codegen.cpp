// Code generation speed: how long create_kernel takes, the whole pipeline (analysis, simplify,
// CSE, iteration space, GPU mapping, launch grid, verify, CUDA printing). CPU only.
//
//   create_kernel/<case>           the DSL is built once, outside the timed loop
//   create_kernel/<case>_with_dsl  building the fields and assignments is timed too
//
// Cases: stencil27_f32 (3D 27-point, float32), multi10_f64 (10 assignments: 3 subexpressions and
// 7 outputs, parameters, sqrt/exp/select, shared terms for CSE), stencil7_f64 (3D 7-point) and
// scale_f64 (f = 2 g, the seed example). Before timing, every case is generated once and checked;
// the binary exits with 1 if one fails, so the test suite can run it as a smoke check.
// Numbers: docs/performance.md.
#include "loom/loom.hpp"

#include <benchmark/benchmark.h>

#include <exception>
#include <iostream>
#include <string>
#include <vector>

namespace {

using loom::Assignment;
using loom::AssignmentCollection;
using loom::Expr;

struct Case {
    AssignmentCollection assignments;
    loom::KernelConfig config;
};

// (a) dst = sum over {-1,0,1}^3 of a distinct coefficient times src at that offset, float32.
Case stencil27_f32() {
    auto [src, dst] = loom::fields<2>("src, dst: float32[3D]");
    Expr sum;
    int i = 0;
    for (int dx = -1; dx <= 1; ++dx)
        for (int dy = -1; dy <= 1; ++dy)
            for (int dz = -1; dz <= 1; ++dz) {
                float coefficient = 0.01f * float(++i); // a plain C++ float: takes float32
                Expr term = coefficient * src[std::vector<int>{dx, dy, dz}];
                sum = sum.defined() ? sum + term : term;
            }
    loom::KernelConfig cfg;
    cfg.name = "stencil27";
    return {AssignmentCollection{Assignment(dst.center(), sum)}, cfg};
}

// (b) 10 assignments: 3 named subexpressions, then 7 outputs (4 scalar fields and the 3
// components of a vector field). Scalar parameters, sqrt, exp, select, and terms shared between
// outputs (dt * alpha, rho + ke, the central differences) so CSE has work.
Case multi10_f64() {
    auto [rho, u, rho_out, u_out, p_out, e_out, w_out] =
        loom::fields<7>("rho, u(3), rho_out, u_out(3), p_out, e_out, w_out: float64[3D]");
    Expr alpha = loom::param<double>("alpha");
    Expr dt = loom::param<double>("dt");
    Expr r = rho.center();

    AssignmentCollection ac;
    Expr ke = ac.subexpression("ke", 0.5 * (u(0) * u(0) + u(1) * u(1) + u(2) * u(2)));
    Expr lap =
        ac.subexpression("lap", rho[{1, 0, 0}] + rho[{-1, 0, 0}] + rho[{0, 1, 0}] +
                                    rho[{0, -1, 0}] + rho[{0, 0, 1}] + rho[{0, 0, -1}] - 6 * r);
    Expr c = ac.subexpression("c", loom::sqrt(alpha * r + ke));

    ac.add(Assignment(rho_out.center(), r + dt * alpha * lap));
    ac.add(Assignment(u_out.center(0),
                      u(0) - dt * alpha * (rho[{1, 0, 0}] - rho[{-1, 0, 0}]) / (r + ke)));
    ac.add(Assignment(u_out.center(1),
                      u(1) - dt * alpha * (rho[{0, 1, 0}] - rho[{0, -1, 0}]) / (r + ke)));
    ac.add(Assignment(u_out.center(2),
                      u(2) - dt * alpha * (rho[{0, 0, 1}] - rho[{0, 0, -1}]) / (r + ke)));
    ac.add(Assignment(p_out.center(), alpha * r * loom::exp(-ke / (c * c))));
    ac.add(Assignment(e_out.center(), (r + ke) * loom::exp(-dt * alpha) + 0.5 * c * c));
    ac.add(Assignment(w_out.center(), loom::select(c > 1.0, c * loom::exp(-dt * alpha),
                                                   loom::sqrt(ke) * dt * alpha)));
    loom::KernelConfig cfg;
    cfg.name = "multi10";
    return {ac, cfg};
}

// (c) The 3D 7-point stencil, float64.
Case stencil7_f64() {
    auto [src, dst] = loom::fields<2>("src, dst: float64[3D]");
    Expr sum = src[{1, 0, 0}] + src[{-1, 0, 0}] + src[{0, 1, 0}] + src[{0, -1, 0}] +
               src[{0, 0, 1}] + src[{0, 0, -1}];
    Expr rhs = (sum - 6 * src.center()) / 6;
    loom::KernelConfig cfg;
    cfg.name = "stencil7";
    return {AssignmentCollection{Assignment(dst.center(), rhs)}, cfg};
}

// (d) f = 2 g, 3D float64: the seed example.
Case scale_f64() {
    auto [f, g] = loom::fields<2>("f, g: float64[3D]");
    loom::KernelConfig cfg;
    cfg.name = "scale";
    return {AssignmentCollection{Assignment(f.center(), 2 * g.center())}, cfg};
}

struct Named {
    const char* name;
    Case (*build)();
};
const Named kCases[] = {
    {"stencil27_f32", stencil27_f32},
    {"multi10_f64", multi10_f64},
    {"stencil7_f64", stencil7_f64},
    {"scale_f64", scale_f64},
};

void BM_create_kernel(benchmark::State& state, Case (*build)()) {
    const Case c = build();
    std::size_t chars = 0;
    for (auto _ : state) {
        loom::Kernel k = loom::create_kernel(c.assignments, c.config);
        std::string source = k.source();
        chars = source.size();
        benchmark::DoNotOptimize(source);
    }
    state.counters["source_chars"] = double(chars);
}

void BM_create_kernel_with_dsl(benchmark::State& state, Case (*build)()) {
    for (auto _ : state) {
        Case c = build();
        loom::Kernel k = loom::create_kernel(c.assignments, c.config);
        std::string source = k.source();
        benchmark::DoNotOptimize(source);
    }
}

// Generates every case once; prints nothing unless one fails.
bool smoke_check() {
    bool ok = true;
    for (const Named& n : kCases) {
        try {
            Case c = n.build();
            std::string source = loom::create_kernel(c.assignments, c.config).source();
            if (source.find("__global__") == std::string::npos ||
                source.find(c.config.name) == std::string::npos) {
                std::cerr << "bench_codegen: " << n.name
                          << ": the generated source lacks __global__ or " << c.config.name << ":\n"
                          << source << "\n";
                ok = false;
            }
        } catch (const std::exception& e) {
            std::cerr << "bench_codegen: " << n.name << ": create_kernel failed: " << e.what()
                      << "\n";
            ok = false;
        }
    }
    return ok;
}

} // namespace

int main(int argc, char** argv) {
    if (!smoke_check()) return 1;
    for (const Named& n : kCases) {
        benchmark::RegisterBenchmark((std::string("create_kernel/") + n.name).c_str(),
                                     BM_create_kernel, n.build)
            ->Unit(benchmark::kMicrosecond);
        benchmark::RegisterBenchmark((std::string("create_kernel/") + n.name + "_with_dsl").c_str(),
                                     BM_create_kernel_with_dsl, n.build)
            ->Unit(benchmark::kMicrosecond);
    }
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
