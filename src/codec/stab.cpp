#include "codec/stab.h"

#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include <algorithm>
#include <cstring>

#include "model/size_table.h"
#include "netlink/wire.h"

namespace tcsync {

namespace {

// An attribute's length is 16 bits and counts its nested attributes padded
// to 4: a spec naming more cells than its nest can carry beside what it
// holds (32748 beside a bare spec) was never a kernel's (qdisc_get_stab
// takes tsize from the data's length). It is sent as it is, and refused,
// rather than a table of up to 2^32 cells built for it.
bool table_fits(size_t nest_payload, uint32_t tsize) {
  return 2 * 4 + nest_payload + nl_align(size_t{tsize} * sizeof(uint16_t)) <= 0xFFFF;
}

}  // namespace

std::vector<uint8_t> with_stab_table(std::span<const uint8_t> attrs) {
  std::vector<uint8_t> out;
  MsgWriter w(out);
  AttrIter it(attrs);
  Attr a;
  size_t pos = 0;
  while (it.next(a)) {
    size_t whole = std::min(nl_align(a.data.size() + 4), attrs.size() - pos);
    std::span<const uint8_t> bytes = attrs.subspan(pos, whole);
    pos += whole;
    AttrTable st(a.data, TCA_STAB_MAX);
    auto* base = a.type == TCA_STAB ? st.get(TCA_STAB_BASE) : nullptr;
    auto s = base ? base->as<tc_sizespec>() : tc_sizespec{};
    // The table goes after the nest's attributes: a nest with bytes no
    // attribute covers (or of unaligned length) would put it where the
    // kernel's parser has stopped reading, so such a nest goes as it is.
    if (!base || st.get(TCA_STAB_DATA) || s.tsize == 0 || !whole_attrs(a.data) || !table_fits(a.data.size(), s.tsize)) {
      w.put_raw(bytes.data(), bytes.size());
      continue;
    }
    // The nest as reported (its header's flags, the spec, anything else),
    // byte for byte, and the table after it.
    uint16_t type;
    std::memcpy(&type, bytes.data() + 2, sizeof type);
    auto table = stab_table(s.cell_log, s.size_log, s.linklayer, s.mpu, s.tsize);
    size_t nest = w.nest_begin(type);
    w.put_raw(a.data.data(), a.data.size());
    w.attr(TCA_STAB_DATA, table.data(), table.size() * sizeof(uint16_t));
    w.nest_end(nest);
  }
  // What no attribute header covers stays too.
  if (pos < attrs.size()) w.put_raw(attrs.data() + pos, attrs.size() - pos);
  return out;
}

}  // namespace tcsync
