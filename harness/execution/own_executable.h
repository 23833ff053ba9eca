#pragma once
// Where the running program lies, and paths beside it. Builds name the files they need
// (the source corpus, the fuzz targets) relative to the executable rather than by absolute
// path: an absolute path compiled into an object differs in every clone, and ccache then
// cannot reuse the object from the last clone's build.
#include <filesystem>
#include <string>

namespace kprop {

// /proc/self/exe resolved; empty if the system does not say.
std::filesystem::path own_executable();

// `relative` taken from the executable's folder (an absolute path is returned as it is).
std::filesystem::path beside_own_executable(const std::string& relative);

}  // namespace kprop
