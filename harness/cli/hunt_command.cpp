// kprop hunt [KERNEL]: the command line of hunt (harness/api/hunt.h): look for each known
// defect of the kernel's historical states, shrink it to a minimal case and keep it in the
// corpus under the defect's name. The exit code is 1 if a known defect was not found (a
// regression of kprop's search), else 0.
#include <fmt/format.h>

#include <cstdio>

#include "harness/api/hunt.h"
#include "harness/cli/commands.h"
#include "harness/cli/hunt_text.h"
#include "harness/cli/entry.h"
#include "harness/cli/style.h"
#include "harness/engine/corpus.h"
#include "harness/model/kernel.h"
#include "harness/presentation/report.h"

namespace kprop {

void add_hunt_command(CLI::App& app, HuntOptions& o) {
  auto* cmd = app.add_subcommand("hunt", "find, shrink and keep each known defect");
  cmd->add_option("kernel", o.kernel, "kernel (default: the first registered)");
  cmd->add_option("--defect", o.defects, "defect name; repeatable (default: all)");
  cmd->add_option("--seed", o.seed, "seed of the case stream (default: 0)")->check(not_negative());
  cmd->add_option("--cases", o.cases, "cases per hunt (default: 5000)")
      ->check(CLI::Range(int64_t{1}, int64_t{1000000000}));
  cmd->add_option("--corpus", o.corpus, "corpus folder (default: corpus)");
  cmd->add_flag("--no-corpus", o.no_corpus, "keep nothing");
  add_common_options(cmd, o.common);
}

void print_hunt(const Hunt& h, int64_t cases) {
  if (!h.found) {
    fmt::print("{} {} on {}: not found in {} cases\n", red("MISSED"), h.defect, h.impl, cases);
    return;
  }
  if (h.unwritten)
    fmt::print("could not keep {}: {}; the case file, whole:\n{}\n", h.defect, h.kept->error,
               to_json(*h.unwritten).dump(2));
  const Failure& f = *h.found;
  fmt::print("{} {} on {} after {} cases ({:.2f} s): {}\n  {}\n{}", green("FOUND"), h.defect,
             h.impl, h.cases, h.seconds, f.identity,
             summary(find_kernel(f.minimal().kernel).schema(), f.minimal()),
             !h.kept ? ""
                     : fmt::format("  {} {}\n", h.kept->written ? "kept:" : "already in the corpus:",
                                   h.kept->path));
}

int run_hunt(const HuntOptions& o) {
  HuntRequest request;
  request.run = run_options(o.common);
  request.kernel = o.kernel;
  request.defects = o.defects;
  request.seed = o.seed;
  request.cases = o.cases;
  if (!o.no_corpus) request.corpus = o.corpus;
  HuntCallbacks callbacks;
  callbacks.on_start = [](const std::vector<std::string>& stale) {
    for (const auto& path : stale)
      fmt::print(stderr, "kprop: removed {} (left by a writer that was killed)\n", path);
  };
  callbacks.on_hunt = [&](const Hunt& h) {
    if (!o.common.json) print_hunt(h, o.cases);
  };
  const HuntReport report = hunt(request, callbacks);
  if (report.stopped && !o.common.json)
    fmt::print("interrupted by {}: the hunt stopped after {} hunts\n", report.interrupted_by,
               report.hunts.size());
  const nlohmann::json out = to_json(report);
  if (entry().result) entry().result(out.dump());
  if (o.common.json) fmt::print("{}\n", out.dump(2));
  std::fflush(stdout);
  return report.exit_code;
}

}  // namespace kprop
