#include "kernel/bpf_loader.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace tcsync {
namespace {

// libbpf's warnings (a verifier log, a bad ELF) belong in our error, not on
// stderr: the last line is kept.
std::string g_libbpf_last;
int libbpf_print(enum libbpf_print_level level, const char* fmt, va_list args) {
  if (level == LIBBPF_DEBUG) return 0;
  char buf[512];
  int n = std::vsnprintf(buf, sizeof buf, fmt, args);
  std::string line(buf, n > 0 ? std::min<size_t>(static_cast<size_t>(n), sizeof buf - 1) : 0);
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  if (!line.empty()) g_libbpf_last = line;
  return 0;
}

std::string err_text(int e) {
  char buf[128];
  libbpf_strerror(e, buf, sizeof buf);
  return buf;
}

// The kernel's prog_type of a bpf fd, from /proc/self/fdinfo: -1 when the fd
// is not a program (a pinned map), so its info is never misread as one.
int prog_type_of(int fd) {
  std::ifstream in("/proc/self/fdinfo/" + std::to_string(fd));
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("prog_type:", 0) == 0) return std::atoi(line.c_str() + 10);
  return -1;
}

// Fills id and tag from the kernel; false with `error` set otherwise.
bool describe_fd(int fd, BpfProgram& p) {
  int type = prog_type_of(fd);
  if (type < 0) {
    p.error = "not a BPF program";
    return false;
  }
  if (type != BPF_PROG_TYPE_SCHED_CLS) {
    p.error = "a BPF program of type " + std::to_string(type) + ", not a tc classifier (BPF_PROG_TYPE_SCHED_CLS)";
    return false;
  }
  bpf_prog_info info{};
  uint32_t len = sizeof info;
  if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0) {
    p.error = "BPF_OBJ_GET_INFO_BY_FD: " + err_text(errno);
    return false;
  }
  static const char* digits = "0123456789abcdef";
  p.tag.clear();
  for (uint8_t b : info.tag) p.tag += digits[b >> 4], p.tag += digits[b & 15];
  p.id = info.id;
  return true;
}

BpfProgram open_pinned(const std::string& path) {
  BpfProgram p;
  int fd = bpf_obj_get(path.c_str());
  if (fd < 0) {
    p.error = "pinned " + path + ": " + err_text(errno);
    return p;
  }
  if (!describe_fd(fd, p)) {
    ::close(fd);
    p.error = "pinned " + path + ": " + p.error;
    return p;
  }
  p.fd = fd;
  return p;
}

BpfProgram open_id(uint32_t id) {
  BpfProgram p;
  int fd = bpf_prog_get_fd_by_id(id);
  if (fd < 0) {
    int e = errno;
    p.error = e == ENOENT ? "program id " + std::to_string(id) + " no longer exists"
                          : "program id " + std::to_string(id) + ": " + err_text(e);
    return p;
  }
  if (!describe_fd(fd, p)) {
    ::close(fd);
    p.error = "program id " + std::to_string(id) + ": " + p.error;
    return p;
  }
  p.fd = fd;
  return p;
}

BpfProgram load_object(const std::string& path, const std::string& section) {
  BpfProgram p;
  std::string where = "object " + path + " section " + section;
  auto fail = [&](const std::string& why) {
    p.error = where + ": " + why + (g_libbpf_last.empty() ? std::string() : " (libbpf: " + g_libbpf_last + ")");
    return p;
  };
  g_libbpf_last.clear();
  libbpf_set_print(libbpf_print);
  if (::access(path.c_str(), R_OK) != 0) return fail(err_text(errno));
  bpf_object* obj = bpf_object__open_file(path.c_str(), nullptr);
  if (!obj) return fail("not a BPF object file: " + err_text(errno));
  bpf_program* want = nullptr;
  bpf_program* prog;
  bpf_object__for_each_program(prog, obj) {
    if (!want && section == bpf_program__section_name(prog))
      want = prog;
    else
      bpf_program__set_autoload(prog, false);
  }
  if (!want) {
    bpf_object__close(obj);
    return fail("no program in that section");
  }
  bpf_program__set_type(want, BPF_PROG_TYPE_SCHED_CLS);
  if (bpf_object__load(obj) != 0) {
    int e = errno;
    bpf_object__close(obj);
    return fail("the kernel refused to load it: " + err_text(e));
  }
  // The object's own descriptors close with it; the program keeps its maps.
  int fd = ::fcntl(bpf_program__fd(want), F_DUPFD_CLOEXEC, 0);
  bpf_object__close(obj);
  if (fd < 0) return fail(err_text(errno));
  if (!describe_fd(fd, p)) {
    ::close(fd);
    return fail(p.error);
  }
  p.fd = fd;
  return p;
}

}  // namespace

BpfLoader::~BpfLoader() {
  for (int fd : fds_) ::close(fd);
}

BpfProgram BpfLoader::open(const BpfRef& ref) {
  BpfProgram p;
  std::string why;
  auto attempt = [&](BpfProgram got) {
    if (got.fd >= 0) {
      fds_.push_back(got.fd);
      p = std::move(got);
      return true;
    }
    why += (why.empty() ? "" : "; ") + got.error;
    return false;
  };
  bool ok =
      (!ref.pinned.empty() && attempt(open_pinned(ref.pinned))) ||
      (!ref.object.empty() && attempt(load_object(ref.object, ref.section.empty() ? "classifier" : ref.section))) ||
      (ref.id && attempt(open_id(ref.id)));
  if (ok) return p;
  p.error = why.empty() ? "the file knows it only by its tag (a dump of a program tcsync cannot find again): "
                          "name it with 'object' and 'section', or 'pinned'"
                        : why;
  return p;
}

void BpfLoader::hold_live(const State& live) {
  for (auto& dev : live.devices)
    for (auto& f : dev.filters) {
      if (!is_bpf_filter(f)) continue;
      BpfRef ref = bpf_ref(f.opts);
      if (!ref.id || by_ref_.count(ref)) continue;
      BpfProgram p = open_id(ref.id);  // by id only: that is the live program
      if (p.fd >= 0) fds_.push_back(p.fd);
      by_ref_.emplace(std::move(ref), std::move(p));
    }
}

bool BpfLoader::resolve(State& desired, Diagnostics& d) {
  std::map<BpfRef, BpfProgram> opened;  // by reference as declared, so each loads once
  for (auto& dev : desired.devices)
    for (auto& f : dev.filters) {
      if (!is_bpf_filter(f)) continue;
      BpfRef declared = bpf_ref(f.opts);
      auto it = opened.find(declared);
      if (it == opened.end()) it = opened.emplace(declared, open(declared)).first;
      const BpfProgram& p = it->second;
      if (p.fd < 0) {
        if (declared.tag.empty()) d.error(f.loc, "bpf filter: cannot open its program: " + p.error);
        by_ref_.emplace(declared, p);  // encode reports it if the rule must be sent
        continue;
      }
      if (!declared.tag.empty() && declared.tag != p.tag) {
        d.error(f.loc, "bpf filter: " + declared.describe() + ": the program found has tag " + p.tag + " (id " +
                           std::to_string(p.id) + "), not the tag the file gives");
        continue;
      }
      set_bpf_tag(f.opts, p.tag);
      by_ref_.insert_or_assign(bpf_ref(f.opts), p);
    }
  return !d.has_errors();
}

const BpfProgram* BpfLoader::find(const BpfRef& ref) const {
  auto it = by_ref_.find(ref);
  return it == by_ref_.end() ? nullptr : &it->second;
}

}  // namespace tcsync
