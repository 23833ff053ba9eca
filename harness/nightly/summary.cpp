// The nightly run's summary, for people (summary.md) and machines (summary.json).
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>

#include "generators/schema.h"
#include "harness/model/kernel.h"
#include "harness/nightly/nightly.h"
#include "harness/storage/atomic_file.h"
#include "harness/storage/case_file.h"

namespace kprop {

using json = nlohmann::json;

namespace {

json summary_json(const NightlyConfig& config, const NightlyResult& r) {
  json j{{"schema", "kprop-nightly/1"},
         {"seconds", r.seconds},
         {"budget_seconds", config.budget_seconds},
         {"jobs", config.jobs},
         {"interrupted", r.interrupted},
         {"default_implementation_failed", r.default_failed},
         {"corpus", config.corpus},
         {"kept_in", config.keep_in.empty() ? config.corpus : config.keep_in},
         {"shard", {{"index", config.shard.index}, {"count", config.shard.count},
                    {"source", config.shard.source}}},
         {"findings", json::array()},
         {"known_sightings", r.sightings},
         {"targets", json::array()},
         {"searches", json::array()},
         {"unreproduced", r.unreproduced}};
  for (const auto& f : r.findings)
    j["findings"].push_back({{"identity", f.identity},
                             {"file", f.file},
                             {"found_by", f.found_by},
                             {"artifact", f.artifact},
                             {"signature", f.signature},
                             {"minimal", case_to_json(f.minimal)}});
  for (const auto& t : r.targets)
    j["targets"].push_back({{"name", t.name},
                            {"kernel", t.kernel},
                            {"impl", t.impl},
                            {"executions", t.stats.executions},
                            {"exec_per_second", t.stats.exec_per_second},
                            {"coverage", t.stats.coverage},
                            {"features", t.stats.features},
                            {"corpus", t.stats.corpus},
                            {"crashes", t.stats.crashes},
                            {"timeouts", t.stats.timeouts},
                            {"ooms", t.stats.ooms},
                            {"artifacts", t.artifacts},
                            {"seconds", t.seconds}});
  for (const auto& s : r.searches)
    j["searches"].push_back({{"kernel", s.kernel},
                             {"impl", s.impl},
                             {"property", s.property},
                             {"cases", s.tally.cases},
                             {"passed", s.tally.passed},
                             {"failed", s.tally.failed},
                             {"known", s.tally.known},
                             {"rejected", s.tally.rejected},
                             {"skipped", s.tally.skipped},
                             {"seconds", s.tally.seconds}});
  return j;
}

}  // namespace

std::string nightly_summary_markdown(const NightlyConfig& config, const NightlyResult& r) {
  std::string md = "# kprop nightly\n\n";
  md += fmt::format("{:.0f} s of a {:.0f} s budget on {} job{}{}; corpus `{}`.\n\n", r.seconds,
                    config.budget_seconds, config.jobs, config.jobs == 1 ? "" : "s",
                    r.interrupted ? " (interrupted)" : "", config.corpus);
  if (config.shard.sharded())
    md += fmt::format("Shard {} of {} ({}); findings kept in `{}` until `kprop corpus merge`.\n\n",
                      config.shard.index + 1, config.shard.count, config.shard.source, config.keep_in);
  md += r.default_failed ? "**A default implementation failed.**\n\n"
                         : "No default implementation failed.\n\n";
  md += fmt::format("## New findings ({})\n\n", r.findings.size());
  if (r.findings.empty()) md += "None.\n\n";
  for (const auto& f : r.findings) {
    md += fmt::format("- `{}`\n  - minimal case: `{}` ({})\n  - kept: `{}`\n  - found by {}{}\n",
                      f.identity, summary(find_kernel(f.minimal.kernel).schema(), f.minimal),
                      to_string(f.minimal.dtype), f.file, f.found_by,
                      f.artifact.empty() ? "" : fmt::format(" (input `{}`)", f.artifact));
  }
  md += fmt::format("\n## Known identities seen again ({})\n\n", r.sightings.size());
  if (r.sightings.empty()) md += "None.\n";
  else md += "| failures | identity |\n|---:|---|\n";
  for (const auto& [identity, count] : r.sightings) md += fmt::format("| {} | `{}` |\n", count, identity);
  md += "\n## Fuzz targets\n\n| target | s | executions | exec/s | coverage | features | corpus | "
        "crash/timeout/oom | artifacts |\n|---|---:|---:|---:|---:|---:|---:|---|---:|\n";
  for (const auto& t : r.targets)
    md += fmt::format("| {} | {:.0f} | {} | {} | {} | {} | {} | {}/{}/{} | {} |\n", t.name,
                      t.seconds, t.stats.executions, t.stats.exec_per_second, t.stats.coverage,
                      t.stats.features, t.stats.corpus, t.stats.crashes, t.stats.timeouts,
                      t.stats.ooms, t.artifacts);
  md += "\n## Searches\n\n| kernel | impl | property | cases | passed | failed (known) | rejected | "
        "skipped | s |\n|---|---|---|---:|---:|---:|---:|---:|---:|\n";
  for (const auto& s : r.searches)
    md += fmt::format("| {} | {} | {} | {} | {} | {} ({}) | {} | {} | {:.1f} |\n", s.kernel, s.impl,
                      s.property, s.tally.cases, s.tally.passed, s.tally.failed, s.tally.known,
                      s.tally.rejected, s.tally.skipped, s.tally.seconds);
  if (!r.unreproduced.empty()) {
    md += "\n## Fuzzer artifacts that do not fail outside the fuzzer\n\n";
    for (const auto& u : r.unreproduced) md += "- " + u + "\n";
  }
  return md;
}

std::string nightly_summary_json(const NightlyConfig& config, const NightlyResult& r) {
  return summary_json(config, r).dump(2) + "\n";
}

void write_nightly_summary(const NightlyConfig& config, const NightlyResult& r) {
  const auto dir = std::filesystem::path(config.out);
  write_file_atomically((dir / "summary.json").string(), nightly_summary_json(config, r));
  write_file_atomically((dir / "summary.md").string(), nightly_summary_markdown(config, r));
}

}  // namespace kprop
