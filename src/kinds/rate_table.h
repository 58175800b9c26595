// tc's rate tables (tc_core.c tc_calc_rtable): what police and tbf send
// beside a rate, so their messages are tc's bytes.
#pragma once
#include <linux/pkt_sched.h>

#include <cstdint>

namespace tcsync {

// Fills R's cell_log, cell_align and link layer for RATE, and TABLE with the
// time to send (i + 1) << cell_log bytes, in ticks, for i in 0..255.
// cell_log is the smallest shift that brings MTU (tc's 2047 when 0) to 255.
void tc_rate_table(tc_ratespec& r, uint64_t rate, uint32_t mtu, uint32_t mpu, uint32_t (&table)[256]);

}  // namespace tcsync
