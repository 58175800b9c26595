// Interface names <-> indexes of the current network namespace, read once
// from the kernel (RTM_GETLINK dump) when the Kernel is opened.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "kernel/nl_socket.h"
#include "model/kind.h"

namespace tcsync {

struct LinkEntry {
  uint32_t index = 0;
  std::string name;
};

// Every link of the socket's namespace, in the kernel's order (by ifindex).
Status list_links(NlSocket& sock, std::vector<LinkEntry>& out);

class Links : public LinkNames {
 public:
  // Replaces the snapshot with the kernel's current list.
  Status load(NlSocket& sock);
  std::optional<uint32_t> index_of(std::string_view name) const override;
  // "ifindexN" for an index the snapshot does not know (as the codec's
  // fallback writes it), so a dump never prints an empty device.
  std::string name_of(uint32_t ifindex) const override;
  const std::vector<LinkEntry>& all() const { return list_; }

 private:
  std::vector<LinkEntry> list_;
  std::unordered_map<std::string, uint32_t> by_name_;
  std::unordered_map<uint32_t, size_t> by_index_;  // -> list_ position
};

}  // namespace tcsync
