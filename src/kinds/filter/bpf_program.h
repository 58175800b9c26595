// BPF programs of bpf filters, between the pure core and the kernel edge.
//
// A file names a program by where it is: an object file and its section,
// a path pinned in a BPF file system, or (in dumps) the live program's id.
// The kernel knows a filter's program only by id, tag (8 bytes of the SHA-1
// of its instructions) and tc's label, never by file. So the kernel edge
// (bpf_loader.cpp, libbpf and bpf(2)) opens or loads each program a file
// names before planning and records its tag in the filter's options: the
// differ compares tags like any other field, and encode sends the program's
// file descriptor, looked up here by the same reference. The core never
// opens anything: it builds and tests without libbpf or privileges.
#pragma once
#include <compare>
#include <cstdint>
#include <string>

#include "model/kind.h"
#include "model/model.h"

namespace tcsync {

// What a bpf filter's options say about its program (empty strings and id 0
// for what they do not say).
struct BpfRef {
  std::string object;  // ELF object file, with `section`
  std::string section;
  std::string pinned;  // a path in a BPF file system
  uint32_t id = 0;     // a live program (dumps)
  std::string tag;     // 16 hex digits: declared, or recorded by the edge
  auto operator<=>(const BpfRef&) const = default;
  // "object cls.o section classifier", "pinned /sys/fs/bpf/p", "program id 7"
  std::string describe() const;
};

// An opened program. fd < 0: it could not be opened, `error` says why.
struct BpfProgram {
  int fd = -1;
  uint32_t id = 0;
  std::string tag;
  std::string error;
};

// The edge's answer for a reference (kept open until the process ends).
class BpfPrograms {
 public:
  virtual ~BpfPrograms() = default;
  virtual const BpfProgram* find(const BpfRef& ref) const = 0;
};

// The bpf kind's table (filter/bpf.cpp) seen from outside: whether a filter
// runs an eBPF program (one the edge must open; a classic one travels whole).
bool is_bpf_filter(const Filter& f);
BpfRef bpf_ref(const Options& o);
// Records the tag of the program a filter names (the edge, once opened).
void set_bpf_tag(Options& o, const std::string& tag);
// tc's label for the program (TCA_BPF_NAME): "file.o:[section]" for an
// object (file name without directories), "name:[*fsobj]" for a pinned
// path, else the `name` the options carry; "" for none.
std::string bpf_label(const Options& o);

}  // namespace tcsync
