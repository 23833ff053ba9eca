// The libFuzzer target of the case-file parser: any bytes are a CaseError or a valid
// case, never a crash, a hang or another exception. A valid case must also survive a
// round trip: written back and read again, it is the same case.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "core/errors.h"
#include "harness/storage/case_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  kprop::CaseFile f;
  try {
    f = kprop::parse_case_file(text, "input.json");
  } catch (const kprop::CaseError&) {
    return 0;  // refused with a message naming the field: what bad input must get
  }
  const kprop::CaseFile again = kprop::parse_case_file(kprop::to_json(f).dump(2), "again.json");
  if (again.c != f.c || again.expect != f.expect || again.signature != f.signature ||
      again.identity != f.identity) {
    std::fprintf(stderr, "ASSERTION FAILED: a case file does not read back as written\n");
    std::abort();
  }
  return 0;
}
