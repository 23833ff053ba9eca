// kprop evaluates thousands of small cases per second, each allocating and freeing the
// same few tensors. glibc returns freed memory to the kernel eagerly (trim and mmap
// thresholds), so every evaluation page-faults it back in; measured with perf, that was
// a tenth of an evaluation. Keeping freed memory in the process removes it.
#include <malloc.h>

namespace kprop {
namespace {

const bool allocator_tuned = [] {
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  mallopt(M_MMAP_THRESHOLD, 64 << 20);
  return true;
}();

}  // namespace
}  // namespace kprop
