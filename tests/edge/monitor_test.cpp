// The watch monitor's reading (kernel/monitor.cpp) over a datagram socket
// pair standing in for the rtnetlink socket: no root, no netlink.
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstring>
#include <vector>

#include "kernel/monitor.h"

using namespace tcsync;

namespace {

// One RTM_NEWQDISC of `size` bytes (a tcmsg, then padding the parser skips).
std::vector<uint8_t> qdisc_event(uint32_t size, int ifindex) {
  std::vector<uint8_t> m(size);
  nlmsghdr h{};
  h.nlmsg_len = size;
  h.nlmsg_type = RTM_NEWQDISC;
  tcmsg t{};
  t.tcm_ifindex = ifindex;
  std::memcpy(m.data(), &h, sizeof h);
  std::memcpy(m.data() + NLMSG_HDRLEN, &t, sizeof t);
  return m;
}

}  // namespace

TEST_CASE("monitor: an event larger than the buffer is a resync, not a silent drop") {
  int sv[2];
  REQUIRE(socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) == 0);
  Monitor mon;
  mon.adopt(sv[0], 4096);
  auto small = qdisc_event(256, 3), big = qdisc_event(10000, 4), after = qdisc_event(256, 5);
  REQUIRE(write(sv[1], small.data(), small.size()) == 256);
  REQUIRE(write(sv[1], big.data(), big.size()) == 10000);
  REQUIRE(write(sv[1], after.data(), after.size()) == 256);
  std::vector<MonitorEvent> evs;
  REQUIRE(mon.read(evs));
  REQUIRE(evs.size() == 3);
  CHECK(evs[0].type == MonitorEvent::Type::Tc);
  CHECK(evs[0].ifindex == 3);
  CHECK(evs[1].type == MonitorEvent::Type::Overrun);
  CHECK(evs[1].name == "an event of 10000 bytes did not fit the 4096-byte buffer (cut short)");
  CHECK(evs[2].type == MonitorEvent::Type::Tc);
  CHECK(evs[2].ifindex == 5);
  // The buffer grew: the same event now reads whole.
  CHECK(mon.buffer_size() >= 10000);
  evs.clear();
  REQUIRE(write(sv[1], big.data(), big.size()) == 10000);
  REQUIRE(mon.read(evs));
  REQUIRE(evs.size() == 1);
  CHECK(evs[0].type == MonitorEvent::Type::Tc);
  CHECK(evs[0].ifindex == 4);
  close(sv[1]);
}
