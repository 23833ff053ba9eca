#include "harness/api/replay.h"

#include <fmt/format.h>

#include "core/errors.h"
#include "harness/engine/corpus.h"
#include "harness/storage/case_file.h"
#include "harness/storage/verdict_json.h"

namespace kprop {

namespace {

// The case files to replay: every path must give at least one (an empty folder, or a
// folder named x.json, would otherwise replay nothing and pass). A path that cannot be
// listed is reported as a bad file, and the other paths still replay.
std::vector<std::string> files_to_replay(const std::vector<std::string>& paths,
                                         const std::function<void(const ReplayedFile&)>& bad) {
  std::vector<std::string> files;
  for (const auto& p : paths) {
    try {
      const auto found = case_files_under({p});
      if (found.empty())
        throw CaseError(fmt::format("{}: no case files (*.json) in this folder", p));
      files.insert(files.end(), found.begin(), found.end());
    } catch (const std::exception& e) {
      bad(ReplayedFile{p, std::nullopt, e.what(), false});
    }
  }
  return files;
}

ReplayedFile replay_one(const ReplayRequest& o, const std::string& path) {
  ReplayedFile out{path, std::nullopt, "", false};
  try {
    const CaseFile f = read_case_file(path);
    if (f.expect.empty() && o.impl.empty()) {
      // A hand-written case: nothing recorded to check it against yet.
      throw CaseError(fmt::format("{}: no expectations to replay (run `kprop shrink {}` first)",
                                  path, path));
    }
    out.result = replay(f, o.impl, o.builtin_only);
    // One implementation is judged like check: only a pass passes (a refusal or a skip
    // checked nothing).
    out.ok = o.impl.empty() ? out.result->as_recorded()
                            : out.result->runs[0].verdict.status == Verdict::Status::pass;
  } catch (const CaseError& e) {
    out.error = e.what();
  } catch (const std::exception& e) {
    // An unknown --impl, a kernel error: still named, and the other files still replay.
    out.error = fmt::format("{}: {}", path, e.what());
  }
  return out;
}

}  // namespace

ReplayReport replay_files(const ReplayRequest& request,
                          const std::function<void(const ReplayedFile&)>& on_file) {
  const auto session = open_session(request.run);
  ReplayReport report;
  bool bad = false, changed = false;
  const auto done = [&](ReplayedFile f) {
    bad |= !f.result;
    changed |= f.result && !f.ok;
    if (on_file) on_file(f);
    report.files.push_back(std::move(f));
  };
  for (const auto& path : files_to_replay(request.paths, done)) done(replay_one(request, path));
  report.exit_code = bad ? 2 : changed ? 1 : 0;
  return report;
}

nlohmann::json to_json(const ReplayResult& r) {
  nlohmann::json runs = nlohmann::json::array();
  for (const auto& run : r.runs)
    runs.push_back({{"impl", run.impl},
                    {"expected", run.expected ? to_string(*run.expected) : ""},
                    {"as_expected", run.as_expected()},
                    {"verdict", verdict_to_json(run.verdict)}});
  return {{"path", r.file.path},
          {"case", case_to_json(r.file.c)},
          {"as_recorded", r.as_recorded()},
          {"fingerprint", r.fingerprint},
          {"fingerprint_matches", r.fingerprint_matches},
          {"signature_matches", r.signature_matches},
          {"runs", runs}};
}

nlohmann::json to_json(const ReplayReport& report) {
  nlohmann::json all = nlohmann::json::array();
  for (const auto& f : report.files)
    if (f.result) all.push_back(to_json(*f.result));
  return all;
}

}  // namespace kprop
