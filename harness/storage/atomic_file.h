// Writing a file so that readers see the old content or the new, never a part: write a
// temporary file in the same folder, flush it to disk, rename it over the target.
#pragma once

#include <string>
#include <vector>

namespace kprop {

// Creates missing folders. Throws FileError (harness/errors.h) naming the path.
void write_file_atomically(const std::string& path, const std::string& content);

// The temporary file write_file_atomically() writes beside `path` as process `pid`:
// "<path>.tmp.<pid>".
std::string temporary_file_name(const std::string& path, long pid);

// Removes the temporary files under `folder` (recursively) whose writer no longer runs:
// what a writer killed between write and rename left behind. A temporary file of a
// process that still runs (a concurrent writer) is kept. Returns the paths removed; a
// folder that does not exist has none.
std::vector<std::string> remove_stale_temporary_files(const std::string& folder);

}  // namespace kprop
