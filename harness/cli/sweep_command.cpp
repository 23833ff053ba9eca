// kprop sweep [KERNEL]: one metric over a grid of two case parameters, as a Markdown table
// (or JSON) on stdout and, on request, as Markdown and SVG heatmap files.
#include <fmt/format.h>

#include "core/errors.h"
#include "harness/cli/commands.h"
#include "harness/cli/progress.h"
#include "harness/model/kernel.h"
#include "harness/presentation/svg_heatmap.h"
#include "harness/presentation/sweep.h"
#include "harness/storage/atomic_file.h"

namespace kprop {

void add_sweep_command(CLI::App& app, SweepOptions& o) {
  auto* cmd = app.add_subcommand(
      "sweep", "one metric over a grid of two case parameters, as a table and a heatmap");
  cmd->add_option("kernel", o.kernel, "kernel (default: the first registered)");
  cmd->add_option("--impl", o.impl, "implementation (default: the kernel's own)");
  cmd->add_option("--property", o.property, "property (default: vs_reference)");
  cmd->add_option("--x", o.x,
                  "columns: NAME=VALUES, NAME a case parameter (as --set), VALUES e.g. 2,4,8 "
                  "(lists, a..b, a..b:s, a..b*f)")
      ->required();
  cmd->add_option("--y", o.y, "rows: NAME=VALUES as --x, e.g. NAME=16..384*2")->required();
  cmd->add_option("--set", o.set, "NAME=VALUE for every cell; repeatable");
  cmd->add_option("--metric", o.metric,
                  "verdict (default), error_over_bound:T, ratio:T or chunked_ratio:T, "
                  "T an output or gradient of the kernel");
  cmd->add_option("--seed", o.seed, "data seed of every cell (default: 0)")->check(not_negative());
  cmd->add_option("--markdown", o.markdown_out, "also write the Markdown table to this file");
  cmd->add_option("--svg", o.svg_out, "also write an SVG heatmap to this file");
  add_common_options(cmd, o.common);
}

int run_sweep(const SweepOptions& o) {
  const auto session = open_session(run_options(o.common));
  SweepSpec spec;
  spec.kernel = kernel_or_default(o.kernel);
  spec.impl = o.impl.empty() ? find_kernel(spec.kernel).default_implementation() : o.impl;
  spec.property = o.property;
  spec.x = parse_axis(spec.kernel, o.x);
  spec.y = parse_axis(spec.kernel, o.y);
  spec.set = o.set;
  spec.metric = parse_metric(o.metric);
  spec.seed = o.seed;

  // Each cell is one case: the progress line counts cells as cases.
  ProgressLine progress(static_cast<int64_t>(spec.x.values.size() * spec.y.values.size()));
  Tally tally;
  const SweepResult result =
      run_sweep_grid(spec, [&](size_t done, size_t, const SweepCell& cell) {
        tally.cases = static_cast<int64_t>(done);
        tally.failed += cell.kind == SweepCell::Kind::fail;
        tally.rejected += cell.kind == SweepCell::Kind::rejected;
        progress.update(tally, "sweep");
      });
  progress.finish();

  const std::string markdown = to_markdown(result);
  if (o.common.json)
    fmt::print("{}\n", to_json(result).dump(2));
  else
    fmt::print("{}", markdown);
  if (!o.markdown_out.empty()) write_file_atomically(o.markdown_out, markdown);
  if (!o.svg_out.empty()) write_file_atomically(o.svg_out, render_svg(to_heatmap(result)));
  return 0;
}

}  // namespace kprop
