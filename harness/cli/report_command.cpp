// kprop report tolerance: the smallest atol per tensor, and whether it is rounding or a
// bug, for case files or a generated batch.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>

#include "core/errors.h"
#include "harness/cli/commands.h"
#include "harness/cli/progress.h"
#include "harness/engine/property.h"
#include "harness/execution/implementations.h"
#include "harness/model/kernel.h"
#include "harness/model/precision_model.h"
#include "harness/presentation/tolerance_report.h"
#include "harness/storage/atomic_file.h"
#include "harness/storage/case_file.h"

namespace kprop {

namespace {

namespace fs = std::filesystem;

// The case files named by `paths`: files as given, folders searched for *.json, sorted
// so that a report is the same on every machine.
std::vector<std::string> case_file_paths(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const auto& path : paths) {
    if (fs::is_regular_file(path)) {
      files.push_back(path);
    } else if (fs::is_directory(path)) {
      std::vector<std::string> found;
      for (const auto& entry : fs::recursive_directory_iterator(path))
        if (entry.is_regular_file() && entry.path().extension() == ".json")
          found.push_back(entry.path().string());
      std::sort(found.begin(), found.end());
      files.insert(files.end(), found.begin(), found.end());
    } else {
      throw UsageError(fmt::format("no such case file or folder: {}", path));
    }
  }
  return files;
}

// Applies every --set NAME=VALUE to `c`.
void apply_settings(Case& c, const std::vector<std::string>& settings) {
  for (const auto& s : settings) {
    const auto eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError(fmt::format("--set '{}': expected NAME=VALUE", s));
    set_param(find_kernel(c.kernel).schema(), c, s.substr(0, eq), s.substr(eq + 1));
  }
}

std::vector<LabelledCase> cases_from_files(const ReportOptions& o) {
  std::vector<LabelledCase> cases;
  for (const auto& path : case_file_paths(o.paths)) {
    Case c = read_case_file(path).c;
    if (!o.impl.empty()) c.impl = o.impl;
    cases.push_back({path, c});
  }
  if (cases.empty()) throw UsageError("no case files (*.json) under the given paths");
  return cases;
}

std::vector<LabelledCase> generated_cases(const ReportOptions& o) {
  const std::string kernel_name = kernel_or_default(o.kernel);
  const Kernel& kernel = find_kernel(kernel_name);
  CaseSpace space;
  space.impl = o.impl.empty() ? kernel.default_implementation() : o.impl;
  space.property = "vs_reference";
  // As check draws vs_reference cases, so that case i is check's case i.
  space.dtypes = find_property(space.property).dtypes();
  if (!o.dtypes.empty()) {
    space.dtypes.clear();
    for (const auto& name : o.dtypes) {
      const auto d = parse_dtype(name);
      if (!d) throw UsageError(fmt::format("unknown dtype '{}'", name));
      const auto supported = kernel.dtypes();
      if (std::find(supported.begin(), supported.end(), *d) == supported.end())
        throw UsageError(fmt::format("{} does not support dtype {}", kernel_name, name));
      space.dtypes.push_back(*d);
    }
  }
  return draw_cases(kernel_name, space, o.cases, o.seed);
}

// Measures every case with a progress line on stderr (a batch can take a while).
std::vector<CaseTolerance> measure_all(const std::vector<LabelledCase>& cases,
                                       const std::vector<double>& rtols) {
  std::vector<CaseTolerance> measured;
  ProgressLine progress(static_cast<int64_t>(cases.size()));
  Tally tally;
  for (const auto& c : cases) {
    measured.push_back(measure_tolerance(c.c, rtols, c.label));
    const auto& m = measured.back();
    ++tally.cases;
    ++(m.rejected ? tally.rejected : m.within_bounds() ? tally.passed : tally.failed);
    progress.update(tally, "measure");
  }
  progress.finish();
  return measured;
}

}  // namespace

void write_report_files(const ReportOptions& o, const std::string& markdown,
                        const std::string& json) {
  if (!o.markdown_out.empty()) write_file_atomically(o.markdown_out, markdown);
  if (!o.json_out.empty()) write_file_atomically(o.json_out, json);
}

void add_report_command(CLI::App& app, ReportOptions& o) {
  auto* cmd = app.add_subcommand(
      "report", "measure errors per tensor against the float64 reference (tolerance tables)");
  cmd->add_option("report", o.report,
                  "which report: tolerance (per case vs float64), precision (a model's chain "
                  "vs the framework's and float64)")
      ->required()
      ->check(CLI::IsMember({"tolerance", "precision"}));
  // The models registered when the command line is built (those of a --load library
  // register later; `report precision` without a model lists them all).
  const auto models = precision_model_names();
  const std::string known =
      models.empty() ? "none registered" : fmt::format("{}", fmt::join(models, ", "));
  cmd->add_option("paths", o.paths,
                  "tolerance: case files, or folders searched for *.json; precision: the model "
                  "(" + known + ")");
  cmd->add_option("--kernel", o.kernel, "kernel of a generated batch (default: the first by name)");
  // Empty means "each case file's own implementation", which a default value in the
  // header cannot say; a generated batch then uses tiled.
  o.impl.clear();
  cmd->add_option("--impl", o.impl,
                  "implementation (default: each case file's own; tiled for --cases)");
  cmd->add_option("--cases", o.cases, "generate this many cases instead of reading files")
      ->check(CLI::Range(int64_t{1}, int64_t{1'000'000'000}));
  cmd->add_option("--seed", o.seed, "seed of the generated cases (default: 0)")
      ->check(not_negative());
  // Repeatable options take one value each, so that `--dtype bfloat16 corpus` leaves
  // `corpus` to the paths.
  cmd->add_option("--dtype", o.dtypes,
                  "dtype to draw; repeatable (default: every dtype vs_reference checks)")
      ->allow_extra_args(false);
  cmd->add_option("--set", o.set,
                  "NAME=VALUE applied to every case (precision: a parameter of the model); "
                  "repeatable")
      ->allow_extra_args(false);
  cmd->add_option("--rtol", o.rtols,
                  "rtol of an atol column; repeatable (default: 0 1e-2 1e-1; precision: 1e-2 "
                  "1e-1)")
      ->allow_extra_args(false)
      ->check(finite_in(0, 1e6));
  cmd->add_option("--shape", o.shape,
                  "precision: NAME=VALUE[,NAME=VALUE...] parameters of the model (default: its "
                  "own shape)")
      ->allow_extra_args(false);
  cmd->add_option("--scale", o.scale,
                  "precision: weights unscaled (randn, the default) or fan_in (1/sqrt(fan_in))");
  cmd->add_option("--threads", o.threads, "precision: libtorch's CPU threads (default: its own)")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("--markdown", o.markdown_out, "also write the Markdown to this file");
  cmd->add_option("--json-out", o.json_out, "also write the JSON to this file");
  add_common_options(cmd, o.common);
}

int run_report(const ReportOptions& o) {
  if (o.report == "precision") return run_precision_report(o);
  const auto session = open_session(run_options(o.common));
  if (o.report != "tolerance") throw UsageError(fmt::format("unknown report '{}'", o.report));
  if (!o.shape.empty() || !o.scale.empty() || o.threads != 0)
    throw UsageError("--shape, --scale and --threads belong to `report precision`");
  const std::vector<double> rtols =
      o.rtols.empty() ? std::vector<double>{0.0, 1e-2, 1e-1} : o.rtols;
  const bool generated = o.cases > 0;
  if (generated && !o.paths.empty())
    throw UsageError("give case files or folders, or --cases N, not both");
  if (!generated && o.paths.empty())
    throw UsageError("nothing to report on: give case files or folders, or --cases N");
  if (!generated && (!o.dtypes.empty() || o.seed != 0))
    throw UsageError("--dtype and --seed draw a generated batch: they need --cases");
  for (double rtol : rtols)
    if (!(rtol >= 0) || !std::isfinite(rtol))
      throw UsageError(fmt::format("--rtol {}: expected a finite number >= 0", rtol));

  auto cases = generated ? generated_cases(o) : cases_from_files(o);
  for (auto& c : cases) {
    try {
      apply_settings(c.c, o.set);
    } catch (const CaseError& e) {
      throw CaseError(fmt::format("{}: {}", c.label, e.what()));
    }
  }
  const auto reports = tolerance_reports(measure_all(cases, rtols), rtols);

  const std::string markdown = tolerance_markdown(reports);
  const std::string json = tolerance_json(reports).dump(2) + "\n";
  write_report_files(o, markdown, json);
  std::cout << (o.common.json ? json : markdown);
  return within_bounds(reports) ? 0 : 1;
}

}  // namespace kprop
