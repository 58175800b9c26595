// One parse event, as YamlReader hands them to the loader: made by libyaml
// (yaml_reader.cpp) or by the fast scanner (fast_scan.h), the same either way.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/diag.h"

namespace tcsync {

enum class YamlEv : uint8_t { StreamEnd, DocStart, DocEnd, MapStart, MapEnd, SeqStart, SeqEnd, Scalar, Error };

struct YamlEvent {
  YamlEv type = YamlEv::Error;
  SourceLoc loc;
  std::string scalar;  // YamlEv::Error: the diagnostic's text
  bool plain = true;
  size_t offset = 0;  // the byte where it starts
};

}  // namespace tcsync
