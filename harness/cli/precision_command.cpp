// kprop report precision MODEL: a precision model's chain through an implementation vs
// the framework's policy vs float64, per tensor, with derived bounds and verdicts
// (harness/presentation/precision_report.h).
#include <ATen/Context.h>
#include <c10/util/Exception.h>
#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <iostream>

#include "core/errors.h"
#include "harness/cli/commands.h"
#include "harness/execution/implementations.h"
#include "harness/model/kernel.h"
#include "harness/model/precision_model.h"
#include "harness/presentation/precision_report.h"

namespace kprop {

namespace {

DType model_dtype(const PrecisionModel& model, const std::vector<std::string>& names) {
  if (names.size() > 1) throw UsageError("report precision takes one --dtype");
  const auto supported = model.dtypes();
  if (names.empty()) return supported.front();
  const auto d = parse_dtype(names.front());
  if (!d) throw UsageError(fmt::format("unknown dtype '{}'", names.front()));
  if (std::find(supported.begin(), supported.end(), *d) == supported.end()) {
    std::vector<std::string> known;
    for (auto s : supported) known.push_back(to_string(s));
    throw UsageError(fmt::format("{} models the dtypes {}, not {}", model.name(),
                                 fmt::join(known, ", "), names.front()));
  }
  return *d;
}

at::Device model_device(const std::string& name) {
  if (name.empty() || name == "cpu") return at::kCPU;
  if (name != "cuda") throw UsageError(fmt::format("--device {}: expected cpu or cuda", name));
  if (!at::hasCUDA()) throw UsageError("--device cuda: this libtorch has no CUDA device");
  return at::Device(at::kCUDA, 0);
}

}  // namespace

int run_precision_report(const ReportOptions& o) {
  const auto session = open_session(run_options(o.common));
  if (o.paths.empty())
    throw UsageError(fmt::format("report precision needs a model: {}",
                                 fmt::join(precision_model_names(), ", ")));
  if (o.paths.size() > 1)
    throw UsageError(fmt::format("report precision takes one model, got {}",
                                 fmt::join(o.paths, " ")));
  if (o.cases > 0 || !o.kernel.empty())
    throw UsageError("--cases and --kernel belong to `report tolerance`");
  const PrecisionModel& model = find_precision_model(o.paths.front());

  PrecisionSetup setup;
  std::vector<std::string> settings = o.shape;
  settings.insert(settings.end(), o.set.begin(), o.set.end());
  setup.params = model_params(model, settings);
  const auto scale = parse_weight_scale(o.scale.empty() ? "unscaled" : o.scale);
  if (!scale) throw UsageError(fmt::format("--scale {}: expected unscaled or fan_in", o.scale));
  setup.scale = *scale;
  setup.dtype = model_dtype(model, o.dtypes);
  setup.seed = o.seed;
  // --device (every command's): the matmuls run there, and so does an outside GEGLU.
  setup.device = model_device(o.common.device);
  const std::string kernel = model.kernel();
  setup.impl = resolve_implementation(
      kernel, o.impl.empty() ? find_kernel(kernel).default_implementation() : o.impl);
  setup.framework = resolve_implementation(kernel, model.framework_implementation());
  setup.reference = resolve_implementation(kernel, model.reference_implementation());
  const std::vector<double> rtols = o.rtols.empty() ? std::vector<double>{1e-2, 1e-1} : o.rtols;
  if (o.threads > 0) at::set_num_threads(o.threads);

  PrecisionReport report;
  try {
    report = precision_report(model, setup, rtols, o.threads);
  } catch (const c10::Error& e) {
    // An implementation (or an op of the chain) that raises: no report, a failure.
    fmt::print(stderr, "kprop: the {} chain through {} raised: {}\n", model.name(),
               setup.impl.name, e.what_without_backtrace());
    return 1;
  }
  const std::string markdown = precision_markdown(report);
  const std::string json = precision_json(report).dump(2) + "\n";
  write_report_files(o, markdown, json);
  std::cout << (o.common.json ? json : markdown);
  return report.passed() ? 0 : 1;
}

}  // namespace kprop
