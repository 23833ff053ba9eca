// The kinds of error a user can cause; each ends a command with exit code 2.
#pragma once

#include <stdexcept>
#include <string>

namespace kprop {

// Bad command-line usage: an unknown kernel, implementation or property, a bad flag.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A case that cannot be run: a malformed file, a wrong type, an impossible parameter.
// The message names the file (if any) and the field.
struct CaseError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A file that cannot be written (a missing permission, a folder in the way).
struct FileError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace kprop
