// Helpers shared by the core tests: an ideal fabric and an error catcher.
#pragma once

#include <functional>
#include <string>

#include "base/error.h"
#include "fabric/config.h"

namespace scin::testing_util {

/// A fabric whose only costs are the ones a test names: one switch plane,
/// 100 GB/s links at full efficiency (headerless packets), 10 ns links, a 30 ns switch, a Simple
/// ring protocol with a 5 ns step overhead, no launch cost, an ISA with INQ.
inline Config ideal(int n) {
  Config c;
  c.name = "ideal";
  c.fabric.gpus = n;
  c.fabric.planes = 1;
  c.accelerator.launch_overhead_ns = 0;
  c.accelerator.hbm_bandwidth_GBps = 1e6;
  c.links.bandwidth_GBps = 100;
  c.links.efficiency = 1.0;
  c.packet.header_bytes = 0;   // no framing ceiling below efficiency 1 (cost_model.h)
  c.links.latency_ns = 10;
  c.sw.latency_ns = 30;
  c.ring.protocol = RingProtocol::Simple;
  c.ring.simple = {0, 5, 1.0};
  c.sw.isa.enabled = true;
  c.sw.isa.inq = true;
  return c;
}

/// The message of the scin::Error `f` throws, or "" if it throws none.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace scin::testing_util
