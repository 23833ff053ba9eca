// kprop hunt [KERNEL]: look for each known defect of the kernel's historical states, shrink
// it to a minimal case and keep it in the corpus under the defect's name. Other failures
// met on the way are shrunk and set aside; the exit code is 1 if a known defect was not
// found (a regression of kprop's search), else 0.
#include <fmt/format.h>

#include <cstdio>

#include "core/errors.h"
#include "harness/cli/commands.h"
#include "harness/cli/entry.h"
#include "harness/cli/style.h"
#include "harness/engine/corpus.h"
#include "harness/execution/interrupt.h"
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

namespace {

std::string slug(const std::string& s) {
  std::string out;
  for (char ch : s) out += isalnum(static_cast<unsigned char>(ch)) ? ch : '-';
  return out;
}

}  // namespace

int run_hunt(const HuntOptions& o) {
  const auto session = open_session(run_options(o.common));
  const std::string kernel = kernel_or_default(o.kernel);
  const auto defects = find_kernel(kernel).known_defects();
  if (defects.empty())
    throw UsageError(fmt::format("no known defects are recorded for kernel '{}'", kernel));
  for (const auto& name : o.defects)
    if (std::none_of(defects.begin(), defects.end(),
                     [&](const auto& d) { return d.name == name; }))
      throw UsageError(fmt::format("unknown defect '{}'", name));

  if (!o.no_corpus)
    for (const auto& path : prepare_corpus(o.corpus))
      fmt::print(stderr, "kprop: removed {} (left by a writer that was killed)\n", path);
  // An interrupt ends the hunt after the defects found so far (each kept as it is found);
  // a shrink in progress ends with its smallest case, which is kept.
  install_interrupt_handlers();
  nlohmann::json out = nlohmann::json::array();
  bool all_found = true;
  try {
    for (const auto& d : defects) {
      if (!o.defects.empty() &&
          std::find(o.defects.begin(), o.defects.end(), d.name) == o.defects.end())
        continue;
      for (const auto& impl : d.impls) {
        SearchOptions s;
        s.kernel = kernel;
        s.impl = impl;
        s.properties = {d.property};
        s.limits = d.limits;
        s.cases = o.cases;
        s.seed = o.seed;
        s.on_progress = [](const Tally&, const std::string& phase) {
          if (phase == "search" && interrupted()) throw Interrupted();
        };
        session->cut_short_on_interrupt(true);
        const HuntResult h = hunt(s, [&](const Failure& f) { return shows(d, f); });
        session->cut_short_on_interrupt(false);
        nlohmann::json row{{"defect", d.name}, {"impl", impl}, {"found", bool(h.match)},
                           {"cases", h.cases}, {"seconds", h.seconds}};
        if (!h.match) {
          all_found = false;
          if (!o.common.json)
            fmt::print("{} {} on {}: not found in {} cases\n", red("MISSED"), d.name, impl, o.cases);
          out.push_back(row);
          continue;
        }
        const Failure& f = *h.match;
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
        const Kept kept = o.no_corpus ? Kept{}
                                      : try_keep(o.corpus, file, slug(d.name) + "--" + slug(impl) + ".json");
        if (!kept.error.empty()) {
          // Not lost: the case file whole, on stdout.
          row["unwritten_case_file"] = to_json(file);
          if (!o.common.json)
            fmt::print("could not keep {}: {}; the case file, whole:\n{}\n", d.name, kept.error,
                       to_json(file).dump(2));
        }
        row["minimal"] = case_to_json(f.minimal());
        row["signature"] = f.verdict().signature();
        row["identity"] = f.identity;
        if (!o.no_corpus) row["corpus"] = {{"path", kept.path}, {"written", kept.written}};
        out.push_back(row);
        if (!o.common.json)
          fmt::print("{} {} on {} after {} cases ({:.2f} s): {}\n  {}\n{}", green("FOUND"), d.name,
                     impl, h.cases, h.seconds, f.identity,
                     summary(find_kernel(kernel).schema(), f.minimal()),
                     o.no_corpus ? ""
                                 : fmt::format("  {} {}\n", kept.written ? "kept:" : "already in the corpus:",
                                               kept.path));
      }
    }
  } catch (const Interrupted&) {
    session->cut_short_on_interrupt(false);
    if (!o.common.json)
      fmt::print("interrupted by {}: the hunt stopped after {} hunts\n", interrupt_name(),
                 out.size());
  }
  if (entry().result) entry().result(out.dump());
  if (o.common.json) fmt::print("{}\n", out.dump(2));
  std::fflush(stdout);
  if (interrupted()) return all_found ? interrupted_exit_code() : 1;
  return all_found ? 0 : 1;
}

}  // namespace kprop
