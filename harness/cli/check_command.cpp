// kprop check [KERNEL]: the command line of check (harness/api/check.h): its options as a
// CheckRequest, its report printed. Failures whose identities the corpus already holds are
// counted as known and the search goes on, so a run looks for what is new.
//
// Nothing found is lost: the corpus folder is checked before the search (exit 2), a
// finding that cannot be written is printed whole, and SIGINT/SIGTERM end the run with
// the summary so far (exit 1 when something failed, else 128 + the signal). A run where
// most cases were refused checked little: it fails, naming the commonest refusal.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
#include <optional>

#include "core/errors.h"
#include "harness/api/check.h"
#include "harness/cli/check_text.h"
#include "harness/cli/commands.h"
#include "harness/cli/entry.h"
#include "harness/cli/progress.h"
#include "harness/cli/style.h"
#include "harness/engine/corpus.h"
#include "harness/engine/property.h"
#include "harness/execution/implementations.h"
#include "harness/execution/interrupt.h"
#include "harness/execution/isolation.h"
#include "harness/execution/takes.h"
#include "harness/model/kernel.h"
#include "harness/presentation/report.h"

namespace kprop {

void add_check_command(CLI::App& app, CheckOptions& o) {
  auto* cmd = app.add_subcommand("check", "search for a failing case, shrink it, keep it");
  cmd->add_option("kernel", o.kernel, "kernel to test (default: the first registered)");
  cmd->add_option("--impl", o.impl, "implementation (default: the kernel's own, e.g. tiled)");
  cmd->add_option("--cases", o.cases, "cases to draw (default: 1000)")
      ->check(CLI::Range(int64_t{1}, int64_t{1'000'000'000}));
  cmd->add_option("--seed", o.seed, "seed of the case stream (default: 0)")->check(not_negative());
  cmd->add_option("--property", o.properties, "property to check; repeatable (default: all)");
  cmd->add_option("--dtype", o.dtypes, "dtype to draw; repeatable (default: per property)");
  cmd->add_option("--set", o.set,
                  "NAME=VALUE: pin a parameter in every case (cotangents=" + cotangent_names("|") +
                      " pins the upstream gradients); repeatable")
      ->allow_extra_args(false);
  cmd->add_option("--limit", o.limits, "NAME=N: a limit of the kernel's generator; repeatable")
      ->allow_extra_args(false);
  cmd->add_option("--max-segments", o.max_segments, "= --limit max_segments=N")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  cmd->add_option("--max-length", o.max_length, "= --limit max_length=N")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 30));
  cmd->add_flag("--no-shrink", o.no_shrink, "report the failing case as found");
  cmd->add_option("--shrink-seconds", o.shrink_seconds, "shrinking budget (default: 60)")
      ->check(finite_in(0, 1e6));
  cmd->add_option("--corpus", o.corpus, "corpus folder for new failures (default: corpus)");
  cmd->add_flag("--no-corpus", o.no_corpus, "keep nothing, skip nothing");
  add_common_options(cmd, o.common);
  add_isolation_options(cmd, o.isolation);
}

namespace {

// A kept finding, or the case file printed whole when it could not be written.
void print_unwritten(const std::string& error, const CaseFile& f) {
  fmt::print("\n{} could not keep this finding: {}\nthe case file, whole:\n{}\n", red("!"),
             error, to_json(f).dump(2));
}

CheckRequest check_request(const CheckOptions& o) {
  CheckRequest q;
  q.run = run_options(o.common, &o.isolation);
  q.kernel = o.kernel;
  q.impl = o.impl;
  q.cases = o.cases;
  q.seed = o.seed;
  q.properties = o.properties;
  q.dtypes = o.dtypes;
  q.set = o.set;
  q.limits = o.limits;
  if (o.max_segments) q.limits.push_back("max_segments=" + std::to_string(*o.max_segments));
  if (o.max_length) q.limits.push_back("max_length=" + std::to_string(*o.max_length));
  q.shrink = !o.no_shrink;
  q.shrink_seconds = o.shrink_seconds;
  if (!o.no_corpus) q.corpus = o.corpus;
  q.entry_name = entry().name;
  return q;
}

}  // namespace

void print_check_plan(const CheckPlan& plan) {
  fmt::print("kprop check {} --impl {} --seed {}: {} cases over {}{}\n", plan.kernel, plan.impl,
             plan.seed, plan.cases, fmt::join(plan.properties, ", "),
             plan.known_identities == 0
                 ? ""
                 : fmt::format(" ({} known defects in {})", plan.known_identities, plan.corpus));
  if (plan.gradient_dtype)
    fmt::print("{} takes no float64: gradient checks its backward in {} against the float64 "
               "reference's gradient, within the derived bound\n",
               plan.impl, to_string(*plan.gradient_dtype));
}

int run_check(const CheckOptions& o) {
  std::optional<ProgressLine> progress;
  CheckCallbacks callbacks;
  callbacks.on_start = [&](const CheckPlan& plan) {
    if (!o.common.json) print_check_plan(plan);
    for (const auto& path : plan.stale)
      fmt::print(stderr, "kprop: removed {} (left by a writer that was killed)\n", path);
    progress.emplace(plan.cases);
  };
  callbacks.on_progress = [&](const Tally& t, const std::string& phase) { progress->update(t, phase); };
  const CheckRequest request = check_request(o);
  const CheckReport report = check(request, callbacks);
  if (progress) progress->finish();

  // The result as JSON: what --json prints.
  const nlohmann::json out = to_json(report);
  if (entry().result) entry().result(out.dump());
  if (o.common.json) {
    fmt::print("{}\n", out.dump(2));
    std::fflush(stdout);
    return report.exit_code;
  }
  print_check_report(request, report);
  return report.exit_code;
}

void print_check_report(const CheckRequest& request, const CheckReport& report) {
  const SearchResult& r = report.search;
  const bool stopped = report.stopped;
  const bool was_interrupted = !report.interrupted_by.empty();
  const auto& refused = report.mostly_refused;
  const auto& kept = report.kept;
  const auto& also_kept = report.also_kept;
  if (stopped)
    fmt::print("interrupted by {}: the search stopped; the summary so far:\n", report.interrupted_by);
  fmt::print("{}\n{}", format_tally(r.tally), format_property_tallies(r.tally));
  // In-process calls only: an isolated worker's time is its own.
  if (const auto profile = CallProfile::totals(); profile.count(CallProfile::Part::implementation) > 0)
    fmt::print("{}\n", format_call_profile(profile, r.tally.seconds));
  // What isolation cost this run: the workers' starts, and the rest per isolated case.
  if (const IsolationStats& isolated = report.isolated; isolated.cases > 0)
    fmt::print("isolation: {} cases in worker processes, {} started ({:.2f} s starting them): "
               "{:.2f} ms per case apart from the starts\n",
               isolated.cases, isolated.workers_started, isolated.start_seconds,
               1e3 * (r.tally.seconds - isolated.start_seconds) / isolated.cases);
  for (const auto& [reason, count] : r.rejections)
    fmt::print("  rejected {} x: {}\n", count, reason);
  for (const auto& [reason, count] : r.not_taken)
    fmt::print("  not taken {} x: {}\n", count, reason);
  for (const auto& [identity, count] : r.sightings)
    fmt::print("  known {} x: {}\n", count, identity);
  if (refused)
    fmt::print("{}: {} of the {} cases run were refused; the commonest refusal ({} x): {}\n",
               red("FAIL"), r.tally.rejected, cases_run(r.tally), refused->second, refused->first);
  if (!r.failure) {
    if (stopped)
      fmt::print("no new counterexample in the {} cases run before the interrupt\n",
                 r.tally.cases + r.tally.known);
    else if (!refused)
      fmt::print("{}: no new counterexample in {} cases\n", green("PASS"),
                 r.tally.cases + r.tally.known);
    std::fflush(stdout);
    return;
  }
  const Failure& f = *r.failure;
  fmt::print("\n{} after {} cases ({:.2f} s): {}\n", red("FAIL"), f.case_number,
             f.seconds_to_find, f.found_verdict.signature());
  if (f.shrunk)
    fmt::print("shrunk in {} steps, {} evaluations, {:.2f} s{}\n", f.shrunk->steps,
               f.shrunk->evaluations, f.shrunk->seconds,
               was_interrupted ? fmt::format(" (interrupted by {}: may not be minimal)",
                                             report.interrupted_by)
               : f.shrunk->budget_exhausted ? " (budget exhausted: not minimal)" : "");
  fmt::print("defect: {}\n", f.identity);
  fmt::print("\nminimal case:\n{}\n{}\n", format_case(f.minimal()), f.verdict().message);
  if (!f.verdict().tensors.empty() || !f.verdict().memory.empty())
    fmt::print("{}", format_error_table(f.verdict()));
  if (kept && kept->error.empty()) {
    // What replays it: this entry, with the libraries and modules that registered it.
    std::string replay = fmt::format("{} replay {}", request.entry_name, kept->path);
    for (const auto& lib : request.run.libraries) replay += " --load " + lib;
    for (const auto& module : request.run.imports) replay += " --import " + module;
    fmt::print("\n{} {}\nreplay: {}\n",
               kept->written ? "kept in the corpus:" : "already in the corpus:", kept->path,
               replay);
  }
  for (size_t i = 1; i < r.failures.size(); ++i)
    fmt::print("the same case also shows: {}\n{}", r.failures[i].identity,
               i - 1 < also_kept.size() && also_kept[i - 1].error.empty()
                   ? fmt::format("  {} {}\n", also_kept[i - 1].written ? "kept:" : "already in the corpus:",
                                 also_kept[i - 1].path)
                   : std::string());
  for (const auto& [error, file] : report.unwritten) print_unwritten(error, file);
  std::fflush(stdout);
}

}  // namespace kprop
