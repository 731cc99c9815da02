// book()'s FCFS queue of reservations (analytic.cc), shared with the booking
// of parts (part_booking.h). Internal to the analytic engine.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace scin::analytic {

/// The first gap of `d` ns from `start` on among reservations `busy` (from
/// `head`): `start` moved to it, `holder`/`holder_use` the reservation it
/// waits for (left as they were if none); returns the first reservation after it.
template <class Busy, class Step>
auto gap_from(Busy& busy, std::size_t head, double& start, double d, Step& holder, int& holder_use) {
  const double from = start;
  auto it = std::partition_point(busy.begin() + static_cast<std::ptrdiff_t>(head), busy.end(),
                                 [from](const auto& b) { return b.end <= from; });
  for (const auto last = busy.end(); it != last && it->start < start + d; ++it) {
    start = std::max(start, it->end);
    holder = it->step;  // this use waits until that reservation ends
    holder_use = it->use;
  }
  return it;
}

/// Reserves `d` ns on `qu` (a Queue: `v`, reservations {start, end, step, use}
/// in time order, and `head`, the first one still open) at the earliest gap
/// from `start` on. First drops the reservations that ended by `ready` (no
/// step taken later is ready earlier), erasing the dead front now and then.
/// On return `start` is the reservation's start, and `holder`/`holder_use`
/// the reservation it waited for (left as they were if none). Reservations
/// that touch are kept as one block whose holder is its last user: the gap
/// search then skips a busy stretch in one step, with the same outcome (a
/// block has no gap, and a use after it waits for its last user).
template <class Queue, class Step>
void reserve(Queue& qu, double ready, double& start, double d, Step& holder, int& holder_use, Step step, int use) {
  auto& busy = qu.v;
  while (qu.head < busy.size() && busy[qu.head].end <= ready) ++qu.head;
  if (qu.head >= 64 && 2 * qu.head >= busy.size()) {
    busy.erase(busy.begin(), busy.begin() + static_cast<std::ptrdiff_t>(qu.head));
    qu.head = 0;
  }
  auto it = gap_from(busy, qu.head, start, d, holder, holder_use);
  const double end = start + d;
  const auto head_it = busy.begin() + static_cast<std::ptrdiff_t>(qu.head);
  const bool join_prev = it != head_it && (it - 1)->end == start;
  const bool join_next = it != busy.end() && it->start == end;
  if (join_prev && join_next) {
    (it - 1)->end = it->end;
    (it - 1)->step = it->step;
    (it - 1)->use = it->use;
    busy.erase(it);
  } else if (join_prev) {
    (it - 1)->end = end;
    (it - 1)->step = step;
    (it - 1)->use = use;
  } else if (join_next) {
    it->start = start;
  } else if (it == busy.end()) {
    busy.push_back({start, end, step, use});
  } else {
    busy.insert(it, {start, end, step, use});
  }
}

/// Where reserve() would place `d` ns from `start` on (nothing reserved): the
/// gap's start, and the reservation it would wait for in `step`/`use` (left
/// as they were if none).
template <class Queue, class Step>
double first_fit(const Queue& qu, double start, double d, Step& step, int& use) {
  gap_from(qu.v, qu.head, start, d, step, use);
  return start;
}

}  // namespace scin::analytic
