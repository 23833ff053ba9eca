// The generator: one walk over a kernel's schema that draws a Case from any choice source.
//
// The same code draws from a random stream (searches), decodes fuzzer bytes (libFuzzer)
// and, with a recorder, encodes a known case back into bytes — so `decode(encode(c)) == c`
// for every valid case, and every byte string decodes to a valid case (no throw, no
// rejection loop). Order of decisions: data seed (bytes 0..7), dtype, distribution,
// then each parameter in the schema's order (flags read from byte 8: choices.h).
#pragma once

#include <cstdint>
#include <vector>

#include "generators/choices.h"
#include "generators/schema.h"

namespace kprop {

// A case with kernel, impl and property from the space; valid by construction.
Case draw_case(const Schema& schema, ChoiceSource& source, const CaseSpace& space);

// The bytes that decode to `c` under `space` (whose dtypes must include c.dtype and whose
// pinned parameters must agree with c). Throws CaseError for a case that fails validation.
std::vector<uint8_t> encode(const Schema& schema, const Case& c, const CaseSpace& space);
Case decode(const Schema& schema, const uint8_t* data, size_t size, const CaseSpace& space);

}  // namespace kprop
