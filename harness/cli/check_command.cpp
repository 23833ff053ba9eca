// kprop check [KERNEL]: search for a counterexample, shrink it, keep it in the corpus and
// report it. Failures whose identities the corpus already holds are counted as known and
// the search goes on, so a run looks for what is new.
//
// Nothing found is lost: the corpus folder is checked before the search (exit 2), a
// finding that cannot be written is printed whole, and SIGINT/SIGTERM end the run with
// the summary so far (exit 1 when something failed, else 128 + the signal). A run where
// most cases were refused checked little: it fails, naming the commonest refusal.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>

#include "core/errors.h"
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
#include "harness/model/kernel_info.h"
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

std::string today() {
  const std::time_t now = std::time(nullptr);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&now));
  return buf;
}

SearchOptions search_options(const CheckOptions& o) {
  SearchOptions s;
  s.kernel = kernel_or_default(o.kernel);
  const KernelInfo& kernel = find_kernel(s.kernel);
  s.impl = resolve_implementation(
               s.kernel, o.impl.empty() ? kernel.default_implementation() : o.impl).name;
  for (const auto& p : o.properties) find_property(p);
  s.properties = o.properties;
  for (const auto& name : o.dtypes) {
    auto d = parse_dtype(name);
    if (!d) throw UsageError(fmt::format("unknown dtype '{}'", name));
    s.dtypes.push_back(*d);
  }
  s.cases = o.cases;
  s.seed = o.seed;
  auto limits = o.limits;
  if (o.max_segments) limits.push_back("max_segments=" + std::to_string(*o.max_segments));
  if (o.max_length) limits.push_back("max_length=" + std::to_string(*o.max_length));
  s.limits = parse_limits(s.kernel, limits);
  s.fixed = parse_settings(s.kernel, o.set);
  s.shrink = !o.no_shrink;
  s.shrink_seconds = o.shrink_seconds;
  return s;
}

nlohmann::json provenance_of(const CheckOptions& o, const SearchOptions& s, const Failure& f) {
  std::string command = fmt::format("{} check {} --impl {} --seed {} --cases {}", entry().name,
                                    s.kernel, s.impl, s.seed, s.cases);
  for (const auto& p : s.properties) command += " --property " + p;
  for (const auto& setting : o.set) command += " --set " + setting;
  for (const auto& lib : o.common.libraries) command += " --load " + lib;
  for (const auto& module : o.common.imports) command += " --import " + module;
  for (const auto& text : o.isolation.refusals) command += fmt::format(" --refusal '{}'", text);
  return {{"found_by", command},
          {"search_seed", s.seed},
          {"case_number", f.case_number},
          {"found_case", case_to_json(f.found)},
          {"shrink_steps", f.shrunk ? f.shrunk->steps : 0},
          {"shrink_evaluations", f.shrunk ? f.shrunk->evaluations : 0},
          {"date", today()}};
}

// Which refusal an error message is: the declared text it holds (an outside
// implementation's --refusal), else the message without the details in parentheses that
// vary from case to case ("D must be divisible by BD (D = 96, BD = 256)").
std::string refusal_of(const std::string& message) {
  for (const auto& text : outside_refusals())
    if (message.find(text) != std::string::npos) return text;
  const auto details = message.find(" (");
  return details == std::string::npos ? message : message.substr(0, details);
}

// Cases a property applied to (not skipped): what the implementation was asked.
int64_t cases_run(const Tally& t) { return t.cases + t.known - t.skipped; }

// The commonest refusal of a run where the implementation refused more than half of the
// cases it was asked (skipped ones aside), with its count; nothing otherwise.
std::optional<std::pair<std::string, int64_t>> mostly_refused(const SearchResult& r) {
  const int64_t all = cases_run(r.tally);
  if (all <= 0 || 2 * r.tally.rejected <= all || r.rejections.empty()) return std::nullopt;
  std::map<std::string, int64_t> by_refusal;
  for (const auto& [message, count] : r.rejections) by_refusal[refusal_of(message)] += count;
  return *std::max_element(by_refusal.begin(), by_refusal.end(),
                           [](const auto& a, const auto& b) { return a.second < b.second; });
}

// A kept finding, or the case file printed whole when it could not be written.
void print_unwritten(const std::string& error, const CaseFile& f) {
  fmt::print("\n{} could not keep this finding: {}\nthe case file, whole:\n{}\n", red("!"),
             error, to_json(f).dump(2));
}

}  // namespace

int run_check(const CheckOptions& o) {
  load_libraries(o.common);
  apply_isolation(o.common, o.isolation);
  SearchOptions options = search_options(o);
  const bool use_corpus = !o.no_corpus && !o.corpus.empty();
  // Before the search: a finding must have somewhere to go; what a killed writer left
  // behind goes.
  std::vector<std::string> stale;
  if (use_corpus) stale = prepare_corpus(o.corpus);
  // Identities already in the corpus (they name their kernel): known defects the search
  // looks past.
  if (use_corpus)
    for (const auto& [identity, path] : corpus_identities(o.corpus))
      options.known_identities.insert(identity);

  const auto props =
      options.properties.empty() ? find_kernel(options.kernel).properties() : options.properties;
  if (!o.common.json)
    fmt::print("kprop check {} --impl {} --seed {}: {} cases over {}{}\n", options.kernel,
               options.impl, o.seed, o.cases, fmt::join(props, ", "),
               options.known_identities.empty()
                   ? ""
                   : fmt::format(" ({} known defects in {})",
                                 options.known_identities.size(), o.corpus));
  const Takes* takes = declared_takes(options.kernel, options.impl);
  if (!o.common.json && takes && !takes->takes_dtype(DType::float64) &&
      std::find(props.begin(), props.end(), "gradient") != props.end())
    fmt::print("{} takes no float64: gradient checks its backward in {} against the float64 "
               "reference's gradient, within the derived bound\n",
               options.impl, to_string(takes->dtypes.front()));
  for (const auto& path : stale)
    fmt::print(stderr, "kprop: removed {} (left by a writer that was killed)\n", path);
  ProgressLine progress(o.cases);
  // An interrupt while drawing ends the search here; while shrinking, evaluations stop
  // (harness/execution/interrupt.h) and the failure is kept with the smallest case so far.
  install_interrupt_handlers();
  cut_short_on_interrupt(true);
  Tally so_far;
  options.on_progress = [&](const Tally& t, const std::string& phase) {
    so_far = t;
    progress.update(t, phase);
    if (phase == "search" && interrupted()) throw Interrupted();
  };
  SearchResult r;
  bool stopped = false;
  const IsolationStats isolated_before = isolation_stats();
  try {
    r = search(options);
  } catch (const Interrupted&) {
    r.tally = so_far;
    stopped = true;
  }
  progress.finish();
  cut_short_on_interrupt(false);
  const bool was_interrupted = interrupted();

  // Every new defect the failing case shows is kept, the first one reported in full.
  std::optional<Kept> kept;
  std::vector<Kept> also_kept;
  std::vector<std::pair<std::string, CaseFile>> unwritten;  // why, and the file
  if (r.failure && use_corpus)
    for (const Failure& f : r.failures) {
      const CaseFile file = describe_failure(f, provenance_of(o, options, f));
      const Kept k = try_keep(o.corpus, file);
      if (!k.error.empty()) unwritten.emplace_back(k.error, file);
      if (!kept) kept = k;
      else also_kept.push_back(k);
    }
  const auto refused = mostly_refused(r);
  const int code = r.failure || refused ? 1 : stopped ? interrupted_exit_code() : 0;

  // The result as JSON: what --json prints, and what the Python API returns.
  nlohmann::json out{{"tally", tally_to_json(r.tally)},
                     {"rejections", r.rejections},
                     {"not_taken", r.not_taken},
                     {"known_sightings", r.sightings}};
  if (was_interrupted) out["interrupted"] = interrupt_name();
  if (refused) out["mostly_refused"] = {{"reason", refused->first}, {"count", refused->second}};
  if (r.failure) {
    const Failure& f = *r.failure;
    out["failure"] = {{"case_number", f.case_number},
                      {"seconds_to_find", f.seconds_to_find},
                      {"found", case_to_json(f.found)},
                      {"minimal", case_to_json(f.minimal())},
                      {"shrink_steps", f.shrunk ? f.shrunk->steps : 0},
                      {"identity", f.identity},
                      {"verdict", verdict_to_json(f.verdict())}};
    if (kept) out["corpus"] = {{"path", kept->path}, {"written", kept->written}};
    if (kept && !kept->error.empty()) out["corpus"]["error"] = kept->error;
    if (!unwritten.empty()) {
      nlohmann::json files = nlohmann::json::array();
      for (const auto& [error, f] : unwritten) files.push_back(to_json(f));
      out["unwritten_case_files"] = files;
    }
    nlohmann::json others = nlohmann::json::array();
    for (size_t i = 1; i < r.failures.size(); ++i)
      others.push_back({{"identity", r.failures[i].identity},
                        {"minimal", case_to_json(r.failures[i].minimal())},
                        {"corpus", i - 1 < also_kept.size() ? also_kept[i - 1].path : ""}});
    out["also"] = others;
  }
  if (entry().result) entry().result(out.dump());
  if (o.common.json) {
    fmt::print("{}\n", out.dump(2));
    std::fflush(stdout);
    return code;
  }

  if (stopped)
    fmt::print("interrupted by {}: the search stopped; the summary so far:\n", interrupt_name());
  fmt::print("{}\n{}", format_tally(r.tally), format_property_tallies(r.tally));
  // In-process calls only: an isolated worker's time is its own.
  if (const auto profile = CallProfile::totals(); profile.count(CallProfile::Part::implementation) > 0)
    fmt::print("{}\n", format_call_profile(profile, r.tally.seconds));
  // What isolation cost this run: the workers' starts, and the rest per isolated case.
  if (const IsolationStats now = isolation_stats(); now.cases > isolated_before.cases) {
    const int64_t cases = now.cases - isolated_before.cases;
    const double starting = now.start_seconds - isolated_before.start_seconds;
    fmt::print("isolation: {} cases in worker processes, {} started ({:.2f} s starting them): "
               "{:.2f} ms per case apart from the starts\n",
               cases, now.workers_started - isolated_before.workers_started, starting,
               1e3 * (r.tally.seconds - starting) / cases);
  }
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
    return code;
  }
  const Failure& f = *r.failure;
  fmt::print("\n{} after {} cases ({:.2f} s): {}\n", red("FAIL"), f.case_number,
             f.seconds_to_find, f.found_verdict.signature());
  if (f.shrunk)
    fmt::print("shrunk in {} steps, {} evaluations, {:.2f} s{}\n", f.shrunk->steps,
               f.shrunk->evaluations, f.shrunk->seconds,
               was_interrupted ? fmt::format(" (interrupted by {}: may not be minimal)",
                                             interrupt_name())
               : f.shrunk->budget_exhausted ? " (budget exhausted: not minimal)" : "");
  fmt::print("defect: {}\n", f.identity);
  fmt::print("\nminimal case:\n{}\n{}\n", format_case(f.minimal()), f.verdict().message);
  if (!f.verdict().tensors.empty() || !f.verdict().memory.empty())
    fmt::print("{}", format_error_table(f.verdict()));
  if (kept && kept->error.empty()) {
    // What replays it: this entry, with the libraries and modules that registered it.
    std::string replay = fmt::format("{} replay {}", entry().name, kept->path);
    for (const auto& lib : o.common.libraries) replay += " --load " + lib;
    for (const auto& module : o.common.imports) replay += " --import " + module;
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
  for (const auto& [error, file] : unwritten) print_unwritten(error, file);
  std::fflush(stdout);
  return code;
}

}  // namespace kprop
