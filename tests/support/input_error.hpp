// Test helper: the message of the InputError that `f` throws, or "(no error)" when it throws none, so that
// a test can check what a user reads (file, offset or line, reason) in one EXPECT.
#pragma once
#include <functional>
#include <string>

#include "kron/core/error.hpp"

namespace kron::testing {

inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace kron::testing
