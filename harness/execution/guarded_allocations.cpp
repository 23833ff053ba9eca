#include "harness/execution/guarded_allocations.h"

#include <c10/core/CPUAllocator.h>
#include <torch/version.h>

#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>

namespace kprop {

namespace {

// Bytes on each side: a multiple of 64 keeps the data as aligned as ATen's own.
constexpr size_t kMargin = 256;
constexpr unsigned char kFill = 0xFF;

struct Block {
  unsigned char* base;  // the margin before the data
  size_t size;          // the data's bytes
  unsigned char* data() const { return base + kMargin; }
};

// The first changed byte of a margin, from the data's start, or nothing.
std::optional<int64_t> changed_byte(const Block& b, bool after) {
  const unsigned char* m = after ? b.data() + b.size : b.base;
  for (size_t i = 0; i < kMargin; ++i)
    if (m[i] != kFill)
      return after ? static_cast<int64_t>(b.size + i) : static_cast<int64_t>(i) - static_cast<int64_t>(kMargin);
  return std::nullopt;
}

std::vector<MemoryFinding> findings_of(const Block& b, const std::string& tensor, int64_t element_size) {
  std::vector<MemoryFinding> out;
  for (bool after : {false, true})
    if (auto at = changed_byte(b, after))
      out.push_back({MemoryFinding::Kind::out_of_bounds_store, tensor,
                     after ? "past its end" : "before its start", *at / element_size,
                     static_cast<int64_t>(b.size) / element_size, 1});
  return out;
}

std::mutex freed_mutex;
std::vector<MemoryFinding> freed_findings;  // of buffers freed while guarded

void release(void* context) {
  auto* b = static_cast<Block*>(context);
  auto found = findings_of(*b, "a buffer the call freed", 1);
  if (!found.empty()) {
    std::lock_guard<std::mutex> lock(freed_mutex);
    freed_findings.insert(freed_findings.end(), found.begin(), found.end());
  }
  std::free(b->base);
  delete b;
}

class GuardingAllocator final : public c10::Allocator {
 public:
#if TORCH_VERSION_MAJOR >= 2
  c10::DataPtr allocate(size_t n) override {
#else
  c10::DataPtr allocate(size_t n) const override {
#endif
    const size_t rounded = (n + 63) / 64 * 64;
    auto* base = static_cast<unsigned char*>(std::aligned_alloc(64, kMargin + rounded + kMargin));
    if (base == nullptr) throw std::bad_alloc();
    std::memset(base, kFill, kMargin);
    std::memset(base + kMargin + n, kFill, rounded - n + kMargin);
    auto* block = new Block{base, n};
    return {block->data(), block, &release, c10::Device(c10::kCPU)};
  }
  c10::DeleterFnPtr raw_deleter() const override { return nullptr; }
#if TORCH_VERSION_MAJOR >= 2
  void copy_data(void* dest, const void* src, std::size_t count) const override {
    std::memcpy(dest, src, count);
  }
#endif
};

GuardingAllocator guarding;
c10::Allocator* before = nullptr;
// SetCPUAllocator keeps an allocator only at or above the priority it has.
constexpr uint8_t kPriority = 100;

}  // namespace

GuardedAllocations::GuardedAllocations() {
  {
    std::lock_guard<std::mutex> lock(freed_mutex);
    freed_findings.clear();
  }
  before = c10::GetCPUAllocator();
  c10::SetCPUAllocator(&guarding, kPriority);
}

GuardedAllocations::~GuardedAllocations() { c10::SetCPUAllocator(before, kPriority); }

std::vector<MemoryFinding> GuardedAllocations::strays(const NamedTensors& outputs) const {
  std::vector<MemoryFinding> out;
  for (const auto& [name, t] : outputs) {
    if (!t.defined() || !t.is_cpu() || t.storage().data_ptr().get_deleter() != &release) continue;
    const auto* b = static_cast<const Block*>(t.storage().data_ptr().get_context());
    for (auto& f : findings_of(*b, name, t.element_size())) out.push_back(std::move(f));
  }
  std::lock_guard<std::mutex> lock(freed_mutex);
  out.insert(out.end(), freed_findings.begin(), freed_findings.end());
  return out;
}

}  // namespace kprop
