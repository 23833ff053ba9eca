// kprop nightly: the libFuzzer targets and the searches for a time budget; every finding
// shrunk, named and kept (harness/nightly/nightly.h). Exit 1 when a default
// implementation failed, 0 otherwise (new defects of historical states are findings,
// not a broken build); 2 on bad usage. SIGINT/SIGTERM stop it with the summary so far.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <regex>
#include <thread>

#include "generators/errors.h"
#include "harness/cli/commands.h"
#include "harness/cli/entry.h"
#include "harness/engine/corpus.h"
#include "harness/execution/interrupt.h"
#include "harness/execution/own_executable.h"
#include "harness/nightly/nightly.h"

namespace kprop {


namespace {

// "90", "90s", "30m", "8h", "1h30m" -> seconds.
double parse_budget(const std::string& text) {
  static const std::regex part(R"((\d+(?:\.\d+)?)([smh]?))");
  double seconds = 0;
  size_t at = 0;
  for (std::sregex_iterator it(text.begin(), text.end(), part), end; it != end; ++it) {
    if (size_t(it->position()) != at) break;
    const double v = std::stod((*it)[1]);
    const std::string unit = (*it)[2];
    seconds += v * (unit == "h" ? 3600 : unit == "m" ? 60 : 1);
    at += it->length();
  }
  if (text.empty() || at != text.size() || seconds <= 0)
    throw UsageError(fmt::format("--budget '{}': expected a duration such as 90s, 30m or 8h", text));
  return seconds;
}

}  // namespace

void add_nightly_command(CLI::App& app, NightlyOptions& o) {
  auto* cmd = app.add_subcommand(
      "nightly", "run the libFuzzer targets and the searches for a time budget; keep findings");
  cmd->add_option("--kernel", o.kernels, "kernel to fuzz; repeatable (default: all)");
  cmd->add_option("--impl", o.impls, "implementation; repeatable (default: every built-in one)");
  cmd->add_option("--budget", o.budget, "how long: 90s, 30m, 8h (default: 8h)");
  cmd->add_option("--jobs", o.jobs, "processes at once (default: the machine's cores)")
      ->check(CLI::Range(0, 4096));
  cmd->add_option("--corpus", o.corpus, "corpus: seeds the fuzzers, receives findings")
      ->capture_default_str();
  cmd->add_option("--out", o.out, "folder of the run: working corpora, logs, summary")
      ->required();
  cmd->add_option("--fuzzers", o.fuzzers, "folder of the fuzz_<kernel> targets (default: fuzz-fast/ "
                                          "beside kprop, else, per kernel, fuzz/)");
  cmd->add_option("--seed", o.seed, "seed of the searches (default: 0)")->check(not_negative());
  cmd->add_option("--shrink-seconds", o.shrink_seconds, "shrinking budget per symptom (default: 30)")
      ->check(finite_in(0, 1e6));
  add_common_options(cmd, o.common);
  add_isolation_options(cmd, o.isolation);
}

int run_nightly(const NightlyOptions& o) {
  load_libraries(o.common);
  apply_isolation(o.common, o.isolation);
  NightlyConfig config;
  config.kernels = o.kernels;
  for (const auto& k : config.kernels) kernel_or_default(k);  // unknown names listed
  config.impls = o.impls;
  config.libraries = o.common.libraries;
  config.refusals = o.isolation.refusals;
  config.budget_seconds = parse_budget(o.budget);
  config.jobs = o.jobs > 0 ? o.jobs : int(std::max(1u, std::thread::hardware_concurrency()));
  config.corpus = o.corpus;
  config.out = o.out;
  // By default the speed build's targets (harness/fuzz/instrumentation.cmake: no
  // sanitizers; tiled ran 1.9x the executions, with 89% of them checked instead of 1%),
  // and for a kernel it lacks, the sanitizer build's.
  config.fuzzers = o.fuzzers.empty() ? beside_own_executable("fuzz-fast").string() : o.fuzzers;
  if (o.fuzzers.empty()) config.fallback_fuzzers = beside_own_executable("fuzz").string();
  config.seed = o.seed;
  config.shrink_seconds = o.shrink_seconds;
  // With --json, stdout holds the JSON summary alone (as every command's does); the
  // progress goes to stderr.
  std::FILE* say_to = o.common.json ? stderr : stdout;
  for (const auto& removed : prepare_corpus(o.corpus))  // unwritable: exit 2 now, not after hours
    fmt::print(say_to, "removed {} (left by a killed run)\n", removed);
  config.say = [say_to](const std::string& line) {
    fmt::print(say_to, "{}\n", line);
    std::fflush(say_to);
  };
  install_interrupt_handlers();
  config.interrupted = [] { return interrupted(); };

  const NightlyResult r = run_nightly(config);
  write_nightly_summary(config, r);
  if (entry().result) entry().result(nightly_summary_json(config, r));
  if (o.common.json) {
    fmt::print("{}", nightly_summary_json(config, r));
  } else {
    fmt::print("{}", nightly_summary_markdown(config, r));
    fmt::print("summary: {}/summary.md, {}/summary.json\n", o.out, o.out);
  }
  std::fflush(stdout);
  if (r.default_failed) return 1;
  return r.interrupted ? interrupted_exit_code() : 0;
}

}  // namespace kprop
