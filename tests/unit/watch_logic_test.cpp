// watch's pure parts: the debouncer, the repair counter (never fight) and
// the event lines, driven with a fake clock.
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "watch/watch_logic.h"

using namespace tcsync;
using namespace std::chrono_literals;

namespace {
WatchTime at(int ms) {
  return WatchTime{} + std::chrono::milliseconds(ms);
}
}  // namespace

TEST_CASE("watch: a burst is due once, quiet after its last event") {
  Debouncer d(150ms, 1000ms);
  CHECK(!d.next_deadline());
  d.touch("v0", at(0));
  d.touch("v0", at(50));
  d.touch("v0", at(100));
  CHECK(d.next_deadline() == at(250));
  CHECK(d.take_due(at(249)).empty());
  CHECK(d.take_due(at(250)) == std::vector<std::string>{"v0"});
  CHECK(!d.next_deadline());
  CHECK(d.take_due(at(10000)).empty());
}

TEST_CASE("watch: a writer that never pauses still gets its device re-planned at max_wait") {
  Debouncer d(150ms, 500ms);
  for (int t = 0; t <= 450; t += 100) d.touch("v0", at(t));
  // quiet would say 550; the first event was at 0, so 500 it is.
  CHECK(d.next_deadline() == at(500));
  d.touch("v0", at(480));
  CHECK(d.next_deadline() == at(500));
  CHECK(d.take_due(at(500)).size() == 1);
}

TEST_CASE("watch: devices are debounced apart, and schedule keeps the sooner deadline") {
  Debouncer d(100ms, 1000ms);
  d.touch("v0", at(0));
  d.touch("v2", at(60));
  CHECK(d.take_due(at(100)) == std::vector<std::string>{"v0"});
  CHECK(d.pending("v2"));
  d.schedule("v2", at(500));  // later than its 160: stays 160
  CHECK(d.next_deadline() == at(160));
  d.schedule("v4", at(300));
  CHECK(d.take_due(at(400)) == std::vector<std::string>{"v2", "v4"});
  CHECK(d.size() == 0);
  d.touch("v0", at(500));
  d.cancel("v0");  // the device went away
  CHECK(!d.next_deadline());
}

TEST_CASE("watch: the fifth repair within the window is a conflict, reported once") {
  RepairTracker r(5, 60s);
  for (int i = 0; i < 4; ++i) CHECK(!r.record("v0 class htb 1:10", at(i * 1000)));
  CHECK(!r.conflicted("v0 class htb 1:10"));
  CHECK(r.record("v0 class htb 1:10", at(4000)));
  CHECK(r.conflicted("v0 class htb 1:10"));
  CHECK(!r.record("v0 class htb 1:10", at(5000)));  // already one: not again
  CHECK(!r.conflicted("v0 class htb 1:20"));
  r.clear();
  CHECK(!r.conflicted("v0 class htb 1:10"));
  CHECK(r.conflicts().empty());
}

TEST_CASE("watch: repairs spread wider than the window are no conflict") {
  RepairTracker r(3, 10s);
  CHECK(!r.record("k", at(0)));
  CHECK(!r.record("k", at(6000)));
  CHECK(!r.record("k", at(12000)));  // the one at 0 is out of the window: two
  CHECK(!r.record("k", at(23000)));  // 6000 and 12000 out: one
  CHECK(!r.record("k", at(24000)));  // two
  CHECK(r.record("k", at(25000)));   // 23000, 24000, 25000
}

TEST_CASE("watch: the repair counter holds at most max_objects, dropping the least recent") {
  RepairTracker r(2, 60s, 3);
  CHECK(!r.record("a", at(0)));
  CHECK(!r.record("b", at(1)));
  CHECK(!r.record("c", at(2)));
  CHECK(!r.record("d", at(3)));  // "a" goes
  CHECK(r.tracked() == 3);
  CHECK(!r.record("a", at(4)));  // a fresh count: no conflict on its second repair
  CHECK(r.record("d", at(5)));
}

TEST_CASE("watch: an event is one JSON line with time, event, device and the diff's words") {
  WatchEvent e;
  e.event = "drift";
  e.device = "v0";
  e.diff = {"~ class htb 1:10 parent 1: (rate 2mbit -> 1mbit)", "- filter u32 parent 1: pref 5 (not in the file)"};
  // 2026-12-02 05:40:01.123 UTC
  std::string line = watch_event_json(e, 1796190001123LL);
  REQUIRE(line.back() == '\n');
  CHECK(line.find('\n') == line.size() - 1);
  CHECK(line ==
        "{\"time\":\"2026-12-02T05:40:01.123Z\",\"event\":\"drift\",\"device\":\"v0\",\"diff\":[\"~ class htb 1:10 "
        "parent "
        "1: (rate 2mbit -> 1mbit)\",\"- filter u32 parent 1: pref 5 (not in the file)\"]}\n");
  auto j = nlohmann::json::parse(line);
  CHECK(j["diff"].size() == 2);

  WatchEvent r;
  r.event = "repaired";
  r.device = "v0";
  r.cause = "drift";
  r.ms = 12.345;
  CHECK(watch_event_json(r, 1796190001123LL) ==
        "{\"time\":\"2026-12-02T05:40:01.123Z\",\"event\":\"repaired\",\"device\":\"v0\",\"cause\":\"drift\",\"ms\":12."
        "3}\n");
  CHECK(watch_event_text(r, 1796190001123LL) == "05:40:01.123 repaired v0 (drift) in 12.3 ms\n");
  CHECK(
      watch_event_text(e, 1796190001123LL) ==
      "05:40:01.123 drift v0\n  ~ class htb 1:10 parent 1: (rate 2mbit -> 1mbit)\n  - filter u32 parent 1: pref 5 (not "
      "in the file)\n");
}

TEST_CASE("watch: a device name that is not UTF-8 still makes valid JSON") {
  WatchEvent e;
  e.event = "device-appeared";
  e.device = std::string("v\xff", 2);
  auto j = nlohmann::json::parse(watch_event_json(e, 0));
  CHECK(j["device"] == "v\xEF\xBF\xBD");
  CHECK(j["time"] == "1970-01-01T00:00:00.000Z");
}

TEST_CASE("watch: split_lines drops the newlines and empty lines") {
  CHECK(split_lines("a\nb\n\nc") == std::vector<std::string>{"a", "b", "c"});
  CHECK(split_lines("").empty());
}

TEST_CASE("watch: an event lists at most kMaxEventErrors errors, then how many more") {
  WatchEvent e;
  e.event = "error";
  for (int i = 0; i < 4096; ++i) e.errors.push_back("f.yaml:" + std::to_string(i + 1) + ":9: error: refused");
  auto j = nlohmann::json::parse(watch_event_json(e, 0));
  REQUIRE(j["errors"].size() == kMaxEventErrors + 1);
  CHECK(j["errors"][0] == "f.yaml:1:9: error: refused");
  CHECK(j["errors"].back() == "... 4076 more");
  std::string text = watch_event_text(e, 0);
  CHECK(std::count(text.begin(), text.end(), '\n') == static_cast<long>(kMaxEventErrors) + 2);
  CHECK(text.find("  ... 4076 more\n") != std::string::npos);
}

TEST_CASE("watch: a raced re-plan stretches the cap of its key until one is not raced") {
  Debouncer d(150ms, 1000ms);
  d.stretch("v0");  // raced once: 2 s
  for (int t = 0; t <= 1900; t += 100) d.touch("v0", at(t));
  CHECK(d.next_deadline() == at(2000));
  CHECK(d.max_wait("v2") == 1000ms);  // other keys keep theirs
  for (int i = 0; i < 10; ++i) d.stretch("v0");
  CHECK(d.max_wait("v0") == 1000ms * Debouncer::kMaxStretch);  // bounded
  // A writer that pauses is re-planned at once (quiet), stretched or not.
  d.take_due(at(2000));
  d.touch("v0", at(3000));
  CHECK(d.next_deadline() == at(3150));
  d.relax("v0");
  CHECK(d.max_wait("v0") == 1000ms);
}
