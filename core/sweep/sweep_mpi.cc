// The MPI sweep (see sweep_mpi.h): rank 0 dispatches batches and writes, the
// other ranks evaluate. Only the main thread of a process calls MPI
// (MPI_THREAD_FUNNELED); evaluation runs on a thread of its own with a TBB
// arena, so a rank keeps answering messages (its next batch) while it
// computes.
//
// Messages (all MPI_BYTE on MPI_COMM_WORLD):
//   kJob     0 -> w  JSON {"spec", "config", "threads", "memoise"}; empty: no job
//   kWork    0 -> w  u64 first, u64 count; count 0: stop
//   kResult  w -> 0  u64 first, u64 count asked, u64 elapsed ns, u64 memo hits, points
//   kFail    w -> 0  the worker's error text
#include "sweep/sweep_mpi.h"

#include <mpi.h>
#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <map>
#include <mutex>
#include <limits>
#include <optional>
#include <thread>
#include <utility>

#include <fmt/format.h>

#include "base/error.h"
#include "base/threads.h"
#include "sweep/point_wire.h"
#include "sweep/sweep_internal.h"

namespace scin {

namespace {

using wire::Block;
using wire::BlockResult;
using wire::decode_result;
using wire::encode_result;
using wire::encode_work;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

enum Tag : int { kJob = 1, kWork = 2, kResult = 4, kFail = 5 };

constexpr int kQueueDepth = 2;              // batches an evaluator holds: one computing, one waiting
constexpr double kTargetBatch_s = 0.5;      // work per batch once its cost is known
constexpr std::uint64_t kMaxBatch = 4096;   // points per batch (bounds a message)

/// Sleeps between probes when nothing happened: 50 us at first, doubling to
/// 5 ms while idle (a rank computing a half-second batch wakes ~100 times, not
/// thousands: on a shared or oversubscribed node the polling costs no core).
class Backoff {
 public:
  void idle() {
    std::this_thread::sleep_for(std::chrono::microseconds(us_));
    us_ = std::min(us_ * 2, 5000);
  }
  void reset() { us_ = 50; }
  void step(bool busy) { busy ? reset() : idle(); }

 private:
  int us_ = 50;
};

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// ---------------------------------------------------------------- messages

void send_bytes(int dest, int tag, const std::string& s) {
  if (s.size() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw Error(fmt::format("MPI sweep: a message of {} bytes is too big; use a smaller batch", s.size()));
  // const_cast: MPI-2 signatures (Open MPI's are const-correct; others are not).
  const int rc = MPI_Send(const_cast<char*>(s.data()), static_cast<int>(s.size()), MPI_BYTE, dest, tag, MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS) throw Error(fmt::format("MPI sweep: sending to rank {} failed (MPI error {})", dest, rc));
}

struct Message {
  int source = -1;
  int tag = 0;
  std::string bytes;
};

/// A waiting message from `source` (MPI_ANY_SOURCE: any), or nothing.
std::optional<Message> poll(int source) {
  int flag = 0;
  MPI_Status st;
  if (MPI_Iprobe(source, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st) != MPI_SUCCESS || !flag) return std::nullopt;
  int n = 0;
  MPI_Get_count(&st, MPI_BYTE, &n);
  Message m;
  m.source = st.MPI_SOURCE;
  m.tag = st.MPI_TAG;
  m.bytes.resize(static_cast<std::size_t>(n));
  if (MPI_Recv(m.bytes.data(), n, MPI_BYTE, st.MPI_SOURCE, st.MPI_TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE) !=
      MPI_SUCCESS)
    throw Error(fmt::format("MPI sweep: receiving from rank {} failed", st.MPI_SOURCE));
  return m;
}

/// Waits for a message from `source`, sleeping between probes (a blocking
/// MPI_Recv would spin a core in Open MPI's progress loop).
Message wait_for(int source) {
  Backoff backoff;
  for (;;) {
    if (auto m = poll(source)) return std::move(*m);
    backoff.idle();
  }
}

// ---------------------------------------------------------------- evaluation

/// Everything a process needs to evaluate batches of one sweep.
class Evaluator {
 public:
  Evaluator(const SweepSpec& spec, bool memoise, int threads)
      : compiled_(sweep_detail::compile(spec, memoise)), threads_(threads), arena_(threads) {
    // More threads than cores were asked for: lift TBB's default limit (as the one-process runner does).
    if (threads > tbb::info::default_concurrency())
      allow_.emplace(tbb::global_control::max_allowed_parallelism, static_cast<std::size_t>(threads));
    ctx_.stop = stop_.get_token();
  }

  std::uint64_t total() const { return compiled_->total; }
  std::uint64_t memo_hits() const { return compiled_->memo_hits.load(std::memory_order_relaxed); }

  /// Stops running and later batches part-way (any thread).
  void cancel() {
    cancel_ = true;
    stop_.request_stop();
  }

  /// Evaluates a block with the process's threads; a cancel cuts it to a prefix.
  BlockResult run(Block b) {
    BlockResult r;
    r.block = b;
    const auto t0 = Clock::now();
    const std::uint64_t hits0 = memo_hits();
    std::vector<std::optional<PointRecord>> out(static_cast<std::size_t>(b.count));
    arena_.execute([&] {
      tbb::parallel_for(tbb::blocked_range<std::uint64_t>(0, b.count, 1), [&](const auto& range) {
        for (std::uint64_t i = range.begin(); i < range.end(); ++i) {
          if (cancel_.load(std::memory_order_relaxed)) return;
          try {
            out[static_cast<std::size_t>(i)] = sweep_detail::evaluate(*compiled_, b.first + i, ctx_);
          } catch (const Cancelled&) {
            return;
          }
        }
      });
    });
    for (auto& p : out) {
      if (!p) break;   // keep a contiguous prefix
      r.pts.push_back(std::move(*p));
    }
    r.elapsed_s = seconds_since(t0);
    r.memo_hits = memo_hits() - hits0;
    return r;
  }

  int threads() const { return threads_; }

 private:
  std::unique_ptr<sweep_detail::Compiled> compiled_;
  int threads_;
  std::optional<tbb::global_control> allow_;
  tbb::task_arena arena_;
  std::atomic<bool> cancel_{false};
  std::stop_source stop_;
  RunContext ctx_;
};

/// Evaluates blocks on a thread of its own, in the order they were queued.
class BackgroundEvaluator {
 public:
  explicit BackgroundEvaluator(Evaluator& ev) : ev_(ev), thread_([this] { loop(); }) {}
  ~BackgroundEvaluator() {
    {
      std::lock_guard<std::mutex> lock(m_);
      quit_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  void push(Block b) {
    {
      std::lock_guard<std::mutex> lock(m_);
      queue_.push_back(b);
    }
    cv_.notify_all();
  }
  /// Results finished since the last call, in queue order.
  std::vector<BlockResult> take() {
    std::lock_guard<std::mutex> lock(m_);
    std::vector<BlockResult> out;
    std::swap(out, done_);
    if (error_) std::rethrow_exception(std::exchange(error_, nullptr));
    return out;
  }

 private:
  void loop() {
    for (;;) {
      Block b;
      {
        std::unique_lock<std::mutex> lock(m_);
        cv_.wait(lock, [&] { return quit_ || !queue_.empty(); });
        if (quit_) return;
        b = queue_.front();
        queue_.pop_front();
      }
      try {
        BlockResult r = ev_.run(b);
        std::lock_guard<std::mutex> lock(m_);
        done_.push_back(std::move(r));
      } catch (...) {
        std::lock_guard<std::mutex> lock(m_);
        error_ = std::current_exception();
      }
    }
  }

  Evaluator& ev_;
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<Block> queue_;
  std::vector<BlockResult> done_;
  std::exception_ptr error_;
  bool quit_ = false;
  std::thread thread_;
};

/// Test hook (tests/mpi): "RANK:N" makes worker rank RANK kill itself with
/// SIGKILL once it has evaluated N points, before sending them: a rank that
/// dies mid-run, deterministically.
std::optional<std::pair<int, std::uint64_t>> fault_hook() {
  const char* e = std::getenv("SCIN_MPI_TEST_KILL_RANK_AFTER");
  if (!e || !*e) return std::nullopt;
  int rank = 0;
  unsigned long long n = 0;
  if (std::sscanf(e, "%d:%llu", &rank, &n) != 2) return std::nullopt;
  return std::make_pair(rank, static_cast<std::uint64_t>(n));
}

// ---------------------------------------------------------------- rank 0

/// The point ranges still to hand out, in ascending order.
class Cursor {
 public:
  explicit Cursor(std::vector<std::pair<std::uint64_t, std::uint64_t>> todo) : todo_(std::move(todo)) {
    for (auto& [a, b] : todo_) remaining_ += b - a;
    if (!todo_.empty()) next_ = todo_[0].first;
  }
  std::uint64_t remaining() const { return remaining_; }
  /// Up to n points, all within one range.
  Block take(std::uint64_t n) {
    while (range_ < todo_.size() && next_ >= todo_[range_].second)
      if (++range_ < todo_.size()) next_ = todo_[range_].first;
    if (range_ >= todo_.size()) return {};
    Block b{next_, std::min(n, todo_[range_].second - next_)};
    next_ += b.count;
    remaining_ -= b.count;
    return b;
  }

 private:
  std::vector<std::pair<std::uint64_t, std::uint64_t>> todo_;
  std::size_t range_ = 0;
  std::uint64_t next_ = 0;
  std::uint64_t remaining_ = 0;
};

/// What rank 0 knows of one evaluating process (itself or a worker rank).
struct Peer {
  std::deque<Block> held;           // handed out, not returned, in order
  double batch = 2;                 // points in its next batch
};

}  // namespace

// ---------------------------------------------------------------- session

bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE"})
    if (const char* e = std::getenv(v); e && *e) return true;
  return false;
}

MpiSession::MpiSession(bool force) {
  if (!force && !launched_by_mpi()) return;
  int inited = 0;
  MPI_Initialized(&inited);
  if (inited) throw Error("MPI: initialised twice in one process");
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
    throw Error("MPI: MPI_Init_thread failed");
  // Errors come back as codes (and become scin::Error) instead of aborting the job silently.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  active_ = true;
}

MpiSession::~MpiSession() {
  if (!active_) return;
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Finalize();
}

void MpiSession::abort(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  if (active_) MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

void release_sweep_workers(MpiSession& mpi) {
  if (!mpi.active() || mpi.rank() != 0 || mpi.job() != MpiSession::Job::Waiting) return;
  mpi.set_job(MpiSession::Job::Released);
  for (int r = 1; r < mpi.size(); ++r) {
    try {
      send_bytes(r, kJob, std::string());
    } catch (const Error&) {
    }
  }
}

SweepSummary run_sweep_mpi(Store& store, const SweepSpec& spec, const SweepOptions& opts, const SweepSink& sink,
                           MpiSession& mpi) {
  if (!mpi.active() || mpi.size() <= 1) {
    release_sweep_workers(mpi);
    return run_sweep(store, spec, opts, sink);
  }
  if (mpi.rank() != 0) throw Error("MPI sweep: only rank 0 runs the sweep; the other ranks serve it");
  const int nranks = mpi.size();

  // Every rank evaluates the spec with its presets as recorded in the run, so
  // no other rank reads a preset file (its node may not have it).
  json job;
  SweepSummary summary;
  sweep_detail::RunPlan plan;
  std::unique_ptr<Evaluator> local;
  try {
    job = {{"spec", to_json(spec)}, {"config", resolved_config_json(spec)}, {"threads", opts.threads},
           {"memoise", opts.memoise}};
    RunInfo recorded;
    recorded.spec = job["spec"];
    recorded.config = job["config"];
    local = std::make_unique<Evaluator>(sweep_spec_from_run(recorded), opts.memoise,
                                        resolve_threads(opts.threads));
    plan = sweep_detail::begin_or_resume(&store, spec, opts, local->total(), local->threads(), nranks);
  } catch (...) {
    release_sweep_workers(mpi);
    throw;
  }
  summary.run_id = plan.run_id;
  summary.threads = local->threads();
  summary.progress.total = local->total();
  const std::string job_text = job.dump();
  mpi.set_job(MpiSession::Job::Running);
  for (int r = 1; r < nranks; ++r) send_bytes(r, kJob, job_text);

  Cursor cursor(plan.todo);
  std::vector<Peer> peers(static_cast<std::size_t>(nranks));   // [0] = this process
  std::deque<Block> issued;                                    // every held block, in index order
  std::map<std::uint64_t, BlockResult> arrived;                // by block.first
  std::uint64_t remote_memo_hits = 0;
  bool cancelling = false;
  bool cut = false;   // a block came back short (cancelled): nothing after it is committed
  BackgroundEvaluator background(*local);

  auto give = [&](int r) {
    Peer& p = peers[static_cast<std::size_t>(r)];
    while (!cancelling && cursor.remaining() > 0 && static_cast<int>(p.held.size()) < kQueueDepth) {
      // Towards the end, batches shrink so every rank finishes at about the same time.
      const std::uint64_t tail = std::max<std::uint64_t>(1, cursor.remaining() / (2 * static_cast<std::uint64_t>(nranks)));
      const std::uint64_t n = std::min({static_cast<std::uint64_t>(p.batch), tail, kMaxBatch});
      Block b = cursor.take(std::max<std::uint64_t>(1, n));
      if (b.count == 0) break;
      p.held.push_back(b);
      issued.push_back(b);
      if (r == 0) background.push(b);
      else send_bytes(r, kWork, encode_work(b));
    }
  };
  auto accept = [&](int r, BlockResult res) {
    Peer& p = peers[static_cast<std::size_t>(r)];
    auto it = std::find_if(p.held.begin(), p.held.end(), [&](const Block& b) { return b.first == res.block.first; });
    if (it == p.held.end() || it->count != res.block.count || res.pts.size() > res.block.count)
      throw Error(fmt::format("MPI sweep: rank {} returned points {}+{} it was not given", r, res.block.first,
                              res.block.count));
    if (res.pts.size() < res.block.count && !cancelling)
      throw Error(fmt::format("MPI sweep: rank {} stopped part-way through points {}+{}", r, res.block.first,
                              res.block.count));
    for (std::size_t i = 0; i < res.pts.size(); ++i)
      if (res.pts[i].index != res.block.first + i)
        throw Error(fmt::format("MPI sweep: rank {} returned point {} in place of {}", r, res.pts[i].index,
                                res.block.first + i));
    p.held.erase(it);
    if (r != 0) remote_memo_hits += res.memo_hits;
    // Size the next batch for about kTargetBatch_s of work (at most 8x larger or 4x smaller per step).
    if (!res.pts.empty() && res.pts.size() == res.block.count && res.elapsed_s > 0) {
      const double ideal = kTargetBatch_s * static_cast<double>(res.pts.size()) / res.elapsed_s;
      p.batch = std::clamp(ideal, p.batch / 4, p.batch * 8);
      p.batch = std::clamp(p.batch, 1.0, static_cast<double>(kMaxBatch));
    }
    arrived.emplace(res.block.first, std::move(res));
    give(r);
  };

  // --- writing, as the one-process runner does ------------------------------
  SweepProgress& pr = summary.progress;
  sweep_detail::PointWriter writer(&store, summary.run_id, pr, plan.already, opts, sink,
                                   [&] { return local->memo_hits() + remote_memo_hits; });
  // Hands the in-order prefix of the arrived blocks to the writer.
  auto collect = [&] {
    while (!cut && !issued.empty()) {
      auto it = arrived.find(issued.front().first);
      if (it == arrived.end()) break;
      BlockResult& res = it->second;
      cut = res.pts.size() < res.block.count;
      for (auto& p : res.pts) writer.add(std::move(p));
      arrived.erase(it);
      issued.pop_front();
    }
  };
  auto cancel_requested = [&] { return (opts.cancel && opts.cancel->load()) || opts.stop.stop_requested(); };
  auto held_anywhere = [&] {
    return std::any_of(peers.begin(), peers.end(), [](const Peer& p) { return !p.held.empty(); });
  };

  try {
    writer.report(true);
    for (int r = 0; r < nranks; ++r) give(r);
    Backoff backoff;
    for (;;) {
      bool busy = false;
      while (auto m = poll(MPI_ANY_SOURCE)) {
        busy = true;
        if (m->tag == kResult) accept(m->source, decode_result(m->bytes));
        else if (m->tag == kFail) throw Error(fmt::format("MPI sweep: rank {}: {}", m->source, m->bytes));
        else throw Error(fmt::format("MPI sweep: unexpected message (tag {}) from rank {}", m->tag, m->source));
      }
      for (auto& res : background.take()) {
        busy = true;
        accept(0, std::move(res));
      }
      if (cancel_requested()) {
        // Under a launcher a signal means the job is being torn down (mpirun
        // turns Ctrl-C into SIGTERM for every rank, and the SIGKILL may follow
        // at once): keep what is in order, mark the run interrupted, write
        // nothing more. The caller ends the job; `--resume` finishes the run.
        cancelling = true;
        local->cancel();
        collect();
        writer.commit();
        break;
      }
      collect();
      const bool finished = !held_anywhere() && cursor.remaining() == 0;
      writer.step(finished);
      if (finished) break;
      backoff.step(busy);
    }
  } catch (...) {
    local->cancel();   // this rank's own batch stops at once
    try {
      store.finish_run(summary.run_id, RunStatus::Failed);
    } catch (...) {
    }
    throw;   // the caller ends the job (MpiSession::abort): the workers may be mid-batch
  }
  if (!cancelling) {
    for (int r = 1; r < nranks; ++r) send_bytes(r, kWork, encode_work(Block{0, 0}));
    mpi.set_job(MpiSession::Job::Released);   // the workers return: MPI_Finalize is safe
  }
  const bool complete = pr.done == pr.total;
  summary.status = cancelling && !complete ? RunStatus::Interrupted : RunStatus::Done;
  store.finish_run(summary.run_id, summary.status);
  writer.update();
  writer.report(true);
  return summary;
}

// ---------------------------------------------------------------- ranks 1..K-1

bool serve_sweep_mpi(MpiSession& mpi) {
  if (!mpi.active() || mpi.rank() == 0) throw Error("MPI sweep: rank 0 runs the sweep; only ranks 1.. serve it");
  Message first = wait_for(0);
  if (first.tag != kJob) throw Error(fmt::format("MPI sweep: expected the job from rank 0, got tag {}", first.tag));
  if (first.bytes.empty()) return false;

  std::unique_ptr<Evaluator> ev;
  try {
    const json job = json::parse(first.bytes);
    RunInfo recorded;
    recorded.spec = job.at("spec");
    recorded.config = job.at("config");
    ev = std::make_unique<Evaluator>(sweep_spec_from_run(recorded), job.at("memoise").get<bool>(),
                                     resolve_threads(job.at("threads").get<int>()));
  } catch (const std::exception& e) {
    send_bytes(0, kFail, e.what());
    for (;;) {   // rank 0 fails the run and ends the job
      Message m = wait_for(0);
      if (m.tag == kWork && m.bytes.size() == 16) {
        std::size_t pos = 8;
        if (wire::get_u64(m.bytes, pos) == 0) return true;
      }
    }
  }
  const auto hook = fault_hook();
  std::uint64_t evaluated = 0;

  std::deque<Block> queue;
  bool stop = false;
  std::optional<std::thread> computing;
  std::atomic<bool> computed{false};
  BlockResult result;
  Backoff backoff;
  for (;;) {
    bool busy = false;
    while (auto m = poll(0)) {
      busy = true;
      if (m->tag == kWork) {
        std::size_t pos = 0;
        Block b;
        b.first = wire::get_u64(m->bytes, pos);
        b.count = wire::get_u64(m->bytes, pos);
        if (b.count == 0) stop = true;
        else queue.push_back(b);
      } else {
        throw Error(fmt::format("MPI sweep: unexpected message (tag {}) from rank 0", m->tag));
      }
    }
    if (computing && computed.load()) {
      busy = true;
      computing->join();
      computing.reset();
      evaluated += result.pts.size();
      if (hook && hook->first == mpi.rank() && evaluated >= hook->second) ::raise(SIGKILL);
      send_bytes(0, kResult, encode_result(result));
    }
    if (!computing && !queue.empty()) {
      busy = true;
      const Block b = queue.front();
      queue.pop_front();
      computed = false;
      computing.emplace([&, b] {
        try {
          result = ev->run(b);
        } catch (const std::exception& e) {   // evaluate_point does not throw for model errors
          result = BlockResult{b, {}, 0, 0};
          fmt::print(stderr, "scin: rank {}: {}\n", mpi.rank(), e.what());
        }
        computed = true;
      });
    }
    if (stop && !computing && queue.empty()) return true;
    backoff.step(busy);
  }
}

}  // namespace scin
