// Guide, "Multi-stage kernels": a smoothing and a Laplacian of it as two stages of one kernel,
// checked against the two stages run one after another with plain loops; and a race between
// stages, refused. Runs on the CPU target everywhere, on a GPU too where cuda_available().
#include <loom/loom.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>
#include <vector>

int main() {
    using namespace loom;
    int failures = 0;
    auto expect = [&failures](bool ok, const char* what) {
        if (!ok) {
            std::fprintf(stderr, "stages: check failed: %s\n", what);
            ++failures;
        }
    };
    const std::int64_t n = 200;

    // [guide:stages]
    auto [u, t, v] = fields<3>("u, t, v: float64[2D]");
    Assignment smooth(t.center(), 0.5 * u.center() + 0.125 * (u[{1, 0}] + u[{-1, 0}] + u[{0, 1}] + u[{0, -1}]));
    Assignment laplace(v.center(), t[{1, 0}] + t[{-1, 0}] + t[{0, 1}] + t[{0, -1}] - 4.0 * t.center());
    // Stage 2 reads what stage 1 writes, at neighbouring cells: one kernel, as if two ran in order.
    Kernel kernel = create_kernel(Stages({{smooth}, {laplace}}), {.name = "smooth_laplace"});
    std::cout << kernel.schedule().describe(kernel.requested_schedule()) << "\n";
    // block = (64, 4, 1) (chosen), cells_per_thread = 4 (chosen), ..., shared_tiles = true (chosen), ...
    // [/guide:stages]
    expect(kernel.schedule().shared_tiles, "the stages chose shared tiles");

    // The two stages one after another, in double: t over the interior, then v from t (t's
    // ghost cells as they were).
    std::mt19937_64 rng(1);
    std::uniform_real_distribution<double> d(-1.0, 1.0);
    std::vector<double> uv(std::size_t(n * n)), tv(std::size_t(n * n));
    for (double& x : uv) x = d(rng);
    for (double& x : tv) x = d(rng);
    std::vector<double> tw = tv, vw(std::size_t(n * n), NAN);
    auto at = [n](std::int64_t i, std::int64_t j) { return std::size_t(i * n + j); };
    for (std::int64_t i = 1; i < n - 1; ++i)
        for (std::int64_t j = 1; j < n - 1; ++j)
            tw[at(i, j)] = 0.5 * uv[at(i, j)] + 0.125 * (uv[at(i + 1, j)] + uv[at(i - 1, j)] + uv[at(i, j + 1)] + uv[at(i, j - 1)]);
    for (std::int64_t i = 1; i < n - 1; ++i)
        for (std::int64_t j = 1; j < n - 1; ++j)
            vw[at(i, j)] = tw[at(i + 1, j)] + tw[at(i - 1, j)] + tw[at(i, j + 1)] + tw[at(i, j - 1)] - 4.0 * tw[at(i, j)];
    auto check = [&](const std::vector<double>& tg, const std::vector<double>& vg, const char* where) {
        bool ok = true;
        for (std::size_t k = 0; k < vw.size() && ok; ++k) {
            ok = std::abs(tg[k] - tw[k]) <= 1e-12;
            ok = ok && (std::isnan(vw[k]) ? std::isnan(vg[k]) : std::abs(vg[k] - vw[k]) <= 1e-12);
        }
        expect(ok, where);
    };

    KernelFunction cpu = create_kernel(Stages({{smooth}, {laplace}}), {.target = Target::CPU, .name = "smooth_laplace"}).compile();
    auto hu = HostArray<double>::from_host(uv, {n, n}), ht = HostArray<double>::from_host(tv, {n, n});
    auto hv = HostArray<double>::from_host(std::vector<double>(std::size_t(n * n), NAN), {n, n});
    cpu(args("u", hu, "t", ht, "v", hv));
    check(ht.to_host(), hv.to_host(), "CPU stages match the stages run one after another");
    if (cuda_available()) {
        KernelFunction gpu = kernel.compile();
        auto du = DeviceArray<double>::from_host(uv, {n, n}), dt = DeviceArray<double>::from_host(tv, {n, n});
        auto dv = DeviceArray<double>::from_host(std::vector<double>(std::size_t(n * n), NAN), {n, n});
        gpu(args("u", du, "t", dt, "v", dv));
        gpu.synchronize();
        check(dt.to_host(), dv.to_host(), "GPU stages match the stages run one after another");
    }

    // A later stage that overwrites what an earlier one reads at neighbouring cells races.
    try {
        // [guide:stage_race]
        create_kernel(Stages({{Assignment(t.center(), u[{1, 0}])}, {Assignment(u.center(), t.center())}}),
                      {.name = "race"});
        // UserError: kernel 'race' reads field u at [1, 0] in stage 1 (...) and writes it in the
        // later stage 2 (...): fused into one kernel, a neighbouring block may run stage 2 before
        // this block's stage 1 reads the cell (a race). Write stage 2's result into another field
        // [/guide:stage_race]
        expect(false, "the race is refused");
    } catch (const UserError& e) {
        expect(std::string(e.what()).find("(a race)") != std::string::npos, "the race is named");
    }
    {
        // [guide:fuse]
        // Two kernels written apart, fused afterwards: the same kernel as the Stages above.
        Kernel first = create_kernel({smooth}, {.name = "smooth"});
        Kernel second = create_kernel({laplace}, {.name = "laplace"});
        Kernel both = fuse(first, second); // "smooth_laplace": arguments u, t and v
        // [/guide:fuse]
        expect(both.source() == kernel.source(), "fuse gives the Stages kernel");
    }
    {
        // [guide:on_chip]
        // t lives in the blocks' shared memory only: no argument, never written to memory.
        // Past the iteration space it holds 0 (zero padding), or another field's values:
        // on_chip(t, w) for a field w.
        Kernel fused = create_kernel(Stages({{smooth}, {laplace}}).on_chip(t), {.name = "smooth_laplace_on_chip"});
        // arguments: u and v
        // [/guide:on_chip]
        expect(fused.fields().size() == 2, "t is no argument");
        KernelFunction f = create_kernel(Stages({{smooth}, {laplace}}).on_chip(t),
                                         {.target = Target::CPU, .name = "smooth_laplace_on_chip"})
                               .compile();
        auto hu = HostArray<double>::from_host(uv, {n, n});
        auto hv = HostArray<double>::from_host(std::vector<double>(std::size_t(n * n), NAN), {n, n});
        f(args("u", hu, "v", hv));
        // The reference's t with 0 on its ghost cells, then v from it.
        std::vector<double> t0(std::size_t(n * n), 0.0), v0(std::size_t(n * n), NAN);
        for (std::int64_t i = 1; i < n - 1; ++i)
            for (std::int64_t j = 1; j < n - 1; ++j) t0[at(i, j)] = tw[at(i, j)];
        for (std::int64_t i = 1; i < n - 1; ++i)
            for (std::int64_t j = 1; j < n - 1; ++j)
                v0[at(i, j)] = t0[at(i + 1, j)] + t0[at(i - 1, j)] + t0[at(i, j + 1)] + t0[at(i, j - 1)] - 4.0 * t0[at(i, j)];
        const std::vector<double> got = hv.to_host();
        bool ok = true;
        for (std::size_t k = 0; k < got.size(); ++k)
            ok = ok && (std::isnan(v0[k]) ? std::isnan(got[k]) : std::abs(got[k] - v0[k]) <= 1e-12);
        expect(ok, "on-chip t: v matches the stages with t zero outside");
    }
    {
        // [guide:time_steps]
        auto [a, b] = fields<2>("a, b: float64[2D]");
        Assignment heat(b.center(), a.center() + 0.2 * (a[{1, 0}] + a[{-1, 0}] + a[{0, 1}] + a[{0, -1}] - 4.0 * a.center()));
        // Four steps a -> b per call: the steps between live in shared memory.
        Kernel four = create_kernel(heat, {.name = "heat4", .time_steps = 4});
        // b = the 4th step; a is left as it was. The pair is found (b written, a read); name it
        // where the step reads other fields of its kind: .ping_pong = {{"a", "b"}}.
        // [/guide:time_steps]
        expect(four.fields().size() == 2, "time steps: arguments a and b");
        KernelConfig cpu{.target = Target::CPU, .name = "heat4"};
        cpu.time_steps = 4;
        auto ha = HostArray<double>::from_host(uv, {n, n}), hb = HostArray<double>::from_host(tv, {n, n});
        create_kernel(heat, cpu).compile()(args("a", ha, "b", hb));
        // Four sweeps alternating between the pair (a -> b, b -> a, ...), each reading the ghost
        // cells of the array it reads.
        std::vector<double> A = uv, B = tv;
        for (int step = 1; step <= 4; ++step) {
            const std::vector<double>& in = step % 2 ? A : B;
            std::vector<double>& out = step % 2 ? B : A;
            std::vector<double> next = out;
            for (std::int64_t i = 1; i < n - 1; ++i)
                for (std::int64_t j = 1; j < n - 1; ++j)
                    next[at(i, j)] = in[at(i, j)] + 0.2 * (in[at(i + 1, j)] + in[at(i - 1, j)] + in[at(i, j + 1)] +
                                                           in[at(i, j - 1)] - 4.0 * in[at(i, j)]);
            out = next;
        }
        const std::vector<double> got = hb.to_host();
        bool ok = ha.to_host() == uv;
        for (std::int64_t i = 1; i < n - 1; ++i)
            for (std::int64_t j = 1; j < n - 1; ++j) ok = ok && std::abs(got[at(i, j)] - A[at(i, j)]) <= 1e-12;
        expect(ok, "time steps: b matches four sweeps");
    }
    return failures == 0 ? 0 : 1;
}
