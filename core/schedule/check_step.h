// check_schedule() in parts (schedule.cc), for an engine that passes over the
// steps anyway: the packet engine's set-up reads every step once, and a ring
// at 1024 accelerators has 2 M steps of 208 bytes (416 MB): checking them in a
// pass of their own read them all twice. Call check_schedule_nodes(s) once,
// then check_step(s, i) for every step in order, before using step i: the same
// checks and the same errors as check_schedule(). (A header of its own, so that
// schedule.h, included by most of the tree, is unchanged.)
#pragma once

#include <cstddef>

#include "schedule/schedule.h"

namespace scin {

void check_schedule_nodes(const Schedule& s);
void check_step(const Schedule& s, std::size_t i);

}  // namespace scin
