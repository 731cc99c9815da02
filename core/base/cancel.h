// Cancellation of long computations (a packet-engine run at GiB sizes can take
// seconds): the caller's stop request reaches them through their RunContext
// (base/run_context.h), and they throw Cancelled. Cancelled is not a
// scin::Error: it is not bad input, and code that turns errors into skipped
// results must let it through.
#pragma once

#include <exception>

namespace scin {

class Cancelled : public std::exception {
 public:
  const char* what() const noexcept override { return "cancelled"; }
};

}  // namespace scin
