#include "kernel/monitor.h"

#include <linux/netlink.h>
#include <linux/pkt_cls.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "kernel/nl_socket.h"

namespace tcsync {

Monitor::~Monitor() {
  if (fd_ >= 0) close(fd_);
}

bool Monitor::open(int rcvbuf, std::string& err) {
  fd_ = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
  if (fd_ < 0) {
    err = "cannot open the rtnetlink monitor socket: " + errno_text(errno);
    return false;
  }
  // A burst of 100k rules added by someone else is 100k events: the buffer
  // decides whether they fit or are dropped (one resync then).
  if (setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf) != 0)
    (void)setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  sockaddr_nl sa{};
  sa.nl_family = AF_NETLINK;
  if (bind(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    err = "cannot bind the rtnetlink monitor socket: " + errno_text(errno);
    return false;
  }
  for (int group : {RTNLGRP_TC, RTNLGRP_LINK})
    if (setsockopt(fd_, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof group) != 0) {
      err = "cannot join rtnetlink group " + std::to_string(group) + ": " + errno_text(errno);
      return false;
    }
  buf_.resize(1 << 16);
  return true;
}

namespace {

std::string link_name(const nlmsghdr* nh) {
  auto* ifi = static_cast<const ifinfomsg*>(NLMSG_DATA(nh));
  int len = static_cast<int>(nh->nlmsg_len) - static_cast<int>(NLMSG_LENGTH(sizeof *ifi));
  for (auto* a = IFLA_RTA(ifi); RTA_OK(a, len); a = RTA_NEXT(a, len))
    if (a->rta_type == IFLA_IFNAME) {
      auto* s = static_cast<const char*>(RTA_DATA(a));
      return std::string(s, strnlen(s, RTA_PAYLOAD(a)));
    }
  return {};
}

}  // namespace

bool Monitor::read(std::vector<MonitorEvent>& out, std::string& err, size_t max) {
  for (size_t i = 0; i < max; ++i) {
    ssize_t n = recv(fd_, buf_.data(), buf_.size(), MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return true;
      if (errno == ENOBUFS) {
        out.push_back({MonitorEvent::Type::Overrun, 0, {}, {}});
        continue;  // the queue goes on after the drop
      }
      err = "reading the rtnetlink monitor: " + errno_text(errno);
      return false;
    }
    int len = static_cast<int>(n);
    for (auto* nh = reinterpret_cast<const nlmsghdr*>(buf_.data()); NLMSG_OK(nh, len); nh = NLMSG_NEXT(nh, len)) {
      switch (nh->nlmsg_type) {
        case RTM_NEWLINK:
        case RTM_DELLINK:
          if (nh->nlmsg_len >= NLMSG_LENGTH(sizeof(ifinfomsg))) {
            auto* ifi = static_cast<const ifinfomsg*>(NLMSG_DATA(nh));
            out.push_back({nh->nlmsg_type == RTM_NEWLINK ? MonitorEvent::Type::LinkNew : MonitorEvent::Type::LinkDel,
                           static_cast<uint32_t>(ifi->ifi_index),
                           link_name(nh),
                           {}});
          }
          break;
        case RTM_NEWQDISC:
        case RTM_DELQDISC:
        case RTM_NEWTCLASS:
        case RTM_DELTCLASS:
        case RTM_NEWTFILTER:
        case RTM_DELTFILTER:
        case RTM_NEWCHAIN:
        case RTM_DELCHAIN:
          if (nh->nlmsg_len >= NLMSG_LENGTH(sizeof(tcmsg))) {
            out.push_back({MonitorEvent::Type::Tc,
                           static_cast<uint32_t>(static_cast<const tcmsg*>(NLMSG_DATA(nh))->tcm_ifindex),
                           {},
                           {}});
            if (nh->nlmsg_type == RTM_NEWTFILTER || nh->nlmsg_type == RTM_DELTFILTER) {
              auto* p = reinterpret_cast<const uint8_t*>(nh);
              out.back().msg.assign(p, p + nh->nlmsg_len);
            }
          }
          break;
        case RTM_NEWACTION:
        case RTM_DELACTION:
          out.push_back({MonitorEvent::Type::Action, 0, {}, {}});
          break;
        default:
          break;
      }
    }
  }
  return true;
}

}  // namespace tcsync
