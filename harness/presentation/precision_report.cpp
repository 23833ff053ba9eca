#include "harness/presentation/precision_report.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cmath>
#include <limits>

#include "harness/model/propagated_error.h"
#include "harness/model/random_tensor.h"
#include "harness/model/tolerance.h"
#include "harness/presentation/report_numbers.h"

namespace kprop {

namespace {

const double kInf = std::numeric_limits<double>::infinity();

std::vector<int64_t> unflatten(int64_t flat, at::IntArrayRef sizes) {
  std::vector<int64_t> index(sizes.size());
  for (int64_t d = static_cast<int64_t>(sizes.size()) - 1; d >= 0; --d) {
    index[d] = flat % sizes[d];
    flat /= sizes[d];
  }
  return index;
}

at::Tensor doubles(const at::Tensor& t) { return t.to(at::kDouble).cpu().contiguous(); }

// x / y for error/bound: 0 / 0 is 0 (an exact element with a zero bound), x / 0 infinite.
double ratio(double x, double y) {
  if (x == 0) return 0;
  return y > 0 ? x / y : kInf;
}

// "3.1e+05 (2^18)": a magnitude with its binade, which says which ulp applies.
std::string magnitude_text(double m) {
  if (!(m > 0) || !std::isfinite(m)) return number(m);
  return fmt::format("{} (2^{})", number(m), std::ilogb(m));
}

std::string ulps_text(double ulps) {
  if (!std::isfinite(ulps)) return number(ulps);
  if (ulps >= 10) return fmt::format("{:.0f}", ulps);
  return fmt::format("{:.2g}", ulps);
}

std::string index_text(const std::vector<int64_t>& index) {
  return fmt::format("[{}]", fmt::join(index, ", "));
}

}  // namespace

double ulp_at(double magnitude, at::ScalarType dtype) {
  int digits = 24, min_exponent = -126;
  switch (dtype) {
    case at::kBFloat16: digits = 8; break;
    case at::kHalf: digits = 11, min_exponent = -14; break;
    case at::kDouble: digits = 53, min_exponent = -1022; break;
    default: break;
  }
  const double m = std::abs(magnitude);
  const int exponent = m > 0 && std::isfinite(m) ? std::ilogb(m) : min_exponent;
  return std::ldexp(1.0, std::max(exponent, min_exponent) - (digits - 1));
}

Comparison compare_precision(const at::Tensor& actual, const at::Tensor& expected,
                             const at::Tensor& bound, const at::Tensor& typical,
                             const std::vector<double>& rtols, at::ScalarType low) {
  TORCH_CHECK(actual.sizes() == expected.sizes() && bound.sizes() == expected.sizes() &&
                  typical.sizes() == expected.sizes(),
              "compare_precision: tensors of different shapes");
  const auto a = doubles(actual), e = doubles(expected), b = doubles(bound),
             t = doubles(typical);
  const double *pa = a.data_ptr<double>(), *pe = e.data_ptr<double>(),
               *pb = b.data_ptr<double>(), *pt = t.data_ptr<double>();
  Comparison c;
  c.elements = e.numel();
  c.atol.assign(rtols.size(), 0.0);
  int64_t at_max = -1, at_ulps = -1, at_worst = -1;
  // Ulps are counted where the values are normal in the low dtype and an fp32
  // intermediate of their size still has all 24 bits (>= 2^-102): nearer underflow, a few
  // steps say nothing about where a kernel rounds (gelu of a very negative input is such
  // a value, times b).
  const double counted_from =
      std::max(smallest_normal(low), smallest_normal(at::kFloat) / unit_roundoff(at::kFloat));
  for (int64_t i = 0; i < c.elements; ++i) {
    const bool same = pa[i] == pe[i] || (std::isnan(pa[i]) && std::isnan(pe[i]));
    if (same) continue;
    ++c.differing;
    double diff = std::abs(pa[i] - pe[i]);
    if (std::isnan(diff)) diff = kInf;
    if (diff > c.max_abs || at_max < 0) c.max_abs = diff, at_max = i;
    const double smaller = std::min(std::abs(pa[i]), std::abs(pe[i]));
    const double ulps = diff / ulp_at(smaller, low);
    if (smaller >= counted_from && (ulps > c.max_ulps || at_ulps < 0))
      c.max_ulps = ulps, at_ulps = i;
    for (size_t r = 0; r < rtols.size(); ++r)
      c.atol[r] = std::isfinite(diff) ? std::max(c.atol[r], diff - rtols[r] * std::abs(pe[i]))
                                      : kInf;
    const double over = ratio(diff, pb[i]);
    if (over > c.error_over_bound || at_worst < 0) c.error_over_bound = over, at_worst = i;
    c.error_over_typical = std::max(c.error_over_typical, ratio(diff, pt[i]));
  }
  if (at_max >= 0) {
    c.index = unflatten(at_max, e.sizes());
    c.magnitude = std::abs(pe[at_max]);
    c.ulps = c.max_abs / ulp_at(std::min(std::abs(pa[at_max]), std::abs(pe[at_max])), low);
    c.bound_there = pb[at_max];
    c.typical_there = pt[at_max];
    if (at_ulps >= 0) {
      c.max_ulps_index = unflatten(at_ulps, e.sizes());
      c.max_ulps_magnitude = std::abs(pe[at_ulps]);
    }
    c.worst_index = unflatten(at_worst, e.sizes());
  }
  return c;
}

std::string to_string(PrecisionVerdict v) {
  switch (v) {
    case PrecisionVerdict::bound_broken: return "bound_broken";
    case PrecisionVerdict::bit_exact: return "bit_exact";
    case PrecisionVerdict::outside_bound: return "outside_bound";
    case PrecisionVerdict::farther: return "farther";
    case PrecisionVerdict::rounding: return "rounding";
  }
  return "?";
}

namespace {

// A reference the two chains are measured against, with its bound: the float64 chain, and
// for the kernel's own outputs also the kernel in float64 on the chain's own inputs.
struct Measure {
  const char* of;  // what the bound is a bound of the distance to
  const Comparison* impl;
  const Comparison* framework;
};

std::vector<Measure> measures(const TensorPrecision& t) {
  std::vector<Measure> m{{"float64", &t.impl_vs_exact, &t.framework_vs_exact}};
  if (t.has_local)
    m.push_back({"the kernel in float64 on its own inputs", &t.impl_vs_local,
                 &t.framework_vs_local});
  return m;
}

// Does measure m give verdict v? Written so that a NaN ratio counts as out of bounds.
bool gives(const Measure& m, PrecisionVerdict v) {
  const double impl = m.impl->error_over_bound, fw = m.framework->error_over_bound;
  switch (v) {
    case PrecisionVerdict::bound_broken: return !(fw <= 1);
    case PrecisionVerdict::outside_bound: return !(impl <= 1);
    case PrecisionVerdict::farther: return !(impl <= kFartherThanFramework * fw);
    default: return false;
  }
}

// The measure that gave verdict v (the first), or the chain's.
Measure deciding(const TensorPrecision& t, PrecisionVerdict v) {
  for (const auto& m : measures(t))
    if (gives(m, v)) return m;
  return measures(t).front();
}

bool any_gives(const TensorPrecision& t, PrecisionVerdict v) {
  const auto all = measures(t);
  return std::any_of(all.begin(), all.end(), [&](const Measure& m) { return gives(m, v); });
}

// "0.448 and 0.448; of the kernel on its own inputs: 0.3 and 0.3"
std::string both_ratios(const TensorPrecision& t, bool framework_only) {
  std::vector<std::string> parts;
  for (const auto& m : measures(t)) {
    const std::string ratios =
        framework_only ? number(m.framework->error_over_bound)
                       : fmt::format("{} and {}", number(m.impl->error_over_bound),
                                     number(m.framework->error_over_bound));
    parts.push_back(parts.empty() ? ratios : fmt::format("on its own inputs: {}", ratios));
  }
  return fmt::format("{}", fmt::join(parts, "; "));
}

}  // namespace

PrecisionVerdict judge(const TensorPrecision& t) {
  if (any_gives(t, PrecisionVerdict::bound_broken)) return PrecisionVerdict::bound_broken;
  if (t.vs_framework.differing == 0) return PrecisionVerdict::bit_exact;
  if (any_gives(t, PrecisionVerdict::outside_bound)) return PrecisionVerdict::outside_bound;
  if (any_gives(t, PrecisionVerdict::farther)) return PrecisionVerdict::farther;
  return PrecisionVerdict::rounding;
}

std::string verdict_reason(const TensorPrecision& t, DType low,
                           const std::string& check_command) {
  const auto& f = t.vs_framework;
  const std::string dtype = to_string(low);
  const PrecisionVerdict v = judge(t);
  const Measure m = deciding(t, v);
  const double impl = m.impl->error_over_bound, fw = m.framework->error_over_bound;
  const std::string point = t.rounding_point.empty() ? "" : "; rounding point: " + t.rounding_point;
  switch (v) {
    case PrecisionVerdict::bound_broken:
      return fmt::format(
          "the framework's own {} chain is outside the derived bound of {} (error/bound {} at "
          "{}): this machine's arithmetic is not what the bound models (e.g. reduced-precision "
          "matmul reductions), so nothing is concluded about the implementation.",
          dtype, m.of, number(fw), index_text(m.framework->worst_index));
    case PrecisionVerdict::bit_exact:
      return fmt::format(
          "bit-exact with the framework's {} chain (both within the derived bound of float64, "
          "error/bound {}).",
          dtype, both_ratios(t, true));
    case PrecisionVerdict::outside_bound:
      return fmt::format(
          "outside the derived bound of {} (error/bound {} at {}; the framework's chain: "
          "{}{}): a defect — run `{}` for the minimal case.",
          m.of, number(impl), index_text(m.impl->worst_index), number(fw), point, check_command);
    case PrecisionVerdict::farther:
      return fmt::format(
          "within the derived bound of {} (error/bound {}) but {:.1f}x as far from it as the "
          "framework's own {} chain ({}), more than the {}x allowed{}: a defect in the "
          "rounding policy — run `{}` for the minimal case.",
          m.of, number(impl), fw > 0 ? impl / fw : kInf, dtype, number(fw),
          kFartherThanFramework, point, check_command);
    case PrecisionVerdict::rounding: {
      // Ulps say how a kernel rounds; near the zeros of a sum (a matmul's output) they say
      // only that it cancelled, so they are named for the kernel's own outputs.
      std::string most =
          t.kernel_output ? fmt::format(", by at most {} ulp at |value| {}",
                                        ulps_text(f.max_ulps), number(f.max_ulps_magnitude))
                          : "";
      return fmt::format(
          "differs from the framework by {} ulp at |value| {} (diff {}; {} of {} elements "
          "differ{}{}); both are within the derived bound of float64 (error/bound {}) and the "
          "implementation is no more than {}x as far from float64 as the framework: "
          "rounding, not a bug.",
          ulps_text(f.ulps), magnitude_text(f.magnitude), number(f.max_abs), f.differing,
          f.elements, most, point, both_ratios(t, false), kFartherThanFramework);
    }
  }
  return "";
}

bool PrecisionReport::passed() const {
  return std::all_of(tensors.begin(), tensors.end(), [](const TensorPrecision& t) {
    return t.verdict == PrecisionVerdict::bit_exact || t.verdict == PrecisionVerdict::rounding;
  });
}

const TensorPrecision* PrecisionReport::first_deviation() const {
  for (const auto& t : tensors)
    if (t.vs_framework.differing > 0) return &t;
  return nullptr;
}

double PrecisionReport::growth_to_default(const TensorPrecision& t) const {
  double factor = 1;
  for (const auto& [name, exponent] : t.growth)
    for (const auto& p : params)
      if (p.name == name && values.count(name))
        factor *= std::pow(double(p.value) / double(values.at(name)), exponent);
  return factor;
}

void judge_run(PrecisionReport& r, const ModelRun& run) {
  const auto start = std::chrono::steady_clock::now();
  const at::ScalarType low = scalar_type(r.dtype);
  const std::string check = fmt::format("kprop check {} --impl {}", r.kernel, r.impl);
  r.tensors.clear();
  for (const auto& c : run.tensors) {
    TensorPrecision t;
    t.name = c.name;
    t.about = c.about;
    t.kernel_output = c.kernel_output;
    t.reduction = c.reduction;
    t.elements = c.exact.numel();
    t.max_exact = c.exact.numel() ? c.exact.abs().max().item<double>() : 0.0;
    t.growth = c.growth;
    t.rounding_point = c.rounding_point;
    // Each chain is within its own bound of float64, so the two are within twice it.
    t.vs_framework =
        compare_precision(c.impl, c.framework, 2 * c.bound, 2 * c.typical, r.rtols, low);
    t.impl_vs_exact = compare_precision(c.impl, c.exact, c.bound, c.typical, r.rtols, low);
    t.framework_vs_exact =
        compare_precision(c.framework, c.exact, c.bound, c.typical, r.rtols, low);
    t.has_local = c.local_exact.defined();
    if (t.has_local) {
      t.impl_vs_local =
          compare_precision(c.impl, c.local_exact, c.local_bound, c.local_typical, r.rtols, low);
      t.framework_vs_local = compare_precision(c.framework, c.local_exact, c.local_bound,
                                               c.local_typical, r.rtols, low);
    }
    t.verdict = judge(t);
    t.reason = verdict_reason(t, r.dtype, check);
    r.tensors.push_back(std::move(t));
  }
  r.seconds = run.seconds;
  r.seconds.push_back(
      {"report", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()});
  r.total_seconds = 0;
  for (const auto& [phase, s] : r.seconds) r.total_seconds += s;
}

PrecisionReport precision_report(const PrecisionModel& model, const PrecisionSetup& setup,
                                 const std::vector<double>& rtols, int threads) {
  PrecisionReport r;
  r.model = model.name();
  r.about = model.about();
  r.kernel = model.kernel();
  r.impl = setup.impl.name;
  r.framework = setup.framework.name;
  r.reference = setup.reference.name;
  r.params = model.params();
  r.values = setup.params;
  r.scale = setup.scale;
  r.dtype = setup.dtype;
  r.seed = setup.seed;
  r.device = setup.device.str();
  if (matmul_accumulation(scalar_type(setup.dtype), setup.device) > unit_roundoff(at::kFloat))
    r.device_note = fmt::format(" (its {} matmuls accumulate in {}, not fp32; the bounds say so)",
                                to_string(setup.dtype), to_string(setup.dtype));
  r.threads = threads > 0 ? threads : at::get_num_threads();
  r.rtols = rtols;
  r.bound_model = model.bound_model();
  // CPU time as well as wall time: on a shared machine the wall time says more about the
  // neighbours than about the report.
  const std::clock_t start = std::clock();
  judge_run(r, model.run(setup));
  r.cpu_seconds = double(std::clock() - start) / CLOCKS_PER_SEC;
  return r;
}

// ---- rendering ---------------------------------------------------------------------

namespace {

std::string params_text(const PrecisionReport& r) {
  std::vector<std::string> parts;
  for (const auto& p : r.params)
    if (r.values.count(p.name)) parts.push_back(fmt::format("{}={}", p.name, r.values.at(p.name)));
  return fmt::format("{}", fmt::join(parts, ","));
}

bool default_shape(const PrecisionReport& r) {
  for (const auto& p : r.params)
    if (r.values.count(p.name) && r.values.at(p.name) != p.value) return false;
  return true;
}

std::string max_ulps_text(const Comparison& c) {
  if (c.max_ulps == 0) return "0";
  return fmt::format("{} at {}", ulps_text(c.max_ulps), number(c.max_ulps_magnitude));
}

std::string tensor_label(const TensorPrecision& t) {
  if (t.reduction > 0) return fmt::format("**{}** ({}, K={})", t.name, t.about, t.reduction);
  return fmt::format("**{}** ({})", t.name, t.about);
}

std::string comparison_row(const std::string& tensor, const std::string& what,
                           const Comparison& c, bool counts) {
  std::string row = fmt::format("| {} | {} | {} | {} | {} |", tensor, what, number(c.max_abs),
                                c.differing ? magnitude_text(c.magnitude) : "–",
                                c.differing ? ulps_text(c.ulps) : "–");
  row += counts ? fmt::format(" {} of {} | {} |", c.differing, c.elements, max_ulps_text(c))
                : " – | – |";
  for (double atol : c.atol) row += fmt::format(" {} |", number(atol));
  row += fmt::format(" {} / {} | {} / {} |\n", number(c.bound_there), number(c.typical_there),
                     number(c.error_over_bound), number(c.error_over_typical));
  return row;
}

std::string table(const PrecisionReport& r) {
  std::string md = "| tensor | comparison | max \\|diff\\| | \\|value\\| there | ulps there "
                   "| elements differing | max ulps |";
  for (double rtol : r.rtols) md += fmt::format(" atol@rtol={} |", rtol_text(rtol));
  md += " bound there (γ_K / λ√K·u) | max err/bound (γ_K / λ√K·u) |\n|---|---|---:|---:|---:|---:|---:|";
  for (size_t i = 0; i < r.rtols.size(); ++i) md += "---:|";
  md += "---:|---:|\n";
  for (const auto& t : r.tensors) {
    md += comparison_row(tensor_label(t), "impl vs framework", t.vs_framework, true);
    md += comparison_row("", "impl vs float64", t.impl_vs_exact, false);
    md += comparison_row("", "framework vs float64", t.framework_vs_exact, false);
    if (t.has_local) {
      md += comparison_row("", "impl vs float64 on its inputs", t.impl_vs_local, false);
      md += comparison_row("", "framework vs float64 on its inputs", t.framework_vs_local, false);
    }
  }
  return md;
}

std::string first_deviation_text(const PrecisionReport& r) {
  const TensorPrecision* t = r.first_deviation();
  if (!t) return "The implementation's chain is bit-exact with the framework's in every tensor.\n";
  const auto& f = t->vs_framework;
  return fmt::format(
      "First deviation from the framework in the chain: **{}** ({}{}): {} of {} elements "
      "differ, by at most {} ulp (at |value| {}){}.\n",
      t->name, t->about,
      t->kernel_output ? ", an output of the kernel under test itself"
                       : ", an output of a framework op",
      f.differing, f.elements, ulps_text(f.max_ulps), magnitude_text(f.max_ulps_magnitude),
      t->rounding_point.empty()
          ? ""
          : fmt::format("; every difference is the rounding point \"{}\"", t->rounding_point));
}

// What the user can write in the pull request.
std::string conclusion(const PrecisionReport& r) {
  std::vector<std::string> defects;
  for (const auto& t : r.tensors)
    if (t.verdict != PrecisionVerdict::bit_exact && t.verdict != PrecisionVerdict::rounding)
      defects.push_back(fmt::format("{} ({})", t.name, to_string(t.verdict)));
  if (!defects.empty())
    return fmt::format("**Not rounding:** {}. See the verdicts above.\n",
                       fmt::join(defects, ", "));
  const TensorPrecision* first = r.first_deviation();
  if (!first)
    return fmt::format(
        "**Bit-exact:** {} follows the framework's {} rounding policy exactly; a test of this "
        "module can compare it with the framework's chain at atol = rtol = 0.\n",
        r.impl, to_string(r.dtype));
  const TensorPrecision* widest = nullptr;  // the largest max |diff| outside the kernel
  double atol = 0;
  for (const auto& t : r.tensors) {
    if (t.kernel_output) continue;
    if (!widest || t.vs_framework.max_abs > widest->vs_framework.max_abs) widest = &t;
    if (!t.vs_framework.atol.empty()) atol = std::max(atol, t.vs_framework.atol.front());
  }
  std::string text = fmt::format(
      "**Rounding, not a bug:** {} differs from the framework's {} policy first in {} ({}{}), "
      "by at most {} ulp.",
      r.impl, to_string(r.dtype), first->name, first->about,
      first->rounding_point.empty() ? "" : ": " + first->rounding_point,
      ulps_text(first->vs_framework.max_ulps));
  if (widest && widest->vs_framework.differing > 0)
    text += fmt::format(
        " The {} matmuls turn that into differences of up to {} ({} ulp at |value| {}, in "
        "{}); every tensor stays within its derived bound of float64 and no more than {}x as "
        "far from it as the framework's own chain.",
        to_string(r.dtype), number(widest->vs_framework.max_abs),
        ulps_text(widest->vs_framework.ulps), magnitude_text(widest->vs_framework.magnitude),
        widest->name, kFartherThanFramework);
  if (!r.rtols.empty())
    text += fmt::format(
        " A hand-set tolerance would need atol {} at rtol={} for this shape; the derived "
        "bound (error/bound <= 1, this report) replaces it.",
        number(atol), rtol_text(r.rtols.front()));
  return text + "\n";
}

std::string growth_text(const std::map<std::string, double>& growth) {
  std::vector<std::string> parts;
  for (const auto& [name, e] : growth) {
    if (e == 0) continue;
    if (e == 1) parts.push_back(name);
    else if (e == 0.5) parts.push_back(fmt::format("√{}", name));
    else if (e == -0.5) parts.push_back(fmt::format("1/√{}", name));
    else parts.push_back(fmt::format("{}^{}", name, e));
  }
  return parts.empty() ? "1" : fmt::format("{}", fmt::join(parts, "·"));
}

std::string extrapolation(const PrecisionReport& r) {
  const at::ScalarType low = scalar_type(r.dtype);
  std::string md = fmt::format(
      "### Extrapolated to the default shape\n\nEvery value of a tensor grows as its "
      "standard deviation does, and so do its rounding errors and the differences between "
      "the chains (their share of the value stays; the largest of more elements is a "
      "little larger still). A smallest atol does not extrapolate: it comes from the tails "
      "of the differences at small values.\n\n"
      "| tensor | grows as | × | max \\|value\\| here → there | {} ulp there | max "
      "\\|diff\\| here → there |\n|---|---|---:|---:|---:|---:|\n",
      to_string(r.dtype));
  for (const auto& t : r.tensors) {
    const double factor = r.growth_to_default(t), there = t.max_exact * factor;
    const auto& f = t.vs_framework;
    md += fmt::format("| {} | {} | {} | {} → {} | {} | {} → {} |\n", t.name,
                      growth_text(t.growth), number(factor), magnitude_text(t.max_exact),
                      magnitude_text(there), number(ulp_at(there, low)), number(f.max_abs),
                      number(f.max_abs * factor));
  }
  return md;
}

std::string seconds_text(const PrecisionReport& r) {
  std::vector<std::string> parts;
  for (const auto& [phase, s] : r.seconds) parts.push_back(fmt::format("{} {:.1f} s", phase, s));
  return fmt::format("Time: {:.1f} s on {} ({}, {:.1f} s of CPU): {}.\n", r.total_seconds,
                     r.device, count_of(r.threads, "thread"), r.cpu_seconds,
                     fmt::join(parts, ", "));
}

}  // namespace

std::string precision_markdown(const PrecisionReport& r) {
  std::string md = fmt::format("## Precision of {} / {} in {}\n\n", r.model, r.impl,
                               to_string(r.dtype));
  md += fmt::format("{}.\n\nShape: {}{}; weights {}; seed {}; framework ops on {}{}. Compared: "
                    "{} (implementation) vs {} (framework policy) vs {} (float64).\n\n",
                    r.about, params_text(r), default_shape(r) ? " (the default)" : "",
                    r.scale == WeightScale::fan_in ? "scaled by 1/√fan_in" : "unscaled (randn)",
                    r.seed, r.device, r.device_note, r.impl, r.framework, r.reference);
  md += table(r) + "\n";
  md += "Verdicts:\n";
  for (const auto& t : r.tensors)
    md += fmt::format("- **{}** ({}): {}\n", t.name, to_string(t.verdict), t.reason);
  md += "\n" + first_deviation_text(r) + "\n" + conclusion(r) + "\n";
  if (!default_shape(r)) md += extrapolation(r) + "\n";
  md += fmt::format(
      "How to read this: *ulps* count {} ulps at the smaller of the two magnitudes (two "
      "neighbouring values are 1 ulp apart; near the zeros of a matmul's output, where "
      "its terms cancel, a small absolute difference is many ulps, which is what an atol "
      "pays for); *atol@rtol=r* is the smallest atol for which "
      "`|actual - expected| <= atol + r |expected|` holds for every element, as "
      "`torch.testing.assert_close` checks it; *bound there* is the derived bound at the "
      "element of max |diff| (for impl vs framework: the sum of both chains' bounds); "
      "*on its inputs* compares a kernel output with the kernel in float64 on the bf16 "
      "inputs both chains gave it, within the bound of the kernel's own roundings: where "
      "the matmuls' errors dwarf the kernel's, a kernel defect still shows there; "
      "*err/bound* is the largest |diff| / bound over the tensor: γ_K (the worst case) "
      "must stay <= 1; λ√K·u (the typical size, λ = 1) is usually of order 1, a few over "
      "millions of elements. {}\n\n",
      to_string(r.dtype), r.bound_model);
  md += seconds_text(r);
  return md;
}

nlohmann::json precision_json(const PrecisionReport& r) {
  const auto comparison = [&](const Comparison& c) {
    nlohmann::json atol = nlohmann::json::array();
    for (size_t i = 0; i < r.rtols.size() && i < c.atol.size(); ++i)
      atol.push_back({{"rtol", r.rtols[i]}, {"atol", number_json(c.atol[i])}});
    return nlohmann::json{{"elements", c.elements},
                          {"differing", c.differing},
                          {"max_abs", number_json(c.max_abs)},
                          {"index", c.index},
                          {"magnitude", number_json(c.magnitude)},
                          {"ulps", number_json(c.ulps)},
                          {"max_ulps", number_json(c.max_ulps)},
                          {"max_ulps_index", c.max_ulps_index},
                          {"max_ulps_magnitude", number_json(c.max_ulps_magnitude)},
                          {"atol", atol},
                          {"bound_there", number_json(c.bound_there)},
                          {"typical_there", number_json(c.typical_there)},
                          {"error_over_bound", number_json(c.error_over_bound)},
                          {"error_over_typical", number_json(c.error_over_typical)},
                          {"worst_index", c.worst_index}};
  };
  nlohmann::json tensors = nlohmann::json::array();
  for (const auto& t : r.tensors)
    tensors.push_back({{"tensor", t.name},
                       {"about", t.about},
                       {"kernel_output", t.kernel_output},
                       {"reduction", t.reduction},
                       {"elements", t.elements},
                       {"max_abs_value", number_json(t.max_exact)},
                       {"growth", t.growth},
                       {"growth_to_default", number_json(r.growth_to_default(t))},
                       {"rounding_point", t.rounding_point},
                       {"impl_vs_framework", comparison(t.vs_framework)},
                       {"impl_vs_float64", comparison(t.impl_vs_exact)},
                       {"framework_vs_float64", comparison(t.framework_vs_exact)},
                       {"impl_vs_float64_on_its_inputs",
                        t.has_local ? comparison(t.impl_vs_local) : nlohmann::json()},
                       {"framework_vs_float64_on_its_inputs",
                        t.has_local ? comparison(t.framework_vs_local) : nlohmann::json()},
                       {"verdict", to_string(t.verdict)},
                       {"reason", t.reason}});
  nlohmann::json seconds = nlohmann::json::object();
  for (const auto& [phase, s] : r.seconds) seconds[phase] = s;
  const TensorPrecision* first = r.first_deviation();
  return {{"report", "precision"},
          {"model", r.model},
          {"kernel", r.kernel},
          {"impl", r.impl},
          {"framework", r.framework},
          {"reference", r.reference},
          {"shape", r.values},
          {"scale", to_string(r.scale)},
          {"dtype", to_string(r.dtype)},
          {"seed", r.seed},
          {"device", r.device},
          {"matmul_accumulation", r.device_note.empty() ? "float32" : to_string(r.dtype)},
          {"threads", r.threads},
          {"rtols", r.rtols},
          {"passed", r.passed()},
          {"first_deviation", first ? nlohmann::json(first->name) : nlohmann::json()},
          {"tensors", tensors},
          {"seconds", seconds},
          {"total_seconds", r.total_seconds},
          {"cpu_seconds", r.cpu_seconds}};
}

}  // namespace kprop
