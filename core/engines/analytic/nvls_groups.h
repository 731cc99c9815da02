// Queues for NVLS by classes of ports (nvls_alike.cc; analytic.h,
// run_analytic_nvls). Internal to the analytic engine.
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <utility>
#include <vector>

#include "schedule/builder.h"
#include "schedule/schedule.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

// Members::shared and own, inlined in the booking loop (nvls_alike.cc).
#if defined(__GNUC__)
#define SCIN_NVLS_GROUPS_INLINE __attribute__((always_inline)) inline
#define SCIN_NVLS_UNROLL4 _Pragma("GCC unroll 4")
#else
#define SCIN_NVLS_GROUPS_INLINE inline
#define SCIN_NVLS_UNROLL4
#endif
// nvls_alike (nvls_alike.cc) compiled twice, chosen once at load time by the
// CPU: with AVX (the same SSE2 and scalar double operations in their VEX
// three-operand forms: fewer register copies; no FMA, so no contraction:
// the same operations, the same bits), and for the x86-64 baseline.
#if defined(__GNUC__) && defined(__x86_64__) && defined(__ELF__) && !defined(__clang__)
#define SCIN_NVLS_CLONES __attribute__((target_clones("avx", "default")))
#else
#define SCIN_NVLS_CLONES
#endif

namespace scin::nvls {

// x / d for any 32-bit x by one multiplication and shift (Lemire, Kaser and
// Kurz 2019, "Faster remainder by direct computation": with c = ceil(2^64 / d),
// floor(c * x / 2^64) = floor(x / d) for x, d < 2^32). d >= 1.
class DivBy {
 public:
  explicit DivBy(std::uint32_t d) : d_(d), c_(d > 1 ? ~std::uint64_t{0} / d + 1 : 0) {}
  std::uint32_t operator()(std::uint32_t x) const {
    __extension__ typedef unsigned __int128 U128;
    return d_ > 1 ? static_cast<std::uint32_t>((static_cast<U128>(c_) * x) >> 64) : x;
  }

 private:
  std::uint32_t d_;
  std::uint64_t c_;
};

// build::split(elems, parts) with align 1, into `out`, without a division
// per piece (the NVLS chunks of each rank's shard).
void split_into(std::uint64_t elems, int parts, std::vector<build::Span>& out);
// The same into out[0, parts) (parts >= 1).
void split_into(std::uint64_t elems, int parts, build::Span* out);
// A shard's chunks depend on its size alone: split_into once per shard size
// (a split has at most two), into rows of `spans` (uc = chunks spans each;
// `row[i]`: shard i's); `sizes` the chunks' sizes, sorted, distinct. False if
// more than 255.
bool chunk_shards(const std::vector<build::Span>& shards, int chunks, std::vector<build::Span>& spans,
                  std::vector<std::uint64_t>& shard_sizes, std::vector<std::size_t>& row, std::vector<std::uint64_t>& sizes);

// One FCFS queue as run_analytic books it: reservations sorted and disjoint,
// touching ones joined into a block whose holder is its last user (the one
// that ends at the block's end), those that ended by the ready front skipped.
struct Queue {
  struct Busy {
    double start, end;
    StepId step;
  };
  std::vector<Busy> v;
  std::size_t head = 0;
  // Skips the blocks that ended by r (compacting now and then).
  void prune(double r) {
    while (head < v.size() && v[head].end <= r) ++head;
    if (head >= 64 && 2 * head >= v.size()) compact();
  }
  // run_analytic's gap search: the earliest start >= t with [start, start + d)
  // free; `holder` becomes the last reservation passed (the one ending at the
  // returned start) if any was, else is left as it is.
  double search(double t, double d, StepId& holder) const;
  // Books [s, e) (free: found by search) with run_analytic's joins.
  void insert(double s, double e, StepId step);
  // search(t, d, holder) then insert(start, start + d, step) with one pass:
  // the search ends where the insert would put the new block (checked, else
  // insert's own search). Returns the start.
  // At once where one block of positive length is left from the head on, it
  // ends after t and starts before t + d (see Slots::book).
  double book(double t, double d, StepId step, StepId& holder) {
    if (v.size() - head == 1) {
      Busy& b = v.back();
      if (b.end > t && b.start < t + d && b.start < b.end) {
        holder = b.step;
        const double start = b.end;
        b.end = start + d;
        b.step = step;
        return start;
      }
    }
    return book_search(t, d, step, holder);
  }

 private:
  void compact();
  double book_search(double t, double d, StepId step, StepId& holder);
  void insert_at(std::vector<Busy>::iterator it, double s, double e, StepId step);
};

// The busy time of one queue without holders: maximal disjoint intervals
// (touching reservations joined, as run_analytic joins them), sorted.
struct Slots {
  std::vector<std::pair<double, double>> v;
  std::size_t head = 0;
  void prune(double r) {
    while (head < v.size() && v[head].second <= r) ++head;
    if (head >= 64 && 2 * head >= v.size()) compact();
  }
  double search(double t, double d) const;
  void insert(double s, double e);
  // search(t, d) then insert(start, start + d) with one pass (as Queue::book).
  // At once where one block [s, e) of positive length is left from the head
  // on, it ends after t and starts before t + d (NVLS at 8 GPUs: every
  // booking): the search's binary search stops at it, its walk passes it
  // (start = max(t, e) = e) and stops at the end; the insert goes there
  // (s < e = start) and joins it (its end is the start): [s, e + d).
  double book(double t, double d) {
    if (v.size() - head == 1) {
      std::pair<double, double>& b = v.back();
      if (b.second > t && b.first < t + d && b.first < b.second) {
        const double start = b.second;
        b.second = start + d;
        return start;
      }
    }
    return book_search(t, d);
  }
  // The same busy time from `r` on (what every search from r on sees).
  bool same_from(const Slots& o, double r) const;
  std::uint64_t hash_from(double r) const;

 private:
  void compact();
  double book_search(double t, double d);
  void insert_at(std::vector<std::pair<double, double>>::iterator it, double s, double e);
};

// The members 0..n-1 of a class of ports (the accelerators' egress ports of
// one plane, or their ingress ports), in groups whose queues are the same
// from the ready front on: a use by every member (a shared use) is booked
// once per group, a member's own use splits it from its group, and groups
// whose queues have become the same again (the same busy time from the front
// on; reservations that ended by the front are never queued behind again)
// are merged. Every member's queue is, from the front on, its group's, so a
// search in it finds what the search in that member's own queue finds: the
// times are the per-member booking's, to the last bit. Holders are not kept
// (the critical path replays the members it needs, nvls_alike.cc).
class Members {
 public:
  explicit Members(int n = 0, bool merge = true, bool alone = false);
  // As Members(n, merge, alone), keeping the storage (a thread's runs reuse one).
  // Without `merge`, groups are not looked over for equal queues before each
  // shared use (only a member's own use still joins it to a group whose queue
  // it now has): the same times, and at a few members cheaper.
  // With `alone`, there are no groups: every member keeps its own queue and a
  // shared use is booked once per member, in member order (the engine's own
  // booking): the same times again, and at very few members cheaper still (no
  // member leaves and joins a group on every own use).
  void reset(int n, bool merge = true, bool alone = false);
  // Every member books [t, t + d) at its earliest free start >= t (t >= r,
  // the ready front, which never decreases). Returns the latest end and the
  // first member with that end.
  // With `alone`, each member's use is recorded as the engine's queue would
  // keep it (nvls_alike.cc's critical path reads it instead of booking the
  // member again): starts[m] its start, holds[m] the reservation it queued
  // behind (Queue::book's holder: the last user of the block ending at its
  // start; kNoStep if it queued behind none), `step` the use's step (the
  // holder of later uses). Null arrays: not recorded (tests).
  SCIN_NVLS_GROUPS_INLINE std::pair<double, int> shared(double r, double t, double d, StepId step = kNoStep,
                                                         double* starts = nullptr, StepId* holds = nullptr) {
    if (alone_ && !starts) starts = scratch_s_.data(), holds = scratch_h_.data();
#if defined(__SSE2__)
    // (8 members, every shared use at 8 GPUs: shared8, in the caller's loop)
    if (alone_ && queued_ == 0 && n_ == 8) {
      std::pair<double, int> out;
      if (shared8(r, t, d, step, starts, holds, out)) return out;
      return shared_slow(r, t, d, step, starts, holds);
    }
#endif
    return shared_any(r, t, d, step, starts, holds);
  }
  // shared() at any count of members.
  std::pair<double, int> shared_any(double r, double t, double d, StepId step, double* starts, StepId* holds) {
    // Members alone whose queues are each one block that takes Slots::book's
    // shortcut (book_alone's first case; every shared use at 8 GPUs) or are
    // empty from r on (no block, or its block ended by r: book_alone's second
    // case, [t, t + d), no holder): each is booked here, inline in the
    // caller's loop, with the same start, end and holder as book_alone; any
    // other case goes through shared_slow, before any member is booked.
    // (The blocks as arrays by member: every member checked, then booked,
    // without a branch, two at once with SSE2.)
    if (alone_ && queued_ == 0) {
      double* const bs = bs_.data();
      double* const be = be_.data();
      StepId* const bstep = bstep_.data();
      const double td = t + d;
      const int n = n_;
      int m = 0;
      bool ok = n > 0;
#if defined(__SSE2__)
      // (two members at once: SSE2, the x86-64 baseline; the same
      // comparisons, sums and max as the scalar loops below)
      const __m128d vr = _mm_set1_pd(r), vt = _mm_set1_pd(t), vtd = _mm_set1_pd(td), vd = _mm_set1_pd(d);
      __m128d bad = _mm_setzero_pd();
      for (; m + 1 < n; m += 2) {
        const __m128d s2 = _mm_loadu_pd(bs + m), e2 = _mm_loadu_pd(be + m);
        const __m128d cut = _mm_and_pd(_mm_and_pd(_mm_cmpgt_pd(e2, vt), _mm_cmplt_pd(s2, vtd)), _mm_cmplt_pd(s2, e2));
        bad = _mm_or_pd(bad, _mm_andnot_pd(cut, _mm_cmpgt_pd(e2, vr)));  // live, not the shortcut
      }
      ok = ok && _mm_movemask_pd(bad) == 0;
#endif
      for (; ok && m < n; ++m) {  // each member empty from r on, or taking the shortcut
        const double s1 = bs[m], e1 = be[m];
        const bool ended = !(e1 > r);
        ok = ended | ((e1 > t) & (s1 < td) & (s1 < e1));
      }
      if (ok) {
        // (each member's start: its block's end, its holder the block's last
        // user; or an empty queue's t, no holder)
        m = 0;
        double best = 0;
#if defined(__SSE2__)
        __m128d best2 = _mm_setzero_pd();
        static_assert(kNoStep == 0xffffffffu && sizeof(StepId) == 4);
        const __m128i ones = _mm_set1_epi32(-1), vstep = _mm_set1_epi32(static_cast<int>(step));
        for (; m + 1 < n; m += 2) {
          const __m128d s2 = _mm_loadu_pd(bs + m), e2 = _mm_loadu_pd(be + m);
          const __m128d live = _mm_cmpgt_pd(e2, vr);
          const __m128d st = _mm_or_pd(_mm_and_pd(live, e2), _mm_andnot_pd(live, vt));
          const __m128d ns = _mm_or_pd(_mm_and_pd(live, s2), _mm_andnot_pd(live, vt));
          const __m128d ne = _mm_add_pd(st, vd);
          _mm_storeu_pd(bs + m, ns);
          _mm_storeu_pd(be + m, ne);
          _mm_storeu_pd(starts + m, st);
          // (holders: the last user where live, else kNoStep, all ones;
          // the two lanes' masks as two 32-bit words)
          const __m128i live32 = _mm_shuffle_epi32(_mm_castpd_si128(live), _MM_SHUFFLE(3, 3, 2, 0));
          const __m128i last = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(bstep + m));
          _mm_storel_epi64(reinterpret_cast<__m128i*>(holds + m), _mm_or_si128(last, _mm_xor_si128(live32, ones)));
          _mm_storel_epi64(reinterpret_cast<__m128i*>(bstep + m), vstep);
          best2 = m == 0 ? ne : _mm_max_pd(ne, best2);
        }
        if (m > 0) best = std::max(_mm_cvtsd_f64(best2), _mm_cvtsd_f64(_mm_unpackhi_pd(best2, best2)));
#endif
        for (; m < n; ++m) {
          const double e1 = be[m];
          const bool fresh = !(e1 > r);
          const double st = fresh ? t : e1;
          bs[m] = fresh ? t : bs[m];
          holds[m] = fresh ? kNoStep : bstep[m];
          starts[m] = st;
          bstep[m] = step;
          be[m] = st + d;
          best = m == 0 || be[m] > best ? be[m] : best;
        }
        // The latest end, its first member.
        int who = 0;
        while (!(be[who] == best)) ++who;
        in_place_ += static_cast<std::size_t>(n);
        ++in_line_;
        return {best, who};
      }
    }
    return shared_slow(r, t, d, step, starts, holds);
  }
  // Member m alone books [t, t + d); returns its end. With `alone`, *start
  // and *hold as shared()'s (if not null).
  SCIN_NVLS_GROUPS_INLINE double own(double r, int m, double t, double d, StepId step = kNoStep,
                                     double* start = nullptr, StepId* hold = nullptr) {
    if (alone_) {  // (inline: book_alone's shortcut in the caller's loop)
      StepId h = kNoStep;
      const double st = book_alone(m, r, t, d, step, h);
      if (start) *start = st, *hold = h;
      return st + d;
    }
    return own_groups(r, m, t, d);
  }
  // With `alone` (nvls_alike.cc's periodic jump): appends, member by member,
  // the busy time from r on relative to r: the count of blocks ending after r,
  // then each one's max(start, r) - r, end - r and last user - id_shift (what
  // every search from r on sees, and the holder it records; on the cost grid,
  // the differences are exact). False without `alone`.
  bool busy_from(double r, double id_shift, std::vector<double>& out) const;
  // Adds dt to every block's start and end and did to its last user
  // (`alone`): the queues translated in time and steps (exact on the cost grid).
  void translate(double dt, StepId did);
  std::size_t groups() const { return alone_ ? per_.size() : live_.size(); }
  std::size_t most_groups() const { return alone_ ? per_.size() : most_; }
  // With `alone`: how many bookings found a member's queue of at most one
  // block and booked it in place (the arrays), and how many used its Slots (tests).
  std::size_t in_place() const { return in_place_; }
  std::size_t in_slots() const { return in_slots_; }
  // With `alone`: how many shared uses were booked by shared()'s inline
  // case (every member one block taking the shortcut; tests).
  std::size_t shared_in_line() const { return in_line_; }

 private:
  // With alone_, member m's queue from the front on is kept in arrays by
  // member (bs_, be_, bstep_: one or two cache lines each at 8 members) while
  // it has at most one block: [bs_[m], be_[m]) and its last user bstep_[m]
  // (none, or ended: be_[m] <= r, -inf where it never had one); else
  // (in_queue_[m]) its blocks are in per_[m] from its head on. A Slots of at
  // most one block from its head on behaves as that block: prune drops it if
  // it ends by r; book finds it or nothing. Both cases are booked here as
  // Slots books them (an empty queue takes [t, t + d); one block takes
  // Slots::book's shortcut); any other moves the block into per_[m], booked
  // there by Slots itself, and back here once it is one block or none again.
  std::vector<double> bs_, be_;
  std::vector<StepId> bstep_;
  std::vector<std::uint8_t> in_queue_;
  int queued_ = 0;  // members in per_
  std::size_t in_place_ = 0, in_slots_ = 0, in_line_ = 0;
  // prune(r), then book(t, d) by `step` on member m's queue (alone_): the
  // start; `holder` as Queue::book sets it (left as it is if none).
  SCIN_NVLS_GROUPS_INLINE double book_alone(int m, double r, double t, double d, StepId step, StepId& holder) {
    const auto um = static_cast<std::size_t>(m);
    if (in_queue_[um]) return book_slots(m, r, t, d, step, holder);
    double& s = bs_[um];
    double& e = be_[um];
    ++in_place_;
    if (e > r) {
      if (e > t && s < t + d && s < e) {  // Slots::book's shortcut
        const double start = e;
        e = start + d;
        holder = bstep_[um];
        bstep_[um] = step;
        return start;
      }
      --in_place_;
      return book_slots(m, r, t, d, step, holder);
    }
    // an empty queue: [t, t + d), no join
    s = t;
    e = t + d;
    bstep_[um] = step;
    return t;
  }
  double book_slots(int m, double r, double t, double d, StepId step, StepId& holder);
#if defined(__SSE2__)
  // shared()'s inline case at 8 members in one pass: the four pairs' blocks
  // loaded once and kept in registers, checked (false: some member takes
  // neither case, nothing booked), then booked; the holders four at once;
  // the latest end's first member by one compare per pair. The same
  // comparisons, sums and max as shared_any's loops: the same bits.
  SCIN_NVLS_GROUPS_INLINE bool shared8(double r, double t, double d, StepId step, double* starts, StepId* holds,
                                       std::pair<double, int>& out) {
    double* const bs = bs_.data();
    double* const be = be_.data();
    StepId* const bstep = bstep_.data();
    const __m128d vr = _mm_set1_pd(r), vt = _mm_set1_pd(t), vtd = _mm_set1_pd(t + d), vd = _mm_set1_pd(d);
    __m128d s[4], e[4], live[4], ne[4];
    __m128d bad = _mm_setzero_pd();
    SCIN_NVLS_UNROLL4 for (int k = 0; k < 4; ++k) {
      s[k] = _mm_loadu_pd(bs + 2 * k);
      e[k] = _mm_loadu_pd(be + 2 * k);
      live[k] = _mm_cmpgt_pd(e[k], vr);
      const __m128d cut =
          _mm_and_pd(_mm_and_pd(_mm_cmpgt_pd(e[k], vt), _mm_cmplt_pd(s[k], vtd)), _mm_cmplt_pd(s[k], e[k]));
      bad = _mm_or_pd(bad, _mm_andnot_pd(cut, live[k]));  // live, not the shortcut
    }
    if (_mm_movemask_pd(bad) != 0) return false;
    SCIN_NVLS_UNROLL4 for (int k = 0; k < 4; ++k) {
      const __m128d st = _mm_or_pd(_mm_and_pd(live[k], e[k]), _mm_andnot_pd(live[k], vt));
      const __m128d ns = _mm_or_pd(_mm_and_pd(live[k], s[k]), _mm_andnot_pd(live[k], vt));
      ne[k] = _mm_add_pd(st, vd);
      _mm_storeu_pd(bs + 2 * k, ns);
      _mm_storeu_pd(be + 2 * k, ne[k]);
      _mm_storeu_pd(starts + 2 * k, st);
    }
    // (holders: the last user where live, else kNoStep, all ones; four
    // members' masks as four 32-bit words)
    static_assert(kNoStep == 0xffffffffu && sizeof(StepId) == 4);
    const __m128i ones = _mm_set1_epi32(-1), vstep = _mm_set1_epi32(static_cast<int>(step));
    SCIN_NVLS_UNROLL4 for (int k = 0; k < 4; k += 2) {
      const __m128i live32 = _mm_castps_si128(
          _mm_shuffle_ps(_mm_castpd_ps(live[k]), _mm_castpd_ps(live[k + 1]), _MM_SHUFFLE(2, 0, 2, 0)));
      const __m128i last = _mm_loadu_si128(reinterpret_cast<const __m128i*>(bstep + 2 * k));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(holds + 2 * k), _mm_or_si128(last, _mm_xor_si128(live32, ones)));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(bstep + 2 * k), vstep);
    }
    // The latest end (no NaN, no -0: any order of max is the same), its first member.
    __m128d m2 = _mm_max_pd(_mm_max_pd(ne[0], ne[1]), _mm_max_pd(ne[2], ne[3]));
    m2 = _mm_max_pd(m2, _mm_unpackhi_pd(m2, m2));
    const __m128d vb = _mm_unpacklo_pd(m2, m2);
    const unsigned eq = static_cast<unsigned>(_mm_movemask_pd(_mm_cmpeq_pd(ne[0], vb))) |
                        static_cast<unsigned>(_mm_movemask_pd(_mm_cmpeq_pd(ne[1], vb))) << 2 |
                        static_cast<unsigned>(_mm_movemask_pd(_mm_cmpeq_pd(ne[2], vb))) << 4 |
                        static_cast<unsigned>(_mm_movemask_pd(_mm_cmpeq_pd(ne[3], vb))) << 6;
    out = {_mm_cvtsd_f64(m2), std::countr_zero(eq)};
    in_place_ += 8;
    ++in_line_;
    return true;
  }
#endif
  std::pair<double, int> shared_slow(double r, double t, double d, StepId step, double* starts, StepId* holds);
  std::vector<double> scratch_s_;
  std::vector<StepId> scratch_h_;
  double own_groups(double r, int m, double t, double d);

  struct Group {
    Slots q;
    int count = 0;
    int first = 0;  // its first member
  };
  int n_ = 0, words_ = 0, used_ = 0;
  bool merge_ = true, alone_ = false;
  std::vector<Queue> per_;  // with alone_: member m's queue (with its blocks' last users)
  std::vector<Group> g_;  // by id
  std::vector<std::uint64_t> bits_;  // group id's members: words_ words from id * words_
  std::uint64_t* bits(int id) { return bits_.data() + static_cast<std::size_t>(id) * static_cast<std::size_t>(words_); }
  const std::uint64_t* bits(int id) const {
    return bits_.data() + static_cast<std::size_t>(id) * static_cast<std::size_t>(words_);
  }
  std::vector<int> live_, free_, of_;
  std::vector<std::pair<std::uint64_t, int>> keys_;
  std::size_t most_ = 1;
  int first_of(int id) const;
  int take();
  void merge(int from, int into);
  void merge_equal(double r);
};

}  // namespace scin::nvls
