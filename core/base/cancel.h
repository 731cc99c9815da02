// Cooperative cancellation of long computations (a packet-engine run at GiB
// sizes can take seconds). A caller that may cancel installs a CancelScope on
// the worker thread; long loops poll cancel_requested() and throw Cancelled.
// Cancelled is not a scin::Error: it is not bad input, and code that turns
// errors into skipped results must let it through.
#pragma once

#include <atomic>
#include <exception>

namespace scin {

class Cancelled : public std::exception {
 public:
  const char* what() const noexcept override { return "cancelled"; }
};

/// Makes `flag` (may be null) the cancellation flag of the current thread
/// until the scope ends; scopes nest.
class CancelScope {
 public:
  explicit CancelScope(const std::atomic<bool>* flag);
  ~CancelScope();
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

 private:
  const std::atomic<bool>* previous_;
};

/// True once the current thread's flag is set.
bool cancel_requested();

}  // namespace scin
