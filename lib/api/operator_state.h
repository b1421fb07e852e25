#pragma once
// Operator state: state of a parallel instance, not of a key. List state is split
// evenly over the new instances on rescale; union list state gives every instance
// the whole list (Flink's getListState / getUnionListState).
//
// Owned by one operator subtask; used only from its task thread.

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lib/api/serialization.h"
#include "lib/api/state.h"
#include "lib/api/state_snapshot.h"

namespace weir {

class OperatorStateStore {
 public:
  OperatorStateStore() = default;
  // `restored` (may be null) outlives the store; `subtask_index` is the subtask's.
  OperatorStateStore(const std::map<std::string, RestoredOperatorList>* restored, int subtask_index)
      : restored_(restored), subtask_index_(subtask_index) {}

  template <class T>
  ListState<T>& GetListState(const std::string& name) {
    return Get<T>(name, OperatorStateMode::kSplit);
  }
  template <class T>
  ListState<T>& GetUnionListState(const std::string& name) {
    return Get<T>(name, OperatorStateMode::kUnion);
  }
  // A list every subtask keeps in full and alike (broadcast state): on restore new
  // subtask i gets the list of old subtask i mod the old parallelism.
  template <class T>
  ListState<T>& GetBroadcastListState(const std::string& name) {
    return Get<T>(name, OperatorStateMode::kBroadcast);
  }

  // The registered lists, and the restored ones the job has not asked for since the
  // restore, carried over as they were restored (a union list by subtask 0 only: every
  // subtask was given all of it, and a restore unions the subtasks' lists again).
  OperatorStateSnapshot Snapshot() const {
    OperatorStateSnapshot snap;
    for (const auto& [name, list] : lists_) snap.lists.push_back(list->Snapshot(name));
    if (restored_) {
      for (const auto& [name, restored] : *restored_) {
        if (lists_.count(name)) continue;
        OperatorStateSnapshot::List l;
        l.name = name;
        l.mode = restored.mode;
        if (restored.mode != OperatorStateMode::kUnion || subtask_index_ == 0) l.elements = restored.elements;
        snap.lists.push_back(std::move(l));
      }
    }
    return snap;
  }

 private:
  class ListBase {
   public:
    virtual ~ListBase() = default;
    virtual OperatorStateSnapshot::List Snapshot(const std::string& name) const = 0;
  };
  template <class T>
  class TypedList final : public ListBase, public ListState<T> {
   public:
    explicit TypedList(OperatorStateMode mode) : mode_(mode) {}
    std::vector<T> Get() override { return items_; }
    void Add(const T& v) override { items_.push_back(v); }
    void AddAll(const std::vector<T>& vs) override { items_.insert(items_.end(), vs.begin(), vs.end()); }
    void Update(const std::vector<T>& vs) override { items_ = vs; }
    void Clear() override { items_.clear(); }
    OperatorStateSnapshot::List Snapshot(const std::string& name) const override {
      OperatorStateSnapshot::List l;
      l.name = name;
      l.mode = mode_;
      for (const auto& item : items_) l.elements.push_back(SerializeToBytes(item));
      return l;
    }
    OperatorStateMode mode_;
    std::vector<T> items_;
  };

  template <class T>
  ListState<T>& Get(const std::string& name, OperatorStateMode mode) {
    auto it = lists_.find(name);
    if (it != lists_.end()) {
      auto* l = dynamic_cast<TypedList<T>*>(it->second.get());
      if (!l) throw std::logic_error("operator state '" + name + "' was registered with another type");
      return *l;
    }
    auto list = std::make_unique<TypedList<T>>(mode);
    if (restored_) {
      auto r = restored_->find(name);
      if (r != restored_->end()) {
        for (const auto& bytes : r->second.elements) list->items_.push_back(DeserializeFromBytes<T>(bytes));
      }
    }
    auto& ref = *list;
    lists_.emplace(name, std::move(list));
    return ref;
  }

  const std::map<std::string, RestoredOperatorList>* restored_ = nullptr;
  int subtask_index_ = 0;
  std::map<std::string, std::unique_ptr<ListBase>> lists_;
};

}  // namespace weir
