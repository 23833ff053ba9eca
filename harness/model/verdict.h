// The outcome of one property on one case: pass, fail (with a per-tensor error table,
// what the memory checker saw, or a fault: the implementation raised, crashed, hung or
// exited), rejected (an implementation refused the case with an error it declares, as
// the real kernel would, e.g. "D must be divisible by BD"), or skipped (the property does
// not apply, e.g. packed vs separate on one sequence).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "harness/model/kernel.h"
#include "harness/model/memcheck.h"

namespace kprop {

// How far one tensor is from what it should be.
struct TensorError {
  std::string tensor;           // "dh0"
  std::string check;            // how it was compared, e.g. "chunked", "full Jacobian"
  // Where the tensor was computed when the plain call cannot show its symptom: the graph
  // composition ran it in ("in a residual"). Unlike `check`, it is part of the symptom
  // (and so of the identity): a kernel that corrupts a graph is another defect than one
  // whose plain call is wrong in the same tensor.
  std::string setting;
  std::string region;           // where the worst element lies, e.g. "head rows"
  std::vector<int64_t> index;   // coordinates of the worst element (largest error/bound)
  double actual = 0, expected = 0;
  double max_abs = 0;           // max |actual - expected|
  double max_rel = 0;           // max |actual - expected| / |expected| (expected != 0)
  double error_over_bound = 0;  // max |actual - expected| / bound
  int64_t mismatches = 0;       // elements over their bound
  int64_t elements = 0;
  bool located = true;          // false: a check that cannot say where (a direction)
  // Exactness checks (compare_exact: the policy implementation, an equivalent case): any
  // difference is a mismatch, and `deviation` says what from, in words free of the case's
  // numbers, as the symptom says it ("deviates from policy", "varies with layout"). For
  // such a row, error_over_bound is the tensor's distance from the float64 reference as a
  // multiple of its bound where the check measured it (<= 1: within the bound), else 0.
  std::string deviation;        // empty: a bound check
  int64_t max_ulps = 0;         // largest distance in ulps of the tensor's dtype
  std::string rounding_point;   // the rounding point the kernel names for the deviation
  bool exact() const { return !deviation.empty(); }
  bool passed() const { return mismatches == 0; }
  std::string label() const { return check.empty() ? tensor : tensor + " (" + check + ")"; }
};

// How an implementation failed to answer at all. A fault is a symptom like a failing
// tensor: it is shrunk, named in signatures and identities, and kept. Its symptom never
// holds the exception's message (that varies with the case); the message goes in
// Verdict::message.
struct Fault {
  enum class Kind { none, raised, crashed, timed_out, exited };
  Kind kind = Kind::none;
  // raised: the exception's message; crashed: the signal's name ("SIGSEGV"); timed_out:
  // the limit in seconds ("20"); exited: the exit code ("3").
  std::string detail;

  explicit operator bool() const { return kind != Kind::none; }
  // "exception", "crash (SIGSEGV)", "hang (timeout)", "exit (code 3)".
  std::string symptom() const;
  // "raised: <message>", "crashed with SIGSEGV", "timed out after 20 s", "exited with code 3".
  std::string describe() const;
};

std::string to_string(Fault::Kind kind);
std::optional<Fault::Kind> parse_fault_kind(const std::string& s);

struct Verdict {
  enum class Status { pass, fail, rejected, skipped };
  Status status = Status::pass;
  std::string kernel, impl, property;
  std::string message;                   // why it failed or was rejected, in words
  std::vector<TensorError> tensors;      // every tensor compared, in comparison order
  std::vector<MemoryFinding> memory;     // what the device memory checker saw
  Fault fault;                           // the implementation raised, crashed, hung, exited

  bool failed() const { return status == Status::fail; }
  // What failed, one entry per failing tensor ("dw [taps that read h0]": the region of
  // its worst element; "c deviates from policy": an exactness check), per kind of memory
  // finding ("out-of-bounds load") and the fault
  // ("crash (SIGSEGV)"), in comparison order. A defect's identity is built from one of them (harness/model/identity.h).
  std::vector<std::string> symptoms() const;
  bool shows(const std::string& symptom) const;  // a failure with this symptom
  // This verdict's own symptom for the tensor of `symptom`: where an unlocated one
  // ("dh0 [?]") turned out to lie on a smaller case.
  std::string symptom_like(const std::string& symptom) const;
  // kernel/impl/property/what, where `what` lists the failing tensors with the region of
  // their worst element, then the kinds of memory findings and the fault: e.g.
  // "causal_conv1d/tiled@clamped/packed/dw [taps that read h0], dh0; out-of-bounds load",
  // "scaled_tanh/crash::scaled_tanh/gradient/crash (SIGSEGV)".
  // The key for deduplication, and what shrinking must keep.
  std::string signature() const;
};

std::string to_string(Verdict::Status status);

// Compares every tensor of `expected` that is defined with the same name in `actual`
// (a missing actual counts as a failure). `bounds` holds per-element bounds of
// |actual - expected|; `check` names the comparison ("chunked").
std::vector<TensorError> compare(const Kernel& kernel, const Problem& p,
                                 const NamedTensors& actual, const NamedTensors& expected,
                                 const NamedTensors& bounds, const std::string& check = "");

// Compares every tensor of `expected` with the same name in `actual` bit for bit: rows
// with `deviation` set, the worst element the one farthest in ulps.
std::vector<TensorError> compare_exact(const Kernel& kernel, const Problem& p,
                                       const NamedTensors& actual, const NamedTensors& expected,
                                       const std::string& deviation, const std::string& check);

// compare_exact's rows held to `bounds` instead of to the same bits: each row says how
// far the bits differ, and fails only where the difference exceeds the bound (two
// computations that may sum in another order: a declared nondeterministic kernel, a
// layout that changes a reduction order).
std::vector<TensorError> compare_exact_within(const Kernel& kernel, const Problem& p,
                                              const NamedTensors& actual,
                                              const NamedTensors& expected,
                                              const NamedTensors& bounds,
                                              const std::string& deviation,
                                              const std::string& check);

// Adds `rows` after the rows a verdict already has (those its calls recorded: a tensor
// handed back changed).
void append(std::vector<TensorError>& to, std::vector<TensorError> rows);

// Fills status, message from the tensors, memory findings and fault.
void conclude(Verdict& v);

// A failure by fault alone, for `c`'s kernel, implementation and property.
Verdict fault_verdict(const Case& c, Fault fault);

}  // namespace kprop
