// What the packet engine measured, typed: tests, benchmarks and `scin bench`
// read these fields; SimResult.extra is their JSON rendering (to_json).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace scin::packet {

struct LinkReport {
  enum class Direction { Egress, Ingress, Direct, Trunk };
  std::string name;         // "r0->sw1", "sw1->r0", "r0->r3", "sw16->sw40"
  Direction direction = Direction::Egress;
  int gpu = 0;              // trunk: the switch node it leaves
  int plane_or_peer = 0;    // plane (egress / ingress), peer (direct), the switch node it reaches (trunk)
  std::uint64_t payload_bytes = 0, wire_bytes = 0, packets = 0;
  double busy_ns = 0;
  double utilisation = 0;   // busy / run time
  double credit_stall_ns = 0;  // egress, trunk: time with a packet to send but no credit
};

struct PortReport {
  std::string name;         // "sw1 in r0", "sw1 out r0"
  int plane = 0, gpu = 0;
  bool input = true;
  std::uint64_t peak_queue_bytes = 0;
};

struct IsaReport {
  int plane = 0;
  std::uint64_t buffer_bytes = 0, buffer_hwm_bytes = 0;
};

struct TimelineReport {
  double bin_ns = 0;
  int samples = 0;          // 0: no timeline recorded
  std::vector<std::string> links;
  std::vector<std::vector<double>> utilisation;  // per link, per bin
};

/// Everything the engine measured.
struct Stats {
  std::uint64_t events = 0;        // events popped from the event heap (including stale ones)
  std::uint64_t stale_events = 0;  // of which superseded wake-ups that did nothing
  std::uint64_t packet_hops = 0;   // packet serialisations on links (one per packet per link)
  std::uint64_t packets = 0;       // packets created (each read response, write packet, reduced result)
  std::uint64_t peak_pending = 0;  // largest number of events waiting in the heap
  double wall_s = 0;               // wall time of the event loop and set-up
  double cpu_s = 0;                // CPU time of this thread over the same span (honest on a loaded machine)
  std::uint64_t packet_payload_bytes = 0, packet_header_bytes = 0;
  std::vector<LinkReport> links;
  std::vector<PortReport> switch_ports;
  std::vector<IsaReport> isa;
  TimelineReport timeline;
};

const char* to_string(LinkReport::Direction d);
/// The JSON SimResult.extra carries (keys as documented in docs/model.md).
nlohmann::json to_json(const Stats& s);

}  // namespace scin::packet
