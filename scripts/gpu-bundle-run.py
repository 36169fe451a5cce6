#!/usr/bin/env python3
"""Runs what scripts/gpu-bundle.sh packed, on a GPU host, under the bundle's
own dynamic loader and libraries (the host's glibc may be older than
trixie's or sid's, and the host needs no GStreamer).

  gpu-bundle-run.py BUNDLE test [REGEX]      the suite's compiled tests
  gpu-bundle-run.py BUNDLE run PROG [ARG...] one program of the build,
                                             e.g. tests/bench/bench-element

BUNDLE is the unpacked gpu-bundle/ folder (tar xJf gpu-bundle-trixie.tar.xz
or gpu-bundle-sid.tar.xz).
`test` runs every test of tests.json whose name matches REGEX, with the
environment meson gives it, paths moved to the bundle and to this source
tree; 8 at a time, then the serial ones. Exit code 0 is ok, 77 skipped,
anything else (or the test's timeout) failed. Tests that are scripts
(Python, sh) are not run: the host's interpreter would not use the
bundle's GStreamer. Each test's output is in /tmp/gpu-bundle-logs/NAME.txt.
The last line is "bundle: Ok: N  Fail: N  Skipped: N  Not run (scripts): N".
The exit code is 1 on any failure. GPU_BUNDLE_WRAPPER, where set, is put
in front of every command (split at spaces), e.g.
"compute-sanitizer --tool memcheck --error-exitcode 99"."""
import concurrent.futures as cf
import json
import os
import re
import subprocess
import sys
import time

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Bundle:
    def __init__(self, path):
        self.dir = os.path.abspath(path)
        self.build = os.path.join(self.dir, "build")
        self.lib = os.path.join(self.dir, "lib")
        self.plugins = os.path.join(self.dir, "plugins")
        self.loader = os.path.join(self.lib, "ld-linux-x86-64.so.2")
        # GStreamer spawns its plugin scanner: it too needs the loader
        self.scanner = "/tmp/gpu-bundle-scanner.sh"
        with open(self.scanner, "w") as f:
            f.write('#!/bin/sh\nexec %s --library-path "$GPU_BUNDLE_LIBS" '
                    '%s/gst-plugin-scanner "$@"\n' % (self.loader, self.dir))
        os.chmod(self.scanner, 0o755)

    def move(self, s):
        """A path of the chroot's build to this host."""
        return (s.replace("/bundle-build/../bundle-src", SRC)
                .replace("/bundle-build", self.build)
                .replace("/bundle-src", SRC)
                .replace("/usr/lib/x86_64-linux-gnu/gstreamer-1.0",
                         self.plugins))

    def command(self, cmd, env, name):
        """cmd under the loader, and env with the bundle's GStreamer."""
        libs = ":".join(x for x in (env.pop("LD_LIBRARY_PATH", ""), self.lib)
                        if x)
        env.update(GST_PLUGIN_SCANNER_1_0=self.scanner, GPU_BUNDLE_LIBS=libs,
                   GST_PLUGIN_SYSTEM_PATH_1_0=self.plugins)
        env.setdefault("GST_REGISTRY_1_0", "/tmp/gpu-bundle-%s.reg" % name)
        return (os.environ.get("GPU_BUNDLE_WRAPPER", "").split()
                + [self.loader, "--library-path", libs] + cmd)


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def run_test(b, t, logs):
    cmd = [b.move(c) for c in t["cmd"]]
    if not os.path.isfile(cmd[0]):
        return t["name"], "FAIL (no %s)" % cmd[0], 0.0
    if not is_elf(cmd[0]) or os.path.realpath(cmd[0]).startswith("/usr/"):
        return t["name"], "NOT RUN", 0.0
    env = dict(os.environ)
    for k, v in (t["env"] or {}).items():
        env[k] = b.move(v)
    env["GST_REGISTRY_1_0"] = "/tmp/gpu-bundle-%s.reg" % t["name"]
    cmd = b.command(cmd, env, t["name"])
    t0 = time.time()
    with open(os.path.join(logs, t["name"] + ".txt"), "w") as log:
        try:
            rc = subprocess.run(cmd, env=env, stdout=log,
                                stderr=subprocess.STDOUT,
                                timeout=t["timeout"]).returncode
        except subprocess.TimeoutExpired:
            rc = "timeout"
    verdict = "OK" if rc == 0 else "SKIP" if rc == 77 else "FAIL (%s)" % rc
    return t["name"], verdict, time.time() - t0


def test(b, pattern):
    logs = "/tmp/gpu-bundle-logs"
    os.makedirs(logs, exist_ok=True)
    with open(os.path.join(b.build, "tests.json")) as f:
        tests = [t for t in json.load(f)
                 if not pattern or re.search(pattern, t["name"])]
    with cf.ThreadPoolExecutor(8) as ex:
        res = list(ex.map(lambda t: run_test(b, t, logs),
                          [t for t in tests if t["is_parallel"]]))
    res += [run_test(b, t, logs) for t in tests if not t["is_parallel"]]
    for name, verdict, s in res:
        print("%-28s %-12s %6.1f s" % (name, verdict, s))
    n = {k: sum(1 for _, v, _ in res if v.startswith(k))
         for k in ("OK", "FAIL", "SKIP", "NOT RUN")}
    print("bundle: Ok: %d  Fail: %d  Skipped: %d  Not run (scripts): %d" % (
        n["OK"], n["FAIL"], n["SKIP"], n["NOT RUN"]))
    return 1 if n["FAIL"] else 0


def run(b, prog, args):
    env = dict(os.environ)
    env["GST_PLUGIN_PATH_1_0"] = os.path.join(b.build, "gst")
    env["LD_LIBRARY_PATH"] = ":".join(os.path.join(b.build, "gst", p)
                                      for p in ("tensorinject", "cudanms"))
    prog = os.path.join(b.build, prog)
    if not os.path.isfile(prog) or not is_elf(prog):
        sys.exit("gpu-bundle-run: %s is not a program of the build" % prog)
    cmd = b.command([prog] + args, env, "run")
    return subprocess.run(cmd, env=env).returncode


def main():
    if len(sys.argv) < 3 or sys.argv[2] not in ("test", "run") or (
            sys.argv[2] == "run" and len(sys.argv) < 4):
        sys.exit(__doc__)
    b = Bundle(sys.argv[1])
    if sys.argv[2] == "test":
        sys.exit(test(b, sys.argv[3] if len(sys.argv) > 3 else None))
    sys.exit(run(b, sys.argv[3], sys.argv[4:]))


if __name__ == "__main__":
    main()
