// The Case: the plain parameters of one test, and nothing else.
//
// A Case is what generators draw, what shrinking edits, what the libFuzzer decoder
// produces and what a corpus file stores. It holds the fields every kernel has (kernel,
// implementation, property, dtype, data seed, distribution) and the parameters its
// kernel's schema declares (generators/schema.h), e.g. causal_conv1d's lengths and W.
// Tensor contents are never part of it: the harness materializes them deterministically
// from `seed` and `distribution`, so a Case alone replays a failure bit for bit
// (docs/design.md §1, §6).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "generators/param.h"

namespace kprop {

enum class DType { float64, float32, bfloat16, float16 };
enum class Distribution { normal, uniform, heavy_tailed, small_integers };
// The upstream gradients (cotangents) a case's calls receive, as real callers make them.
// Test suites backpropagate random values or ones; a loss kernel also gets a scalar other
// than 1 (a mean, a scaled loss), per-row weights (reduction='none' then weighted), or zero
// for an output the loss does not use. (An output whose gradient is never asked for is the
// kernel's own flag: causal_conv1d's final_state_grad.)
//   random      normal values (every case before this choice existed)
//   ones        all ones
//   zero_first  zero for the first output that takes one, random for the rest
//   scalar      one value other than 1 everywhere: 1/N of a mean over N elements
//   per_row     one random value per row (all but the last dimension), along the row
enum class Cotangents { random, ones, zero_first, scalar, per_row };

struct Case {
  std::string kernel;
  std::string impl;                    // an implementation name (see harness/execution/implementations.h)
  std::string property = "vs_reference";
  DType dtype = DType::float32;
  uint64_t seed = 0;                   // data seed: tensor contents come from it
  Distribution distribution = Distribution::normal;
  Cotangents cotangents = Cotangents::random;
  // The kernel's parameters by name; which exist and what they may hold is the schema's.
  std::map<std::string, ParamValue> params;

  // Typed reads; a missing parameter or another type is kprop's own error (kernels read
  // their parameters once, into a typed view, after the schema validated the case).
  int64_t integer(const std::string& name) const;
  bool flag(const std::string& name) const;
  const std::string& choice(const std::string& name) const;
  const std::vector<int64_t>& integers(const std::string& name) const;
  bool has(const std::string& name) const { return params.count(name) > 0; }
  void set(const std::string& name, ParamValue value) { params[name] = std::move(value); }

  bool operator==(const Case& other) const;
  bool operator!=(const Case& other) const { return !(*this == other); }
};

std::string to_string(DType d);
std::string to_string(Distribution d);
std::string to_string(Cotangents c);
std::optional<Cotangents> parse_cotangents(const std::string& s);
std::vector<Cotangents> all_cotangents();  // the simplest (random, as before) first
// Their names, joined by `separator` ("random, ones, ..."): what an error or a help lists.
std::string cotangent_names(const std::string& separator);
std::optional<DType> parse_dtype(const std::string& s);
std::optional<Distribution> parse_distribution(const std::string& s);
std::vector<DType> all_dtypes();
std::vector<Distribution> all_distributions();  // the simplest (normal) first

// "impl property kernel-parameters seed" in one line; the kernel's schema formats the
// parameters (see summary() in generators/schema.h for the form without impl/property).
std::ostream& operator<<(std::ostream& os, const Case& c);

}  // namespace kprop
