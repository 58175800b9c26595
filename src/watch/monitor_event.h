// What the rtnetlink monitor reports to watch's loop: kernel/monitor.h
// reads the events, watcher.cpp acts on them.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tcsync {

// One event of the rtnetlink monitor (kernel/monitor.h reads them). Its
// events say *which* device changed; a filter event also keeps its whole
// message (the rule, as a dump shows it) for the targeted repair
// (filter_events.h); anything else re-plans the device from a dump.
struct MonitorEvent {
  enum class Type : uint8_t { LinkNew, LinkDel, Tc, Action, Overrun };
  Type type = Type::Tc;
  uint32_t ifindex = 0;  // LinkNew/LinkDel/Tc; a tc event on a shared block has the block magic
  std::string name;      // LinkNew/LinkDel: the interface name; Overrun: what was lost
  // RTM_NEWTFILTER / RTM_DELTFILTER: the message itself (nlmsghdr on), to
  // decode with the dump's decoder; empty for every other event.
  std::vector<uint8_t> msg;
};

}  // namespace tcsync
