// The critical path of NVLS by classes of ports through the periods the jump
// copied (nvls_jump.h, nvls_alike.cc). Internal to the analytic engine.
//
// The jump writes m periods of p chunks as translates of a reference period
// (every start, finish, use and holder + j P, ids + 2 p j). The critical
// path's walk and its member replays then repeat the same way:
//  - A member's replay (its queue booked again alone, in the order taken)
//    is compared at the reference period's two ends (its queue from the
//    first use's ready time on, a block's start taken from there, the ids of
//    its holders): if the one is the other translated by (P, 2p ids), every
//    use of the copies is the translate of the reference period's (the same
//    uses at translated ready times on a translated queue), so the replay
//    skips the copies (its queue translated by m periods) and a copy's use is
//    read off the reference's.
//  - The walk goes back in time from state to state (step, the class it
//    follows, the member). Where its state is the translate by -2p ids of
//    one it was in before, and every record it read between the two is a
//    translate (each chunk read, and the chunks p, 2p, ... before it down to
//    where the copies' translates begin, in [lo, hi); each member use from a
//    replay that skipped; a load's wait for the store 2 chunks before
//    decided by that store in every translate), the walk from here on is
//    that stretch translated, period after period: its path entries - 2p ids
//    each, its breakdown terms the same values (grid values: their sums are
//    exact in any order, the stretch's added K times is K x the stretch).
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <iterator>
#include <vector>

#include "engines/analytic/nvls_groups.h"
#include "engines/analytic/nvls_jump.h"
#include "engines/analytic/nvls_work.h"
#include "model/result.h"

namespace scin::nvls {

// A member use as booked (members alone, nvls_alike.cc: the start and holder
// Members::shared and own recorded at `at`, du its duration): its start, end
// and holder, as a replay gives them; where it is a copy's, jb periods after
// the record booked, the translate (+ jb P, the holder + 2 p jb ids), as a
// replay that skipped the copies gives it.
inline Rec recorded_use(const double* mstart, const StepId* mhold, std::size_t at, double du, int jb, const Period& per) {
  const double s0 = mstart[at];
  const Rec rec{s0, s0 + du, mhold[at]};
  if (jb == 0) return rec;
  const double dt = static_cast<double>(jb) * per.P;
  const auto did = static_cast<StepId>(2 * per.p * jb);
  return {rec.start + dt, rec.end + dt, rec.holder == kNoStep ? kNoStep : rec.holder + did};
}

// The members' replays (one per class and member the walk visits).
class Replays {
 public:
  struct In {
    int n;
    const std::vector<Taken>& taken;
    const std::vector<std::uint32_t>& taken_at;
    const std::vector<double>& start;
    const std::vector<Rep>& loads;
    const std::vector<Rep>& stores;
    const std::vector<std::uint8_t>& size_of;
    std::size_t pairs;
    StepId first_chunk;
    Jump& jump;  // (the copies' records: back(), materialise())
    bool skip;   // false: never skip the copies (tests: the fallback)
  };
  Replays(Work& w, In in) : w_(w), in_(in), per_(in.jump.period()) { w_.live_replays = 0; }
  // Replays skipping the copies (0: none).
  int skipped() const { return skipped_; }

  // Member m's use of class cls (1 E, 2 I) by the load or store x: its start,
  // end and holder. `periodic`: whether it is a translate (its replay
  // skipped the copies), as the walk's repeat needs.
  Rec use(int cls, int m, std::size_t x, bool& periodic) {
    Replay& rp = replay(cls * in_.n + m, cls, m);
    const Period& per = per_;
    const std::size_t L = per.to - per.from;
    // Its place in the order taken (a copy's: the reference's + j periods).
    const int jb = in_.jump.back(in_.first_chunk + static_cast<StepId>(x));
    const std::size_t e = jb == 0 ? in_.taken_at[x]
                                  : in_.taken_at[x - 2 * static_cast<std::size_t>(per.p * jb)] + static_cast<std::size_t>(jb) * L;
    periodic = false;
    if (per.on && e >= per.to && e < per.to + static_cast<std::size_t>(per.m) * L) {
      advance(rp, per.to);
      if (rp.jump == 0) settle(rp);
      if (rp.jump == 1) {
        const std::size_t j = (e - per.to) / L + 1;
        const std::size_t xr = x - 2 * static_cast<std::size_t>(per.p) * j;
        const Rec& r = rp.recs[xr];
        const double dt = static_cast<double>(j) * per.P;
        periodic = true;
        return {r.start + dt, r.end + dt, r.holder == kNoStep ? kNoStep : r.holder + static_cast<StepId>(2 * per.p * j)};
      }
    }
    advance(rp, e + 1);
    periodic = rp.jump == 1;
    return rp.recs[x];
  }

 private:
  Work& w_;
  In in_;
  const Period& per_;
  int skipped_ = 0;

  Replay& replay(int key, int cls, int m) {
    for (std::size_t j = 0; j < w_.live_replays; ++j)
      if (w_.replays[j].key == key) return w_.replays[j];
    if (w_.live_replays == w_.replays.size()) w_.replays.emplace_back();
    Replay& rp = w_.replays[w_.live_replays++];
    rp.key = key;
    rp.cls = cls;
    rp.member = m;
    rp.upto = 0;
    rp.jump = 0;
    rp.q.v.clear();
    rp.q.head = 0;
    rp.recs.resize(2 * in_.pairs);
    return rp;
  }

  // The ready time the reference period's uses start from.
  double r_from() const { return in_.start[in_.taken[per_.from].id]; }

  void advance(Replay& rp, std::size_t need) {
    const Period& per = per_;
    while (rp.upto < need) {
      if (per.on && rp.jump == 0) {
        if (rp.upto == per.from) {
          save(rp);
        } else if (rp.upto == per.to) {
          settle(rp);
          continue;
        }
      }
      book(rp, rp.upto++);
    }
  }

  // One use in the order taken (nvls_alike.cc's booking, a member alone).
  void book(Replay& rp, std::size_t e) {
    const Taken& tk = in_.taken[e];
    const bool mine = static_cast<int>(tk.rank) == rp.member;
    if (!mine && tk.load == (rp.cls == 2)) return;  // another member's store on E, ld_reduce on I
    const Rep& p = tk.load ? in_.loads[in_.size_of[tk.k]] : in_.stores[in_.size_of[tk.k]];
    const double amount = rp.cls == 1 ? p.e_amount : p.i_amount;
    if (!(amount > 0)) return;
    const double r = in_.start[tk.id];
    const double t0 = r + p.c.fixed_ns, du = rp.cls == 1 ? p.e_d : p.i_d;
    rp.q.prune(r);
    StepId h = kNoStep;
    const double st = rp.q.book(t0, du, tk.id, h);
    rp.recs[2 * tk.k + (tk.load ? 0 : 1)] = {st, st + du, h};
  }

  // The queue at the reference period's start: from its first use's ready
  // time r on (every later use is ready at or after r: a block's start before
  // r decides nothing), starts clamped to r.
  void save(Replay& rp) {
    const double r = r_from();
    rp.q.prune(r);
    rp.at_from.assign(rp.q.v.begin() + static_cast<std::ptrdiff_t>(rp.q.head), rp.q.v.end());
    for (Queue::Busy& b : rp.at_from) b.start = std::max(b.start, r);
  }

  // At the reference period's end: skip the copies if the queue is the one
  // at its start translated (rp.jump = 1), else book them (2).
  void settle(Replay& rp) {
    const Period& per = per_;
    const double r = r_from() + per.P;
    rp.q.prune(r);
    const auto dp = static_cast<StepId>(2 * per.p);
    bool same = in_.skip && rp.q.v.size() - rp.q.head == rp.at_from.size();
    for (std::size_t a = 0; same && a < rp.at_from.size(); ++a) {
      const Queue::Busy& b = rp.q.v[rp.q.head + a];
      const Queue::Busy& f = rp.at_from[a];
      same = std::max(b.start, r) == f.start + per.P && b.end == f.end + per.P && b.step == f.step + dp;
    }
    rp.jump = same ? 1 : 2;
    if (!same) {  // the copies booked: their uses as taken
      in_.jump.materialise();
      return;
    }
    const double dt = static_cast<double>(per.m) * per.P;
    const auto did = static_cast<StepId>(2 * per.p * per.m);
    for (std::size_t a = rp.q.head; a < rp.q.v.size(); ++a) {
      Queue::Busy& b = rp.q.v[a];
      b.start = std::max(b.start, r) + dt;
      b.end += dt;
      b.step += did;
    }
    rp.upto = per.to + static_cast<std::size_t>(per.m) * (per.to - per.from);
    ++skipped_;
  }
};

// The critical path as walked (its last step first), in the thread's
// storage (Work::path): grown, never shrunk nor zero-filled per run.
struct Path {
  std::vector<StepId>& buf;
  std::size_t n = 0;
  bool empty() const { return n == 0; }
  std::size_t size() const { return n; }
  StepId back() const { return buf[n - 1]; }
  // k more entries at the end (to be written): their first.
  StepId* grow(std::size_t k) {
    if (n + k > buf.size()) buf.resize(std::max(n + k, 2 * buf.size()));
    StepId* const at = buf.data() + n;
    n += k;
    return at;
  }
  SCIN_NVLS_GROUPS_INLINE void push_back(StepId s) {
    if (n < buf.size()) [[likely]]
      buf[n++] = s;
    else
      *grow(1) = s;
  }
  // The path first step first (one allocation).
  void out(std::vector<StepId>& v) const {
    v.assign(std::make_reverse_iterator(buf.begin() + static_cast<std::ptrdiff_t>(n)), std::make_reverse_iterator(buf.begin()));
  }
};

// The walk's states, for its repeat (above).
class WalkRepeat {
 public:
  struct Entry {
    StepId cur;
    int cls, member;
    std::size_t path_n;  // the path's length at this state
    bool pushed;          // whether this state added its step to the path
    bool ok;              // every record read from here to the next state a translate
    int lo, hi;           // the chunks read (lowest, highest)
    double margin;        // a load's store 2 chunks before: its finish - the first barrier's wait's
    std::array<double, kTermCount> bd;
    std::uint32_t prev = 0;  // 1 + the entry before it in its step's bucket (0: none)
  };

  WalkRepeat(const Period& per, std::vector<Entry>& log) : per_(per), log_(log) { log_.clear(); }
  bool on() const { return per_.on && !done_; }
  // Periods the walk repeated (0: none).
  int repeated() const { return repeated_; }

  // A state at the loop's head (chunk c of a load or store, or -1).
  void enter(StepId cur, int cls, int member, int c, std::size_t path_n, bool pushed, const Breakdown& bd) {
    if (log_.size() >= kMaxLog) {  // (no repeat found: the log's memory bounded, the walk goes on)
      done_ = true;
      return;
    }
    Entry en{cur, cls, member, path_n, pushed, c >= 0, c, c, 1e300, {}};
    for (int t = 0; t < kTermCount; ++t) en.bd[static_cast<std::size_t>(t)] = bd.ns[t];
    std::uint32_t& head = bucket_[cur % kBuckets];
    en.prev = head;
    head = static_cast<std::uint32_t>(log_.size() + 1);
    log_.push_back(en);
  }
  // What the current state read.
  void read_chunk(int c) {
    Entry& en = log_.back();
    en.lo = std::min(en.lo, c);
    en.hi = std::max(en.hi, c);
  }
  void not_periodic() { log_.back().ok = false; }
  void margin(double m) { log_.back().margin = std::min(log_.back().margin, m); }

  // At a new state (entered last): if an earlier one is its translate by 2p
  // ids, the stretch between is repeated as far as it translates: the path
  // and breakdown extended, the state moved back (cur). True if it did.
  bool repeat(StepId& cur, Path& path, Breakdown& bd) {
    if (done_ || log_.empty()) return false;
    const std::size_t b = log_.size() - 1;
    const Entry& now = log_[b];
    if (!now.ok) return false;
    const auto dp = static_cast<StepId>(2 * per_.p);
    // The latest entry a < b, at most kLook back, in now's state moved 2p
    // ids on: along the bucket of its step (the entries there, latest first).
    const StepId want = now.cur + dp;
    std::size_t a = b;
    bool found = false;
    for (std::uint32_t i = bucket_[want % kBuckets]; !found && i != 0; i = log_[i - 1].prev) {
      if (i - 1 >= b) continue;  // (now itself)
      if (b - (i - 1) > kLook) break;
      a = i - 1;
      const Entry& e = log_[a];
      found = e.cur == want && e.cls == now.cls && e.member == now.member && e.pushed == now.pushed;
    }
    if (!found) return false;
    const Entry& was = log_[a];
    // K: translates by 1..K periods read records in [lo, hi) only.
    long K = static_cast<long>(per_.m) + 1;
    for (std::size_t i = a; i < b; ++i) {
      const Entry& e = log_[i];
      if (!e.ok || e.hi >= per_.hi || e.lo < per_.lo) return false;
      K = std::min(K, static_cast<long>((e.lo - per_.lo) / per_.p) + 1);
      if (e.margin < 1e300) {
        long k = static_cast<long>(e.margin / per_.P);
        while (k > 0 && !(e.margin - static_cast<double>(k) * per_.P > 0)) --k;
        while (e.margin - static_cast<double>(k + 1) * per_.P > 0) ++k;
        K = std::min(K, k);
      }
    }
    if (K < 1) return false;
    const std::size_t p0 = was.path_n, p1 = now.path_n;
    std::array<double, kTermCount> d{};
    for (int t = 0; t < kTermCount; ++t)
      d[static_cast<std::size_t>(t)] = bd.ns[t] - was.bd[static_cast<std::size_t>(t)];
    const std::size_t len = p1 - p0;
    StepId* out = path.grow(static_cast<std::size_t>(K) * len);
    const StepId* from = path.buf.data() + p0;
    for (long k = 1; k <= K; ++k, out += len) {
      const auto did = static_cast<StepId>(2 * per_.p * k);
      for (std::size_t i = 0; i < len; ++i) out[i] = from[i] - did;
    }
    for (int t = 0; t < kTermCount; ++t) bd.ns[t] += static_cast<double>(K) * d[static_cast<std::size_t>(t)];
    cur = now.cur - static_cast<StepId>(2 * per_.p * K);
    repeated_ = static_cast<int>(K);
    done_ = true;
    return true;
  }

 private:
  static constexpr std::size_t kLook = 1024, kMaxLog = 16384;
  static constexpr StepId kBuckets = 256;
  std::array<std::uint32_t, kBuckets> bucket_{};  // per bucket of steps: 1 + its latest entry (0: none)
  const Period& per_;
  std::vector<Entry>& log_;
  bool done_ = false;
  int repeated_ = 0;
};

}  // namespace scin::nvls
