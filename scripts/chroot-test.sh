#!/bin/sh
# Builds cudanms (-Dcuda=disabled) and runs its whole meson suite inside a
# minimal Debian chroot made with debootstrap from Debian's archive:
# trixie (GStreamer 1.26) or sid (1.28). As root.
#
#   sh scripts/chroot-test.sh trixie|sid [WORKDIR]
#
# WORKDIR (default ./build-chroot-SUITE) holds everything: the chroot, its
# apt cache, the build and testlog.json; nothing is cached anywhere else.
# The chroot is deleted at the end unless KEEP_CHROOT=1; a kept complete
# one is reused (apt-get update/upgrade only). Mounts live in a private
# mount namespace and are unmounted on any exit. The mirror is the one
# this machine's apt uses (override: MIRROR=URL). sid's Release may have
# expired relative to the clock: Acquire::Check-Valid-Until=false is set in
# the chroot only. The last line is "SUITE: N passed, N failed, N skipped";
# the exit code is meson test's.
#
# For a quicker run while working on a few tests: TESTS="name ..." runs
# only those meson tests (e.g. TESTS="analytics-heads analytics-overlay");
# LIGHT=1 leaves out python3-torchvision and python3-onnx (the golden
# tests that need torch and the onnxinference tests then skip; golden-obb,
# on python3-shapely, still runs); KEEP_BUILD=1 (with KEEP_CHROOT=1) keeps
# the chroot's build and rebuilds only what changed.
set -eu
suite=${1:-}
case "$suite" in
  trixie|sid) ;;
  *) echo "usage: $0 trixie|sid [WORKDIR]" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
src=$(pwd)
work=${2:-$src/build-chroot-$suite}
mkdir -p "$work"
work=$(cd "$work" && pwd)
root=$work/root
[ "$(id -u)" -eq 0 ] || { echo "chroot-test: needs root" >&2; exit 2; }

# The mirror apt uses here (deb822 .sources or a one-line sources.list).
mirror=${MIRROR:-}
if [ -z "$mirror" ]; then
  mirror=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null \
    | awk '/^URIs:/ { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; exit } }')
fi
if [ -z "$mirror" ]; then
  mirror=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null \
    | awk '$1 == "deb" && $2 !~ /security/ && $2 ~ /debian/ { print $2; exit }')
fi
mirror=${mirror:-http://deb.debian.org/debian}

PKGS="meson ninja-build pkg-config gcc libc6-dev
  libgstreamer1.0-dev libgstreamer-plugins-base1.0-dev
  libgstreamer-plugins-bad1.0-dev
  gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-bad
  gstreamer1.0-tools
  python3-numpy python3-gi python3-gst-1.0 python3-gi-cairo
  gir1.2-gstreamer-1.0 gir1.2-gst-plugins-base-1.0 python3-shapely
  python3-onnx python3-torchvision"
if [ "${LIGHT:-0}" = 1 ]; then
  PKGS=$(echo "$PKGS" | tr ' ' '\n' | grep -v -e '^python3-torchvision$' \
    -e '^python3-onnx$' | tr '\n' ' ')
fi
TESTS=${TESTS:-}
KEEP_BUILD=${KEEP_BUILD:-0}
stamp=$root/.cudanms-chroot-ready

if ! command -v debootstrap >/dev/null 2>&1; then
  echo "chroot-test: installing debootstrap"
  apt-get update -q >/dev/null
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    debootstrap >/dev/null
fi

# Everything below runs in a private mount namespace: its mounts vanish
# with it, whatever happens, and never show outside.
export suite src work root mirror PKGS stamp TESTS KEEP_BUILD
unshare --mount --propagation private sh -eu -c '
cleanup () {
  for m in dev/shm dev/pts dev sys proc src; do
    mountpoint -q "$root/$m" 2>/dev/null && umount -l "$root/$m" || true
  done
}
trap cleanup EXIT INT TERM

t0=$(date +%s)
if [ ! -f "$stamp" ]; then
  rm -rf "$root"
  echo "chroot-test: debootstrap $suite from $mirror"
  debootstrap --variant=minbase "$suite" "$root" "$mirror" > "$work/debootstrap.log" 2>&1 \
    || { tail -20 "$work/debootstrap.log"; exit 1; }
fi
mount -t proc proc "$root/proc"
mount -t sysfs sys "$root/sys"
mount --bind /dev "$root/dev"
mount -t devpts devpts "$root/dev/pts" 2>/dev/null || true
mount -t tmpfs shm "$root/dev/shm"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
{
  echo "APT::Install-Recommends \"false\";"
  [ "$suite" = sid ] && echo "Acquire::Check-Valid-Until \"false\";"
  true
} > "$root/etc/apt/apt.conf.d/99cudanms"
in_root () { chroot "$root" env -i HOME=/root LANG=C.UTF-8 \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  DEBIAN_FRONTEND=noninteractive "$@"; }
echo "chroot-test: installing the build and test packages"
in_root apt-get update -q > "$work/apt.log" 2>&1 || { tail -20 "$work/apt.log"; exit 1; }
# shellcheck disable=SC2086
in_root apt-get install -y -q $PKGS >> "$work/apt.log" 2>&1 \
  || { tail -20 "$work/apt.log"; exit 1; }
touch "$stamp"
gst=$(in_root pkg-config --modversion gstreamer-1.0)
echo "chroot-test: $suite has GStreamer $gst ($(( $(date +%s) - t0 )) s so far)"

# The source tree, read-only, and a fresh build next to it.
mkdir -p "$root/src"
mount --bind "$src" "$root/src"
mount -o remount,bind,ro "$root/src"
if [ "$KEEP_BUILD" = 1 ] && [ -f "$root/build/build.ninja" ]; then
  in_root sh -c "ninja -C /build -j2 > /build.log 2>&1" \
    || { tail -30 "$root/build.log"; exit 1; }
else
  rm -rf "$root/build"
  in_root sh -c "meson setup /build /src -Dcuda=disabled > /build.log 2>&1 && ninja -C /build -j2 >> /build.log 2>&1" \
    || { tail -30 "$root/build.log"; exit 1; }
fi
if grep -q "warning:" "$root/build.log"; then
  echo "chroot-test: compiler warnings on $suite:"; grep "warning:" "$root/build.log"
fi
rc=0
# shellcheck disable=SC2086
in_root meson test -C /build --num-processes 2 --print-errorlogs $TESTS || rc=$?
cp "$root/build/meson-logs/testlog.json" "$work/testlog.json"
cp "$root/build/meson-logs/testlog.txt" "$work/testlog.txt"
echo "chroot-test: $suite done in $(( $(date +%s) - t0 )) s"
exit $rc
' || rc=$?
rc=${rc:-0}
if [ "${KEEP_CHROOT:-0}" != 1 ]; then
  rm -rf "$root"
fi
if [ -f "$work/testlog.json" ]; then
  printf '%s: ' "$suite"
  /usr/bin/python3 "$src/scripts/test-summary.py" "$work/testlog.json"
else
  echo "$suite: 0 passed, 1 failed, 0 skipped"
  [ "$rc" -ne 0 ] || rc=1
fi
exit "$rc"
