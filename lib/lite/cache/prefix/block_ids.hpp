#pragma once
// Block key -> dense id: an open-addressing table (linear probing, power-of-two size, at most half full), one
// probe for most lookups and no allocation per block, as the reader does one lookup per block reference.
// Internal to the prefix mode.
#include <cstdint>
#include <vector>

#include "lite/cache/prefix/block_trace.hpp"

namespace lite::cache::prefix {

class BlockIds {
 public:
  BlockIds() { rehash(1024); }

  void reserve(size_t n) {
    size_t want = 1024;
    while (want < 2 * n) want *= 2;
    if (want > ids_.size()) rehash(want);
  }
  // The id of `key`, or kNoBlock.
  uint32_t find(uint64_t key) const {
    for (size_t i = slot(key);; i = (i + 1) & mask_) {
      if (ids_[i] == kNoBlock) return kNoBlock;
      if (keys_[i] == key) return ids_[i];
    }
  }
  void insert(uint64_t key, uint32_t id) {
    if (2 * (size_ + 1) > ids_.size()) rehash(2 * ids_.size());
    size_t i = slot(key);
    while (ids_[i] != kNoBlock) i = (i + 1) & mask_;
    keys_[i] = key;
    ids_[i] = id;
    ++size_;
  }
  // Removes `key` (present), shifting later entries of its run back so every lookup still finds them.
  void erase(uint64_t key) {
    size_t i = slot(key);
    while (keys_[i] != key || ids_[i] == kNoBlock) i = (i + 1) & mask_;
    for (size_t j = (i + 1) & mask_; ids_[j] != kNoBlock; j = (j + 1) & mask_) {
      const size_t home = slot(keys_[j]);
      // j's entry may fill the hole at i when its home is not in (i, j] (cyclically)
      if (((j - home) & mask_) >= ((j - i) & mask_)) {
        keys_[i] = keys_[j];
        ids_[i] = ids_[j];
        i = j;
      }
    }
    ids_[i] = kNoBlock;
    --size_;
  }

 private:
  size_t slot(uint64_t key) const {
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return size_t(key) & mask_;
  }
  void rehash(size_t n) {
    std::vector<uint64_t> keys(n);
    std::vector<uint32_t> ids(n, kNoBlock);
    keys_.swap(keys);
    ids_.swap(ids);
    mask_ = n - 1;
    size_ = 0;
    for (size_t i = 0; i < ids.size(); ++i)
      if (ids[i] != kNoBlock) insert(keys[i], ids[i]);
  }

  std::vector<uint64_t> keys_;
  std::vector<uint32_t> ids_;
  size_t mask_ = 0, size_ = 0;
};

}  // namespace lite::cache::prefix
