// What an implementation takes (docs/design.md §2), as PyTorch's OpInfo declares dtypes: its
// dtypes, its devices and the parameter values it accepts. A case outside them is not run:
// its verdict is skipped and counted as "not taken: ...", never a failure; an error on a
// case inside them is a failure. A Triton kernel that refuses float64, a CUDA kernel
// for W <= 4, a kernel without a packed path: each says so once, where it is registered.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "generators/schema.h"

namespace kprop {

struct Takes {
  std::vector<DType> dtypes;         // empty: every dtype
  std::vector<std::string> devices;  // "cpu", "cuda": empty: any
  // Integer parameters (each element of an integer list) within bounds.
  std::map<std::string, Bounds> ranges;
  // Choice parameters among these; flag parameters only at this value.
  std::map<std::string, std::vector<std::string>> choices;
  std::map<std::string, bool> flags;
  // Tensors it writes over by design: inputs by name, the cotangents it receives as "dy".
  // It is handed copies of them, and they are exempt from the check that every tensor
  // handed to a call comes back unchanged (harness/engine/properties/handed_tensors.h).
  std::vector<std::string> overwrites = {};
  // The layouts it takes its tensors in (harness/execution/layout_variants.h: "transposed",
  // "offset", "stride-0", "expanded", or one its kernel declares); empty: every one.
  std::vector<std::string> layouts = {};
  // Another layout of the same values may change the order it sums in (Triton compiles a
  // kernel anew for unit strides): `layout` then holds it to the derived bound, not to
  // bit-identical results.
  bool layout_changes_reduction_order = false;
  // It sums with atomics or otherwise returns another rounding on some calls:
  // `determinism` holds its repeated calls to the derived bound, not to the same bits.
  bool nondeterministic = false;
  // Another implementation of the kernel that computes the same function by another
  // algorithm (fla's chunked and fused recurrent forms): `algorithms` holds the two to
  // each other within the bound of two computations. Empty: none.
  std::string same_function_as = {};

  bool takes_dtype(DType d) const;
};

// Declares what `impl` of `kernel` takes; replaces an earlier declaration. Throws
// UsageError naming the kernel, the implementation and the field when a declaration names
// a parameter the kernel does not have, one of another type, an unknown choice or device,
// an empty range, overwrites a tensor the kernel does not hand it, or names a layout it
// does not have.
void declare_takes(const std::string& kernel, const std::string& impl, Takes takes);
// nullptr: it declared nothing and takes every case.
const Takes* declared_takes(const std::string& kernel, const std::string& impl);

// Why `c` is not taken by its implementation ("float64 is not among its dtypes (float32,
// bfloat16)", "W = 5 is outside 2..4"), or nothing. `check_dtype` false leaves the dtype
// to a property that adapts it (gradient).
std::optional<std::string> not_taken(const Case& c, bool check_dtype = true);

// The dtype a check that wants `wanted` runs `c`'s implementation in: `wanted` when taken,
// else the first it takes.
DType taken_dtype(const Case& c, DType wanted);

}  // namespace kprop
