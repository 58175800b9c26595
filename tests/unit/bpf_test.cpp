// The bpf classifier: tc's bytes, the kernel's dump, comparison by tag, errors.
//
// Golden bodies: TCA_OPTIONS payloads tc (iproute2 6.1, libbpf 1.1) sent on
// this host (Linux 6.18) for `tc filter add ... bpf ...` (strace -e sendmsg
// -x), TCA_BPF_CLASSID removed (the generic codec writes it). The fd is the
// descriptor tc had the program under; the fake below hands out the same.
#include <linux/pkt_cls.h>
#include <linux/rtnetlink.h>

#include <catch2/catch.hpp>

#include "codec/tc_codec.h"
#include "kinds/filter/bpf_program.h"
#include "kinds/registry.h"
#include "model/kind.h"
#include "model/model.h"
#include "netlink/wire.h"
#include "plan/differ.h"
#include "test_util.h"

using namespace tcsync;
using tcsync::test::hex;
using tcsync::test::load_errors;
using tcsync::test::load_ok;
using tcsync::test::unhex;

namespace {

std::string file_with(const std::string& filters) {
  return "version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n    filters:\n" + filters;
}

// Every reference opens as program `fd`, except those it was told fail.
struct FakePrograms : BpfPrograms {
  BpfProgram ok, bad;
  explicit FakePrograms(int fd) {
    ok.fd = fd;
    ok.tag = "8d97ce09fb448586";
    bad.error = "pinned /gone: No such file or directory";
  }
  const BpfProgram* find(const BpfRef& r) const override { return r.pinned == "/gone" ? &bad : &ok; }
};

std::vector<uint8_t> body(const Filter& f, const BpfPrograms* p, Diagnostics* d = nullptr) {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  KindCtx ctx{f.key.handle, 0, nullptr, d, f.loc, &f};
  ctx.programs = p;
  kFilterBpf.encode(f.opts, ctx, w);
  return buf;
}

const std::string kClassifierLabel =
    "17000700"
    "636c732e6f3a5b636c61737369666965725d00"
    "00";  // "cls.o:[classifier]"

}  // namespace

TEST_CASE("bpf: TCA_OPTIONS bodies are tc's bytes") {
  State s = load_ok(file_with(
      // tc: bpf obj cls.o sec classifier da classid 1:5 (fd 6)
      "      - {parent: ingress, pref: 10, protocol: all, bpf: {object: /tmp/bpfw/cls.o, section: classifier, "
      "direct_action: true}, classid: \"1:5\"}\n"
      // tc: bpf classid 1:6 skip_hw obj cls.o sec classifier (fd 6)
      "      - {parent: ingress, pref: 20, protocol: all, bpf: {object: cls.o, skip_hw: true}, classid: \"1:6\"}\n"
      // tc: bpf object-pinned /tmp/bpfw/fs/prog1 da (fd 4)
      "      - {parent: ingress, pref: 12, protocol: all, bpf: {pinned: /tmp/bpfw/fs/prog1, direct_action: true}}\n"));
  auto& fs = s.devices[0].filters;
  REQUIRE(fs.size() == 3);
  FakePrograms fd6(6), fd4(4);
  CHECK(hex(body(fs[0], &fd6)) == "0800060006000000" + kClassifierLabel + "0800080001000000");
  CHECK(hex(body(fs[1], &fd6)) == "0800060006000000" + kClassifierLabel + "0800090001000000");
  CHECK(hex(body(fs[2], &fd4)) ==
        "0800060004000000"
        "13000700"
        "70726f67313a5b2a66736f626a5d00"
        "00"
        "0800080001000000");
  CHECK(*fs[1].opts.str(1) == "classifier");  // tc's default section
  CHECK(bpf_label(fs[2].opts) == "prog1:[*fsobj]");

  // The whole message: classid and the options as the generic codec nests them.
  Diagnostics d;
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  encode_filter(w, Op::Add, fs[0], 3, nullptr, d, nullptr, &fd6);
  CHECK_FALSE(d.has_errors());
  AttrTable tb(std::span<const uint8_t>(buf).subspan(36), TCA_MAX);
  REQUIRE(tb.get(TCA_OPTIONS));
  AttrTable opts(tb.get(TCA_OPTIONS)->data, TCA_BPF_MAX);
  REQUIRE(opts.get(TCA_BPF_CLASSID));
  CHECK(opts.get(TCA_BPF_CLASSID)->u32() == 0x10005u);
  CHECK(opts.get(TCA_BPF_FD)->u32() == 6u);
}

TEST_CASE("bpf: the kernel's dump, and comparison by tag") {
  // Linux 6.18's options for `bpf obj cls.o sec classifier da classid 1:5`:
  // CLASSID, NAME, ID 7, TAG, FLAGS da, FLAGS_GEN not_in_hw (CLASSID is the
  // generic codec's).
  auto dump = unhex("08000300 05000100" + kClassifierLabel +
                    "08000b00 07000000 0c000a00 8d97ce09fb448586 08000800 01000000 08000900 08000000");
  Options live;
  kFilterBpf.decode(dump, KindCtx{}, live);
  BpfRef r = bpf_ref(live);
  CHECK(r.object == "cls.o");
  CHECK(r.section == "classifier");
  CHECK(r.id == 7u);
  CHECK(r.tag == "8d97ce09fb448586");
  CHECK(live.num(6) == 1u);  // direct_action
  CHECK_FALSE(live.has(7));  // not_in_hw is status, not skip_hw
  CHECK(bpf_label(live) == "cls.o:[classifier]");

  // A pinned program's label keeps no path: it stays a label.
  Options pinned;
  kFilterBpf.decode(unhex("13000700 70726f67313a5b2a66736f626a5d00 00 08000b00 0f000000"), KindCtx{}, pinned);
  CHECK(bpf_ref(pinned).object.empty());
  CHECK(*pinned.str(3) == "prog1:[*fsobj]");
  CHECK(bpf_label(pinned) == "prog1:[*fsobj]");

  State s =
      load_ok(file_with("      - {parent: ingress, pref: 10, protocol: all, bpf: {object: /srv/bpf/cls.o, section: "
                        "classifier, direct_action: true}}\n"));
  Options want = s.devices[0].filters[0].opts;
  bool recreate = false;
  // Offline (no tag recorded): where the program comes from is not compared.
  CHECK(diff_options(kFilterBpf, want, live, recreate).empty());
  // The edge records the tag of the program the file names: equal tags, same rule.
  set_bpf_tag(want, "8d97ce09fb448586");
  CHECK(diff_options(kFilterBpf, want, live, recreate).empty());
  set_bpf_tag(want, "0011223344556677");
  auto why = diff_options(kFilterBpf, want, live, recreate);
  REQUIRE(why.size() == 1);
  CHECK(why[0] == "tag 8d97ce09fb448586 -> 0011223344556677");
  CHECK_FALSE(recreate);  // cls_bpf replaces a program in place

  // encode(decode(x)) gives the bytes the kernel was sent.
  FakePrograms fd6(6);
  Filter f;
  f.opts = live;
  CHECK(hex(body(f, &fd6)) == "0800060006000000" + kClassifierLabel + "0800080001000000");
}

TEST_CASE("bpf: a program that cannot be sent is an error at the rule") {
  State s = load_ok(file_with(
      "      - {parent: ingress, pref: 1, protocol: all, bpf: {pinned: /gone}}\n"
      "      - {parent: ingress, pref: 2, protocol: all, bpf: {name: \"x:[*fsobj]\", tag: 8D97CE09FB448586}}\n"));
  auto& fs = s.devices[0].filters;
  CHECK(*fs[1].opts.str(5) == "8d97ce09fb448586");  // tags read in either case
  FakePrograms p(6);
  Diagnostics d;
  body(fs[0], &p, &d);
  REQUIRE(d.error_count() == 1);
  CHECK(format_diagnostic(d.all()[0])
            .rfind("t.yaml:6:9: error: bpf filter: no program to send for pinned /gone: pinned /gone: No such file",
                   0) == 0);
  Diagnostics off;
  body(fs[1], nullptr, &off);
  REQUIRE(off.error_count() == 1);
  CHECK(off.all()[0].message ==
        "bpf filter: no program to send for tag 8d97ce09fb448586: its program was not opened (offline)");
}

TEST_CASE("bpf: errors") {
  auto first_line = [](const std::string& s) { return s.substr(0, s.find('\n')); };
  auto err = [&](const std::string& bpf) {
    return first_line(load_errors(file_with("      - {parent: ingress, pref: 1, protocol: all, bpf: " + bpf + "}\n")));
  };
  CHECK(err("{object: a.o, pinned: /sys/fs/bpf/p}") ==
        "t.yaml:6:78: error: a bpf filter takes its program from 'object' or from 'pinned', not both");
  CHECK(err("{section: s}") == "t.yaml:6:66: error: 'section' needs 'object' (the file it is a section of)");
  CHECK(
      err("{direct_action: true}") ==
      "t.yaml:6:9: error: a bpf filter needs its program: 'bytecode' (classic), 'object' (and 'section'), or 'pinned'");
  CHECK(err("{pinned: /p, tag: 123}") ==
        "t.yaml:6:74: error: 'tag' must be a program tag of 16 hex digits (as tc and bpftool print it), not '123'");
  CHECK(err("{object: a.o, name: \"a.o:[s]\"}") ==
        "t.yaml:6:76: error: 'name' is for programs known only by tag or id; with 'object' or 'pinned' tc's label is "
        "made from the file name");
  CHECK(err("{object: \"\"}") == "t.yaml:6:65: error: expected a non-empty string, not an empty one");
  CHECK(err("{pinned: /p, skip_hw: true, skip_sw: true}") ==
        "t.yaml:6:93: error: skip_hw and skip_sw exclude each other");
  CHECK(err("{pinned: /p, direct: true}") == "t.yaml:6:69: error: unknown key 'direct' in bpf filter");
}

TEST_CASE("bpf: a classic program (bytecode) is tc's bytes, and comes back from the kernel's dump") {
  // tc: filter add ... ingress pref 10 protocol ip bpf bytecode '2,6 0 0 0,6 0 0 4294967295' classid 1:1
  // (Linux 6.18, iproute2 6.1): OPS_LEN 2, then the two sock_filter.
  State s =
      load_ok(file_with("      - {parent: ingress, pref: 10, protocol: ip, bpf: {bytecode: \"2,6 0 0 0,6 0 0 "
                        "4294967295\"}, classid: \"1:1\"}\n"));
  const Filter& f = s.devices[0].filters.at(0);
  CHECK_FALSE(is_bpf_filter(f));  // nothing for the edge to open
  const std::string ops =
      "0600040002000000"
      "14000500"
      "0600000000000000"
      "06000000ffffffff";
  Diagnostics d;
  CHECK(hex(body(f, nullptr, &d)) == ops);
  CHECK_FALSE(d.has_errors());
  Options live;
  kFilterBpf.decode(unhex(ops), KindCtx{}, live);
  CHECK(*live.str(9) == "2,6 0 0 0,6 0 0 4294967295");
  CHECK(live == f.opts);
  CHECK(load_errors(file_with("      - {parent: ingress, pref: 10, bpf: {bytecode: \"2,6 0 0 0\"}}\n"))
            .rfind("t.yaml:6:53: error: 'bytecode' is a classic BPF program as tc takes it: \"N,code jt jf k,...\" "
                   "with N instructions "
                   "(at most 4096), such as \"4,40 0 0 12,21 0 1 2048,6 0 0 262144,6 0 0 0\"\n",
                   0) == 0);
  CHECK(load_errors(file_with("      - {parent: ingress, pref: 10, bpf: {bytecode: \"1,6 0 0 0\", pinned: /p}}\n"))
            .find("error: a bpf filter runs either 'bytecode' (a classic program) or an eBPF program (object, pinned, "
                  "name, id, tag), not both") != std::string::npos);
}
