// The u32 classifier kind: tc's selector vocabulary to kernel keys, the
// TCA_OPTIONS body, decoding dumps, handles and errors.
//
// Expected keys are literals taken from tc itself (iproute2 6.1): each rule
// was added with `tc filter add ... u32 match ...` in a throwaway namespace
// on this host (kernel 6.18) and read back with `tc filter show`, whose raw
// "match VAL/MASK at OFF" lines are the form describe() prints. Golden bytes
// were captured from tc's own requests with strace.
#include <arpa/inet.h>
#include <linux/pkt_cls.h>

#include <catch2/catch.hpp>

#include "kinds/registry.h"
#include "test_util.h"

#include "base/diag.h"
#include "file/yaml_writer.h"
#include "model/kind.h"
#include "model/model.h"
#include "netlink/wire.h"
#include "yaml/yaml_reader.h"

using namespace tcsync;

namespace {

using tcsync::test::hex;
using tcsync::test::unhex;

const KindOps& u32 = kFilterU32;

int field(std::string_view key) {
  int i = u32.field_index(key);
  REQUIRE(i >= 0);
  return i;
}

// Reads one YAML value; the text is registered so errors show its line.
Node read_yaml(const std::string& text, Diagnostics& d) {
  uint32_t file = SourceFiles::instance().add_text("u32.yaml", text);
  YamlReader r(file, d);
  r.open_string(text);
  r.next();  // document start
  Node n;
  REQUIRE(r.read_node(n));
  return n;
}

// The body of a filter's `u32:` mapping, read field by field as the loader does.
Options parse_opts(const std::string& text, Diagnostics& d) {
  Node n = read_yaml(text, d);
  REQUIRE(n.is_map());
  Options o;
  for (auto& [k, v] : n.map) {
    int i = field(k.scalar);
    Value val;
    if (parse_field(u32.fields[i], v, val, d)) o.set(static_cast<uint16_t>(i), std::move(val), v.loc);
  }
  return o;
}

Options parse_ok(const std::string& text) {
  Diagnostics d;
  Options o = parse_opts(text, d);
  for (auto& x : d.all()) FAIL(format_diagnostic(x));
  return o;
}

std::string errors(const Diagnostics& d) {
  std::string all;
  for (auto& x : d.all()) all += format_diagnostic(x);
  return all;
}

// Errors from reading `text` as a u32 body, then normalizing it as a filter
// with this handle and classid.
std::string load_errors(const std::string& text, uint32_t handle = 0, std::optional<uint32_t> classid = 0x00010010) {
  Diagnostics d;
  Filter f;
  f.opts = parse_opts(text, d);
  f.key.handle = handle;
  f.classid = classid;
  if (!d.has_errors()) u32.normalize(f.opts, KindCtx{handle, 0, nullptr, &d, {}, &f}, d, SourceLoc{});
  return errors(d);
}

// The keys of one `match` list, described as tc shows them.
std::string keys_of(const std::string& match) {
  Options o = parse_ok("{match: " + match + "}");
  const Value* v = o.get(static_cast<uint16_t>(field("match")));
  REQUIRE(v);
  return describe_field(u32.fields[field("match")], *v);
}

std::vector<uint8_t> encode(const Filter& f) {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  u32.encode(f.opts, KindCtx{f.key.handle, 0, nullptr, nullptr, {}, &f}, w);
  return buf;
}

// A loaded filter: parsed, then normalized with its handle and classid.
Filter filter(const std::string& text, uint32_t handle, std::optional<uint32_t> classid = 0x00010010) {
  Filter f;
  f.key.handle = handle;
  f.classid = classid;
  f.opts = parse_ok(text);
  Diagnostics d;
  u32.normalize(f.opts, KindCtx{handle, 0, nullptr, &d, {}, &f}, d, SourceLoc{});
  for (auto& x : d.all()) FAIL(format_diagnostic(x));
  return f;
}

std::string emit(const Options& o) {
  std::string out;
  YamlOut y(out);
  y.map_begin();
  write_options(u32, o, y);
  y.map_end();
  return out;
}

}  // namespace

TEST_CASE("u32: ip selectors make the keys tc makes") {
  CHECK(keys_of("[{ip: {src: 10.0.0.0/8}}]") == "0a000000/ff000000 at 12");
  CHECK(keys_of("[{ip: {dst: 192.168.1.1}}]") == "c0a80101/ffffffff at 16");
  CHECK(keys_of("[{ip: {protocol: 6}}]") == "00060000/00ff0000 at 8");
  CHECK(keys_of("[{ip: {protocol: tcp}}]") == "00060000/00ff0000 at 8");
  CHECK(keys_of("[{ip: {tos: 0x10}}]") == "00100000/00ff0000 at 0");
  CHECK(keys_of("[{ip: {dsfield: {value: 0x10, mask: 0xff}}}]") == "00100000/00ff0000 at 0");
  CHECK(keys_of("[{ip: {ihl: 5}}]") == "05000000/0f000000 at 0");
  CHECK(keys_of("[{ip: {dport: 22}}]") == "00000016/0000ffff at 20");
  CHECK(keys_of("[{ip: {sport: 1024}}]") == "04000000/ffff0000 at 20");
  CHECK(keys_of("[{ip: {icmp_type: 8, icmp_code: 0}}]") == "08000000/ffff0000 at 20");
  CHECK(keys_of("[{ip: {nofrag: true, df: true}}]") == "00004000/00007fff at 4");
  CHECK(keys_of("[{ip: {firstfrag: true}}]") == "00002000/00003fff at 4");
  CHECK(keys_of("[{ip: {mf: true}}]") == "00002000/00002000 at 4");
  CHECK(keys_of("[{ip: {dst: 0.0.0.0/0}}]") == "00000000/00000000 at 16");
}

TEST_CASE("u32: sub-word matches merge into one key, in tc's order") {
  // tc: match ip sport 1024 0xffff match ip dport 22 0xffff
  CHECK(keys_of("[{ip: {sport: 1024}}, {ip: {dport: 22}}]") == "04000016/ffffffff at 20");
  // tc: match ip dst 10.1.2.3/8 match ip dport 80 0xffff match ip protocol 6 0xff
  CHECK(keys_of("[{ip: {dst: 10.1.2.3/8, dport: 80, protocol: 6}}]") ==
        "0a000000/ff000000 at 16, 00000050/0000ffff at 20, 00060000/00ff0000 at 8");
  // tc: match ip dport 80 0xfff0 match ip src 192.168.0.0/16 match ip protocol 17 0xff
  CHECK(keys_of("[{ip: {dport: {value: 80, mask: 0xfff0}, src: 192.168.0.0/16, protocol: udp}}]") ==
        "00000050/0000fff0 at 20, c0a80000/ffff0000 at 12, 00110000/00ff0000 at 8");
}

TEST_CASE("u32: ip6 selectors make the keys tc makes") {
  CHECK(keys_of("[{ip6: {src: 2001:db8::/32}}]") == "20010db8/ffffffff at 8");
  CHECK(keys_of("[{ip6: {dst: 2001:db8::1}}]") ==
        "20010db8/ffffffff at 24, 00000000/ffffffff at 28, 00000000/ffffffff at 32, 00000001/ffffffff at 36");
  CHECK(keys_of("[{ip6: {dst: 2001:db8:1:2:3::/72}}]") ==
        "20010db8/ffffffff at 24, 00010002/ffffffff at 28, 00000000/ff000000 at 32");
  CHECK(keys_of("[{ip6: {protocol: 6, dport: 443, sport: 1024}}]") ==
        "00000600/0000ff00 at 4, 040001bb/ffffffff at 40");
  CHECK(keys_of("[{ip6: {nexthdr: tcp}}]") == "00000600/0000ff00 at 4");
  CHECK(keys_of("[{ip6: {priority: 0x10}}]") == "01000000/0ff00000 at 0");
  CHECK(keys_of("[{ip6: {flowlabel: 0x12345}}]") == "00012345/000fffff at 0");
}

TEST_CASE("u32: transport, ether and raw selectors make the keys tc makes") {
  CHECK(keys_of("[{tcp: {src: 80, dst: 443}}]") == "005001bb/ffffffff at nexthdr+0");
  CHECK(keys_of("[{udp: {dst: 53}}]") == "00000035/0000ffff at nexthdr+0");
  CHECK(keys_of("[{icmp: {type: 8, code: 0}}]") == "08000000/ffff0000 at nexthdr+0");
  CHECK(keys_of("[{ether: {dst: 02:00:00:00:00:01}}]") == "00000200/0000ffff at -16, 00000001/ffffffff at -12");
  CHECK(keys_of("[{ether: {src: 02:00:00:00:00:02}}]") == "02000000/ffffffff at -8, 00020000/ffff0000 at -4");
  CHECK(keys_of("[{u32: {value: 0x0a000000, mask: 0xff000000, at: 16}}]") == "0a000000/ff000000 at 16");
  CHECK(keys_of("[{u32: {value: 0, mask: 0}}]") == "00000000/00000000 at 0");
  CHECK(keys_of("[{u16: {value: 0x0800, mask: 0xffff, at: -2}}]") == "00000800/0000ffff at -4");
  CHECK(keys_of("[{u16: {value: 0x1234, mask: 0xffff, at: 6}}]") == "00001234/0000ffff at 4");
  CHECK(keys_of("[{u8: {value: 0x45, mask: 0xff, at: 0}}]") == "45000000/ff000000 at 0");
  CHECK(keys_of("[{u8: {value: 6, mask: 0xff, at: 9}}]") == "00060000/00ff0000 at 8");
  CHECK(keys_of("[{u8: {value: 0x10, mask: 0xf0, at: -13}}]") == "00000010/000000f0 at -16");
  CHECK(keys_of("[{u32: {value: 0x12345678, mask: 0xffffffff, at: nexthdr+4}}]") == "12345678/ffffffff at nexthdr+4");
  CHECK(keys_of("[{u16: {value: 0x10, mask: 0xff, at: \"nexthdr+2\"}}]") == "00000010/000000ff at nexthdr+0");
  CHECK(keys_of("[{u8: {value: 1, mask: 0x0f, at: nexthdr+3}}]") == "00000001/0000000f at nexthdr+0");
}

TEST_CASE("u32: match words are struct tc_u32_key, mask and value in network order") {
  Options o = parse_ok("{match: [{ip: {dst: 10.0.0.1}}, {tcp: {dst: 22}}]}");
  CHECK(*o.words(static_cast<uint16_t>(field("match"))) ==
        Words{htonl(0xFFFFFFFF), htonl(0x0A000001), 16, 0, htonl(0x0000FFFF), htonl(0x00000016), 0, 0xFFFFFFFF});
}

TEST_CASE("u32: dump prints raw keys that read back to the same words") {
  Options o = parse_ok(
      "{match: [{ether: {dst: 02:00:00:00:00:01}}, {tcp: {dst: 22}}, {u32: {value: 1, mask: 1, at: 8, offmask: 0x3}}],"
      " hashkey: {mask: 0x000000ff, at: 12}, offset: {at: 0, mask: 0x0f00, shift: 6, eat: true}, link: \"2:\", ht: "
      "\"3:5:\","
      " mark: {value: 1, mask: 0xff}, skip_hw: true}");
  std::string text = emit(o);
  // Quoting is the writer's business: compare without quotes.
  std::string bare = text;
  std::erase(bare, '"');
  CHECK(bare ==
        "{ht: 3:5:, match: [{u32: {value: 0x00000200, mask: 0x0000ffff, at: -16}}, "
        "{u32: {value: 0x00000001, mask: 0xffffffff, at: -12}}, "
        "{u32: {value: 0x00000016, mask: 0x0000ffff, at: nexthdr+0}}, "
        "{u32: {value: 0x00000001, mask: 0x00000001, at: 8, offmask: 0x00000003}}], "
        "link: 2:, hashkey: {mask: 0x000000ff, at: 12}, offset: {at: 0, mask: 0x0f00, shift: 6, eat: true}, "
        "mark: {value: 0x1, mask: 0xff}, skip_hw: true}");
  CHECK(parse_ok(text) == o);
  CHECK(describe_field(u32.fields[field("offset")], *o.get(static_cast<uint16_t>(field("offset")))) ==
        "at 0 mask 0f00 shift 6 eat");
  CHECK(describe_field(u32.fields[field("hashkey")], *o.get(static_cast<uint16_t>(field("hashkey")))) ==
        "mask 000000ff at 12");
  CHECK(describe_field(u32.fields[field("ht")], *o.get(static_cast<uint16_t>(field("ht")))) == "3:5:");
}

TEST_CASE("u32: golden TCA_OPTIONS bodies") {
  // tc: handle 2:3:5 u32 ht 2:3: match ip dst 10.0.0.3 flowid 1:10 sent
  // HASH 00203000 and this SEL (classid is the generic codec's); tcsync
  // adds LINK 0 (see encode).
  Filter a = filter("{ht: \"2:3:\", match: [{ip: {dst: 10.0.0.3}}]}", 0x00203005);
  CHECK(hex(encode(a)) ==
        "0800030000000000"
        "0800020000302000"
        "2400050001000100000000000000000000000000ffffffff0a00000310000000"
        "00000000");
  // tc: u32 link 2: hashkey mask 0x000000ff at 16 match ip dst 10.0.0.0/24
  // (no flowid: not terminal): byte for byte what tc sent.
  Filter b = filter("{link: \"2:\", hashkey: {mask: 0x000000ff, at: 16}, match: [{ip: {dst: 10.0.0.0/24}}]}",
                    0x00000001, std::nullopt);
  CHECK(hex(encode(b)) ==
        "0800030000002000"
        "240005000000010000000000000010000000"
        "00ffffffff000a0000001000000000000000");
  // tc: handle 2: u32 divisor 256
  Filter t = filter("{divisor: 256}", 0x00200000, std::nullopt);
  CHECK(hex(encode(t)) == "0800040000010000");
  // offset, mark, indev and flags.
  Filter c = filter(
      "{match: [{u32: {value: 0, mask: 0}}], offset: {at: 0, mask: 0x0f00, shift: 6, plus: 0, eat: true}, mark: 7, "
      "indev: eth0, skip_sw: true}",
      0x00000002);
  CHECK(hex(encode(c)) ==
        "0800030000000000"
        "24000500"
        "0f0601000f000000000000000000000000000000000000000000000000000000"
        "10000a0007000000ffffffff00000000"
        "090008006574683000000000"
        "08000b0002000000");
}

TEST_CASE("u32: decode(encode(x)) encodes to the same bytes") {
  const char* bodies[] = {
      "{match: [{ip: {src: 10.0.0.0/8, dport: 22}}]}",
      "{ht: \"2:7:\", match: [{ether: {src: 02:00:00:00:00:02}}, {udp: {dst: 53}}]}",
      "{link: \"2:\", hashkey: {mask: 0x000000ff, at: -4}, offset: {at: -2, mask: 0x0f00, shift: 6, plus: 4, eat: "
      "true}, match: [{u8: {value: 6, mask: 0xff, at: 9}}]}",
      "{mark: {value: 0x10, mask: 0xf0}, indev: v1, skip_hw: true}",
      "{divisor: 16}",
  };
  uint32_t handles[] = {0x00000001, 0x00207003, 0x00000004, 0x00000005, 0x00300000};
  for (int i = 0; i < 5; ++i) {
    INFO(bodies[i]);
    bool table = i == 4;
    Filter f = filter(bodies[i], handles[i], table || i == 2 ? std::nullopt : std::optional<uint32_t>(0x00010010));
    auto bytes = encode(f);
    Filter back;
    back.key.handle = handles[i];
    back.classid = f.classid;
    // The classid travels in the options too (the filter codec adds it):
    // decode reads TC_U32_TERMINAL against it.
    auto with_classid = bytes;
    if (f.classid)
      for (uint8_t b : unhex("08000100 10000100")) with_classid.push_back(b);
    u32.decode(with_classid, KindCtx{handles[i]}, back.opts);
    CHECK(back.opts == f.opts);
    CHECK(hex(encode(back)) == hex(bytes));
  }
}

TEST_CASE("u32: decoding a kernel dump") {
  // `tc filter add ... prio 5 handle ::1 u32 match ip dst 10.0.0.1 flowid 1:20`
  // as the 6.18 kernel dumps it: SEL, HASH 800:, CLASSID, FLAGS not_in_hw.
  auto opts = unhex(
      "2400 0500 01000100000000000000000000000000ffffffff0a00000110000000"
      "00000000"
      "0800 0200 00000080"
      "0800 0100 20000100"
      "0800 0b00 08000000");
  Options o;
  u32.decode(opts, KindCtx{0x80000001}, o);
  CHECK(o == parse_ok("{match: [{ip: {dst: 10.0.0.1}}]}"));
  FilterKey k{.handle = 0x80000001};
  CHECK(shared_tables(u32)->canonical_key(k, o));
  CHECK(k.handle == 0x00000001);

  // The same rule made link-only (no TC_U32_TERMINAL) in table 2:3:, skip_hw.
  opts = unhex(
      "2400 0500 00000100000000000000000000000000ffffffff0a00000110000000"
      "00000000"
      "0800 0200 00302000"
      "0800 0300 00004000"
      "0800 0b00 09000000");
  Options p;
  u32.decode(opts, KindCtx{0x00203001}, p);
  CHECK(p == parse_ok("{ht: \"2:3:\", match: [{ip: {dst: 10.0.0.1}}], link: \"4:\", skip_hw: true, terminal: false}"));
  k.handle = 0x00203001;
  CHECK(shared_tables(u32)->canonical_key(k, p));
  CHECK(k.handle == 0x00203001);

  // The implicit root table 800: (divisor 1) is not a rule; table 2: is.
  Options root, table;
  u32.decode(unhex("0800 0400 01000000"), KindCtx{0x80000000}, root);
  k.handle = 0x80000000;
  CHECK_FALSE(shared_tables(u32)->canonical_key(k, root));
  k.handle = 0x80100000;  // the second pref's root, 801:
  CHECK_FALSE(shared_tables(u32)->canonical_key(k, root));
  u32.decode(unhex("0800 0400 00010000 0800 0900 00000000"), KindCtx{0x00200000}, table);  // an unknown attribute too
  CHECK(table == parse_ok("{divisor: 256}"));
  k.handle = 0x00200000;
  CHECK(shared_tables(u32)->canonical_key(k, table));
  CHECK(k.handle == 0x00200000);
}

TEST_CASE("u32: handle spaces") {
  uint32_t fixed = 1, mask = 1;
  filter_ops(u32).handle_space(parse_ok("{match: [{ip: {dport: 22}}]}"), fixed, mask);
  CHECK((fixed == 0 && mask == 0xFFF));
  filter_ops(u32).handle_space(parse_ok("{ht: \"2:5:\"}"), fixed, mask);
  CHECK((fixed == 0x00205000 && mask == 0xFFF));
  // tc: ht 2: sample ip dst 10.0.0.7 divisor 256 -> TCA_U32_HASH 00207000;
  // sample u32 0x12345678 0xffff0000 at 0 divisor 16 -> bucket 4.
  filter_ops(u32).handle_space(parse_ok("{ht: \"2:\", sample: {ip: {dst: 10.0.0.7}}}"), fixed, mask);
  CHECK((fixed == 0x00207000 && mask == 0xFFF));
  filter_ops(u32).handle_space(
      parse_ok("{ht: \"2:\", sample: {u32: {value: 0x12345678, mask: 0xffff0000}, divisor: 16}}"), fixed, mask);
  CHECK((fixed == 0x00204000 && mask == 0xFFF));
  filter_ops(u32).handle_space(parse_ok("{divisor: 256}"), fixed, mask);
  CHECK(mask == 0);
}

TEST_CASE("u32: normalize folds sample into ht and derives terminal") {
  Filter f =
      filter("{ht: \"2:\", sample: {ip: {dst: 10.0.0.7}, divisor: 256}, match: [{ip: {dst: 10.0.0.7}}]}", 0x00207001);
  CHECK(f.opts == parse_ok("{ht: \"2:7:\", match: [{ip: {dst: 10.0.0.7}}]}"));
  // A handle in a table implies `ht`, as the kernel will report it.
  f = filter("{match: [{ip: {dport: 22}}]}", 0x00203001);
  CHECK(f.opts == parse_ok("{ht: \"2:3:\", match: [{ip: {dport: 22}}]}"));
  // Rules without classid or actions are not terminal; `false` flags drop.
  f = filter("{link: \"2:\", skip_hw: false, match: []}", 0x00000001, std::nullopt);
  CHECK(emit(f.opts) == "{link: \"2:\", terminal: false}");
  f = filter("{terminal: true}", 0x00000001, std::nullopt);  // classid 0 leaves such a rule
  CHECK(emit(f.opts) == "{terminal: true}");
  f = filter("{terminal: false}", 0x00000001);  // tc's replace leaves such a rule
  CHECK(emit(f.opts) == "{terminal: false}");
  f = filter("{terminal: true}", 0x00000001);
  CHECK(emit(f.opts) == "{}");
}

TEST_CASE("u32: selector errors, located") {
  CHECK(load_errors("{match: [{ip: {dprt: 22}}]}") ==
        "u32.yaml:1:16: error: unknown 'ip' match 'dprt': expected one of src, dst, protocol, tos, dsfield, "
        "precedence, ihl, dport, sport, "
        "icmp_type, icmp_code, nofrag, firstfrag, df, mf (did you mean 'dport'?)\n"
        "  {match: [{ip: {dprt: 22}}]}\n"
        "                 ^\n");
  CHECK(load_errors("{match: [{ipv4: {dport: 22}}]}") ==
        "u32.yaml:1:11: error: unknown selector 'ipv4' in 'match': expected one of ip, ip6, tcp, udp, icmp, ether, "
        "u32, u16, u8 (did you mean 'ip'?)\n"
        "  {match: [{ipv4: {dport: 22}}]}\n"
        "            ^\n");
  CHECK(load_errors("{match: [{ip: {dport: 70000}}]}") ==
        "u32.yaml:1:23: error: 'ip dport' must be a number from 0 to 65535, or {value: N, mask: M}, not '70000'\n"
        "  {match: [{ip: {dport: 70000}}]}\n"
        "                        ^\n");
  CHECK(load_errors("{match: [{ip: {src: 10.0.0.300}}]}") ==
        "u32.yaml:1:21: error: 'ip src' must be an IPv4 address or prefix such as 10.0.0.0/8, not '10.0.0.300'\n"
        "  {match: [{ip: {src: 10.0.0.300}}]}\n"
        "                      ^\n");
  // tc refuses the same ("Illegal match"): 0xb8 and 0x20 differ under 0xe0.
  CHECK(load_errors("{match: [{ip: {dsfield: {value: 0xb8, mask: 0xfc}, precedence: {value: 0x20, mask: 0xe0}}}]}") ==
        "u32.yaml:1:52: error: 'ip precedence' contradicts an earlier match on the same bits\n"
        "  {match: [{ip: {dsfield: {value: 0xb8, mask: 0xfc}, precedence: {value: 0x20, mask: 0xe0}}}]}\n"
        "                                                     ^\n");
  CHECK(load_errors("{match: [{u32: {value: 1, at: 3}}]}") ==
        "u32.yaml:1:31: error: 'at' of a u32 match must be a multiple of 4, not 3\n"
        "  {match: [{u32: {value: 1, at: 3}}]}\n"
        "                                ^\n");
  CHECK(load_errors("{match: [{ip: {dport: 22}, tcp: {dst: 22}}]}") ==
        "u32.yaml:1:10: error: a 'match' entry is one selector such as {ip: {dport: 22}}: one of ip, ip6, tcp, udp, "
        "icmp, ether, u32, u16, u8\n"
        "  {match: [{ip: {dport: 22}, tcp: {dst: 22}}]}\n"
        "           ^\n");
  CHECK(load_errors("{match: {ip: {dport: 22}}}") ==
        "u32.yaml:1:9: error: 'match' must be a list of selectors such as [{ip: {dport: 22}}], not a mapping\n"
        "  {match: {ip: {dport: 22}}}\n"
        "          ^\n");
}

TEST_CASE("u32: table and rule errors, located") {
  // 800: and above: a table the file declares (check_device refuses others).
  CHECK(load_errors("{ht: \"900:\"}") == "");
  CHECK(load_errors("{ht: \"0:\"}") ==
        "u32.yaml:1:6: error: 'ht' must name a table from 1: to fff:, not '0:' (leave 'ht' out for the root table)\n"
        "  {ht: \"0:\"}\n"
        "       ^\n");
  CHECK(load_errors("{link: \"2:1:\"}") ==
        "u32.yaml:1:8: error: 'link' must be a hash table such as 2:, not '2:1:'\n"
        "  {link: \"2:1:\"}\n"
        "         ^\n");
  CHECK(load_errors("{sample: {ip: {dst: 10.0.0.7}}}") ==
        "u32.yaml:1:10: error: 'sample' needs 'ht': the hash table whose bucket it picks\n"
        "  {sample: {ip: {dst: 10.0.0.7}}}\n"
        "           ^\n");
  CHECK(load_errors("{sample: {ip: {dst: 10.0.0.0/8, dport: 80}}, ht: \"2:\"}") ==
        "u32.yaml:1:10: error: 'sample' must come to exactly one 32-bit key, not 2\n"
        "  {sample: {ip: {dst: 10.0.0.0/8, dport: 80}}, ht: \"2:\"}\n"
        "           ^\n");
  CHECK(load_errors("{divisor: 100}", 0x00200000, std::nullopt) ==
        "u32.yaml:1:11: error: u32 'divisor' must be a power of two from 1 to 256, not 100\n"
        "  {divisor: 100}\n"
        "            ^\n");
  CHECK(
      load_errors("{divisor: 16, match: [{ip: {dport: 22}}]}", 0x00200000, std::nullopt) ==
      "u32.yaml:1:22: error: a u32 hash table ('divisor') takes no 'match': it only holds rules that name it in 'ht'\n"
      "  {divisor: 16, match: [{ip: {dport: 22}}]}\n"
      "                       ^\n");
  CHECK(load_errors("{divisor: 16}", 0x00200000) ==
        "tcsync: error: a u32 hash table ('divisor') takes no classid, actions or police: give them to the rules in "
        "it\n");
  CHECK(load_errors("{divisor: 16}", 0x90000000, std::nullopt) == "");  // 800: and above: the file's too
  CHECK(load_errors("{divisor: 16}", 0x00201000, std::nullopt) ==
        "tcsync: error: a u32 hash table's handle is a table id such as 2:, not 2:1:\n");
  CHECK(load_errors("{ht: \"2:5:\"}", 0x00203001) ==
        "tcsync: error: handle 2:3:1 is not in the table 'ht' names (2:5:): give it as 2:5:1\n");
  CHECK(load_errors("{ht: \"2:\"}", 0x00200000) ==
        "tcsync: error: a u32 rule's handle needs a node id, such as 2::1 (only hash tables, with 'divisor', end in "
        "':')\n");
  CHECK(load_errors("{skip_hw: true, skip_sw: true}") ==
        "u32.yaml:1:26: error: skip_hw and skip_sw exclude each other\n"
        "  {skip_hw: true, skip_sw: true}\n"
        "                           ^\n");
  CHECK(load_errors("{terminal: false}", 1) == "");  // as tc's replace leaves a rule
}

// The kernel lists both chains' tables under each (u32_walk picks tables by
// pref), but each list has its own root table and the dump tells them apart
// (model/shared_tables.h): the file may say what the kernel holds.
TEST_CASE("u32: one pref in two chains of a qdisc is two lists") {
  std::string errs = tcsync::test::load_errors(R"(version: 1
devices:
  v0:
    qdiscs: [{kind: clsact}]
    filters:
      - {parent: ingress, chain: 1, pref: 10, protocol: ip, u32: {mark: 0xa, match: [{u32: {value: 0, mask: 0, at: 0}}]}}
      - {parent: ingress, chain: 2, pref: 10, protocol: ip, u32: {mark: 0xb, match: [{u32: {value: 0, mask: 0, at: 0}}]}}
      - {parent: ingress, chain: 2, pref: 11, protocol: ip, u32: {mark: 0xc, match: [{u32: {value: 0, mask: 0, at: 0}}]}}
)");
  CHECK(errs == "");
}
