// A kind's file names its table's rows by an enum that must follow the
// table's order (`o.num(kRate)` reads row kRate). Each kind checks that at
// compile time, right below its table:
//
//   static_assert(rows_named(kFields, {{kRate, "rate"}, {kBurst, "burst"}}));
//
// so a row added, moved or removed without its enumerator fails the build
// instead of reading another field.
#pragma once
#include <cstddef>
#include <initializer_list>
#include <span>
#include <string_view>

#include "model/kind.h"

namespace tcsync {

struct RowName {
  size_t row;
  std::string_view key;
};

// The enumerators are listed in order from 0, each at the row of its key.
consteval bool rows_named(std::span<const Field> fields, std::initializer_list<RowName> names) {
  size_t next = 0;
  for (const RowName& n : names)
    if (n.row != next++ || n.row >= fields.size() || fields[n.row].key != n.key) return false;
  return true;
}

}  // namespace tcsync
