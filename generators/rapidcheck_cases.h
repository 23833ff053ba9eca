// RapidCheck as an adapter: a kernel's cases as an rc::Gen, for the property suites.
//
// The draw comes from the one generator (generators/draw.h) with a random source seeded
// by RapidCheck; the shrinks are the schema's steps (generators/shrink.h), so a case
// shrinks under RC_GTEST_PROP exactly as it does under `kprop check`.
#pragma once

#include <rapidcheck/Gen.h>

#include "generators/schema.h"

namespace kprop {

rc::Gen<Case> cases_of(const Schema& schema, const CaseSpace& space);

}  // namespace kprop
