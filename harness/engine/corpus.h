// The corpus: every minimized failure kept as a case file under <dir>/<kernel>/, with
// what each implementation does on it, so that ctest replays it forever.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/engine/runner.h"
#include "harness/storage/case_file.h"

namespace kprop {

// Case files named by `paths` (files, or folders searched recursively for *.json),
// sorted. A path that does not exist is a CaseError.
std::vector<std::string> case_files_under(const std::vector<std::string>& paths);

// Identity -> case file, for every readable case file under `dir` that has one (none if
// `dir` does not exist). Unreadable files are skipped here; `kprop replay` names their
// fault.
std::map<std::string, std::string> corpus_identities(const std::string& dir);

// The case file under `dir` that already holds `identity`, if any.
std::optional<std::string> find_identity(const std::string& dir, const std::string& identity);

// The case file for a minimal failure: its case, signature, identity and fingerprint,
// and the verdict of every built-in implementation (and of the failing one) as
// expectations.
CaseFile describe_failure(const Failure& f, nlohmann::json provenance, std::string notes = "");

// A short, readable file name: <impl>-<property>-<symptom's tensor>-<hash of identity>.json.
std::string corpus_file_name(const CaseFile& f);

struct Kept {
  std::string path;  // the file written, or the one that already had the identity
  bool written = false;
  std::string error;  // try_keep(): why it could not be written (then nothing was)
};
// Writes `f` under <dir>/<kernel>/ unless its identity is already in the corpus (one
// defect, one entry); `name` replaces the generated file name.
Kept keep(const std::string& dir, const CaseFile& f, const std::string& name = "");
// keep(), but a file that cannot be written is not an exception: Kept::error says why,
// and the caller prints the case file whole (to_json(f)) so the finding is not lost.
Kept try_keep(const std::string& dir, const CaseFile& f, const std::string& name = "");

// Before a search that may keep findings in `dir`: checks that case files can be written
// there (its nearest existing folder takes a new file), else throws FileError naming the
// folder, so that a long search never ends in a finding with nowhere to go; then removes
// the temporary files a killed writer left under it (harness/storage/atomic_file.h). Creates
// nothing. Returns the temporary files removed.
std::vector<std::string> prepare_corpus(const std::string& dir);

}  // namespace kprop
