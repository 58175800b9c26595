// The pedit action: tc's bytes for every munge form tc 6.1 writes, edits
// read back from the kernel's keys, and errors.
//
// Golden bodies: the TCA_ACT_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc actions add action pedit WORDS index N` in the kernel lab (strace -e
// sendmsg -x -s 4000).
#include <linux/tc_act/tc_pedit.h>

#include <catch2/catch.hpp>

#include "action_test_util.h"
#include "file/yaml_writer.h"
#include "kinds/registry.h"

using namespace tcsync;
using namespace tcsync::test;

namespace {

using namespace tcsync::test::actions;

Options opts_of(const std::string& pedit) {
  return first_opts("[{pedit: " + pedit + "}]");
}

// The options as dump writes them: {edits: [...], ...}.
std::string dumped(const Options& o) {
  std::string s;
  YamlOut y(s);
  y.map_begin();
  write_options(kActionPedit, o, y);
  y.map_end();
  return s;
}

Options decoded(const std::string& body) {
  Options o;
  auto b = unhex(body);
  kActionPedit.decode(b, KindCtx{}, o);
  return o;
}

struct Case {
  const char* yaml;
  const char* tc;
  const char* bytes;
};
const Case kCases[] = {
    {R"({pedit: {edits: [{eth: src, set: '02:00:00:00:00:01'}]}, index: 101})",
     "pedit ex munge eth src set 02:00:00:00:00:01",
     "4c000400650000000000000000000000000000000000000002000000ffff00000000020004000000000000000000000000000000000000000"
     "0000001080000000000000000000000000000002c000580140006800600010001000000060002000000000014000680060001000100000006"
     "00020000000000"},
    {R"({pedit: {edits: [{eth: dst, set: '02:11:22:33:44:55'}]}, index: 102})",
     "pedit ex munge eth dst set 02:11:22:33:44:55",
     "4c0004006600000000000000000000000000000000000000020000000000000002112233000000000000000000000000000000000000ffff4"
     "4550000040000000000000000000000000000002c000580140006800600010001000000060002000000000014000680060001000100000006"
     "00020000000000"},
    {R"({pedit: {edits: [{ip: src, set: 10.0.0.1}], ex: true}, index: 103})", "pedit ex munge ip src set 10.0.0.1",
     "34000400670000000000000000000000000000000000000001000000000000000a0000010c000000000000000000000000000000180005801"
     "400068006000100020000000600020000000000"},
    {R"({pedit: {edits: [{ip: dst, set: 192.168.1.2}], control: pipe, ex: true}, index: 104})",
     "pedit ex munge ip dst set 192.168.1.2 pipe",
     "3400040068000000000000000300000000000000000000000100000000000000c0a8010210000000000000000000000000000000180005801"
     "400068006000100020000000600020000000000"},
    {R"({pedit: {edits: [{ip: tos, set: 0x10}]}, index: 105})", "pedit munge ip tos set 0x10",
     "34000200690000000000000000000000000000000000000001000000ff00ffff0010000000000000000000000000000000000000"},
    {R"({pedit: {edits: [{ip: dsfield, set: 0xb8, retain: 0xfc}]}, index: 106})",
     "pedit munge ip dsfield set 0xb8 retain 0xfc",
     "340002006a0000000000000000000000000000000000000001000000ff03ffff00b8000000000000000000000000000000000000"},
    {R"({pedit: {edits: [{ip: ttl, set: 64}], ex: true}, index: 107})", "pedit ex munge ip ttl set 64",
     "340004006b000000000000000000000000000000000000000100000000ffffff4000000008000000000000000000000000000000180005801"
     "400068006000100020000000600020000000000"},
    {R"({pedit: {edits: [{ip: ttl, add: 3}]}, index: 108})", "pedit ex munge ip ttl add 3",
     "340004006c000000000000000000000000000000000000000100000000ffffff0300000008000000000000000000000000000000180005801"
     "400068006000100020000000600020001000000"},
    {R"({pedit: {edits: [{ip: ttl, decrement: true}]}, index: 109})", "pedit ex munge ip ttl decrement",
     "340004006d000000000000000000000000000000000000000100000000ffffffff00000008000000000000000000000000000000180005801"
     "400068006000100020000000600020001000000"},
    {R"({pedit: {edits: [{ip: tos, add: 4}]}, index: 110})", "pedit ex munge ip tos add 4",
     "340004006e0000000000000000000000000000000000000001000000ff00ffff0004000000000000000000000000000000000000180005801"
     "400068006000100020000000600020001000000"},
    {R"({pedit: {edits: [{ip6: src, set: '2001:db8::1'}]}, index: 111})", "pedit ex munge ip6 src set 2001:db8::1",
     "7c0004006f00000000000000000000000000000000000000040000000000000020010db808000000000000000000000000000000000000000"
     "00000000c00000000000000000000000000000000000000000000001000000000000000000000000000000000000000000000011400000000"
     "00000000000000000000005400058014000680060001000300000006000200000000001400068006000100030000000600020000000000140"
     "00680060001000300000006000200000000001400068006000100030000000600020000000000"},
    {R"({pedit: {edits: [{ip6: dst, set: '2001:db8::2'}], control: drop}, index: 112})",
     "pedit ex munge ip6 dst set 2001:db8::2 drop",
     "7c0004007000000000000000020000000000000000000000040000000000000020010db818000000000000000000000000000000000000000"
     "00000001c00000000000000000000000000000000000000000000002000000000000000000000000000000000000000000000022400000000"
     "00000000000000000000005400058014000680060001000300000006000200000000001400068006000100030000000600020000000000140"
     "00680060001000300000006000200000000001400068006000100030000000600020000000000"},
    {R"({pedit: {edits: [{ip6: hoplimit, set: 10}]}, index: 113})", "pedit ex munge ip6 hoplimit set 10",
     "34000400710000000000000000000000000000000000000001000000ffffff000000000a04000000000000000000000000000000180005801"
     "400068006000100030000000600020000000000"},
    {R"({pedit: {edits: [{ip6: hoplimit, decrement: true}]}, index: 114})", "pedit ex munge ip6 hoplimit decrement",
     "34000400720000000000000000000000000000000000000001000000ffffff00000000ff04000000000000000000000000000000180005801"
     "400068006000100030000000600020001000000"},
    {R"({pedit: {edits: [{ip6: traffic_class, set: 0x20}]}, index: 115})", "pedit ex munge ip6 traffic_class set 0x20",
     "34000400730000000000000000000000000000000000000001000000f00fffff0200000000000000000000000000000000000000180005801"
     "400068006000100030000000600020000000000"},
    {R"({pedit: {edits: [{tcp: sport, set: 1234}]}, index: 116})", "pedit ex munge tcp sport set 1234",
     "340004007400000000000000000000000000000000000000010000000000ffff04d2000000000000000000000000000000000000180005801"
     "400068006000100040000000600020000000000"},
    {R"({pedit: {edits: [{tcp: dport, set: 80}]}, index: 117})", "pedit ex munge tcp dport set 80",
     "34000400750000000000000000000000000000000000000001000000ffff00000000005000000000000000000000000000000000180005801"
     "400068006000100040000000600020000000000"},
    {R"({pedit: {edits: [{udp: sport, set: 53}]}, index: 118})", "pedit ex munge udp sport set 53",
     "340004007600000000000000000000000000000000000000010000000000ffff0035000000000000000000000000000000000000180005801"
     "400068006000100050000000600020000000000"},
    {R"({pedit: {edits: [{udp: dport, set: 5353}], control: goto chain 3}, index: 119})",
     "pedit ex munge udp dport set 5353 goto chain 3",
     "34000400770000000000000003000020000000000000000001000000ffff0000000014e900000000000000000000000000000000180005801"
     "400068006000100050000000600020000000000"},
    {R"({pedit: {edits: [{tcp: flags, set: 0x12}]}, index: 120})", "pedit ex munge tcp flags set 0x12",
     "34000400780000000000000000000000000000000000000001000000ff00ffff001200000c000000000000000000000000000000180005801"
     "400068006000100040000000600020000000000"},
    {R"({pedit: {edits: [{offset: 0, size: u32, set: 0x01020304}]}, index: 121})",
     "pedit munge offset 0 u32 set 0x01020304",
     "34000200790000000000000000000000000000000000000001000000000000000102030400000000000000000000000000000000"},
    {R"({pedit: {edits: [{offset: 13, size: u8, set: 5}]}, index: 122})", "pedit munge offset 13 u8 set 5",
     "340002007a0000000000000000000000000000000000000001000000ff00ffff000500000c000000000000000000000000000000"},
    {R"({pedit: {edits: [{offset: 22, size: u16, set: 0x1234, retain: 0xff00}]}, index: 123})",
     "pedit munge offset 22 u16 set 0x1234 retain 0xff00",
     "340002007b0000000000000000000000000000000000000001000000ffff00ff0000120014000000000000000000000000000000"},
    {R"({pedit: {edits: [{offset: 8, size: u32, set: 0xaabbccdd, retain: 0xffff0000}]}, index: 124})",
     "pedit munge offset 8 u32 set 0xaabbccdd retain 0xffff0000",
     "340002007c00000000000000000000000000000000000000010000000000ffffaabb000008000000000000000000000000000000"},
    {R"({pedit: {edits: [{offset: 4, size: u16, set: 7}], ex: true}, index: 125})", "pedit ex munge offset 4 u16 set 7",
     "340004007d00000000000000000000000000000000000000010000000000ffff0007000004000000000000000000000000000000180005801"
     "400068006000100000000000600020000000000"},
    {R"({pedit: {edits: [{eth: type, set: 0x0800}]}, index: 126})", "pedit ex munge eth type set 0x0800",
     "340004007e00000000000000000000000000000000000000010000000000ffff080000000c000000000000000000000000000000180005801"
     "400068006000100010000000600020000000000"},
    {R"({pedit: {edits: [{ip: ttl, set: 3}, {ip: tos, set: 4}], control: continue}, index: 127})",
     "pedit munge ip ttl set 3 munge ip tos set 4 continue",
     "4c0002007f00000000000000ffffffff00000000000000000200000000ffffff0300000008000000000000000000000000000000ff00ffff0"
     "004000000000000000000000000000000000000"},
    {R"({pedit: {edits: [{raw: {offset: 0, mask: 0xffffffff, val: 0xff000000}}]}, index: 128})",
     "pedit munge offset 0 u8 invert",
     "34000200800000000000000000000000000000000000000001000000ffffffffff00000000000000000000000000000000000000"},
    {R"({pedit: {edits: [{offset: 4, size: u32, set: 0}]}, index: 129})", "pedit munge offset 4 u32 clear",
     "34000200810000000000000000000000000000000000000001000000000000000000000004000000000000000000000000000000"},
    {R"({pedit: {edits: [{ip6: traffic_class, set: 0x20, retain: 0xf0}]}, index: 131})",
     "pedit ex munge ip6 traffic_class set 0x20 retain 0xf0",
     "34000400830000000000000000000000000000000000000001000000f0ffffff0200000000000000000000000000000000000000180005801"
     "400068006000100030000000600020000000000"},
    {R"({pedit: {edits: [{eth: src, set: '02:00:00:00:00:01'}, {ip: dst, set: 10.1.1.1}, {udp: dport, set: 99}, {ip: ttl, decrement: true}]}, index: 132})",
     "pedit ex munge eth src set 02:00:00:00:00:01 munge ip dst set 10.1.1.1 munge udp dport set 99 munge ip ttl "
     "decrement",
     "94000400840000000000000000000000000000000000000005000000ffff00000000020004000000000000000000000000000000000000000"
     "000000108000000000000000000000000000000000000000a01010110000000000000000000000000000000ffff0000000000630000000000"
     "000000000000000000000000ffffffff000000080000000000000000000000000000006800058014000680060001000100000006000200000"
     "00000140006800600010001000000060002000000000014000680060001000200000006000200000000001400068006000100050000000600"
     "0200000000001400068006000100020000000600020001000000"},
};

}  // namespace

TEST_CASE("pedit: TCA_ACT_OPTIONS bodies are tc's bytes") {
  for (auto& c : kCases) {
    INFO(c.tc);
    check_golden(std::string("[") + c.yaml + "]", c.bytes);
  }
}

TEST_CASE("pedit: the kernel's keys print as edits that load back to the same keys") {
  for (auto& c : kCases) {
    INFO(c.tc);
    Options o = decoded(c.bytes);
    std::string text = dumped(o);
    INFO(text);
    CHECK(opts_of(text) == o);
  }
  // What tc's words become (dsfield is tos; decrement is an add of 255).
  CHECK(dumped(decoded(kCases[5].bytes)) == R"({edits: [{ip: tos, set: "0xb8", retain: "0xfc"}]})");
  CHECK(dumped(decoded(kCases[8].bytes)) == "{edits: [{ip: ttl, decrement: true}]}");
  CHECK(dumped(decoded(kCases[0].bytes)) == "{edits: [{eth: src, set: \"02:00:00:00:00:01\"}]}");
  CHECK(dumped(decoded(kCases[2].bytes)) == R"({edits: [{ip: src, set: "10.0.0.1"}], ex: true})");
  CHECK(dumped(decoded(kCases[14].bytes)) == R"({edits: [{ip6: traffic_class, set: "0x20"}]})");
  CHECK(dumped(decoded(kCases[16].bytes)) == "{edits: [{tcp: dport, set: 80}]}");
  // tc's `offset 22 u16 set 0x1234 retain 0xff00` is the byte at 22.
  CHECK(dumped(decoded(kCases[22].bytes)) == R"({edits: [{offset: 22, size: u8, set: "0x12"}]})");
  CHECK(dumped(decoded(kCases[24].bytes)) == R"({edits: [{offset: 4, size: u16, set: 7}], ex: true})");
  // tc's `munge offset 0 u8 invert`: no edit makes it, so it stays a raw key.
  CHECK(dumped(decoded(kCases[27].bytes)) == R"({edits: [{raw: {offset: 0, mask: "0xffffffff", val: "0xff000000"}}]})");
}

TEST_CASE("pedit: edits are equal when their keys are") {
  CHECK(opts_of("{edits: [{ip: ttl, decrement: true}]}") == opts_of("{edits: [{ip: ttl, add: 255}]}"));
  CHECK(opts_of("{edits: [{ip: ttl, set: 5}]}") == opts_of("{edits: [{offset: 8, size: u8, set: 5}]}"));
  CHECK(opts_of("{edits: [{ip: dsfield, set: 0x10}]}") == opts_of("{edits: [{ip: tos, set: 0x10}]}"));
  CHECK(opts_of("{edits: [{ip: tos, set: 0x10}], control: pass}") == opts_of("{edits: [{ip: tos, set: 0x10}]}"));
  // Without ex an ip edit is a network key; with ex an ipv4 one: different state.
  CHECK_FALSE(opts_of("{edits: [{ip: ttl, set: 5}]}") == opts_of("{edits: [{ip: ttl, set: 5}], ex: true}"));
  CHECK(opts_of("{edits: [{ip: ttl, set: 5}, {tcp: dport, set: 1}]}") ==
        opts_of("{edits: [{ip: ttl, set: 5}, {tcp: dport, set: 1}], ex: true}"));
  CHECK_FALSE(opts_of("{edits: [{tcp: dport, set: 80}]}") == opts_of("{edits: [{tcp: dport, set: 81}]}"));
  CHECK_FALSE(opts_of("{edits: [{ip: ttl, set: 5}, {ip: tos, set: 1}]}") ==
              opts_of("{edits: [{ip: tos, set: 1}, {ip: ttl, set: 5}]}"));
}

TEST_CASE("pedit: keys no edit makes round-trip as raw keys") {
  // tc's `offset 12 u32 at 0 0x0f 2 set 5` and an ipv6 key at an odd place.
  std::string yaml =
      "{edits: [{raw: {offset: 12, mask: 0x00000000, val: 0x00000005, at: 0, offmask: 0x0000000f, shift: 2}}, "
      "{raw: {offset: -8, mask: 0x0000ff00, val: 0x12340001, htype: ipv6, cmd: add}}]}";
  Options o = opts_of(yaml);
  Action a = load_actions("[{pedit: " + yaml + "}]").at(0);
  auto b = body(a, o);
  Options back;
  kActionPedit.decode(b, KindCtx{}, back);
  CHECK(back == o);
  CHECK(dumped(back) ==
        R"({edits: [{raw: {offset: 12, mask: "0x00000000", val: "0x00000005", offmask: "0x0000000f", shift: 2}}, )"
        R"({raw: {offset: "-8", mask: "0x0000ff00", val: "0x12340001", htype: ipv6, cmd: add}}]})");
  CHECK(opts_of(dumped(back)) == o);
}

TEST_CASE("pedit: a truncated or odd dump decodes without overrunning") {
  // nkeys says 3 but one key follows; KEYS_EX has no entries.
  std::string one =
      "34000400010000000000000000000000000000000000000003000000ff00ffff0010000000000000000000000000000000000000"
      "04000580";
  Options o = decoded(one);
  REQUIRE(o.words(0));
  CHECK(o.words(0)->size() == 1 + 8);
  CHECK(decoded("0800020001000000").empty() == false);
}

TEST_CASE("pedit: errors") {
  CHECK(error_of("[{pedit: {}}]") == "pedit action needs 'edits'");
  CHECK(error_of("[{pedit: {edits: []}}]").starts_with("'edits' must be a non-empty list"));
  CHECK(error_of("[{pedit: {edits: [{ip: tll, set: 5}]}}]") ==
        "unknown 'ip' field 'tll': expected one of src, dst, tos, dsfield, precedence, ihl, ttl, protocol, nofrag, "
        "firstfrag, ce, df, mf (did you mean 'ttl'?)");
  CHECK(error_of("[{pedit: {edits: [{ip: ttl}]}}]") == "a pedit edit needs set, add or decrement");
  CHECK(error_of("[{pedit: {edits: [{tcp: dport, set: 70000}]}}]") == "pedit: the value 0x11170 does not fit 16 bits");
  CHECK(error_of("[{pedit: {edits: [{tcp: dport, decrement: true}]}}]") ==
        "decrement is for ip ttl and ip6 hoplimit only (tc: not supported for this field)");
  CHECK(error_of("[{pedit: {edits: [{eth: src, set: '02:00:00:00:00:01', retain: 0xff}]}}]") ==
        "pedit: retain is not supported for fields longer than 32 bits");
  CHECK(error_of("[{pedit: {edits: [{offset: 2, size: u32, set: 1}]}}]") ==
        "pedit: a 32-bit field's offset must be a multiple of 4");
  CHECK(error_of("[{pedit: {edits: [{offset: 3, size: u16, set: 1}]}}]") ==
        "pedit: a 16-bit field cannot start at the last byte of a 32-bit word");
  CHECK(error_of("[{pedit: {edits: [{offset: 3, set: 1}]}}]") == "an 'offset' edit needs 'size': u8, u16 or u32");
  CHECK(error_of("[{pedit: {edits: [{ip: src, set: '2001:db8::1'}]}}]") ==
        "expected an IPv4 address, not '2001:db8::1'");
  CHECK(error_of("[{pedit: {edits: [{ip: ttl, set: 1, add: 2}]}}]") ==
        "a pedit edit has one header or offset and one of set, add, decrement: 'add' is one too many");
  CHECK(error_of("[{pedit: {edits: [{ip: ttl, sett: 1}]}}]").starts_with("unknown pedit edit key 'sett'"));
  CHECK(
      error_of("[{pedit: {edits: [{tcp: dport, set: 1}], ex: false}}]") ==
      "pedit 'ex: false' cannot hold these edits: eth, ip6, tcp, udp edits, add and decrement need tc's extended keys");
  CHECK(error_of("[{pedit: {edits: [{raw: {mask: 0}}]}}]") == "a raw key needs 'offset'");
}

TEST_CASE("pedit: import of tc's munge words gives tc's bytes") {
  auto imported_words = [](const std::string& words, std::string& diags) {
    return imported(
        "qdisc add dev v0 clsact\nfilter add dev v0 ingress prio 1 protocol ip flower action " + words + "\n", diags);
  };
  struct {
    const char* words;
    size_t golden;  // index in kCases
  } cases[] = {
      {"pedit ex munge eth src set 02:00:00:00:00:01 munge ip dst set 10.1.1.1 munge udp dport set 99 munge ip ttl "
       "decrement index 132",
       30},
      {"pedit munge ip ttl set 3 munge ip tos set 4 continue index 127", 26},
      {"pedit munge ip dsfield set 0xb8 retain 0xfc index 106", 5},
      {"pedit ex munge ip6 dst set 2001:db8::2 drop index 112", 11},
      {"pedit ex munge offset 4 u16 set 7 index 125", 24},
  };
  for (auto& c : cases) {
    INFO(c.words);
    std::string diags;
    std::string yaml = imported_words(c.words, diags);
    INFO(diags);
    REQUIRE_FALSE(yaml.empty());
    State st = load_ok(yaml);
    auto& a = st.devices.at(0).filters.at(0).actions.at(0);
    CHECK(hex(body(a, a.opts)) == kCases[c.golden].bytes);
  }
  std::string diags;
  CHECK(imported_words("pedit munge offset 0 u8 invert", diags).empty());
  CHECK(diags.find("error: pedit 'invert' has no tcsync edit: write the key it makes as {raw: {offset, mask, val}}") !=
        std::string::npos);
}

// tc_pedit_sel as the kernel lab's 6.1 reported it for `tc actions add
// action pedit munge ip tos set 0x10 index 7` after its flags byte was set
// to 5 over raw netlink (tests/kernel/tc_struct.py); tc sends 0. capab,
// action, refcnt and bindcnt as a fresh action of tcsync's would have them.
TEST_CASE("pedit: the selector's flags byte is read, compared and sent back as held") {
  const auto parms =
      unhex("070000000000000000000000000000000000000001050000ff00ffff0010000000000000000000000000000000000000");
  std::vector<uint8_t> dump;
  MsgWriter w(dump);
  w.attr(TCA_PEDIT_PARMS, parms.data(), parms.size());
  auto actions = load_actions("[{pedit: {edits: [{ip: tos, set: 0x10}]}, index: 7}]");
  auto& a = actions.at(0);
  const auto flags = static_cast<uint16_t>(a.ops->field_index("sel_flags"));
  CHECK_FALSE(a.opts.has(flags));
  Options live;
  a.ops->decode(dump, KindCtx{}, live);
  CHECK(live.num(flags) == 5u);
  CHECK(hex(body(a, live)) == hex(dump));
  // tc's 0 is the default: no field.
  Options from_tc;
  a.ops->decode(body(a, a.opts), KindCtx{}, from_tc);
  CHECK_FALSE(from_tc.has(flags));
  CHECK(first_opts("[{pedit: {edits: [{ip: tos, set: 0x10}], sel_flags: 5}}]").num(flags) == 5u);
}
