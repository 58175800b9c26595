// The ct (conntrack) action: tc's bytes, what the kernel dumps, errors and
// import of tc's words.
//
// Golden bodies: the TCA_ACT_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc actions add action ct WORDS` in the kernel lab (strace -e sendmsg -x).
// tc writes zone, mark, label and nat attributes in the order of its words,
// then ACTION and PARMS; the words here follow tc's usage line (commit force
// zone mark label nat), the order tcsync encodes in.
#include <catch2/catch.hpp>

#include <linux/tc_act/tc_ct.h>

#include "action_test_util.h"
#include "kinds/registry.h"

using namespace tcsync;
using namespace tcsync::test;

using namespace tcsync::test::actions;

TEST_CASE("ct: TCA_ACT_OPTIONS bodies are tc's bytes") {
  struct Case {
    const char* yaml;
    const char* tc;
    const char* bytes;
  } cases[] = {
      {R"({ct: {}})", "ct", "0600030000000000180001000000000000000000030000000000000000000000"},
      {R"({ct: {zone: 5}})", "ct zone 5",
       "06000400050000000600030000000000180001000000000000000000030000000000000000000000"},
      {R"({ct: {commit: true}})", "ct commit", "0600030001000000180001000000000000000000030000000000000000000000"},
      {R"({ct: {commit: true, force: true, zone: 2}})", "ct commit force zone 2",
       "06000400020000000600030003000000180001000000000000000000030000000000000000000000"},
      {R"({ct: {clear: true}})", "ct clear", "0600030004000000180001000000000000000000030000000000000000000000"},
      // mark: tc sends the mask always, all ones without /MASK.
      {R"({ct: {commit: true, mark: 5, control: pipe}})", "ct commit mark 5 pipe",
       "080005000500000008000600ffffffff0600030001000000180001000000000000000000030000000000000000000000"},
      {R"({ct: {commit: true, mark: 0x10/0xff}})", "ct commit mark 0x10/0xff",
       "080005001000000008000600ff0000000600030001000000180001000000000000000000030000000000000000000000"},
      {R"({ct: {commit: true, label: 0102030405060708090a0b0c0d0e0f10/ffff0000000000000000000000000000}})",
       "ct commit label 0102030405060708090a0b0c0d0e0f10/ffff0000000000000000000000000000",
       "140007000102030405060708090a0b0c0d0e0f1014000800ffff00000000000000000000000000000600030001000000180001000000000"
       "000000000030000000000000000000000"},
      // nat: MAX = MIN without a range, for addresses and ports alike.
      {R"({ct: {commit: true, nat: src, nat_addr: 10.0.0.1-10.0.0.5, nat_port: 1000-2000}})",
       "ct commit nat src addr 10.0.0.1-10.0.0.5 port 1000-2000",
       "080009000a00000108000a000a00000506000d0003e8000006000e0007d0000006000300190000001800010000000000000000000300000"
       "00000000000000000"},
      {R"({ct: {commit: true, nat: src, nat_addr: 10.0.0.1, nat_port: 1000}})",
       "ct commit nat src addr 10.0.0.1 port 1000",
       "080009000a00000108000a000a00000106000d0003e8000006000e0003e8000006000300190000001800010000000000000000000300000"
       "00000000000000000"},
      {R"({ct: {commit: true, nat: dst, nat_addr: 10.0.0.7, nat_port: 8080}})",
       "ct commit nat dst addr 10.0.0.7 port 8080",
       "080009000a00000708000a000a00000706000d001f90000006000e001f90000006000300290000001800010000000000000000000300000"
       "00000000000000000"},
      {R"({ct: {commit: true, nat: dst, nat_addr: '2001:db8::1-2001:db8::9', nat_port: 80}})",
       "ct commit nat dst addr 2001:db8::1-2001:db8::9 port 80",
       "14000b0020010db800000000000000000000000114000c0020010db800000000000000000000000906000d000050000006000e000050000"
       "00600030029000000180001000000000000000000030000000000000000000000"},
      {R"({ct: {zone: 4, nat: restore, control: drop}})", "ct zone 4 nat drop",
       "06000400040000000600030008000000180001000000000000000000020000000000000000000000"},
      {R"({ct: {zone: 7, control: continue}})", "ct zone 7 continue",
       "06000400070000000600030000000000180001000000000000000000ffffffff0000000000000000"},
      {R"({ct: {control: goto chain 3}})", "ct goto chain 3",
       "0600030000000000180001000000000000000000030000200000000000000000"},
  };
  for (auto& c : cases) {
    INFO(c.tc);
    check_golden(std::string("[") + c.yaml + "]", c.bytes);
  }
}

TEST_CASE("ct: what the kernel dumps besides tc's attributes reads as the file says") {
  // Linux 6.1 dumps ZONE 0 for a plain lookup, and zero-fills a short label
  // (tc sends `label 01` as one byte with a 16-byte all-ones mask).
  std::vector<uint8_t> buf;
  {
    MsgWriter w(buf);
    tc_ct p{};
    p.action = 3;
    w.attr(TCA_CT_PARMS, &p, sizeof p);
    w.attr_u16(TCA_CT_ACTION, TCA_CT_ACT_COMMIT);
    w.attr_u16(TCA_CT_ZONE, 0);
    uint8_t label[16] = {1}, mask[16];
    std::fill(std::begin(mask), std::end(mask), 0xFF);
    w.attr(TCA_CT_LABELS, label, 1);  // as tc sends it; the kernel dumps 16 bytes
    w.attr(TCA_CT_LABELS_MASK, mask, 16);
  }
  Options o;
  kActionCt.decode(buf, KindCtx{}, o);
  CHECK(o == first_opts("[{ct: {commit: true, label: '01'}}]"));

  // Attributes too short for their type are skipped, not read past.
  std::vector<uint8_t> junk;
  {
    MsgWriter w(junk);
    w.attr_u16(TCA_CT_ACTION, TCA_CT_ACT_NAT | TCA_CT_ACT_NAT_SRC | TCA_CT_ACT_COMMIT);
    w.attr(TCA_CT_MARK, "\x01", 1);
    w.attr(TCA_CT_NAT_IPV6_MIN, "\x20\x01", 2);
    w.attr(TCA_CT_NAT_PORT_MIN, "\x01", 1);
  }
  Options j;
  kActionCt.decode(junk, KindCtx{}, j);
  auto nat = load_actions("[{ct: {commit: true, nat: src, nat_addr: 10.0.0.1}}]");
  CHECK(j.has(0));                 // commit
  CHECK(j.num(6) == uint64_t{1});  // nat: src
  CHECK_FALSE(j.has(4));           // mark
  CHECK_FALSE(j.has(7));           // nat_addr
  CHECK_FALSE(j.has(8));           // nat_port
}

TEST_CASE("ct: dump prints tc's words back") {
  auto a = load_actions(
      "[{ct: {commit: true, zone: 0, mark: 0x10/0xff, nat: dst, nat_addr: '2001:db8::1-2001:db8::9', nat_port: 80-80, "
      "control: pipe}}]");
  const Action& act = a.at(0);
  CHECK_FALSE(act.opts.has(3));  // zone 0 is the default
  CHECK_FALSE(act.opts.has(9));  // pipe too
  CHECK(describe_field(act.ops->fields[4], *act.opts.get(4)) == "0x10/0xff");
  CHECK(describe_field(act.ops->fields[7], *act.opts.get(7)) == "2001:db8::1-2001:db8::9");
  CHECK(describe_field(act.ops->fields[8], *act.opts.get(8)) == "80");
}

TEST_CASE("ct: errors") {
  CHECK(error_of("[{ct: {clear: true, zone: 3}}]") == "ct 'clear' stands alone: 'zone' cannot go with it");
  CHECK(error_of("[{ct: {force: true}}]") == "ct 'force' needs 'commit'");
  CHECK(error_of("[{ct: {commit: true, nat: restore}}]") ==
        "ct 'commit' with 'nat' needs nat src or dst (restore is without commit)");
  CHECK(error_of("[{ct: {nat: src, nat_addr: 10.0.0.1}}]") == "ct nat src or dst needs 'commit'");
  CHECK(error_of("[{ct: {commit: true, nat: dst}}]") == "ct nat src or dst needs 'nat_addr'");
  CHECK(error_of("[{ct: {nat_addr: 10.0.0.1}}]") == "ct 'nat_addr' needs nat src or dst");
  CHECK(error_of("[{ct: {commit: true, nat: src, nat_addr: 10.0.0.1-2001:db8::1}}]")
            .starts_with("expected an address or range"));
  CHECK(error_of("[{ct: {commit: true, nat: src, nat_addr: 10.0.0.1, nat_port: 70000}}]")
            .starts_with("expected a port or range"));
  CHECK(error_of("[{ct: {commit: true, mark: 1/0}}]") == "ct 'mark' with mask 0 sets nothing");
  CHECK(error_of("[{ct: {commit: true, label: 0x1}}]").starts_with("expected a conntrack label"));
  CHECK(error_of("[{ct: {zone: 65536}}]").find("65535") != std::string::npos);
}

TEST_CASE("import: ct words") {
  std::string diags;
  std::string yaml = imported(R"(qdisc add dev v0 clsact
filter add dev v0 ingress prio 1 protocol ip flower action ct zone 2 pipe action ct commit force zone 2 mark 0x10/0xff label 01/ff nat src addr 10.0.0.1-10.0.0.5 port 1000-2000 action ct clear
filter add dev v0 ingress prio 2 protocol ip flower action ct nat goto chain 1 action ct commit nat dst addr 2001:db8::1 drop
)",
                              diags);
  INFO(diags);
  REQUIRE_FALSE(yaml.empty());
  CHECK(yaml.find("actions: [{ct: {zone: 2, control: pipe}, percpu_stats: true}, {ct: {commit: true, force: true, "
                  "zone: 2, mark: 0x10/0xff, "
                  "label: 01/ff, nat: src, nat_addr: \"10.0.0.1-10.0.0.5\", nat_port: \"1000-2000\"}, percpu_stats: "
                  "true}, {ct: {clear: true}, percpu_stats: true}]") != std::string::npos);
  CHECK(yaml.find("actions: [{ct: {nat: restore, control: \"goto chain 1\"}, percpu_stats: true}, {ct: {commit: true, "
                  "nat: dst, nat_addr: \"2001:db8::1\", control: drop}, percpu_stats: true}]") != std::string::npos);
  INFO(yaml);
  // What import writes, the loader takes.
  auto s = load_ok(yaml);
  CHECK(s.devices.at(0).filters.at(0).actions.size() == 3);

  CHECK(imported("filter add dev v0 ingress prio 1 protocol ip flower action ct commit nat src 10.0.0.1\n", diags)
            .empty());
}
