#pragma once
// FlatHashMap: the hash map of the heap state backend.
//
// Entries live in one array of slots, found by open addressing with linear probing, and
// a snapshot reads the array front to back. std::unordered_map reads a bucket, the node
// before the wanted one and the wanted one, each a cache miss with many keys, and divides
// by a prime on the way; that was half the time of a word count over a vocabulary of
// 100 000 words, and its snapshots jumped from node to node.
//
// Each slot's tag (a 32-bit digest of its key's hash; 0: free) lives in an array of its
// own, beside the array of entries: a probe reads tags, 16 to a cache line, and only the
// entry whose tag matches. With tags inside 80-byte slots, a lookup that probed past its
// home slot (a successful one probes 2.5 slots on average in a table 3/4 full) read a
// cache line per slot it passed, and the lookups of a word count waited on those loads.
//
// The array is at most 7/8 full. At 3/4 the arrays of 100 000 keys in 128 key groups (781
// a group) doubled to 5 MB, and a loop of lookups without prefetching took a quarter
// longer (the state tables prefetch, and hide most of that). A miss probes longer at
// 7/8, so the state tables look a new key up only once before they add it
// (emplace_absent).
//
// Entries move: adding an entry may move every entry (when the array grows), erasing
// one may move the entries after it (they shift back: no tombstones, so lookups stay
// short after many erasures). A pointer or iterator to an entry is valid until the next
// insertion or erasure. The key of an entry must not be changed (value_type is
// std::pair<K, V>, so that entries can be moved).
//
// Hash must return well-mixed bits, the high 32 above all (the tags are made of them);
// Hash and Eq may be transparent (`is_transparent`), and find() and try_emplace() take any
// key they take.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <memory>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>

#include "lib/common/prefetch.h"
#include "lib/common/table_memory.h"

namespace weir {

template <class K, class V, class Hash, class Eq>
class FlatHashMap {
 public:
  using key_type = K;
  using mapped_type = V;
  using value_type = std::pair<K, V>;
  using size_type = size_t;

 private:
  using Tag = uint32_t;  // 0: free; else a digest of the key's hash with its lowest bit set

 public:
  // The bytes a stored key-value pair takes in the table's arrays: its entry and its tag
  // (not counting free slots, nor memory the key or value points to).
  static constexpr size_t kBytesPerEntry = sizeof(value_type) + sizeof(Tag);

 private:
  struct Entry {
    alignas(value_type) unsigned char storage[sizeof(value_type)];
    value_type& get() { return *std::launder(reinterpret_cast<value_type*>(storage)); }
    const value_type& get() const { return *std::launder(reinterpret_cast<const value_type*>(storage)); }
  };
  static_assert(alignof(value_type) <= 64, "table memory is aligned to 64 bytes");

  template <bool kConst>
  class Iter {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = FlatHashMap::value_type;
    using difference_type = std::ptrdiff_t;
    using reference = std::conditional_t<kConst, const value_type&, value_type&>;
    using pointer = std::conditional_t<kConst, const value_type*, value_type*>;
    using EntryPtr = std::conditional_t<kConst, const Entry*, Entry*>;

    Iter() = default;
    // A non-const iterator converts to a const one.
    template <bool kOther, class = std::enable_if_t<kConst && !kOther>>
    Iter(const Iter<kOther>& other) : tag_(other.tag_), end_(other.end_), entry_(other.entry_) {}

    reference operator*() const { return entry_->get(); }
    pointer operator->() const { return &entry_->get(); }
    Iter& operator++() {
      ++tag_;
      ++entry_;
      SkipFree();
      return *this;
    }
    Iter operator++(int) {
      Iter before = *this;
      ++*this;
      return before;
    }
    friend bool operator==(const Iter& a, const Iter& b) { return a.tag_ == b.tag_; }

   private:
    friend class FlatHashMap;
    template <bool>
    friend class Iter;
    Iter(const Tag* tag, const Tag* end, EntryPtr entry) : tag_(tag), end_(end), entry_(entry) {}
    void SkipFree() {
      while (tag_ != end_ && *tag_ == 0) {
        ++tag_;
        ++entry_;
      }
    }
    const Tag* tag_ = nullptr;
    const Tag* end_ = nullptr;
    EntryPtr entry_ = nullptr;
  };

 public:
  using iterator = Iter<false>;
  using const_iterator = Iter<true>;

  FlatHashMap() = default;
  FlatHashMap(const FlatHashMap& other) { *this = other; }
  FlatHashMap(FlatHashMap&& other) noexcept { swap(other); }
  FlatHashMap& operator=(const FlatHashMap& other) {
    if (this == &other) return *this;
    FlatHashMap copy;
    if (other.capacity_ > 0) {
      copy.Allocate(other.capacity_);
      // Same capacity, same slots: nothing is hashed again.
      for (size_t i = 0; i < other.capacity_; ++i) {
        if (other.tags()[i] == 0) continue;
        new (copy.entries()[i].storage) value_type(other.entries()[i].get());
        copy.tags()[i] = other.tags()[i];
        ++copy.size_;
      }
    }
    swap(copy);
    return *this;
  }
  FlatHashMap& operator=(FlatHashMap&& other) noexcept {
    if (this != &other) {
      FlatHashMap gone(std::move(*this));
      swap(other);
    }
    return *this;
  }
  ~FlatHashMap() { clear(); }

  void swap(FlatHashMap& other) noexcept {
    slots_.swap(other.slots_);
    std::swap(capacity_, other.capacity_);
    std::swap(size_, other.size_);
    std::swap(shift_, other.shift_);
  }

  size_t size() const { return size_; }
  // The slots in the array (a power of two, or 0): size() / bucket_count() is how full it is.
  size_t bucket_count() const { return capacity_; }
  // The slots after one more entry is added: bucket_count(), or twice it when the entry
  // makes the array grow.
  size_t bucket_count_after_adding() const { return MustGrow() ? (capacity_ == 0 ? kMinSlots : capacity_ * 2) : capacity_; }
  bool empty() const { return size_ == 0; }
  void clear() {
    for (size_t i = 0; i < capacity_; ++i) {
      if (tags()[i] != 0) entries()[i].get().~value_type();
    }
    slots_.reset();
    capacity_ = 0;
    size_ = 0;
    shift_ = 64;
  }

  iterator begin() { return Begin<iterator>(entries()); }
  iterator end() { return At(capacity_); }
  const_iterator begin() const { return Begin<const_iterator>(entries()); }
  const_iterator end() const { return ConstAt(capacity_); }

  template <class Q>
  iterator find(const Q& key) {
    const size_t i = FindSlot(key, TagOf(key));
    return i == kNone ? end() : At(i);
  }
  template <class Q>
  const_iterator find(const Q& key) const {
    const size_t i = FindSlot(key, TagOf(key));
    return i == kNone ? end() : ConstAt(i);
  }
  // Starts loading what a lookup of a key whose Hash is `hash` reads first: the tags from
  // its home slot on, and the home slot's entry (a hint; changes nothing).
  void PrefetchSlots(size_t hash) const {
    if (capacity_ == 0) return;
    const size_t home = Home(TagOfHash(hash));
    PrefetchLine(reinterpret_cast<const char*>(tags() + home));
    PrefetchEntryAt(home);
  }
  // Starts loading the entry that a lookup of a key whose Hash is `hash` finds, by its tag
  // (a hint; changes nothing). It reads the tags: best a while after PrefetchSlots loaded
  // them. Does nothing when entries are small: then the entry found is usually in the
  // cache line of the home slot's (PrefetchSlots loads it), and waiting for the tags to
  // find it would cost more than it saves (number keys with number values, measured).
  void PrefetchEntry(size_t hash) const {
    if constexpr (sizeof(Entry) < 64) return;
    if (size_ == 0) return;
    const Tag tag = TagOfHash(hash);
    const Tag* tags = this->tags();
    for (size_t i = Home(tag);; i = (i + 1) & (capacity_ - 1)) {
      if (tags[i] == 0) return;
      if (tags[i] == tag) return PrefetchEntryAt(i);
    }
  }
  template <class Q>
  size_t count(const Q& key) const {
    return FindSlot(key, TagOf(key)) == kNone ? 0 : 1;
  }

  // Adds {key, V(args...)} unless the key is there. `key` is a K, what converts to one
  // (converted only when it is added), or a reference to a K with its hash code (a
  // HashedKeyRef: its member `key` is copied).
  template <class Q, class... Args>
  std::pair<iterator, bool> try_emplace(Q&& key, Args&&... args) {
    const Tag tag = TagOf(key);
    if (size_t i = FindSlot(key, tag); i != kNone) return {At(i), false};
    return {Add(tag, std::forward<Q>(key), std::forward<Args>(args)...), true};
  }
  // Adds {key, V(args...)} for a key the caller just looked up and did not find, with no
  // change to the map since: the map does not look for it again. (A key that is there
  // would be there twice.)
  template <class Q, class... Args>
  iterator emplace_absent(Q&& key, Args&&... args) {
    return Add(TagOf(key), std::forward<Q>(key), std::forward<Args>(args)...);
  }
  V& operator[](const K& key) { return try_emplace(key).first->second; }
  V& operator[](K&& key) { return try_emplace(std::move(key)).first->second; }

  // Returns the iterator to the entry after the erased one in slot order; an entry that
  // wrapped around from the front of the array may be visited twice by a loop that
  // erases as it goes.
  iterator erase(const_iterator it) {
    const size_t i = static_cast<size_t>(it.tag_ - tags());
    const size_t mask = capacity_ - 1;
    Free(i);
    // Backward shift: an entry after the gap whose home slot is not between the gap and
    // itself moves into the gap, until a free slot ends the run.
    Tag* tag = tags();
    Entry* entry = entries();
    size_t gap = i;
    for (size_t j = (i + 1) & mask; tag[j] != 0; j = (j + 1) & mask) {
      const size_t home = Home(tag[j]);
      if (((j - home) & mask) < ((j - gap) & mask)) continue;  // home is in (gap, j]
      new (entry[gap].storage) value_type(std::move(entry[j].get()));
      tag[gap] = tag[j];
      Destroy(j);
      gap = j;
    }
    iterator next = At(i);  // the slot holds the next entry now, or is free
    next.SkipFree();
    return next;
  }
  iterator erase(iterator it) { return erase(const_iterator(it)); }
  template <class Q>
    requires(!std::is_convertible_v<const Q&, const_iterator>)
  size_t erase(const Q& key) {
    const size_t i = FindSlot(key, TagOf(key));
    if (i == kNone) return 0;
    erase(ConstAt(i));
    return 1;
  }

 private:
  static constexpr size_t kNone = ~size_t{0};

  template <class Q, class... Args>
  iterator Add(Tag tag, Q&& key, Args&&... args) {
    if (MustGrow()) Grow();
    const size_t i = FreeSlotFrom(Home(tag));
    new (entries()[i].storage) value_type(std::piecewise_construct, std::forward_as_tuple(KeyOf(std::forward<Q>(key))),
                                          std::forward_as_tuple(std::forward<Args>(args)...));
    tags()[i] = tag;
    ++size_;
    return At(i);
  }

  bool MustGrow() const { return (size_ + 1) * 8 > capacity_ * 7; }
  void PrefetchEntryAt(size_t i) const { PrefetchObject(entries() + i, sizeof(Entry)); }
  static constexpr size_t kMinSlots = 8;

  template <class Q>
  static decltype(auto) KeyOf(Q&& key) {
    if constexpr (std::is_constructible_v<K, Q&&>) {
      return std::forward<Q>(key);
    } else {
      return (key.key);  // a HashedKeyRef
    }
  }
  // The hash's high half: StableKeyHash's low bits are those of a 32-bit hash code times
  // an odd constant, its high bits the best mixed.
  static Tag TagOfHash(size_t hash) { return static_cast<Tag>(static_cast<uint64_t>(hash) >> 32) | 1; }
  template <class Q>
  static Tag TagOf(const Q& key) {
    return TagOfHash(Hash{}(key));
  }
  // The slot an entry with this tag is looked for first: the tag's bits mixed, the top
  // ones taken.
  size_t Home(Tag tag) const { return (tag * 0x9e3779b97f4a7c15ULL) >> shift_; }
  size_t FreeSlotFrom(size_t i) const {
    const Tag* tag = tags();
    while (tag[i] != 0) i = (i + 1) & (capacity_ - 1);
    return i;
  }

  template <class It>
  It Begin(typename It::EntryPtr entries) const {
    It it(tags(), tags() + capacity_, entries);
    it.SkipFree();
    return it;
  }
  iterator At(size_t i) { return iterator(tags() + i, tags() + capacity_, entries() + i); }
  const_iterator ConstAt(size_t i) const { return const_iterator(tags() + i, tags() + capacity_, entries() + i); }

  template <class Q>
  size_t FindSlot(const Q& key, Tag tag) const {
    if (size_ == 0) return kNone;
    const size_t mask = capacity_ - 1;
    const Tag* tags = this->tags();
    for (size_t i = Home(tag);; i = (i + 1) & mask) {
      if (tags[i] == 0) return kNone;
      if (tags[i] == tag && Eq{}(entries()[i].get().first, key)) return i;
    }
  }

  void Destroy(size_t i) {
    entries()[i].get().~value_type();
    tags()[i] = 0;
  }
  void Free(size_t i) {
    Destroy(i);
    --size_;
  }

  // The tags of n slots, then their entries, in one block of table memory (large arrays
  // in huge pages). Free slots' tags are 0; their entries are not constructed.
  class SlotArray {
   public:
    SlotArray() = default;
    explicit SlotArray(size_t n) : block_(static_cast<char*>(AllocateTableMemory(BlockBytes(n)))), n_(n) {
      std::memset(block_, 0, TagBytes(n));
    }
    SlotArray(SlotArray&& other) noexcept { swap(other); }
    SlotArray& operator=(SlotArray&& other) noexcept {
      SlotArray gone(std::move(*this));
      swap(other);
      return *this;
    }
    ~SlotArray() {
      if (block_ != nullptr) FreeTableMemory(block_, BlockBytes(n_));
    }
    void swap(SlotArray& other) noexcept {
      std::swap(block_, other.block_);
      std::swap(n_, other.n_);
    }
    Tag* tags() const { return reinterpret_cast<Tag*>(block_); }
    Entry* entries() const { return reinterpret_cast<Entry*>(block_ + TagBytes(n_)); }
    void reset() { SlotArray gone(std::move(*this)); }

   private:
    // Rounded up to a cache line, so the entries start on one.
    static size_t TagBytes(size_t n) { return (n * sizeof(Tag) + 63) & ~size_t{63}; }
    static size_t BlockBytes(size_t n) { return TagBytes(n) + n * sizeof(Entry); }

    char* block_ = nullptr;
    size_t n_ = 0;
  };

  Tag* tags() const { return slots_.tags(); }
  Entry* entries() const { return slots_.entries(); }

  void Allocate(size_t n) {
    slots_ = SlotArray(n);
    capacity_ = n;
    shift_ = 64 - static_cast<unsigned>(std::countr_zero(n));
  }

  void Grow() {
    SlotArray old = std::move(slots_);
    const size_t old_capacity = capacity_;
    Allocate(old_capacity == 0 ? kMinSlots : old_capacity * 2);
    for (size_t j = 0; j < old_capacity; ++j) {
      const Tag tag = old.tags()[j];
      if (tag == 0) continue;
      value_type& moved = old.entries()[j].get();
      const size_t i = FreeSlotFrom(Home(tag));
      new (entries()[i].storage) value_type(std::move(moved));
      tags()[i] = tag;
      moved.~value_type();
    }
  }

  SlotArray slots_;  // capacity_ slots, a power of two, or none
  size_t capacity_ = 0;
  size_t size_ = 0;
  unsigned shift_ = 64;  // 64 - log2(capacity_)
};

}  // namespace weir
