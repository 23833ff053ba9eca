// kprop check KERNEL: search for a counterexample, shrink it, report it.
#include "harness/cli/commands.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/cli/progress.h"
#include "harness/errors.h"
#include "harness/implementations.h"
#include "harness/kernel_info.h"
#include "harness/property.h"
#include "harness/report.h"

namespace kprop {

void add_check_command(CLI::App& app, CheckOptions& o) {
  auto* cmd = app.add_subcommand("check", "search for a failing case, shrink it and report it");
  cmd->add_option("kernel", o.kernel, "kernel to test")->required();
  cmd->add_option("--impl", o.impl, "implementation (default: tiled)");
  cmd->add_option("--cases", o.cases, "cases to draw (default: 1000)")->check(CLI::PositiveNumber);
  cmd->add_option("--seed", o.seed, "seed of the case stream (default: 0)");
  cmd->add_option("--property", o.properties, "property to check; repeatable (default: all)");
  cmd->add_option("--dtype", o.dtypes, "dtype to draw; repeatable (default: per property)");
  cmd->add_option("--max-segments", o.max_segments, "most packed segments per case");
  cmd->add_option("--max-length", o.max_length, "typical longest segment");
  cmd->add_flag("--no-shrink", o.no_shrink, "report the failing case as found");
  cmd->add_option("--shrink-seconds", o.shrink_seconds, "shrinking budget (default: 60)");
  cmd->add_option("--load", o.libraries, "shared library registering operators; repeatable");
}

int run_check(const CheckOptions& o) {
  for (const auto& lib : o.libraries) load_operator_library_or_usage_error(lib);
  SearchOptions options;
  options.kernel = o.kernel;
  find_kernel(o.kernel);
  options.impl = resolve_implementation(o.kernel, o.impl).name;
  options.properties = o.properties;
  for (const auto& name : o.dtypes) {
    auto d = parse_dtype(name);
    if (!d) throw UsageError(fmt::format("unknown dtype '{}'", name));
    options.dtypes.push_back(*d);
  }
  options.cases = o.cases;
  options.seed = o.seed;
  options.max_segments = o.max_segments;
  options.max_length = o.max_length;
  options.shrink = !o.no_shrink;
  options.shrink_seconds = o.shrink_seconds;

  const auto props =
      options.properties.empty() ? find_kernel(o.kernel).properties() : options.properties;
  fmt::print("kprop check {} --impl {} --seed {}: {} cases over {}\n", o.kernel, options.impl,
             o.seed, o.cases, fmt::join(props, ", "));
  ProgressLine progress(o.cases);
  options.on_progress = [&](const Tally& t, const std::string& phase) {
    progress.update(t, phase);
  };
  const SearchResult r = search(options);
  progress.finish();

  fmt::print("{}\n", format_tally(r.tally));
  for (const auto& [reason, count] : r.rejections)
    fmt::print("  rejected {} x: {}\n", count, reason);
  if (!r.failure) {
    fmt::print("PASS: no counterexample in {} cases\n", r.tally.cases);
    return 0;
  }
  const Failure& f = *r.failure;
  fmt::print("\nFAIL after {} cases ({:.2f} s): {}\n", f.case_number, f.seconds_to_find,
             f.found_verdict.signature());
  if (f.shrunk)
    fmt::print("shrunk in {} steps, {} evaluations, {:.2f} s{}\n", f.shrunk->steps,
               f.shrunk->evaluations, f.shrunk->seconds,
               f.shrunk->budget_exhausted ? " (budget exhausted: not minimal)" : "");
  fmt::print("\nminimal case:\n{}\n{}\n", format_case(f.minimal()), f.verdict().message);
  fmt::print("{}", format_error_table(f.verdict()));
  return 1;
}

}  // namespace kprop
