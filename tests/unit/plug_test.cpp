// plug: golden option bodies (a bare tc_plug_qopt); the kernel reports none.
//
// Golden bodies: the TCA_OPTIONS payloads tc (iproute2 6.1) sent for
// `tc qdisc add dev v0 root handle 1: plug ...` (strace -e sendmsg -x), as
// hex; the word sets are the kernel selftests' (tdc plug.json).
#include "kinds/registry.h"
#include "qdisc_test_util.h"

using namespace tcsync;
using namespace tcsync::test;

TEST_CASE("plug: options are tc's bytes") {
  // Input only: sch_plug has no dump, so nothing decodes back (no round trip).
  check_golden("plug", "", "", false);
  check_golden("plug", "action: block", "0000000000000000", false);
  check_golden("plug", "action: release", "0100000000000000", false);
  check_golden("plug", "action: release_indefinite", "0200000000000000", false);
  check_golden("plug", "limit: 100", "0300000064000000", false);
  check_golden("plug", "limit: 1000", "03000000e8030000", false);
  for (auto& f : kQdiscPlug.fields) CHECK((f.flags & kInputOnly));
}

TEST_CASE("plug: a change sends only what the file gives") {
  // Input-only fields the kernel does not keep: a change of another part of
  // the qdisc must not send the action's def (limit) with limit 0.
  auto change_body = [](const std::string& yaml) { return hex(body(load_qdisc("plug", yaml), true)); };
  CHECK(change_body("") == "");
  CHECK(change_body("limit: 100") == "0300000064000000");
  CHECK(change_body("action: release") == "0100000000000000");
}
