#!/usr/bin/env python3
"""Generate one rule set in two equivalent forms: a tcsync YAML file and the
`tc -b` batch file that builds the same kernel state.

usage: gen.py KIND N OUT_PREFIX [--change PCT] [--table | --template]

KIND
  u32     one clsact qdisc on v0; a 256-bucket u32 hash table (2:) at ingress
          pref 10, one linking rule (10.0.0.0/8, bucket = last address byte),
          and N rules `ht 2:B: match ip dst 10.X.Y.B action mirred egress
          redirect dev v1`, handles 2:B:NODE (NODE = 1, 2, ... per bucket:
          the handles tcsync derives, given explicitly to tc).
  htb     subscribers shaped with htb: per device (v0, v2, v4, ... at most
          50,000 subscribers each, as a class minor is 16 bits) an htb root
          1:, a class 1:1 of 10gbit, one class 1:S per subscriber (10mbit,
          ceil 100mbit) and one u32 rule per subscriber in a 256-bucket hash
          table at parent 1: (`match ip dst ... flowid 1:S`).
  isp     htb as above, and under each subscriber class a pfifo leaf
          (handle S:, limit 100): the ISP shape of issue #20, one class, one
          leaf qdisc and one hashed u32 rule per subscriber.
  ispmq   the same subscribers in the layout large shapers use and tcsync's
          plan suggests past 4096 classes in one qdisc: v0 with 4 tx queues,
          an mq root 1:, under each queue Q an htb Q0: (10:, 20:, 30:, 40:)
          with its class Q0:1 of 10gbit and its own u32 hash table, and
          subscriber i in htb (i mod 4) + 1: its class, its pfifo leaf
          (handle 100 + i in hex) and its rule. The kernel walks every class of a qdisc
          after each class add (tc_bind_tclass), so four qdiscs of N/4
          classes cost it a quarter of one of N.
  flower  the shape of the kernel's tdc_batch.py: an ingress qdisc on v0 and N
          rules `flower skip_hw src_mac e4:11:00:XX:XX:XX dst_mac
          e4:12:00:XX:XX:XX action gact drop`, prio 1, handles 1..N. Needs
          flower and gact, which the host kernel lacks: for the kernel lab
          (tests/lab/), see bench/README.md.

Writes OUT_PREFIX.yaml, OUT_PREFIX.tc and OUT_PREFIX.meta (shell variables:
the devices to create). Actions in OUT_PREFIX.tc say `no_percpu`, as
tcsync's actions are by default (same kernel state); OUT_PREFIX.percpu.tc is
the same batch in tc's default words (actions with per-CPU statistics). With --change PCT it also writes
OUT_PREFIX.changed.yaml (the same set with PCT % of the rules changed) and
OUT_PREFIX.changed.tc (tc commands making that change on top of the full set):
  u32:    every (100/PCT)-th rule mirrors instead of redirecting (a replace)
  htb:    every (100/PCT)-th subscriber class gets ceil 200mbit (a change);
          isp likewise
  flower: every (100/PCT)-th rule passes instead of dropping (a replace)
With --table the YAML lists the rules as rule tables (template, columns, one
row per rule: README "Rule tables"), the same state in fewer YAML events.
With --template (u32) each rule is a block mapping over eleven lines, as a
Jinja or Ansible template writes it; the same state.
"""
import argparse
import sys

PER_DEV = 50000  # htb subscribers per device (class minors are 16 bits)


def u32_addr(i):
    # 10.a.b.c with c = i's low byte: the hash bucket the linking rule picks.
    return "10.%d.%d.%d" % ((i >> 16) & 255, (i >> 8) & 255, i & 255)


def hash_table_head(dev, yaml_parent, tc_parent):
    """The 256-bucket u32 hash table 2: at pref 10 and its link rule
    (10.0.0.0/8, bucket = the last address byte): YAML and tc lines."""
    y = ['      - {parent: %s, pref: 10, protocol: ip, handle: "2:", u32: {divisor: 256}}' % yaml_parent,
         "      - {parent: %s, pref: 10, protocol: ip, u32: {match: [{ip: {dst: 10.0.0.0/8}}], "
         'link: "2:", hashkey: {mask: 0x000000ff, at: 16}}}' % yaml_parent]
    t = ["filter add dev %s %s prio 10 protocol ip handle 2: u32 divisor 256" % (dev, tc_parent),
         "filter add dev %s %s prio 10 protocol ip handle 800::1 u32 link 2: hashkey mask 0x000000ff at 16 "
         "match ip dst 10.0.0.0/8" % (dev, tc_parent)]
    return y, t


def gen_u32(n, changed_every, table=False, template=False):
    """Yields (yaml_lines, tc_lines, changed_yaml_lines, changed_tc_lines) pieces."""
    if n > 256 * 0xFFF:
        sys.exit("u32: at most %d rules (256 buckets of 4095 node ids)" % (256 * 0xFFF))
    head_y = [
        "version: 1",
        "devices:",
        "  v0:",
        "    qdiscs:",
        "      - {kind: clsact}",
        "    filters:",
    ]
    hy, ht = hash_table_head("v0", "ingress", "ingress")
    head_y += hy
    head_t = ["qdisc add dev v0 clsact"] + ht
    body_y, body_t, ch_y, ch_t = [], [], [], []
    ry = ('      - {parent: ingress, pref: 10, protocol: ip, u32: {ht: "2:%x:", match: [{ip: {dst: %s}}]}, '
          "actions: [{mirred: {action: %s, dev: v1}}]}")
    if table:
        head_y += [
            "      - template: {parent: ingress, pref: 10, protocol: ip, u32: {match: [{ip: {}}]}, "
            "actions: [{mirred: {dev: v1}}]}",
            "        columns: [u32.ht, u32.match.0.ip.dst, actions.0.mirred.action]",
            "        rows:",
        ]
        ry = '          - "2:%x: %s %s"'  # quoted: "2:a: " would be a YAML key
    elif template:
        # As a template (Ansible, Jinja) writes a rule: block mappings, a
        # comment, one key a line.
        ry = ("      # rule\n      - parent: ingress\n        pref: 10\n        protocol: ip\n        u32:\n"
              '          ht: "2:%x:"\n          match:\n            - ip: {dst: %s}\n        actions:\n'
              "          - mirred:\n              action: %s\n              dev: v1")
    rt = ("filter %s dev v0 ingress prio 10 protocol ip handle 2:%x:%x u32 ht 2:%x: match ip dst %s "
          "action mirred egress %s dev v1 no_percpu")
    for i in range(n):
        b, node, a = i & 255, (i >> 8) + 1, u32_addr(i)
        body_y.append(ry % (b, a, "redirect"))
        body_t.append(rt % ("add", b, node, b, a, "redirect"))
        if changed_every and i % changed_every == changed_every - 1:
            ch_y.append(ry % (b, a, "mirror"))
            ch_t.append(rt % ("replace", b, node, b, a, "mirror"))
        elif changed_every:
            ch_y.append(body_y[-1])
    return head_y + body_y, head_t + body_t, head_y + ch_y, ch_t, ["v0"], ["v1"]


def gen_htb(n, changed_every, table=False):
    ndev = max(1, (n + PER_DEV - 1) // PER_DEV)
    y, t, cy, ct = ["version: 1", "devices:"], [], ["version: 1", "devices:"], []
    devs, peers = [], []
    for d in range(ndev):
        dev = "v%d" % (2 * d)
        devs.append(dev)
        peers.append("v%d" % (2 * d + 1))
        lo, hi = d * PER_DEV, min(n, (d + 1) * PER_DEV)
        cls_y, cls_cy, flt_y = [], [], []
        head = [
            "  %s:" % dev,
            "    qdiscs:",
            '      - {kind: htb, handle: "1:"}',
            "    classes:",
            '      - {classid: "1:1", rate: 10gbit}',
        ]
        t.append("qdisc add dev %s root handle 1: htb" % dev)
        t.append("class add dev %s parent 1: classid 1:1 htb rate 10gbit" % dev)
        hy, ftc = hash_table_head(dev, '"1:"', "parent 1:")
        fhead = ["    filters:"] + hy
        cy_t = '      - {classid: "1:%x", parent: "1:1", rate: 10mbit, ceil: %s}'
        fy_t = ('      - {parent: "1:", pref: 10, protocol: ip, u32: {ht: "2:%x:", match: [{ip: {dst: %s}}]}, '
                'classid: "1:%x"}')
        if table:
            head += ["      - template: {parent: \"1:1\", rate: 10mbit}", "        columns: [classid, ceil]",
                     "        rows:"]
            fhead += ["      - template: {parent: \"1:\", pref: 10, protocol: ip, u32: {match: [{ip: {}}]}}",
                      "        columns: [u32.ht, u32.match.0.ip.dst, classid]", "        rows:"]
            cy_t = "          - 1:%x %s"
            fy_t = '          - "2:%x: %s 1:%x"'
        for i in range(lo, hi):
            s = i - lo + 2  # class minor: 2 .. 50001
            cls_y.append(cy_t % (s, "100mbit"))
            t.append("class add dev %s parent 1:1 classid 1:%x htb rate 10mbit ceil 100mbit" % (dev, s))
            if changed_every and i % changed_every == changed_every - 1:
                cls_cy.append(cy_t % (s, "200mbit"))
                ct.append("class change dev %s parent 1:1 classid 1:%x htb rate 10mbit ceil 200mbit" % (dev, s))
            elif changed_every:
                cls_cy.append(cls_y[-1])
            j = i - lo
            b, node, a = j & 255, (j >> 8) + 1, u32_addr(j)
            flt_y.append(fy_t % (b, a, s))
            ftc.append("filter add dev %s parent 1: prio 10 protocol ip handle 2:%x:%x u32 ht 2:%x: match ip dst %s "
                       "flowid 1:%x" % (dev, b, node, b, a, s))
        y += head + cls_y + fhead + flt_y
        cy += head + cls_cy + fhead + flt_y
        t += ftc
    return y, t, cy, ct, devs, peers


def mac(i):
    return "%02x:%02x:%02x" % ((i >> 16) & 255, (i >> 8) & 255, i & 255)


def gen_flower(n, changed_every, table=False):
    if n > 1 << 24:
        sys.exit("flower: at most 2^24 rules (3 MAC bytes)")
    y = ["version: 1", "devices:", "  v0:", "    qdiscs:", "      - {kind: ingress}", "    filters:"]
    t = ["qdisc add dev v0 ingress"]
    cy, ct = list(y), []
    ry = ("      - {parent: \"ffff:\", pref: 1, protocol: ip, handle: %d, flower: {skip_hw: true, "
          "src_mac: \"e4:11:00:%s\", dst_mac: \"e4:12:00:%s\"}, actions: [{gact: {control: %s}}]}")
    if table:
        y += ['      - template: {parent: "ffff:", pref: 1, protocol: ip, flower: {skip_hw: true}, actions: [{gact: {}}]}',
              "        columns: [handle, flower.src_mac, flower.dst_mac, actions.0.gact.control]",
              "        rows:"]
        cy = list(y)
        ry = "          - %d e4:11:00:%s e4:12:00:%s %s"
    rt = ("filter %s dev v0 parent ffff: protocol ip prio 1 handle %d flower skip_hw src_mac e4:11:00:%s "
          "dst_mac e4:12:00:%s action gact %s no_percpu")
    for i in range(n):
        m = mac(i)
        y.append(ry % (i + 1, m, m, "drop"))
        t.append(rt % ("add", i + 1, m, m, "drop"))
        if changed_every and i % changed_every == changed_every - 1:
            cy.append(ry % (i + 1, m, m, "pass"))
            ct.append(rt % ("replace", i + 1, m, m, "pass"))
        elif changed_every:
            cy.append(y[-1])
    return y, t, cy, ct, ["v0"], ["v1"]


def gen_isp(n, changed_every, table=False):
    """htb's set with a pfifo leaf under every subscriber class."""
    y, t, cy, ct, devs, peers = gen_htb(n, changed_every, table)
    leaves = {}  # device -> its leaf qdiscs, in class order
    tc = []
    for line in t:
        tc.append(line)
        w = line.split()
        if w[:2] == ["class", "add"] and w[5] == "1:1":  # a subscriber class: class add dev D parent 1:1 classid 1:S
            dev, minor = w[3], w[7].split(":")[1]
            tc.append("qdisc add dev %s parent 1:%s handle %s: pfifo limit 100" % (dev, minor, minor))
            leaves.setdefault(dev, []).append('      - {kind: pfifo, parent: "1:%s", handle: "%s:", limit: 100}' % (minor, minor))

    def with_leaves(lines):
        out, dev = [], None
        for line in lines:
            out.append(line)
            if line.startswith("  ") and not line.startswith("   ") and line.endswith(":"):
                dev = line.strip()[:-1]
            if line == '      - {kind: htb, handle: "1:"}':
                out += leaves.get(dev, [])
        return out
    return with_leaves(y), tc, with_leaves(cy), ct, devs, peers


MQ_QUEUES = 4


def gen_isp_mq(n, changed_every, table=False):
    if table:
        sys.exit("ispmq: no --table form")
    if n > MQ_QUEUES * 50000 or n + 0x100 > 0xffff:
        sys.exit("ispmq: at most %d subscribers (leaf handles are 16 bits)" % (0xffff - 0x100))
    y = ["version: 1", "devices:", "  v0:", "    qdiscs:", '      - {kind: mq, handle: "1:"}']
    t = ["qdisc add dev v0 root handle 1: mq"]
    cls, flt, leaves, cls_changed, ct = [], [], [], [], []
    for q in range(1, MQ_QUEUES + 1):
        h = "%x" % (0x10 * q)
        y.append('      - {kind: htb, parent: "1:%x", handle: "%s:"}' % (q, h))
        t.append("qdisc add dev v0 parent 1:%x handle %s: htb" % (q, h))
        cls.append('      - {classid: "%s:1", rate: 10gbit}' % h)
        t.append("class add dev v0 parent %s: classid %s:1 htb rate 10gbit" % (h, h))
        hy, ht = hash_table_head("v0", '"%s:"' % h, "parent %s:" % h)
        flt += hy
        t += ht
    cls_changed = list(cls)
    nodes = {}  # (queue, bucket) -> rules so far: the next node id
    for i in range(n):
        q, j = i % MQ_QUEUES + 1, i // MQ_QUEUES
        h, s, leaf = "%x" % (0x10 * q), j + 2, 0x100 + i
        b, a = i & 255, u32_addr(i)  # the bucket the hash key (the address's last byte) picks
        node = nodes[(q, b)] = nodes.get((q, b), 0) + 1
        line = '      - {classid: "%s:%x", parent: "%s:1", rate: 10mbit, ceil: %%s}' % (h, s, h)
        cls.append(line % "100mbit")
        t.append("class add dev v0 parent %s:1 classid %s:%x htb rate 10mbit ceil 100mbit" % (h, h, s))
        leaves.append('      - {kind: pfifo, parent: "%s:%x", handle: "%x:", limit: 100}' % (h, s, leaf))
        t.append("qdisc add dev v0 parent %s:%x handle %x: pfifo limit 100" % (h, s, leaf))
        flt.append('      - {parent: "%s:", pref: 10, protocol: ip, u32: {ht: "2:%x:", match: [{ip: {dst: %s}}]}, '
                   'classid: "%s:%x"}' % (h, b, a, h, s))
        t.append("filter add dev v0 parent %s: prio 10 protocol ip handle 2:%x:%x u32 ht 2:%x: match ip dst %s "
                 "flowid %s:%x" % (h, b, node, b, a, h, s))
        if changed_every and i % changed_every == changed_every - 1:
            cls_changed.append(line % "200mbit")
            ct.append("class change dev v0 parent %s:1 classid %s:%x htb rate 10mbit ceil 200mbit" % (h, h, s))
        else:
            cls_changed.append(cls[-1])
    y += leaves
    cy = y + ["    classes:"] + cls_changed + ["    filters:"] + flt
    y += ["    classes:"] + cls + ["    filters:"] + flt
    return y, t, cy, ct, ["v0"], ["v1"]


def write(path, lines):
    with open(path, "w") as f:
        f.write("\n".join(lines))
        f.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("kind", choices=["u32", "htb", "isp", "ispmq", "flower"])
    ap.add_argument("n", type=int)
    ap.add_argument("out")
    ap.add_argument("--change", type=float, default=0, help="also write a variant with PCT %% of the rules changed")
    ap.add_argument("--table", action="store_true", help="rules as rule tables (template, columns, rows)")
    ap.add_argument("--template", action="store_true",
                    help="u32: each rule in block style, as a template writes it")
    a = ap.parse_args()
    if a.template and a.kind != "u32":
        sys.exit("--template: u32 only")
    every = int(round(100 / a.change)) if a.change else 0
    y, t, cy, ct, devs, peers = {"u32": gen_u32, "htb": gen_htb, "isp": gen_isp, "ispmq": gen_isp_mq, "flower": gen_flower}[a.kind](a.n, every, a.table, **({"template": True} if a.template else {}))
    write(a.out + ".yaml", y)
    write(a.out + ".tc", t)
    if any(" no_percpu" in l for l in t):
        write(a.out + ".percpu.tc", [l.replace(" no_percpu", "") for l in t])
    if every:
        write(a.out + ".changed.yaml", cy)
        write(a.out + ".changed.tc", ct)
    write(a.out + ".meta", ["DEVS='%s'" % " ".join(devs), "PEERS='%s'" % " ".join(peers),
                            "TXQ=%d" % (MQ_QUEUES if a.kind == "ispmq" else 1),
                            "KIND=%s" % a.kind, "N=%d" % a.n, "CHANGED=%d" % (len(ct))])


main()
