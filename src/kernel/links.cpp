#include "kernel/links.h"

#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

#include <cstring>

#include "kernel/nl_request.h"
#include "netlink/wire.h"

namespace tcsync {

Status list_links(NlSocket& sock, std::vector<LinkEntry>& out) {
  std::vector<uint8_t> req;
  RxBuffer rx;
  // A link added or deleted while the list is read flags the dump
  // (NLM_F_DUMP_INTR, the kernel's dev_base_seq moved): the list may miss
  // a link or hold a stale one, so it is read again.
  for (int attempt = 1;; ++attempt) {
    out.clear();
    req.clear();
    MsgWriter w(req);
    size_t off = w.begin_message(RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, 0);
    // Strict checking wants the whole ifinfomsg, zeroed: no filters.
    ifinfomsg ifi{};
    w.put_struct(ifi);
    w.end_message(off);
    DumpOutcome res;
    bool ok = run_dump(
        sock, req, rx,
        [&](std::span<const uint8_t> m) {
          nlmsghdr h;
          std::memcpy(&h, m.data(), sizeof h);
          if (h.nlmsg_type != RTM_NEWLINK || m.size() < NLMSG_LENGTH(sizeof(ifinfomsg))) return;
          ifinfomsg info;
          std::memcpy(&info, m.data() + NLMSG_HDRLEN, sizeof info);
          AttrIter it(m.subspan(NLMSG_LENGTH(sizeof(ifinfomsg))));
          Attr a;
          while (it.next(a)) {
            if (a.type != IFLA_IFNAME) continue;
            out.push_back({static_cast<uint32_t>(info.ifi_index), a.str()});
            break;
          }
        },
        res);
    if (!ok) return Status::fail("RTM_GETLINK dump: " + res.message);
    if (!res.interrupted) return Status::ok();
    if (attempt == kDumpTries)
      return Status::fail("the list of network devices changed while it was read, " + std::to_string(kDumpTries) +
                          " times in a row (NLM_F_DUMP_INTR); run again when it is quiet");
    note_dump_read_again();
  }
}

Status Links::load(NlSocket& sock) {
  std::vector<LinkEntry> fresh;
  if (Status st = list_links(sock, fresh); !st) return st;
  list_ = std::move(fresh);
  by_name_.clear();
  by_index_.clear();
  for (size_t i = 0; i < list_.size(); ++i) {
    by_name_.emplace(list_[i].name, list_[i].index);
    by_index_.emplace(list_[i].index, i);
  }
  return Status::ok();
}

std::optional<uint32_t> Links::index_of(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

std::string Links::name_of(uint32_t ifindex) const {
  auto it = by_index_.find(ifindex);
  if (it == by_index_.end()) return "ifindex" + std::to_string(ifindex);
  return list_[it->second].name;
}

}  // namespace tcsync
