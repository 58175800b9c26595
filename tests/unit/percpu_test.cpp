// percpu_stats: tcsync's actions go without per-CPU statistics unless the
// file asks (TCA_ACT_FLAGS_NO_PERCPU_STATS); tc-made actions (no flag) dump
// as `percpu_stats: true` and are compared only where a file declares it.
#include <linux/pkt_cls.h>

#include <catch2/catch.hpp>

#include "codec/tc_codec.h"
#include "file/yaml_writer.h"
#include "plan/differ.h"
#include "plan/plan_print.h"
#include "test_util.h"

using namespace tcsync;
using tcsync::test::load_errors;
using tcsync::test::load_ok;
using tcsync::test::round_trip;

namespace {

std::string file(const std::string& action_extra) {
  return R"(version: 1
devices:
  v0:
    qdiscs:
      - {kind: clsact}
    filters:
      - {parent: ingress, pref: 1, protocol: ip, handle: "::1", u32: {match: [{ip: {dst: 10.0.0.1}}]},
         actions: [{mirred: {action: redirect, dev: v1})" +
         action_extra + "}]}\n";
}

std::string yaml(const Filter& f) {
  std::string out;
  YamlOut y(out);
  write_filter(f, y);
  return out;
}

std::string plan(const State& want, const State& have) {
  Plan p = make_plan(want, have);
  return plan_text(p, PrintOptions{});
}

}  // namespace

TEST_CASE("percpu_stats: loaded, decoded from TCA_ACT_FLAGS, dumped only when on") {
  State dflt = load_ok(file(""));
  State on = load_ok(file(", percpu_stats: true"));
  State off = load_ok(file(", percpu_stats: false"));
  CHECK_FALSE(dflt.devices[0].filters[0].actions[0].percpu_stats.has_value());
  CHECK(on.devices[0].filters[0].actions[0].percpu_stats == std::optional<bool>(true));
  CHECK(off.devices[0].filters[0].actions[0].percpu_stats == std::optional<bool>(false));

  Filter live_dflt = round_trip(dflt.devices[0].filters[0]);
  Filter live_on = round_trip(on.devices[0].filters[0]);
  CHECK(live_dflt.actions[0].percpu_stats == std::optional<bool>(false));
  CHECK(live_on.actions[0].percpu_stats == std::optional<bool>(true));
  CHECK(yaml(live_dflt).find("percpu_stats") == std::string::npos);
  CHECK(yaml(live_on).find("percpu_stats: true") != std::string::npos);
}

TEST_CASE("percpu_stats is compared only when declared") {
  State dflt = load_ok(file(""));
  State on = load_ok(file(", percpu_stats: true"));
  State off = load_ok(file(", percpu_stats: false"));
  // Live states as the kernel reports them: tc-made (per-CPU) and tcsync-made.
  State live_tc = on, live_ts = off;
  live_tc.devices[0].filters[0] = round_trip(on.devices[0].filters[0]);
  live_ts.devices[0].filters[0] = round_trip(off.devices[0].filters[0]);

  CHECK(make_plan(dflt, live_tc).steps.empty());  // a tc-made rule is not replaced for the flag
  CHECK(make_plan(dflt, live_ts).steps.empty());
  CHECK(make_plan(on, live_tc).steps.empty());
  CHECK(make_plan(off, live_ts).steps.empty());
  std::string p = plan(on, live_ts);
  CHECK(p.rfind("~ v0: filter u32 ingress pref 1 protocol ip handle ::1  (mirred percpu_stats false -> true)", 0) == 0);
  p = plan(off, live_tc);
  CHECK(p.find("mirred percpu_stats true -> false") != std::string::npos);
}

TEST_CASE("percpu_stats takes true or false, located") {
  CHECK(load_errors(file(", percpu_stats: yes"))
            .rfind("t.yaml:8:72: error: \"percpu_stats\" must be true or false, not 'yes'\n", 0) == 0);
}
