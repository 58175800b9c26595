// The real Kernel: one rtnetlink socket, the link snapshot, and the two
// things the core asks of them (dump, send).
#include "apply/kernel.h"

#include <cstdlib>

#include "kernel/batch_sender.h"
#include "kernel/bpf_loader.h"
#include "kernel/dumper.h"
#include "kernel/links.h"
#include "kernel/netns.h"
#include "kernel/nl_socket.h"

namespace tcsync {

namespace {

class RtnlKernel final : public Kernel {
 public:
  bool open(Diagnostics& diags) {
    // TCSYNC_NL_RCVBUF / TCSYNC_NL_SNDBUF: socket buffer sizes, for tests
    // that prove a tiny receive buffer loses no ACK.
    NlSocketOptions so;
    if (const char* v = std::getenv("TCSYNC_NL_RCVBUF")) so.rcvbuf = std::atoi(v);
    if (const char* v = std::getenv("TCSYNC_NL_SNDBUF")) so.sndbuf = std::atoi(v);
    if (Status st = sock_.open(so); !st) {
      diags.error({}, st.error());
      return false;
    }
    if (Status st = links_.load(sock_); !st) {
      diags.error({}, "cannot list network devices: " + st.error());
      return false;
    }
    return true;
  }

  const LinkNames& links() const override { return links_; }

  bool dump(const std::vector<std::string>& devices, State& live, Diagnostics& diags) override {
    return dump_devices(sock_, links_, devices, live, diags, nullptr, DumpPart::All, stats_,
                        sieve_);  // all of it: no terse check
  }

  bool dump_actions(ActionTable& out, Diagnostics& diags, const State* bound) override {
    return dump_action_table(sock_, links_, out, diags, bound);
  }

  bool dump_part(const std::vector<std::string>& devices, State& live, Diagnostics& diags, DumpPart part) override {
    return dump_devices(sock_, links_, devices, live, diags, terse_, part, stats_, sieve_);
  }

  bool settle_terse(const State& desired, State& live, Diagnostics& diags) override {
    return !terse_ || tcsync::settle_terse(sock_, links_, *terse_, desired, live, diags);
  }

  void set_terse_check(TerseCheck* t) override { terse_ = t; }
  void set_stats(StatsTable* t) override { stats_ = t; }
  void set_sieve(FilterSieve* s) override { sieve_ = s; }

  std::vector<AckResult> send(MessageBatch& batch, const SendOptions& opts) override {
    return send_batch(sock_, batch, opts);
  }

  bool resolve_programs(State& desired, const State& live, Diagnostics& d) override {
    programs_.hold_live(live);
    return programs_.resolve(desired, d);
  }
  const BpfPrograms* programs() const override { return &programs_; }

 private:
  NlSocket sock_;
  Links links_;
  TerseCheck* terse_ = nullptr;
  StatsTable* stats_ = nullptr;
  FilterSieve* sieve_ = nullptr;
  BpfLoader programs_;
};

}  // namespace

std::unique_ptr<Kernel> open_kernel(const std::optional<std::string>& netns, Diagnostics& diags) {
  // Before any socket: a socket belongs to the namespace it was opened in.
  if (Status st = netns ? enter_netns(*netns) : Status::ok(); !st) {
    diags.error({}, st.error());
    return nullptr;
  }
  auto k = std::make_unique<RtnlKernel>();
  if (!k->open(diags)) return nullptr;
  return k;
}

}  // namespace tcsync
