#include "kernel/monitor.h"

#include <linux/netlink.h>
#include <linux/pkt_cls.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "kernel/nl_socket.h"

namespace tcsync {

Monitor::~Monitor() {
  if (fd_ >= 0) close(fd_);
}

void Monitor::adopt(int fd, size_t buffer) {
  if (fd_ >= 0) close(fd_);
  fd_ = fd;
  buf_.resize(buffer);
}

Status Monitor::open(int rcvbuf) {
  fd_ = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
  if (fd_ < 0) return Status::fail("cannot open the rtnetlink monitor socket: " + errno_text(errno));
  // A burst of 100k rules added by someone else is 100k events: the buffer
  // decides whether they fit or are dropped (one resync then).
  if (setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof rcvbuf) != 0)
    (void)setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof rcvbuf);
  sockaddr_nl sa{};
  sa.nl_family = AF_NETLINK;
  if (bind(fd_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0)
    return Status::fail("cannot bind the rtnetlink monitor socket: " + errno_text(errno));
  for (int group : {RTNLGRP_TC, RTNLGRP_LINK})
    if (setsockopt(fd_, SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, &group, sizeof group) != 0)
      return Status::fail("cannot join rtnetlink group " + std::to_string(group) + ": " + errno_text(errno));
  buf_.resize(1 << 16);
  return Status::ok();
}

namespace {

// The read buffer grows to fit the largest datagram seen, up to this.
constexpr size_t kMaxBuffer = 32u << 20;

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

Status Monitor::read(std::vector<MonitorEvent>& out, size_t max) {
  for (size_t i = 0; i < max; ++i) {
    iovec iov{buf_.data(), buf_.size()};
    msghdr mh{};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    // MSG_TRUNC: n is the datagram's whole length even when it did not fit.
    ssize_t n = recvmsg(fd_, &mh, MSG_DONTWAIT | MSG_TRUNC);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return Status::ok();
      if (errno == ENOBUFS) {
        out.push_back({MonitorEvent::Type::Overrun, 0, "the event socket overflowed (events lost)", {}});
        continue;  // the queue goes on after the drop
      }
      return Status::fail("reading the rtnetlink monitor: " + errno_text(errno));
    }
    if ((mh.msg_flags & MSG_TRUNC) || static_cast<size_t>(n) > buf_.size()) {
      // The datagram is consumed, its tail lost: what it said is unknown,
      // so nothing of it is trusted (a cut message could read as another).
      out.push_back({MonitorEvent::Type::Overrun,
                     0,
                     "an event of " + std::to_string(n) + " bytes did not fit the " + std::to_string(buf_.size()) +
                         "-byte buffer (cut short)",
                     {}});
      buf_.resize(std::min<size_t>(static_cast<size_t>(n) + 4096, kMaxBuffer));
      continue;
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
  return Status::ok();
}

}  // namespace tcsync
