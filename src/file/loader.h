// The loader: tcsync YAML files -> desired State, with every error located.
//
//   version: 1
//   devices:
//     eth0:
//       qdiscs:  [ {kind: htb, handle: "1:", default: "1:30"} ]
//       classes: [ {classid: "1:10", rate: 100mbit, ceil: 1gbit} ]
//       filters: [ {parent: "1:", pref: 10, protocol: ip,
//                   u32: {match: [{ip: {dport: 22}}]}, classid: "1:10"} ]
//
// Streaming: the document is walked as libyaml events; only one rule at a
// time becomes a small Node tree. All errors in a file are reported.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "base/diag.h"
#include "model/model.h"

namespace tcsync {

// Called with each device name as the loader meets it, before the device's
// rules are read (commands.cpp dumps it meanwhile: dump_ahead.h).
using DeviceHook = std::function<void(const std::string&)>;

// Loads the files in order into `out`. A device may be declared in one file
// only: a second declaration is an error, never a silent override.
bool load_files(const std::vector<std::string>& paths, State& out, Diagnostics& diags,
                const DeviceHook& on_device = {});
// The same for text in memory (tests); `name` is shown in locations.
bool load_text(const std::string& name, std::string text, State& out, Diagnostics& diags);

// The default filter priority when the file gives none (the kernel's own
// first choice, 0xC000).
constexpr uint16_t kDefaultPref = 49152;

}  // namespace tcsync
