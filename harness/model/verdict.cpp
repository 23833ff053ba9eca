#include "harness/model/verdict.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "harness/model/host_values.h"
#include "harness/model/tolerance.h"

namespace kprop {

std::string to_string(Verdict::Status status) {
  switch (status) {
    case Verdict::Status::pass: return "pass";
    case Verdict::Status::fail: return "fail";
    case Verdict::Status::rejected: return "rejected";
    case Verdict::Status::skipped: return "skipped";
  }
  return "?";
}

std::string to_string(Fault::Kind kind) {
  switch (kind) {
    case Fault::Kind::none: return "none";
    case Fault::Kind::raised: return "raised";
    case Fault::Kind::crashed: return "crashed";
    case Fault::Kind::timed_out: return "timed_out";
    case Fault::Kind::exited: return "exited";
  }
  return "?";
}

std::optional<Fault::Kind> parse_fault_kind(const std::string& s) {
  for (auto k : {Fault::Kind::none, Fault::Kind::raised, Fault::Kind::crashed,
                 Fault::Kind::timed_out, Fault::Kind::exited})
    if (to_string(k) == s) return k;
  return std::nullopt;
}

std::string Fault::symptom() const {
  switch (kind) {
    case Kind::none: return "";
    case Kind::raised: return "exception";
    case Kind::crashed: return fmt::format("crash ({})", detail);
    case Kind::timed_out: return "hang (timeout)";
    case Kind::exited: return fmt::format("exit (code {})", detail);
  }
  return "";
}

std::string Fault::describe() const {
  switch (kind) {
    case Kind::none: return "";
    case Kind::raised: return "raised: " + detail;
    case Kind::crashed: return "crashed with " + detail;
    case Kind::timed_out: return fmt::format("timed out after {} s", detail);
    case Kind::exited: return "exited with code " + detail;
  }
  return "";
}

namespace {

// What a failing row says failed: the tensor, in its setting where it has one ("da in a
// residual"), and for an exactness check what it deviates from ("c deviates from
// policy"). Where is the region of its worst
// element. The rounding point a kernel names for a deviation is no part of it: a small
// case may not tell two rounding points apart, and one defect must keep one identity
// while it shrinks; the message and the error table name it.
std::string subject(const TensorError& t) {
  const std::string in = t.setting.empty() ? t.tensor : t.tensor + " " + t.setting;
  return t.exact() ? in + " " + t.deviation : in;
}
std::string where(const TensorError& t) { return t.region; }

}  // namespace

std::vector<std::string> Verdict::symptoms() const {
  std::vector<std::string> out;
  std::vector<std::string> names;
  for (const auto& t : tensors) {
    const std::string name = subject(t);
    if (t.passed() || std::find(names.begin(), names.end(), name) != names.end()) continue;
    names.push_back(name);
    // The region of the first comparison of this tensor that located its error; "?"
    // when no comparison could locate it (a directional derivative only).
    std::string region;
    bool located = false;
    for (const auto& u : tensors)
      if (subject(u) == name && !u.passed()) {
        located |= u.located;
        if (region.empty()) region = where(u);
      }
    if (!located && region.empty()) region = "?";
    out.push_back(region.empty() ? name : fmt::format("{} [{}]", name, region));
  }
  // Memory findings by kind only: which tensor an unmasked load reads (dy, or y under
  // silu) is a detail that shrinking should be free to change.
  for (const auto& m : memory) {
    auto kind = to_string(m.kind);
    if (std::find(out.begin(), out.end(), kind) == out.end()) out.push_back(kind);
  }
  if (fault) out.push_back(fault.symptom());
  return out;
}

bool Verdict::shows(const std::string& symptom) const {
  if (!failed()) return false;
  const auto all = symptoms();
  if (std::find(all.begin(), all.end(), symptom) != all.end()) return true;
  // "dh0 [?]" (not located) is shown by a failing dh0 wherever it lies.
  const std::string unlocated = " [?]";
  if (symptom.size() > unlocated.size() &&
      symptom.compare(symptom.size() - unlocated.size(), unlocated.size(), unlocated) == 0) {
    const std::string tensor = symptom.substr(0, symptom.size() - unlocated.size());
    return std::any_of(all.begin(), all.end(), [&](const std::string& s) {
      return s == tensor || s.rfind(tensor + " [", 0) == 0;
    });
  }
  return false;
}

std::string Verdict::symptom_like(const std::string& symptom) const {
  const auto space = symptom.find(" [");
  const std::string tensor = symptom.substr(0, space);
  for (const auto& s : symptoms())
    if (s == symptom) return s;
  for (const auto& s : symptoms())
    if (s == tensor || s.rfind(tensor + " [", 0) == 0) return s;
  return symptom;
}

std::string Verdict::signature() const {
  std::vector<std::string> values, memory_kinds;
  for (const auto& s : symptoms()) {
    // Memory findings and the fault: what the run did, after what it computed.
    const bool is_memory =
        (fault && s == fault.symptom()) ||
        std::any_of(memory.begin(), memory.end(),
                    [&](const MemoryFinding& m) { return to_string(m.kind) == s; });
    (is_memory ? memory_kinds : values).push_back(s);
  }
  std::string what = fmt::format("{}", fmt::join(values, ", "));
  if (!memory_kinds.empty())
    what += (what.empty() ? "" : "; ") + fmt::format("{}", fmt::join(memory_kinds, ", "));
  if (what.empty()) what = to_string(status);
  return fmt::format("{}/{}/{}/{}", kernel, impl, property, what);
}

static std::vector<int64_t> unravel(int64_t flat, at::IntArrayRef sizes) {
  std::vector<int64_t> index(sizes.size());
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
    index[i] = sizes[i] == 0 ? 0 : flat % sizes[i];
    flat = sizes[i] == 0 ? 0 : flat / sizes[i];
  }
  return index;
}

// Where the worst element `worst` (-1: none) lies and what it holds.
static void note_worst(TensorError& r, int64_t worst, const at::Tensor& actual64,
                       const at::Tensor& expected64) {
  if (worst < 0) return;
  r.index = unravel(worst, expected64.sizes());
  r.actual = actual64.data_ptr<double>()[worst];
  r.expected = expected64.data_ptr<double>()[worst];
}

// Where a and e hold the same value, NaN matching NaN (compare_tensor's `same`).
static at::Tensor same_values(const at::Tensor& a, const at::Tensor& e) {
  return (a == e).logical_or(a.isnan().logical_and(e.isnan()));
}

// compare_tensor's loop as ATen operations, for tensors on a device: the same numbers
// (the worst element the first of the largest ratio, as argmax gives it), and only seven
// of them cross back to the host.
static void summarize_as_aten_ops(TensorError& r, const at::Tensor& a, const at::Tensor& e,
                                  const at::Tensor& b) {
  if (r.elements == 0) return;
  const double inf = std::numeric_limits<double>::infinity();
  const auto d = a - e;
  const auto diff = at::where(same_values(a, e), at::zeros_like(d), at::where(d.isfinite(), d.abs(), inf));
  const auto ratio = at::where(diff.eq(0).logical_or(b.isinf()), at::zeros_like(d),
                               at::where(b.gt(0), diff / b, inf));
  auto rel = at::where(e.ne(0), diff / e.abs(), at::zeros_like(d));
  rel = at::where(rel.isnan(), at::zeros_like(rel), rel);  // as std::max skips a NaN
  const auto worst = ratio.reshape({-1}).argmax();
  const auto at_worst = [&](const at::Tensor& t) {
    return t.reshape({-1}).index_select(0, worst.reshape({1})).reshape({});
  };
  const auto summary = at::stack({diff.max(), rel.max(), ratio.gt(1).sum().to(at::kDouble),
                                  at_worst(ratio), worst.to(at::kDouble), at_worst(a), at_worst(e)})
                           .cpu();
  const double* v = summary.data_ptr<double>();
  r.max_abs = v[0];
  r.max_rel = v[1];
  r.mismatches = static_cast<int64_t>(v[2]);
  r.error_over_bound = v[3];
  r.index = unravel(static_cast<int64_t>(v[4]), e.sizes());
  r.actual = v[5];
  r.expected = v[6];
}

static TensorError compare_tensor(const std::string& name, const at::Tensor& actual,
                                  const at::Tensor& expected, const at::Tensor& bound) {
  TensorError r;
  r.tensor = name;
  r.elements = expected.numel();
  if (!actual.defined() || actual.sizes() != expected.sizes()) {
    r.mismatches = r.elements;
    r.error_over_bound = r.max_abs = r.max_rel = std::numeric_limits<double>::infinity();
    r.region = actual.defined() ? "shape differs" : "missing";
    return r;
  }
  auto a = float64_of(actual), e = float64_of(expected);
  auto b = bound.defined() ? float64_of(bound) : at::zeros_like(e);
  if (evaluated_as_aten_ops(e)) {
    summarize_as_aten_ops(r, a.to(e.device()), e, b.to(e.device()));
    return r;
  }
  const double *pa = a.data_ptr<double>(), *pe = e.data_ptr<double>(), *pb = b.data_ptr<double>();
  int64_t worst = -1;
  for (int64_t i = 0; i < r.elements; ++i) {
    const bool same = pa[i] == pe[i] || (std::isnan(pa[i]) && std::isnan(pe[i]));
    const double diff = same ? 0.0 : std::isfinite(pa[i] - pe[i])
                                         ? std::abs(pa[i] - pe[i])
                                         : std::numeric_limits<double>::infinity();
    // An infinite bound admits anything: the exact value has no finite answer in the
    // dtype (it overflows), so neither infinity nor NaN is wrong there.
    const double ratio = diff == 0 || std::isinf(pb[i])
                             ? 0
                             : pb[i] > 0 ? diff / pb[i] : std::numeric_limits<double>::infinity();
    r.max_abs = std::max(r.max_abs, diff);
    if (pe[i] != 0) r.max_rel = std::max(r.max_rel, diff / std::abs(pe[i]));
    if (ratio > 1) ++r.mismatches;
    if (worst < 0 || ratio > r.error_over_bound) {
      r.error_over_bound = ratio;
      worst = i;
    }
  }
  note_worst(r, worst, a, e);
  return r;
}

// One row per tensor of `expected` that is defined, from compare_one(name, actual,
// expected); a failing row is named after the region of its worst element.
template <typename CompareOne>
static std::vector<TensorError> compare_each(const Kernel& kernel, const Problem& p,
                                             const NamedTensors& actual,
                                             const NamedTensors& expected,
                                             const std::string& check, CompareOne compare_one) {
  std::vector<TensorError> rows;
  for (const auto& [name, e] : expected) {
    if (!e.defined()) continue;
    TensorError r = compare_one(name, actual.get(name), e);
    if (!r.passed() && !r.index.empty()) {
      int64_t flat = 0;
      for (size_t i = 0; i < r.index.size(); ++i) flat = flat * e.size(i) + r.index[i];
      r.region = kernel.region(p, name, flat);
    }
    r.check = check;
    rows.push_back(std::move(r));
  }
  return rows;
}

std::vector<TensorError> compare(const Kernel& kernel, const Problem& p,
                                 const NamedTensors& actual, const NamedTensors& expected,
                                 const NamedTensors& bounds, const std::string& check) {
  return compare_each(kernel, p, actual, expected, check,
                      [&](const std::string& name, const at::Tensor& a, const at::Tensor& e) {
                        return compare_tensor(name, a, e, bounds.get(name));
                      });
}

static TensorError compare_bits(const std::string& name, const at::Tensor& actual,
                                const at::Tensor& expected) {
  TensorError r;
  r.tensor = name;
  r.elements = expected.numel();
  if (!actual.defined() || actual.sizes() != expected.sizes() ||
      actual.scalar_type() != expected.scalar_type()) {
    r.mismatches = r.elements;
    r.max_ulps = std::numeric_limits<int64_t>::max();
    r.max_abs = r.max_rel = std::numeric_limits<double>::infinity();
    r.region = !actual.defined() ? "missing" : actual.sizes() != expected.sizes() ? "shape differs"
                                                                                   : "dtype differs";
    return r;
  }
  const auto dtype = expected.scalar_type();
  auto a = float64_of(actual), e = float64_of(expected);
  if (evaluated_as_aten_ops(e)) {
    // On a device: the same bits everywhere is one reduction; only a deviation (rare,
    // and then worth the copy) is measured in ulps on the host.
    if (same_values(a.to(e.device()), e).all().item<bool>()) return r;
    a = a.cpu();
    e = e.cpu();
  }
  const double *pa = a.data_ptr<double>(), *pe = e.data_ptr<double>();
  int64_t worst = -1;
  for (int64_t i = 0; i < r.elements; ++i) {
    const int64_t ulps = ulps_between(pa[i], pe[i], dtype);
    if (ulps == 0) continue;
    ++r.mismatches;
    const double diff = std::isfinite(pa[i] - pe[i]) ? std::abs(pa[i] - pe[i])
                                                     : std::numeric_limits<double>::infinity();
    r.max_abs = std::max(r.max_abs, diff);
    if (pe[i] != 0) r.max_rel = std::max(r.max_rel, diff / std::abs(pe[i]));
    if (ulps > r.max_ulps) {
      r.max_ulps = ulps;
      worst = i;
    }
  }
  note_worst(r, worst, a, e);
  return r;
}

std::vector<TensorError> compare_exact(const Kernel& kernel, const Problem& p,
                                       const NamedTensors& actual, const NamedTensors& expected,
                                       const std::string& deviation, const std::string& check) {
  auto rows = compare_each(kernel, p, actual, expected, check, compare_bits);
  for (auto& r : rows) r.deviation = deviation;
  return rows;
}

std::vector<TensorError> compare_exact_within(const Kernel& kernel, const Problem& p,
                                              const NamedTensors& actual,
                                              const NamedTensors& expected,
                                              const NamedTensors& bounds,
                                              const std::string& deviation,
                                              const std::string& check) {
  auto rows = compare_exact(kernel, p, actual, expected, deviation, check);
  for (const auto& within : compare(kernel, p, actual, expected, bounds, check))
    for (auto& r : rows)
      if (r.tensor == within.tensor) {
        r.mismatches = within.mismatches;
        r.error_over_bound = within.error_over_bound;
      }
  return rows;
}

// "c deviates from policy by up to 1 ulp in 3 of 64 elements (within the derived bound:
// 0.41 of it; product from the fp32 gelu)".
static std::string describe_deviation(const TensorError& t) {
  std::string what = fmt::format("{} {} by up to {} ulp{} in {} of {} elements", t.tensor,
                                 t.deviation, t.max_ulps, t.max_ulps == 1 ? "" : "s",
                                 t.mismatches, t.elements);
  std::vector<std::string> notes;
  if (t.error_over_bound > 0 && t.error_over_bound <= 1)
    notes.push_back(fmt::format("within the derived bound: {:.2g} of it", t.error_over_bound));
  if (!t.rounding_point.empty()) notes.push_back(t.rounding_point);
  if (!notes.empty()) what += fmt::format(" ({})", fmt::join(notes, "; "));
  return what;
}

void append(std::vector<TensorError>& to, std::vector<TensorError> rows) {
  to.insert(to.end(), std::make_move_iterator(rows.begin()), std::make_move_iterator(rows.end()));
}

void conclude(Verdict& v) {
  if (v.status == Verdict::Status::rejected || v.status == Verdict::Status::skipped) return;
  std::vector<std::string> bad, deviations;
  for (const auto& t : v.tensors)
    if (!t.passed()) (t.exact() ? deviations.push_back(describe_deviation(t))
                                : bad.push_back(t.label()));
  v.status = bad.empty() && deviations.empty() && v.memory.empty() && !v.fault
                 ? Verdict::Status::pass
                 : Verdict::Status::fail;
  if (!bad.empty()) deviations.insert(deviations.begin(), fmt::format("{} out of bounds", fmt::join(bad, ", ")));
  if (v.fault)
    v.message = v.fault.describe();
  else if (!deviations.empty())
    v.message = fmt::format("{}", fmt::join(deviations, "; "));
  else if (!v.memory.empty())
    v.message = fmt::format("memory checker: {}", describe(v.memory[0]));
}

Verdict fault_verdict(const Case& c, Fault fault) {
  Verdict v;
  v.kernel = c.kernel;
  v.impl = c.impl;
  v.property = c.property;
  v.fault = std::move(fault);
  conclude(v);
  return v;
}

}  // namespace kprop
