#include "harness/presentation/sweep.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "core/errors.h"
#include "harness/engine/properties/chunked_run.h"
#include "harness/engine/property.h"
#include "harness/execution/implementations.h"
#include "harness/model/kernel.h"

namespace kprop {

namespace {

// More values than this on one axis is a typo (16..384 where 16..384*2 was meant, say).
constexpr size_t kMaxAxisValues = 1000;

std::string trimmed(const std::string& s) {
  const auto first = s.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(" \t") - first + 1);
}

std::vector<std::string> split_on(const std::string& s, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const auto end = s.find(separator, start);
    parts.push_back(s.substr(start, end - start));
    if (end == std::string::npos) return parts;
    start = end + 1;
  }
}

// Parses the axis's spec; every error names the axis.
class AxisParser {
 public:
  AxisParser(const std::string& kernel, const std::string& spec) : kernel_(kernel), spec_(spec) {}

  Axis parse() {
    const auto eq = spec_.find('=');
    axis_.name = trimmed(spec_.substr(0, eq));
    if (eq == std::string::npos || axis_.name.empty())
      throw error(fmt::format("'{}' is not NAME=VALUES (VALUES e.g. 2,4,8 or 16..384*2)",
                              spec_));
    const auto names = settable_names(find_kernel(kernel_.empty() ? default_kernel() : kernel_).schema());
    if (std::find(names.begin(), names.end(), axis_.name) == names.end())
      throw error(fmt::format("unknown parameter '{}'; known: {}", axis_.name,
                              fmt::join(names, ", ")));
    const std::string values = spec_.substr(eq + 1);
    if (trimmed(values).empty()) throw error("no values after '='");
    for (const auto& raw : split_on(values, ',')) {
      const std::string item = trimmed(raw);
      if (item.empty()) throw error(fmt::format("empty value in '{}'", values));
      if (item.find("..") != std::string::npos)
        expand_range(item);
      else
        add(item);
    }
    return axis_;
  }

 private:
  UsageError error(const std::string& why) const {
    return UsageError(fmt::format("axis {}: {}",
                                  axis_.name.empty() ? "'" + spec_ + "'" : axis_.name, why));
  }

  void add(const std::string& value) {
    if (axis_.values.size() >= kMaxAxisValues)
      throw error(fmt::format("more than {} values", kMaxAxisValues));
    axis_.values.push_back(value);
  }

  int64_t integer(const std::string& text, const std::string& range, const char* what) const {
    const auto v = parse_integer(text);
    if (!v) throw error(fmt::format("range '{}': {} '{}' is not an integer", range, what, text));
    return *v;
  }

  // a..b (step 1), a..b:step, or a..b*factor (geometric; b only when hit).
  void expand_range(const std::string& range) {
    const auto dots = range.find("..");
    const int64_t start = integer(trimmed(range.substr(0, dots)), range, "start");
    std::string rest = range.substr(dots + 2);
    const auto step_at = rest.find_first_of(":*");
    const bool geometric = step_at != std::string::npos && rest[step_at] == '*';
    int64_t step = 1;
    if (step_at != std::string::npos) {
      step = integer(trimmed(rest.substr(step_at + 1)), range, geometric ? "factor" : "step");
      rest = rest.substr(0, step_at);
    }
    const int64_t end = integer(trimmed(rest), range, "end");
    if (start > end) throw error(fmt::format("range '{}' runs backwards", range));
    if (geometric) {
      if (step < 2) throw error(fmt::format("range '{}': the factor must be >= 2", range));
      if (start < 1) throw error(fmt::format("range '{}': a geometric range starts >= 1", range));
      for (int64_t v = start; v <= end; v *= step) {
        add(std::to_string(v));
        if (v > end / step) break;  // the next value would pass end (or overflow)
      }
    } else {
      if (step < 1) throw error(fmt::format("range '{}': the step must be >= 1", range));
      for (int64_t v = start; v <= end; v += step) {
        add(std::to_string(v));
        if (v > std::numeric_limits<int64_t>::max() - step) break;
      }
    }
  }

  const std::string kernel_;
  const std::string spec_;
  Axis axis_;
};

SweepCell status_cell(SweepCell::Kind kind, std::string detail = "") {
  SweepCell cell;
  cell.kind = kind;
  cell.detail = std::move(detail);
  return cell;
}

SweepCell number_cell(double value) {
  SweepCell cell;
  cell.kind = SweepCell::Kind::number;
  cell.value = value;
  return cell;
}

SweepCell verdict_cell(const Verdict& v) {
  switch (v.status) {
    case Verdict::Status::pass: return status_cell(SweepCell::Kind::pass);
    case Verdict::Status::fail: return status_cell(SweepCell::Kind::fail, v.signature());
    case Verdict::Status::rejected: return status_cell(SweepCell::Kind::rejected, v.message);
    case Verdict::Status::skipped: return status_cell(SweepCell::Kind::skipped, v.message);
  }
  return status_cell(SweepCell::Kind::not_applicable);
}

// The reason a cell has no such tensor starts with this; a sweep where every cell says so
// names a tensor the kernel does not have.
const char* kNoTensor = "no tensor";

std::string tensor_names(const NamedTensors& tensors) {
  std::vector<std::string> names;
  for (const auto& [name, t] : tensors)
    if (t.defined()) names.push_back(name);
  return fmt::format("{}", fmt::join(names, ", "));
}

// |numerator[T]| / |denominator[T]|, Frobenius norms in float64.
SweepCell norm_ratio(const NamedTensors& numerator, const NamedTensors& denominator,
                     const std::string& tensor) {
  const auto a = numerator.get(tensor), b = denominator.get(tensor);
  if (!a.defined() || !b.defined())
    return status_cell(SweepCell::Kind::not_applicable,
                       fmt::format("{} '{}' in this case (has {})", kNoTensor, tensor,
                                   tensor_names(b.defined() ? numerator : denominator)));
  const double top = a.to(at::kDouble).norm().item<double>();
  const double bottom = b.to(at::kDouble).norm().item<double>();
  if (bottom == 0) return number_cell(top == 0 ? 1.0 : INFINITY);
  return number_cell(top / bottom);
}

// The implementation against the float64 reference, same inputs and cotangents.
SweepCell reference_ratio(const Kernel& kernel, const Implementation& impl, const Case& c,
                          const std::string& tensor) {
  Verdict scratch = open_verdict(kernel, c);  // Calls folds memory findings into it
  Calls calls(kernel, impl, scratch);
  const Problem p = kernel.materialize(c);
  const auto outputs = calls.forward(p);
  const auto cot = random_cotangents(kernel, p, outputs);
  const auto actual = merged(outputs, calls.backward(p, cot));
  const auto expected = calls.reference(p, cot);
  return norm_ratio(actual, expected, tensor);
}

// The chunked run against the whole run, both with the implementation, exactly as the
// `chunked` property runs them.
SweepCell chunked_ratio(const Kernel& kernel, const Implementation& impl, const Case& c,
                        const std::string& tensor) {
  Verdict scratch = open_verdict(kernel, c);
  Calls calls(kernel, impl, scratch);
  const auto run = run_chunked(kernel, calls, kernel.materialize(c));
  if (!run)
    return status_cell(SweepCell::Kind::not_applicable,
                       "no sequence continues past its split point");
  return norm_ratio(run->joined, run->whole, tensor);
}

SweepCell largest_error_over_bound(const Verdict& v, const std::string& tensor) {
  if (v.status == Verdict::Status::rejected || v.status == Verdict::Status::skipped)
    return verdict_cell(v);
  double largest = -1;
  std::vector<std::string> rows;
  for (const auto& row : v.tensors) {
    rows.push_back(row.label());
    if (row.tensor == tensor) largest = std::max(largest, row.error_over_bound);
  }
  if (largest < 0)
    return status_cell(SweepCell::Kind::not_applicable,
                       fmt::format("{} '{}' in the verdict (rows: {})", kNoTensor, tensor,
                                   fmt::join(rows, ", ")));
  return number_cell(largest);
}

bool is_axis(const SweepSpec& spec, const std::string& name) {
  return spec.x.name == name || spec.y.name == name;
}

const DerivedParam* find_derived(const Schema& schema, const std::string& name) {
  for (const auto& d : schema.derived)
    if (d.name == name) return &d;
  return nullptr;
}

// The declared parameters the axes vary: an axis's own, or those its derived name sets;
// then every list with one entry per entry of a varied list, which fit() resizes and
// clamps along. The common fields (impl, dtype, ...) are no declared parameters.
std::set<std::string> varied_parameters(const Schema& schema, const SweepSpec& spec) {
  std::set<std::string> varied;
  for (const Axis* axis : {&spec.x, &spec.y}) {
    if (schema.find(axis->name)) varied.insert(axis->name);
    if (const DerivedParam* d = find_derived(schema, axis->name))
      varied.insert(d->changes.begin(), d->changes.end());
  }
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& p : schema.params)
      if (!p.list.same_count_as.empty() && varied.count(p.list.same_count_as))
        grew = varied.insert(p.name).second || grew;
  }
  return varied;
}

// A list that derived axes set entries of: the base case's entries with those an axis
// sets replaced by the axis's name, the axes in the schema's order. Nothing when no
// derived axis sets it (it is an axis itself, or follows one), when one changes it without
// saying which entries, or when it has one entry (the axis says it all).
std::optional<std::string> list_with_axes(const Schema& schema, const SweepSpec& spec,
                                          const Case& base, const std::string& list) {
  const ParamSpec* p = schema.find(list);
  if (!p || p->type != ParamType::integers || is_axis(spec, list)) return std::nullopt;
  std::vector<std::string> entries;
  for (const int64_t v : base.integers(list)) entries.push_back(std::to_string(v));
  bool set_by_an_axis = false;
  for (const auto& d : schema.derived) {
    if (!is_axis(spec, d.name) ||
        std::find(d.changes.begin(), d.changes.end(), list) == d.changes.end())
      continue;
    if (!d.sets_entries || d.sets_entries->list != list) return std::nullopt;
    for (const size_t i : d.sets_entries->indices(base))
      if (i < entries.size()) entries[i] = d.name;
    set_by_an_axis = true;
  }
  if (!set_by_an_axis || entries.size() < 2) return std::nullopt;
  return fmt::format("{}", fmt::join(entries, ","));
}

// Applies every axis value to the base case once, so that a bad value stops the sweep
// before its first cell rather than in its last.
void check_axis_values(const Case& base, const Axis& axis, const char* flag) {
  for (const auto& value : axis.values) {
    Case probe = base;
    try {
      set_param(find_kernel(probe.kernel).schema(), probe, axis.name, value);
    } catch (const CaseError& e) {
      throw UsageError(fmt::format("{} axis {}: {}", flag, axis.name, e.what()));
    }
    if (axis.name == "impl") resolve_implementation(probe.kernel, value);
    if (axis.name == "property") find_property(value);
  }
}

std::string title(const SweepResult& r) {
  const SweepSpec& s = r.spec;
  std::string t = fmt::format("{} of {}", s.metric.name(), s.kernel);
  if (!is_axis(s, "impl")) t += " " + s.impl;
  if (!is_axis(s, "property")) t += fmt::format(", property {}", s.property);
  return t;
}

std::string metric_explanation(const SweepResult& r) {
  const auto& m = r.spec.metric;
  const std::string impl = is_axis(r.spec, "impl") ? "the implementation" : r.spec.impl;
  switch (m.kind) {
    case Metric::Kind::verdict:
      return "Verdict of the property: pass, fail, rejected (the implementation refused), "
             "skipped";
    case Metric::Kind::error_over_bound:
      return fmt::format("Largest error/bound of {} (over 1 fails)", m.tensor);
    case Metric::Kind::ratio:
      return fmt::format(
          "norm({0}) of {1} / norm({0}) of the float64 reference (1 = same size)", m.tensor,
          impl);
    case Metric::Kind::chunked_ratio:
      return fmt::format("norm({0}) chunked / norm({0}) whole, both {1}, loss on the later "
                         "part (1 = same size)",
                         m.tensor, impl);
  }
  return "";
}

std::vector<std::string> fixed_lines(const SweepResult& r, size_t width) {
  std::vector<std::string> lines{"fixed:"};
  bool line_has_items = false;
  for (const auto& [name, value] : r.fixed) {
    const std::string item = fmt::format("{}={}", name, value);
    if (line_has_items && lines.back().size() + item.size() + 2 > width) {
      lines.back() += ",";
      lines.push_back("   ");
      line_has_items = false;
    }
    lines.back() += (line_has_items ? ", " : " ") + item;
    line_has_items = true;
  }
  return lines;
}

std::string markdown_escaped(const std::string& s) {
  std::string out;
  for (char ch : s) out += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return out;
}

}  // namespace

Axis parse_axis(const std::string& kernel, const std::string& spec) {
  return AxisParser(kernel, spec).parse();
}

std::string Metric::name() const {
  switch (kind) {
    case Kind::verdict: return "verdict";
    case Kind::error_over_bound: return "error_over_bound:" + tensor;
    case Kind::ratio: return "ratio:" + tensor;
    case Kind::chunked_ratio: return "chunked_ratio:" + tensor;
  }
  return "?";
}

Metric parse_metric(const std::string& spec) {
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const std::string tensor = colon == std::string::npos ? "" : trimmed(spec.substr(colon + 1));
  const char* known = "verdict, error_over_bound:TENSOR, ratio:TENSOR, chunked_ratio:TENSOR";
  Metric m;
  m.tensor = tensor;
  if (kind == "verdict") {
    if (colon != std::string::npos)
      throw UsageError(fmt::format("metric '{}': verdict takes no tensor", spec));
    m.tensor.clear();
    return m;
  }
  if (kind == "error_over_bound") m.kind = Metric::Kind::error_over_bound;
  else if (kind == "ratio") m.kind = Metric::Kind::ratio;
  else if (kind == "chunked_ratio") m.kind = Metric::Kind::chunked_ratio;
  else throw UsageError(fmt::format("unknown metric '{}'; known: {}", spec, known));
  if (tensor.empty())
    throw UsageError(fmt::format("metric '{}' needs a tensor: {}:TENSOR", spec, kind));
  return m;
}

std::string to_string(SweepCell::Kind kind) {
  switch (kind) {
    case SweepCell::Kind::number: return "number";
    case SweepCell::Kind::pass: return "pass";
    case SweepCell::Kind::fail: return "fail";
    case SweepCell::Kind::rejected: return "rejected";
    case SweepCell::Kind::skipped: return "skipped";
    case SweepCell::Kind::not_applicable: return "n/a";
    case SweepCell::Kind::invalid: return "invalid";
  }
  return "?";
}

std::string SweepCell::label() const {
  if (kind != Kind::number) return to_string(kind);
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  if (value == 0) return "0";
  return fmt::format("{:.3g}", value);
}

Case base_case(const SweepSpec& spec) {
  const Kernel& kernel = find_kernel(spec.kernel.empty() ? default_kernel() : spec.kernel);
  const Schema& schema = kernel.schema();
  Case c;
  c.impl = spec.impl.empty() ? kernel.default_implementation() : spec.impl;
  c.property = spec.property;
  c.seed = spec.seed;
  c = default_case(schema, c);
  for (const auto& assignment : spec.set) {
    const auto eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError(fmt::format("--set '{}': expected NAME=VALUE", assignment));
    set_param(schema, c, trimmed(assignment.substr(0, eq)), trimmed(assignment.substr(eq + 1)));
  }
  return c;
}

std::vector<std::pair<std::string, std::string>> fixed_parameters(const Schema& schema,
                                                                  const SweepSpec& spec,
                                                                  const Case& base) {
  const std::set<std::string> varied = varied_parameters(schema, spec);
  std::vector<std::pair<std::string, std::string>> fixed;
  for (const auto& name : settable_names(schema)) {
    if (name == "impl" || name == "property" || is_axis(spec, name) ||
        find_derived(schema, name))
      continue;
    if (varied.count(name)) {
      if (const auto shown = list_with_axes(schema, spec, base, name))
        fixed.emplace_back(name, *shown);
      continue;
    }
    const std::string value = get_param(schema, base, name);
    if (!value.empty()) fixed.emplace_back(name, value);
  }
  return fixed;
}

Case cell_case(const Case& base, const Axis& x, size_t x_index, const Axis& y, size_t y_index) {
  const Schema& schema = find_kernel(base.kernel).schema();
  Case c = base;
  set_param(schema, c, x.name, x.values.at(x_index));
  set_param(schema, c, y.name, y.values.at(y_index));
  return c;
}

SweepCell measure(const Case& c, const Metric& metric) {
  const auto problems = validate(find_kernel(c.kernel).schema(), c);
  if (!problems.empty())
    return status_cell(SweepCell::Kind::invalid, fmt::format("{}", fmt::join(problems, "; ")));
  switch (metric.kind) {
    case Metric::Kind::verdict: return verdict_cell(evaluate(c));
    case Metric::Kind::error_over_bound:
      return largest_error_over_bound(evaluate(c), metric.tensor);
    case Metric::Kind::ratio:
    case Metric::Kind::chunked_ratio: {
      const Kernel& kernel = find_kernel(c.kernel);
      const Implementation impl = resolve_implementation(c.kernel, c.impl);
      try {
        return metric.kind == Metric::Kind::ratio
                   ? reference_ratio(kernel, impl, c, metric.tensor)
                   : chunked_ratio(kernel, impl, c, metric.tensor);
      } catch (const ImplementationRefused& e) {
        return status_cell(SweepCell::Kind::rejected, e.what());
      }
    }
  }
  return status_cell(SweepCell::Kind::not_applicable);
}

SweepResult run_sweep_grid(
    const SweepSpec& given,
    const std::function<void(size_t, size_t, const SweepCell&)>& on_cell) {
  // Empty kernel and implementation mean the registry's and the kernel's defaults.
  SweepSpec spec = given;
  if (spec.kernel.empty()) spec.kernel = default_kernel();
  if (spec.impl.empty()) spec.impl = find_kernel(spec.kernel).default_implementation();
  resolve_implementation(spec.kernel, spec.impl);
  find_property(spec.property);
  if (spec.x.values.empty() || spec.y.values.empty())
    throw UsageError("a sweep needs an x and a y axis, each with at least one value");
  if (spec.x.name == spec.y.name)
    throw UsageError(fmt::format("--x and --y both sweep {}", spec.x.name));
  const Case base = base_case(spec);
  check_axis_values(base, spec.x, "--x");
  check_axis_values(base, spec.y, "--y");

  const auto start = std::chrono::steady_clock::now();
  SweepResult r;
  r.spec = spec;
  r.fixed = fixed_parameters(find_kernel(spec.kernel).schema(), spec, base);
  const size_t total = spec.x.values.size() * spec.y.values.size();
  size_t done = 0;
  for (size_t yi = 0; yi < spec.y.values.size(); ++yi) {
    r.cells.emplace_back();
    for (size_t xi = 0; xi < spec.x.values.size(); ++xi) {
      r.cells.back().push_back(measure(cell_case(base, spec.x, xi, spec.y, yi), spec.metric));
      if (on_cell) on_cell(++done, total, r.cells.back().back());
    }
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // A tensor missing from every cell is a misspelt metric, not a finding.
  bool all_missing = true;
  for (const auto& row : r.cells)
    for (const auto& cell : row)
      all_missing = all_missing && cell.kind == SweepCell::Kind::not_applicable &&
                    cell.detail.rfind(kNoTensor, 0) == 0;
  if (all_missing)
    throw UsageError(fmt::format("metric {}: {}", spec.metric.name(), r.cells[0][0].detail));
  return r;
}

std::string to_markdown(const SweepResult& r) {
  const SweepSpec& s = r.spec;
  std::string md = fmt::format("## {}\n\n", markdown_escaped(title(r)));
  md += fmt::format("{}. Rows: {}, columns: {}.\n\n", markdown_escaped(metric_explanation(r)),
                    s.y.name, s.x.name);
  std::vector<std::string> fixed;
  for (const auto& [name, value] : r.fixed) fixed.push_back(fmt::format("`{}={}`", name, value));
  md += fmt::format("Fixed: {}\n\n", fmt::join(fixed, ", "));

  md += fmt::format("| {} \\ {} |", s.y.name, s.x.name);
  for (const auto& v : s.x.values) md += fmt::format(" {} |", markdown_escaped(v));
  md += "\n|---|";
  for (size_t i = 0; i < s.x.values.size(); ++i) md += "---:|";
  md += "\n";

  // A cell with a reason (a signature, a refusal) refers to a numbered note below.
  std::vector<std::string> notes;
  for (size_t yi = 0; yi < s.y.values.size(); ++yi) {
    md += fmt::format("| {} |", markdown_escaped(s.y.values[yi]));
    for (const auto& cell : r.cells[yi]) {
      std::string text = cell.label();
      if (!cell.detail.empty()) {
        const std::string note = fmt::format("{}: {}", cell.label(), cell.detail);
        auto it = std::find(notes.begin(), notes.end(), note);
        if (it == notes.end()) it = notes.insert(notes.end(), note);
        text += fmt::format(" ({})", it - notes.begin() + 1);
      }
      md += fmt::format(" {} |", markdown_escaped(text));
    }
    md += "\n";
  }
  if (!notes.empty()) md += "\n";
  for (size_t i = 0; i < notes.size(); ++i)
    md += fmt::format("{}. {}\n", i + 1, markdown_escaped(notes[i]));
  md += fmt::format("\n{} cells in {:.2f} s.\n", s.x.values.size() * s.y.values.size(),
                    r.seconds);
  return md;
}

nlohmann::json to_json(const SweepResult& r) {
  using nlohmann::json;
  const SweepSpec& s = r.spec;
  json fixed = json::object();
  for (const auto& [name, value] : r.fixed) fixed[name] = value;
  json rows = json::array();
  for (const auto& row : r.cells) {
    json cells = json::array();
    for (const auto& cell : row) {
      json j = {{"status", to_string(cell.kind)}, {"label", cell.label()}};
      // JSON has no infinity: a number that is not finite is null, its label says which.
      j["value"] = cell.kind == SweepCell::Kind::number && std::isfinite(cell.value)
                       ? json(cell.value)
                       : json(nullptr);
      if (!cell.detail.empty()) j["detail"] = cell.detail;
      cells.push_back(j);
    }
    rows.push_back(cells);
  }
  return {{"kernel", s.kernel},
          {"impl", s.impl},
          {"property", s.property},
          {"metric", s.metric.name()},
          {"seed", s.seed},
          {"set", s.set},
          {"fixed", fixed},
          {"x", {{"name", s.x.name}, {"values", s.x.values}}},
          {"y", {{"name", s.y.name}, {"values", s.y.values}}},
          {"cells", rows},  // [y index][x index]
          {"seconds", r.seconds}};
}

Heatmap to_heatmap(const SweepResult& r) {
  const SweepSpec& s = r.spec;
  Heatmap h;
  h.title = title(r);
  h.subtitle.push_back(metric_explanation(r));
  for (const auto& line : fixed_lines(r, 100)) h.subtitle.push_back(line);
  h.x_label = s.x.name;
  h.y_label = s.y.name;
  h.x_ticks = s.x.values;
  h.y_ticks = s.y.values;
  switch (s.metric.kind) {
    case Metric::Kind::verdict:
      h.scale = ColourScale::categorical;
      h.legend_title = "verdict";
      break;
    case Metric::Kind::error_over_bound:
      // Within the bound is good (green), over it a failure (red); 1 is the line.
      h.scale = ColourScale::log_centred;
      h.low_colour = "#1a9850";
      h.high_colour = "#d73027";
      h.legend_title = "error/bound (log)";
      break;
    case Metric::Kind::ratio:
    case Metric::Kind::chunked_ratio:
      h.scale = ColourScale::log_centred;
      h.legend_title = "ratio (log, 1 = equal)";
      break;
  }
  for (size_t yi = 0; yi < s.y.values.size(); ++yi) {
    h.cells.emplace_back();
    for (size_t xi = 0; xi < s.x.values.size(); ++xi) {
      const SweepCell& cell = r.at(xi, yi);
      HeatmapCell hc;
      hc.text = cell.label();
      if (cell.kind == SweepCell::Kind::number) hc.value = cell.value;
      hc.category = cell.label();
      hc.tooltip = fmt::format("{}={}, {}={}: {}", s.x.name, s.x.values[xi], s.y.name,
                               s.y.values[yi], cell.detail.empty() ? cell.label() : cell.detail);
      h.cells.back().push_back(hc);
    }
  }
  return h;
}

}  // namespace kprop
