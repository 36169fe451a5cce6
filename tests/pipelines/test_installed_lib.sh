#!/bin/sh
# libcudanms as an application gets it: `meson install --destdir` into a
# scratch folder of the build dir, then pipelines/c/cnms-example.c compiled
# with cc and `pkg-config --cflags --libs cudanms` against that install only,
# and run from it with its exact output checked (the build's own
# cnms-example too). The installed library's soname is libcudanms.so.0 and
# it exports the public API of cudanms.h and nothing else (kernels/
# cudanms.map). Writes only under the build dir. Exits 77 (skip) without
# meson (of the build's version), cc, pkg-config, readelf or nm, and in a
# clang sanitizer build (its sanitizer runtime is linked into programs, not
# the library).
#
# env (tests/pipelines/meson.build): CUDANMS_SOURCE_ROOT, CUDANMS_BUILD_ROOT,
# MESON, CNMS_MESON_VERSION, CNMS_SCRATCH, CNMS_LIBDIR, CNMS_INCLUDEDIR,
# CNMS_EXAMPLE, CNMS_SANITIZE, CNMS_CC_ID
set -eu

# A sanitizer build preloads the ASan runtime into every test: only the
# programs linked to the sanitized library get it (not meson, cc, nm).
preload=${LD_PRELOAD:-}
unset LD_PRELOAD

MESON=${MESON:-meson}
for tool in "$MESON" cc pkg-config readelf nm; do
  command -v "$tool" > /dev/null 2>&1 || { echo "SKIP: no $tool"; exit 77; }
done
v=$("$MESON" --version 2>/dev/null || true)
[ "$v" = "$CNMS_MESON_VERSION" ] || {
  echo "SKIP: $MESON is meson '$v', the build's is $CNMS_MESON_VERSION"; exit 77; }
# b_sanitize: "none" or "" (an empty array, meson >= 1.8) when off
if [ "${CNMS_SANITIZE:-none}" != none ] && [ "$CNMS_CC_ID" != gcc ]; then
  echo "SKIP: a $CNMS_CC_ID sanitizer build ($CNMS_SANITIZE): the library needs the runtime linked into the program"
  exit 77
fi

# The public API: the functions of cudanms.h (what kernels/cudanms.map
# exports).
public="cnms_params_init cnms_parse_size cnms_map_centre_box
  cnms_floats_to_halfs cnms_halfs_to_floats cnms_tensor_shape cnms_ctx_new
  cnms_ctx_free cnms_ctx_backend cnms_ctx_error cnms_ctx_report cnms_detect
  cnms_nms cnms_nms_rotated cnms_obb_corners cnms_obb_hull
  cnms_detect_lanes cnms_ctx_lane_points cnms_nms_lanes
  cnms_pose_shape cnms_seg_shape cnms_ctx_keypoints cnms_detect_seg
  cnms_ctx_masks
  cnms_ctx_set_cuda_stream cnms_cuda_device_count cnms_status_str
  cnms_layout_name"

expected="nms class-aware, iou 0.45: kept 5: 4 0 2 6 3
nms class-agnostic, iou 0.45: kept 3: 4 0 6
detect yolov8 [1, 6, 4] for 1280x720: 2 detections
  anchor 0 class 0 score 0.90 box 120.0 80.0 280.0 160.0
  anchor 2 class 1 score 0.70 box 480.0 280.0 800.0 440.0"

fail () { echo "FAIL: $*"; exit 1; }

dest=$CNMS_SCRATCH/destdir
rm -rf "$CNMS_SCRATCH"
mkdir -p "$dest" "$CNMS_SCRATCH/tmp"
export TMPDIR="$CNMS_SCRATCH/tmp"   # cc's temporary files

"$MESON" install -C "$CUDANMS_BUILD_ROOT" --destdir "$dest" --no-rebuild --quiet \
  > "$CNMS_SCRATCH/install.log" 2>&1 || {
  cat "$CNMS_SCRATCH/install.log"; fail "meson install --destdir"; }

lib=$dest$CNMS_LIBDIR
inc=$dest$CNMS_INCLUDEDIR/cudanms
echo "installed:"
(cd "$dest" && find . -path "*cudanms*" ! -type d | sort)
[ -f "$inc/cudanms.h" ] || fail "no $CNMS_INCLUDEDIR/cudanms/cudanms.h"
[ -f "$lib/pkgconfig/cudanms.pc" ] || fail "no $CNMS_LIBDIR/pkgconfig/cudanms.pc"
[ -f "$lib/libcudanms.so.0.1.0" ] || fail "no $CNMS_LIBDIR/libcudanms.so.0.1.0"
[ "$(readlink "$lib/libcudanms.so.0")" = libcudanms.so.0.1.0 ] \
  || fail "libcudanms.so.0 is not a link to libcudanms.so.0.1.0"
[ "$(readlink "$lib/libcudanms.so")" = libcudanms.so.0 ] \
  || fail "libcudanms.so is not a link to libcudanms.so.0"

# The soname.
soname=$(readelf -d "$lib/libcudanms.so.0.1.0" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
echo "soname: $soname"
[ "$soname" = libcudanms.so.0 ] || fail "soname '$soname', not libcudanms.so.0"

# The exported symbols: the public API, nothing else. Every function the
# installed header declares that is in the public API must be there.
nm -D --defined-only "$lib/libcudanms.so.0.1.0" | awk '{ print $NF }' \
  | sort > "$CNMS_SCRATCH/exported"
echo "exported: $(tr '\n' ' ' < "$CNMS_SCRATCH/exported")"
for sym in $(cat "$CNMS_SCRATCH/exported"); do
  case " $(echo $public) " in
    *" $sym "*) ;;
    *) fail "libcudanms exports $sym, not in the public API" ;;
  esac
done
declared=$(sed -n -E 's/^[A-Za-z_][A-Za-z0-9_ ]*[ *](cnms_[a-z0-9_]+) \(.*/\1/p' "$inc/cudanms.h")
[ -n "$declared" ] || fail "no function found in the installed cudanms.h"
for sym in $declared; do
  case " $(echo $public) " in
    *" $sym "*)
      grep -qx "$sym" "$CNMS_SCRATCH/exported" \
        || fail "cudanms.h declares $sym, libcudanms does not export it" ;;
    *) echo "NOTE: cudanms.h declares $sym, not in the public API (not exported)" ;;
  esac
done

# pkg-config against the scratch install only; system dirs kept in the
# flags (a prefix of /usr would drop them, and find the system's instead).
pc () {
  PKG_CONFIG_LIBDIR="$lib/pkgconfig" PKG_CONFIG_PATH= \
  PKG_CONFIG_SYSROOT_DIR="$dest" \
  PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1 \
    pkg-config "$@"
}
[ "$(pc --modversion cudanms)" = 0.1.0 ] || fail "pkg-config --modversion cudanms: $(pc --modversion cudanms)"
flags=$(pc --cflags --libs cudanms)
echo "pkg-config --cflags --libs cudanms: $flags"
# shellcheck disable=SC2086
set -- $flags
[ "$*" = "-I$inc -L$lib -lcudanms" ] || fail "pkg-config gives '$*'"

# The example, as an application builds it: cudanms.h and -lcudanms only.
cd "$CNMS_SCRATCH"
cc -std=c99 -Wall -Wextra -Werror -o cnms-example \
  "$CUDANMS_SOURCE_ROOT/pipelines/c/cnms-example.c" "$@" \
  || fail "cc cnms-example.c \$(pkg-config --cflags --libs cudanms)"
# It loads the installed library.
loaded=$(LD_LIBRARY_PATH="$lib" ldd ./cnms-example | awk '$1 == "libcudanms.so.0" { print $3 }')
[ "$loaded" = "$lib/libcudanms.so.0" ] || fail "cnms-example loads libcudanms.so.0 from '$loaded'"

check_output () {  # NAME LD_LIBRARY_PATH PROGRAM
  out=$(LD_PRELOAD=$preload LD_LIBRARY_PATH=$2 "$3") || fail "$1 exits $?"
  echo "$1:"
  echo "$out"
  [ "$out" = "$expected" ] || { echo "expected:"; echo "$expected"; fail "$1's output"; }
}
check_output "installed cnms-example" "$lib" ./cnms-example
check_output "the build's cnms-example" "${LD_LIBRARY_PATH:-}" "$CNMS_EXAMPLE"
echo "OK: libcudanms, cudanms.h and cudanms.pc installed; an application builds and runs on them"
