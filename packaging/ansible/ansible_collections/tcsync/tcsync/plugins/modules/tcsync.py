#!/usr/bin/python
# -*- coding: utf-8 -*-
# Ansible module for tcsync: the managed host's tc state made equal to a
# tcsync YAML file. The work is tcsync's; this module only maps its contract
# (exit codes, the JSON plan, FILE:LINE:COL errors) onto Ansible's.
from __future__ import absolute_import, division, print_function

__metaclass__ = type

DOCUMENTATION = r"""
---
module: tcsync
short_description: Make a host's tc (traffic control) state equal to a tcsync file
version_added: "0.1.0"
description:
  - Runs C(tcsync --format json diff) on the managed host and, when the kernel
    differs from the file, C(tcsync --format json apply).
  - tcsync owns what the file declares (the qdiscs, classes and filters of each
    device it lists) and never touches anything else.
  - Idempotent, so a second run reports C(changed=false).
options:
  src:
    description:
      - Path of a tcsync YAML file on the managed host.
      - Mutually exclusive with I(content).
    type: path
  content:
    description:
      - The tcsync YAML itself (for example from a template lookup). It is written
        to a private temporary file on the managed host; errors name it C(content).
      - Mutually exclusive with I(src).
    type: str
  netns:
    description:
      - Work inside this named network namespace (as C(ip netns) makes them).
    type: str
  on_error:
    description:
      - What tcsync does when the kernel refuses a step (C(tcsync apply --on-error)).
    type: str
    choices: [rollback, stop, continue]
    default: rollback
  binary:
    description:
      - The tcsync executable. Default is C(tcsync) from the PATH, C(/usr/sbin) or C(/usr/local/sbin).
    type: path
notes:
  - Check mode runs C(tcsync diff) only. Diff mode shows the plan and, after an
    apply, C(tcsync dump) of the changed devices before and after.
  - Needs root on the managed host (become) for anything but a file error.
requirements:
  - tcsync on the managed host
author:
  - tcsync contributors
"""

EXAMPLES = r"""
- name: Shape the uplink
  tcsync.tcsync.tcsync:
    src: /etc/tcsync/uplink.yaml
  become: true

- name: A lab router living in a network namespace
  tcsync.tcsync.tcsync:
    content: "{{ lookup('template', 'lab.yaml.j2') }}"
    netns: "{{ inventory_hostname }}"
"""

RETURN = r"""
changed:
  description: Whether the kernel differed from the file (and, outside check mode, was changed).
  type: bool
  returned: always
changes:
  description: The number of steps in the plan.
  type: int
  returned: success
plan:
  description:
    - "tcsync's plan as JSON (schemas/plan.schema.json) with format, version, command, changes and steps
      (op, object, device, what, reason, location; after an apply also status, and errno and
      kernel_message for a refused step)."
  type: dict
  returned: success, and on a failed apply
  sample: {"format": "tcsync-plan", "version": 1, "command": "diff", "changes": 1,
           "steps": [{"op": "add", "object": "qdisc", "device": "eth0", "what": "qdisc htb 1: root",
                      "reason": "new", "location": "/etc/tcsync/uplink.yaml:5:9"}]}
msg:
  description: "On failure, tcsync's own error text (FILE:LINE:COL: error: ..., the source line and a caret)."
  type: str
  returned: failure
rc:
  description: tcsync's exit code (1 for an error in the file or from the kernel).
  type: int
  returned: failure
"""

import json
import os

from ansible.module_utils.basic import AnsibleModule

SIGNS = {"add": "+", "delete": "-", "replace": "~", "change": "~"}


def plan_text(plan):
    """The plan as `tcsync diff` prints it: + - ~ lines with reason and location."""
    lines = []
    for s in plan.get("steps", []):
        line = "%s %s: %s" % (SIGNS.get(s.get("op"), "?"), s.get("device", ""), s.get("what", ""))
        if s.get("reason") and s.get("reason") != "new":
            line += "  (%s)" % s["reason"]
        if s.get("location"):
            line += "  [%s]" % s["location"]
        if s.get("status") and s["status"] != "ok":
            line += "  %s" % s["status"]
        lines.append(line)
    return "\n".join(lines) + ("\n" if lines else "")


class Tcsync(object):
    def __init__(self, module, binary, netns, path, shown_as):
        self.module = module
        self.binary = binary
        self.netns = netns
        self.path = path
        self.shown_as = shown_as  # how errors name the file (content: "content")

    def run(self, *args):
        cmd = [self.binary, "--color", "never"]
        if self.netns:
            cmd += ["--netns", self.netns]
        cmd += list(args)
        rc, out, err = self.module.run_command(cmd, environ_update={"NO_COLOR": "1"})
        if self.shown_as != self.path:
            out = out.replace(self.path, self.shown_as)
            err = err.replace(self.path, self.shown_as)
        return rc, out, err

    def plan(self, *args):
        rc, out, err = self.run("--format", "json", *args)
        plan = None
        if out.strip():
            try:
                plan = json.loads(out)
            except ValueError:
                self.module.fail_json(msg="tcsync printed something that is not a JSON plan", rc=rc, stdout=out, stderr=err)
        return rc, plan, err

    def dump(self, devices):
        args = ["dump"]
        for d in devices:
            args += ["--dev", d]
        rc, out, err = self.run(*args)
        return out if rc == 0 else "(tcsync dump failed: %s)" % err.strip()


def main():
    module = AnsibleModule(
        argument_spec=dict(
            src=dict(type="path"),
            content=dict(type="str"),
            netns=dict(type="str"),
            on_error=dict(type="str", default="rollback", choices=["rollback", "stop", "continue"]),
            binary=dict(type="path"),
        ),
        mutually_exclusive=[("src", "content")],
        required_one_of=[("src", "content")],
        supports_check_mode=True,
    )
    p = module.params
    binary = p["binary"] or module.get_bin_path("tcsync", required=True, opt_dirs=["/usr/sbin", "/usr/local/sbin"])

    if p["content"] is not None:
        path = os.path.join(module.tmpdir, "content.yaml")
        with open(path, "w") as f:
            os.chmod(path, 0o600)
            f.write(p["content"])
        shown_as = "content"
    else:
        path = p["src"]
        shown_as = path
        if not os.path.isfile(path):
            module.fail_json(msg="%s: no such file on %s" % (path, os.uname()[1]), rc=1)

    t = Tcsync(module, binary, p["netns"], path, shown_as)
    result = dict(changed=False)

    # tcsync's exit code goes back only with a failure: Ansible reads a
    # non-zero `rc` in a result as a failed task, and diff's 2 is no failure.
    rc, plan, err = t.plan("diff", path)
    if rc not in (0, 2) or plan is None:
        module.fail_json(msg=err.strip() or "tcsync diff failed (exit %d)" % rc, rc=rc, **result)
    result["plan"] = plan
    result["changes"] = plan.get("changes", 0)
    if rc == 0:
        module.exit_json(**result)

    result["changed"] = True
    devices = sorted(set(s["device"] for s in plan.get("steps", [])))
    diffs = [dict(prepared=plan_text(plan))]
    before = t.dump(devices) if module._diff else None
    if module.check_mode:
        if module._diff:
            result["diff"] = diffs
        module.exit_json(**result)

    rc, applied, err = t.plan("apply", "--on-error", p["on_error"], path)
    if applied is not None:
        result["plan"] = applied
        result["changes"] = applied.get("changes", 0)
    if rc != 0:
        module.fail_json(msg=err.strip() or "tcsync apply failed (exit %d)" % rc, rc=rc, **result)
    if module._diff:
        header = "tcsync dump --dev %s%s" % (" --dev ".join(devices), " (netns %s)" % p["netns"] if p["netns"] else "")
        diffs.append(dict(before=before, after=t.dump(devices), before_header=header + ", before",
                          after_header=header + ", after"))
        result["diff"] = diffs
    module.exit_json(**result)


if __name__ == "__main__":
    main()
