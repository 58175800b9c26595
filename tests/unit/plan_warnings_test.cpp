// Plan warnings: deleting an mq/mqprio queue's qdisc leaves noop (drops).
#include <catch2/catch.hpp>

#include "plan/differ.h"
#include "plan/plan_warnings.h"
#include "test_util.h"

using namespace tcsync;
using namespace tcsync::test;

namespace {

const char* kLive = R"(version: 1
devices:
  eth0:
    qdiscs:
      - {kind: mq, handle: "1:"}
      - {kind: pfifo, handle: "10:", parent: "1:1", limit: 100}
      - {kind: fq_codel, handle: "20:", parent: "1:2"}
  eth1:
    qdiscs:
      - {kind: prio, handle: "1:"}
      - {kind: pfifo, handle: "10:", parent: "1:1", limit: 100}
)";

// What warn_plan says of the plan from `have` (its locations dropped: a
// live state has none) to `want`.
std::string plan_notes(const std::string& want, const std::string& have) {
  State w = load_ok(want), h = load_ok(have);
  for (auto& d : h.devices)
    for (auto& q : d.qdiscs) q.loc = {};
  Plan p = make_plan(w, h);
  Diagnostics d;
  warn_plan(p, w, h, d);
  std::string out;
  for (auto& x : d.all()) out += format_diagnostic(x);
  return out;
}

std::string warnings(const std::string& want) {
  return plan_notes(want, kLive);
}

}  // namespace

TEST_CASE("plan warnings: deleting an mq queue's qdisc warns at the mq's line") {
  CHECK(warnings(R"(version: 1
devices:
  eth0:
    qdiscs:
      - {kind: mq, handle: "1:"}
      - {kind: fq_codel, handle: "20:", parent: "1:2"}
)") == "t.yaml:5:9: warning: eth0: deleting qdisc pfifo 10: parent 1:1 leaves transmit queue 1:1 of mq 1: without a "
       "qdisc (the kernel "
       "puts noop there: every packet sent on that queue is dropped); declare a qdisc with parent \"1:1\" to keep one\n"
       "        - {kind: mq, handle: \"1:\"}\n"
       "          ^\n");
}

TEST_CASE("plan warnings: none when the queue gets a qdisc again, the mq goes, or the parent is not mq") {
  // re-created with another kind at the same queue
  CHECK(warnings(R"(version: 1
devices:
  eth0:
    qdiscs:
      - {kind: mq, handle: "1:"}
      - {kind: fq_codel, handle: "10:", parent: "1:1"}
      - {kind: fq_codel, handle: "20:", parent: "1:2"}
)")
            .empty());
  // the mq itself is replaced: its queues' qdiscs go with it
  CHECK(warnings(R"(version: 1
devices:
  eth0:
    qdiscs:
      - {kind: fq_codel, handle: "1:"}
)")
            .empty());
  // a prio band's qdisc falls back to the band's own fifo: no warning
  CHECK(warnings(R"(version: 1
devices:
  eth1:
    qdiscs:
      - {kind: prio, handle: "1:"}
)")
            .empty());
}

TEST_CASE("plan warnings: one warning per bare queue, and a new mq handle takes all") {
  CHECK(warnings(R"(version: 1
devices:
  eth0:
    qdiscs:
      - {kind: mq, handle: "2:"}
)")
            .empty());  // a new mq replaces the old one and everything below it
  std::string w = warnings(R"(version: 1
devices:
  eth0:
    qdiscs:
      - {kind: mq, handle: "1:"}
)");
  CHECK(w.find("eth0: deleting qdisc pfifo 10: parent 1:1") != std::string::npos);
  CHECK(w.find("eth0: deleting qdisc fq_codel 20: parent 1:2") != std::string::npos);
}

namespace {
std::string htb_with(int classes) {
  std::string y = "version: 1\ndevices:\n  eth2:\n    qdiscs:\n      - {kind: htb, handle: \"1:\"}\n    classes:\n";
  for (int i = 1; i <= classes; ++i) y += "      - {classid: \"1:" + std::to_string(i) + "\", rate: 1mbit}\n";
  return y;
}
}  // namespace

TEST_CASE("plan notes: 4096 new classes on one qdisc name the kernel's walk and the layout that divides it") {
  const std::string empty = "version: 1\ndevices:\n  eth2: {}\n";
  std::string out = plan_notes(htb_with(4096), empty);
  CHECK(out.find("t.yaml:5:9: note: eth2: htb 1: gets 4096 new classes: after each one the kernel walks every class of "
                 "the qdisc (tc_bind_tclass)") == 0);
  CHECK(out.find("several qdiscs (mq, one per transmit queue)") != std::string::npos);
  // One fewer, or the classes there already (a change of one): no note.
  CHECK(plan_notes(htb_with(4095), empty).empty());
  std::string changed = htb_with(4096);
  changed.replace(changed.find("rate: 1mbit"), 11, "rate: 2mbit");
  CHECK(plan_notes(changed, htb_with(4096)).empty());
}
