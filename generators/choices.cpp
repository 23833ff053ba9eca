#include "generators/choices.h"

#include <stdexcept>

namespace kprop {

namespace {

// Bytes a reader of values below n takes: enough for n - 1.
int width_below(uint64_t n) {
  int width = 0;
  for (uint64_t top = n - 1; top > 0; top >>= 8) ++width;
  return width;
}

// How bytes choose among options: raw 0 is option 0 (the simplest); any other raw value
// r picks option 1.. by (r - 1) modulo the sum of their weights, each weight at least 1
// so that every option can be reached from bytes, even one random draws never take.
uint64_t byte_weight_total(const std::vector<uint32_t>& weights) {
  uint64_t total = 0;
  for (size_t i = 1; i < weights.size(); ++i) total += weights[i] > 0 ? weights[i] : 1;
  return total;
}

int pick_width(const std::vector<uint32_t>& weights) {
  if (weights.size() <= 1) return 0;
  const uint64_t total = byte_weight_total(weights);
  return total < 255 ? 1 : total <= 0xFFFF ? 2 : width_below(total + 1);
}

}  // namespace

size_t RandomChoices::pick(const std::vector<uint32_t>& weights, size_t) {
  uint64_t total = 0;
  for (uint32_t w : weights) total += w;
  if (total == 0) return 0;
  uint64_t r = next() % total;
  for (size_t i = 0; i < weights.size(); ++i) {
    if (r < weights[i]) return i;
    r -= weights[i];
  }
  return 0;
}

uint64_t RandomChoices::below(uint64_t n, uint64_t) { return n <= 1 ? 0 : next() % n; }

uint64_t RandomChoices::data_seed(uint64_t) { return next(); }

bool RandomChoices::flag(uint32_t simplest_weight, uint32_t other_weight, bool) {
  return pick({simplest_weight, other_weight}, 0) == 1;
}

uint64_t ByteChoices::read(int width) {
  uint64_t v = 0;
  for (int i = 0; i < width; ++i) {
    v = (v << 8) | (cursor_ < size_ ? data_[cursor_] : 0);
    ++cursor_;
  }
  return v;
}

size_t ByteChoices::pick(const std::vector<uint32_t>& weights, size_t) {
  const int width = pick_width(weights);
  if (width == 0) return 0;
  const uint64_t raw = read(width);
  if (raw == 0) return 0;
  uint64_t r = (raw - 1) % byte_weight_total(weights);
  for (size_t i = 1; i < weights.size(); ++i) {
    const uint64_t w = weights[i] > 0 ? weights[i] : 1;
    if (r < w) return i;
    r -= w;
  }
  return 0;
}

uint64_t ByteChoices::below(uint64_t n, uint64_t) {
  if (n <= 1) return 0;
  return read(width_below(n)) % n;
}

uint64_t ByteChoices::data_seed(uint64_t) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v = (v << 8) | byte_at(i);
  return v;
}

bool ByteChoices::flag(uint32_t simplest_weight, uint32_t other_weight, bool) {
  if (flags_read_ < kFlagsInFlagByte) return (byte_at(kFlagByte) >> flags_read_++) & 1;
  return pick({simplest_weight, other_weight}, 0) == 1;
}

bool ChoiceRecorder::flag(uint32_t simplest_weight, uint32_t other_weight, bool wanted) {
  if (flags_written_ < kFlagsInFlagByte) {
    if (wanted) bytes_[kFlagByte] |= static_cast<uint8_t>(1u << flags_written_);
    ++flags_written_;
    return wanted;
  }
  return pick({simplest_weight, other_weight}, wanted ? 1 : 0) == 1;
}

void ChoiceRecorder::write(uint64_t value, int width) {
  for (int i = width - 1; i >= 0; --i) bytes_.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

size_t ChoiceRecorder::pick(const std::vector<uint32_t>& weights, size_t wanted) {
  if (wanted >= weights.size()) throw std::logic_error("ChoiceRecorder: option out of range");
  const int width = pick_width(weights);
  if (width == 0) return wanted;
  uint64_t raw = 0;
  if (wanted > 0) {
    raw = 1;
    for (size_t i = 1; i < wanted; ++i) raw += weights[i] > 0 ? weights[i] : 1;
  }
  write(raw, width);
  return wanted;
}

uint64_t ChoiceRecorder::below(uint64_t n, uint64_t wanted) {
  if (n <= 1) return 0;
  if (wanted >= n) throw std::logic_error("ChoiceRecorder: value out of range");
  write(wanted, width_below(n));
  return wanted;
}

uint64_t ChoiceRecorder::data_seed(uint64_t wanted) {
  for (int i = 0; i < 8; ++i) bytes_[static_cast<size_t>(i)] = static_cast<uint8_t>(wanted >> (8 * (7 - i)));
  return wanted;
}

}  // namespace kprop
