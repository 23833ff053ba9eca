// kprop corpus merge: the findings of nightly shards (or any corpus folders) become one
// corpus, with one summary (harness/nightly/merge.h). Exit 0 when merged, 2 on bad usage
// or a folder that cannot be written.
#include <fmt/format.h>

#include <cstdio>

#include "harness/cli/commands.h"
#include "harness/execution/own_executable.h"
#include "harness/nightly/merge.h"

namespace kprop {

void add_corpus_command(CLI::App& app, CorpusMergeOptions& o) {
  auto* corpus = app.add_subcommand("corpus", "work on corpus folders: merge");
  corpus->require_subcommand(1);
  auto* cmd = corpus->add_subcommand(
      "merge", "merge the findings of nightly shards (or corpus folders) into one corpus");
  cmd->add_option("sources", o.sources,
                  "a shard's folder, a sharded run's folder (its shard-*-of-*), or case files")
      ->required();
  cmd->add_option("--into", o.into, "the corpus the findings go to")->capture_default_str();
  cmd->add_option("--out", o.out, "folder for summary.md/.json and the merged fuzzing corpora "
                                  "(default: the sharded run's folder)");
  cmd->add_option("--fuzzers", o.fuzzers, "folder of the fuzz_<kernel> targets (default: "
                                          "fuzz-fast/ beside kprop, else, per kernel, fuzz/)");
  add_common_options(cmd, o.common);
}

int run_corpus_merge(const CorpusMergeOptions& o) {
  // A corpus may hold cases of a --load library's kernels.
  const auto session = open_session(run_options(o.common));
  MergeConfig config;
  config.sources = o.sources;
  config.into = o.into;
  config.out = o.out.empty() ? default_merge_out(o.sources) : o.out;
  config.fuzzers = o.fuzzers.empty() ? beside_own_executable("fuzz-fast").string() : o.fuzzers;
  if (o.fuzzers.empty()) config.fallback_fuzzers = beside_own_executable("fuzz").string();
  std::FILE* say_to = o.common.json ? stderr : stdout;
  config.say = [say_to](const std::string& line) {
    fmt::print(say_to, "{}\n", line);
    std::fflush(say_to);
  };
  const MergeResult r = merge_nightly_outputs(config);
  if (o.common.json) {
    fmt::print("{}", merge_summary_json(config, r));
  } else {
    fmt::print("{}", merge_summary_markdown(config, r));
    if (!config.out.empty())
      fmt::print("summary: {}/summary.md, {}/summary.json\n", config.out, config.out);
  }
  return 0;
}

}  // namespace kprop
