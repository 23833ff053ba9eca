#include "harness/nightly/run_state.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "core/errors.h"
#include "harness/storage/atomic_file.h"
#include "harness/storage/case_file.h"

namespace kprop {

using json = nlohmann::json;

namespace {

json finding_to_json(const NightlyFinding& f) {
  return {{"identity", f.identity},   {"file", f.file},
          {"found_by", f.found_by},   {"artifact", f.artifact},
          {"signature", f.signature}, {"minimal", case_to_json(f.minimal)},
          {"default_impl", f.default_impl}};
}

NightlyFinding finding_from_json(const json& j) {
  NightlyFinding f;
  f.identity = j.at("identity");
  f.file = j.at("file");
  f.found_by = j.at("found_by");
  f.artifact = j.at("artifact");
  f.signature = j.at("signature");
  f.minimal = case_from_json(j.at("minimal"), "state.json: findings");
  f.default_impl = j.at("default_impl");
  return f;
}

json tally_to_json(const Tally& t) {
  return {{"cases", t.cases},   {"passed", t.passed},     {"failed", t.failed},
          {"known", t.known},   {"rejected", t.rejected}, {"skipped", t.skipped},
          {"seconds", t.seconds}};
}

Tally tally_from_json(const json& j) {
  Tally t;
  t.cases = j.at("cases");
  t.passed = j.at("passed");
  t.failed = j.at("failed");
  t.known = j.at("known");
  t.rejected = j.at("rejected");
  t.skipped = j.at("skipped");
  t.seconds = j.at("seconds");
  return t;
}

}  // namespace

std::string this_host() {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return host;
}

RunState read_run_state(const std::string& path) {
  RunState s;
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return s;
  std::ifstream in(path, std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  try {
    const json j = json::parse(text);
    for (const auto& a : j.at("processed")) s.processed.insert(a.get<std::string>());
    for (const auto& f : j.at("findings")) s.findings.push_back(finding_from_json(f));
    for (const auto& [k, v] : j.at("positions").items()) s.positions[k] = v;
    // Fields a state written before them lacks (a range-for over a temporary's items()
    // would outlive it: each is named first).
    const json tallies = j.value("tallies", json::object()), sightings = j.value("sightings", json::object()),
               targets = j.value("targets", json::object());
    for (const auto& [k, v] : tallies.items()) s.tallies[k] = tally_from_json(v);
    for (const auto& [k, v] : sightings.items()) s.sightings[k] = v;
    for (const auto& [k, v] : targets.items()) s.targets[k] = {v.at("kernel"), v.at("impl")};
    s.seconds = j.value("seconds", 0.0);
    s.host = j.value("host", "");
    s.pid = j.value("pid", int64_t{0});
    s.shard_index = j.value("shard_index", 0);
    s.shard_count = j.value("shard_count", 1);
  } catch (const std::exception& e) {
    throw FileError(fmt::format("{}: not a kprop nightly state ({}); remove it or choose "
                                "another --out", path, e.what()));
  }
  return s;
}

void write_run_state(const std::string& path, const RunState& s) {
  json j{{"processed", s.processed}, {"positions", s.positions}, {"findings", json::array()},
         {"tallies", json::object()}, {"sightings", s.sightings}, {"targets", json::object()},
         {"seconds", s.seconds},      {"host", s.host},           {"pid", s.pid},
         {"shard_index", s.shard_index}, {"shard_count", s.shard_count}};
  for (const auto& f : s.findings) j["findings"].push_back(finding_to_json(f));
  for (const auto& [k, t] : s.tallies) j["tallies"][k] = tally_to_json(t);
  for (const auto& [k, t] : s.targets) j["targets"][k] = {{"kernel", t.kernel}, {"impl", t.impl}};
  write_file_atomically(path, j.dump(1) + "\n");
}

}  // namespace kprop
