#include "engines/packet/stats.h"

namespace scin::packet {

const char* to_string(LinkReport::Direction d) {
  switch (d) {
    case LinkReport::Direction::Egress: return "egress";
    case LinkReport::Direction::Ingress: return "ingress";
    case LinkReport::Direction::Trunk: return "trunk";
    case LinkReport::Direction::Direct: break;
  }
  return "direct";
}

nlohmann::json to_json(const Stats& s) {
  using nlohmann::json;
  json j;
  j["events"] = s.events;
  j["packet_hops"] = s.packet_hops;
  j["packets"] = s.packets;
  j["peak_pending_events"] = s.peak_pending;
  j["stale_events"] = s.stale_events;
  j["wall_s"] = s.wall_s;
  j["cpu_s"] = s.cpu_s;
  j["packet_payload_bytes"] = s.packet_payload_bytes;
  j["packet_header_bytes"] = s.packet_header_bytes;
  json links = json::array();
  for (const auto& l : s.links) {
    json x;
    x["name"] = l.name;
    x["direction"] = to_string(l.direction);
    if (l.direction == LinkReport::Direction::Trunk) {  // two tiers: leaf <-> spine, switch node to node
      x["from_switch"] = l.gpu;
      x["to_switch"] = l.plane_or_peer;
    } else {
      x["gpu"] = l.gpu;
      if (l.direction == LinkReport::Direction::Direct) x["peer"] = l.plane_or_peer;
      else x["plane"] = l.plane_or_peer;
    }
    x["payload_bytes"] = l.payload_bytes;
    x["wire_bytes"] = l.wire_bytes;
    x["packets"] = l.packets;
    x["busy_ns"] = l.busy_ns;
    x["utilisation"] = l.utilisation;
    if (l.direction == LinkReport::Direction::Egress || l.direction == LinkReport::Direction::Trunk)
      x["credit_stall_ns"] = l.credit_stall_ns;
    links.push_back(std::move(x));
  }
  j["links"] = std::move(links);
  json ports = json::array();
  for (const auto& p : s.switch_ports)
    ports.push_back({{"name", p.name}, {"plane", p.plane}, {"gpu", p.gpu}, {"side", p.input ? "input" : "output"},
                     {"peak_queue_bytes", p.peak_queue_bytes}});
  j["switch_ports"] = std::move(ports);
  json isa = json::array();
  for (const auto& i : s.isa)
    isa.push_back({{"plane", i.plane}, {"buffer_bytes", i.buffer_bytes}, {"buffer_hwm_bytes", i.buffer_hwm_bytes}});
  j["isa"] = std::move(isa);
  if (s.timeline.samples > 0) {
    json tl;
    tl["bin_ns"] = s.timeline.bin_ns;
    tl["samples"] = s.timeline.samples;
    json ls = json::array();
    for (std::size_t k = 0; k < s.timeline.links.size(); ++k)
      ls.push_back({{"name", s.timeline.links[k]}, {"utilisation", s.timeline.utilisation[k]}});
    tl["links"] = std::move(ls);
    j["timeline"] = std::move(tl);
  }
  return j;
}

}  // namespace scin::packet
