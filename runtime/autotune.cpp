// KernelFunction::autotune: the GPU side of autotuning. The search (runtime/tuning_search.hpp)
// proposes schedules; this file lowers each (KernelSpec::reschedule), compiles a batch at once
// on several threads, times each on the caller's arrays, and keeps the winner in the disk cache
// (runtime/tuning_record.hpp).
#include <loom/kernel_function.hpp>

#include "runtime/compile_cache.hpp"
#include "runtime/driver.hpp"
#include "runtime/kernel_loading.hpp"
#include "runtime/tuning_record.hpp"
#include "runtime/tuning_search.hpp"

#include <loom/errors.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <map>
#include <thread>

namespace loom {

namespace {

/// The bytes an array's elements span (negative strides included), and where they start.
struct Span {
    CUdeviceptr start = 0;
    std::size_t bytes = 0;
};
Span span_of(const ArrayRef& a) {
    if (a.size() == 0) return {};
    std::int64_t low = 0, high = 0;
    for (int ax = 0; ax < a.ndim(); ++ax) {
        const std::int64_t reach = a.strides[ax] * (a.shape[ax] - 1);
        (reach < 0 ? low : high) += reach;
    }
    const std::int64_t size = std::int64_t(dtype_size(a.dtype));
    return {a.ptr + CUdeviceptr(low * size), std::size_t((high - low + 1) * size)};
}

/// Copies of the written fields' memory, put back by the destructor: tuning launches the kernel
/// hundreds of times, and an in-place kernel would otherwise leave its data changed that often.
class SavedOutputs {
public:
    SavedOutputs(Context& ctx, const KernelSpec& k, const std::vector<ArrayRef>& arrays)
        : ctx_(ctx) {
        try {
            for (std::size_t i = 0; i < k.fields.size(); ++i) {
                if (!k.fields[i].written) continue;
                Span s = span_of(arrays[i]);
                if (s.bytes == 0) continue;
                CUdeviceptr copy = 0;
                check(driver().cuMemAlloc(&copy, s.bytes),
                      fmt::format("cuMemAlloc({} bytes) to keep field '{}' while autotuning (the "
                                  "device needs room for a copy of every written array)",
                                  s.bytes, k.fields[i].name));
                saved_.push_back({s, copy});
                check(driver().cuMemcpyDtoD(copy, s.start, s.bytes), "cuMemcpyDtoD");
            }
        } catch (...) {
            release(/*restore=*/false); // nothing ran yet: only the copies made so far go
            throw;
        }
    }
    ~SavedOutputs() {
        release(/*restore=*/true);
        ctx_.synchronize(); // restored before the caller launches on another stream
    }
    SavedOutputs(const SavedOutputs&) = delete;
    SavedOutputs& operator=(const SavedOutputs&) = delete;

private:
    void release(bool restore) {
        for (const auto& [span, copy] : saved_) {
            if (restore) driver().cuMemcpyDtoD(span.start, copy, span.bytes);
            driver().cuMemFree(copy);
        }
        saved_.clear();
    }
    Context& ctx_;
    std::vector<std::pair<Span, CUdeviceptr>> saved_;
};

/// What makes two candidates the same launch: the source and the launch description.
std::string identity_of(const KernelSpec& s) {
    const LaunchSpec& L = s.launch;
    return fmt::format("{}|{},{},{}|{},{},{}|{}|{}|{}", s.source, L.default_block[0],
                       L.default_block[1], L.default_block[2], L.cells_per_thread[0],
                       L.cells_per_thread[1], L.cells_per_thread[2], L.shared_bytes,
                       L.max_threads_per_block, L.exact_block);
}

/// Runs `work(i)` for i in [0, n) on up to `threads` threads.
void in_parallel(std::size_t n, int threads, const std::function<void(std::size_t)>& work) {
    std::atomic<std::size_t> next{0};
    auto worker = [&] {
        for (std::size_t i; (i = next++) < n;) work(i);
    };
    std::vector<std::thread> pool;
    const std::size_t count = std::min<std::size_t>(n, std::size_t(std::max(1, threads)));
    for (std::size_t t = 1; t < count; ++t) pool.emplace_back(worker);
    worker();
    for (auto& t : pool) t.join();
}

/// Times candidates: lowers, compiles a batch on several threads, then launches each.
class CandidateTimer {
public:
    CandidateTimer(const KernelSpec& base, const Args& arguments, int device, int arch,
                   const AutotuneOptions& options)
        : base_(base), arguments_(arguments), device_(device), arch_(arch), options_(options) {}

    std::vector<TrialTiming> operator()(const std::vector<Schedule>& batch) {
        std::vector<TrialTiming> out(batch.size());
        std::vector<std::optional<KernelSpec>> specs(batch.size());
        std::vector<std::string> ids(batch.size());
        for (std::size_t i = 0; i < batch.size(); ++i) {
            try {
                specs[i] = base_.reschedule(batch[i]);
                ids[i] = identity_of(*specs[i]);
            } catch (const UserError& e) {
                out[i].error = e.what();
            }
        }
        // Each new kernel compiled once, the batch at the same time.
        std::vector<std::size_t> fresh;
        std::map<std::string, std::size_t> first_in_batch;
        for (std::size_t i = 0; i < batch.size(); ++i)
            if (specs[i] && !known_.count(ids[i]) && first_in_batch.emplace(ids[i], i).second)
                fresh.push_back(i);
        std::vector<std::string> compile_errors(batch.size());
        in_parallel(fresh.size(), compile_threads(), [&](std::size_t j) {
            const KernelSpec& s = *specs[fresh[j]];
            try {
                CompileCache::global().get(s.source, s.name, cuda_compile_options(s, arch_));
            } catch (const std::exception& e) { // never out of a worker thread
                compile_errors[fresh[j]] = e.what();
            }
        });
        for (std::size_t i : fresh) {
            TrialTiming t;
            if (!compile_errors[i].empty()) {
                t.error = compile_errors[i];
            } else {
                try {
                    KernelFunction f(*specs[i], device_);
                    t.ms = f.benchmark(arguments_, options_.runs);
                } catch (const UserError& e) {
                    t.error = e.what(); // a launch the device refuses (shared memory, block)
                } catch (const CudaError& e) {
                    t.error = e.what(); // too many registers for the block, say
                }
            }
            known_[ids[i]] = t;
        }
        for (std::size_t i = 0; i < batch.size(); ++i) {
            if (!specs[i]) continue;
            out[i] = known_[ids[i]];
            out[i].repeated = first_in_batch.count(ids[i]) == 0 || first_in_batch[ids[i]] != i;
        }
        return out;
    }

    /// The spec a request lowers to (the winner's, once more).
    KernelSpec spec_of(const Schedule& s) const { return base_.reschedule(s); }

private:
    int compile_threads() const {
        if (options_.compile_threads > 0) return options_.compile_threads;
        return int(std::clamp(std::thread::hardware_concurrency(), 1u, 16u));
    }

    const KernelSpec& base_;
    const Args& arguments_;
    int device_, arch_;
    const AutotuneOptions& options_;
    std::map<std::string, TrialTiming> known_; ///< by identity_of
};

std::string nothing_to_tune(const KernelSpec& k) {
    if (k.backend == Backend::Host)
        return "the CPU target runs every schedule alike (its loops cover the space and OpenMP "
               "spreads them)";
    if (!k.reschedule)
        return "this KernelSpec was not made by create_kernel, so it cannot be lowered with "
               "another schedule";
    if (k.launch.manual)
        return "the kernel has a manual launch grid: block_size and num_blocks are the caller's";
    if (k.tuning.dimensions.empty())
        return "the requested Schedule sets every field autotuning varies (block, "
               "cells_per_thread, cells_axis, stream_cells, vector_width, shared_tiles, "
               "reduce_in_block, reduce_in_warp); leave some open";
    return "";
}

} // namespace

void KernelFunction::replace_kernel(KernelSpec spec) {
    auto next = std::make_shared<const KernelSpec>(std::move(spec));
    module_ = load_module(*next, module_->device);
    wide_module_.reset();
    spec_ = std::move(next);
    const Dim3 b = spec_->launch.default_block;
    block_size = LaunchSize(b[0], b[1], b[2]);
    initial_block_ = b;
}

AutotuneResult KernelFunction::autotune(const Args& arguments, const AutotuneOptions& options) {
    if (options.runs < 1 || options.rounds < 1 || options.max_seconds < 0 ||
        options.compile_threads < 0)
        throw UserError(fmt::format(
            "kernel '{}': autotune: runs and rounds must be at least 1, max_seconds and compile_threads at "
            "least 0; got runs = {}, rounds = {}, max_seconds = {}, compile_threads = {}",
            spec_->name, options.runs, options.rounds, options.max_seconds,
            options.compile_threads));
    AutotuneResult result;
    result.schedule = spec_->schedule;
    result.nothing_to_tune = nothing_to_tune(*untuned_);
    if (!result.nothing_to_tune.empty()) {
        result.ms = result.default_ms = NAN;
        return result;
    }
    // The kernel as constructed, not an earlier winner: the same search and the same key on
    // every call, so that another shape class or `force` starts where a fresh compile() would.
    const KernelSpec base = *untuned_;
    Context& ctx = Context::current(module_->device);
    const DeviceProperties& dev = ctx.properties();
    const Prepared p = prepare(arguments); // every argument checked before anything runs
    const std::string key = tuning_key(dev.name, dev.compute_capability(), base.name, base.source,
                                       base.requested_schedule, shape_class(p.spatial));
    CompileCache& cache = CompileCache::global();

    if (!options.force)
        if (auto hit = cache.find(key, tuning_entries))
            if (auto record = tuning_record_from_text(hit->payload)) {
                try {
                    replace_kernel(base.reschedule(record->schedule));
                    result.schedule = spec_->schedule;
                    result.ms = record->ms;
                    result.default_ms = record->default_ms;
                    result.from_cache = true;
                    return result;
                } catch (const UserError&) {
                    // A record this loom no longer accepts: tune again, and replace it.
                }
            }

    const auto start = std::chrono::steady_clock::now();
    auto out_of_time = [&] {
        return options.max_seconds > 0 &&
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >
                   options.max_seconds;
    };
    SearchOutcome found;
    {
        ctx.synchronize(); // the caller's launches on any stream finish before the arrays are saved
        SavedOutputs saved(ctx, base, p.arrays);
        CandidateTimer timer(base, arguments, module_->device, dev.compute_capability(), options);
        found = search_schedules(base.tuning, base.requested_schedule, std::ref(timer), options,
                                 out_of_time);
        ctx.synchronize();
    } // the written fields are restored here
    result.trials = std::move(found.trials);
    result.stopped_early = found.stopped_early;
    if (!found.best_ms)
        throw UserError(fmt::format(
            "kernel '{}': autotune could not run any schedule on these arguments, not even the "
            "default; the first failure: {}",
            base.name, result.trials.empty() ? "(none tried)" : result.trials.front().error));
    replace_kernel(base.reschedule(found.best));
    result.schedule = spec_->schedule;
    result.ms = *found.best_ms;
    result.default_ms = found.start_ms.value_or(NAN);
    // The request that won, not its resolution: loading it again gives the very kernel timed.
    TuningRecord record{found.best, result.ms, result.default_ms};
    cache.store(key, tuning_entries, {to_text(record), ""});
    return result;
}

} // namespace loom
