#!/bin/sh
# Builds cudanms WITH its CUDA backend against Debian trixie's GStreamer
# (1.26) or sid's (1.28, with GstAnalyticsBatchMeta), both with
# GstAnalytics and gst-cuda, and packs a self-contained bundle that runs
# on a GPU host that has CUDA but no GStreamer, or an older one.
# As root, on a machine with the CUDA toolkit at /usr/local/cuda.
#
#   sh scripts/gpu-bundle.sh [OUT.tar.xz]         trixie (default ./gpu-bundle-trixie.tar.xz)
#   SUITE=sid sh scripts/gpu-bundle.sh [OUT]      sid (default ./gpu-bundle-sid.tar.xz)
#
# The chroot is the one scripts/chroot-test.sh makes, kept in
# ./build-chroot-SUITE (it is made, and the CPU suite run in it, when it
# is missing). The toolkit is bound into it read-only and the build uses
# gcc 14 as the C++ compiler and nvcc's host compiler (trixie's default;
# installed in sid, whose gcc 16 is newer than CUDA 13.0 accepts). CUDA_ARCH (default 90,
# the H100/H200; auto: every architecture) is passed to -Dcuda-arch.
# In sid, glibc 2.43 declares rsqrt and rsqrtf (C23) as noexcept and
# CUDA 13.0's crt/math_functions.h declares them without, which nvcc
# refuses; the build binds, over that one header inside the chroot only,
# a copy whose two declarations say noexcept(true) (the toolkit itself is
# not touched).
#
# The bundle (one folder, gpu-bundle/) holds the build's programs and
# plugins (debug info stripped), tests.json (meson introspect --tests),
# the suite's dynamic loader and every library they load (GLib, GStreamer,
# libc, libstdc++, ...), the plugins the tests and benches use, the
# plugin scanner and VERSION. These libraries need a newer glibc than
# e.g. Ubuntu 24.04's, so everything runs under the bundled loader:
# scripts/gpu-bundle-run.py does that (`test` for the suite, `run` for a
# bench), and tests/bench/run-gpu.sh with BUNDLE=OUT.tar.xz adds the
# bundle's bench-element rows to the anchored run.
set -eu
cd "$(dirname "$0")/.."
src=$(pwd)
suite=${SUITE:-trixie}
case "$suite" in trixie|sid) ;; *) echo "gpu-bundle: SUITE is trixie or sid" >&2; exit 2 ;; esac
out=${1:-$src/gpu-bundle-$suite.tar.xz}
case "$out" in /*) ;; *) out=$(pwd)/$out ;; esac
work=$src/build-chroot-$suite
root=$work/root
cuda=${CUDA_HOME:-/usr/local/cuda}
[ "$(id -u)" -eq 0 ] || { echo "gpu-bundle: needs root" >&2; exit 2; }
[ -x "$cuda/bin/nvcc" ] || { echo "gpu-bundle: no nvcc under $cuda" >&2; exit 2; }
if [ ! -f "$root/.cudanms-chroot-ready" ]; then
  KEEP_CHROOT=1 sh scripts/chroot-test.sh "$suite" "$work"
fi
stage=$work/gpu-bundle
rm -rf "$stage"
mkdir -p "$stage/lib" "$stage/plugins"
mathh=targets/x86_64-linux/include/crt/math_functions.h
sed -e 's/^\(extern .* rsqrtf\{0,1\}(\(double\|float\) x)\);$/\1 noexcept(true);/' \
  "$cuda/$mathh" > "$work/math_functions.h"
export root src cuda suite mathh work
unshare --mount --propagation private sh -eu -c '
mount -t proc proc "$root/proc"
mount -t sysfs sys "$root/sys"
mount --bind /dev "$root/dev"
mkdir -p "$root/usr/local/cuda" "$root/bundle-src"
mount --bind "$cuda" "$root/usr/local/cuda"
mount -o remount,bind,ro "$root/usr/local/cuda"
if [ "$suite" = sid ]; then mount --bind "$work/math_functions.h" "$root/usr/local/cuda/$mathh"; fi
mount --bind "$src" "$root/bundle-src"
mount -o remount,bind,ro "$root/bundle-src"
in_root () { chroot "$root" env -i HOME=/root LANG=C.UTF-8 \
  PATH=/usr/local/cuda/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  DEBIAN_FRONTEND=noninteractive "$@"; }
in_root sh -c "command -v g++-14 >/dev/null || apt-get install -y -q g++-14 >/dev/null"
echo "gpu-bundle: building with CUDA in the $suite chroot"
in_root sh -c "rm -rf /bundle-build && CXX=g++-14 NVCC_CCBIN=g++-14 meson setup /bundle-build /bundle-src \
  -Dcuda=enabled -Dcuda-arch=${CUDA_ARCH:-90} > /bundle-build.log 2>&1 \
  && NVCC_CCBIN=g++-14 ninja -C /bundle-build >> /bundle-build.log 2>&1" \
  || { tail -40 "$root/bundle-build.log"; exit 1; }
grep -E "warning:|GStreamer CUDA|ODMtd" "$root/bundle-build.log" || true
in_root meson introspect --tests /bundle-build > "$root/bundle-build/tests.json"
in_root pkg-config --modversion gstreamer-1.0 gstreamer-cuda-1.0 \
  gstreamer-analytics-1.0 > "$root/bundle-build/VERSION"
'
P=usr/lib/x86_64-linux-gnu/gstreamer-1.0
scanner=usr/lib/x86_64-linux-gnu/gstreamer1.0/gstreamer-1.0/gst-plugin-scanner
(cd "$root/bundle-build" && find . -name '*.p' -prune -o -type f \
  ! -name '*.o' ! -name '*.a' ! -name '*.ninja' -print | tar cf - -T -) \
  | (mkdir -p "$stage/build" && cd "$stage/build" && tar xf -)
plugins=""
for p in coreelements app videotestsrc videoconvertscale nvcodec; do
  [ -f "$root/$P/libgst$p.so" ] && plugins="$plugins $P/libgst$p.so"
done
for p in $plugins; do cp "$root/$p" "$stage/plugins/"; done
cp "$root/$scanner" "$stage/"
cp -L "$root/lib64/ld-linux-x86-64.so.2" "$stage/lib/"
# every library any of those programs loads, as the chroot resolves it
for f in $(cd "$root" && find bundle-build -type f \( -name '*.so' -o -perm -u+x \)) \
    $plugins $scanner; do
  file -b "$root/$f" | grep -q ELF || continue
  chroot "$root" ldd "/$f" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 }'
done | grep -v '^/bundle-build' | sort -u | while read -r l; do
  cp -L "$root$l" "$stage/lib/"
done
find "$stage" -type f | while read -r f; do
  if file -b "$f" | grep -q ELF; then strip --strip-debug "$f" 2>/dev/null || true; fi
done
(cd "$work" && tar cf - gpu-bundle | xz -T0 -9 > "$out")
echo "gpu-bundle: $out ($(du -h "$out" | cut -f1); GStreamer $(head -1 "$stage/build/VERSION"))"
