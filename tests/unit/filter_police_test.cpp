// A filter's own police (FilterOps::old_police_attr): tc's `police ...` among
// a filter's words, the form from before actions. The police action's own
// table reads, writes and checks it; these tests hold the generic parts
// around it: where it goes in TCA_OPTIONS, how a dump reads back, diff's
// words, the loader's checks, dump and import.
//
// Golden bodies: TCA_OPTIONS payloads tc (iproute2 6.1) sent for the lines
// named with each case (strace -e sendmsg -x, in a throwaway namespace on
// this host). As in police_test.cpp, the 1024-byte rate tables are compared
// by the FNV-1a hash of tc's bytes, the rest byte for byte.
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include <cstring>

#include <catch2/catch.hpp>

#include "codec/tc_codec.h"
#include "file/yaml_writer.h"
#include "import/import_tc.h"
#include "kinds/registry.h"
#include "netlink/wire.h"
#include "plan/differ.h"
#include "test_util.h"

using namespace tcsync;
using tcsync::test::hex;
using tcsync::test::load_errors;
using tcsync::test::load_ok;
using tcsync::test::unhex;

namespace {

uint64_t fnv1a(std::span<const uint8_t> b) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (uint8_t c : b) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

// "type len hex" per attribute of TCA_OPTIONS; the police attribute as
// "type police" and its own attributes indented, tables as "fnv=...".
std::string listing(std::span<const uint8_t> options, uint16_t police_attr, bool police_only = false) {
  std::string out;
  auto line = [&](const Attr& a, const char* indent) {
    char buf[40];
    out += indent + std::to_string(a.type) + " " + std::to_string(a.data.size()) + " ";
    if (a.data.size() == 1024)
      std::snprintf(buf, sizeof buf, "fnv=%016llx", static_cast<unsigned long long>(fnv1a(a.data))), out += buf;
    else
      out += hex(a.data);
    out += "\n";
  };
  AttrIter it(options);
  for (Attr a; it.next(a);) {
    if (a.type != police_attr) {
      if (!police_only) line(a, "");
      continue;
    }
    out += std::to_string(a.type) + " police\n";
    AttrIter pi(a.data);
    for (Attr p; pi.next(p);) line(p, "  ");
  }
  return out;
}

// The TCA_OPTIONS payload of a whole filter message.
std::span<const uint8_t> options_of(const std::vector<uint8_t>& msg) {
  std::span<const uint8_t> attrs(msg.data() + NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(tcmsg)),
                                 msg.size() - NLMSG_HDRLEN - NLMSG_ALIGN(sizeof(tcmsg)));
  AttrIter it(attrs);
  for (Attr a; it.next(a);)
    if (a.type == TCA_OPTIONS) return a.data;
  return {};
}

std::vector<uint8_t> encode(const Filter& f) {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  test::FakeLinks links;
  Diagnostics d;
  encode_filter(w, Op::Add, f, 3, &links, d);
  REQUIRE_FALSE(d.has_errors());
  return buf;
}

std::string file_with(const std::string& filters) {
  return "version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n    filters:\n" + filters;
}

}  // namespace

TEST_CASE("filter police: TCA_OPTIONS carry the police nest as tc sends it") {
  State s = load_ok(file_with(
      "      - {parent: ingress, pref: 1, protocol: ip, handle: 1, fw: {}, classid: \"1:1\", police: {rate: 1mbit, "
      "burst: 10k, exceed: drop}}\n"
      "      - {parent: ingress, pref: 2, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.1}}]}, classid: \"1:1\","
      " police: {rate: 1mbit, burst: 10k, mtu: 1514, peakrate: 2mbit, exceed: drop, conform: pipe}}\n"
      "      - {parent: ingress, pref: 3, protocol: ip, basic: {match: \"meta(nf_mark eq 5)\"}, classid: \"1:1\","
      " police: {rate: 40gbit, burst: 1m, linklayer: atm, overhead: 10, mpu: 64, exceed: continue}}\n"
      "      - {parent: ingress, pref: 4, protocol: ip, handle: 4, fw: {}, police: {pkts_rate: 1000, pkts_burst: 200, "
      "exceed: drop, conform: pass}}\n"
      "      - {parent: ingress, pref: 5, protocol: ip, route: {to: 5}, classid: \"1:1\", police: {rate: 1mbit, burst: "
      "10k, exceed: drop}}\n"
      "      - {parent: ingress, pref: 6, protocol: ip, handle: 1, cgroup: {}, police: {rate: 2mbit, burst: 20k, "
      "exceed: drop, conform: pipe}}\n"
      "      - {parent: ingress, pref: 7, protocol: ip, handle: 1, flow: {keys: [dst], mode: map}, police: {mtu: 1500, "
      "exceed: drop}}\n"));
  auto& fs = s.devices.at(0).filters;
  REQUIRE(fs.size() == 7);
  // tc ... handle 1 fw classid 1:1 police rate 1mbit burst 10k drop
  CHECK(listing(options_of(encode(fs[0])), TCA_FW_POLICE) ==
        "1 4 01000100\n"
        "2 police\n"
        "  1 56 "
        "000000000200000000000000008813000000000003010000ffff000048e801000000000000000000000000000000000000000000000000"
        "00\n"
        "  2 1024 fnv=94bc813dba97d32f\n");
  // tc ... u32 match ip dst 10.0.0.1 police rate 1mbit burst 10k mtu 1514
  //   peakrate 2mbit conform-exceed drop/pipe flowid 1:1
  // tc writes u32's attributes in the order of its words (POLICE, CLASSID,
  // then SEL); tcsync in u32's (u32_test.cpp): the police nest is the same.
  CHECK(listing(options_of(encode(fs[1])), TCA_U32_POLICE, true) ==
        "6 police\n"
        "  1 56 "
        "00000000020000000000000000881300ea05000003010000ffff000048e8010003010000ffff000090d003000000000000000000000000"
        "00\n"
        "  2 1024 fnv=94bc813dba97d32f\n"
        "  3 1024 fnv=ee9e4ca4a35421b0\n"
        "  5 4 03000000\n");
  // tc ... basic match 'meta(nf_mark eq 5)' classid 1:1 police rate 40gbit
  //   burst 1m linklayer atm overhead 10 mpu 64 continue
  CHECK(
      listing(options_of(encode(fs[2])), TCA_BASIC_POLICE) ==
      "2 52 08000100010000002c0002002800010000000400000000000c0001000c1000000010000008000200000000000800030005000000\n"
      "1 4 01000100\n"
      "4 police\n"
      "  1 56 "
      "00000000ffffffff00000000c10c00000000000003020a00ffff4000ffffffff000000000000000000000000000000000000000000000000"
      "\n"
      "  2 1024 fnv=51d88627df287325\n"
      "  8 8 00f2052a01000000\n");
  // tc ... handle 4 fw police pkts_rate 1000 pkts_burst 200 conform-exceed drop/ok
  CHECK(listing(options_of(encode(fs[3])), TCA_FW_POLICE) ==
        "2 police\n"
        "  1 56 "
        "00000000020000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
        "00\n"
        "  10 8 e803000000000000\n"
        "  11 8 08af2f0000000000\n");
  // tc ... route to 5 classid 1:1 police rate 1mbit burst 10k drop
  CHECK(listing(options_of(encode(fs[4])), TCA_ROUTE4_POLICE) ==
        "2 4 05000000\n"
        "1 4 01000100\n"
        "5 police\n"
        "  1 56 "
        "000000000200000000000000008813000000000003010000ffff000048e801000000000000000000000000000000000000000000000000"
        "00\n"
        "  2 1024 fnv=94bc813dba97d32f\n");
  // tc ... handle 1 cgroup police rate 2mbit burst 20k conform-exceed drop/pipe
  CHECK(listing(options_of(encode(fs[5])), TCA_CGROUP_POLICE) ==
        "2 police\n"
        "  1 56 "
        "000000000200000000000000008813000000000003010000ffff000090d003000000000000000000000000000000000000000000000000"
        "00\n"
        "  2 1024 fnv=ee9e4ca4a35421b0\n"
        "  5 4 03000000\n");
  // tc ... handle 1 flow map key dst police mtu 1500 drop (tc sends MODE
  // last; the nest is the same).
  CHECK(listing(options_of(encode(fs[6])), TCA_FLOW_POLICE, true) ==
        "10 police\n"
        "  1 56 "
        "00000000020000000000000000000000dc0500000000000000000000000000000000000000000000000000000000000000000000000000"
        "00\n");

  // Each decodes back to the same police (decode also names what the file
  // left to its default, such as mtu 0: the differ sees no change), and
  // encodes again alike.
  for (const Filter& f : fs) {
    INFO(f.kind << " pref " << f.key.pref);
    auto msg = encode(f);
    Filter back;
    Decoded info;
    test::FakeLinks links;
    REQUIRE(decode_filter(msg, &links, back, info));
    REQUIRE(back.police);
    bool recreate = false;
    CHECK(diff_options(kActionPolice, f.police->opts, back.police->opts, recreate).empty());
    CHECK(back.raw.options().empty());
    back.key = f.key;
    CHECK(hex(encode(back)) == hex(msg));
  }
}

TEST_CASE("filter police: a u32 rule with only police is terminal, as tc makes it") {
  State s =
      load_ok(file_with("      - {parent: ingress, pref: 2, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.1}}]}, "
                        "police: {mtu: 1500, exceed: drop}}\n"));
  auto msg = encode(s.devices.at(0).filters.at(0));
  AttrTable ot(options_of(msg), TCA_U32_MAX);
  REQUIRE(ot.get(TCA_U32_SEL));
  CHECK((ot.get(TCA_U32_SEL)->data[0] & TC_U32_TERMINAL) != 0);
}

TEST_CASE("filter police: the kernel's dump reads back, and what the police table cannot read stays raw") {
  // fw's dump of `handle 1 fw classid 1:1 police rate 1mbit burst 10k drop`
  // as the kernel writes it (tcf_exts_dump, TCA_OLD_COMPAT): CLASSID, then
  // POLICE { TBF (the kernel's index 7, mtu 2040, refcnt and bindcnt 1),
  // TM (timestamps) } and no rate table.
  auto dump = [](bool unknown) {
    std::vector<uint8_t> buf;
    MsgWriter w(buf);
    size_t off = w.begin_message(RTM_NEWTFILTER, 0, 0);
    tcmsg t{};
    t.tcm_ifindex = 3;
    t.tcm_handle = 1;
    t.tcm_parent = 0xFFFFFFF2;
    t.tcm_info = (1u << 16) | 0x0008;  // pref 1, ETH_P_IP in network order
    w.put_struct(t);
    w.attr_str(TCA_KIND, "fw");
    size_t o = w.nest_begin(TCA_OPTIONS);
    w.attr_u32(TCA_FW_CLASSID, 0x00010001);
    size_t p = w.nest_begin(TCA_FW_POLICE);
    auto tbf = unhex(
        "070000000200000000000000008813000000000003010000ffff000048e801000000000000000000000000000000000000000000000000"
        "00");
    tbf[16] = 0xf8, tbf[17] = 0x07;  // mtu 2040, the kernel's choice for an mtu of 0
    tbf[44] = 1, tbf[48] = 1;        // refcnt, bindcnt
    w.attr(TCA_POLICE_TBF, tbf.data(), tbf.size());
    uint64_t tm[4] = {5, 6, 7, 8};
    w.attr(TCA_POLICE_TM, tm, sizeof tm);
    if (unknown) w.attr_u32(99, 1);  // an attribute of a newer kernel
    w.nest_end(p);
    w.nest_end(o);
    w.end_message(off);
    return buf;
  };
  State s =
      load_ok(file_with("      - {parent: ingress, pref: 1, protocol: ip, handle: 1, fw: {}, classid: \"1:1\", police: "
                        "{rate: 1mbit, burst: 10k, exceed: drop}}\n"));
  const Filter& want = s.devices.at(0).filters.at(0);
  test::FakeLinks links;
  Decoded info;
  Filter live;
  REQUIRE(decode_filter(dump(false), &links, live, info));
  REQUIRE(live.police);
  CHECK(live.raw.options().empty());
  bool recreate = false;
  CHECK(filter_differences(want, live, recreate).empty());
  CHECK_FALSE(recreate);
  // dump prints the police in the police action's words (mtu is the kernel's).
  State one;
  one.devices.push_back(Device{});
  one.devices[0].name = "v0";
  one.devices[0].filters.push_back(live);
  auto yaml = write_state_yaml(one);
  CHECK(yaml.find("fw: {}, classid: \"1:1\", police: {rate: 1mbit, burst: 10kb, mtu: \"2040b\", exceed: drop}}") !=
        std::string::npos);

  // An attribute the police table does not read: the whole police nest is
  // kept as the kernel's bytes, no field half read.
  Filter odd;
  REQUIRE(decode_filter(dump(true), &links, odd, info));
  CHECK_FALSE(odd.police);
  AttrIter it(odd.raw.options());
  Attr a;
  REQUIRE(it.next(a));
  CHECK(a.type == TCA_FW_POLICE);
  CHECK_FALSE(it.next(a));
}

TEST_CASE("filter police: diff says what changed in the police's words") {
  auto filter = [](const std::string& police) {
    State s = load_ok(file_with("      - {parent: ingress, pref: 1, protocol: ip, handle: 1, fw: {}, classid: \"1:1\"" +
                                police + "}\n"));
    return s.devices.at(0).filters.at(0);
  };
  Filter a = filter(", police: {rate: 1mbit, burst: 10k, exceed: drop}");
  Filter b = filter(", police: {rate: 2mbit, burst: 10k, exceed: drop}");
  Filter none = filter("");
  bool recreate = false;
  auto why = filter_differences(b, a, recreate);
  REQUIRE(why.size() == 1);
  CHECK(why[0] == "police rate 1mbit -> 2mbit");
  CHECK_FALSE(recreate);  // a replace sends the whole new police
  why = filter_differences(a, none, recreate);
  REQUIRE(why.size() == 1);
  CHECK(why[0] == "police (none) -> {rate 1mbit, burst 10kb, exceed drop}");
  why = filter_differences(none, a, recreate);
  REQUIRE(why.size() == 1);
  CHECK(why[0] == "police {rate 1mbit, burst 10kb, exceed drop} -> (none)");
  CHECK_FALSE(recreate);
}

TEST_CASE("filter police: the loader checks it with the police table, and where it may go") {
  auto err = [](const std::string& filter) { return load_errors(file_with("      - " + filter + "\n")); };
  CHECK(err("{parent: ingress, pref: 1, protocol: ip, flower: {}, police: {rate: 1mbit, burst: 10k}}")
            .starts_with("t.yaml:6:62: error: a flower filter has no police of its own (tc's 'police' among its "
                         "words): use a police action, 'actions: [{police: {...}}]'\n"));
  CHECK(err("{parent: ingress, pref: 1, protocol: ip, handle: 1, fw: {}, police: {rate: 1mbit, burst: 10k}, actions: "
            "[{gact: {control: drop}}]}")
            .starts_with("t.yaml:6:69: error: give a filter 'police' or 'actions', not both: the kernel keeps the "
                         "filter's own police and drops its actions\n"));
  CHECK(err("{parent: ingress, pref: 1, protocol: ip, handle: 1, fw: {}, police: {rat: 1mbit, burst: 10k}}")
            .starts_with("t.yaml:6:78: error: unknown key 'rat' in a filter's police"));
  CHECK(err("{parent: ingress, pref: 1, protocol: ip, handle: 1, fw: {}, police: {rate: 1mbit}}")
            .starts_with("t.yaml:6:84: error: police 'rate' needs 'burst' (the bucket size)\n"));
  CHECK(err("{parent: ingress, pref: 1, protocol: ip, handle: 1, fw: {}, police: drop}")
            .starts_with("t.yaml:6:77: error: 'police' must be a mapping of the police action's fields"));
  CHECK(err("{parent: ingress, pref: 1, protocol: ip, empty: u32, police: {mtu: 1500}}")
            .starts_with("t.yaml:6:62: error: an empty u32 list has no 'police': it holds no rule\n"));
}

TEST_CASE("filter police: import reads tc's police words up to the first it does not know") {
  ImportOptions o;
  std::string yaml;
  Diagnostics d;
  bool ok = import_tc_text("b.tc", R"(qdisc add dev eth0 clsact
filter add dev eth0 ingress protocol ip prio 2 u32 match ip dst 10.0.0.1 police rate 1mbit burst 10k mtu 1514 peakrate 2mbit conform-exceed drop/pipe flowid 1:1
filter add dev eth0 ingress protocol ip prio 3 handle 1 fw classid 1:1 police rate 1mbit buffer 10k drop
filter add dev eth0 ingress protocol ip prio 4 basic match 'meta(nf_mark eq 5)' police pkts_rate 1000 pkts_burst 200 continue classid 1:2
)",
                           o, yaml, d);
  INFO(test::formatted(d));
  REQUIRE(ok);
  CHECK(yaml.substr(yaml.find("    filters:\n")) == R"y(    filters:
      - {parent: ingress, pref: 2, protocol: ip, handle: "::800", u32: {match: [{ip: {dst: "10.0.0.1"}}]}, police: {rate: 1mbit, burst: 10k, mtu: 1514, peakrate: 2mbit, exceed: drop, conform: pipe}, classid: "1:1"}
      - {parent: ingress, pref: 3, protocol: ip, handle: 1, fw: {}, classid: "1:1", police: {rate: 1mbit, burst: 10k, exceed: drop}}
      - {parent: ingress, pref: 4, protocol: ip, basic: {match: "meta(nf_mark eq 5)"}, police: {pkts_rate: 1000, pkts_burst: 200, exceed: continue}, classid: "1:2"}
)y");
  auto bad = [](const std::string& line) {
    ImportOptions o;
    std::string yaml;
    Diagnostics d;
    import_tc_text("b.tc", line, o, yaml, d);
    return test::formatted(d);
  };
  CHECK(bad("filter add dev eth0 ingress prio 1 flower police rate 1mbit burst 10k\n")
            .starts_with("b.tc:1:43: error: a flower filter has no police of its own: write 'action police ...'\n"));
  CHECK(bad("filter add dev eth0 ingress prio 1 handle 1 fw police rate 1mbit burst 10k index 3\n")
            .starts_with("b.tc:1:76: error: a filter's own police has no 'index' in tcsync (the kernel picks one): "
                         "bind the action with 'action police index N'\n"));
  CHECK(bad("filter add dev eth0 ingress prio 1 handle 1 fw police classid 1:1\n")
            .starts_with("b.tc:1:48: error: 'police' needs the police action's words after it, such as 'rate 1mbit "
                         "burst 10k drop'\n"));
}
