// Part::run(): a part's steps booked one by one in order of (ready time,
// index), as book() (book.h) takes them; a member of part::Part
// (part_booking.h, which includes this file at its end). Internal to the
// analytic engine.
#pragma once

namespace scin::part {

template <class Succ>
void Part::run(int queues, Succ succ, const RunContext& ctx) {
  auto& qs = qs_;
  qs.resize(static_cast<std::size_t>(queues));
  for (Queue& qu : qs) {
    qu.v.clear();
    qu.head = 0;
  }
  lay_all();
  const std::size_t m = cost.size();
  lazy.clear();
  lazy_times_ = false;
  laid_ = false;
  start.assign(m, 0.0);
  finish.assign(m, 0.0);
  bound.assign(m, -1);
  place_records();
  // One slot per chain head.
  using Key = LoserTree::Key;
  std::vector<Key>& key_ = tree_.key;
  key_.clear();
  for (std::size_t i = 0; i < m; ++i)
    if (pending[i] == 0) key_.push_back({ready[i], static_cast<StepId>(i)});
  std::size_t leaves = 1;
  while (leaves < key_.size()) leaves *= 2;
  key_.resize(leaves, {kNever, kNoStep});
  std::size_t win = tree_.build(leaves);
  std::size_t taken = 0;
  double late = -1, rec_end = 0;
  long long late_at = -1;
  auto res = [&qs](int q, double r, double& st, double d, int& holder, int& holder_use, int step, int use) {
    reserve(qs[static_cast<std::size_t>(q)], r, st, d, holder, holder_use, step, use);
    return true;
  };
  p2_.assign(m, 0);
  auto probe = [&qs](int q, double st, double d, int& step, int& use) {
    return analytic::first_fit(qs[static_cast<std::size_t>(q)], st, d, step, use);
  };
  for (;;) {
    const Key top = key_[win];
    if (top.id == kNoStep) break;
    const double r = top.t;
    const auto i = static_cast<std::size_t>(top.id);
    if ((++taken & 0x3ff) == 0) ctx.check();
    double f;
    if (p2_[i]) {  // the read's fed units, booked when its data arrives (book.h)
      if (const double sh = cost_at(i)->paced ? paced_shift(i, r, probe) : 0.0; sh > 0) {
        key_[win] = {r + sh, static_cast<StepId>(i)};  // (taken again when its units are free)
        win = tree_.replay(win, leaves);
        continue;
      }
      p2_[i] = 0;
      f = take_second(i, r, res, rec_end);
    } else if (defers(i)) {
      key_[win] = {take_first(i, r, res, rec_end), static_cast<StepId>(i)};
      p2_[i] = 1;
      win = tree_.replay(win, leaves);
      continue;
    } else {
      f = take(i, r, res, rec_end);
    }
    if (f > late || (f == late && static_cast<long long>(i) < late_at)) late = f, late_at = static_cast<long long>(i);
    // The slot passes to the step this one releases, or empties.
    Key next{kNever, kNoStep};
    if (const auto j = static_cast<long long>(succ(i)); j >= 0) {
      const auto uj = static_cast<std::size_t>(j);
      ready[uj] = std::max(ready[uj], f);
      if (--pending[uj] == 0) next = {ready[uj], static_cast<StepId>(uj)};
    }
    key_[win] = next;
    win = tree_.replay(win, leaves);
  }
  latest = late;
  latest_at = late_at;
  latest_rec_end = rec_end;
}

}  // namespace scin::part
