#pragma once
// Keyed timers (Flink's TimerService): a keyed operator registers, for the current key,
// event-time timers (fire when the watermark reaches them) and processing-time timers
// (fire when the wall clock does); a timer is (key, timestamp), registered at most once.
//
// Timers live in the operator's keyed state, in one map state per time domain (key ->
// timestamps), so checkpoints and savepoints hold them and a restore at any parallelism
// moves them with their keys, on every keyed state backend through the typed state API.
// A queue in memory orders them by time; a restore rebuilds it from those states.
//
// Used from the task's thread only.

#include <cstdint>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "lib/api/event_time.h"
#include "lib/api/keyed_states.h"
#include "lib/common/time_util.h"

namespace weir {

enum class TimeDomain { kEventTime, kProcessingTime };

template <class K>
class TimerService {
 public:
  // Timers in the keyed states `<prefix>-event-time` and `<prefix>-processing-time`.
  explicit TimerService(KeyedStates<K>* states, const std::string& prefix = "_timers")
      : states_(states),
        names_{prefix + "-event-time", prefix + "-processing-time"},
        stored_{&states->template GetMapState<int64_t, bool>(names_[0]),
                &states->template GetMapState<int64_t, bool>(names_[1])} {}

  // For the current key.
  void RegisterEventTimeTimer(int64_t timestamp) { Register(TimeDomain::kEventTime, timestamp); }
  void RegisterProcessingTimeTimer(int64_t timestamp) { Register(TimeDomain::kProcessingTime, timestamp); }
  void DeleteEventTimeTimer(int64_t timestamp) { Delete(TimeDomain::kEventTime, timestamp); }
  void DeleteProcessingTimeTimer(int64_t timestamp) { Delete(TimeDomain::kProcessingTime, timestamp); }

  // The operator's current input watermark (kMinWatermark before the first).
  int64_t CurrentWatermark() const { return watermark_; }
  // Wall-clock milliseconds since the epoch.
  int64_t CurrentProcessingTime() const { return NowMillis(); }

  // The runtime's side. Reads the timers of the subtask's keys back from the keyed
  // state into the queues (after a restore; harmless on a fresh start).
  void Restore() {
    for (int d = 0; d < 2; ++d) {
      std::vector<K> keys;
      states_->ForEachKey(names_[d], StateKind::kMap, [&](const K& key) { keys.push_back(key); });
      for (const K& key : keys) {
        states_->SetCurrentKey(key);
        for (const auto& [ts, unused] : stored_[d]->Entries()) queues_[d].emplace(ts, key);
      }
    }
  }
  // Number of timers registered in a domain.
  size_t size(TimeDomain domain) const { return queues_[Index(domain)].size(); }

  // Fires, in timestamp order, the event-time timers at or before `watermark`:
  // on_timer(timestamp, key) with the key set as current key. Timers registered while
  // firing fire too when they are due.
  template <class F>
  void AdvanceWatermark(int64_t watermark, F&& on_timer) {
    watermark_ = watermark;
    Fire(TimeDomain::kEventTime, watermark, on_timer);
  }
  // The earliest processing-time timer (INT64_MAX: none).
  int64_t NextProcessingTime() const {
    const auto& q = queues_[Index(TimeDomain::kProcessingTime)];
    return q.empty() ? std::numeric_limits<int64_t>::max() : q.begin()->first;
  }
  template <class F>
  void AdvanceProcessingTime(int64_t now_ms, F&& on_timer) {
    Fire(TimeDomain::kProcessingTime, now_ms, on_timer);
  }

 private:
  static int Index(TimeDomain d) { return d == TimeDomain::kEventTime ? 0 : 1; }
  void Register(TimeDomain domain, int64_t ts) {
    const int d = Index(domain);
    if (queues_[d].emplace(ts, states_->current_key()).second) stored_[d]->Put(ts, true);
  }
  void Delete(TimeDomain domain, int64_t ts) {
    const int d = Index(domain);
    if (queues_[d].erase({ts, states_->current_key()}) > 0) stored_[d]->Remove(ts);
  }
  template <class F>
  void Fire(TimeDomain domain, int64_t limit, F& on_timer) {
    const int d = Index(domain);
    auto& q = queues_[d];
    while (!q.empty() && q.begin()->first <= limit) {
      auto [ts, key] = *q.begin();
      q.erase(q.begin());
      states_->SetCurrentKey(key);
      stored_[d]->Remove(ts);
      on_timer(ts, states_->current_key());
    }
  }

  KeyedStates<K>* states_;
  std::string names_[2];
  MapState<int64_t, bool>* stored_[2];
  std::set<std::pair<int64_t, K>> queues_[2];
  int64_t watermark_ = kMinWatermark;
};

}  // namespace weir
