#!/usr/bin/env python3
"""Read or change one struct inside a live qdisc's or class's options over
raw rtnetlink, in the current network namespace (run it under `ip netns
exec`). It makes states tc cannot make (tc fills some struct fields from
others: htb's ceil spec and tbf's peak spec get the rate's overhead, mpu
and link layer), so tests can check that tcsync reads what the kernel
holds rather than what it would compute. tcsync's own code is not used.

usage: tc_struct.py show  qdisc|class DEV HANDLE ATTR
       tc_struct.py show  action KIND INDEX ATTR
       tc_struct.py patch qdisc|class|action ... ATTR [--recreate] [--alone] [+TYPE:HEX]... OFFSET:FMT:VALUE...
show prints the payload of attribute ATTR (a number) inside TCA_OPTIONS
(an action's TCA_ACT_OPTIONS; 0: TCA_OPTIONS is a bare struct) as hex; patch packs each VALUE with struct
FMT ("B", "<H", "<I") at OFFSET of that payload and sends the object's
options back: a qdisc or class as a change (RTM_NEWQDISC / RTM_NEWTCLASS
without NLM_F_CREATE), or with --recreate deleted and added again (sfq has
no change); an action as a replace, with that attribute alone. --alone
sends a qdisc's or class's attribute without the others the kernel
reported (gred takes one virtual queue's TCA_GRED_PARMS in a change
without its table's). +TYPE:HEX adds an option attribute the kernel needs
but does not report (red's TCA_RED_STAB; police's rate tables; gred's
TCA_GRED_STAB and TCA_GRED_MAX_P, without which it derives max_P from Plog). Several commands separated by "--"
run in one process, in order.
"""
import os
import socket
import struct
import sys

NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP = 0x1, 0x4, 0x300
NLMSG_ERROR, NLMSG_DONE = 2, 3
NLM_F_REPLACE, NLM_F_EXCL, NLM_F_CREATE = 0x100, 0x200, 0x400
RTM = {"qdisc": (36, 38), "class": (40, 42), "action": (48, 50)}  # (NEW, GET)
RTM_DELQDISC = 37
TCA_ACT_TAB, TCA_ACT_KIND, TCA_ACT_OPTIONS = 1, 1, 2
TCAMSG = b"\0\0\0\0"  # family, pads
TCA_KIND, TCA_OPTIONS = 1, 2
TCMSG = struct.Struct("=BxxxiIII")  # family, ifindex, handle, parent, info


def align(n):
    return (n + 3) & ~3


def attrs(buf):
    off = 0
    while off + 4 <= len(buf):
        ln, typ = struct.unpack_from("=HH", buf, off)
        if ln < 4:
            break
        yield typ & 0x3FFF, buf[off + 4:off + ln]
        off += align(ln)


def attr(typ, payload):
    return struct.pack("=HH", 4 + len(payload), typ) + payload + b"\0" * (align(len(payload)) - len(payload))


def parse_handle(s):
    major, _, minor = s.partition(":")
    return (int(major or "0", 16) << 16) | int(minor or "0", 16)


def talk(sock, msg_type, flags, body):
    sock.send(struct.pack("=IHHII", 16 + len(body), msg_type, flags, 1, 0) + body)
    out = []
    while True:
        data = sock.recv(1 << 20)
        off = 0
        while off < len(data):
            ln, typ = struct.unpack_from("=IH", data, off)
            payload = data[off + 16:off + ln]
            off += align(ln)
            if typ == NLMSG_DONE:
                return out
            if typ == NLMSG_ERROR:
                err = struct.unpack_from("=i", payload)[0]
                if err:
                    sys.exit(f"tc_struct: kernel refused: {os.strerror(-err)}")
                return out
            out.append(payload)


def patch_body(body, specs):
    for spec in specs:
        off, fmt, value = spec.split(":")
        struct.pack_into(fmt, body, int(off), int(value, 0))


def action(cmd, sock, kind, index, want, specs, extra):
    new, get = RTM["action"]
    kind_attr = attr(TCA_ACT_KIND, kind.encode() + b"\0")
    req = TCAMSG + attr(TCA_ACT_TAB, attr(1, kind_attr))
    for msg in talk(sock, get, NLM_F_REQUEST | NLM_F_DUMP, req):
        for t, tab in attrs(msg[4:]):
            if t != TCA_ACT_TAB:
                continue
            for _, one in attrs(tab):
                a = dict(attrs(one))
                opts = dict(attrs(a.get(TCA_ACT_OPTIONS, b"")))
                if want in opts and struct.unpack_from("=I", opts[want])[0] == index:
                    body = bytearray(opts[want])
                    if cmd == "show":
                        print(body.hex())
                        return
                    patch_body(body, specs)
                    options = attr(want, bytes(body)) + b"".join(attr(int(t), bytes.fromhex(h)) for t, h in extra)
                    one_new = kind_attr + attr(TCA_ACT_OPTIONS, options)
                    talk(sock, new, NLM_F_REQUEST | NLM_F_ACK | NLM_F_CREATE | NLM_F_REPLACE,
                         TCAMSG + attr(TCA_ACT_TAB, attr(1, one_new)))
                    return
    sys.exit(f"tc_struct: no action {kind} index {index}")


def run(argv):
    if len(argv) < 6 or argv[1] not in ("show", "patch") or argv[2] not in RTM:
        sys.exit(__doc__)
    cmd, what, want = argv[1], argv[2], int(argv[5])
    rest = argv[6:]
    recreate, alone = "--recreate" in rest, "--alone" in rest
    extra = [a[1:].split(":") for a in rest if a.startswith("+")]
    specs = [a for a in rest if a not in ("--recreate", "--alone") and not a.startswith("+")]
    sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)  # NETLINK_ROUTE
    sock.bind((0, 0))
    if what == "action":
        return action(cmd, sock, argv[3], int(argv[4], 0), want, specs, extra)
    dev, handle = argv[3], parse_handle(argv[4])
    ifindex = socket.if_nametoindex(dev)
    new, get = RTM[what]
    for msg in talk(sock, get, NLM_F_REQUEST | NLM_F_DUMP, TCMSG.pack(0, ifindex, 0, 0, 0)):
        _, idx, h, parent, info = TCMSG.unpack_from(msg)
        if idx == ifindex and h == handle:
            break
    else:
        sys.exit(f"tc_struct: no {what} {argv[4]} on {dev}")
    top = dict(attrs(msg[TCMSG.size:]))
    if want == 0:  # ATTR 0: TCA_OPTIONS is a bare struct (sfq)
        opts = [[0, bytearray(top[TCA_OPTIONS])]]
    else:
        opts = [[t, bytearray(p)] for t, p in attrs(top[TCA_OPTIONS])]
    body = next((p for t, p in opts if t == want), None)
    if body is None:
        sys.exit(f"tc_struct: no attribute {want} in the options")
    if cmd == "show":
        print(body.hex())
        return
    patch_body(body, specs)
    if alone:
        opts = [[want, body]]
    opts += [[int(t), bytes.fromhex(h)] for t, h in extra]
    # A bare struct (sfq's) is the options themselves, not an attribute.
    options = bytes(body) if want == 0 else b"".join(attr(t, bytes(p)) for t, p in opts)
    req = TCMSG.pack(0, ifindex, handle, parent, 0) + attr(TCA_KIND, top[TCA_KIND]) + attr(TCA_OPTIONS, options)
    flags = NLM_F_REQUEST | NLM_F_ACK
    if recreate:
        talk(sock, RTM_DELQDISC, flags, TCMSG.pack(0, ifindex, handle, parent, 0))
        flags |= NLM_F_CREATE | NLM_F_EXCL
    talk(sock, new, flags, req)


def main():
    # Commands separated by "--" run in one process (a Python start costs
    # seconds in the kernel lab's emulated guest).
    group = []
    for a in sys.argv[1:] + ["--"]:
        if a != "--":
            group.append(a)
        elif group:
            run([sys.argv[0]] + group)
            group = []


if __name__ == "__main__":
    main()
