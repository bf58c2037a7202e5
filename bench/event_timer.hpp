// CUDA-event timing shared by the GPU benchmarks (bench_gpu, bench_nn).
#pragma once

#include "bench/harness.hpp"
#include "runtime/driver.hpp"

#include <chrono>
#include <vector>

namespace loom::bench {

/// `runs` + 1 CUDA events, created once, for timed series on one stream. median_ms: the warm-up
/// calls are still running when the first event is recorded and the host queues ahead, so an
/// interval contains no GPU idle time spent waiting for the host unless the host cannot keep up
/// (then it is part of the cost).
class EventTimer {
public:
    EventTimer(CUstream stream, int runs, int warmup = 3)
        : stream_(stream), warmup_(warmup), events_(runs + 1, nullptr) {
        for (CUevent& e : events_) check(driver().cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate");
    }
    ~EventTimer() {
        for (CUevent e : events_)
            if (e) driver().cuEventDestroy(e);
    }
    EventTimer(const EventTimer&) = delete;
    EventTimer& operator=(const EventTimer&) = delete;

    /// The median milliseconds of `runs` calls of `work`, each enqueueing GPU work on the stream;
    /// with `host_us_per_run`, also the host time per call while queueing.
    template <typename Work>
    double median_ms(Work&& work, double* host_us_per_run = nullptr) {
        Driver& d = driver();
        const int runs = static_cast<int>(events_.size()) - 1;
        for (int i = 0; i < warmup_; ++i) work();
        check(d.cuEventRecord(events_[0], stream_), "cuEventRecord");
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < runs; ++i) {
            work();
            check(d.cuEventRecord(events_[i + 1], stream_), "cuEventRecord");
        }
        if (host_us_per_run)
            *host_us_per_run =
                std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / runs;
        check(d.cuEventSynchronize(events_[runs]), "cuEventSynchronize");
        std::vector<double> ms;
        for (int i = 0; i < runs; ++i) {
            float t = 0;
            check(d.cuEventElapsedTime(&t, events_[i], events_[i + 1]), "cuEventElapsedTime");
            ms.push_back(t);
        }
        return median(ms);
    }

private:
    CUstream stream_;
    int warmup_;
    std::vector<CUevent> events_;
};

} // namespace loom::bench
