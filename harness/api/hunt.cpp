#include "harness/api/hunt.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "core/errors.h"
#include "harness/api/settings.h"
#include "harness/engine/diagnosis.h"
#include "harness/execution/interrupt.h"
#include "harness/model/kernel.h"
#include "harness/storage/case_file.h"

namespace kprop {

namespace {

std::string slug(const std::string& s) {
  std::string out;
  for (char ch : s) out += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '-';
  return out;
}

// The minimal failure of defect `d` on `impl`, kept under the defect's name. Only with a
// corpus: its case file evaluates every implementation (its expectations).
void keep(const HuntRequest& o, const std::string& kernel, const KnownDefect& d, Hunt& h) {
  if (o.corpus.empty()) return;
  const Failure& f = *h.found;
  nlohmann::json provenance{
      {"found_by", fmt::format("kprop hunt {} --defect '{}' --seed {} --cases {}", kernel,
                               d.name, o.seed, o.cases)},
      {"defect", d.name},
      {"reported_upstream", d.reported_upstream},
      {"search_seed", o.seed},
      {"case_number", f.case_number},
      {"shrink_steps", f.shrunk ? f.shrunk->steps : 0},
      {"found_case", case_to_json(f.found)}};
  const CaseFile file = describe_failure(f, provenance, d.summary);
  h.kept = try_keep(o.corpus, file, slug(d.name) + "--" + slug(h.impl) + ".json");
  if (!h.kept->error.empty()) h.unwritten = file;  // not lost: the case file whole
}

}  // namespace

HuntReport hunt(const HuntRequest& o, const HuntCallbacks& callbacks) {
  clear_interrupt();  // a new run: an interrupt of an earlier one stopped that one
  const auto session = open_session(o.run);
  HuntReport report;
  report.kernel = kernel_or_default(o.kernel);
  const auto& defects = find_kernel(report.kernel).known_defects();
  if (defects.empty())
    throw UsageError(fmt::format("no known defects are recorded for kernel '{}'", report.kernel));
  for (const auto& name : o.defects)
    if (std::none_of(defects.begin(), defects.end(),
                     [&](const auto& d) { return d.name == name; }))
      throw UsageError(fmt::format("unknown defect '{}'", name));
  const auto stale = o.corpus.empty() ? std::vector<std::string>{} : prepare_corpus(o.corpus);
  if (callbacks.on_start) callbacks.on_start(stale);

  install_interrupt_handlers();
  bool all_found = true;
  try {
    for (const auto& d : defects) {
      if (!o.defects.empty() &&
          std::find(o.defects.begin(), o.defects.end(), d.name) == o.defects.end())
        continue;
      for (const auto& impl : d.impls) {
        SearchOptions s;
        s.kernel = report.kernel;
        s.impl = impl;
        s.properties = {d.property};
        s.limits = d.limits;
        s.cases = o.cases;
        s.seed = o.seed;
        s.on_progress = [](const Tally&, const std::string& phase) {
          if (phase == "search" && interrupted()) throw Interrupted();
        };
        session->cut_short_on_interrupt(true);
        HuntResult r = kprop::hunt(s, [&](const Failure& f) { return shows(d, f); });
        session->cut_short_on_interrupt(false);
        Hunt h{d.name, impl, r.cases, r.seconds, std::move(r.match), std::nullopt, std::nullopt};
        if (h.found) keep(o, report.kernel, d, h);
        else all_found = false;
        if (callbacks.on_hunt) callbacks.on_hunt(h);
        report.hunts.push_back(std::move(h));
      }
    }
  } catch (const Interrupted&) {
    session->cut_short_on_interrupt(false);
    report.stopped = true;
  }
  report.interrupted_by = interrupt_name();
  report.exit_code = !all_found ? 1 : interrupted() ? interrupted_exit_code() : 0;
  return report;
}

nlohmann::json to_json(const HuntReport& report) {
  nlohmann::json out = nlohmann::json::array();
  for (const Hunt& h : report.hunts) {
    nlohmann::json row{{"defect", h.defect}, {"impl", h.impl}, {"found", bool(h.found)},
                       {"cases", h.cases}, {"seconds", h.seconds}};
    if (h.found) {
      if (h.unwritten) row["unwritten_case_file"] = to_json(*h.unwritten);
      row["minimal"] = case_to_json(h.found->minimal());
      row["signature"] = h.found->verdict().signature();
      row["identity"] = h.found->identity;
      if (h.kept) row["corpus"] = {{"path", h.kept->path}, {"written", h.kept->written}};
    }
    out.push_back(row);
  }
  return out;
}

}  // namespace kprop
