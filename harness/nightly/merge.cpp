#include "harness/nightly/merge.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "core/errors.h"
#include "harness/engine/corpus.h"
#include "harness/fuzz/fuzz_target.h"
#include "harness/nightly/run_state.h"
#include "harness/storage/atomic_file.h"
#include "harness/storage/case_file.h"

namespace kprop {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

bool is_shard_folder(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "state.json", ec);
}

// What a source names: shard folders (a sharded run's shard-*-of-*/ in order), or itself
// as a folder of case files.
struct Source {
  fs::path folder;
  bool shard = false;
};

std::vector<Source> expand(const std::vector<std::string>& sources) {
  static const std::regex shard_name(R"(shard-(\d+)-of-(\d+))");
  std::vector<Source> out;
  for (const auto& s : sources) {
    std::error_code ec;
    if (!fs::is_directory(s, ec))
      throw UsageError(fmt::format("{}: not a folder (a nightly shard's, a sharded run's, or "
                                   "one of case files)", s));
    if (is_shard_folder(s)) {
      out.push_back({s, true});
      continue;
    }
    std::vector<std::pair<int, fs::path>> shards;
    for (const auto& e : fs::directory_iterator(s, ec)) {
      std::smatch m;
      const std::string name = e.path().filename().string();
      if (std::regex_match(name, m, shard_name) && is_shard_folder(e.path()))
        shards.emplace_back(std::stoi(m[1]), e.path());
    }
    std::sort(shards.begin(), shards.end());
    if (shards.empty()) out.push_back({s, false});
    for (const auto& [n, path] : shards) out.push_back({path, true});
  }
  return out;
}

// "<count>\t<identity>" lines a fuzz target appended; a last line still being written
// (no newline yet) is left for the next merge.
void add_sighting_lines(const fs::path& file, std::map<std::string, int64_t>& sightings) {
  const std::string text = read_all(file);
  std::istringstream lines(text.substr(0, text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1));
  std::string line;
  while (std::getline(lines, line)) {
    const auto tab = line.find('\t');
    if (tab == std::string::npos) continue;
    try {
      sightings[line.substr(tab + 1)] += std::stoll(line.substr(0, tab));
    } catch (const std::exception&) {
    }
  }
}

std::string shard_state(const fs::path& folder, const RunState& state) {
  std::error_code ec;
  const fs::path summary = folder / "summary.json";
  if (fs::exists(summary, ec) &&
      fs::last_write_time(summary, ec) >= fs::last_write_time(folder / "state.json", ec)) {
    try {
      return json::parse(read_all(summary)).value("interrupted", false) ? "interrupted" : "finished";
    } catch (const std::exception&) {
    }
  }
  const std::string host = this_host();
  if (state.host == host && state.pid > 0 && fs::exists(fmt::format("/proc/{}", state.pid), ec))
    return "running";
  if (state.host == host) return "stopped early";
  return "no summary yet";  // another machine's: running there, or killed
}

int64_t files_in(const fs::path& dir) {
  std::error_code ec;
  int64_t n = 0;
  for (const auto& e : fs::directory_iterator(dir, ec)) n += e.is_regular_file();
  return n;
}

class Merge {
 public:
  explicit Merge(const MergeConfig& config) : config_(config) {}

  MergeResult run() {
    const std::vector<Source> sources = expand(config_.sources);
    for (const auto& removed : prepare_corpus(config_.into))
      say(fmt::format("removed {} (left by a killed writer)", removed));
    corpus_ = corpus_identities(config_.into);
    for (const auto& s : sources) {
      if (s.shard) read_shard(s.folder);
      copy_case_files(s.shard ? s.folder / "corpus" : s.folder, s.folder.string());
    }
    for (auto& [name, target] : targets_) result_.targets.push_back(target);
    for (auto& [identity, finding] : findings_) {
      // Every copy after the first is one more failure that showed it.
      if (finding.found_in.size() > 1) result_.sightings[identity] += int64_t(finding.found_in.size()) - 1;
      result_.findings.push_back(finding);
    }
    if (!config_.out.empty()) merge_fuzzer_corpora();
    return result_;
  }

 private:
  void say(const std::string& line) const {
    if (config_.say) config_.say(line);
  }

  void read_shard(const fs::path& folder) {
    const RunState state = read_run_state((folder / "state.json").string());
    MergedShard shard;
    shard.folder = folder.string();
    shard.state = shard_state(folder, state);
    shard.seconds = state.seconds;
    for (const auto& [key, tally] : state.tallies) {
      shard.cases += tally.cases;
      result_.searches[key].add(tally);
    }
    for (const auto& [identity, n] : state.sightings) result_.sightings[identity] += n;
    for (const auto& [name, t] : state.targets) {
      const FuzzerStats stats = parse_fuzzer_log(read_all(folder / "logs" / (name + ".log")));
      shard.executions += stats.executions;
      shard.exec_per_second += stats.exec_per_second;
      MergedTarget& m = targets_[name];
      m.name = name;
      m.kernel = t.kernel;
      m.impl = t.impl;
      ++m.shards;
      m.executions += stats.executions;
      m.exec_per_second += stats.exec_per_second;
      work_[name].push_back(folder / "work" / name);
      add_sighting_lines(folder / "sightings" / name, result_.sightings);
    }
    std::error_code ec;
    if (fs::is_directory(folder / "corpus", ec))
      shard.findings = int64_t(case_files_under({(folder / "corpus").string()}).size());
    result_.shards.push_back(shard);
  }

  // The case files under `folder`, from the source `source` (a shard's folder).
  void copy_case_files(const fs::path& folder, const std::string& source) {
    std::error_code ec;
    if (!fs::is_directory(folder, ec)) return;
    for (const auto& path : case_files_under({folder.string()})) {
      CaseFile file;
      try {
        file = read_case_file(path);
      } catch (const std::exception& e) {  // CaseError, or UsageError: a kernel this build lacks
        result_.unreadable.push_back(fmt::format("{}: {}", path, e.what()));
        continue;
      }
      const std::string bytes = read_all(path);
      const std::string key = file.identity.empty()
                                  ? "(no identity) " + fs::relative(path, folder).string()
                                  : file.identity;
      MergedFinding& f = findings_[key];
      f.identity = key;
      f.found_in.push_back(source);
      if (!f.file.empty()) continue;  // an earlier source's copy was the one kept
      const auto known = corpus_.find(key);
      if (known != corpus_.end()) {
        f.file = known->second;
        f.outcome = "already in the corpus";
        continue;
      }
      const fs::path target = free_name(fs::path(config_.into) / file.c.kernel / fs::path(path).filename(), bytes);
      f.file = target.string();
      corpus_[key] = f.file;
      if (fs::exists(target, ec)) {  // these very bytes: merged before
        f.outcome = "already in the corpus";
        continue;
      }
      write_file_atomically(target.string(), bytes);
      ++result_.added;
      f.outcome = "added";
      say(fmt::format("added {} -> {}", key, f.file));
    }
  }

  // `wanted`, or wanted-2.json, -3... when a different file already has its name.
  static fs::path free_name(const fs::path& wanted, const std::string& bytes) {
    fs::path candidate = wanted;
    std::error_code ec;
    for (int n = 2; fs::exists(candidate, ec) && read_all(candidate) != bytes; ++n)
      candidate = wanted.parent_path() / fmt::format("{}-{}.json", wanted.stem().string(), n);
    return candidate;
  }

  std::string target_binary(const std::string& kernel) const {
    for (const auto& folder : {config_.fuzzers, config_.fallback_fuzzers}) {
      if (folder.empty()) continue;
      const fs::path binary = fs::path(folder) / fuzz_target_name(kernel, "");
      std::error_code ec;
      if (fs::exists(binary, ec)) return binary.string();
    }
    return "";
  }

  void merge_fuzzer_corpora() {
    for (auto& target : result_.targets) {
      std::vector<std::string> inputs;
      for (const auto& dir : work_[target.name])
        if (files_in(dir) > 0) inputs.push_back(dir.string());
      if (inputs.empty()) continue;
      const std::string binary = target_binary(target.kernel);
      if (binary.empty()) {
        say(fmt::format("{}: working corpora not merged: no fuzz_{} in {}", target.name,
                        target.kernel, config_.fuzzers));
        continue;
      }
      const fs::path merged = fs::path(config_.out) / "work" / target.name;
      fs::create_directories(merged);
      fs::create_directories(fs::path(config_.out) / "logs");
      target.inputs_before = files_in(merged);
      // Under -merge=1 a target counts an input that shows a defect and goes on (the merged
      // corpus keeps what reaches defects; nothing is shrunk, the shards reported them). An
      // input that really crashes it leaves its artifact in a scratch folder, not where the
      // merge was run from.
      const fs::path scratch = fs::path(config_.out) / "logs" / ("merge-" + target.name + ".artifacts");
      fs::create_directories(scratch);
      FuzzerLaunch launch;
      launch.binary = binary;
      launch.arguments = {"-merge=1", "-artifact_prefix=" + scratch.string() + "/", merged.string()};
      launch.arguments.insert(launch.arguments.end(), inputs.begin(), inputs.end());
      launch.environment = {{"KPROP_IMPL", target.impl},
                            {"KPROP_CORPUS", config_.into},
                            {"KPROP_SHRINK_SECONDS", "0"},
                            {"ASAN_OPTIONS", "detect_leaks=0:abort_on_error=1:symbolize=1"}};
      launch.log = (fs::path(config_.out) / "logs" / ("merge-" + target.name + ".log")).string();
      FuzzerProcess process(launch);
      while (process.running()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      fs::remove_all(scratch);
      target.inputs_after = files_in(merged);
      say(fmt::format("{}: libFuzzer -merge=1 of {} working corpora: {} -> {} inputs in {}",
                      target.name, inputs.size(), target.inputs_before, target.inputs_after,
                      merged.string()));
    }
  }

  const MergeConfig& config_;
  MergeResult result_;
  std::map<std::string, std::string> corpus_;        // identity -> file, as merged so far
  std::map<std::string, MergedFinding> findings_;    // by identity
  std::map<std::string, MergedTarget> targets_;      // by name
  std::map<std::string, std::vector<fs::path>> work_;  // target -> shards' working corpora
};

json merge_json(const MergeConfig& config, const MergeResult& r) {
  json j{{"schema", "kprop-nightly-merge/1"}, {"into", config.into},
         {"added", r.added},                  {"shards", json::array()},
         {"findings", json::array()},         {"known_sightings", r.sightings},
         {"targets", json::array()},          {"searches", json::array()},
         {"unreadable", r.unreadable}};
  for (const auto& s : r.shards)
    j["shards"].push_back({{"folder", s.folder}, {"state", s.state}, {"seconds", s.seconds},
                           {"executions", s.executions}, {"exec_per_second", s.exec_per_second},
                           {"cases", s.cases}, {"findings", s.findings}});
  for (const auto& f : r.findings)
    j["findings"].push_back({{"identity", f.identity}, {"file", f.file},
                             {"found_in", f.found_in}, {"outcome", f.outcome}});
  for (const auto& t : r.targets)
    j["targets"].push_back({{"name", t.name}, {"kernel", t.kernel}, {"impl", t.impl},
                            {"shards", t.shards}, {"executions", t.executions},
                            {"exec_per_second", t.exec_per_second},
                            {"inputs_before", t.inputs_before}, {"inputs_after", t.inputs_after}});
  for (const auto& [key, t] : r.searches)
    j["searches"].push_back({{"search", key}, {"cases", t.cases}, {"passed", t.passed},
                             {"failed", t.failed}, {"known", t.known}, {"rejected", t.rejected},
                             {"skipped", t.skipped}, {"seconds", t.seconds}});
  return j;
}

}  // namespace

std::string default_merge_out(const std::vector<std::string>& sources) {
  std::set<std::string> runs;
  for (const auto& s : sources) {
    const fs::path folder = fs::path(s).lexically_normal();
    const fs::path run = is_shard_folder(folder) ? folder.parent_path() : folder;
    if (is_shard_folder(folder) && !run.empty()) runs.insert(run.string());
    else if (!is_shard_folder(folder) && expand({s}).front().shard) runs.insert(folder.string());
    else return "";
  }
  return runs.size() == 1 ? *runs.begin() : "";
}

MergeResult merge_nightly_outputs(const MergeConfig& config) {
  MergeResult r = Merge(config).run();
  if (!config.out.empty()) {
    write_file_atomically((fs::path(config.out) / "summary.json").string(), merge_summary_json(config, r));
    write_file_atomically((fs::path(config.out) / "summary.md").string(), merge_summary_markdown(config, r));
  }
  return r;
}

std::string merge_summary_json(const MergeConfig& config, const MergeResult& r) {
  return merge_json(config, r).dump(2) + "\n";
}

std::string merge_summary_markdown(const MergeConfig& config, const MergeResult& r) {
  const auto rate = [](double n, double s) { return s > 0 ? fmt::format("{:.1f}", n / s) : "-"; };
  std::string md = fmt::format("# kprop nightly: {} shard{} merged into `{}`\n\n", r.shards.size(),
                               r.shards.size() == 1 ? "" : "s", config.into);
  md += "| shard | state | s | fuzz executions | exec/s | search cases | cases/s | case files |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|\n";
  double seconds = 0;
  int64_t executions = 0, exec_per_second = 0, cases = 0, files = 0;
  for (const auto& s : r.shards) {
    md += fmt::format("| {} | {} | {:.0f} | {} | {} | {} | {} | {} |\n", s.folder, s.state,
                      s.seconds, s.executions, s.exec_per_second, s.cases, rate(s.cases, s.seconds),
                      s.findings);
    seconds = std::max(seconds, s.seconds);
    executions += s.executions;
    exec_per_second += s.exec_per_second;
    cases += s.cases;
    files += s.findings;
  }
  // Shards run side by side: the total rate is the sum of theirs.
  double cases_per_second = 0;
  for (const auto& s : r.shards) cases_per_second += s.seconds > 0 ? s.cases / s.seconds : 0;
  md += fmt::format("| all | | {:.0f} | {} | {} | {} | {:.1f} | {} |\n", seconds, executions,
                    exec_per_second, cases, cases_per_second, files);
  int64_t added = 0, there = 0, repeated = 0;
  for (const auto& f : r.findings) {
    added += f.outcome == "added";
    there += f.outcome != "added";
    repeated += f.found_in.size() > 1;
  }
  md += fmt::format("\n## Findings ({}: {} added to the corpus, {} already there, {} found in more "
                    "than one folder)\n\n", r.findings.size(), added, there, repeated);
  if (r.findings.empty()) md += "None.\n";
  for (const auto& f : r.findings) {
    md += fmt::format("- `{}`: {} `{}`; found in {}\n", f.identity, f.outcome, f.file,
                      fmt::format("{}", fmt::join(f.found_in, ", ")));
  }
  md += fmt::format("\n## Known identities seen again ({})\n\n", r.sightings.size());
  if (r.sightings.empty()) md += "None.\n";
  else md += "| failures | identity |\n|---:|---|\n";
  for (const auto& [identity, count] : r.sightings) md += fmt::format("| {} | `{}` |\n", count, identity);
  md += "\n## Fuzz targets (summed over shards)\n\n| target | shards | executions | exec/s | "
        "merged working corpus (inputs before -> after) |\n|---|---:|---:|---:|---|\n";
  for (const auto& t : r.targets)
    md += fmt::format("| {} | {} | {} | {} | {} |\n", t.name, t.shards, t.executions,
                      t.exec_per_second,
                      t.inputs_after < 0 ? std::string("not merged")
                                         : fmt::format("{} -> {}", t.inputs_before, t.inputs_after));
  md += "\n## Searches (summed over shards)\n\n| search | cases | passed | failed (known) | "
        "rejected | skipped | s |\n|---|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& [key, t] : r.searches)
    md += fmt::format("| {} | {} | {} | {} ({}) | {} | {} | {:.1f} |\n", key, t.cases, t.passed,
                      t.failed, t.known, t.rejected, t.skipped, t.seconds);
  if (!r.unreadable.empty()) {
    md += "\n## Case files not merged\n\n";
    for (const auto& u : r.unreadable) md += "- " + u + "\n";
  }
  return md;
}

}  // namespace kprop
