#include "lib/api/heap_state.h"

#include <stdexcept>
#include <string>

namespace weir {

void ThrowKeyGroupOutOfRange(int key_group, const KeyGroupRange& range) {
  throw std::logic_error("a record's key falls into key group " + std::to_string(key_group) +
                         ", which this subtask does not own (its key groups are " +
                         std::to_string(range.start) + ".." + std::to_string(range.end) +
                         "): the key selector is not deterministic. KeyBy's function must return the same "
                         "key for a record every time it is called (no clocks, random numbers or mutable "
                         "state in it)");
}

}  // namespace weir
