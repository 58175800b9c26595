// The basic classifier and its ematch trees: tc's bytes, the canonical text,
// decoding what the kernel sends back, and errors inside the expression.
//
// Golden bodies: the TCA_BASIC_EMATCHES attribute of the TCA_OPTIONS payload
// tc (iproute2 6.1, lab) sent for `tc filter add dev v0 ingress pref N
// protocol all basic match '...'` (strace -e sendmsg -x); TCA_BASIC_CLASSID
// and TCA_BASIC_ACT follow it and are the generic codec's.
#include <linux/pkt_cls.h>

#include <catch2/catch.hpp>

#include "kinds/filter/ematch.h"
#include "kinds/registry.h"
#include "model/kind.h"
#include "model/model.h"
#include "netlink/wire.h"
#include "test_util.h"

using namespace tcsync;
using tcsync::test::hex;
using tcsync::test::load_errors;
using tcsync::test::load_ok;
using tcsync::test::unhex;

namespace {

std::string file_with(const std::string& match) {
  return "version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n    filters:\n"
         "      - {parent: ingress, pref: 1, protocol: all, basic: {match: \"" +
         match + "\"}}\n";
}

// The canonical text of an expression (test failures show the error).
std::string canon(std::string_view s) {
  ematch::ParseError err;
  auto c = ematch::canonical(s, err);
  return c ? *c : "error at " + std::to_string(err.offset) + ": " + err.message;
}

std::string body(std::string_view match) {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  Options o;
  o.set(0, std::string(match));
  kFilterBasic.encode(o, KindCtx{}, w);
  return hex(buf);
}

std::string decoded(std::string_view body_hex) {
  Options o;
  kFilterBasic.decode(unhex(body_hex), KindCtx{}, o);
  const std::string* s = o.str(0);
  return s ? *s : "<absent>";
}

constexpr int kMaxDepthForTest = ematch::kMaxDepth;

struct Golden {
  const char* tc_words;   // what tc was given
  const char* canonical;  // tcsync's text for it
  const char* bytes;      // TCA_BASIC_EMATCHES as tc sent it
};

const Golden kGolden[] = {
    {"cmp(u16 at 0 layer link mask 0xffff eq 0x800)", "cmp(u16 at 0 layer link mask 0xffff eq 2048)",
     "28000200"
     "0800010001000000"
     "1c000200"
     "18000100"
     "0000010000000000"
     "00080000ffff000000000200"},
    // Nesting: tc numbers the top sequence (cmp, container->3, container->7),
    // then the first container's sequence (meta, not-container->5), its
    // child (u32, meta), then the second container's (cmp).
    {"cmp(u8 at 9 eq 6) and (meta(nf_mark eq 1) or not (u32(u32 0x01020304 0xffffffff at nexthdr+4) and meta(pkt_len "
     "gt 100))) and (cmp(u32 at 0 layer transport trans lt 3))",
     "cmp(u8 at 9 layer network eq 6) and (meta(nf_mark eq 1) or not (u32(u32 0x1020304 0xffffffff at nexthdr+4) and "
     "meta(pkt_len gt 100))) and (cmp(u32 at 0 layer transport trans lt 3))",
     "dc000200"
     "0800010008000000"
     "d0000200"
     "18000100"
     "0000010001000000"
     "060000000000000009000101"
     "10000200"
     "0000000001000000"
     "03000000"
     "10000300"
     "0000000000000000"
     "07000000"
     "28000400"
     "0000040002000000"
     "0c0001000c10000000100000"
     "0800020000000000"
     "0800030001000000"
     "10000500"
     "0000000004000000"
     "05000000"
     "1c000600"
     "0000030001000000"
     "ffffffff0102030404000000ffffffff"
     "28000700"
     "0000040000000000"
     "0c00010009100001"
     "00100000"
     "0800020000000000"
     "0800030064000000"
     "18000800"
     "0000010000000000"
     "030000000000000000001422"},
    {"meta(nf_mark eq 5)", "meta(nf_mark eq 5)",
     "38000200"
     "0800010001000000"
     "2c000200"
     "28000100"
     "0000040000000000"
     "0c0001000c10000000100000"
     "0800020000000000"
     "0800030005000000"},
    {"not meta(priority mask 0xff gt 3) and meta(vlan shift 2 lt 7)",
     "not meta(priority mask 0xff gt 3) and meta(vlan shift 2 lt 7)",
     "60000200"
     "0800010002000000"
     "54000200"
     "28000100"
     "0000040005000000"
     "0c00010006100001"
     "00100000"
     "08000200ff000000"
     "0800030003000000"
     "28000200"
     "0000040000000000"
     "0c0001002e100202"
     "00100000"
     "0800020000000000"
     "0800030007000000"},
    // u8 and u16 keys shifted into the word at OFFSET & ~3, as tc does.
    {"u32(u16 0x800 0xffff at 12) or u32(u8 0x45 0xff at 1)", "u32(u16 0x800 0xffff at 12) or u32(u8 0x45 0xff at 1)",
     "48000200"
     "0800010002000000"
     "3c000200"
     "1c000100"
     "0000030002000000"
     "ffff0000080000000c00000000000000"
     "1c000200"
     "0000030000000000"
     "00ff00000045000000000000"
     "00000000"},
    {"meta(rt_classid eq 3) or meta(tc_index eq 4) or meta(pkt_type eq 0) or meta(protocol eq 0x800) or meta(fwmark eq "
     "9)",
     "meta(rt_classid eq 3) or meta(tc_index eq 4) or meta(pkt_type eq 0) or meta(protocol eq 2048) or meta(nf_mark eq "
     "9)",
     "d8000200"
     "0800010005000000"
     "cc000200"
     "28000100"
     "0000040002000000"
     "0c0001000e10000000100000"
     "0800020000000000"
     "0800030003000000"
     "28000200"
     "0000040002000000"
     "0c0001000d10000000100000"
     "0800020000000000"
     "0800030004000000"
     "28000300"
     "0000040002000000"
     "0c0001000810000000100000"
     "0800020000000000"
     "0800030000000000"
     "28000400"
     "0000040002000000"
     "0c0001000710000000100000"
     "0800020000000000"
     "0800030000080000"
     "28000500"
     "0000040000000000"
     "0c0001000c10000000100000"
     "0800020000000000"
     "0800030009000000"},
    // Parentheses around one match are a container all the same.
    {"(cmp(u8 at 0 eq 1))", "(cmp(u8 at 0 layer network eq 1))",
     "38000200"
     "0800010002000000"
     "2c000200"
     "10000100"
     "0000000000000000"
     "01000000"
     "18000200"
     "0000010000000000"
     "010000000000000000000101"},
    {"meta(nf_mark eq priority)", "meta(nf_mark eq priority)",
     "38000200"
     "0800010001000000"
     "2c000200"
     "28000100"
     "0000040000000000"
     "0c0001000c10000006100000"
     "0800020000000000"
     "0800030000000000"},
    // nbyte: tc pads the needle (addraw_l) and the kernel reports it so.
    {"nbyte(\"abc\" at 0 layer 1)", "nbyte(\"abc\" at 0 layer network)",
     "24000200"
     "0800010001000000"
     "18000200"
     "14000100"
     "0000020000000000"
     "0000031061626300"},
};

}  // namespace

TEST_CASE("basic: ematch trees are tc's bytes, and decode back to the same text") {
  for (const Golden& g : kGolden) {
    INFO(g.tc_words);
    CHECK(canon(g.tc_words) == g.canonical);
    CHECK(body(g.canonical) == g.bytes);
    CHECK(decoded(g.bytes) == g.canonical);
  }
}

TEST_CASE("basic: the loader keeps the canonical text, and no match is no option") {
  State s = load_ok(file_with("u32(u16 0x0800 0xffff at 12)  AND  NOT meta(fwmark mask 0xff eq 010)"));
  auto& f = s.devices[0].filters[0];
  REQUIRE(f.opts.str(0));
  CHECK(*f.opts.str(0) == "u32(u16 0x800 0xffff at 12) and not meta(nf_mark mask 0xff eq 8)");
  CHECK(f.key.handle == 1u);  // cls_basic numbers filters 1, 2, ... too
  State e = load_ok(
      "version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n    filters:\n"
      "      - {parent: ingress, pref: 1, protocol: all, basic: {}, classid: \"1:1\"}\n");
  CHECK(e.devices[0].filters[0].opts.empty());
  // The kernel reports an empty tree for a filter without one.
  CHECK(decoded("0c000200"
                "0800010000000000") == "<absent>");
}

TEST_CASE("basic: canonical text: spellings, u32 widths, strings, raw kinds") {
  CHECK(canon("cmp(u32 at 4 layer t mask 0xff00 gt 07)") == "cmp(u32 at 4 layer transport mask 0xff00 gt 7)");
  CHECK(canon("cmp(u8 at 1 layer 2 eq 1)") == "cmp(u8 at 1 layer transport eq 1)");
  CHECK(canon("u32(u32 0x00000800 0x0000ffff at 12)") == "u32(u16 0x800 0xffff at 14)");
  CHECK(canon("u32(u16 0x800 0xffff at 14)") == "u32(u16 0x800 0xffff at 14)");
  CHECK(canon("u32(u16 0x6 0xff at 8)") == "u32(u8 0x6 0xff at 9)");  // mask fits one byte
  CHECK(canon("u32(u32 0 0 at 0)") == "u32(u32 0x0 0x0 at 0)");
  CHECK(canon("u32(u8 1 0xff at nexthdr+2)") == "u32(u8 0x1 0xff at nexthdr+2)");
  CHECK(canon("u32(u32 0xffffffff 0xff at 0)") == "u32(u8 0xff 0xff at 3)");  // tc masks the key
  CHECK(canon("meta(dev eq \"v0\")") == "meta(dev eq \"v0\")");
  CHECK(canon("meta(dev eq \"a\\\"b\\x01\\101\")") == "meta(dev eq \"a\\x22b\\x01A\")");
  CHECK(canon("meta(nf_mark shift 0 mask 0 eq 1)") == "meta(nf_mark eq 1)");
  CHECK(canon("meta(5 lt pkt_len)") == "meta(5 lt pkt_len)");
  CHECK(canon("not (not (cmp(u8 at 0 eq 1) or cmp(u8 at 1 eq 2)) and u32(u8 1 1 at 0))") ==
        "not (not (cmp(u8 at 0 layer network eq 1) or cmp(u8 at 1 layer network eq 2)) and u32(u8 0x1 0x1 at 0))");
  CHECK(canon("ematch(9 01)") == "ematch(9 01000000)");
  // A raw match tcsync can read is printed in its own words.
  CHECK(canon("ematch(1 060000000000000009000101)") == "cmp(u8 at 9 layer network eq 6)");
  CHECK(canon("ematch(1 060000000000000009000f01)") == "ematch(1 060000000000000009000f01)");  // layer 15
  // nbyte (em_nbyte.c): the needle a word or a string, the layer network
  // unless named; tcf_em_nbyte is off u16, then len:12 | layer:4 << 12.
  CHECK(canon("nbyte(abc at 3)") == "nbyte(\"abc\" at 3 layer network)");
  CHECK(canon("nbyte(\"a\\\"b\\x01\" at 0x10 layer l)") == "nbyte(\"a\\x22b\\x01\" at 16 layer link)");
  CHECK(canon("ematch(2 03000310616263)") == "nbyte(\"abc\" at 3 layer network)");
  CHECK(canon("ematch(2 03000410616263)") == "nbyte(\"abc\\x00\" at 3 layer network)");  // len 4: the pad is the needle
  CHECK(canon("ematch(2 0300031061626301)") == "ematch(2 0300031061626301)");            // not tc's zero padding
  CHECK(canon("nbyte(abc)").starts_with("error at 0: nbyte: needs an offset"));
}

TEST_CASE("basic: errors point inside the expression") {
  CHECK(canon("") == "error at 0: empty match expression");
  CHECK(canon("cmp(u8 at 0 eq 1) and") == "error at 21: expected a match such as cmp(...), meta(...), u32(...) or '('");
  CHECK(canon("cmp(u8 at 0 eq 1) xor cmp(u8 at 0 eq 1)") == "error at 18: expected and, or, or the end, not 'xor'");
  CHECK(canon("cmp(u8 at 0 layer ip eq 1)") == "error at 18: cmp: layer must be link, network, transport or 0..2");
  CHECK(canon("cmp(u8 eq 1)") == "error at 0: cmp: needs an offset (at N)");
  CHECK(canon("cmp(u8 at 70000 eq 1)") == "error at 10: cmp: the offset must be a number up to 65535");
  CHECK(canon("u32(u8 0x100 0xff at 0)") == "error at 7: u32: the value must be a number up to 0xff");
  CHECK(canon("u32(u32 1 1 at 2)") == "error at 15: u32: a u32 offset must be a multiple of 4");
  CHECK(canon("meta(mark eq 5)") ==
        "error at 5: meta: unknown meta name 'mark' (nf_mark, priority, vlan, pkt_len, dev, tc_index, rt_classid...)");
  CHECK(canon("meta(priority eq \"x\")") ==
        "error at 17: meta: the two sides compare different types (a string with a number)");
  CHECK(canon("meta(dev mask 3 eq \"x\")") == "error at 9: meta: mask applies to numbers, not strings");
  CHECK(canon("(cmp(u8 at 0 eq 1)") == "error at 18: expected ')' or and/or");
  CHECK(canon("text(\"abc\")") ==
        "error at 0: unknown match 'text' (cmp, meta, u32, nbyte, or ematch(KIND HEX) for others)");
  CHECK(canon("meta(dev eq \"v0)") == "error at 12: unterminated string");
  std::string deep(kMaxDepthForTest + 1, '(');
  CHECK(canon(deep + "cmp(u8 at 0 eq 1)" + std::string(kMaxDepthForTest + 1, ')')).find("nested deeper than 32") !=
        std::string::npos);
  // In a file: FILE:LINE:COL of the word inside the string.
  std::string errs = load_errors(file_with("cmp(u16 at 0 layer ip eq 1)"));
  CHECK(errs.starts_with("t.yaml:6:86: error: match: cmp: layer must be link, network, transport or 0..2"));
}

TEST_CASE("basic: the decoder survives any bytes and refuses trees it cannot follow") {
  CHECK(decoded("") == "<absent>");
  CHECK(decoded("04000200") == "<ematch tree tcsync cannot read>");  // no header
  // A container pointing backwards (the kernel refuses those) and one past the end.
  CHECK(decoded("24000200"
                "0800010002000000"
                "18000200"
                "10000100"
                "0000000000000000"
                "00000000"
                "04000200") == "<ematch tree tcsync cannot read>");
  CHECK(decoded("2c000200"
                "0800010002000000"
                "20000200"
                "10000100"
                "0000000000000000"
                "05000000"
                "0c000200"
                "0000010000000000") == "<ematch tree tcsync cannot read>");
  // A short match is kept raw, padded as it will be sent.
  CHECK(decoded("20000200"
                "0800010001000000"
                "14000200"
                "0f000100"
                "0000010000000000"
                "aabbcc00") == "ematch(1 aabbcc00)");
  // Every prefix of a real tree.
  auto full = unhex(kGolden[1].bytes);
  for (size_t n = 0; n <= full.size(); ++n) {
    Options o;
    kFilterBasic.decode(std::span(full).first(n), KindCtx{}, o);
  }
}

TEST_CASE("basic: a tree's match kinds, each once, for the kind probe") {
  CHECK(ematch::match_kinds("cmp(u16 at 0 layer link mask 0xffff eq 0x800) and not (meta(nf_mark eq 5) or "
                            "cmp(u8 at 9 layer network eq 6)) and ematch(2 00000310616263)") ==
        std::vector<uint16_t>{TCF_EM_CMP, TCF_EM_NBYTE, TCF_EM_META});
  CHECK(ematch::match_kinds("u32(u32 0x1 0xff at 0)") == std::vector<uint16_t>{TCF_EM_U32});
  CHECK(ematch::match_kinds("cmp(").empty());
}
