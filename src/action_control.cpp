#include "action_control.h"

#include <linux/pkt_cls.h>

namespace tcsync {
namespace {
const EnumName kNames[] = {
    {"pass", TC_ACT_OK},         {"reclassify", TC_ACT_RECLASSIFY}, {"drop", TC_ACT_SHOT},
    {"pipe", TC_ACT_PIPE},       {"stolen", TC_ACT_STOLEN},         {"continue", 0xFFFFFFFFu /* TC_ACT_UNSPEC */},
    {"trap", TC_ACT_TRAP},
};
}  // namespace
const std::span<const EnumName> kControlNames = kNames;
}  // namespace tcsync
