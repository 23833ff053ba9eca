// Writing a file so that readers see the old content or the new, never a part: write a
// temporary file in the same folder, flush it to disk, rename it over the target.
#pragma once

#include <string>

namespace kprop {

// Creates missing folders. Throws FileError (harness/errors.h) naming the path.
void write_file_atomically(const std::string& path, const std::string& content);

}  // namespace kprop
