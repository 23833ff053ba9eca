// Identities: which defect a failure shows (docs/design.md §6).
//
// A signature says everything that failed (property, every failing tensor, memory
// findings); one defect seen through several properties, or next to another defect,
// has many signatures. An identity is coarser: one symptom (a failing tensor with the
// region of its worst element, or a kind of memory finding) on a case shrunk to
// 1-minimal for that symptom, plus what that minimal case still needs: the flags and
// choices it has on, and the lists longer than their simplest — each is needed, or
// shrinking would have turned it off or removed the element. Integer sizes are not part
// of it (W = 3 or W = 4 is the same defect):
//
//   causal_conv1d/tiled@clamped/dh0 [sequence shorter than W] {initial_state, final_state_grad}
//   causal_conv1d/tiled@clamped/dh0 [sequence shorter than W] {2 lengths, initial_state}
//
// The property is not part of it (a defect is the same whichever check sees it); the
// implementation is (the same symptom in two states is two entries, each replayed).
#pragma once

#include <string>

#include "generators/schema.h"

namespace kprop {

std::string identity(const Schema& schema, const Case& minimal, const std::string& symptom);
// (what it needs: generators/schema.h's needs())

// The symptom an identity was built from ("dh0 [sequence shorter than W]").
std::string symptom_of(const std::string& identity);

}  // namespace kprop
