// The matchall classifier: tc's bytes, the kernel's flags, one filter per
// pref, errors.
//
// Golden bodies: TCA_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc filter add ... matchall ...` (strace -e sendmsg -x), TCA_MATCHALL_CLASSID
// and TCA_MATCHALL_ACT removed (the generic codec writes those).
#include <linux/pkt_cls.h>
#include <linux/rtnetlink.h>

#include <catch2/catch.hpp>

#include "base/diag.h"
#include "codec/tc_codec.h"
#include "kinds/registry.h"
#include "model/kind.h"
#include "model/model.h"
#include "netlink/wire.h"
#include "test_util.h"

using namespace tcsync;
using tcsync::test::hex;
using tcsync::test::load_errors;
using tcsync::test::load_ok;

namespace {

std::string file_with(const std::string& filters) {
  return "version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: clsact}]\n    filters:\n" + filters;
}

std::vector<uint8_t> body(const Filter& f, const Options& o) {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  kFilterMatchall.encode(o, KindCtx{f.key.handle, 0, nullptr, nullptr, {}, &f}, w);
  return buf;
}

}  // namespace

TEST_CASE("matchall: TCA_OPTIONS bodies are tc's bytes") {
  State s = load_ok(
      file_with("      - {parent: ingress, pref: 1, protocol: all, matchall: {skip_hw: true}, classid: \"1:10\"}\n"
                "      - {parent: ingress, pref: 2, protocol: all, matchall: {}, actions: [{gact: {control: drop}}]}\n"
                "      - {parent: ingress, pref: 3, protocol: all, matchall: null, classid: \"1:10\"}\n"));
  auto& fs = s.devices[0].filters;
  REQUIRE(fs.size() == 3);
  // tc: matchall skip_hw classid 1:10 -> FLAGS 1 (and CLASSID)
  CHECK(hex(body(fs[0], fs[0].opts)) == "0800030001000000");
  // tc: matchall action gact drop -> no FLAGS (only ACT)
  CHECK(hex(body(fs[1], fs[1].opts)) == "");
  CHECK(hex(body(fs[2], fs[2].opts)) == "");
  for (auto& f : fs) {
    CHECK(f.key.handle == 1u);  // the kernel's own choice too (cls_matchall: handle ? handle : 1)
    auto bytes = body(f, f.opts);
    Options back;
    kFilterMatchall.decode(bytes, KindCtx{}, back);
    CHECK(back == f.opts);
  }
}

TEST_CASE("matchall: the whole filter carries options even when empty") {
  // cls_matchall refuses a request without TCA_OPTIONS (tc sends none for a
  // bare `matchall`, and the kernel answers EINVAL): tcsync always nests it.
  State s = load_ok(file_with("      - {parent: ingress, pref: 3, protocol: all, matchall: {}}\n"));
  Diagnostics d;
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  encode_filter(w, Op::Add, s.devices[0].filters[0], 3, nullptr, d);
  AttrTable tb(std::span<const uint8_t>(buf).subspan(36), TCA_MAX);
  CHECK(tb.get(TCA_OPTIONS));
}

TEST_CASE("matchall: the kernel's hardware status is not configuration") {
  // Linux 6.1 dumps FLAGS skip_hw|not_in_hw (0x9) for `matchall skip_hw`.
  const std::vector<uint8_t> dump = {0x08, 0x00, 0x03, 0x00, 0x09, 0x00, 0x00, 0x00};
  Options o;
  kFilterMatchall.decode(dump, KindCtx{}, o);
  CHECK(o.num(0) == 1u);
  CHECK_FALSE(o.has(1));
  const std::vector<uint8_t> plain = {0x08, 0x00, 0x03, 0x00, 0x08, 0x00, 0x00, 0x00};
  Options p;
  kFilterMatchall.decode(plain, KindCtx{}, p);
  CHECK(p.empty());
}

TEST_CASE("matchall: errors") {
  CHECK(load_errors(file_with("      - {parent: ingress, pref: 1, protocol: all, matchall: {}}\n"
                              "      - {parent: ingress, pref: 1, protocol: all, matchall: {}, classid: \"1:1\"}\n")) ==
        "t.yaml:7:9: error: a second matchall filter at pref 1 protocol all (the first is at t.yaml:6:9): "
        "the kernel holds one matchall filter per pref and protocol\n"
        "        - {parent: ingress, pref: 1, protocol: all, matchall: {}, classid: \"1:1\"}\n"
        "          ^\n");
  auto first_line = [](const std::string& s) { return s.substr(0, s.find('\n')); };
  CHECK(first_line(load_errors(file_with(
            "      - {parent: ingress, pref: 1, protocol: all, matchall: {skip_hw: true, skip_sw: true}}\n"))) ==
        "t.yaml:6:86: error: skip_hw and skip_sw exclude each other");
  CHECK(first_line(
            load_errors(file_with("      - {parent: ingress, pref: 1, protocol: all, matchall: {skiphw: true}}\n"))) ==
        "t.yaml:6:62: error: unknown key 'skiphw' in matchall filter (did you mean 'skip_hw'?)");
}
