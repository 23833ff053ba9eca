#pragma once
// The source tree of this build, found from the test executable's folder: the build
// passes the relative path (KPROP_SOURCE_FROM_EXECUTABLE), so that the test objects are
// the same in every clone and ccache reuses them (harness/execution/own_executable.h).
#include <filesystem>

#include "harness/execution/own_executable.h"

inline std::filesystem::path source_tree() {
  return kprop::beside_own_executable(KPROP_SOURCE_FROM_EXECUTABLE).lexically_normal();
}
