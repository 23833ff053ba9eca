// Choice sources: where a generator's decisions come from (docs/design.md §6).
//
// A kernel's generator is written once (generators/draw.h walks its schema); every
// decision it makes is one call to a ChoiceSource, as in Hypothesis and google/fuzztest:
//   RandomChoices   a deterministic stream from a seed: the searches
//   ByteChoices     a fuzzer's bytes: fixed-width reads, exhausted input reads as 0
//   ChoiceRecorder  writes the bytes that make ByteChoices decode a given case
// Option 0 is always the simplest, so all-zero bytes decode to the simplest case and
// a zero byte in a list's "one more?" flag ends the list.
//
// Bytes: 0..7 the data seed, 8 the first eight yes/no parameters (bit k: the k-th),
// then every other decision in the generator's order. Both fixed places serve mutation:
// a structural change keeps the tensor contents, and a parameter flag is one bit near
// the front, whatever its place in the schema. Without that, a flag drawn last needs the
// whole case's bytes, which libFuzzer's length control (short inputs first) reaches late.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/splitmix64.h"

namespace kprop {

// The byte layout of ByteChoices and ChoiceRecorder.
constexpr size_t kFlagByte = 8;          // bits 0..7: the first eight flags
constexpr int kFlagsInFlagByte = 8;      // later flags are stream decisions
constexpr size_t kFirstStreamByte = 9;

class ChoiceSource {
 public:
  virtual ~ChoiceSource() = default;
  // One of weights.size() options; 0 is the simplest. Random draws follow the weights;
  // `wanted` is what a recorder must produce (ignored when drawing).
  virtual size_t pick(const std::vector<uint32_t>& weights, size_t wanted) = 0;
  // An integer in [0, n), n >= 1; 0 is the simplest.
  virtual uint64_t below(uint64_t n, uint64_t wanted) = 0;
  // The data seed: 64 bits from a fixed place (bytes 0..7), so that a mutation of the
  // structure keeps the tensor contents.
  virtual uint64_t data_seed(uint64_t wanted) = 0;
  // A schema's yes/no parameter: true is the side that is not its simplest. Random draws
  // weigh the sides as pick({simplest_weight, other_weight}) does, draw for draw.
  virtual bool flag(uint32_t simplest_weight, uint32_t other_weight, bool wanted) = 0;
  // True when the source records a known case: the generator must then pass `wanted`.
  virtual bool recording() const { return false; }
};

// SplitMix64 (core/splitmix64.h): small, fast, and the same on every platform.
class RandomChoices final : public ChoiceSource {
 public:
  explicit RandomChoices(uint64_t seed) : words_(seed) {}
  size_t pick(const std::vector<uint32_t>& weights, size_t wanted) override;
  uint64_t below(uint64_t n, uint64_t wanted) override;
  uint64_t data_seed(uint64_t wanted) override;
  bool flag(uint32_t simplest_weight, uint32_t other_weight, bool wanted) override;
  uint64_t next() { return words_.next(); }

 private:
  SplitMix64 words_;
};

class ByteChoices final : public ChoiceSource {
 public:
  ByteChoices(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  size_t pick(const std::vector<uint32_t>& weights, size_t wanted) override;
  uint64_t below(uint64_t n, uint64_t wanted) override;
  uint64_t data_seed(uint64_t wanted) override;
  bool flag(uint32_t simplest_weight, uint32_t other_weight, bool wanted) override;
  size_t consumed() const { return cursor_; }

 private:
  uint64_t read(int width);  // big-endian; bytes past the end read as 0
  uint8_t byte_at(size_t i) const { return i < size_ ? data_[i] : 0; }
  const uint8_t* data_;
  size_t size_;
  size_t cursor_ = kFirstStreamByte;
  int flags_read_ = 0;
};

class ChoiceRecorder final : public ChoiceSource {
 public:
  ChoiceRecorder() : bytes_(kFirstStreamByte, 0) {}
  size_t pick(const std::vector<uint32_t>& weights, size_t wanted) override;
  uint64_t below(uint64_t n, uint64_t wanted) override;
  uint64_t data_seed(uint64_t wanted) override;
  bool flag(uint32_t simplest_weight, uint32_t other_weight, bool wanted) override;
  bool recording() const override { return true; }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  void write(uint64_t value, int width);
  std::vector<uint8_t> bytes_;
  int flags_written_ = 0;
};

}  // namespace kprop
