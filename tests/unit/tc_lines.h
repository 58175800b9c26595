// A minimal tc script for one kind's words (its tc_words examples): what
// the tests that walk every kind import, each its object in a script that
// makes the parents it needs.
#pragma once
#include <string>
#include <string_view>

#include "model/kind.h"

namespace tcsync::test {

// A minimal script around WORDS, the words after the kind's name.
inline std::string line_for(const KindOps& k, std::string_view words) {
  const std::string w(words), name(k.name);
  switch (k.obj) {
    case ObjType::Qdisc:
      if (name == "ingress" || name == "clsact") return "qdisc add dev v0 " + name + " " + w + "\n";
      // Lines after the first change the qdisc (gred's virtual queues,
      // which the kernel takes only that way).
      if (size_t nl = w.find('\n'); nl != std::string::npos) {
        std::string out = "qdisc add dev v0 root handle 1: " + name + " " + w.substr(0, nl) + "\n";
        for (size_t start = nl + 1; start <= w.size();) {
          size_t end = w.find('\n', start);
          out += "qdisc change dev v0 root handle 1: " + name + " " +
                 w.substr(start, end == std::string::npos ? std::string::npos : end - start) + "\n";
          if (end == std::string::npos) break;
          start = end + 1;
        }
        return out;
      }
      return "qdisc add dev v0 root handle 1: " + name + " " + w + "\n";
    case ObjType::Class:
      return "qdisc add dev v0 root handle 1: " + name + "\nclass add dev v0 parent 1: classid 1:1 " + name + " " + w +
             "\n";
    case ObjType::Filter: {
      // Several filters, one a line ("handle 2: divisor 256\nlink 2: ..."),
      // a line's leading `handle H` going before the kind, as tc wants it.
      std::string out = "qdisc add dev v0 root handle 1: htb\n";
      size_t start = 0;
      while (start <= w.size()) {
        size_t nl = w.find('\n', start);
        std::string seg = w.substr(start, nl == std::string::npos ? std::string::npos : nl - start);
        std::string handle;
        if (seg.starts_with("handle ")) {
          size_t sp = seg.find(' ', 7);
          handle = seg.substr(0, sp) + " ";
          seg = sp == std::string::npos ? "" : seg.substr(sp + 1);
        }
        out += "filter add dev v0 parent 1: protocol ip prio 1 " + handle + name + " " + seg + "\n";
        if (nl == std::string::npos) break;
        start = nl + 1;
      }
      return out;
    }
    case ObjType::Action:
      return "qdisc add dev v0 clsact\nfilter add dev v0 ingress protocol ip prio 1 u32 match u32 0 0 action " + name +
             " " + w + "\n";
  }
  return {};
}

}  // namespace tcsync::test
