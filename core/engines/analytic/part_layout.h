// Part's layouts written by a caller that knows their shape (lay_waves,
// lay_chains, lay_all; scin_alike.cc) and the booking of INQ's quantise
// chains (run_chains): members of part::Part (part_booking.h, which includes
// this file at its end). Internal to the analytic engine.
#pragma once

namespace scin::part {

inline Part::Repeat Part::reads_repeat(std::size_t w, std::size_t p) const {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  if (rr_mode_ == 1) return {SIZE_MAX, SIZE_MAX, -kInf};
  Repeat r{0, SIZE_MAX, 0.0};
  if (rr_mode_ != 3 || !rr_chain_->lazy_times_) return r;
  // (step k of the chain is the translate of k - sh by Pt for k in [lo, hi):
  // qf[v] - qf[v - p] = (p / sh) Pt where k - p + sh >= lo)
  const std::size_t k = rr_off_ + w;
  for (const Lazy& z : rr_chain_->lazy) {
    if (z.sh == 0 || p % z.sh != 0 || z.hi <= rr_off_ || z.lo + p < z.sh) continue;
    const std::size_t from = z.lo + p - z.sh;  // (the first k it holds for)
    if (k >= z.hi) continue;
    if (k < from) {
      r.next = std::min(r.next, from - rr_off_);
      continue;
    }
    const double Pr = static_cast<double>(p / z.sh) * z.Pt;
    if (!on_grid(Pr)) continue;  // (then not exact)
    return {z.hi - rr_off_, SIZE_MAX, Pr};
  }
  return r;
}
[[gnu::always_inline]] inline void Part::reserve(Queue& qu, double ready, double& start, double d, int& holder, int& holder_use, int step,
                    int use) {
  auto& busy = qu.v;
  std::size_t h = qu.head;
  if (h < busy.size() && busy.back().end <= ready) h = busy.size();  // (ends grow: all ended)
  while (h < busy.size() && busy[h].end <= ready) ++h;
  if (h >= 64 && 2 * h >= busy.size()) {
    busy.erase(busy.begin(), busy.begin() + static_cast<std::ptrdiff_t>(h));
    h = 0;
  }
  qu.head = h;
  const std::size_t n = busy.size();
  const double from = start;
  std::size_t k = n;
  for (int tries = 0; k > h && busy[k - 1].end > from; --k)
    if (++tries == 4) {
      k = static_cast<std::size_t>(std::partition_point(busy.begin() + static_cast<std::ptrdiff_t>(h),
                                                        busy.begin() + static_cast<std::ptrdiff_t>(k),
                                                        [from](const Busy& b) { return b.end <= from; }) -
                                   busy.begin());
      break;
    }
  for (; k < n && busy[k].start < start + d; ++k) {
    start = std::max(start, busy[k].end);
    holder = busy[k].step;  // this use waits until that reservation ends
    holder_use = busy[k].use;
  }
  const double end = start + d;
  const bool join_prev = k != h && busy[k - 1].end == start;
  const bool join_next = k != n && busy[k].start == end;
  if (join_prev && join_next) {
    busy[k - 1].end = busy[k].end;
    busy[k - 1].step = busy[k].step;
    busy[k - 1].use = busy[k].use;
    busy.erase(busy.begin() + static_cast<std::ptrdiff_t>(k));
  } else if (join_prev) {
    busy[k - 1].end = end;
    busy[k - 1].step = step;
    busy[k - 1].use = use;
  } else if (join_next) {
    busy[k].start = start;
  } else if (k == n) {
    busy.push_back({start, end, step, use});
  } else {
    busy.insert(busy.begin() + static_cast<std::ptrdiff_t>(k), {start, end, step, use});
  }
}

template <int PW, class ReadyOf>
void Part::lay_waves(std::size_t W, int F, const Cost* wc, std::size_t ns, const std::uint8_t* zs, ReadyOf read_ready,
                     const ReadsTold* told) {
  constexpr std::size_t pw = PW;
  const std::size_t m = pw * W;
  size_to(m);
  first.resize(m);
  laid_ok_ = F >= 1;
  laid_grid_ = true;
  laid_nonneg_ = true;
  for (std::size_t z = 0; z < ns; ++z)
    for (std::size_t sub = 0; sub < pw; ++sub) {
      const Cost& k = wc[z * pw + sub];
      laid_grid_ = laid_grid_ && on_grid_cost(k);
      laid_nonneg_ = laid_nonneg_ && k.c.fixed_ns >= 0 && k.l >= 0;
      if (sub == 0 && k.lead != wc[0].lead) laid_ok_ = false;  // (run_waves_: every read the same lead)
      for (std::size_t u = 0; u < k.n; ++u) laid_nonneg_ = laid_nonneg_ && k.d[u] >= 0;
      for (std::size_t u = 0; u < k.n; ++u)
        if (sub == 0 ? !(k.q[u] == 0 || k.q[u] == 2 || (k.q[u] == 3 && pw == 3)) : k.q[u] != (sub + 1 == pw ? 1 : 3)) laid_ok_ = false;
    }
  laid_uniform_ = ns == 1;
  lay_W_ = W;
  lay_F_ = F;
  lay_wc_ = wc;
  lay_zs_ = zs;
  double* const rd = ready.data();
  double low = 0;  // (the earliest read's readiness, or 0)
  std::uint32_t all = 0;
  rr_mode_ = 0;
  if (ns == 1 && told) {  // (the reads' readiness told by read_ready_at, not written)
    rr_mode_ = !told->qf ? 1 : told->chain && told->chain->lazy_times_ ? 3 : 2;
    rr_base_ = told->base;
    rr_qf_ = told->qf;
    rr_chain_ = told->chain;
    rr_off_ = told->off;
    low = std::min(low, told->base);  // (each is max(base, ...))
  }
  if (ns == 1) {  // (one size: the same costs and records per wave, told by cost_at and first_at)
    for (std::size_t w = 0; w < W && !rr_mode_; ++w) {
      const double r = read_ready(w);
      low = std::min(low, r);
      rd[pw * w] = r;
    }
    uni_pw_ = pw;
    uni_per_ = 0;
    for (std::size_t sub = 0; sub < pw; ++sub) {
      uni_[sub] = wc + sub;
      uni_pre_[sub] = uni_per_;
      uni_per_ += wc[sub].n;
    }
    all = static_cast<std::uint32_t>(W) * uni_per_;
  } else {
    const Cost** const cs = cost.data();
    std::uint32_t* const fst = first.data();
    for (std::size_t w = 0, i = 0; w < W; ++w, i += pw) {
      const Cost* const k = wc + static_cast<std::size_t>(zs[w]) * pw;
      const double r = read_ready(w);
      low = std::min(low, r);
      rd[i] = r;
      for (std::size_t sub = 0; sub < pw; ++sub) {
        cs[i + sub] = k + sub;
        fst[i + sub] = all;
        all += k[sub].n;
      }
    }
  }
  laid_recs_ = all;
  laid_nonneg_ = laid_nonneg_ && low >= 0;
  laid_pw_ = PW;
  laid_chains_ = unwritten_chains_ = false;
  laid_ = true;
  rests_unwritten_ = true;
}

inline void Part::lay_all() {
  if (!rests_unwritten_) return;
  if (unwritten_chains_) {  // (lay_chains with one cost)
    for (std::size_t k = 0, m = cost.size(); k < m; ++k) {
      cost[k] = uni_[0];
      first[k] = static_cast<std::uint32_t>(k) * uni_per_;
      ready[k] = lay_head_[k] ? lay_r0_ : 0.0;
      pending[k] = lay_head_[k] ? 0 : 1;
    }
    uni_pw_ = 0;
    rests_unwritten_ = unwritten_chains_ = false;
    return;
  }
  const std::size_t pw = static_cast<std::size_t>(laid_pw_), uF = static_cast<std::size_t>(std::max(lay_F_, 0));
  for (std::size_t w = 0; w < lay_W_ && rr_mode_; ++w) ready[pw * w] = read_ready_at(w, pw);
  rr_mode_ = 0;
  std::uint32_t all = 0;
  for (std::size_t w = 0, i = 0; w < lay_W_; ++w, i += pw) {
    const Cost* const k = lay_wc_ + static_cast<std::size_t>(lay_zs_[w]) * pw;
    for (std::size_t sub = 0; sub < pw; ++sub) {
      cost[i + sub] = k + sub;
      first[i + sub] = all;
      all += k[sub].n;
      pending[i + sub] = sub > 0 || w >= uF ? 1 : 0;
      if (sub > 0) ready[i + sub] = 0.0;
    }
  }
  uni_pw_ = 0;
  rests_unwritten_ = false;
}

inline void Part::lay_chains(const std::uint8_t* head, double r0, const Cost* one) {
  const std::size_t m = cost.size();
  ready.resize(m);
  pending.resize(m);
  first.resize(m);
  uni_pw_ = 0;
  rests_unwritten_ = unwritten_chains_ = false;
  rr_mode_ = 0;
  laid_ok_ = true;
  laid_grid_ = true;
  laid_nonneg_ = r0 >= 0;
  laid_nc_ = 0;
  lay_head_ = head;
  lay_r0_ = r0;
  if (one) {
    for (std::size_t k = 0; k < m; ++k)
      if (head[k]) {
        if (laid_nc_ == 8) laid_ok_ = false;
        else laid_head_[laid_nc_++] = k;
        ready[k] = r0;
      }
    laid_grid_ = on_grid_cost(*one);
    laid_nonneg_ = laid_nonneg_ && one->c.fixed_ns >= 0 && one->l >= 0;
    for (std::size_t u = 0; u < one->n; ++u) {
      laid_nonneg_ = laid_nonneg_ && one->d[u] >= 0;
      if (one->q[u] != 0) laid_ok_ = false;
    }
    uni_pw_ = 1;
    uni_[0] = one;
    uni_pre_[0] = 0;
    uni_per_ = one->n;
    rests_unwritten_ = unwritten_chains_ = true;
    laid_uniform_ = true;
    laid_recs_ = static_cast<std::size_t>(one->n) * m;
    laid_ = laid_chains_ = true;
    return;
  }
  std::size_t changes = 0;
  const Cost* checked = nullptr;
  const Cost* const* const cs = cost.data();
  double* const rd = ready.data();
  int* const pd = pending.data();
  std::uint32_t* const fst = first.data();
  std::uint32_t all = 0;
  for (std::size_t k = 0; k < m; ++k) {
    const Cost* const c = cs[k];
    fst[k] = all;
    all += c->n;
    if (head[k]) {
      if (laid_nc_ == 8) laid_ok_ = false;
      else laid_head_[laid_nc_++] = k;
      rd[k] = r0;
      pd[k] = 0;
    } else {
      rd[k] = 0.0;
      pd[k] = 1;
    }
    if (c == checked) continue;
    checked = c;
    ++changes;
    laid_grid_ = laid_grid_ && on_grid_cost(*c);
    laid_nonneg_ = laid_nonneg_ && c->c.fixed_ns >= 0 && c->l >= 0;
    for (std::size_t u = 0; u < c->n; ++u) {
      laid_nonneg_ = laid_nonneg_ && c->d[u] >= 0;
      if (c->q[u] != 0) laid_ok_ = false;
    }
  }
  laid_uniform_ = changes <= 1;
  laid_recs_ = all;
  laid_ = laid_chains_ = true;
}

inline bool Part::run_chains(const std::uint8_t* head, const RunContext& ctx) {
  const std::size_t m = cost.size();
  ChainLoop C;
  std::size_t* const at = C.at;  // each chain's next step (m: done)
  std::size_t& nc = C.nc;
  const bool laid = laid_ && laid_chains_ && cost.size() == first.size();  // (lay_chains wrote and checked the layout)
  laid_ = laid_chains_ = false;
  uniform_ = laid && laid_uniform_;
  rests_at_zero_ = laid && laid_nonneg_;
  bool grid = !laid || laid_grid_;
  const Cost* checked = nullptr;
  if (laid) {
    if (!laid_ok_) return false;
    nc = laid_nc_;
    for (std::size_t c = 0; c < nc; ++c) at[c] = laid_head_[c], C.end[c] = c + 1 < nc ? laid_head_[c + 1] : m;
  }
  for (std::size_t k = 0; k < m && !laid; ++k) {
    if (head[k]) {
      if (nc == 8 || pending[k] != 0) return false;
      if (nc > 0) C.end[nc - 1] = k;
      at[nc++] = k;
    } else if (pending[k] != 1) {
      return false;
    }
    if (cost[k] == checked) continue;
    checked = cost[k];
    grid = grid && on_grid_cost(*checked);
    for (std::size_t u = 0; u < cost[k]->n; ++u)
      if (cost[k]->q[u] != 0) return false;
  }
  if (nc > 0) C.end[nc - 1] = m;
  jumped_chain_steps = 0;
  lazy.clear();
  lazy_times_ = false;
  start.resize(m);
  finish.resize(m);
  bound.resize(m);
  if (laid)
    recs.resize(laid_recs_);
  else
    place_records();
  double* const key = C.key;
  for (std::size_t c = 0; c < nc; ++c) C.head[c] = at[c], key[c] = ready[at[c]];
  bool ok = true;
  auto res = [&](int, double, double& st, double d, int& holder, int& holder_use, int step, int use) SCIN_INLINE {
    if (!C.fq.book(st, d, holder, holder_use, step, use)) return ok = false;
    return true;
  };
  WaveJump& J = chain_jump_;
  J.reset(m / std::max<std::size_t>(nc, 1));
  bool jump_on = grid && nc > 0 && m >= 32 * nc;  // (the jump: wave_jump.h)
  for (std::size_t taken = 1;; ++taken) {
    std::size_t c = nc;
    for (std::size_t o = 0; o < nc; ++o)
      if (at[o] < m && (c == nc || key[o] < key[c] || (key[o] == key[c] && at[o] < at[c]))) c = o;
    if (c == nc) break;
    if ((taken & 0x3ff) == 0) ctx.check();
    if (c == 0 && jump_on && at[0] >= C.head[0] + 8) {
      if (!J.wanted()) jump_on = false;
      else if (jump_chains(*this, C)) continue;
    }
    const std::size_t i = at[c];
    const double f = take(i, key[c], res, C.rec_end);
    if (!ok) return false;
    if (f > C.late || (f == C.late && static_cast<long long>(i) < C.late_at)) C.late = f, C.late_at = static_cast<long long>(i);
    if (i + 1 < m && !head[i + 1]) {
      at[c] = i + 1;
      key[c] = std::max(ready_at(i + 1, true), f);
    } else {
      at[c] = m;
    }
  }
  latest = C.late;
  latest_at = C.late_at;
  latest_rec_end = C.rec_end;
  return true;
}

}  // namespace scin::part
