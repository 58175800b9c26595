// Helpers for the qdisc kinds' unit tests: load one qdisc, encode its
// TCA_OPTIONS body, and compare with tc's bytes.
#pragma once
#include <catch2/catch.hpp>

#include "model/kind.h"
#include "model/model.h"
#include "netlink/wire.h"
#include "test_util.h"

namespace tcsync::test {

inline Qdisc load_qdisc(const std::string& kind, const std::string& opts) {
  std::string text = "version: 1\ndevices:\n  v0:\n    qdiscs: [{kind: " + kind + ", handle: \"1:\"" +
                     (opts.empty() ? "" : ", " + opts) + "}]\n";
  return load_ok(text).devices[0].qdiscs[0];
}

inline std::vector<uint8_t> body(const Qdisc& q, bool change = false) {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  KindCtx ctx;
  ctx.handle = q.handle;
  ctx.change = change;
  q.ops->encode(q.opts, ctx, w);
  return buf;
}

// The qdisc as the codec reads back its whole message (ifindex 3, no
// links): what a dump of it gives.
inline Qdisc read_back(const Qdisc& q) {
  std::vector<uint8_t> msg;
  MsgWriter w(msg);
  Diagnostics d;
  encode_qdisc(w, Op::Add, q, 3, nullptr, d);
  Qdisc back;
  Decoded info;
  REQUIRE(decode_qdisc(msg, nullptr, back, info));
  return back;
}

// The qdisc with other options (a decoded kernel report), to encode them.
inline Qdisc with_opts(Qdisc q, const Options& o) {
  q.opts = o;
  return q;
}

// tc's bytes, and decode(encode(x)) gives x back (the kernel reports more,
// but never less, than was sent), except input-only fields (red's avpkt).
// fq_codel's times are not reported as sent
// (CoDel units, rounded down): its own test covers the kernel's form.
inline void check_golden(const std::string& kind, const std::string& yaml, const std::string& tc,
                         bool round_trip = true) {
  INFO(kind << " {" << yaml << "}");
  Qdisc q = load_qdisc(kind, yaml);
  auto b = body(q);
  CHECK(hex(b) == tc);
  if (!round_trip) return;
  Options back;
  q.ops->decode(b, KindCtx{}, back);
  for (auto& o : q.opts.items()) {
    if (q.ops->fields[o.field].flags & kInputOnly) continue;  // never reported
    INFO("field " << q.ops->fields[o.field].key);
    REQUIRE(back.get(o.field));
    CHECK(*back.get(o.field) == o.value);
  }
}

}  // namespace tcsync::test
