// Never silent: attributes no kind table reads are kept as the kernel's
// bytes (model.h Raw), written by dump, read back by the loader, sent again
// by the encoder, and compared by the differ.
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include <catch2/catch.hpp>

#include "base/hex.h"
#include "codec/stab.h"
#include "codec/tc_codec.h"
#include "file/yaml_writer.h"
#include "model/size_table.h"
#include "plan/differ.h"
#include "qdisc_test_util.h"
#include "test_util.h"

using namespace tcsync;
using namespace tcsync::test;

namespace {

// An RTM_NEWQDISC for `tbf` as the kernel might report it: the table's own
// TCA_TBF_PARMS, an attribute of a newer kernel inside TCA_OPTIONS (type 42),
// and TCA_STAB beside TCA_KIND.
std::vector<uint8_t> tbf_message(bool with_unread) {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  size_t off = w.begin_message(RTM_NEWQDISC, 0, 0);
  tcmsg t{};
  t.tcm_ifindex = 2;
  t.tcm_handle = 0x10000;
  t.tcm_parent = TC_H_ROOT;
  w.put_struct(t);
  w.attr_str(TCA_KIND, "tbf");
  size_t nest = w.nest_begin(TCA_OPTIONS);
  tc_tbf_qopt q{};
  q.rate.rate = 125000;
  q.limit = 10000;
  q.buffer = 1000;
  w.attr(TCA_TBF_PARMS, &q, sizeof q);
  w.attr_u64(TCA_TBF_PAD, 0);  // padding the kernel adds: not configuration
  if (with_unread) w.attr_u32(42, 7);
  w.nest_end(nest);
  if (with_unread) {
    size_t stab = w.nest_begin(TCA_STAB);
    tc_sizespec s{};
    s.linklayer = 1;
    s.overhead = 34;
    w.attr(TCA_STAB_BASE, &s, sizeof s);
    w.nest_end(stab);
  }
  w.attr_u8(TCA_HW_OFFLOAD, 0);  // reported state, not configuration
  w.end_message(off);
  return buf;
}

}  // namespace

TEST_CASE("raw: unread attributes are kept, written, loaded and sent back as they were") {
  Qdisc q;
  Decoded info;
  REQUIRE(decode_qdisc(tbf_message(true), nullptr, q, info));
  REQUIRE(q.ops);
  CHECK(q.opts.num(0) == 125000u);  // the table still reads what it knows
  // Exactly the unknown attribute: not TCA_TBF_PARMS, not the padding.
  CHECK(to_hex(q.raw.options()) == "08002a0007000000");
  CHECK(attr_types(q.raw.attrs()) == "8");

  std::string y;
  YamlOut out(y);
  write_qdisc(q, out);
  CHECK(y.find("raw_options: \"08002a0007000000\"") != std::string::npos);
  // The attribute beside TCA_KIND is a size table: read, and written as the file spells it.
  CHECK(y.find("stab: {linklayer: ethernet, overhead: 34}") != std::string::npos);
  CHECK(y.find("raw_attrs") == std::string::npos);

  State s = load_ok("version: 1\ndevices:\n  v0:\n    qdiscs:\n      - " + y + "\n");
  const Qdisc& back = s.devices.at(0).qdiscs.at(0);
  CHECK(back.raw == q.raw);

  // Encoded: the unread bytes inside TCA_OPTIONS and beside TCA_KIND.
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  Diagnostics d;
  encode_qdisc(w, Op::Add, back, 2, nullptr, d);
  REQUIRE_FALSE(d.has_errors());
  Qdisc again;
  REQUIRE(decode_qdisc(buf, nullptr, again, info));
  CHECK(again.raw == q.raw);
}

TEST_CASE("raw: a state with unread attributes differs from a file without them") {
  Qdisc have, plain;
  Decoded info;
  REQUIRE(decode_qdisc(tbf_message(true), nullptr, have, info));
  REQUIRE(decode_qdisc(tbf_message(false), nullptr, plain, info));
  CHECK(plain.raw.empty());
  std::vector<std::string> why;
  diff_raw(plain.raw, have.raw, why);
  REQUIRE(why.size() == 2);
  CHECK(why[0] == "unread options attrs 42 -> (none)");
  CHECK(why[1] == "stab {linklayer: ethernet, overhead: 34} -> (none)");
  why.clear();
  diff_raw(have.raw, have.raw, why);
  CHECK(why.empty());
}

TEST_CASE("raw: a kind without a table keeps its whole options") {
  std::vector<uint8_t> msg = tbf_message(false);
  // Rename the kind in place: "tbf" -> "zzz", a kind tcsync has no table for.
  auto at = std::search(msg.begin(), msg.end(), std::begin("tbf"), std::end("tbf") - 1);
  REQUIRE(at != msg.end());
  std::copy_n("zzz", 3, at);
  Qdisc q;
  Decoded info;
  REQUIRE(decode_qdisc(msg, nullptr, q, info));
  CHECK_FALSE(q.ops);
  CHECK(q.kind == "zzz");
  CHECK(attr_types(q.raw.options()) == std::to_string(TCA_TBF_PARMS) + ", " + std::to_string(TCA_TBF_PAD));
}

TEST_CASE("raw: hex that is not whole attributes is an error at its place") {
  using Catch::Matchers::StartsWith;
  CHECK_THAT(
      load_errors(
          "version: 1\ndevices:\n  v0:\n    qdiscs:\n      - {kind: pfifo, handle: \"1:\", raw_attrs: \"0800\"}\n"),
      StartsWith("t.yaml:5:48: error: 'raw_attrs' is not a run of netlink attributes (the lengths do not add up)\n"));
  CHECK_THAT(
      load_errors(
          "version: 1\ndevices:\n  v0:\n    qdiscs:\n      - {kind: pfifo, handle: \"1:\", raw_attrs: \"08z0\"}\n"),
      StartsWith("t.yaml:5:48: error: 'raw_attrs' must be hex digits, two a byte (the kernel's attribute bytes, as "
                 "dump writes them)\n"));
}

TEST_CASE("raw: a file may name a kind without a table when raw_options holds its options") {
  // A kind no table describes (a newer kernel's): its options travel as bytes.
  State s = load_ok(
      "version: 1\ndevices:\n  v0:\n    qdiscs:\n"
      "      - {kind: nextqdisc, handle: \"1:\", raw_options: \"0500010003000000\"}\n"
      "    filters:\n"
      "      - {parent: \"1:\", pref: 1, protocol: all, handle: \"0x1\", tcindex: {raw_options: "
      "\"0800010001000000\"},\n"
      "         actions: [{xt: {raw_options: \"\"}, raw_attrs: \"0800080001000000\"}]}\n");
  const Device& dev = s.devices.at(0);
  const Qdisc& q = dev.qdiscs.at(0);
  CHECK_FALSE(q.ops);
  CHECK(q.kind == "nextqdisc");
  CHECK(to_hex(q.raw.options()) == "0500010003000000");
  const Filter& f = dev.filters.at(0);
  CHECK_FALSE(f.ops);
  CHECK(f.kind == "tcindex");
  CHECK(to_hex(f.raw.options()) == "0800010001000000");
  REQUIRE(f.actions.size() == 1);
  CHECK(f.actions[0].kind == "xt");
  CHECK(to_hex(f.actions[0].raw.attrs()) == "0800080001000000");

  // Sent as they were: TCA_OPTIONS holds exactly the file's bytes.
  Qdisc back = read_back(q);
  CHECK(back.kind == "nextqdisc");
  CHECK(back.raw == q.raw);

  using Catch::Matchers::Contains;
  CHECK_THAT(load_errors("version: 1\ndevices:\n  v0:\n    qdiscs:\n      - {kind: nextqdisc, handle: \"1:\", bands: "
                         "3, raw_options: \"\"}\n"),
             Contains("unknown key 'bands' in nextqdisc qdisc: tcsync has no table for this kind; raw_options (as dump "
                      "writes it) holds its options"));
  CHECK_THAT(load_errors("version: 1\ndevices:\n  v0:\n    qdiscs:\n      - {kind: nextqdisc, handle: \"1:\"}\n"),
             Contains("unknown qdisc kind 'nextqdisc'"));
}

TEST_CASE("raw: a size table the kernel keeps but does not report is computed as tc computes it") {
  // `stab linklayer atm overhead 10 mpu 64`: the spec tc sent (and the
  // kernel reports), and entries of the 512 tc sent with it (captured with
  // strace from tc 6.1: 106 up to 96 bytes, 2279 for 2048).
  auto t = stab_table(2, 0, TC_LINKLAYER_ATM, 64, 512);
  REQUIRE(t.size() == 512);
  CHECK(t[0] == 106);
  CHECK(t[23] == 106);  // 96 bytes: two cells
  CHECK(t[24] == 159);  // 100 bytes: three
  CHECK(t[511] == 2279);
  CHECK(stab_table(0, 0, TC_LINKLAYER_ETHERNET, 64, 4) == std::vector<uint16_t>{64, 64, 64, 64});

  // A dumped TCA_STAB (spec only) gets its table; one without a table
  // (ethernet, no mpu: tsize 0) is left as it is.
  std::vector<uint8_t> attrs;
  MsgWriter w(attrs);
  size_t nest = w.nest_begin(TCA_STAB);
  tc_sizespec s{};
  s.cell_log = 2;
  s.linklayer = TC_LINKLAYER_ATM;
  s.overhead = 10;
  s.mpu = 64;
  s.mtu = 2047;
  s.tsize = 512;
  w.attr(TCA_STAB_BASE, &s, sizeof s);
  w.nest_end(nest);
  auto full = with_stab_table(attrs);
  CHECK(full.size() == attrs.size() + 4 + 1024);
  CHECK(with_stab_table(full) == full);
  s.tsize = 0;
  std::vector<uint8_t> eth;
  MsgWriter w2(eth);
  nest = w2.nest_begin(TCA_STAB);
  w2.attr(TCA_STAB_BASE, &s, sizeof s);
  w2.nest_end(nest);
  CHECK(with_stab_table(eth) == eth);

  // The most cells a TCA_STAB nest carries (32748) still get their table; a
  // spec naming more was never a kernel's and is sent as it is (the fuzzer
  // found a dump of tsize 0xb5b5b5b5 building a 6 GB table).
  for (uint32_t tsize : {32748u, 32749u, 0xB5B5B5B5u}) {
    s.tsize = tsize;
    std::vector<uint8_t> big;
    MsgWriter w3(big);
    nest = w3.nest_begin(TCA_STAB);
    w3.attr(TCA_STAB_BASE, &s, sizeof s);
    w3.nest_end(nest);
    auto out = with_stab_table(big);
    if (tsize == 32748u) {
      CHECK(out.size() == big.size() + 4 + 2 * 32748);
      uint16_t nest_len;
      std::memcpy(&nest_len, out.data(), 2);
      CHECK(nest_len == out.size());  // the whole nest's length fits its 16 bits
    } else
      CHECK(out == big);
  }

  // A nest with bytes no attribute header covers after its spec: the
  // kernel's parser stops there, so a table after them would go unread; the
  // nest is sent as it is (the fuzzer's input tbf-stab-stray-tail).
  s.tsize = 1;
  std::vector<uint8_t> stray;
  MsgWriter w4(stray);
  nest = w4.nest_begin(TCA_STAB);
  w4.attr(TCA_STAB_BASE, &s, sizeof s);
  const uint8_t zeros[4] = {};
  w4.put_raw(zeros, sizeof zeros);
  w4.nest_end(nest);
  CHECK(with_stab_table(stray) == stray);
}
