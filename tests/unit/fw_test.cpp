// The fw classifier: tc's bytes and the dump's form.
//
// Golden body: the TCA_OPTIONS payload tc (iproute2 6.1, lab) sent for
// `tc filter add dev v0 ingress pref 11 protocol ip handle 0x10/0xff fw indev v1`
// (strace -e sendmsg -x): 08 00 05 00 ff 00 00 00 | 07 00 03 00 "v1\0" pad.
#include <catch2/catch.hpp>

#include "kinds/registry.h"
#include "model/kind.h"
#include "model/model.h"
#include "netlink/wire.h"
#include "test_util.h"

using namespace tcsync;
using tcsync::test::hex;
using tcsync::test::load_ok;
using tcsync::test::unhex;

TEST_CASE("fw: mask and indev as tc sends them, and the default mask is not sent") {
  State s = load_ok(R"(version: 1
devices:
  v0:
    qdiscs: [{kind: clsact}]
    filters:
      - {parent: ingress, pref: 11, protocol: ip, handle: 0x10, fw: {mask: 0xff, indev: v1}}
      - {parent: ingress, pref: 12, protocol: ip, handle: 0xa, fw: {mask: 0xffffffff}, classid: "1:1"}
)");
  auto& fs = s.devices[0].filters;
  REQUIRE(fs.size() == 2);
  CHECK(fs[0].key.handle == 0x10);
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  kFilterFw.encode(fs[0].opts, KindCtx{}, w);
  CHECK(hex(buf) == "08000500ff0000000700030076310000");
  buf.clear();
  kFilterFw.encode(fs[1].opts, KindCtx{}, w);
  CHECK(hex(buf).empty());
  CHECK(fs[1].opts.empty());  // the default mask is no option at all

  Options back;
  kFilterFw.decode(unhex("08000500ff0000000700030076310000"), KindCtx{}, back);
  CHECK(back == fs[0].opts);
}
