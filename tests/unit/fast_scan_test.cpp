// The fast scanner (yaml/fast_scan.h) makes exactly libyaml's events, at
// the same places, for what it reads, and hands everything else to libyaml
// with no trace: the reader's events and errors are the same as with libyaml
// alone, on every YAML file of the repository, on tricky snippets, on every
// one-byte damage of a document, and on hand-overs far into big files.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"
#include "yaml/yaml_reader.h"

using namespace tcsync;
using Parse = YamlReader::Parse;

namespace {

struct Read {
  std::vector<YamlReader::Event> events;
  std::string errors;
  bool fast = false;
};

Read read_all(const std::string& text, bool fast, Parse how = Parse::Inline) {
  Read out;
  Diagnostics d;
  {
    YamlReader r(SourceFiles::instance().add_text("f.yaml", text), d);
    if (!fast) r.libyaml_only();
    r.open_string(text, how);
    for (;;) {
      out.events.push_back(r.next());
      auto t = out.events.back().type;
      if (t == YamlReader::Ev::StreamEnd || t == YamlReader::Ev::Error) break;
    }
    out.fast = r.fast();
  }
  out.errors = test::formatted(d);
  return out;
}

std::string describe(const YamlReader::Event& e) {
  return std::to_string(static_cast<int>(e.type)) + " " + std::to_string(e.loc.line) + ":" + std::to_string(e.loc.col) +
         " @" + std::to_string(e.offset) + (e.plain ? " plain " : " quoted ") + e.scalar;
}

// Both readers agree; returns whether the fast scanner read it all itself.
bool same(const std::string& text, Parse how = Parse::Inline) {
  Read a = read_all(text, true, how), b = read_all(text, false, how);
  INFO(text.substr(0, 2000));
  REQUIRE(a.events.size() == b.events.size());
  for (size_t i = 0; i < a.events.size(); ++i) {
    INFO("event " << i);
    REQUIRE(describe(a.events[i]) == describe(b.events[i]));
  }
  REQUIRE(a.errors == b.errors);
  return a.fast;
}

std::string slurp(const std::filesystem::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The forms files are written in: as dump writes rules, as a template
// writes them (block mappings, comments), a rule table.
std::string dump_form(int n) {
  std::string t = "version: 1\ndevices:\n  v0:\n    qdiscs:\n      - {kind: clsact}\n    filters:\n";
  for (int i = 0; i < n; ++i)
    t += "      - {parent: ingress, pref: 10, protocol: ip, u32: {ht: \"2:" + std::to_string(i % 256) +
         ":\", match: [{ip: {dst: 10.0." + std::to_string(i / 256) + "." + std::to_string(i % 256) +
         "}}]}, actions: [{mirred: {action: redirect, dev: v1}}]}\n";
  return t;
}

std::string template_form(int n) {
  std::string t = "---\n# generated\nversion: 1\ndevices:\n  v0:\n    qdiscs:\n    - kind: clsact\n    filters:\n";
  for (int i = 0; i < n; ++i) {
    t += "    # rule " + std::to_string(i) + "\n    - parent: ingress\n      pref: 10\n      protocol: ip\n";
    t += "      u32:\n        ht: '2:" + std::to_string(i % 256) + ":'\n        match:\n";
    t += "          - ip: {dst: 10.0." + std::to_string(i / 256) + "." + std::to_string(i % 256) + "}\n";
    t += "          - tcp: {dport: " + std::to_string(1000 + i) + "}   # service\n";
    t += "      actions:\n        - mirred:\n            action: redirect\n            dev: v1\n\n";
  }
  return t;
}

}  // namespace

TEST_CASE("fast scan: every YAML file of the repository reads as with libyaml alone") {
  namespace fs = std::filesystem;
  fs::path root = fs::path(TESTDATA_DIR).parent_path().parent_path();
  int files = 0, fast = 0;
  for (auto dir : {"examples", "tests/fuzz/corpus/loader", "tests/data", "docs"}) {
    if (!fs::exists(root / dir)) continue;
    for (auto& e : fs::recursive_directory_iterator(root / dir)) {
      if (!e.is_regular_file() || (e.path().extension() != ".yaml" && e.path().extension() != ".yml")) continue;
      INFO(e.path());
      ++files;
      fast += same(slurp(e.path()));
    }
  }
  CHECK(files >= 10);
  CHECK(fast >= files / 2);  // the examples are in the subset
}

TEST_CASE("fast scan: the forms rules are written in are read by the scanner, as libyaml reads them") {
  CHECK(same(dump_form(300)));
  CHECK(same(template_form(100)));
  CHECK(
      same("version: 1\ndevices:\n  v0:\n    filters:\n      - template: {parent: ingress, u32: {}}\n"
           "        columns: [u32.ht, 'a b']\n        rows:\n          - \"2:0: 10.0.0.0\"\n"
           "          - \"2:1: 10.0.0.1\"\n"));
  // Both thread modes, over many batches.
  CHECK(same(dump_form(5000), Parse::Thread));
  CHECK(same(template_form(2000), Parse::Thread));
}

TEST_CASE("fast scan: snippets at the edges of the subset agree with libyaml") {
  const char* cases[] = {
      "a: 1",
      "a: 1\n",
      "a: 1\n\n\n",
      "a: 1\n# end",
      "a: 1\n   ",
      "  a: 1\n  b: 2\n",
      "a:\n  b: 1\nc: 2\n",
      "a:\n- 1\n- 2\nb: 3\n",
      "a:\n  - 1\n  - x: 1\n    y: 2\n  - 3\n",
      "a:\n  -   x: 1\n      y: [1, 2]\n",
      "a: {}\nb: []\nc: {x: []}\n",
      "a: b c  d\n",
      "a: b #c\n",
      "a: b#c\n",
      "a: 'b c'\n",
      "a: \"b c\"\n",
      "'a': 1\n\"b\" : 2\n",
      "a : 1\n",
      "a: x:y\n",
      "a: {x: y:z}\n",
      "a: {x: 1:2:3, y: \"4\"}\n",
      "a: [x:y]\n",
      "a: {x: -1, y: -.5, z: ~}\n",
      "a: [1,2 , 3]\n",
      "a: {x: 1,y: 2}\n",
      "a: 10.0.0.0/8\n",
      "a: e4:11:00:00:00:01\n",
      // handed to libyaml
      "",
      "# only\n",
      "---\n",
      "--- a\n",
      "a: 1\n---\nb: 2\n",
      "a: 1\n...\n",
      "%YAML 1.1\n---\na: 1\n",
      "a:\n",
      "a:\nb: 1\n",
      "a: 1\n b: 2\n",
      "a: 1\n  b\n",
      "a: b: c\n",
      "a: [1, 2\n",
      "a: {x: 1\n",
      "a: {x: 1,}\n",
      "a: [1, , 2]\n",
      "a: &x 1\n",
      "a: *x\n",
      "a: !t 1\n",
      "a: |\n  x\n",
      "a: >\n  x\n",
      "a: \"x\\ny\"\n",
      "a: 'it''s'\n",
      "a:\t1\n",
      "a: 1\r\n",
      "a: caf\xc3\xa9\n",
      "a: \x01\n",
      "- a\n- b\n",
      "-\n  a: 1\n",
      "- - 1\n",
      "? a\n: 1\n",
      "[1, 2]\n",
      "{a: 1}\n",
      "a: {b}\n",
      "a: [b: 1]\n",
      "a: {b: 1}: 2\n",
      "a: \"x\n",
      "a: 'x\n",
      "a:\n  - 1\n b: 2\n",
      "a:\n  b: 1\n - 2\n",
      "a: 1\na: 2\n",
      "a: -\n",
      "a: ---\n",
      "a: @x\n",
      "a: `x\n",
      "a: ,x\n",
      "a: {x: y, z}\n",
      "a: x\n\tb: 1\n",
      "\xef\xbb\xbf"
      "a: 1\n",
      "a: {? x: 1}\n",
      "a: [-]\n",
      "a: [- 1]\n",
  };
  for (const char* c : cases) same(c);
}

TEST_CASE("fast scan: every one-byte damage of a document reads as with libyaml alone") {
  std::string doc =
      "version: 1\ndevices:\n  v0:\n    qdiscs:\n      - {kind: htb, handle: \"1:\", default: 0x10}\n"
      "    filters:\n      - {parent: \"1:\", pref: 10, u32: {match: [{ip: {dst: 10.0.0.1}}]}, classid: '1:10'}\n"
      "    classes:\n    - classid: 1:10\n      rate: 10mbit  # the plan\n      ceil: [1, 2]\n";
  const char repl[] = {' ', ':', '-', '#', '\t', '"', '\'', '{', '}', '[', ',', '\n', 'x', '&'};
  int cases = 0;
  for (size_t i = 0; i < doc.size(); ++i) {
    std::string cut = doc;
    cut.erase(i, 1);
    same(cut);
    same(doc.substr(0, i));
    for (char c : repl) {
      std::string m = doc;
      m[i] = c;
      same(m);
      m = doc;
      m.insert(i, 1, c);
      same(m);
      cases += 2;
    }
  }
  CHECK(cases > 5000);
}

TEST_CASE("fast scan: a hand-over far into a big file drops nothing and repeats nothing") {
  for (Parse how : {Parse::Inline, Parse::Thread}) {
    for (const char* odd : {"      - {parent: ingress, u32: {ht: \"2:\\x31:\"}}\n",  // an escape: valid, libyaml's
                            "      - {parent: ingress, pref: &a 10}\n",              // an anchor: refused
                            "      - {parent: ingress\n",                            // unclosed
                            "    atomic:\n    filters:\n"}) {                        // a key with no value
      for (int at : {0, 40, 900, 3000}) {
        std::string t = dump_form(at) + odd;
        std::string rest = dump_form(200);
        t += rest.substr(rest.find("      - {"));
        INFO(odd << " after " << at);
        CHECK_FALSE(same(t, how));
      }
    }
  }
}
