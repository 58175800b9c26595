#include "codec/stab.h"

#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "model/size_table.h"
#include "netlink/wire.h"

namespace tcsync {

std::vector<uint8_t> with_stab_table(std::span<const uint8_t> attrs) {
  std::vector<uint8_t> out;
  MsgWriter w(out);
  AttrIter it(attrs);
  Attr a;
  size_t pos = 0;
  while (it.next(a)) {
    size_t whole = nl_align(a.data.size() + 4);
    std::span<const uint8_t> bytes = attrs.subspan(pos, std::min(whole, attrs.size() - pos));
    pos += whole;
    AttrTable st(a.data, TCA_STAB_MAX);
    auto* base = a.type == TCA_STAB ? st.get(TCA_STAB_BASE) : nullptr;
    if (!base || st.get(TCA_STAB_DATA) || base->as<tc_sizespec>().tsize == 0) {
      w.put_raw(bytes.data(), bytes.size());
      continue;
    }
    auto s = base->as<tc_sizespec>();
    auto table = stab_table(s.cell_log, s.size_log, s.linklayer, s.mpu, s.tsize);
    size_t nest = w.nest_begin(TCA_STAB);
    w.attr(TCA_STAB_BASE, base->data.data(), base->data.size());
    w.attr(TCA_STAB_DATA, table.data(), table.size() * sizeof(uint16_t));
    w.nest_end(nest);
  }
  return out;
}

}  // namespace tcsync
