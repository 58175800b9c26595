// The YAML reader gives the same events, locations and errors whether libyaml
// runs on the caller's thread or on a second one (big files), and a reader
// dropped halfway stops its thread.
#include <catch2/catch.hpp>

#include <unistd.h>
#include <cstdio>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "plan/differ.h"
#include "test_util.h"
#include "yaml/yaml_reader.h"

using namespace tcsync;
using Parse = YamlReader::Parse;

namespace {

// A document of `n` list entries: far more events than the reader's batches
// hold, so the thread has to wait for the reader and hand batches back.
std::string many_entries(int n, const std::string& bad_at = "") {
  std::string t = "top:\n";
  for (int i = 0; i < n; ++i) {
    t += "  - {key: " + std::to_string(i) + ", name: 'entry " + std::to_string(i) + "'}\n";
    if (!bad_at.empty() && i == n / 2) t += bad_at;
  }
  return t;
}

struct Read {
  std::vector<YamlReader::Event> events;
  std::string errors;
};

Read read_all(const std::string& text, Parse how) {
  Read out;
  Diagnostics d;
  {
    YamlReader r(SourceFiles::instance().add_text("r.yaml", text), d);
    r.open_string(text, how);
    for (;;) {
      out.events.push_back(r.next());
      auto t = out.events.back().type;
      if (t == YamlReader::Ev::StreamEnd || t == YamlReader::Ev::Error) break;
    }
    // The stream stays ended.
    CHECK(r.next().type == out.events.back().type);
  }
  out.errors = test::formatted(d);
  return out;
}

// The first event where a and b differ, or -1.
long first_difference(const Read& a, const Read& b) {
  for (size_t i = 0; i < std::min(a.events.size(), b.events.size()); ++i) {
    auto &x = a.events[i], &y = b.events[i];
    if (x.type != y.type || x.loc.line != y.loc.line || x.loc.col != y.loc.col || x.scalar != y.scalar ||
        x.plain != y.plain || x.offset != y.offset)
      return static_cast<long>(i);
  }
  return a.events.size() == b.events.size() ? -1 : static_cast<long>(std::min(a.events.size(), b.events.size()));
}

void same_events(const Read& a, const Read& b) {
  CHECK(first_difference(a, b) == -1);
  CHECK(a.errors == b.errors);
}

}  // namespace

TEST_CASE("yaml reader: the parser thread gives the same events as parsing inline") {
  std::string text = many_entries(20000);
  Read inl = read_all(text, Parse::Inline), thr = read_all(text, Parse::Thread);
  // 2 (doc, map) + key + seq start + 20000 x 6 + ends
  CHECK(inl.events.size() > 120000);
  CHECK(inl.events.back().type == YamlReader::Ev::StreamEnd);
  CHECK(inl.errors.empty());
  same_events(inl, thr);
  CHECK(thr.events[6].scalar == "0");
  CHECK(thr.events[8].scalar == "entry 0");
  CHECK_FALSE(thr.events[8].plain);
}

TEST_CASE("yaml reader: an error far into the file is reported once, at its place, in both modes") {
  for (const char* bad : {"  - {key: [1, 2}\n", "  - &a {key: 1}\n", "  - \x01\n"}) {
    INFO(bad);
    std::string text = many_entries(20000, bad);
    Read inl = read_all(text, Parse::Inline), thr = read_all(text, Parse::Thread);
    CHECK(inl.events.back().type == YamlReader::Ev::Error);
    CHECK(inl.errors.find("r.yaml:10003:") != std::string::npos);
    CHECK(inl.errors.find("error:") == inl.errors.rfind("error:"));  // one diagnostic
    same_events(inl, thr);
  }
}

TEST_CASE("yaml reader: a reader dropped halfway stops its parser thread") {
  std::string text = many_entries(50000);
  Diagnostics d;
  for (int k : {0, 3, 5000}) {
    YamlReader r(SourceFiles::instance().add_text("r.yaml", text), d);
    r.open_string(text, Parse::Thread);
    for (int i = 0; i < k; ++i) r.next();
  }  // each destructor must join its thread (a hang here fails by timeout)
  CHECK(d.all().empty());
}

TEST_CASE("yaml reader: a big file (parsed on a thread) loads as the same text loaded inline") {
  // flower rules; over YamlReader::kThreadFrom bytes, with an error at the end.
  std::string text = "version: 1\ndevices:\n  eth0:\n    qdiscs:\n      - {kind: clsact}\n    filters:\n";
  size_t rules = 0;
  for (int i = 1; text.size() < YamlReader::kThreadFrom + 4096; ++i, ++rules)
    text += "      - {parent: ingress, pref: 10, protocol: ip, handle: " + std::to_string(i) +
            ", flower: {dst_ip: 10.0." + std::to_string(i / 250) + "." + std::to_string(i % 250) +
            "}, actions: [{gact: {control: drop}}]}\n";
  char path[] = "/tmp/tcsync-yaml-reader-XXXXXX";
  int fd = mkstemp(path);
  REQUIRE(fd >= 0);
  close(fd);
  auto load_file = [&](const std::string& t, State& s) {
    std::ofstream(path, std::ios::binary) << t;
    Diagnostics d;
    load_files({path}, s, d);
    return test::formatted(d);
  };
  State from_file, from_text;
  CHECK(load_file(text, from_file).empty());
  CHECK(test::load_errors(text, &from_text).empty());
  CHECK(from_file.devices.at(0).filters.size() == rules);
  CHECK(make_plan(from_file, from_text).empty());
  CHECK(make_plan(from_text, from_file).empty());

  std::string bad =
      text + "      - {parent: ingress, pref: 10, protocol: ip, handle: 1000000, flower: {dst_ip: 10.0.0.1/33}}\n";
  State s1, s2;
  std::string e1 = load_file(bad, s1), e2 = test::load_errors(bad, &s2, path);
  std::remove(path);
  CHECK_FALSE(e1.empty());
  CHECK(e1 == e2);
}

// The loader sizes a big list from the bytes its entries took and the bytes
// left: offsets are byte positions of the events, in both modes.
TEST_CASE("yaml reader: events carry their byte offsets, and the input its size") {
  std::string text = "a: 1\nbb: [x, 'y']\n";
  for (Parse how : {Parse::Inline, Parse::Thread}) {
    Diagnostics d;
    YamlReader r(SourceFiles::instance().add_text("o.yaml", text), d);
    r.open_string(text, how);
    CHECK(r.size() == text.size());
    std::vector<std::pair<std::string, size_t>> scalars;
    for (auto* e = &r.next(); e->type != YamlReader::Ev::StreamEnd && e->type != YamlReader::Ev::Error; e = &r.next()) {
      CHECK(r.offset() == e->offset);
      if (e->type == YamlReader::Ev::Scalar) scalars.emplace_back(e->scalar, e->offset);
    }
    std::vector<std::pair<std::string, size_t>> want = {{"a", 0}, {"1", 3}, {"bb", 5}, {"x", 10}, {"y", 13}};
    CHECK(scalars == want);
  }
}

namespace {
// read_node over the whole text: the diagnostics it leaves.
std::string read_whole(const std::string& text) {
  Diagnostics d;
  YamlReader r(SourceFiles::instance().add_text("h.yaml", text), d);
  r.open_string(text);
  Node n;
  while (r.peek().type == YamlReader::Ev::DocStart) r.next();
  r.read_node(n);
  return test::formatted(d);
}
}  // namespace

TEST_CASE("yaml reader: a key given twice is found by the scan and by the index of a large mapping") {
  for (int keys : {5, 31, 32, 33, 200, 5000}) {
    INFO(keys);
    std::string text = "{";
    for (int i = 0; i < keys; ++i) text += "k" + std::to_string(i) + ": 1, ";
    CHECK(read_whole(text + "}\n").empty());
    // the first key again, the last one again, and a key the index has not seen
    std::string dup = text + "k0: 2, k" + std::to_string(keys - 1) + ": 3, z: 4}\n";
    std::string e = read_whole(dup);
    CHECK(e.find("duplicate key 'k0'") != std::string::npos);
    CHECK(e.find("duplicate key 'k" + std::to_string(keys - 1) + "'") != std::string::npos);
    CHECK(e.find("'z'") == std::string::npos);
  }
}

TEST_CASE("yaml reader: hostile mappings and nesting are refused where they go wrong") {
  std::string many = "{";
  for (size_t i = 0; i <= YamlReader::kMaxKeys; ++i) many += "k" + std::to_string(i) + ": 1, ";
  CHECK(read_whole(many + "}\n").find("h.yaml:1:") != std::string::npos);
  CHECK(read_whole(many + "}\n").find("a mapping of more than 65536 keys") != std::string::npos);
  // A million open flow collections: refused after at most a few KiB of them
  // (libyaml would first scan all of them, at a cost of the square of their depth).
  std::string deep = "k: " + std::string(1'000'000, '[') + "\n";
  std::string e = read_whole(deep);
  CHECK(e.find("h.yaml:1:") != std::string::npos);
  CHECK(e.find("nesting deeper than 64 levels") != std::string::npos);
  // 64 levels are fine, whether flow or block.
  CHECK(read_whole("k: " + std::string(63, '[') + std::string(63, ']') + "\n").empty());
  // Past the hundredth error a mapping of duplicates is not read on.
  std::string dups = "{";
  for (int i = 0; i < 1000; ++i) dups += "k" + std::to_string(i % 10) + ": 1, ";
  e = read_whole(dups + "}\n");
  CHECK(std::count(e.begin(), e.end(), '^') == static_cast<long>(Diagnostics::kMaxErrors));
}
