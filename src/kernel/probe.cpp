#include "kernel/probe.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/if_ether.h>
#include <linux/netlink.h>
#include <linux/pkt_cls.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <iterator>

#include "base/handle.h"
#include "model/kind.h"
#include "netlink/wire.h"

namespace tcsync {
namespace {

constexpr int kLoopback = 1;  // `lo` is ifindex 1 in a new namespace

// One request, one answer: 0 when the kernel accepted it, else its errno.
int request(int fd, std::vector<uint8_t>& buf) {
  if (::send(fd, buf.data(), buf.size(), 0) < 0) return errno;
  alignas(nlmsghdr) uint8_t in[8192];
  for (;;) {
    ssize_t n = ::recv(fd, in, sizeof in, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    for (auto* h = reinterpret_cast<nlmsghdr*>(in); NLMSG_OK(h, static_cast<unsigned>(n)); h = NLMSG_NEXT(h, n))
      if (h->nlmsg_type == NLMSG_ERROR) return -reinterpret_cast<nlmsgerr*>(NLMSG_DATA(h))->error;
  }
}

tcmsg tc_header(uint32_t parent, uint32_t handle, uint32_t info) {
  tcmsg t{};
  t.tcm_family = AF_UNSPEC;
  t.tcm_ifindex = kLoopback;
  t.tcm_parent = parent;
  t.tcm_handle = handle;
  t.tcm_info = info;
  return t;
}

int probe_qdisc(int fd, const std::string& kind) {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  size_t m = w.begin_message(RTM_NEWQDISC, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE, 1);
  const KindOps* ops = find_kind(ObjType::Qdisc, kind);
  bool hook = qdisc_ops(ops).hooks != QdiscOps::Hooks::None;
  w.put_struct(tc_header(hook ? kHandleIngress : kHandleRoot, hook ? kHandleIngressQdisc : 0, 0));
  w.attr_str(TCA_KIND, kind);
  w.end_message(m);
  return request(fd, buf);
}

int probe_filter(int fd, const KindProbe& k, uint16_t prio) {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  size_t m = w.begin_message(RTM_NEWTFILTER, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL, 1);
  w.put_struct(tc_header(kHandleClsactIngress, 0, (uint32_t{prio} << 16) | __builtin_bswap16(ETH_P_ALL)));
  w.attr_str(TCA_KIND, k.kind);
  if (k.ematch) {
    // A tree of one match of the kind, with no data: the kernel refuses
    // the data only after it has found the kind.
    size_t opts = w.nest_begin(TCA_OPTIONS);
    size_t tree = w.nest_begin(k.ematch_attr);
    tcf_ematch_tree_hdr th{1, TCF_EM_PROG_TC};
    w.attr(TCA_EMATCH_TREE_HDR, &th, sizeof th);
    size_t list = w.nest_begin(TCA_EMATCH_TREE_LIST);
    tcf_ematch_hdr h{0, k.ematch, TCF_EM_REL_END, 0};
    w.attr(1, &h, sizeof h);
    w.nest_end(list);
    w.nest_end(tree);
    w.nest_end(opts);
  }
  w.end_message(m);
  return request(fd, buf);
}

int probe_action(int fd, const std::string& kind) {
  std::vector<uint8_t> buf;
  MsgWriter w(buf);
  size_t m = w.begin_message(RTM_NEWACTION, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_EXCL, 1);
  tcamsg t{};
  t.tca_family = AF_UNSPEC;
  w.put_struct(t);
  size_t tab = w.nest_begin(TCA_ACT_TAB);
  size_t one = w.nest_begin(1);
  w.attr_str(TCA_ACT_KIND, kind);
  w.nest_end(one);
  w.nest_end(tab);
  w.end_message(m);
  return request(fd, buf);
}

// The child: a namespace of its own, one answer byte per probe on `out`:
// '1' the kernel has the kind, '0' it has not; 'n' when no namespace could
// be made (followed by nothing).
[[noreturn]] void child(const std::vector<KindProbe>& kinds, int out) {
  auto answer = [&](char c) {
    while (::write(out, &c, 1) < 0 && errno == EINTR) {
    }
  };
  if (::unshare(CLONE_NEWNET) != 0) {
    answer('n');
    ::_exit(0);
  }
  int fd = ::socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
  int one = 1;
  ::setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof one);
  bool clsact = false;
  uint16_t prio = 0;
  for (auto& k : kinds) {
    int err = 0;
    if (k.type == ObjType::Qdisc) {
      err = probe_qdisc(fd, k.kind);
    } else if (k.type == ObjType::Filter) {
      if (!clsact) probe_qdisc(fd, "clsact"), clsact = true;
      err = probe_filter(fd, k, ++prio);
    } else {
      err = probe_action(fd, k.kind);
    }
    answer(err == ENOENT ? '0' : '1');
  }
  ::_exit(0);
}

}  // namespace

std::string module_of(ObjType type, const std::string& kind) {
  switch (type) {
    case ObjType::Filter:
      return "cls_" + kind;
    case ObjType::Action:
      return "act_" + kind;
    default:
      return "sch_" + kind;
  }
}

std::string ematch_name(uint16_t kind) {
  static const char* const kNames[] = {"container", "cmp",  "nbyte", "u32",   "meta",
                                       "text",      "vlan", "canid", "ipset", "ipt"};
  return kind < std::size(kNames) ? kNames[kind] : "kind " + std::to_string(kind);
}

std::string ematch_module(uint16_t kind) {
  // The kernel asks for "ematch-kind-N" (tcf_em_lookup); the modules are em_*.
  return kind < 10 ? "em_" + ematch_name(kind) : "ematch-kind-" + std::to_string(kind);
}

std::optional<std::vector<bool>> probe_kinds(const std::vector<KindProbe>& kinds, std::string& why_not) {
  std::vector<bool> have(kinds.size(), true);
  if (kinds.empty()) return have;
  int p[2];
  if (::pipe2(p, O_CLOEXEC) != 0) {
    why_not = std::string("pipe: ") + std::strerror(errno);
    return std::nullopt;
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    why_not = std::string("fork: ") + std::strerror(errno);
    ::close(p[0]), ::close(p[1]);
    return std::nullopt;
  }
  if (pid == 0) {
    ::close(p[0]);
    child(kinds, p[1]);
  }
  ::close(p[1]);
  std::string got;
  char buf[256];
  for (;;) {
    ssize_t n = ::read(p[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got.append(buf, static_cast<size_t>(n));
  }
  ::close(p[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (got == "n") {
    why_not = "no scratch network namespace (probing needs CAP_SYS_ADMIN)";
    return std::nullopt;
  }
  if (got.size() != kinds.size()) {
    why_not = "the probe process ended early";
    return std::nullopt;
  }
  for (size_t i = 0; i < kinds.size(); ++i) have[i] = got[i] == '1';
  return have;
}

}  // namespace tcsync
