#!/usr/bin/env python3
"""scripts/gpu-bundle-run.py on a fake bundle made here: the system's own
loader as the bundle's, copies of sh, true and false as the build's
programs, and a tests.json in the chroot's paths. Checks each verdict
(ok, failed, skipped by 77, a script not run, a timeout, a missing
program), that the test's
environment reaches the program with its paths moved to the bundle and
to the source tree, that GPU_BUNDLE_WRAPPER goes in front, the summary
line, the exit codes of `test` and `run`, and that `run` refuses what is
not a program. Needs no GPU, no chroot and no GStreamer."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(
    __file__))))
RUNNER = os.path.join(SRC, "scripts", "gpu-bundle-run.py")
failures = []


def check(what, ok):
    print("%s: %s" % ("ok" if ok else "FAILED", what))
    if not ok:
        failures.append(what)


def loader():
    for p in ("/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1"):
        if os.path.exists(p):
            return p
    return None


def main():
    ld = loader()
    if ld is None:
        print("no known dynamic loader here: skipped")
        return 77
    tmp = tempfile.mkdtemp(prefix="cnms-bundle-")
    b = os.path.join(tmp, "gpu-bundle")
    build = os.path.join(b, "build")
    for d in ("lib", "plugins", "build/tests"):
        os.makedirs(os.path.join(b, d))
    shutil.copy(ld, os.path.join(b, "lib", "ld-linux-x86-64.so.2"))
    for name, prog in (("t-sh", "sh"), ("t-true", "true"),
                       ("t-false", "false")):
        shutil.copy(shutil.which(prog), os.path.join(build, "tests", name))
    with open(os.path.join(build, "tests", "script.py"), "w") as f:
        f.write("print('never run')\n")
    sh = "/bundle-build/tests/t-sh"
    env_check = ('test "$CUDANMS_SOURCE_ROOT" = "%s" && '
                 'test "$CUDANMS_BUILD_ROOT" = "%s" && '
                 'test "$GST_PLUGIN_PATH_1_0" = "%s/gst:%s/plugins" && '
                 'test -n "$GPU_BUNDLE_LIBS"' % (SRC, build, build, b))
    tests = [
        {"name": "ok", "cmd": ["/bundle-build/tests/t-true"]},
        {"name": "fails", "cmd": ["/bundle-build/tests/t-false"]},
        {"name": "skips", "cmd": [sh, "-c", "exit 77"]},
        {"name": "env", "cmd": [sh, "-c", env_check],
         "env": {"CUDANMS_SOURCE_ROOT": "/bundle-src",
                 "CUDANMS_BUILD_ROOT": "/bundle-build",
                 "GST_PLUGIN_PATH_1_0": "/bundle-build/gst:"
                 "/usr/lib/x86_64-linux-gnu/gstreamer-1.0"}},
        {"name": "wrapped", "cmd": [sh, "-c", 'test "$CNMS_WRAPPED" = 1']},
        {"name": "missing", "cmd": ["/bundle-build/tests/t-none"]},
        {"name": "script", "cmd": ["/usr/bin/python3",
                                   "/bundle-build/tests/script.py"]},
        {"name": "slow", "cmd": [sh, "-c", "exec sleep 30"], "timeout": 1,
         "is_parallel": False},
    ]
    for t in tests:
        t.setdefault("env", {})
        t.setdefault("timeout", 30)
        t.setdefault("is_parallel", True)
        t.setdefault("workdir", None)
    with open(os.path.join(build, "tests.json"), "w") as f:
        json.dump(tests, f)
    env = dict(os.environ, GPU_BUNDLE_WRAPPER="env CNMS_WRAPPED=1")
    p = subprocess.run([sys.executable, RUNNER, b, "test"], env=env,
                       capture_output=True, text=True)
    print(p.stdout, p.stderr, sep="")
    lines = {ln.split()[0]: ln for ln in p.stdout.splitlines() if ln}
    for name, verdict in (("ok", "OK"), ("fails", "FAIL (1)"),
                          ("skips", "SKIP"), ("env", "OK"),
                          ("wrapped", "OK"), ("script", "NOT RUN"),
                          ("missing", "FAIL (no %s/tests/t-none)" % build),
                          ("slow", "FAIL (timeout)")):
        check("%s is %s" % (name, verdict),
              name in lines and verdict in lines[name])
    check("the summary line",
          p.stdout.splitlines()[-1] == "bundle: Ok: 3  Fail: 3  Skipped: 1"
          "  Not run (scripts): 1")
    check("test exits 1 on a failure", p.returncode == 1)
    p = subprocess.run([sys.executable, RUNNER, b, "test", "^(ok|env)$"],
                       capture_output=True, text=True)
    check("a pattern picks the tests, exit 0",
          p.returncode == 0 and p.stdout.splitlines()[-1]
          == "bundle: Ok: 2  Fail: 0  Skipped: 0  Not run (scripts): 0")
    r = [subprocess.run([sys.executable, RUNNER, b, "run", "tests/" + n],
                        capture_output=True).returncode
         for n in ("t-true", "t-false")]
    check("run passes the program's exit code", r == [0, 1])
    p = subprocess.run([sys.executable, RUNNER, b, "run", "tests/script.py"],
                       capture_output=True, text=True)
    check("run refuses a script",
          p.returncode == 1 and "is not a program of the build" in p.stderr)
    p = subprocess.run([sys.executable, RUNNER, b, "run", "tests/t-none"],
                       capture_output=True, text=True)
    check("run refuses a missing program",
          p.returncode == 1 and "is not a program of the build" in p.stderr)
    shutil.rmtree(tmp)
    print("gpu-bundle-run: %d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
