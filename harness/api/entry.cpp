#include "harness/api/entry.h"

namespace kprop {

namespace {
Entry& current_entry() {
  static Entry e;
  return e;
}
}  // namespace

void set_entry(Entry e) { current_entry() = std::move(e); }
const Entry& entry() { return current_entry(); }

}  // namespace kprop
