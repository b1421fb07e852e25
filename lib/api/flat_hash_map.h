#pragma once
// FlatHashMap: the hash map of the heap state backend.
//
// Entries live in one array of slots, found by open addressing with linear probing: a
// lookup reads the one slot it wants (and, on a collision, the next ones, usually in the
// same cache line), and a snapshot reads the array front to back. std::unordered_map
// reads a bucket, the node before the wanted one and the wanted one, each a cache miss
// with many keys, and divides by a prime on the way; that was half the time of a word
// count over a vocabulary of 100 000 words, and its snapshots jumped from node to node.
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
// Hash must return well-mixed bits; Hash and Eq may be transparent (`is_transparent`),
// and find() and try_emplace() take any key they take.

#include <bit>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <new>
#include <tuple>
#include <type_traits>
#include <utility>

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
  struct Slot {
    size_t tag = 0;  // 0: free; else the key's hash with its lowest bit set
    alignas(value_type) unsigned char storage[sizeof(value_type)];
    value_type& entry() { return *std::launder(reinterpret_cast<value_type*>(storage)); }
    const value_type& entry() const { return *std::launder(reinterpret_cast<const value_type*>(storage)); }
  };

  template <bool kConst>
  class Iter {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = FlatHashMap::value_type;
    using difference_type = std::ptrdiff_t;
    using reference = std::conditional_t<kConst, const value_type&, value_type&>;
    using pointer = std::conditional_t<kConst, const value_type*, value_type*>;
    using SlotPtr = std::conditional_t<kConst, const Slot*, Slot*>;

    Iter() = default;
    // A non-const iterator converts to a const one.
    template <bool kOther, class = std::enable_if_t<kConst && !kOther>>
    Iter(const Iter<kOther>& other) : slot_(other.slot_), end_(other.end_) {}

    reference operator*() const { return slot_->entry(); }
    pointer operator->() const { return &slot_->entry(); }
    Iter& operator++() {
      ++slot_;
      SkipFree();
      return *this;
    }
    Iter operator++(int) {
      Iter before = *this;
      ++*this;
      return before;
    }
    friend bool operator==(const Iter& a, const Iter& b) { return a.slot_ == b.slot_; }

   private:
    friend class FlatHashMap;
    template <bool>
    friend class Iter;
    Iter(SlotPtr slot, SlotPtr end) : slot_(slot), end_(end) {}
    void SkipFree() {
      while (slot_ != end_ && slot_->tag == 0) ++slot_;
    }
    SlotPtr slot_ = nullptr;
    SlotPtr end_ = nullptr;
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
        if (other.slots_[i].tag == 0) continue;
        new (copy.slots_[i].storage) value_type(other.slots_[i].entry());
        copy.slots_[i].tag = other.slots_[i].tag;
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
    std::swap(slots_, other.slots_);
    std::swap(capacity_, other.capacity_);
    std::swap(size_, other.size_);
    std::swap(shift_, other.shift_);
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void clear() {
    for (size_t i = 0; i < capacity_; ++i) {
      if (slots_[i].tag != 0) slots_[i].entry().~value_type();
    }
    slots_.reset();
    capacity_ = 0;
    size_ = 0;
    shift_ = 64;
  }

  iterator begin() { return Begin<iterator>(slots_.get()); }
  iterator end() { return iterator(slots_.get() + capacity_, slots_.get() + capacity_); }
  const_iterator begin() const { return Begin<const_iterator>(slots_.get()); }
  const_iterator end() const { return const_iterator(slots_.get() + capacity_, slots_.get() + capacity_); }

  template <class Q>
  iterator find(const Q& key) {
    const size_t i = FindSlot(key, TagOf(key));
    return i == kNone ? end() : At(i);
  }
  template <class Q>
  const_iterator find(const Q& key) const {
    const size_t i = FindSlot(key, TagOf(key));
    return i == kNone ? end() : const_iterator(slots_.get() + i, slots_.get() + capacity_);
  }
  // Starts loading the slot a lookup of `key` reads first (a hint; changes nothing).
  template <class Q>
  void Prefetch(const Q& key) const {
    if (capacity_ == 0) return;
    const char* slot = reinterpret_cast<const char*>(&slots_[Home(TagOf(key))]);
    PrefetchLine(slot);
    if constexpr (sizeof(Slot) > 64) PrefetchLine(slot + sizeof(Slot) - 1);
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
    const size_t tag = TagOf(key);
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
    const size_t i = static_cast<size_t>(it.slot_ - slots_.get());
    const size_t mask = capacity_ - 1;
    Free(i);
    // Backward shift: an entry after the gap whose home slot is not between the gap and
    // itself moves into the gap, until a free slot ends the run.
    size_t gap = i;
    for (size_t j = (i + 1) & mask; slots_[j].tag != 0; j = (j + 1) & mask) {
      const size_t home = Home(slots_[j].tag);
      if (((j - home) & mask) < ((j - gap) & mask)) continue;  // home is in (gap, j]
      new (slots_[gap].storage) value_type(std::move(slots_[j].entry()));
      slots_[gap].tag = slots_[j].tag;
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
    erase(const_iterator(slots_.get() + i, slots_.get() + capacity_));
    return 1;
  }

 private:
  static constexpr size_t kNone = ~size_t{0};

  template <class Q, class... Args>
  iterator Add(size_t tag, Q&& key, Args&&... args) {
    if ((size_ + 1) * 8 > capacity_ * 7) Grow();
    size_t i = Home(tag);
    while (slots_[i].tag != 0) i = (i + 1) & (capacity_ - 1);
    new (slots_[i].storage) value_type(std::piecewise_construct, std::forward_as_tuple(KeyOf(std::forward<Q>(key))),
                                       std::forward_as_tuple(std::forward<Args>(args)...));
    slots_[i].tag = tag;
    ++size_;
    return At(i);
  }

  // GCC finds a function whose only effect is __builtin_prefetch free of side effects
  // and drops the calls to it once it is not inlined; an asm statement it keeps.
  static void PrefetchLine(const char* p) {
#if defined(__x86_64__)
    asm volatile("prefetcht0 %0" : : "m"(*p));
#else
    __builtin_prefetch(p);
#endif
  }
  static constexpr size_t kMinSlots = 8;

  template <class Q>
  static decltype(auto) KeyOf(Q&& key) {
    if constexpr (std::is_constructible_v<K, Q&&>) {
      return std::forward<Q>(key);
    } else {
      return (key.key);  // a HashedKeyRef
    }
  }
  template <class Q>
  static size_t TagOf(const Q& key) {
    return Hash{}(key) | 1;
  }
  // The slot an entry with this tag is looked for first: the top bits of the tag mixed.
  size_t Home(size_t tag) const { return (tag * 0x9e3779b97f4a7c15ULL) >> shift_; }

  template <class It>
  It Begin(typename It::SlotPtr slots) const {
    It it(slots, slots + capacity_);
    it.SkipFree();
    return it;
  }
  iterator At(size_t i) { return iterator(slots_.get() + i, slots_.get() + capacity_); }

  template <class Q>
  size_t FindSlot(const Q& key, size_t tag) const {
    if (size_ == 0) return kNone;
    const size_t mask = capacity_ - 1;
    for (size_t i = Home(tag);; i = (i + 1) & mask) {
      const Slot& s = slots_[i];
      if (s.tag == 0) return kNone;
      if (s.tag == tag && Eq{}(s.entry().first, key)) return i;
    }
  }

  void Destroy(size_t i) {
    slots_[i].entry().~value_type();
    slots_[i].tag = 0;
  }
  void Free(size_t i) {
    Destroy(i);
    --size_;
  }

  // An array of free slots, in table memory (large arrays in huge pages).
  class SlotArray {
   public:
    SlotArray() = default;
    explicit SlotArray(size_t n) : slots_(static_cast<Slot*>(AllocateTableMemory(n * sizeof(Slot)))), n_(n) {
      std::uninitialized_value_construct_n(slots_, n);
    }
    SlotArray(SlotArray&& other) noexcept { swap(other); }
    SlotArray& operator=(SlotArray&& other) noexcept {
      SlotArray gone(std::move(*this));
      swap(other);
      return *this;
    }
    ~SlotArray() { FreeTableMemory(slots_, n_ * sizeof(Slot)); }  // Slot is trivially destructible
    void swap(SlotArray& other) noexcept {
      std::swap(slots_, other.slots_);
      std::swap(n_, other.n_);
    }
    Slot& operator[](size_t i) const { return slots_[i]; }
    Slot* get() const { return slots_; }
    void reset() { SlotArray gone(std::move(*this)); }

   private:
    Slot* slots_ = nullptr;
    size_t n_ = 0;
  };
  static_assert(std::is_trivially_destructible_v<Slot>);

  void Allocate(size_t n) {
    slots_ = SlotArray(n);
    capacity_ = n;
    shift_ = 64 - static_cast<unsigned>(std::countr_zero(n));
  }

  void Grow() {
    SlotArray old = std::move(slots_);
    const size_t old_capacity = capacity_;
    Allocate(old_capacity == 0 ? kMinSlots : old_capacity * 2);
    const size_t mask = capacity_ - 1;
    for (size_t j = 0; j < old_capacity; ++j) {
      Slot& s = old[j];
      if (s.tag == 0) continue;
      size_t i = Home(s.tag);
      while (slots_[i].tag != 0) i = (i + 1) & mask;
      new (slots_[i].storage) value_type(std::move(s.entry()));
      slots_[i].tag = s.tag;
      s.entry().~value_type();
    }
  }

  SlotArray slots_;  // capacity_ slots, a power of two, or none
  size_t capacity_ = 0;
  size_t size_ = 0;
  unsigned shift_ = 64;  // 64 - log2(capacity_)
};

}  // namespace weir
