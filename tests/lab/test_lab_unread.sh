#!/bin/bash
# In the kernel lab: never silent. Kinds tcsync has no table for (qdisc
# ets with its classes; every filter kind of 6.1 has one now) and
# attributes its tables do not read (flower mpls_label and mpls_bos, red's
# qevent block, a size table) made with tc -> tcsync dump -> flush -> apply
# of the dump -> tc -j identical, diff in sync, a second dump identical;
# and a file without them is not in sync.
source "$(dirname "$0")/../kernel/lib.sh"
make_ns 4
for d in v0 v1 v2 v3; do ip netns exec "$NS" sysctl -qw "net.ipv6.conf.$d.disable_ipv6=1"; done

t qdisc add dev v0 root handle 1: stab linklayer ethernet overhead 34 ets bands 3 strict 1 quanta 1500 3000
t qdisc add dev v1 root handle 2: prio
t filter add dev v1 parent 2: pref 1 handle 1 protocol ip cgroup action simple sdata "hello world"
t filter add dev v1 parent 2: pref 2 protocol ip u32 match ip dst 10.0.0.9/32 action ife encode allow mark dst 02:00:00:00:00:01
t qdisc add dev v2 clsact
t filter add dev v2 ingress pref 3 protocol mpls_uc flower mpls_label 100 mpls_bos 1 action drop
t qdisc add dev v3 root handle 3: red limit 400000 avpkt 1000 probability 0.1 min 30000 max 90000 qevent early_drop block 10
t qdisc add dev v3 ingress_block 10 clsact
t filter add block 10 pref 1 protocol ip matchall action drop

snapshot >"$TMP/before.txt"
expect_rc 0 ts dump
echo "$OUT" >"$TMP/dump.yaml"
echo "--- dump:"; sed 's/^/    /' "$TMP/dump.yaml"
for w in "kind: ets" "stab: {linklayer: ethernet, overhead: 34}" "flower: {raw_options"; do
  grep -qF "$w" "$TMP/dump.yaml" && pass "dump has: $w" || fail "dump lacks: $w"
done
expect_rc 0 ts diff "$TMP/dump.yaml"
expect_contains "in sync"

# Flush what tc made, then apply the dump.
for d in v0 v1 v3; do t qdisc del dev $d root; done
for d in v2 v3; do t qdisc del dev $d clsact; done
expect_rc 0 ts apply "$TMP/dump.yaml"
snapshot >"$TMP/after.txt"
expect_same_file "$TMP/before.txt" "$TMP/after.txt" "tc -j after dump + flush + apply equals what tc made"
expect_rc 0 ts diff "$TMP/dump.yaml"
expect_contains "in sync"
expect_rc 0 ts dump
cmp -s <(echo "$OUT") "$TMP/dump.yaml" && pass "second dump identical" || { fail "second dump differs"; diff <(echo "$OUT") "$TMP/dump.yaml"; }

# Without the bytes no table reads (and without the size table, read as
# `stab` since session 11), the file is not in sync, and says where.
sed 's/flower: {raw_options: "[0-9a-f]*"}/flower: {}/; s/, raw_attrs: "[0-9a-f]*"//; s/, stab: {[^}]*}//' "$TMP/dump.yaml" >"$TMP/plain.yaml"
expect_rc 2 ts diff "$TMP/plain.yaml"
expect_contains "(stab {linklayer: ethernet, overhead: 34} -> (none)"
expect_contains "(unread options attrs 70, 68 -> (none))"

# ---- struct fields tc computes, held otherwise ------------------------------
# The kernel keeps red's, sfq's and a gred virtual queue's Plog, sfq's
# flags byte, pedit's tc_pedit_sel flags, police's peak rate spec and a
# police rate spec's link layer 0 as sent; tc always sends Plog as min, max
# and the probability give it, no other flags, the rate's overhead, mpu and
# link layer in the peak's spec, and a link layer of 1 or 2. Changed over
# raw netlink (tests/kernel/tc_struct.py), tcsync reads them (plog,
# flag_bits, sel_flags, peak_*, linklayer: unaware) rather than computing
# them, and sends them back.
for d in v0 v1 v2 v3; do t qdisc del dev $d root 2>/dev/null || true; t qdisc del dev $d clsact 2>/dev/null || true; done
t qdisc add dev v0 root handle 1: red limit 400000 min 30000 max 90000 avpkt 1000 probability 0.1
t qdisc add dev v1 root handle 2: sfq redflowlimit 100000 min 8000 max 60000 probability 0.2 ecn
t actions add action pedit munge ip tos set 0x10 index 7
t actions add action police rate 1mbit burst 10k peakrate 2mbit mtu 2k overhead 10 mpu 64 index 9
t actions add action police rate 3mbit burst 20k index 10
t actions add action police pkts_rate 1000 pkts_burst 200 index 11
t qdisc add dev v2 root handle 4: gred setup vqs 4 default 0
t qdisc change dev v2 root handle 4: gred limit 60KB min 15K max 25K avpkt 1500 probability 0.1 vq 0
st() { ip netns exec "$NS" python3 "$(dirname "$0")/../kernel/tc_struct.py" "$@"; }
expect_rc 0 ts dump
echo "$OUT" >"$TMP/tc.yaml"
if grep -q 'plog\|flag_bits\|sel_flags\|unaware' "$TMP/tc.yaml"; then fail "tc's state dumps a held field: $(cat "$TMP/tc.yaml")"; else pass "tc's state dumps no plog, flag_bits, sel_flags, unaware"; fi
# tc_red_qopt: Plog at 13 (red's change needs TCA_RED_STAB, 2, which the
# kernel does not report); tc_sfq_qopt_v1: Plog at 41, flags at 43 (sfq has
# no change: deleted and added); tc_pedit_sel: flags at 21.
# tc_police: the rate spec at 20, the peak's at 32 (linklayer 33, overhead
# 34, mpu 38); police's init needs both rate tables (2, 3) and a cell_log.
# Police 10: its rate spec's link layer (21) 0, which its kernel keeps even
# with a rate table (the table's copy of the spec is the one it holds), and
# its bucket (12) one tick more than tc's for 20k, which no size gives (a
# byte is about 42 ticks at 3mbit).
# Police 11: its packet bucket (TCA_POLICE_PKTBURST64, 11, u64 ticks) at
# 3125001, one tick more than tc's 200 packets at 1000/s (15625 a packet),
# sent with its rate (10) as the kernel needs both.
# tc_gred_qopt: Plog at 41; gred takes one VQ's parameters alone (--alone:
# the dumped array starts with VQ 0's), with the idle table (2) and max_P
# (4, the one held: without it the kernel derives max_P from Plog).
ZEROS1K=$(printf '00%.0s' $(seq 1024))
ZEROS256=$(printf '00%.0s' $(seq 256))
maxp=$(st show qdisc v2 4: 4 | cut -c1-8)
pburst=$(st show action police 10 1 | python3 -c 'import struct,sys; print(struct.unpack_from("<I", bytes.fromhex(sys.stdin.read()), 12)[0] + 1)')
st patch qdisc v0 1: 1 +2:"$ZEROS256" 13:B:25 -- patch qdisc v1 2: 0 --recreate 41:B:25 43:B:0x41 -- \
   patch action pedit 7 2 21:B:5 -- \
   patch action police 9 1 +2:"$ZEROS1K" +3:"$ZEROS1K" 20:B:3 32:B:3 33:B:2 34:'<H':30 38:'<H':80 -- \
   patch action police 10 1 +2:"$ZEROS1K" 12:'<I':"$pburst" 20:B:3 21:B:0 -- \
   patch action police 11 1 +10:e803000000000000 +11:09af2f0000000000 -- \
   patch qdisc v2 4: 1 --alone +2:"$ZEROS256" +4:"$maxp" 41:B:3
# Counters cut: sfq's RED stats, pedit's and police's refcnt and bindcnt.
raw() {
  st show qdisc v0 1: 1 -- show qdisc v1 2: 0 -- show action pedit 7 2 -- show action police 9 1 -- \
     show action police 10 1 -- show qdisc v2 4: 1 |
    awk 'NR == 2 { $0 = substr($0, 1, 96) } NR == 3 { $0 = substr($0, 1, 8) substr($0, 41) } NR == 4 || NR == 5 { $0 = substr($0, 1, 88) } 1'
}
raw >"$TMP/raw.before"
echo "--- held structs (red, sfq, pedit, police 9 and 10, gred):"; sed 's/^/    /' "$TMP/raw.before"
TC_SNAPSHOT_DETAILS=1 snapshot >"$TMP/held.before"
# One grep for each list of words: a process costs about a second here.
expect_rc 2 ts diff "$TMP/tc.yaml"
n=$(grep -oF -e "plog 25 -> (none)" -e "flag_bits 64 -> 0" -e "sel_flags 5 -> 0" -e "peak_overhead 30 -> (none)" -e "peak_linklayer atm -> (none)" \
     -e "linklayer unaware -> ethernet" -e "plog 3" -e "burst_ticks $pburst -> (none)" -e "pkts_burst_ticks 3125001 -> (none)" <<<"$OUT" | sort -u | wc -l)
[ "$n" = 9 ] && pass "diff names plog (red, sfq, gred), flag_bits, sel_flags, peak_overhead, peak_linklayer, linklayer, burst_ticks, pkts_burst_ticks" || { fail "diff names $n of the 9 held fields"; echo "$OUT"; }
expect_rc 0 ts dump
echo "$OUT" >"$TMP/held.yaml"
echo "--- dump:"; sed 's/^/    /' "$TMP/held.yaml"
n=$(grep -oF -e "plog: 25" -e "flag_bits: 64" -e "sel_flags: 5" -e "peak_overhead: 30" -e "peak_linklayer: atm" -e "linklayer: unaware" -e "plog: 3" -e "burst_ticks: $pburst" -e "pkts_burst_ticks: 3125001" "$TMP/held.yaml" | wc -l || true)
[ "$n" = 10 ] && pass "dump has plog (red, sfq, gred), flag_bits, sel_flags, peak_overhead, peak_linklayer, linklayer, burst_ticks, pkts_burst_ticks" || fail "dump has $n of the 10 held fields"
t qdisc del dev v0 root
t qdisc del dev v1 root
t qdisc del dev v2 root
t actions flush action pedit
t actions flush action police
expect_rc 0 ts apply "$TMP/held.yaml"
raw >"$TMP/raw.after"
TC_SNAPSHOT_DETAILS=1 snapshot >"$TMP/held.after"
expect_same_file "$TMP/raw.before" "$TMP/raw.after" "Plog, flags and sel flags come back as the kernel held them"
expect_same_file "$TMP/held.before" "$TMP/held.after" "tc -d -j after dump + flush + apply equals the held state"
expect_rc 0 ts diff "$TMP/held.yaml"
expect_rc 0 ts dump
cmp -s <(echo "$OUT") "$TMP/held.yaml" && pass "second dump identical" || { fail "second dump differs"; diff <(echo "$OUT") "$TMP/held.yaml"; }
finish
