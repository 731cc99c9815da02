#include "base/version.h"

#include "scin_git_rev.h"   // generated at build time (cmake/git_rev.cmake)

namespace scin {
const char* version() { return SCIN_VERSION; }
const char* git_revision() { return SCIN_GIT_REV; }
}  // namespace scin
