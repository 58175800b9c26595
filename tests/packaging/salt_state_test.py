#!/usr/bin/env python3
"""The Salt state module tcsync.managed (packaging/salt/_states/tcsync.py)
and the cmd.run stateful wrapper, without a Salt master or minion: Salt is
not in Debian 12, so the loader's dunders are faked (__salt__ with cmd.run_all
and cp.cache_file, __opts__ with test) and tcsync is either scripted (plans,
exit codes) or the real binary for what needs no kernel (file errors).

usage: salt_state_test.py [path/to/tcsync]   (or TCSYNC_BIN in the environment)
"""
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import unittest

SRC = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
TCSYNC = sys.argv.pop(1) if len(sys.argv) > 1 else os.environ.get("TCSYNC_BIN", "")


def load_state_module():
    spec = importlib.util.spec_from_file_location("tcsync_state", os.path.join(SRC, "packaging/salt/_states/tcsync.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def plan(command, ops, status=None):
    steps = []
    for op in ops:
        s = {"op": op, "object": "qdisc", "device": "eth0", "what": "qdisc htb 1: root", "reason": "new",
             "location": "site.yaml:5:9"}
        if status:
            s["status"] = status
        steps.append(s)
    return json.dumps({"format": "tcsync-plan", "version": 1, "command": command, "changes": len(steps), "steps": steps})


class ScriptedTcsync:
    """cmd.run_all that answers like tcsync: {subcommand: (retcode, stdout, stderr)}."""

    def __init__(self, answers):
        self.answers = answers
        self.calls = []

    def __call__(self, cmd, python_shell=True, ignore_retcode=False, env=None):
        assert python_shell is False, "the state must not go through a shell"
        self.calls.append(cmd)
        sub = next(a for a in cmd[1:] if a in ("diff", "apply"))
        rc, out, err = self.answers[sub]
        return {"retcode": rc, "stdout": out, "stderr": err}


def real_run_all(cmd, python_shell=True, ignore_retcode=False, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, **(env or {})))
    return {"retcode": r.returncode, "stdout": r.stdout, "stderr": r.stderr}


class ManagedTest(unittest.TestCase):
    def setUp(self):
        self.mod = load_state_module()
        self.tmp = tempfile.TemporaryDirectory()
        self.file = os.path.join(self.tmp.name, "site.yaml")
        with open(self.file, "w") as f:
            f.write("version: 1\ndevices: {}\n")

    def tearDown(self):
        self.tmp.cleanup()

    def use(self, run_all, test=False):
        self.mod.__salt__ = {"cmd.run_all": run_all, "cp.cache_file": lambda src, env: self.file}
        self.mod.__opts__ = {"test": test}

    def test_in_sync_is_true_without_changes(self):
        fake = ScriptedTcsync({"diff": (0, plan("diff", []), "")})
        self.use(fake)
        r = self.mod.managed(self.file, binary="tcsync")
        self.assertEqual(r["result"], True)
        self.assertEqual(r["changes"], {})
        self.assertEqual(len(fake.calls), 1)

    def test_test_mode_returns_the_plan_with_result_none_and_applies_nothing(self):
        fake = ScriptedTcsync({"diff": (2, plan("diff", ["add", "delete"]), "")})
        self.use(fake, test=True)
        r = self.mod.managed(self.file, binary="tcsync", netns="lab1")
        self.assertIsNone(r["result"])
        self.assertEqual(r["changes"]["plan"]["changes"], 2)
        self.assertIn("+ eth0: qdisc htb 1: root", r["comment"])
        self.assertIn("- eth0: qdisc htb 1: root", r["comment"])
        self.assertEqual(fake.calls, [["tcsync", "--color", "never", "--format", "json", "--netns", "lab1", "diff", self.file]])

    def test_changes_are_applied_and_reported(self):
        fake = ScriptedTcsync({"diff": (2, plan("diff", ["add"]), ""), "apply": (0, plan("apply", ["add"], "ok"), "")})
        self.use(fake)
        r = self.mod.managed(self.file, binary="tcsync", on_error="stop")
        self.assertEqual(r["result"], True)
        self.assertEqual(r["changes"]["plan"]["command"], "apply")
        self.assertEqual(fake.calls[1], ["tcsync", "--color", "never", "--format", "json", "apply", "--on-error", "stop", self.file])

    def test_a_refused_apply_fails_with_tcsyncs_text(self):
        err = "site.yaml:9:9: error: kernel rejected add of eth0 filter u32 1: pref 5: Network device not found (Invalid argument)"
        fake = ScriptedTcsync({"diff": (2, plan("diff", ["add"]), ""), "apply": (1, plan("apply", ["add"], "failed"), err)})
        self.use(fake)
        r = self.mod.managed(self.file, binary="tcsync")
        self.assertEqual(r["result"], False)
        self.assertEqual(r["comment"], err)
        self.assertEqual(r["changes"]["plan"]["steps"][0]["status"], "failed")

    def test_bad_arguments(self):
        self.use(ScriptedTcsync({}))
        self.assertIn("not both", self.mod.managed(self.file, source="salt://x", contents="y")["comment"])
        self.assertIn("on_error", self.mod.managed(self.file, on_error="ignore")["comment"])
        self.assertIn("no such file", self.mod.managed(self.file + ".missing", binary="tcsync")["comment"])

    @unittest.skipUnless(TCSYNC, "needs the tcsync binary (argument or TCSYNC_BIN)")
    def test_a_bad_file_fails_with_file_line_col(self):
        with open(self.file, "w") as f:
            f.write("version: 1\ndevices:\n  eth0:\n    qdiscs:\n      - {kind: htb, handle: \"1:\", defualt: \"1:30\"}\n")
        self.use(real_run_all)
        r = self.mod.managed(self.file, binary=TCSYNC)
        self.assertEqual(r["result"], False)
        self.assertTrue(r["comment"].startswith(self.file + ":5:35: error: unknown key 'defualt' in htb qdisc (did you mean 'default'?)"),
                        r["comment"])

    @unittest.skipUnless(TCSYNC, "needs the tcsync binary (argument or TCSYNC_BIN)")
    def test_contents_are_named_contents_in_errors_and_removed(self):
        self.use(real_run_all, test=True)
        before = set(os.listdir(tempfile.gettempdir()))
        r = self.mod.managed("tc", binary=TCSYNC, contents="version: 2\ndevices: {}\n")
        self.assertEqual(r["result"], False)
        self.assertTrue(r["comment"].startswith("contents:1:10: error: unsupported version '2'"), r["comment"])
        self.assertEqual({d for d in set(os.listdir(tempfile.gettempdir())) - before if d.startswith("salt-tcsync-")}, set())


class StatefulWrapperTest(unittest.TestCase):
    """packaging/salt/tcsync-salt-stateful against a scripted tcsync."""

    def run_wrapper(self, diff_rc, apply_rc, *args):
        with tempfile.TemporaryDirectory() as d:
            fake = os.path.join(d, "tcsync")
            log = os.path.join(d, "log")
            with open(fake, "w") as f:
                f.write("#!/bin/sh\necho \"$@\" >>%s\ncase \" $* \" in\n"
                        "  *' diff '*) echo '+ eth0: qdisc htb 1: root'; exit %d ;;\n"
                        "  *' apply '*) echo '+ eth0: qdisc htb 1: root'; echo 'applied 1 changes'; exit %d ;;\nesac\n"
                        % (log, diff_rc, apply_rc))
            os.chmod(fake, 0o755)
            r = subprocess.run([os.path.join(SRC, "packaging/salt/tcsync-salt-stateful"), *args, "/etc/tcsync/a.yaml"],
                               capture_output=True, text=True, env=dict(os.environ, TCSYNC=fake))
            calls = []
            if os.path.exists(log):
                with open(log) as fh:
                    calls = fh.read().splitlines()
            return r.returncode, r.stdout.rstrip("\n").splitlines()[-1:] or [""], calls

    def test_in_sync(self):
        self.assertEqual(self.run_wrapper(0, 0), (0, ['changed=no comment="tc state is in sync"'],
                                                  ["--color never diff /etc/tcsync/a.yaml"]))

    def test_test_mode_only_diffs(self):
        rc, last, calls = self.run_wrapper(2, 0, "--test", "--netns", "lab1")
        self.assertEqual((rc, last), (0, ['changed=yes comment="1 tc change(s) would be made"']))
        self.assertEqual(calls, ["--color never --netns lab1 diff /etc/tcsync/a.yaml"])

    def test_netns_name_is_one_word(self):
        # A name with a space and a glob stays one argument (the script quotes it).
        with tempfile.TemporaryDirectory() as d:
            fake = os.path.join(d, "tcsync")
            log = os.path.join(d, "log")
            with open(fake, "w") as f:
                f.write("#!/bin/sh\nprintf '[%%s]' \"$@\" >>%s\necho >>%s\nexit 0\n" % (log, log))
            os.chmod(fake, 0o755)
            r = subprocess.run([os.path.join(SRC, "packaging/salt/tcsync-salt-stateful"), "--netns", "lab 1*",
                                "/etc/tcsync/a.yaml"], capture_output=True, text=True, cwd=d,
                               env=dict(os.environ, TCSYNC=fake))
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(log) as fh:
                self.assertEqual(fh.read().splitlines(),
                                 ["[--color][never][--netns][lab 1*][diff][/etc/tcsync/a.yaml]"])

    def test_apply(self):
        rc, last, calls = self.run_wrapper(2, 0)
        self.assertEqual((rc, last), (0, ['changed=yes comment="1 tc change(s) made"']))
        self.assertEqual(len(calls), 2)

    def test_errors_exit_1(self):
        self.assertEqual(self.run_wrapper(1, 0)[0], 1)
        self.assertEqual(self.run_wrapper(2, 1)[0], 1)


if __name__ == "__main__":
    unittest.main(verbosity=2)
