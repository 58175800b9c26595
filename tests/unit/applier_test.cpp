// The applier's control flow against a scripted fake kernel (pure logic:
// the real kernel paths are in tests/kernel/test_faults.sh).
#include <catch2/catch.hpp>

#include <cstring>
#include <functional>

#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include "apply/applier.h"
#include "apply/verify_by_dump.h"
#include "plan/plan_print.h"
#include "test_util.h"

using namespace tcsync;
using tcsync::test::load_ok;

namespace {

// Answers dumps from a script of states and fails chosen requests.
struct FakeKernel : Kernel {
  test::FakeLinks names;
  std::vector<State> dumps;  // returned in order
  size_t dumped = 0;
  std::vector<size_t> sends;  // messages per send call
  size_t sent = 0;            // messages so far
  size_t fail_at = SIZE_MAX;  // the n-th message overall is refused
  // Echoes: each RTM_NEW* request comes back as its own bytes (a request
  // decodes as the object it asks for), through `tamper` first.
  bool echo = false;
  size_t echoed = 0;  // messages echoed
  std::function<void(std::vector<uint8_t>&)> tamper;
  const LinkNames& links() const override { return names; }
  std::vector<std::vector<std::string>> dumped_devices;  // what each dump asked for
  bool dump(const std::vector<std::string>& devices, State& live, Diagnostics&) override {
    dumped_devices.push_back(devices);
    REQUIRE(dumped < dumps.size());
    live = dumps[dumped++];
    return true;
  }
  std::vector<AckResult> send(MessageBatch& b, const SendOptions& o) override {
    sends.push_back(b.size());
    std::vector<AckResult> r(b.size());
    for (size_t i = 0; echo && o.on_echo && i < b.size(); ++i) {
      size_t from = b.offsets[i], to = i + 1 < b.size() ? b.offsets[i + 1] : b.buf.size();
      std::vector<uint8_t> m(b.buf.begin() + static_cast<long>(from), b.buf.begin() + static_cast<long>(to));
      uint16_t type;
      std::memcpy(&type, m.data() + 4, 2);
      if (type != RTM_NEWQDISC && type != RTM_NEWTCLASS && type != RTM_NEWTFILTER) continue;
      if (i < o.unechoed.size() && o.unechoed[i]) continue;  // sent without NLM_F_ECHO
      ++echoed;
      if (tamper) tamper(m);
      o.on_echo(i, m);
    }
    for (auto& x : r) {
      x.status = sent++ == fail_at ? AckResult::Status::Failed : AckResult::Status::Ok;
      if (x.status == AckResult::Status::Failed) x.error = 22, x.ext_msg = "Invalid argument for test";
    }
    return r;
  }
};

const char* kEmpty = "version: 1\ndevices:\n  v0: {}\n";
const char* kWant = R"(version: 1
devices:
  v0:
    qdiscs: [{kind: htb, handle: "1:"}]
    classes:
      - {classid: "1:10", rate: 10mbit}
      - {classid: "1:20", rate: 20mbit}
      - {classid: "1:30", rate: 30mbit}
)";
const char* kPartial = R"(version: 1
devices:
  v0:
    qdiscs: [{kind: htb, handle: "1:"}]
    classes:
      - {classid: "1:10", rate: 10mbit}
)";

std::string text(const Plan& p) {
  Plan q = p;
  for (auto& s : q.steps) s.loc = {};
  return plan_text(q, PrintOptions{});
}

}  // namespace

TEST_CASE("without echoes, a clean apply is verified by a fresh dump") {
  State want = load_ok(kWant), before = load_ok(kEmpty);
  Plan plan = make_plan(want, before);
  REQUIRE(plan.steps.size() == 4);
  FakeKernel k;
  k.dumps = {load_ok(kWant)};
  Diagnostics d;
  ApplyReport r = apply_plan(k, want, before, plan, ApplyOptions{}, d);
  CHECK(r.succeeded());
  CHECK(r.ok == 4);
  CHECK(r.verified);
  CHECK(k.sends == std::vector<size_t>{4});
  CHECK_FALSE(d.has_errors());
}

TEST_CASE("a clean apply is verified by the kernel's echoes, with no dump") {
  State want = load_ok(kWant), before = load_ok(kEmpty);
  Plan plan = make_plan(want, before);
  FakeKernel k;
  k.echo = true;  // and no dump scripted: one would fail the test
  Diagnostics d;
  ApplyReport r = apply_plan(k, want, before, plan, ApplyOptions{}, d);
  CHECK(r.succeeded());
  CHECK(r.verified);
  CHECK(r.echo_checked == 4);
  CHECK(r.echo_missing == 0);
  CHECK_FALSE(r.redumped);
  CHECK(k.dumped == 0);
}

TEST_CASE("an echo that differs from the step is reported as what remains") {
  State want = load_ok(kWant), before = load_ok(kEmpty);
  Plan plan = make_plan(want, before);
  FakeKernel k;
  k.echo = true;
  // The kernel "stores" class 1:30 with another rate: the echo says so.
  k.tamper = [](std::vector<uint8_t>& m) {
    tcmsg t;
    std::memcpy(&t, m.data() + sizeof(nlmsghdr), sizeof t);
    if (t.tcm_handle != 0x10030) return;
    // TCA_HTB_PARMS' tc_htb_opt.rate.rate: 30mbit (3750000 B/s) -> 40mbit
    // (its burst, kept in time, then reads back as more bytes too).
    uint32_t from = 3750000, to = 5000000;
    for (size_t i = sizeof(nlmsghdr) + sizeof t; i + 4 <= m.size(); i += 4)
      if (std::memcmp(m.data() + i, &from, 4) == 0) {
        std::memcpy(m.data() + i, &to, 4);
        break;
      }
  };
  Diagnostics d;
  ApplyReport r = apply_plan(k, want, before, plan, ApplyOptions{}, d);
  CHECK(r.succeeded());
  CHECK_FALSE(r.verified);
  CHECK_FALSE(r.redumped);
  CHECK(text(r.remaining) == "~ v0: class htb 1:30 parent 1:  (rate 40mbit -> 30mbit, burst 2130b -> 1598b)\n");
}

TEST_CASE("a step without an echo makes verify read the devices again") {
  State want = load_ok(kWant), before = load_ok(kEmpty);
  Plan plan = make_plan(want, before);
  FakeKernel k;
  k.echo = true;
  k.tamper = [](std::vector<uint8_t>& m) {  // the qdisc's echo is lost
    if (m[4] == RTM_NEWQDISC) m.resize(sizeof(nlmsghdr) - 4);
  };
  k.dumps = {load_ok(kWant)};
  Diagnostics d;
  ApplyReport r = apply_plan(k, want, before, plan, ApplyOptions{}, d);
  CHECK(r.verified);
  CHECK(r.echo_missing == 1);
  CHECK(r.redumped);
  CHECK(k.dumped == 1);
}

TEST_CASE("only the devices of steps without an echo are read again") {
  const char* two = R"(version: 1
devices:
  v0:
    qdiscs: [{kind: htb, handle: "1:"}]
    classes: [{classid: "1:10", rate: 10mbit}]
  v1:
    qdiscs: [{kind: htb, handle: "1:"}]
    classes: [{classid: "1:10", rate: 10mbit}]
)";
  const char* empty = "version: 1\ndevices:\n  v0: {}\n  v1: {}\n";
  State want = load_ok(two), before = load_ok(empty);
  Plan plan = make_plan(want, before);
  REQUIRE(plan.steps.size() == 4);
  FakeKernel k;
  k.echo = true;
  k.tamper = [](std::vector<uint8_t>& m) {  // v1's qdisc echo is lost
    tcmsg t;
    std::memcpy(&t, m.data() + sizeof(nlmsghdr), sizeof t);
    if (m[4] == RTM_NEWQDISC && t.tcm_ifindex == 2) m.resize(sizeof(nlmsghdr) - 4);
  };
  // The dump answers with v0 drifted (its class gone) and v1 as planned:
  // v0 was proven by its echoes, so only v1 is read and compared.
  k.dumps = {load_ok(R"(version: 1
devices:
  v0:
    qdiscs: [{kind: htb, handle: "1:"}]
  v1:
    qdiscs: [{kind: htb, handle: "1:"}]
    classes: [{classid: "1:10", rate: 10mbit}]
)")};
  Diagnostics d;
  ApplyReport r = apply_plan(k, want, before, plan, ApplyOptions{}, d);
  CHECK(r.echo_checked == 3);
  CHECK(r.echo_missing == 1);
  REQUIRE(k.dumped_devices.size() == 1);
  CHECK(k.dumped_devices[0] == std::vector<std::string>{"v1"});
  CHECK(r.verified);
}

TEST_CASE("a verify that finds drift says what remains") {
  State want = load_ok(kWant), before = load_ok(kEmpty);
  Plan plan = make_plan(want, before);
  FakeKernel k;
  k.dumps = {load_ok(kPartial)};  // someone removed two classes meanwhile
  Diagnostics d;
  ApplyReport r = apply_plan(k, want, before, plan, ApplyOptions{}, d);
  CHECK(r.succeeded());
  CHECK_FALSE(r.verified);
  CHECK(text(r.remaining) == "+ v0: class htb 1:20 parent 1:\n+ v0: class htb 1:30 parent 1:\n");
}

TEST_CASE("a refused step stops at the chunk, then rolls back from what the kernel holds") {
  State want = load_ok(kWant), before = load_ok(kEmpty);
  Plan plan = make_plan(want, before);
  FakeKernel k;
  k.fail_at = 2;  // the class 1:20
  // After the failure the kernel holds the qdisc and 1:10; after the
  // rollback it is empty again.
  k.dumps = {load_ok(kPartial), load_ok(kEmpty)};
  ApplyOptions o;
  o.chunk = 2;
  Diagnostics d;
  ApplyReport r = apply_plan(k, want, before, plan, o, d);
  CHECK_FALSE(r.succeeded());
  CHECK(r.ok == 3);  // the kernel goes on after an error within a send
  CHECK(r.failed == 1);
  CHECK(r.unsent == 0);
  CHECK(r.rolled_back);
  CHECK(r.rollback_ok);
  CHECK(text(r.rollback_plan) == "- v0: qdisc htb 1: root  (not in the file)\n");
  // Two chunks of the plan, then one for the rollback.
  CHECK(k.sends == std::vector<size_t>{2, 2, 1});
  REQUIRE(d.all().size() == 1);
  CHECK(format_diagnostic(d.all()[0])
            .rfind("t.yaml:7:9: error: kernel rejected add of v0 class htb 1:20 parent 1:: Invalid argument for test "
                   "(Invalid argument)",
                   0) == 0);
}

TEST_CASE("with on_error=stop nothing is rolled back") {
  State want = load_ok(kWant), before = load_ok(kEmpty);
  Plan plan = make_plan(want, before);
  FakeKernel k;
  k.fail_at = 1;
  ApplyOptions o;
  o.on_error = OnError::Stop;
  o.chunk = 1;
  Diagnostics d;
  ApplyReport r = apply_plan(k, want, before, plan, o, d);
  CHECK(r.ok == 1);
  CHECK(r.failed == 1);
  CHECK(r.unsent == 2);
  CHECK_FALSE(r.rolled_back);
  CHECK(k.dumped == 0);
}

TEST_CASE("an interrupt stops before the next chunk and rolls back") {
  State want = load_ok(kWant), before = load_ok(kEmpty);
  Plan plan = make_plan(want, before);
  FakeKernel k;
  k.dumps = {load_ok(kEmpty), load_ok(kEmpty)};
  std::atomic<int> sig{15};
  ApplyOptions o;
  o.interrupt = &sig;
  Diagnostics d;
  ApplyReport r = apply_plan(k, want, before, plan, o, d);
  CHECK(r.interrupted_by == 15);
  CHECK(r.ok == 0);
  CHECK(k.sends.empty());
  CHECK(r.rolled_back);
  CHECK(r.rollback_ok);
  CHECK(r.rollback_plan.empty());
}

TEST_CASE("a step that cannot be encoded sends nothing at all") {
  State want = load_ok(R"(version: 1
devices:
  v0:
    qdiscs: [{kind: clsact}]
  v9:
    qdiscs: [{kind: clsact}]
)");
  State before = load_ok("version: 1\ndevices:\n  v0: {}\n  v9: {}\n");
  Plan plan = make_plan(want, before);
  FakeKernel k;
  Diagnostics d;
  ApplyReport r = apply_plan(k, want, before, plan, ApplyOptions{}, d);
  CHECK(k.sends.empty());
  CHECK(r.unsent == 2);
  REQUIRE(d.all().size() == 1);
  CHECK(d.all()[0].message == "device 'v9' does not exist");
}

TEST_CASE("a rollback does not send the kernel's numbers of actions only one rule used") {
  // Before: rule 10 has gact drop, the kernel's action 1; rules 20 and 30
  // share action 7. The apply (turning rule 10's verdict to pass) failed
  // after the kernel gave the new pass action the freed number 1.
  auto state = [](const char* verdict10, int index10, int index10b) {
    return load_ok(std::string(R"(version: 1
devices:
  v0:
    qdiscs: [{kind: clsact}]
    filters:
      - {parent: ingress, pref: 10, protocol: ip, handle: 1, flower: {ip_proto: udp}, actions: [{gact: {control: )") +
                   verdict10 + "}, index: " + std::to_string(index10) + R"(}]}
      - {parent: ingress, pref: 20, protocol: ip, handle: 1, flower: {ip_proto: tcp}, actions: [{gact: {control: drop}, index: 7}]}
      - {parent: ingress, pref: 30, protocol: ip, handle: 1, flower: {ip_proto: icmp}, actions: [{gact: {control: drop}, index: 7}]}
      - {parent: ingress, pref: 40, protocol: ip, handle: 1, flower: {ip_proto: sctp}, actions: [{gact: {control: drop}, index: )" +
                   std::to_string(index10b) + "}]}\n");
  };
  State before = state("drop", 1, 2);
  State want = state("pass", 1, 2);
  for (auto& f : want.devices[0].filters) f.actions[0].index.reset();
  want.devices[0].filters[3].actions[0].opts = want.devices[0].filters[0].actions[0].opts;  // pass too
  Plan plan = make_plan(want, before);
  REQUIRE(plan.steps.size() == 2);
  FakeKernel k;
  k.fail_at = 1;
  // After the failure: rule 10 holds a pass action that got number 1 back
  // (the old one was freed first); after the rollback, drop again as 3.
  k.dumps = {state("pass", 1, 2), state("drop", 3, 2)};
  Diagnostics d;
  ApplyReport r = apply_plan(k, want, before, plan, ApplyOptions{}, d);
  CHECK(r.rolled_back);
  REQUIRE(r.rollback_plan.steps.size() == 1);
  const Filter* f = r.rollback_plan.steps[0].filter;
  REQUIRE(f);
  CHECK(f->key.pref == 10);
  CHECK_FALSE(f->actions[0].index.has_value());  // not "index 1": that is the new pass action
  CHECK(r.rollback_ok);                          // drop as action 3 is the state before, the kernel's numbering aside
}

namespace {
// A clsact on v0 and N rules of one kind, each its own pref (matchall), or
// one u32 list.
std::string rules(const char* kind, int n, const char* dev = "v0") {
  std::string y = std::string("version: 1\ndevices:\n  ") + dev + ":\n    qdiscs: [{kind: clsact}]\n    filters:\n";
  for (int i = 1; i <= n; ++i) {
    if (std::string(kind) == "matchall")
      y += "      - {parent: ingress, pref: " + std::to_string(i) + ", classid: \"1:" + std::to_string(i) +
           "\", matchall: {}}\n";
    else
      y += "      - {parent: ingress, pref: 10, protocol: ip, u32: {match: [{ip: {src: 10.0." +
           std::to_string(i / 256) + "." + std::to_string(i % 256) + "/32}}]}}\n";
  }
  return y;
}
}  // namespace

TEST_CASE("a device whose requests are most of it is verified by one dump, not by echoes") {
  State want = load_ok(rules("matchall", 300)), before = load_ok(kEmpty);
  Plan plan = make_plan(want, before);
  REQUIRE(plan.steps.size() == 301);
  CHECK(devices_verified_by_dump(plan, want, before) == std::set<std::string>{"v0"});
  FakeKernel k;
  k.echo = true;
  k.dumps = {load_ok(rules("matchall", 300))};
  Diagnostics d;
  ApplyReport r = apply_plan(k, want, before, plan, ApplyOptions{}, d);
  CHECK(k.echoed == 0);  // none asked for
  CHECK(r.dump_checked == 301);
  CHECK(r.echo_checked == 0);
  CHECK(r.echo_missing == 0);
  REQUIRE(k.dumped_devices.size() == 1);
  CHECK(k.dumped_devices[0] == std::vector<std::string>{"v0"});
  CHECK(r.verified);
}

TEST_CASE("what the dump shows unlike the file is reported as what remains") {
  State want = load_ok(rules("matchall", 300)), before = load_ok(kEmpty);
  Plan plan = make_plan(want, before);
  FakeKernel k;
  k.echo = true;
  k.dumps = {load_ok(rules("matchall", 299))};  // the kernel "lost" pref 300
  Diagnostics d;
  ApplyReport r = apply_plan(k, want, before, plan, ApplyOptions{}, d);
  CHECK(r.succeeded());
  CHECK_FALSE(r.verified);
  REQUIRE(r.remaining.steps.size() == 1);
  CHECK(text(r.remaining).find("+ v0: filter matchall ingress pref 300") == 0);
}

TEST_CASE("a u32 list, or a small change, is verified by its echoes") {
  // u32's dump walks its list from the start for every skb: echoes stay.
  State want = load_ok(rules("u32", 300)), before = load_ok(kEmpty);
  Plan plan = make_plan(want, before);
  CHECK(devices_verified_by_dump(plan, want, before).empty());
  // 256 of 600 matchall rules changed: under half the device.
  State big = load_ok(rules("matchall", 600));
  State changed = big;
  for (size_t i = 0; i < 256; ++i) changed.devices[0].filters[i].key.pref += 1000;
  Plan small = make_plan(changed, big);
  CHECK(devices_verified_by_dump(small, changed, big).empty());
  // Fewer than kDumpVerifyMinSteps requests: echoes, whatever the share.
  State few = load_ok(rules("matchall", 100));
  CHECK(devices_verified_by_dump(make_plan(few, before), few, before).empty());
}
