// kprop nightly: the libFuzzer targets and the searches for a time budget; every finding
// shrunk, named and kept (harness/nightly/nightly.h). Exit 1 when a default
// implementation failed, 0 otherwise (new defects of historical states are findings,
// not a broken build); 2 on bad usage. SIGINT/SIGTERM stop it with the summary so far.
#include <fmt/format.h>
#include <sched.h>
#include <torch/cuda.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <thread>

#include "core/errors.h"
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

// The CPUs this process may run on (a Slurm task's or a container's share, taskset's),
// which hardware_concurrency() does not see.
int usable_cpus() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return int(std::max(1u, std::thread::hardware_concurrency()));
}

}  // namespace

void add_nightly_command(CLI::App& app, NightlyOptions& o) {
  auto* cmd = app.add_subcommand(
      "nightly", "run the libFuzzer targets and the searches for a time budget; keep findings");
  cmd->add_option("--kernel", o.kernels, "kernel to fuzz; repeatable (default: all)");
  cmd->add_option("--impl", o.impls, "implementation; repeatable (default: every built-in one)");
  cmd->add_option("--budget", o.budget, "how long: 90s, 30m, 8h (default: 8h)");
  cmd->add_option("--jobs", o.jobs, "processes at once (default: the CPUs it may run on)")
      ->check(CLI::Range(0, 4096));
  cmd->add_option("--corpus", o.corpus, "corpus: seeds the fuzzers, receives findings")
      ->capture_default_str();
  cmd->add_option("--out", o.out, "folder of the run: working corpora, logs, summary")
      ->required();
  cmd->add_option("--fuzzers", o.fuzzers, "folder of the fuzz_<kernel> targets (default: fuzz-fast/ "
                                          "beside kprop, else, per kernel, fuzz/)");
  cmd->add_option("--seed", o.seed, "seed of the searches (default: 0)")->check(not_negative());
  cmd->add_option("--shard", o.shard, "run shard I of N (I from 0; /N takes I from "
                                      "SLURM_ARRAY_TASK_ID, JOB_COMPLETION_INDEX or "
                                      "GTEST_SHARD_INDEX) into OUT/shard-<I+1>-of-<N>/");
  cmd->add_option("--shrink-seconds", o.shrink_seconds, "shrinking budget per symptom (default: 30)")
      ->check(finite_in(0, 1e6));
  add_common_options(cmd, o.common);
  add_isolation_options(cmd, o.isolation);
}

int run_nightly(const NightlyOptions& o) {
  const Shard shard = shard_from(o.shard, [](const char* name) { return std::getenv(name); });
  CommonOptions common = o.common;
  common.device = shard.device(o.common.device, int(torch::cuda::device_count()));
  const auto session = open_session(run_options(common, &o.isolation));
  NightlyConfig config;
  config.shard = shard;
  config.kernels = o.kernels;
  for (const auto& k : config.kernels) kernel_or_default(k);  // unknown names listed
  config.impls = o.impls;
  config.libraries = o.common.libraries;
  config.imports = o.common.imports;
  config.refusals = o.isolation.refusals;
  config.budget_seconds = parse_budget(o.budget);
  config.jobs = o.jobs > 0 ? o.jobs : usable_cpus();
  config.corpus = o.corpus;
  config.out = o.out;
  if (shard.sharded()) {
    config.out = (std::filesystem::path(o.out) / shard.folder_name()).string();
    config.keep_in = (std::filesystem::path(config.out) / "corpus").string();
    config.seed_work = (std::filesystem::path(o.out) / "work").string();
  }
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
  // Unwritable: exit 2 now, not after hours.
  for (const auto& removed : prepare_corpus(config.keep_in.empty() ? o.corpus : config.keep_in))
    fmt::print(say_to, "removed {} (left by a killed run)\n", removed);
  if (shard.sharded())
    fmt::print(say_to, "shard {} of {} ({}) on {}, into {}\n", shard.index + 1, shard.count,
               shard.source, common.device, config.out);
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
    fmt::print("summary: {}/summary.md, {}/summary.json\n", config.out, config.out);
  }
  std::fflush(stdout);
  if (r.default_failed) return 1;
  return r.interrupted ? interrupted_exit_code() : 0;
}

}  // namespace kprop
