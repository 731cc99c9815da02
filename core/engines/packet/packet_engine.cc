// The packet engine's entry points; the engine itself is in engine.h and the
// components next to it.
#include "engines/packet/packet_engine.h"

#include "engines/packet/engine.h"

namespace scin {
namespace packet {

Run run(const Config& cfg, const Schedule& s, const RunContext& ctx) {
  Engine e(cfg, s, ctx);
  return e.run();
}

}  // namespace packet

SimResult run_packet_sim(const Config& cfg, const Schedule& s, const RunContext& ctx) {
  return packet::run(cfg, s, ctx).result;
}

}  // namespace scin
