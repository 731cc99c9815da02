// The sweep runner: a TBB pipeline computes points in parallel and hands them
// over in index order; the calling thread is the single writer that commits
// them in batched transactions and calls the sink.
//
//   producer thread: task_arena(threads) { parallel_pipeline(
//       serial_in_order: next block of point indices (stops on cancel): the
//                        head in index order, then the tail's points one by
//                        one, the long ones first (tail_order),
//       parallel:        evaluate the block's points,
//       serial_in_order: append to the hand-over queue, in index order (tail
//                        points wait in a slot until those before them are in)) }
//   calling thread:  wait for blocks -> append_points (one transaction per
//                    batch) -> on_point per point -> on_progress.
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/parallel_pipeline.h>
#include <oneapi/tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "base/error.h"
#include "base/threads.h"
#include "sweep/sweep.h"
#include "base/cancel.h"
#include "sweep/sweep_internal.h"

namespace scin {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct Block {
  std::uint64_t first = 0;
  std::uint64_t count = 0;
  bool tail = false;        // one point of the tail (out of index order)
};

struct Computed {
  std::vector<PointRecord> pts;
  bool truncated = false;   // cancelled part-way: later blocks are dropped
  bool tail = false;
};

// Estimated seconds of each tail point (0 without an estimate).
std::vector<double> tail_seconds(const SweepOptions& opts, std::uint64_t total, const std::vector<std::uint64_t>& tail) {
  std::vector<double> s(tail.size(), 0.0);
  if (opts.point_seconds.size() == total)
    for (std::size_t k = 0; k < tail.size(); ++k) s[k] = opts.point_seconds[tail[k]];
  return s;
}

SweepSummary run_impl(Store* store, const SweepSpec& spec, const SweepOptions& opts, const SweepSink& sink) {
  auto compiled = sweep_detail::compile(spec, opts.memoise);
  sweep_detail::Compiled& c = *compiled;
  const std::uint64_t total = c.total;
  const int threads = resolve_threads(opts.threads);
  // More threads than cores were asked for: lift TBB's default worker limit
  // for the duration of the sweep (otherwise TBB ignores the request and warns).
  std::optional<tbb::global_control> allow;
  if (threads > tbb::info::default_concurrency())
    allow.emplace(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));

  SweepSummary summary;
  summary.threads = threads;
  summary.progress.total = total;
  // Index ranges [first, last) to evaluate: everything, or what a resumed run lacks.
  sweep_detail::RunPlan plan = sweep_detail::begin_or_resume(store, spec, opts, total, threads, /*ranks=*/1);
  summary.run_id = plan.run_id;
  const std::uint64_t already = plan.already;
  // With more than one thread, the last points go longest first (a long point
  // left to the end ran alone); with one, everything stays in index order.
  const sweep_detail::TailPlan split = sweep_detail::split_tail(
      plan.todo, threads > 1 ? sweep_detail::kTailPointsPerThread * static_cast<std::uint64_t>(threads) : 0);
  const auto& todo = split.head;
  const std::vector<std::uint64_t>& tail = split.tail;

  // Points per pipeline token: small sweeps one point each (prompt
  // cancellation, good balance), big ones up to 32 to amortise the overhead.
  const std::uint64_t block_size =
      std::clamp<std::uint64_t>((total - already) / (static_cast<std::uint64_t>(threads) * 256), 1, 32);

  std::mutex m;
  std::condition_variable cv;
  std::deque<std::vector<PointRecord>> ready;
  bool producer_done = false;
  std::exception_ptr producer_error;
  std::atomic<bool> stop{false};
  // Both ways to cancel end in one stop request that every point computation
  // gets through its RunContext: the stop token forwards at once, the atomic
  // flag (opts.cancel) through the writer loop.
  std::atomic<bool> cancel_flag{false};
  std::stop_source stop_src;
  std::stop_callback on_stop(opts.stop, [&] {
    cancel_flag = true;
    stop_src.request_stop();
  });
  RunContext ctx;
  ctx.stop = stop_src.get_token();
  auto cancelled = [&] {
    return stop.load(std::memory_order_relaxed) || cancel_flag.load(std::memory_order_relaxed) ||
           (opts.cancel && opts.cancel->load());
  };

  std::thread producer([&] {
    try {
      tbb::task_arena arena(threads);
      arena.execute([&] {
        const std::vector<std::uint64_t> tail_next = sweep_detail::tail_order(tail, tail_seconds(opts, total, tail), threads);
        std::size_t taken = 0;               // of tail_next
        std::vector<std::optional<PointRecord>> slot(tail.size());
        std::size_t delivered = 0;           // tail points handed over (a prefix of `tail`)
        std::size_t range = 0;
        std::uint64_t next = todo.empty() ? 0 : todo[0].first;
        bool truncated = false;
        std::vector<PointRecord> out;
        auto last_flush = Clock::now();
        auto flush = [&] {
          if (out.empty()) return;
          {
            std::lock_guard<std::mutex> lock(m);
            ready.push_back(std::move(out));
          }
          out.clear();
          cv.notify_one();
          last_flush = Clock::now();
        };
        // Tokens only bound finished records waiting for an earlier slow point
        // (the writer takes them in index order), not the work in progress: with
        // 4 per thread, a 1 GiB point held the other threads idle after a few
        // small points (a 2-thread sweep used 1.3 cores).
        tbb::parallel_pipeline(
            static_cast<std::size_t>(threads) * 64,
            tbb::make_filter<void, Block>(tbb::filter_mode::serial_in_order,
                                          [&](tbb::flow_control& fc) -> Block {
                                            while (range < todo.size() && next >= todo[range].second)
                                              if (++range < todo.size()) next = todo[range].first;
                                            if ((range >= todo.size() && taken >= tail_next.size()) ||
                                                cancelled()) {
                                              fc.stop();
                                              return {};
                                            }
                                            if (range >= todo.size()) return Block{tail_next[taken++], 1, true};
                                            Block b{next, std::min(block_size, todo[range].second - next)};
                                            next += b.count;
                                            return b;
                                          }) &
                tbb::make_filter<Block, Computed>(
                    tbb::filter_mode::parallel,
                    [&](Block b) {
                      Computed r;
                      r.tail = b.tail;
                      r.pts.reserve(b.count);
                      // A long point (packet engine, quant, inference) polls ctx.stop and stops mid-point.
                      for (std::uint64_t i = 0; i < b.count; ++i) {
                        if (i > 0 && cancelled()) {
                          r.truncated = true;   // a short block marks the cut
                          break;
                        }
                        try {
                          r.pts.push_back(sweep_detail::evaluate(c, b.first + i, ctx));
                        } catch (const Cancelled&) {
                          r.truncated = true;
                          break;
                        }
                      }
                      return r;
                    }) &
                tbb::make_filter<Computed, void>(
                    tbb::filter_mode::serial_in_order, [&](Computed r) {
                      if (truncated) return;   // keep the committed points a contiguous prefix
                      truncated = r.truncated;
                      if (!r.tail) {
                        for (auto& p : r.pts) out.push_back(std::move(p));
                      } else {
                        // Every head block came before (emission order); a tail
                        // point waits until the points before it are in.
                        for (auto& p : r.pts) {
                          const auto k = static_cast<std::size_t>(
                              std::lower_bound(tail.begin(), tail.end(), p.index) - tail.begin());
                          slot[k] = std::move(p);
                        }
                        for (; delivered < slot.size() && slot[delivered]; ++delivered)
                          out.push_back(std::move(*slot[delivered]));
                      }
                      if (out.size() >= 256 || seconds_since(last_flush) > 0.02 || truncated) flush();
                    }));
        flush();
      });
    } catch (...) {
      producer_error = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(m);
      producer_done = true;
    }
    cv.notify_all();
  });

  // --- the writer: this thread ----------------------------------------------
  SweepProgress& pr = summary.progress;
  sweep_detail::PointWriter writer(store, summary.run_id, pr, already, opts, sink,
                                   [&] { return c.memo_hits.load(std::memory_order_relaxed); });

  std::exception_ptr writer_error;
  try {
    writer.report(true);
    for (;;) {
      std::deque<std::vector<PointRecord>> got;
      bool done;
      {
        std::unique_lock<std::mutex> lock(m);
        cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return !ready.empty() || producer_done; });
        got.swap(ready);
        done = producer_done && ready.empty();
      }
      if (opts.cancel && opts.cancel->load() && !cancel_flag.exchange(true)) stop_src.request_stop();
      for (auto& v : got)
        for (auto& p : v) writer.add(std::move(p));
      writer.step(done);
      if (done) break;
    }
  } catch (...) {
    writer_error = std::current_exception();
    stop = true;
  }
  producer.join();

  bool was_cancelled = cancelled() && pr.done < total;
  if (writer_error || producer_error) {
    summary.status = RunStatus::Failed;
    if (store) {
      try {
        store->finish_run(summary.run_id, RunStatus::Failed);
      } catch (...) {
      }
    }
    std::rethrow_exception(writer_error ? writer_error : producer_error);
  }
  summary.status = was_cancelled ? RunStatus::Cancelled : RunStatus::Done;
  if (store) store->finish_run(summary.run_id, summary.status);
  writer.update();
  writer.report(true);
  return summary;
}

}  // namespace

SweepSummary run_sweep(const SweepSpec& spec, const SweepOptions& opts, const SweepSink& sink) {
  return run_impl(nullptr, spec, opts, sink);
}

SweepSummary run_sweep(Store& store, const SweepSpec& spec, const SweepOptions& opts, const SweepSink& sink) {
  return run_impl(&store, spec, opts, sink);
}

}  // namespace scin
