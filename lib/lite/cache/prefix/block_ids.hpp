#pragma once
// Block key -> dense id, one lookup per block reference of the trace, so the reader's speed is this lookup's cache
// misses. Mooncake's hash ids are counters (a prompt's new blocks are consecutive numbers), so while the keys are
// dense they index pages of 4096 ids directly: 4 bytes a key, and a prompt's keys share a page (3 ns a lookup
// on its conversation trace x40, against 35-65 ns in the table). When the pages hold under one key in 16 of
// their slots (hashes, not counters: a token-ids trace, or a Mooncake-format file from elsewhere) the keys move
// to an open-addressing table (linear probing, power-of-two size, at most half full, key and id in one slot),
// whose misses the reader overlaps by prefetching a prompt's slots ahead. Internal to the prefix mode.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "lite/cache/prefetch.hpp"
#include "lite/cache/prefix/block_trace.hpp"

namespace lite::cache::prefix {

// The open-addressing table: any 64-bit keys.
class KeyTable {
 public:
  KeyTable() { rehash(1024); }

  size_t size() const { return size_; }
  void reserve(size_t n) {
    size_t want = 1024;
    while (want < 2 * n) want *= 2;
    if (want > slots_.size()) rehash(want);
  }
  void prefetch(uint64_t key) const { detail::prefetch_line(&slots_[slot(key)]); }
  // The id of `key`, or kNoBlock.
  uint32_t find(uint64_t key) const {
    for (size_t i = slot(key);; i = (i + 1) & mask_) {
      if (slots_[i].id == kNoBlock) return kNoBlock;
      if (slots_[i].key == key) return slots_[i].id;
    }
  }
  // The id of `key`; when it has none, `id` becomes its id (one probe for both).
  uint32_t find_or_insert(uint64_t key, uint32_t id) {
    if (2 * (size_ + 1) > slots_.size()) rehash(2 * slots_.size());
    size_t i = slot(key);
    for (; slots_[i].id != kNoBlock; i = (i + 1) & mask_)
      if (slots_[i].key == key) return slots_[i].id;
    slots_[i] = {key, id};
    ++size_;
    return id;
  }
  // Removes `key` (present), shifting later entries of its run back so every lookup still finds them.
  void erase(uint64_t key) {
    size_t i = slot(key);
    while (slots_[i].key != key || slots_[i].id == kNoBlock) i = (i + 1) & mask_;
    for (size_t j = (i + 1) & mask_; slots_[j].id != kNoBlock; j = (j + 1) & mask_) {
      const size_t home = slot(slots_[j].key);
      // j's entry may fill the hole at i when its home is not in (i, j] (cyclically)
      if (((j - home) & mask_) >= ((j - i) & mask_)) {
        slots_[i] = slots_[j];
        i = j;
      }
    }
    slots_[i].id = kNoBlock;
    --size_;
  }

 private:
  struct Slot {
    uint64_t key = 0;
    uint32_t id = kNoBlock;
  };

  size_t slot(uint64_t key) const {
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdULL;
    key ^= key >> 33;
    return size_t(key) & mask_;
  }
  void rehash(size_t n) {
    std::vector<Slot> old(n);
    slots_.swap(old);
    mask_ = n - 1;
    size_ = 0;
    for (const Slot& s : old)
      if (s.id != kNoBlock) find_or_insert(s.key, s.id);
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0, size_ = 0;
};

// Pages while the keys are dense (`dense_first`: Mooncake's counters), the table from the first sparse page on.
class BlockIds {
 public:
  explicit BlockIds(bool dense_first = false) : paged_(dense_first) {}

  bool paged() const { return paged_; }
  // Room for n keys in the table (now, or when the keys move there).
  void reserve(size_t n) {
    if (paged_) table_hint_ = n;
    else table_.reserve(n);
  }
  void prefetch(uint64_t key) const {
    if (!paged_) table_.prefetch(key);
  }
  uint32_t find(uint64_t key) const {
    if (!paged_) return table_.find(key);
    const uint32_t* p = page(key >> kPageBits);
    return p ? p[key & kPageMask] : kNoBlock;
  }
  uint32_t find_or_insert(uint64_t key, uint32_t id) {
    if (paged_) {
      if (uint32_t* p = page_or_new(key >> kPageBits)) {
        uint32_t& slot = p[key & kPageMask];
        if (slot == kNoBlock) {
          slot = id;
          ++page_keys_;
        }
        return slot;
      }
      move_to_table();
    }
    return table_.find_or_insert(key, id);
  }
  void erase(uint64_t key) {
    if (!paged_) return table_.erase(key);
    page(key >> kPageBits)[key & kPageMask] = kNoBlock;
    --page_keys_;
  }

 private:
  static constexpr int kPageBits = 12;
  static constexpr uint64_t kPageKeys = uint64_t(1) << kPageBits, kPageMask = kPageKeys - 1;

  uint32_t* page(uint64_t number) const {
    if (number == last_number_) return last_page_;
    const uint32_t i = directory_.find(number);
    if (i == kNoBlock) return nullptr;
    last_number_ = number;
    return last_page_ = pages_[i].get();
  }
  // The page, made when the pages stay dense enough with it; null when not (the keys then move to the table).
  uint32_t* page_or_new(uint64_t number) {
    if (uint32_t* p = page(number)) return p;
    if ((pages_.size() + 1) * kPageKeys > 16 * page_keys_ + (uint64_t(1) << 16)) return nullptr;
    directory_.find_or_insert(number, uint32_t(pages_.size()));
    pages_.emplace_back(new uint32_t[kPageKeys]);
    std::fill_n(pages_.back().get(), kPageKeys, kNoBlock);
    numbers_.push_back(number);
    return page(number);
  }
  void move_to_table() {
    table_.reserve(std::max<size_t>(table_hint_, 2 * page_keys_));
    for (size_t i = 0; i < pages_.size(); ++i)
      for (uint64_t k = 0; k < kPageKeys; ++k)
        if (pages_[i][k] != kNoBlock) table_.find_or_insert(numbers_[i] << kPageBits | k, pages_[i][k]);
    pages_.clear();
    numbers_.clear();
    paged_ = false;
  }

  bool paged_;
  uint64_t page_keys_ = 0;                     // keys held in pages
  std::vector<std::unique_ptr<uint32_t[]>> pages_;
  std::vector<uint64_t> numbers_;              // each page's number (its keys >> kPageBits)
  KeyTable directory_;                         // page number -> index in pages_
  mutable uint64_t last_number_ = UINT64_MAX;  // the page the last lookup used: a prompt's keys share one
  mutable uint32_t* last_page_ = nullptr;
  KeyTable table_;
  size_t table_hint_ = 0;
};

}  // namespace lite::cache::prefix
