// The outcome of one property on one case: pass, fail (with a per-tensor error table and
// what the memory checker saw), rejected (an implementation refused the case with an
// error, as the real kernel would, e.g. "D must be divisible by BD"), or skipped (the
// property does not apply, e.g. packed vs separate on one sequence).
#pragma once

#include <string>
#include <vector>

#include "harness/kernel_info.h"
#include "kernels/common/memcheck.h"

namespace kprop {

// How far one tensor is from what it should be.
struct TensorError {
  std::string tensor;           // "dh0"
  std::string check;            // how it was compared, e.g. "chunked", "full Jacobian"
  std::string region;           // where the worst element lies, e.g. "head rows"
  std::vector<int64_t> index;   // coordinates of the worst element (largest error/bound)
  double actual = 0, expected = 0;
  double max_abs = 0;           // max |actual - expected|
  double max_rel = 0;           // max |actual - expected| / |expected| (expected != 0)
  double error_over_bound = 0;  // max |actual - expected| / bound
  int64_t mismatches = 0;       // elements over their bound
  int64_t elements = 0;
  bool located = true;          // false: a check that cannot say where (a direction)
  bool passed() const { return mismatches == 0; }
  std::string label() const { return check.empty() ? tensor : tensor + " (" + check + ")"; }
};

struct Verdict {
  enum class Status { pass, fail, rejected, skipped };
  Status status = Status::pass;
  std::string kernel, impl, property;
  std::string message;                   // why it failed or was rejected, in words
  std::vector<TensorError> tensors;      // every tensor compared, in comparison order
  std::vector<MemoryFinding> memory;     // what the device memory checker saw

  bool failed() const { return status == Status::fail; }
  // What failed, one entry per failing tensor ("dw [taps that read h0]": the region of
  // its worst element) and per kind of memory finding ("out-of-bounds load"), in
  // comparison order. A defect's identity is built from one of them (harness/identity.h).
  std::vector<std::string> symptoms() const;
  bool shows(const std::string& symptom) const;  // a failure with this symptom
  // This verdict's own symptom for the tensor of `symptom`: where an unlocated one
  // ("dh0 [?]") turned out to lie on a smaller case.
  std::string symptom_like(const std::string& symptom) const;
  // kernel/impl/property/what, where `what` lists the failing tensors with the region of
  // their worst element, then the kinds of memory findings: e.g.
  // "causal_conv1d/tiled@clamped/packed/dw [taps that read h0], dh0; out-of-bounds load".
  // The key for deduplication, and what shrinking must keep.
  std::string signature() const;
};

std::string to_string(Verdict::Status status);

// Compares every tensor of `expected` that is defined with the same name in `actual`
// (a missing actual counts as a failure). `bounds` holds per-element bounds of
// |actual - expected|; `check` names the comparison ("chunked").
std::vector<TensorError> compare(const KernelInfo& kernel, const Problem& p,
                                 const NamedTensors& actual, const NamedTensors& expected,
                                 const NamedTensors& bounds, const std::string& check = "");

// Fills status, message from the tensors and memory findings.
void conclude(Verdict& v);

}  // namespace kprop
