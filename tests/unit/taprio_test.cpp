// taprio: golden option bodies, the schedule's and max_sdu's forms, a
// pending (admin) schedule read over the running one, and decode(encode(x)) == x.
//
// Golden bodies: the TCA_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc qdisc add dev v0 root handle 1: taprio ...` (strace -e sendmsg -x), as hex.
#include <linux/pkt_sched.h>

#include "kinds/registry.h"
#include "plan/differ.h"
#include "qdisc_test_util.h"

using namespace tcsync;
using namespace tcsync::test;

TEST_CASE("taprio: options are tc's bytes") {
  // taprio num_tc 3 map 2 2 1 0 2 2 2 2 2 2 2 2 2 2 2 2 queues 1@0 1@0 1@0 base-time 1000000000
  //   sched-entry S 01 300000 flags 0x1 clockid CLOCK_TAI
  check_golden("taprio",
               "num_tc: 3, map: [2, 2, 1, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2], queues: [\"1@0\", \"1@0\", \"1@0\"], "
               "base_time: 1000000000, "
               "schedule: [\"S 01 300000\"], flags: 0x1, clockid: TAI",
               "080005000b00000008000a000100000056000100030202010002020202020202020202020200010001000100000000000000000"
               "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
               "000c00030000ca9a3b00000000200002801c0001000500020000000000080003000100000008000400e0930400");
  // ... sched-entry S 01 300000 sched-entry S 03 300000 flags 0x1 txtime-delay 500000 clockid CLOCK_TAI
  check_golden("taprio",
               "num_tc: 3, map: [2, 2, 1, 0, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2], queues: [\"1@0\", \"1@0\", \"1@0\"], "
               "base_time: 1000000000, "
               "schedule: [\"S 0x1 300000\", \"S 3 300000\"], flags: 0x1, txtime_delay: 500000, clockid: TAI",
               "080005000b00000008000a000100000056000100030202010002020202020202020202020200010001000100000000000000000"
               "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
               "0008000b0020a107000c00030000ca9a3b000000003c0002801c0001000500020000000000080003000100000008000400e0930"
               "4001c0001000500020000000000080003000300000008000400e0930400");
  // taprio num_tc 2 map 0 1 queues 1@0 1@1 base-time 10 sched-entry S 1 300000 sched-entry S 3 300000
  //   cycle-time 1000000 cycle-time-extension 5 clockid CLOCK_TAI
  check_golden(
      "taprio",
      "num_tc: 2, map: [0, 1], queues: [\"1@0\", \"1@1\"], base_time: 10, schedule: [\"S 1 300000\", \"S 3 300000\"], "
      "cycle_time: 1000000, cycle_time_extension: 5, clockid: TAI",
      "080005000b000000560001000200010000000000000000000000000000000100010000000000000000000000000000000000000000000000"
      "000000000000000001000000000000000000000000000000000000000000000000000000000000000c0003000a000000000000000c000800"
      "40420f00000000000c00090005000000000000003c0002801c0001000500020000000000080003000100000008000400e09304001c000100"
      "0500020000000000080003000300000008000400e0930400");
}

TEST_CASE("taprio: schedule and max_sdu forms, and the pending schedule is the configured one") {
  Qdisc q = load_qdisc("taprio",
                       "num_tc: 2, map: [0, 1], queues: [\"1@0\", \"1@1\"], clockid: TAI, schedule: [\"H 0xff 1000\", "
                       "\"R 0 2000\"], max_sdu: [0, 300]");
  CHECK(*q.opts.words(9) == Words{1, 0xff, 1000, 2, 0, 2000});
  CHECK(q.opts.words(10)->size() == 16);
  // A max_sdu of all zeros and a map of all zeros are the defaults: absent.
  CHECK_FALSE(
      load_qdisc("taprio", "num_tc: 1, clockid: TAI, schedule: [\"S 1 1000\"], max_sdu: [0], map: [0]").opts.has(10));
  CHECK(load_errors("version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: taprio, handle: \"1:\", num_tc: 1, clockid: TAI, "
                    "schedule: [\"X 1 1000\"]}]\n")
            .find("a schedule entry is \"CMD GATEMASK INTERVAL\"") != std::string::npos);
  CHECK(load_errors("version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: taprio, handle: \"1:\", num_tc: 1, clockid: TAI, "
                    "schedule: [\"S 1 1000\"], txtime_delay: 5}]\n")
            .find("txtime_delay needs txtime-assist mode") != std::string::npos);

  // The kernel's dump: running schedule S 1 1000 at the top, S 3 2000 pending.
  std::vector<uint8_t> dump;
  MsgWriter w(dump);
  tc_mqprio_qopt mq{};
  mq.num_tc = 1;
  mq.count[0] = 1;
  w.attr(TCA_TAPRIO_ATTR_PRIOMAP, &mq, sizeof mq);
  w.attr_u32(TCA_TAPRIO_ATTR_SCHED_CLOCKID, 11);
  for (uint32_t i = 0; i < 16; ++i) {
    size_t n = w.nest_begin(TCA_TAPRIO_ATTR_TC_ENTRY);
    w.attr_u32(TCA_TAPRIO_TC_ENTRY_INDEX, i);
    w.attr_u32(TCA_TAPRIO_TC_ENTRY_MAX_SDU, 0);
    w.nest_end(n);
  }
  auto schedule = [&](uint32_t mask, uint32_t interval) {
    w.attr_u64(TCA_TAPRIO_ATTR_SCHED_BASE_TIME, 0);
    w.attr_u64(TCA_TAPRIO_ATTR_SCHED_CYCLE_TIME, interval);
    w.attr_u64(TCA_TAPRIO_ATTR_SCHED_CYCLE_TIME_EXTENSION, 0);
    size_t l = w.nest_begin(TCA_TAPRIO_ATTR_SCHED_ENTRY_LIST);
    size_t e = w.nest_begin(TCA_TAPRIO_SCHED_ENTRY);
    w.attr_u32(TCA_TAPRIO_SCHED_ENTRY_INDEX, 0);
    w.attr_u8(TCA_TAPRIO_SCHED_ENTRY_CMD, 0);
    w.attr_u32(TCA_TAPRIO_SCHED_ENTRY_GATE_MASK, mask);
    w.attr_u32(TCA_TAPRIO_SCHED_ENTRY_INTERVAL, interval);
    w.nest_end(e);
    w.nest_end(l);
  };
  schedule(1, 1000);
  size_t admin = w.nest_begin(TCA_TAPRIO_ATTR_ADMIN_SCHED);
  schedule(3, 2000);
  w.nest_end(admin);
  Options live;
  kQdiscTaprio.decode(dump, KindCtx{}, live);
  CHECK(*live.words(9) == Words{0, 3, 2000});
  CHECK_FALSE(live.has(10));  // max_sdu all 0
  bool recreate = false;
  CHECK(diff_options(kQdiscTaprio,
                     load_qdisc("taprio", "num_tc: 1, queues: [\"1@0\"], clockid: TAI, schedule: [\"S 3 2000\"]").opts,
                     live, recreate)
            .empty());
  auto d = diff_options(
      kQdiscTaprio, load_qdisc("taprio", "num_tc: 1, queues: [\"1@0\"], clockid: TAI, schedule: [\"S 3 4000\"]").opts,
      live, recreate);
  CHECK(d.size() == 1);
  CHECK_FALSE(recreate);  // a new schedule is a change in place
  diff_options(
      kQdiscTaprio,
      load_qdisc("taprio", "num_tc: 2, queues: [\"1@0\", \"1@1\"], clockid: TAI, schedule: [\"S 3 2000\"]").opts, live,
      recreate);
  CHECK(recreate);  // the mapping is not
}
