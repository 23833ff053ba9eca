// Structure-aware mutation: a valid case changed at the level of its values, as
// google/fuzztest's domains and Hypothesis mutate, not at the level of its bytes
// (docs/fuzzing.md). A fuzzer decodes its input to a Case (generators/draw.h), mutates it
// here, and encodes the result back; libFuzzer's byte mutation stays one strategy beside
// these.
//
// Every mutation keeps the data seed (the tensor contents stay), leaves the parameters the
// space pins alone, and gives a case valid in the space: the parameters that depend on the
// changed one are fitted to it (generators/schema.h, fit()).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "generators/choices.h"
#include "generators/schema.h"

namespace kprop {

enum class Mutation {
  edge_value,      // an integer, or one element of an integer list, to one of its edges
  list_insert,     // an integer list gains an element (an edge value of an element)
  list_delete,     // an integer list loses one element
  list_duplicate,  // an element of an integer list repeated beside itself
  flag_toggle,     // a flag flipped
  choice_change,   // a choice, the dtype, the distribution or the cotangents changed
};
std::string to_string(Mutation m);
std::vector<Mutation> all_mutations();

struct Mutated {
  Case c;
  Mutation mutation;
  std::string param;  // what changed: a parameter's name, or dtype / distribution / cotangents
};

// The edges of integer parameter `spec` (of element `index` of a list) in case `c`: its
// bounds, its simplest value, the values and range ends its draw leans on, the limit of
// the space it draws up to, each within its bounds; sorted, without repeats.
std::vector<int64_t> edge_values(const Schema& schema, const ParamSpec& spec, const Case& c,
                                 size_t index, const CaseSpace& space);

// One mutation of `c` (a valid case of `space`), chosen by `random`; `only` restricts it
// to one kind. std::nullopt when no mutation of that kind applies (a case without lists
// has no list_insert) or none of a few tries gave a valid case.
std::optional<Mutated> mutate(const Schema& schema, const Case& c, const CaseSpace& space,
                              RandomChoices& random, std::optional<Mutation> only = {});

// A child of two valid cases of `space`: each parameter from one parent or the other,
// the data seed and the common fields from `a`, then fitted. std::nullopt when no mix of
// a few tries is valid.
std::optional<Case> cross_over(const Schema& schema, const Case& a, const Case& b,
                               const CaseSpace& space, RandomChoices& random);

}  // namespace kprop
