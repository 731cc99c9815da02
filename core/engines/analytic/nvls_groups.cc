#include "engines/analytic/nvls_groups.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <limits>

namespace scin::nvls {

void Queue::compact() {
  v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(head));
  head = 0;
}

double Queue::search(double t, double d, StepId& holder) const {
  auto it = std::partition_point(v.begin() + static_cast<std::ptrdiff_t>(head), v.end(),
                                 [t](const Busy& b) { return b.end <= t; });
  double start = t;
  for (; it != v.end() && it->start < start + d; ++it) {
    start = std::max(start, it->end);
    holder = it->step;
  }
  return start;
}

void Queue::insert(double s, double e, StepId step) {
  const auto head_it = v.begin() + static_cast<std::ptrdiff_t>(head);
  insert_at(std::partition_point(head_it, v.end(), [s](const Busy& b) { return b.start < s; }), s, e, step);
}

void Queue::insert_at(std::vector<Busy>::iterator it, double s, double e, StepId step) {
  const auto head_it = v.begin() + static_cast<std::ptrdiff_t>(head);
  const bool join_prev = it != head_it && (it - 1)->end == s;
  const bool join_next = it != v.end() && it->start == e;
  if (join_prev && join_next) {
    (it - 1)->end = it->end;
    (it - 1)->step = it->step;
    v.erase(it);
  } else if (join_prev) {
    (it - 1)->end = e;
    (it - 1)->step = step;
  } else if (join_next) {
    it->start = s;
  } else {
    v.insert(it, Busy{s, e, step});
  }
}

// search()'s loop stops at the first block it does not pass; insert() puts
// [start, start + d) before the first block with start >= the new start (the
// blocks are sorted by start). Where the stop is that place (the block before
// it starts earlier, the block at it not), the insert goes there at once;
// otherwise (only with blocks of no length) insert() searches as before.
double Queue::book_search(double t, double d, StepId step, StepId& holder) {
  const auto head_it = v.begin() + static_cast<std::ptrdiff_t>(head);
  auto it = std::partition_point(head_it, v.end(), [t](const Busy& b) { return b.end <= t; });
  double start = t;
  for (; it != v.end() && it->start < start + d; ++it) {
    start = std::max(start, it->end);
    holder = it->step;
  }
  const double e = start + d;
  if ((it == head_it || (it - 1)->start < start) && (it == v.end() || it->start >= start))
    insert_at(it, start, e, step);
  else
    insert(start, e, step);
  return start;
}

void Slots::compact() {
  v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(head));
  head = 0;
}

// Queue::search's steps, on the same busy time: the same start.
double Slots::search(double t, double d) const {
  auto it = std::partition_point(v.begin() + static_cast<std::ptrdiff_t>(head), v.end(),
                                 [t](const std::pair<double, double>& b) { return b.second <= t; });
  double start = t;
  for (; it != v.end() && it->first < start + d; ++it) start = std::max(start, it->second);
  return start;
}

void Slots::insert(double s, double e) {
  const auto head_it = v.begin() + static_cast<std::ptrdiff_t>(head);
  insert_at(std::partition_point(head_it, v.end(), [s](const std::pair<double, double>& b) { return b.first < s; }), s,
            e);
}

void Slots::insert_at(std::vector<std::pair<double, double>>::iterator it, double s, double e) {
  const auto head_it = v.begin() + static_cast<std::ptrdiff_t>(head);
  const bool join_prev = it != head_it && (it - 1)->second == s;
  const bool join_next = it != v.end() && it->first == e;
  if (join_prev && join_next) {
    (it - 1)->second = it->second;
    v.erase(it);
  } else if (join_prev) {
    (it - 1)->second = e;
  } else if (join_next) {
    it->first = s;
  } else {
    v.insert(it, {s, e});
  }
}

// As Queue::book_search.
double Slots::book_search(double t, double d) {
  const auto head_it = v.begin() + static_cast<std::ptrdiff_t>(head);
  auto it = std::partition_point(head_it, v.end(), [t](const std::pair<double, double>& b) { return b.second <= t; });
  double start = t;
  for (; it != v.end() && it->first < start + d; ++it) start = std::max(start, it->second);
  const double e = start + d;
  if ((it == head_it || (it - 1)->first < start) && (it == v.end() || it->first >= start))
    insert_at(it, start, e);
  else
    insert(start, e);
  return start;
}

namespace {
// The first block ending after r (the blocks before it are never searched again).
std::size_t first_after(const std::vector<std::pair<double, double>>& v, std::size_t head, double r) {
  while (head < v.size() && v[head].second <= r) ++head;
  return head;
}
std::uint64_t bits_of(double x) {
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}
}  // namespace

// Searches from t >= r see a block [s, e) with s < r as [r, e): the busy time
// from r on is the blocks ending after r, the first one cut at r. Blocks are
// maximal (insert joins touching ones), so equal busy time is equal blocks.
bool Slots::same_from(const Slots& o, double r) const {
  // At once: the last blocks' ends (the busy time's end, or none after r) differ.
  const bool any = !v.empty() && v.back().second > r, o_any = !o.v.empty() && o.v.back().second > r;
  if (any != o_any || (any && v.back().second != o.v.back().second)) return false;
  std::size_t a = first_after(v, head, r), b = first_after(o.v, o.head, r);
  if (v.size() - a != o.v.size() - b) return false;
  if (a == v.size()) return true;
  if (std::max(v[a].first, r) != std::max(o.v[b].first, r) || v[a].second != o.v[b].second) return false;
  for (++a, ++b; a < v.size(); ++a, ++b)
    if (v[a] != o.v[b]) return false;
  return true;
}

std::uint64_t Slots::hash_from(double r) const {
  std::size_t a = first_after(v, head, r);
  std::uint64_t h = 0x9e3779b97f4a7c15ull ^ (v.size() - a);
  auto mix = [&h](std::uint64_t x) {
    h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  };
  for (std::size_t k = a; k < v.size(); ++k) {
    mix(bits_of(k == a ? std::max(v[k].first, r) : v[k].first));
    mix(bits_of(v[k].second));
  }
  return h;
}

Members::Members(int n, bool merge, bool alone) { reset(n, merge, alone); }

// Group ids 0..used_-1 are taken (live or free); the entries past them, and
// every vector, keep their storage from the previous run.
void Members::reset(int n, bool merge, bool alone) {
  n_ = n;
  merge_ = merge;
  alone_ = alone;
  if (alone) {
    for (Queue& q : per_) {
      q.v.clear();
      q.head = 0;
    }
    per_.resize(static_cast<std::size_t>(n));
    bs_.assign(static_cast<std::size_t>(n), -std::numeric_limits<double>::infinity());
    be_.assign(static_cast<std::size_t>(n), -std::numeric_limits<double>::infinity());
    bstep_.assign(static_cast<std::size_t>(n), kNoStep);
    in_queue_.assign(static_cast<std::size_t>(n), 0);
    queued_ = 0;
    scratch_s_.resize(static_cast<std::size_t>(n));
    scratch_h_.resize(static_cast<std::size_t>(n));
    in_place_ = in_slots_ = in_line_ = 0;
    return;
  }
  words_ = (n + 63) / 64;
  of_.assign(static_cast<std::size_t>(n), 0);
  live_.clear();
  free_.clear();
  used_ = 0;
  bits_.clear();
  take();
  std::uint64_t* b = bits(0);
  for (int m = 0; m < n; ++m) b[m / 64] |= std::uint64_t{1} << (m % 64);
  g_[0].count = n;
  g_[0].first = 0;
  most_ = 1;
}

int Members::first_of(int id) const {
  const std::uint64_t* b = bits(id);
  for (int w = 0; w < words_; ++w)
    if (b[w] != 0) return 64 * w + std::countr_zero(b[w]);
  return n_;
}

int Members::take() {
  int id;
  if (!free_.empty()) {
    id = free_.back();
    free_.pop_back();
  } else {
    id = used_++;
    if (g_.size() < static_cast<std::size_t>(used_)) g_.emplace_back();
    bits_.resize(static_cast<std::size_t>(used_) * static_cast<std::size_t>(words_));
  }
  Group& g = g_[static_cast<std::size_t>(id)];
  std::fill_n(bits(id), words_, std::uint64_t{0});
  g.count = 0;
  g.first = n_;
  g.q.v.clear();
  g.q.head = 0;
  live_.push_back(id);
  most_ = std::max(most_, live_.size());
  return id;
}

// Moves the members of group `from` into `into` (their queues are the same
// from the front on) and frees `from`.
void Members::merge(int from, int into) {
  Group& a = g_[static_cast<std::size_t>(from)];
  Group& b = g_[static_cast<std::size_t>(into)];
  std::uint64_t* ab = bits(from);
  std::uint64_t* bb = bits(into);
  for (int w = 0; w < words_; ++w) {
    std::uint64_t x = ab[w];
    bb[w] |= x;
    for (; x != 0; x &= x - 1) of_[static_cast<std::size_t>(64 * w + std::countr_zero(x))] = into;
  }
  b.count += a.count;
  b.first = std::min(b.first, a.first);
  a.count = 0;
  live_.erase(std::find(live_.begin(), live_.end(), from));
  free_.push_back(from);
}

void Members::merge_equal(double r) {
  keys_.clear();
  for (int id : live_) {
    g_[static_cast<std::size_t>(id)].q.prune(r);
    keys_.emplace_back(g_[static_cast<std::size_t>(id)].q.hash_from(r), id);
  }
  std::sort(keys_.begin(), keys_.end());
  for (std::size_t k = 0; k < keys_.size();) {
    std::size_t e = k + 1;
    while (e < keys_.size() && keys_[e].first == keys_[k].first) ++e;
    for (std::size_t a = k; a < e; ++a) {
      if (keys_[a].second < 0) continue;
      for (std::size_t b = a + 1; b < e; ++b) {
        if (keys_[b].second < 0) continue;
        const int x = keys_[a].second, y = keys_[b].second;
        if (!g_[static_cast<std::size_t>(x)].q.same_from(g_[static_cast<std::size_t>(y)].q, r)) continue;
        // The smaller group's members move.
        if (g_[static_cast<std::size_t>(x)].count < g_[static_cast<std::size_t>(y)].count) {
          merge(x, y);
          keys_[a].second = y;
        } else {
          merge(y, x);
        }
        keys_[b].second = -1;
      }
    }
    k = e;
  }
}

bool Members::busy_from(double r, double id_shift, std::vector<double>& out) const {
  if (!alone_) return false;
  for (int m = 0; m < n_; ++m) {
    const auto um = static_cast<std::size_t>(m);
    if (!in_queue_[um]) {
      if (be_[um] > r) {
        out.push_back(1);
        out.push_back(std::max(bs_[um], r) - r);
        out.push_back(be_[um] - r);
        out.push_back(static_cast<double>(bstep_[um]) - id_shift);
      } else {
        out.push_back(0);
      }
    } else {
      const Queue& q = per_[um];
      std::size_t a = q.head;
      while (a < q.v.size() && q.v[a].end <= r) ++a;
      out.push_back(static_cast<double>(q.v.size() - a));
      for (std::size_t k = a; k < q.v.size(); ++k) {
        out.push_back(std::max(q.v[k].start, r) - r);
        out.push_back(q.v[k].end - r);
        out.push_back(static_cast<double>(q.v[k].step) - id_shift);
      }
    }
  }
  return true;
}

// (A member's block in the arrays that ended, or -inf, stays ended: the
// front moves on by at least dt.)
void Members::translate(double dt, StepId did) {
  for (std::size_t m = 0; m < bs_.size(); ++m)
    if (!in_queue_[m]) bs_[m] += dt, be_[m] += dt, bstep_[m] += did;
  for (Queue& q : per_)
    for (Queue::Busy& b : q.v) b.start += dt, b.end += dt, b.step += did;
}

// Member m's queue in its Queue (moved there from the arrays if it was one
// block), pruned and booked; back in the arrays if it is then one block or none.
double Members::book_slots(int m, double r, double t, double d, StepId step, StepId& holder) {
  const auto um = static_cast<std::size_t>(m);
  Queue& q = per_[um];
  if (!in_queue_[um]) {
    q.v.clear();
    q.head = 0;
    if (be_[um] > r) q.v.push_back(Queue::Busy{bs_[um], be_[um], bstep_[um]});
    in_queue_[um] = 1;
    ++queued_;
  }
  ++in_slots_;
  q.prune(r);
  const double start = q.book(t, d, step, holder);
  const std::size_t left = q.v.size() - q.head;
  if (left <= 1) {
    if (left == 1) {
      bs_[um] = q.v[q.head].start, be_[um] = q.v[q.head].end, bstep_[um] = q.v[q.head].step;
    } else {
      bs_[um] = be_[um] = -std::numeric_limits<double>::infinity();
      bstep_[um] = kNoStep;
    }
    in_queue_[um] = 0;
    --queued_;
  }
  return start;
}

std::pair<double, int> Members::shared_slow(double r, double t, double d, StepId step, double* starts,
                                            StepId* holds) {
  if (alone_) {  // the latest end, its first member (member order)
    double best = 0;
    int who = n_;
    for (int m = 0; m < n_; ++m) {
      StepId h = kNoStep;
      const double st = book_alone(m, r, t, d, step, h);
      starts[m] = st;
      holds[m] = h;
      const double e = st + d;
      if (m == 0 || e > best) best = e, who = m;
    }
    return {best, who};
  }
  if (merge_ && live_.size() > 1) merge_equal(r);
  double best = 0;
  int who = n_;
  bool any = false;
  for (int id : live_) {
    Group& g = g_[static_cast<std::size_t>(id)];
    g.q.prune(r);
    const double e = g.q.book(t, d) + d;
    if (!any || e > best) {
      best = e;
      who = g.first;
      any = true;
    } else if (e == best) {
      who = std::min(who, g.first);
    }
  }
  return {best, who};
}

double Members::own_groups(double r, int m, double t, double d) {
  int id = of_[static_cast<std::size_t>(m)];
  Group* g = &g_[static_cast<std::size_t>(id)];
  g->q.prune(r);
  if (g->count > 1) {  // m leaves its group with a copy of the queue
    const int nid = take();
    g = &g_[static_cast<std::size_t>(id)];  // (take() may move the groups)
    Group& ng = g_[static_cast<std::size_t>(nid)];
    ng.q.v.assign(g->q.v.begin() + static_cast<std::ptrdiff_t>(g->q.head), g->q.v.end());
    const auto w = static_cast<std::size_t>(m / 64);
    const std::uint64_t bit = std::uint64_t{1} << (m % 64);
    bits(id)[w] &= ~bit;
    --g->count;
    if (g->first == m) g->first = first_of(id);
    bits(nid)[w] |= bit;
    ng.count = 1;
    ng.first = m;
    of_[static_cast<std::size_t>(m)] = nid;
    id = nid;
    g = &ng;
  }
  const double st = g->q.book(t, d);
  // Its queue may now be another group's (its twin took the same use before it).
  for (int other : live_) {
    if (other == id) continue;
    Group& o = g_[static_cast<std::size_t>(other)];
    if (o.q.same_from(g->q, r)) {
      if (o.count >= g->count) {
        merge(id, other);
      } else {
        merge(other, id);
      }
      break;
    }
  }
  return st + d;
}

// build::split(elems, parts) (align 1) into `out`: piece i starts at
// floor(i * elems / parts), kept as a quotient and remainder that grow by
// elems = a * parts + b per piece (no division per piece); where
// parts * elems would not fit in 64 bits, split() itself.
void split_into(std::uint64_t elems, int parts, std::vector<build::Span>& out) {
  if (parts < 1) {
    out = build::split(elems, parts);
    return;
  }
  out.resize(static_cast<std::size_t>(parts));
  split_into(elems, parts, out.data());
}

void split_into(std::uint64_t elems, int parts, build::Span* out) {
  const auto p = static_cast<std::uint64_t>(parts);
  if (elems > ~std::uint64_t{0} / p) {
    const std::vector<build::Span> v = build::split(elems, parts);
    std::copy(v.begin(), v.end(), out);
    return;
  }
  const std::uint64_t a = elems / p, b = elems % p;
  std::uint64_t q = 0, rem = 0;  // i * elems = q * p + rem, rem < p
  for (std::uint64_t i = 0; i < p; ++i) {
    std::uint64_t q1 = q + a, rem1 = rem + b;  // (i + 1) * elems
    if (rem1 >= p) ++q1, rem1 -= p;
    out[static_cast<std::size_t>(i)] = {q, q1 - q};
    q = q1;
    rem = rem1;
  }
}

bool chunk_shards(const std::vector<build::Span>& shards, int chunks, std::vector<build::Span>& spans,
                  std::vector<std::uint64_t>& shard_sizes, std::vector<std::size_t>& row, std::vector<std::uint64_t>& sizes) {
  const auto uc = static_cast<std::size_t>(chunks);
  shard_sizes.clear();
  sizes.clear();
  row.assign(shards.size(), 0);
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const std::uint64_t cnt = shards[i].count;
    std::size_t j = 0;
    while (j < shard_sizes.size() && shard_sizes[j] != cnt) ++j;
    row[i] = j;
    if (j < shard_sizes.size()) continue;
    shard_sizes.push_back(cnt);
    if (chunks < 1) return false;
    spans.resize(shard_sizes.size() * uc);  // (its storage kept: filled once, on a thread's first run)
    split_into(cnt, chunks, spans.data() + j * uc);  // (into its row: no copy)
  }
  std::uint64_t last_z = ~std::uint64_t{0};
  for (std::size_t k = 0; k < shard_sizes.size() * uc; ++k) {
    const std::uint64_t z = spans[k].count;
    if (z == last_z) continue;
    last_z = z;
    const auto at = std::lower_bound(sizes.begin(), sizes.end(), z);
    if (at == sizes.end() || *at != z) {
      sizes.insert(at, z);
      if (sizes.size() > 255) return false;
    }
  }
  return true;
}

}  // namespace scin::nvls
