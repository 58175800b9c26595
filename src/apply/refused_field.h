// Which field of the file a kernel refusal names. The kernel may say which
// attribute of a request it refused (NLMSGERR_ATTR_OFFS, a byte offset into
// the message); this walks the request back to that attribute and the
// attribute to the field that carries it (Field::attr), so the error points
// at the field's FILE:LINE:COL as nftables points at the token, not at the
// object's first line.
#pragma once
#include <cstdint>
#include <span>
#include <string_view>

#include "base/diag.h"
#include "plan/differ.h"

namespace tcsync {

struct RefusedField {
  std::string_view key;  // the field's YAML key; empty: none found
  SourceLoc loc;
};

// `msg` is the whole request the step was sent as (from its nlmsghdr), `off`
// the kernel's offset into it.
RefusedField refused_field(const Step& st, std::span<const uint8_t> msg, uint32_t off);

}  // namespace tcsync
