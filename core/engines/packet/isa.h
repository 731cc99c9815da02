// The SCIN in-switch accelerator (ISA) of one plane: its staging buffer and its
// request ports.
//
// Read responses wait in the buffer until their reduction group (packet i of
// every source) is complete and reduced; a reduction's bytes free when it is
// done. Requests leave a port while its outstanding bytes stay under
// switch.isa.max_outstanding_bytes (Little's Law); paced regulation also spaces
// them at the reduction drain rate.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "engines/packet/event_queue.h"
#include "engines/packet/time.h"

namespace scin::packet {

class IsaBuffer {
 public:
  explicit IsaBuffer(std::uint64_t capacity = 0) : capacity_(capacity) {}

  /// Applies the frees of reductions done by `t`.
  [[gnu::always_inline]] void apply_frees(Ps t) {
    while (!frees_.empty() && frees_.front().first <= t) {
      staged_ -= frees_.front().second;
      frees_.pop_front();
    }
  }
  /// A response of `bytes` reaches the buffer at `t`; `next_group`: it belongs to
  /// the group the reducer waits for. Returns false, changing nothing but the
  /// frees applied, if it does not fit. Escape: when nothing already staged will
  /// ever be freed (every staged byte belongs to an incomplete group), the group
  /// the reducer waits for gets in anyway, so a full buffer of partial groups
  /// cannot deadlock.
  [[gnu::always_inline]] bool admit(Ps t, std::uint32_t bytes, bool next_group) {
    apply_frees(t);
    const bool escape = frees_.empty() && next_group;
    if (staged_ > 0 && staged_ + bytes > capacity_ && !escape) return false;
    staged_ += bytes;
    hwm_ = std::max(hwm_, staged_);
    return true;
  }
  /// A reduction of `bytes` staged bytes is done at `t` (non-decreasing).
  void free_at(Ps t, std::uint32_t bytes) { frees_.push_back({t, bytes}); }
  /// When the next pending free happens, or kNever.
  Ps next_free() const { return frees_.empty() ? kNever : frees_.front().first; }

  std::uint64_t staged() const { return staged_; }
  std::uint64_t high_water_mark() const { return hwm_; }
  std::uint64_t capacity() const { return capacity_; }

 private:
  std::uint64_t capacity_;
  std::uint64_t staged_ = 0, hwm_ = 0;
  Ring<std::pair<Ps, std::uint32_t>> frees_;  // (reduction done, bytes): FIFO in time
};

struct IsaPort {
  std::uint64_t outstanding = 0;
  // One read flow's requests to this accelerator, with what issuing them needs
  // copied in (the hot loop touches no Flow).
  struct Op {
    std::uint32_t next;    // next packet to request
    std::uint32_t n;       // packets of this source
    std::uint32_t src_id;  // the Source the responses come from
    std::uint64_t total;   // bytes of this source
    Fine pace;             // paced regulation: request interval (0: none)
  };
  Ring<Op> ops;            // read flows with requests left to issue, oldest first
  Ps last_issue = 0;
  bool issued = false;     // last_issue is set
  Carry pace;              // paced intervals in whole ps without drift
  Fine gap = 0;            // paced: the interval after the last request (its group's reduction time)
};

struct Isa {
  IsaBuffer buffer;
  Ps wake_at = kNever;                  // pending wake-up (a free) and its generation
  std::uint64_t wake_gen = 0;
  std::vector<std::uint32_t> blocked;   // uplinks whose response heads wait for buffer room
  std::uint64_t normal_inflight = 0;    // responses on the wire / in input ports (event path)
  std::vector<IsaPort> ports;           // per accelerator
  int reduce_res = 0, inq_res = 0;      // the plane's reduction and INQ units in res_ (ResourceMap::isa_reduce, isa_inq)
};

}  // namespace scin::packet
