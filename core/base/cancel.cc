#include "base/cancel.h"

namespace scin {
namespace {
thread_local const std::atomic<bool>* current_flag = nullptr;
}

CancelScope::CancelScope(const std::atomic<bool>* flag) : previous_(current_flag) { current_flag = flag; }
CancelScope::~CancelScope() { current_flag = previous_; }

bool cancel_requested() { return current_flag && current_flag->load(std::memory_order_relaxed); }

}  // namespace scin
