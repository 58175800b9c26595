# -*- coding: utf-8 -*-
"""
Salt state module for tcsync: keep a minion's tc (traffic control) state equal
to a tcsync YAML file.

Install: copy this file to ``salt://_states/tcsync.py`` (or your file_roots'
``_states``) and run ``saltutil.sync_states``. The minion needs the tcsync
binary (the Debian package installs /usr/sbin/tcsync).

.. code-block:: yaml

    /etc/tcsync/uplink.yaml:
      tcsync.managed:
        - source: salt://tc/uplink.yaml   # optional: fetched to the minion first
        - netns: lab1                     # optional

``test=True`` runs ``tcsync diff`` only: the result is None when changes are
pending, with tcsync's plan under ``changes``. A file tcsync rejects fails the
state with tcsync's own ``FILE:LINE:COL: error: ...`` text as the comment.
"""
import json
import os
import shutil
import tempfile

__virtualname__ = "tcsync"

_SIGNS = {"add": "+", "delete": "-", "replace": "~", "change": "~"}


def __virtual__():
    if shutil.which("tcsync") or os.path.exists("/usr/sbin/tcsync"):
        return __virtualname__
    return (False, "tcsync is not installed on this minion")


def _plan_text(plan):
    lines = []
    for s in plan.get("steps", []):
        line = "%s %s: %s" % (_SIGNS.get(s.get("op"), "?"), s.get("device", ""), s.get("what", ""))
        if s.get("reason") and s.get("reason") != "new":
            line += "  (%s)" % s["reason"]
        if s.get("status") and s["status"] != "ok":
            line += "  %s" % s["status"]
        lines.append(line)
    return "\n".join(lines)


def _run(binary, netns, args, shown_as=None, path=None):
    cmd = [binary, "--color", "never", "--format", "json"]
    if netns:
        cmd += ["--netns", netns]
    cmd += args
    r = __salt__["cmd.run_all"](cmd, python_shell=False, ignore_retcode=True, env={"NO_COLOR": "1"})
    out, err = r.get("stdout", ""), r.get("stderr", "")
    if shown_as and path:
        out, err = out.replace(path, shown_as), err.replace(path, shown_as)
    plan = None
    if out.strip():
        try:
            plan = json.loads(out)
        except ValueError:
            plan = None
    return r.get("retcode", 1), plan, err.strip()


def managed(name, source=None, contents=None, netns=None, on_error="rollback", binary=None, saltenv="base"):
    """
    Make the tc state equal to a tcsync file.

    name
        Path of the tcsync YAML file on the minion (the state's ID by default).
    source
        A file to fetch first (``salt://...``); it is applied from the minion's cache.
    contents
        The YAML itself, instead of a file; errors name it ``contents``.
    netns
        Work inside this named network namespace.
    on_error
        rollback (default), stop or continue: what tcsync does when the kernel refuses a step.
    binary
        The tcsync executable (default: tcsync from the PATH, else /usr/sbin/tcsync).
    """
    ret = {"name": name, "changes": {}, "result": False, "comment": ""}
    if source and contents is not None:
        ret["comment"] = "give source or contents, not both"
        return ret
    if on_error not in ("rollback", "stop", "continue"):
        ret["comment"] = "on_error must be rollback, stop or continue, not %r" % (on_error,)
        return ret
    binary = binary or shutil.which("tcsync") or "/usr/sbin/tcsync"

    tmpdir = None
    path, shown_as = name, None
    try:
        if contents is not None:
            tmpdir = tempfile.mkdtemp(prefix="salt-tcsync-")
            path = os.path.join(tmpdir, "contents.yaml")
            with open(path, "w") as f:
                f.write(contents)
            shown_as = "contents"
        elif source:
            path = __salt__["cp.cache_file"](source, saltenv)
            if not path:
                ret["comment"] = "cannot fetch %s" % source
                return ret
            shown_as = source
        elif not os.path.isfile(path):
            ret["comment"] = "%s: no such file" % path
            return ret

        rc, plan, err = _run(binary, netns, ["diff", path], shown_as, path)
        if rc == 0 and plan is not None:
            ret["result"] = True
            ret["comment"] = "tc state is in sync with %s" % (shown_as or path)
            return ret
        if rc != 2 or plan is None:
            ret["comment"] = err or "tcsync diff failed (exit %s)" % rc
            return ret

        text = _plan_text(plan)
        if __opts__.get("test"):
            ret["result"] = None
            ret["changes"] = {"plan": plan}
            ret["comment"] = "%d tc change(s) would be made:\n%s" % (plan.get("changes", 0), text)
            return ret

        rc, applied, err = _run(binary, netns, ["apply", "--on-error", on_error, path], shown_as, path)
        if applied is not None:
            ret["changes"] = {"plan": applied}
        if rc != 0:
            ret["comment"] = err or "tcsync apply failed (exit %s)" % rc
            return ret
        ret["result"] = True
        ret["comment"] = "%d tc change(s) made:\n%s" % ((applied or plan).get("changes", 0), _plan_text(applied or plan))
        return ret
    finally:
        if tmpdir:
            shutil.rmtree(tmpdir, ignore_errors=True)
