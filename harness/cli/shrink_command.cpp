// kprop shrink FILE...: shrink a case that did not come from a search — written by hand,
// replayed from the corpus, decoded from fuzzer bytes — along its schema, keeping the
// defect it shows, and keep the minimum in the corpus as `check` does. A hand-written
// file needs only its "case". Each symptom of the failure is shrunk on its own; every
// identity not yet in the corpus is kept. Exit 0 when the case passes, 1 when it fails
// (whatever was kept), 2 on a bad file.
#include <fmt/format.h>

#include <cstdio>
#include <filesystem>

#include "core/errors.h"
#include "harness/cli/commands.h"
#include "harness/cli/entry.h"
#include "harness/cli/progress.h"
#include "harness/cli/style.h"
#include "harness/engine/corpus.h"
#include "harness/engine/property.h"
#include "harness/execution/implementations.h"
#include "harness/execution/interrupt.h"
#include "harness/model/identity.h"
#include "harness/model/kernel.h"
#include "harness/presentation/report.h"

namespace kprop {

namespace fs = std::filesystem;

void add_shrink_command(CLI::App& app, ShrinkOptions& o) {
  auto* cmd = app.add_subcommand("shrink", "shrink any failing case file and keep the minimum");
  cmd->add_option("paths", o.paths, "case files (a hand-written one needs only its case)")
      ->required();
  cmd->add_option("--impl", o.impl, "run the case on this implementation instead");
  cmd->add_option("--shrink-seconds", o.shrink_seconds, "budget per symptom (default: 60)")
      ->check(finite_in(0, 1e6));
  cmd->add_option("--corpus", o.corpus, "corpus folder for the minimal cases (default: corpus)");
  cmd->add_flag("--no-corpus", o.no_corpus, "keep nothing");
  cmd->add_option("--keep-as", o.keep_as,
                  "also keep the case itself as NAME.json, linked to its minimal case");
  add_common_options(cmd, o.common);
  add_isolation_options(cmd, o.isolation);
}

int run_shrink(const ShrinkOptions& o) {
  const auto session = open_session(run_options(o.common, &o.isolation));
  const bool use_corpus = !o.no_corpus && !o.corpus.empty();
  if (use_corpus)
    for (const auto& path : prepare_corpus(o.corpus))
      fmt::print(stderr, "kprop: removed {} (left by a writer that was killed)\n", path);
  // An interrupt ends each shrink with the smallest case so far, which is still kept.
  install_interrupt_handlers();
  nlohmann::json all = nlohmann::json::array();
  bool any_failed = false;
  const auto files = case_files_under(o.paths);
  if (!o.keep_as.empty() && (files.size() != 1 || !use_corpus))
    throw UsageError("--keep-as takes one case file and a corpus");
  for (const auto& path : files) {
    Case c = read_case_file(path).c;
    if (!o.impl.empty()) c.impl = resolve_implementation(c.kernel, o.impl).name;
    const Schema& schema = find_kernel(c.kernel).schema();
    const Verdict v = evaluate(c);
    nlohmann::json row{{"path", path}, {"verdict", to_string(v.status)}};
    if (!v.failed()) {
      if (!o.common.json)
        fmt::print("{} {}: {} ({}), nothing to shrink\n", bold(path), to_string(v.status),
                   summary(schema, c), v.message);
      all.push_back(row);
      continue;
    }
    any_failed = true;
    if (!o.common.json) fmt::print("{} fails: {}\n", bold(path), v.signature());
    // Every symptom on its own: a hand-written case may show several defects at once.
    nlohmann::json kept_rows = nlohmann::json::array();
    std::set<std::string> known;
    if (use_corpus)
      for (const auto& [identity, file] : corpus_identities(o.corpus)) known.insert(identity);
    // Localized first: the call of the property that is wrong on its own (harness/engine/diagnosis.h).
    const Localized direct = localize(c, v);
    for (const auto& symptom : direct.verdict.symptoms()) {
      Failure f;
      f.found = c;
      f.found_verdict = v;
      f.symptom = symptom;
      session->cut_short_on_interrupt(true);
      f.shrunk = shrink(direct.c, direct.verdict, symptom, o.shrink_seconds);
      session->cut_short_on_interrupt(false);
      f.identity = identity(schema, f.minimal(), f.verdict().symptom_like(symptom));
      nlohmann::json k{{"symptom", symptom},
                       {"identity", f.identity},
                       {"minimal", case_to_json(f.minimal())},
                       {"steps", f.shrunk->steps},
                       {"evaluations", f.shrunk->evaluations},
                       {"one_minimal", !f.shrunk->budget_exhausted}};
      std::string where;
      if (use_corpus) {
        nlohmann::json provenance{{"found_by", fmt::format("kprop shrink {}", path)},
                                  {"shrunk_from", case_to_json(c)},
                                  {"shrink_steps", f.shrunk->steps}};
        const CaseFile file = describe_failure(f, provenance);
        const Kept kept = try_keep(o.corpus, file);
        k["corpus"] = {{"path", kept.path}, {"written", kept.written}};
        where = fmt::format("{} {}", kept.written ? "kept:" : "already in the corpus:", kept.path);
        if (!kept.error.empty()) {
          // Not lost: the case file whole, on stdout.
          k["corpus"]["error"] = kept.error;
          k["unwritten_case_file"] = to_json(file);
          where = fmt::format("could not keep it: {}; the case file, whole:\n{}", kept.error,
                              to_json(file).dump(2));
        }
      }
      kept_rows.push_back(k);
      if (!o.common.json)
        fmt::print("  {} -> {} in {} steps ({:.2f} s){}\n    {}\n    {}\n", symptom,
                   f.identity, f.shrunk->steps, f.shrunk->seconds,
                   interrupted() ? fmt::format(" (interrupted by {}: may not be minimal)",
                                               interrupt_name())
                   : f.shrunk->budget_exhausted ? " (budget exhausted: not minimal)" : "",
                   summary(schema, f.minimal()), where);
    }
    row["shrunk"] = kept_rows;
    if (!o.keep_as.empty() && !kept_rows.empty() && kept_rows[0].contains("corpus") &&
        !kept_rows[0]["corpus"].contains("error")) {
      // The case as given, replayed as it is, pointing at the minimal case it shrinks to.
      Failure as_given;
      as_given.found = c;
      as_given.found_verdict = v;
      as_given.identity = kept_rows[0]["identity"].get<std::string>();
      CaseFile f = describe_failure(
          as_given, {{"found_by", fmt::format("kprop shrink {} --keep-as {}", path, o.keep_as)}});
      f.shrinks_to = fs::path(kept_rows[0]["corpus"]["path"].get<std::string>()).filename();
      const std::string target = (fs::path(o.corpus) / c.kernel / o.keep_as).string();
      write_case_file(target, f);
      row["kept_as"] = target;
      if (!o.common.json) fmt::print("  kept as given: {} (shrinks to {})\n", target, f.shrinks_to);
    }
    all.push_back(row);
  }
  if (entry().result) entry().result(all.dump());
  if (o.common.json) fmt::print("{}\n", all.dump(2));
  std::fflush(stdout);
  // Interrupted: what was shrunk so far is kept and printed; 1 if it failed.
  if (!any_failed && interrupted()) return interrupted_exit_code();
  return any_failed ? 1 : 0;
}

}  // namespace kprop
