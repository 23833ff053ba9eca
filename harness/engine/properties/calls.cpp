#include "harness/engine/properties/calls.h"

#include <algorithm>

#include "harness/engine/properties/handed_tensors.h"
#include "harness/execution/call_profile.h"
#include "harness/execution/device.h"
#include "harness/execution/takes.h"
#include "harness/model/host_values.h"
#include "harness/model/random_tensor.h"
#include "harness/model/tensor_layouts.h"

namespace kprop {

namespace {
const char* kReferenceNamespace = "kprop_reference";
}

Calls::Calls(const Kernel& kernel, const Implementation& impl, Verdict& verdict)
    : kernel_(kernel), impl_(impl), verdict_(verdict) {
  if (const Takes* takes = declared_takes(kernel.name(), impl.name)) overwrites_ = takes->overwrites;
}

void Calls::collect_memory_findings() const {
  for (auto& f : MemcheckLog::take()) fold(verdict_.memory, f);
}

template <typename F>
static NamedTensors refusing(F call) {
  try {
    return call();
  } catch (const c10::Error& e) {
    throw ImplementationRefused(e.what_without_backtrace());
  } catch (const ImplementationRefused&) {
    throw;
  } catch (const std::exception& e) {
    // A plugin may throw anything: what it raised is its answer, never kprop's error.
    throw ImplementationRefused(e.what());
  } catch (...) {
    throw ImplementationRefused("an exception that is not a std::exception");
  }
}

namespace {

// The problem as the implementation under test receives it: its inputs on the
// implementation's device, each with its layout (harness/model/tensor_layouts.h: a strided
// view stays strided; a tensor already there is handed as it is). The case and everything
// derived from it stay as they are.
Problem on_device(const Problem& p, const c10::Device& device) {
  return Problem{p.c, same_layouts_on(p.inputs, device)};
}

// Runs `call(problem, cotangents)` where the case's implementation runs, its results on
// `home` (the oracle's device: the CPU unless the property moved its problem there). Where
// the problem is on the implementation's device, the tensors are passed as they are.
// Otherwise the copies there count as transfers; the call and the copies back (which wait
// for the device) as the implementation.
template <typename F>
NamedTensors where_it_runs(const Problem& p, const NamedTensors& cotangents,
                           const c10::Device& home, F call) {
  const c10::Device device = device_of(p.c);
  if (device == device_of_inputs(p)) {  // the cotangents are where the problem is
    ProfiledSpan span(CallProfile::Part::implementation);
    if (device == home) return refusing([&] { return call(p, cotangents); });
    return same_layouts_on(refusing([&] { return call(p, cotangents); }), home);
  }
  Problem there;
  NamedTensors cotangents_there;
  {
    ProfiledSpan span(CallProfile::Part::transfers);
    there = on_device(p, device);
    cotangents_there = same_layouts_on(cotangents, device);
  }
  ProfiledSpan span(CallProfile::Part::implementation);
  return same_layouts_on(refusing([&] { return call(there, cotangents_there); }), home);
}

}  // namespace

template <typename F>
NamedTensors Calls::watching(const std::string& side, const Problem& p,
                             const NamedTensors& cotangents, F call) const {
  if (as_given_) return call(p, cotangents);
  // A tensor it declares it writes over is handed as a copy; every other one is watched.
  const Problem* handed = &p;
  Problem with_copies;
  if (!overwrites_.empty()) {
    with_copies = Problem{p.c, with_copies_of(p.inputs, overwrites_)};
    handed = &with_copies;
  }
  const NamedTensors handed_cotangents = with_copies_of(cotangents, overwrites_);
  const HandedTensors watched(handed->inputs, handed_cotangents, overwrites_);
  NamedTensors out = call(*handed, handed_cotangents);
  const auto changes = watched.changes();
  if (changes.empty()) return out;
  NamedTensors results;  // copies: a result may share a changed tensor's memory
  for (const auto& [name, t] : out) results.set(name, t.defined() ? t.clone() : t);
  watched.restore();
  // One row per tensor and side: a property calls an implementation many times.
  auto& rows = verdict_.tensors;
  const std::string deviation = "overwritten by the " + side;
  for (auto& row : compare_exact(kernel_, p, changes.now, changes.before, deviation, "unchanged"))
    if (std::none_of(rows.begin(), rows.end(), [&](const TensorError& t) {
          return t.tensor == row.tensor && t.deviation == row.deviation;
        }))
      rows.push_back(std::move(row));
  // A store into the memory around a tensor, as the device memory checker would report it.
  for (const auto& s : changes.strays)
    fold(verdict_.memory, {MemoryFinding::Kind::out_of_bounds_store, s.tensor,
                           s.side + ", in the " + side, s.offset,
                           handed->inputs.has(s.tensor) ? handed->inputs.get(s.tensor).numel()
                                                        : handed_cotangents.get(s.tensor).numel(),
                           s.count});
  return results;
}

Problem Calls::materialized_on_oracle_device(const Case& c) {
  home_ = oracle_device_of(c, kernel_.oracle_runs_on_any_device());
  if (!home_.is_cpu() && oracle_device_is_automatic()) {
    // The size decides before anything is drawn (a small problem is drawn faster by the
    // host's loops than by a device's launches): the problem's shapes alone, drawn on the
    // meta device, which holds no values. A device named by the user is kept whatever the
    // size: no shapes to draw then.
    int64_t largest = 0;
    for (const auto& [name, t] : kernel_.materialize_on(c, c10::Device(c10::kMeta)).inputs)
      if (t.defined()) largest = std::max(largest, t.numel());
    home_ = oracle_device_for_size(home_, largest);
  }
  return kernel_.materialize_on(c, home_);
}

NamedTensors Calls::forward(const Problem& p) const {
  MemcheckLog::clear();
  auto out = where_it_runs(p, NamedTensors{}, home_, [&](const Problem& q, const NamedTensors& dq) {
    return watching("forward", q, dq, [&](const Problem& r, const NamedTensors&) {
      return kernel_.forward(impl_.op_namespace, r);
    });
  });
  collect_memory_findings();
  return out;
}

NamedTensors Calls::backward(const Problem& p, const NamedTensors& cotangents) const {
  MemcheckLog::clear();
  auto out = where_it_runs(p, cotangents, home_, [&](const Problem& q, const NamedTensors& dq) {
    return watching("backward", q, dq, [&](const Problem& r, const NamedTensors& dr) {
      return kernel_.backward(impl_.op_namespace, r, dr);
    });
  });
  collect_memory_findings();
  return out;
}

namespace {

// The version counter of each tensor (0 for an undefined one), in the sets' order.
void append_versions(const NamedTensors& tensors, std::vector<int64_t>& out) {
  // An inference tensor has no version counter: it cannot be written in place either.
  for (const auto& [name, t] : tensors)
    out.push_back(t.defined() && !t.is_inference() ? static_cast<int64_t>(t._version()) : 0);
}

std::vector<int64_t> versions_of(std::initializer_list<const NamedTensors*> sets) {
  std::vector<int64_t> out;
  for (const NamedTensors* s : sets) append_versions(*s, out);
  return out;
}

bool same_tensor(const at::Tensor& a, const at::Tensor& b) {
  if (!a.defined() || !b.defined()) return a.defined() == b.defined();
  return a.unsafeGetTensorImpl() == b.unsafeGetTensorImpl();
}

// The same names; each tensor the same one (`or_values`: or equal values, dtype and shape).
bool same_tensors(const NamedTensors& a, const NamedTensors& b, bool or_values) {
  if (a.size() != b.size()) return false;
  for (const auto& [name, t] : a) {
    const at::Tensor u = b.get(name);  // undefined where b has no such tensor
    if (same_tensor(t, u)) continue;
    if (!or_values || !t.defined() || !u.defined() || t.scalar_type() != u.scalar_type() ||
        t.sizes() != u.sizes() || t.device() != u.device() || !at::equal(t, u))
      return false;
  }
  return true;
}

}  // namespace

Calls::Remembered& Calls::remembered(const Problem& p, const NamedTensors& cotangents) const {
  for (Remembered& r : remembered_)
    if (r.problem.c == p.c && same_tensors(r.problem.inputs, p.inputs, false) &&
        same_tensors(r.cotangents, cotangents, true) &&
        r.versions == versions_of({&r.problem.inputs, &r.cotangents, &r.reference}))
      return r;
  // A few at most: a property asks about one problem, or one per neutral input.
  if (remembered_.size() >= 4) remembered_.erase(remembered_.begin());
  Remembered r{p, cotangents, {}, std::nullopt, {}};
  {
    ProfiledSpan span(CallProfile::Part::reference);
    const Problem exact = kernel_.in_dtype(p, DType::float64);
    r.reference = merged(kernel_.forward(kReferenceNamespace, exact),
                         kernel_.backward(kReferenceNamespace, exact, to_float64(cotangents)));
  }
  r.versions = versions_of({&r.problem.inputs, &r.cotangents, &r.reference});
  remembered_.push_back(std::move(r));
  return remembered_.back();
}

NamedTensors Calls::reference(const Problem& p, const NamedTensors& cotangents) const {
  return remembered(p, cotangents).reference;
}

bool declared_nondeterministic(const Kernel& kernel, const Implementation& impl) {
  const Takes* takes = declared_takes(kernel.name(), impl.name);
  return kernel.nondeterministic() || (takes != nullptr && takes->nondeterministic);
}

NamedTensors Calls::bounds_between_two(const Problem& p, const NamedTensors& cotangents) const {
  Remembered& r = remembered(p, cotangents);
  if (!r.bounds_between_two)
    r.bounds_between_two =
        kernel_.error_bounds(p, cotangents, r.reference, /*joined_partials=*/{0, 0});
  return *r.bounds_between_two;
}

namespace {

// The cotangent of one output as the case's choice makes it (generators/case.h); `stream`
// is this output's random stream, the one every case used before the choice existed.
at::Tensor cotangent(const Case& c, const std::vector<int64_t>& sizes, uint64_t stream,
                     bool first, const c10::Device& device) {
  auto normal = [&](std::vector<int64_t> shape) {
    return random_tensor(shape, Distribution::normal, c.seed, stream, c.dtype, device);
  };
  const auto options = at::TensorOptions().dtype(scalar_type(c.dtype)).device(device);
  switch (c.cotangents) {
    case Cotangents::random: return normal(sizes);
    case Cotangents::ones: return at::ones(sizes, options);
    case Cotangents::zero_first: return first ? at::zeros(sizes, options) : normal(sizes);
    case Cotangents::scalar: {  // the gradient of a mean: 1/N everywhere (1/2 for N = 1)
      const int64_t n = c10::multiply_integers(sizes);
      return at::full(sizes, n > 1 ? 1.0 / static_cast<double>(n) : 0.5, options);
    }
    case Cotangents::per_row: {  // reduction='none', then a weight per row
      // A 0-d output has one value; a 1-d one (a per-row loss) is one value per row.
      if (sizes.size() <= 1) return normal(sizes);
      std::vector<int64_t> rows = sizes;
      rows.back() = 1;
      return normal(rows).expand(sizes).contiguous();
    }
  }
  return normal(sizes);
}

}  // namespace

NamedTensors random_cotangents(const Kernel& kernel, const Problem& p,
                               const NamedTensors& outputs) {
  NamedTensors cot;
  uint64_t stream = 100;
  bool first = true;
  const c10::Device device = device_of_inputs(p);
  for (const auto& name : kernel.outputs_with_cotangent(p)) {
    const auto out = outputs.get(name);
    // Drawn where the problem is (the canonical bits there too: random_tensor.h).
    cot.set(grad_name(name), cotangent(p.c, out.sizes().vec(), stream++, first, device));
    first = false;
  }
  return cot;
}

c10::Device device_of_inputs(const Problem& p) {
  for (const auto& [name, t] : p.inputs)
    if (t.defined()) return t.device();
  return c10::Device(c10::kCPU);
}

NamedTensors merged(const NamedTensors& a, const NamedTensors& b) {
  NamedTensors out = a;
  for (const auto& [name, t] : b) out.set(name, t);
  return out;
}

NamedTensors to_float64(const NamedTensors& t) {
  NamedTensors out;
  for (const auto& [name, x] : t)
    out.set(name, float64_of(x));
  return out;
}

}  // namespace kprop
