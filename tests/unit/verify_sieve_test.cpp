// VerifySieve (apply/verify_by_dump.h): the rules it takes while a device
// is read back must never change verify's verdict. Each case plans the file
// against the whole live state (what verify did before), and the sieve's
// rest() against the live rules it did not take, fed to it in dump order as
// the dumper would. The plans must be empty together; where no qdisc or
// chain is re-created they must name the same steps, in the same order,
// with the same reasons (else the applier reads the devices again whole
// for its report).
#include <catch2/catch.hpp>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "apply/verify_by_dump.h"
#include "plan/differ.h"
#include "plan/plan_print.h"
#include "test_util.h"

using namespace tcsync;
using tcsync::test::load_ok;
using tcsync::test::steps_text;

namespace {

struct Outcome {
  std::string full, sieved;
  size_t taken = 0, kept = 0;
  bool spoiled = false;  // the applier then reads the devices whole: no sieved plan
};

// `want` and `have` are files; `have` stands for the dump (its rules in the
// order listed, as the kernel lists them; those at the positions `twice`
// names listed twice, as no file can say).
Outcome compare(const std::string& want, const std::string& have, const std::set<size_t>& twice = {}) {
  State w = load_ok(want), h = load_ok(have);
  for (auto& d : h.devices) {
    std::vector<Filter> listed;
    for (size_t i = 0; i < d.filters.size(); ++i) {
      d.filters[i].loc = {};  // live objects carry no YAML locations
      listed.push_back(d.filters[i]);
      if (twice.count(i)) listed.push_back(d.filters[i]);
    }
    d.filters = std::move(listed);
  }
  Outcome o;
  o.full = steps_text(make_plan(w, h));

  std::vector<const Device*> check;
  for (auto& d : w.devices) check.push_back(&d);
  VerifySieve sieve(check);
  State read;
  for (auto& d : h.devices) {
    Device& r = read.devices.emplace_back(d.without_filters());
    for (auto& f : d.filters)
      if (!sieve.take(d.name, f)) r.filters.push_back(f);
    o.kept += r.filters.size();
  }
  State rest = sieve.rest();
  o.sieved = steps_text(make_plan(rest, read));
  o.taken = sieve.taken();
  o.spoiled = sieve.spoiled();
  return o;
}

std::string flower(int chain, int pref, int handle, const std::string& ip, const std::string& control = "drop") {
  return "      - {parent: ingress, chain: " + std::to_string(chain) + ", pref: " + std::to_string(pref) +
         ", protocol: ip, handle: " + std::to_string(handle) + ", flower: {dst_ip: " + ip +
         "}, actions: [{gact: {control: " + control + "}}]}\n";
}

const char* kHead = "version: 1\ndevices:\n  v0:\n    qdiscs:\n      - {kind: clsact}\n";

}  // namespace

TEST_CASE("verify sieve: equal rules are taken, one per list stays, and the plan is empty") {
  std::string rules;
  for (int h = 1; h <= 5; ++h) rules += flower(0, 1, h, "10.0.0." + std::to_string(h) + "/32");
  for (int h = 1; h <= 3; ++h) rules += flower(0, 2, h, "10.0.1." + std::to_string(h) + "/32");
  std::string file = std::string(kHead) + "    filters:\n" + rules;
  Outcome o = compare(file, file);
  CHECK(o.full.empty());
  CHECK(o.sieved.empty());
  CHECK(o.taken == 6);  // 8 rules in 2 lists: the first of each stays
  CHECK(o.kept == 2);
}

TEST_CASE("verify sieve: a changed, a missing and an extra rule are planned as without it") {
  std::string want = std::string(kHead) + "    filters:\n", have = want;
  for (int h = 1; h <= 6; ++h) {
    std::string ip = "10.0.0." + std::to_string(h) + "/32";
    want += flower(0, 1, h, ip);
    if (h == 3)
      have += flower(0, 1, h, "10.9.9.9/32");  // the kernel stored another value
    else if (h != 5)
      have += flower(0, 1, h, ip);  // 5: missing
  }
  have += flower(0, 1, 7, "10.0.0.7/32");  // not in the file
  Outcome o = compare(want, have);
  CHECK(o.full == o.sieved);
  CHECK(o.full.find("10.9.9.9") != std::string::npos);
  CHECK(o.taken == 3);  // 2, 4, 6 (1 is the list's first)
}

TEST_CASE("verify sieve: an implicit chain and a list whose every file rule matched keep a rule") {
  // Chain 1 is not declared: it exists for its rules (the dump lists it).
  // Were all its rules taken, the differ would see an empty chain made
  // explicitly and delete it; and a list with one extra rule would look
  // like a list the file dropped (one request for the whole list).
  std::string want = std::string(kHead) + "    filters:\n", have = std::string(kHead) +
                                                                   "    chains:\n      - {parent: ingress, chain: 1}\n"
                                                                   "    filters:\n";
  for (int h = 1; h <= 4; ++h) {
    want += flower(1, 1, h, "10.1.0." + std::to_string(h) + "/32");
    have += flower(1, 1, h, "10.1.0." + std::to_string(h) + "/32");
  }
  for (int h = 1; h <= 3; ++h) {
    want += flower(0, 2, h, "10.2.0." + std::to_string(h) + "/32");
    have += flower(0, 2, h, "10.2.0." + std::to_string(h) + "/32");
  }
  have += flower(0, 2, 9, "10.2.0.9/32");
  Outcome o = compare(want, have);
  CHECK(o.full == o.sieved);
  CHECK(o.full.find("chain") == std::string::npos);        // no chain delete
  CHECK(o.full.find("handle 0x9 ") != std::string::npos);  // the one extra rule
  CHECK(o.taken == 5);
}

TEST_CASE("verify sieve: u32 rules and keys listed twice are left to the differ") {
  std::string u32 =
      "      - {parent: egress, pref: 5, protocol: ip, u32: {match: [{u32: {value: 1, mask: 1, at: 0}}]}, "
      "actions: [{gact: {control: drop}}]}\n";
  std::string r1 = flower(0, 1, 1, "10.0.0.1/32"), r2 = flower(0, 1, 2, "10.0.0.2/32"),
              r3 = flower(0, 1, 3, "10.0.0.3/32");
  std::string want = std::string(kHead) + "    filters:\n" + r1 + r2 + r3 + u32;
  // r2 listed twice after its list's first: the first listing is taken
  // before the second shows, so the sieve cannot plan as the differ would.
  Outcome o = compare(want, want, {1});
  CHECK(o.spoiled);
  CHECK(o.full.find("handle 0x2 ") != std::string::npos);  // one listing goes
  // r1, the list's first, listed twice: it stays, and so does its twin.
  o = compare(want, want, {0});
  CHECK_FALSE(o.spoiled);
  CHECK(o.full == o.sieved);
  CHECK(o.full.find("handle 0x1 ") != std::string::npos);
  CHECK(o.taken == 2);  // r2, r3; never u32
}

TEST_CASE("verify sieve: random files and dumps plan the same with and without it") {
  std::mt19937 rng(20261204);
  size_t taken = 0, differing = 0, spoiled = 0;
  for (int round = 0; round < 300; ++round) {
    std::string want = std::string(kHead), have = std::string(kHead);
    bool chain1_declared = rng() % 2;
    if (chain1_declared) want += "    chains:\n      - {parent: ingress, chain: 1}\n";
    have += "    chains:\n      - {parent: ingress, chain: 1}\n";  // dumped whenever it exists
    want += "    filters:\n";
    have += "    filters:\n";
    bool any_chain1 = false;
    std::string have_rules;
    std::set<size_t> twice;
    size_t listed = 0;
    auto live = [&](int chain, const std::string& rule) {
      have_rules += rule;
      any_chain1 |= chain == 1;
      return listed++;
    };
    for (int chain : {0, 1})
      for (int pref : {1, 2, 3})
        for (int h = 1; h <= 6; ++h) {
          std::string ip = "10." + std::to_string(chain) + "." + std::to_string(pref) + "." + std::to_string(h) + "/32";
          std::string rule = flower(chain, pref, h, ip);
          // One round in four has keys the kernel lists twice (sieved kinds
          // never do; the sieve must still not plan otherwise).
          switch (rng() % 10) {
            case 0:
              want += rule;
              break;  // missing from the kernel
            case 1:
              live(chain, rule);
              break;  // only in the kernel
            case 2:
              want += rule, live(chain, flower(chain, pref, h, ip, "pass"));
              break;  // stored otherwise
            case 3:
              if (round % 4 == 0) {
                want += rule, twice.insert(live(chain, rule));  // listed twice
                break;
              }
              [[fallthrough]];
            default:
              want += rule, live(chain, rule);
          }
        }
    if (!any_chain1) have = std::string(kHead) + "    filters:\n";  // no rule there: no chain
    have += have_rules;
    Outcome o = compare(want, have, twice);
    if (o.spoiled) {
      ++spoiled;
      continue;
    }
    REQUIRE(o.full == o.sieved);
    taken += o.taken;
    differing += !o.full.empty();
  }
  CHECK(spoiled <= 75);
  CHECK(taken > 225 * 10);
  CHECK(differing > 150);
}

TEST_CASE("verify sieve: a re-created qdisc or chain, or another kind, still differs") {
  std::string rules;
  for (int h = 1; h <= 4; ++h)
    rules += "      - {parent: \"1:\", pref: 1, protocol: ip, handle: " + std::to_string(h) +
             ", flower: {dst_ip: 10.0.0." + std::to_string(h) + "/32}, classid: \"1:1\"}\n";
  auto tree = [&](const std::string& kind) {
    return "version: 1\ndevices:\n  v0:\n    qdiscs:\n      - {kind: " + kind + ", handle: \"1:\"}\n    filters:\n" +
           rules;
  };
  // The kernel holds prio 1: where the file has htb 1: -- the qdisc goes,
  // its rules with it, and all four come back: the taken three too, which
  // the sieved plan cannot name. The verdict stands; the applier reads the
  // device again for the report.
  Outcome o = compare(tree("htb"), tree("prio"));
  CHECK(o.taken == 3);
  CHECK_FALSE(o.sieved.empty());
  CHECK(o.full.find("handle 0x4") != std::string::npos);
  CHECK(o.sieved.find("handle 0x4") == std::string::npos);

  // A chain whose template changes is made again, its rules too.
  auto chained = [](const std::string& mask) {
    std::string f =
        std::string(kHead) +
        "    chains:\n      - {parent: ingress, chain: 1, protocol: ip, template: {flower: {dst_ip: 0.0.0.0/" + mask +
        "}}}\n    filters:\n";
    for (int h = 1; h <= 4; ++h) f += flower(1, 1, h, "10.0." + std::to_string(h) + ".0/24");
    return f;
  };
  o = compare(chained("24"), chained("16"));
  CHECK_FALSE(o.full.empty());
  CHECK_FALSE(o.sieved.empty());

  // Rules of another kind under the same keys are never taken: the differ
  // compares a kind by its list, filter_differences does not.
  std::string basic = std::string(kHead) + "    filters:\n", flowers = basic;
  for (int h = 1; h <= 4; ++h) {
    basic += "      - {parent: ingress, pref: 7, protocol: ip, handle: " + std::to_string(h) +
             ", basic: {}, actions: [{gact: {control: drop}}]}\n";
    flowers += "      - {parent: ingress, pref: 7, protocol: ip, handle: " + std::to_string(h) +
               ", flower: {}, actions: [{gact: {control: drop}}]}\n";
  }
  o = compare(basic, flowers);
  CHECK(o.taken == 0);
  CHECK(o.full == o.sieved);
  CHECK(o.full.find("(all 4)") != std::string::npos);
}
