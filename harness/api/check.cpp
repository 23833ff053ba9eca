#include "harness/api/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <map>

#include "core/errors.h"
#include "harness/api/settings.h"
#include "harness/engine/property.h"
#include "harness/execution/call_profile.h"
#include "harness/execution/implementations.h"
#include "harness/execution/interrupt.h"
#include "harness/execution/takes.h"
#include "harness/model/kernel.h"
#include "harness/presentation/report.h"
#include "harness/storage/case_file.h"
#include "harness/storage/verdict_json.h"

namespace kprop {

namespace {

std::string today() {
  const std::time_t now = std::time(nullptr);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", std::gmtime(&now));
  return buf;
}

SearchOptions search_options(const CheckRequest& o) {
  // What the command line's validators hold, for every front.
  if (o.cases < 1 || o.cases > 1'000'000'000)
    throw UsageError(fmt::format("--cases {}: must be in 1..1000000000", o.cases));
  if (!std::isfinite(o.shrink_seconds) || o.shrink_seconds < 0 || o.shrink_seconds > 1e6)
    throw UsageError(fmt::format("--shrink-seconds {}: must be a number in 0..1e6", o.shrink_seconds));
  SearchOptions s;
  s.kernel = kernel_or_default(o.kernel);
  const Kernel& kernel = find_kernel(s.kernel);
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
  s.limits = parse_limits(s.kernel, o.limits);
  s.fixed = parse_settings(s.kernel, o.set);
  s.shrink = o.shrink;
  s.shrink_seconds = o.shrink_seconds;
  return s;
}

// The command line that finds it again, and how it was found.
nlohmann::json provenance_of(const CheckRequest& o, const SearchOptions& s, const Failure& f) {
  std::string command = fmt::format("{} check {} --impl {} --seed {} --cases {}", o.entry_name,
                                    s.kernel, s.impl, s.seed, s.cases);
  for (const auto& p : s.properties) command += " --property " + p;
  for (const auto& setting : o.set) command += " --set " + setting;
  for (const auto& lib : o.run.libraries) command += " --load " + lib;
  for (const auto& module : o.run.imports) command += " --import " + module;
  for (const auto& text : o.run.refusals) command += fmt::format(" --refusal '{}'", text);
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
  for (const auto& text : Session::current().refusals())
    if (message.find(text) != std::string::npos) return text;
  const auto details = message.find(" (");
  return details == std::string::npos ? message : message.substr(0, details);
}

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

IsolationStats since(const IsolationStats& before) {
  const IsolationStats now = isolation_stats();
  return {now.cases - before.cases, now.workers_started - before.workers_started,
          now.start_seconds - before.start_seconds};
}

}  // namespace

int64_t cases_run(const Tally& t) { return t.cases + t.known - t.skipped; }

CheckReport check(const CheckRequest& request, const CheckCallbacks& callbacks) {
  clear_interrupt();  // a new run: an interrupt of an earlier one stopped that one
  CallProfile::reset();
  const auto session = open_session(request.run);
  SearchOptions options = search_options(request);
  const bool use_corpus = !request.corpus.empty();
  CheckReport report;
  CheckPlan& plan = report.plan;
  if (use_corpus) {
    // Before the search: a finding must have somewhere to go; what a killed writer left
    // behind goes.
    plan.stale = prepare_corpus(request.corpus);
    // Identities already in the corpus (they name their kernel): known defects the search
    // looks past.
    for (const auto& [identity, path] : corpus_identities(request.corpus))
      options.known_identities.insert(identity);
  }
  plan.kernel = options.kernel;
  plan.impl = options.impl;
  plan.properties =
      options.properties.empty() ? find_kernel(options.kernel).properties() : options.properties;
  plan.seed = options.seed;
  plan.cases = options.cases;
  plan.known_identities = options.known_identities.size();
  plan.corpus = request.corpus;
  const Takes* takes = declared_takes(options.kernel, options.impl);
  if (takes && !takes->takes_dtype(DType::float64) &&
      std::find(plan.properties.begin(), plan.properties.end(), "gradient") != plan.properties.end())
    plan.gradient_dtype = takes->dtypes.front();
  if (callbacks.on_start) callbacks.on_start(plan);

  // An interrupt while drawing ends the search here; while shrinking, evaluations stop
  // (harness/execution/session.h) and the failure is kept with the smallest case so far.
  install_interrupt_handlers();
  session->cut_short_on_interrupt(true);
  Tally so_far;
  options.on_progress = [&](const Tally& t, const std::string& phase) {
    so_far = t;
    if (callbacks.on_progress) callbacks.on_progress(t, phase);
    if (phase == "search" && interrupted()) throw Interrupted();
  };
  SearchResult& r = report.search;
  const IsolationStats isolated_before = isolation_stats();
  try {
    r = search(options);
  } catch (const Interrupted&) {
    r.tally = so_far;
    report.stopped = true;
  }
  session->cut_short_on_interrupt(false);
  report.interrupted_by = interrupt_name();
  report.isolated = since(isolated_before);

  // Every new defect the failing case shows is kept, the first one reported in full.
  if (r.failure && use_corpus)
    for (const Failure& f : r.failures) {
      const CaseFile file = describe_failure(f, provenance_of(request, options, f));
      const Kept k = try_keep(request.corpus, file);
      if (!k.error.empty()) report.unwritten.emplace_back(k.error, file);
      if (!report.kept) report.kept = k;
      else report.also_kept.push_back(k);
    }
  report.mostly_refused = mostly_refused(r);
  report.exit_code = r.failure || report.mostly_refused ? 1
                     : report.stopped                   ? interrupted_exit_code()
                                                        : 0;
  return report;
}

nlohmann::json to_json(const CheckReport& report) {
  const SearchResult& r = report.search;
  nlohmann::json out{{"tally", tally_to_json(r.tally)},
                     {"rejections", r.rejections},
                     {"not_taken", r.not_taken},
                     {"known_sightings", r.sightings}};
  if (!report.interrupted_by.empty()) out["interrupted"] = report.interrupted_by;
  if (const auto& refused = report.mostly_refused)
    out["mostly_refused"] = {{"reason", refused->first}, {"count", refused->second}};
  if (r.failure) {
    const Failure& f = *r.failure;
    out["failure"] = {{"case_number", f.case_number},
                      {"seconds_to_find", f.seconds_to_find},
                      {"found", case_to_json(f.found)},
                      {"minimal", case_to_json(f.minimal())},
                      {"shrink_steps", f.shrunk ? f.shrunk->steps : 0},
                      {"identity", f.identity},
                      {"verdict", verdict_to_json(f.verdict())}};
    const auto& kept = report.kept;
    if (kept) out["corpus"] = {{"path", kept->path}, {"written", kept->written}};
    if (kept && !kept->error.empty()) out["corpus"]["error"] = kept->error;
    if (!report.unwritten.empty()) {
      nlohmann::json files = nlohmann::json::array();
      for (const auto& [error, f] : report.unwritten) files.push_back(to_json(f));
      out["unwritten_case_files"] = files;
    }
    nlohmann::json others = nlohmann::json::array();
    for (size_t i = 1; i < r.failures.size(); ++i)
      others.push_back({{"identity", r.failures[i].identity},
                        {"minimal", case_to_json(r.failures[i].minimal())},
                        {"corpus", i - 1 < report.also_kept.size() ? report.also_kept[i - 1].path
                                                                   : ""}});
    out["also"] = others;
  }
  return out;
}

}  // namespace kprop
