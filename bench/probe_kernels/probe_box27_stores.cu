// Probe (not built by CMake): what the 27-point box f32's stores cost. loom prints, after each
// of a group's 8 cells, `if (z_whole) { one vector store } else { 4 guarded element stores }`.
// Compares on 512^3, in one run, against a 2 GiB copy: loom's kernel as printed (gen27_now),
// predicated element stores without the branch (gen27_scalar), one store branch for the group
// (gen27_group: a third copy of the group with vector stores only, for groups inside the row),
// and vector stores only (gen27_vector: wrong at the rows' ends, an upper bound). Made from the
// golden tests/golden/expected/twenty_seven_point_3d_f32.cu (the code bench_stencils prints for
// box3d_27_f32, with other weights; the figures in docs/performance.md were measured on
// `bench_stencils --print-source --only box3d_27_f32` before that copy was dropped) by
// edit_stores.py:
//   cd bench/probe_kernels && for m in now scalar group vector; do python3 edit_stores.py $m
//     ../../tests/golden/expected/twenty_seven_point_3d_f32.cu /tmp/gen27_$m.cuh gen27_$m; done && cd -
//   nvcc -O3 -arch=sm_90 -std=c++17 -I templates -I /tmp bench/probe_kernels/probe_box27_stores.cu
#define LOOM_LANES_ALIGNED 1
#include "loom/lanes.cuh"
#include "gen27_now.cuh"
#include "gen27_scalar.cuh"
#include "gen27_group.cuh"
#include "gen27_vector.cuh"
#include <cuda_runtime.h>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <vector>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

static float time_ms(const std::function<void()>& f, int reps = 30) {
    cudaEvent_t a, b;
    cudaEventCreate(&a); cudaEventCreate(&b);
    for (int i = 0; i < 3; ++i) f();
    std::vector<float> t;
    for (int i = 0; i < reps; ++i) {
        cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b);
        float ms; cudaEventElapsedTime(&ms, a, b); t.push_back(ms);
    }
    CK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

__global__ void fill(float* a, size_t n, unsigned seed) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += size_t(gridDim.x) * blockDim.x) {
        unsigned h = unsigned(i) * 2654435761u ^ seed;
        h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
        a[i] = float(h & 0xffff) / 65536.0f - 0.5f;
    }
}

int main() {
    const int n = 512;
    const size_t cells = (size_t)n * n * n;
    float *a, *b, *r;
    CK(cudaMalloc(&a, cells * 4)); CK(cudaMalloc(&b, cells * 4)); CK(cudaMalloc(&r, cells * 4));
    fill<<<4096, 256>>>(a, cells, 7);
    std::vector<float> hr(cells), hb(cells);
    auto launch = [&](auto kernel, int bx, int by, float* out) {
        dim3 block(bx, by, 1), grid(((n + 2) / 4 + bx - 1) / bx, (n - 2 + by - 1) / by, (n + 5) / 8);
        kernel<<<grid, block>>>(out, a, n, n, n, n * n, n, n * n, n);
    };
    CK(cudaMemset(r, 0, cells * 4));
    launch(gen27_now, 32, 4, r);
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(hr.data(), r, cells * 4, cudaMemcpyDeviceToHost));
    for (int round = 0; round < 2; ++round) {
        float copy_gbs;
        {
            size_t bytes = 1ull << 31; void *x, *y; CK(cudaMalloc(&x, bytes)); CK(cudaMalloc(&y, bytes));
            float ms = time_ms([&] { cudaMemcpyAsync(y, x, bytes, cudaMemcpyDeviceToDevice); }, 20);
            copy_gbs = 2.0 * bytes / (ms * 1e6);
            printf("copy 2 GiB: %.1f GB/s\n", copy_gbs);
            cudaFree(x); cudaFree(y);
        }
        auto run = [&](const char* name, bool check, const std::function<void()>& f) {
            CK(cudaMemset(b, 0, cells * 4)); f(); CK(cudaDeviceSynchronize());
            float err = 0;
            if (check) {
                CK(cudaMemcpy(hb.data(), b, cells * 4, cudaMemcpyDeviceToHost));
                for (size_t k = 0; k < cells; ++k) err = std::max(err, std::fabs(hr[k] - hb[k]));
            }
            float ms = time_ms(f);
            printf("%-44s %8.4f ms  %.3f of copy  %s %.2e\n", name, ms, 2.0 * cells * 4 / (ms * 1e6) / copy_gbs,
                   check ? "err" : "(unchecked)", err);
            fflush(stdout);
        };
        run("now: a store branch per cell (32,4,1)", true, [&] { launch(gen27_now, 32, 4, b); });
        run("predicated element stores (32,4,1)", true, [&] { launch(gen27_scalar, 32, 4, b); });
        run("one store branch a group (32,4,1)", true, [&] { launch(gen27_group, 32, 4, b); });
        run("vector stores only (32,4,1), bound", false, [&] { launch(gen27_vector, 32, 4, b); });
        run("one store branch a group (64,4,1)", true, [&] { launch(gen27_group, 64, 4, b); });
        run("predicated element stores (64,4,1)", true, [&] { launch(gen27_scalar, 64, 4, b); });
    }
    return 0;
}
