#pragma once

#include <stdexcept>
#include <string>

namespace scin {

/// The one exception type `core` throws for bad input. The message names the
/// offending field and, where there is one, the allowed range; the CLI prints it
/// as a one-line error and exits non-zero, the GUI shows it in a dialog.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(what) {}
};

}  // namespace scin
