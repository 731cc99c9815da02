// The message of the scin::Error `f` throws, or "" if it throws none: the one
// helper tests use to assert that bad input names its field.
#pragma once

#include <functional>
#include <string>

#include "base/error.h"

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const scin::Error& e) {
    return e.what();
  }
  return "";
}
