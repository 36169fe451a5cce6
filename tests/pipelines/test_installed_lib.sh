#!/bin/sh
# libcudanms as an application gets it: `meson install --destdir` into a
# scratch folder of the build dir, then pipelines/c/cnms-example.c compiled
# with cc and `pkg-config --cflags --libs cudanms` against that install only,
# and run from it with its exact output checked (the build's own
# cnms-example too). The installed library's soname is libcudanms.so.1 and
# it exports the public API of cudanms.h and nothing else (kernels/
# cudanms.map): the API is every function that the installed cudanms.h
# declares, read from the header itself; each must be exported, and a
# program generated from that list, which takes the address of every one,
# is built the same way and runs. cudanms_static.h is not installed. Writes
# only under the build dir. Exits 77 (skip) without meson (of the build's
# version), cc, pkg-config, readelf, nm or awk, and in a clang sanitizer
# build (its sanitizer runtime is linked into programs, not the library).
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
for tool in "$MESON" cc pkg-config readelf nm awk; do
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

# The package's version (cudanms.pc), the library's soname and the file
# its links lead to (the ABI's version, kernels/meson.build).
version=0.2.0
soname=libcudanms.so.1
real=libcudanms.so.1.0.0

expected="nms class-aware, iou 0.45: kept 5: 4 0 2 6 3
nms class-agnostic, iou 0.45: kept 3: 4 0 6
detect yolov8 [1, 6, 4] for 1280x720: 2 detections
  anchor 0 class 0 score 0.90 box 120.0 80.0 280.0 160.0
  anchor 2 class 1 score 0.70 box 480.0 280.0 800.0 440.0"

fail () { echo "FAIL: $*"; exit 1; }

# The functions a C header declares at file scope, one name a line, in the
# header's order: every declaration "TYPE name (...);" outside braces,
# comments, preprocessor lines and #ifdef __cplusplus blocks, over any
# number of lines. Typedefs, pointers to functions and static (inline)
# functions are none of the library's functions.
declared () {
  awk '
{ src = src $0 "\n" }
END {
  text = ""
  while ((i = index (src, "/*")) > 0) {
    text = text substr (src, 1, i - 1) " "
    src = substr (src, i + 2)
    j = index (src, "*/")
    src = j > 0 ? substr (src, j + 2) : ""
  }
  text = text src
  gsub (/\/\/[^\n]*/, "", text)
  n = split (text, line, "\n")
  code = ""
  skip = 0
  for (k = 1; k <= n; k++) {
    l = line[k]
    if (l ~ /^[ \t]*#/) {
      while (l ~ /\\$/ && k < n)
        l = line[++k]
      if (skip > 0 && l ~ /^[ \t]*#[ \t]*if/)
        skip++
      else if (skip > 0 && l ~ /^[ \t]*#[ \t]*endif/)
        skip--
      else if (skip == 0 && l ~ /^[ \t]*#[ \t]*ifdef[ \t]+__cplusplus/)
        skip = 1
      continue
    }
    if (skip == 0)
      code = code " " l
  }
  depth = 0
  stmt = ""
  len = length (code)
  for (k = 1; k <= len; k++) {
    c = substr (code, k, 1)
    if (c == "{") {
      if (depth == 0)
        emit(stmt)
      depth++
      stmt = ""
    } else if (c == "}") {
      depth--
      stmt = ""
    } else if (depth == 0 && c == ";") {
      emit(stmt)
      stmt = ""
    } else if (depth == 0) {
      stmt = stmt c
    }
  }
}
function emit(s,    name) {
  gsub (/[ \t]+/, " ", s)
  sub (/^ /, "", s)
  if (s ~ /^(typedef|static)[ *]/ || index (s, "(") == 0)
    return
  name = substr (s, 1, index (s, "(") - 1)
  sub (/ $/, "", name)
  if (name !~ /[A-Za-z0-9_*][ *]*[ *][A-Za-z_][A-Za-z0-9_]*$/)
    return
  sub (/.*[^A-Za-z0-9_]/, "", name)
  print name
}' "$1"
}

dest=$CNMS_SCRATCH/destdir
rm -rf "$CNMS_SCRATCH"
mkdir -p "$dest" "$CNMS_SCRATCH/tmp"
export TMPDIR="$CNMS_SCRATCH/tmp"   # cc's temporary files

# The reader of declarations, on a header with every kind of line it must
# tell apart.
cat > "$CNMS_SCRATCH/sample.h" << 'EOF'
#ifndef SAMPLE_H
#define SAMPLE_H
#define MACRO(a, b) \
  int in_a_macro (a, b);
#ifdef __cplusplus
extern "C" {
#endif
/* int in_a_comment (void); */
typedef void (*a_typedef) (int);
typedef struct {
  int (*a_member) (int);
} a_struct;
const char *
multi_line (int a,
    int b);
unsigned long long two_words (void); int same_line (void);
extern int with_extern (void);
static inline int an_inline (void) { return 0; }
void (*a_pointer) (void);
struct s *returns_a_pointer (const struct s *p) /* a comment */ ;
#ifdef __cplusplus
}
#endif
#endif
EOF
got=$(declared "$CNMS_SCRATCH/sample.h" | tr '\n' ' ')
[ "$got" = "multi_line two_words same_line with_extern returns_a_pointer " ] \
  || fail "the functions read from a sample header: '$got'"

"$MESON" install -C "$CUDANMS_BUILD_ROOT" --destdir "$dest" --no-rebuild --quiet \
  > "$CNMS_SCRATCH/install.log" 2>&1 || {
  cat "$CNMS_SCRATCH/install.log"; fail "meson install --destdir"; }

lib=$dest$CNMS_LIBDIR
inc=$dest$CNMS_INCLUDEDIR/cudanms
echo "installed:"
(cd "$dest" && find . -path "*cudanms*" ! -type d | sort)
[ -f "$inc/cudanms.h" ] || fail "no $CNMS_INCLUDEDIR/cudanms/cudanms.h"
[ ! -e "$inc/cudanms_static.h" ] || fail "cudanms_static.h is installed"
[ -f "$lib/pkgconfig/cudanms.pc" ] || fail "no $CNMS_LIBDIR/pkgconfig/cudanms.pc"
[ -f "$lib/$real" ] || fail "no $CNMS_LIBDIR/$real"
[ "$(readlink "$lib/$soname")" = "$real" ] \
  || fail "$soname is not a link to $real"
[ "$(readlink "$lib/libcudanms.so")" = "$soname" ] \
  || fail "libcudanms.so is not a link to $soname"

# The soname.
got=$(readelf -d "$lib/$real" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
echo "soname: $got"
[ "$got" = "$soname" ] || fail "soname '$got', not $soname"

# The public API: the functions the installed cudanms.h declares.
declared "$inc/cudanms.h" > "$CNMS_SCRATCH/declared"
[ -s "$CNMS_SCRATCH/declared" ] || fail "no function found in the installed cudanms.h"
echo "declared ($(wc -l < "$CNMS_SCRATCH/declared")): $(tr '\n' ' ' < "$CNMS_SCRATCH/declared")"
[ -z "$(sort "$CNMS_SCRATCH/declared" | uniq -d)" ] \
  || fail "cudanms.h declares $(sort "$CNMS_SCRATCH/declared" | uniq -d | tr '\n' ' ')more than once"

# The exported symbols: the public API, nothing else.
nm -D --defined-only "$lib/$real" | awk '{ print $NF }' \
  | sort > "$CNMS_SCRATCH/exported"
echo "exported ($(wc -l < "$CNMS_SCRATCH/exported")): $(tr '\n' ' ' < "$CNMS_SCRATCH/exported")"
while read -r sym; do
  grep -qx "$sym" "$CNMS_SCRATCH/declared" \
    || fail "libcudanms exports $sym, which cudanms.h does not declare"
done < "$CNMS_SCRATCH/exported"
while read -r sym; do
  grep -qx "$sym" "$CNMS_SCRATCH/exported" \
    || fail "cudanms.h declares $sym, libcudanms does not export it"
done < "$CNMS_SCRATCH/declared"

# pkg-config against the scratch install only; system dirs kept in the
# flags (a prefix of /usr would drop them, and find the system's instead).
pc () {
  PKG_CONFIG_LIBDIR="$lib/pkgconfig" PKG_CONFIG_PATH= \
  PKG_CONFIG_SYSROOT_DIR="$dest" \
  PKG_CONFIG_ALLOW_SYSTEM_CFLAGS=1 PKG_CONFIG_ALLOW_SYSTEM_LIBS=1 \
    pkg-config "$@"
}
[ "$(pc --modversion cudanms)" = "$version" ] || fail "pkg-config --modversion cudanms: $(pc --modversion cudanms)"
flags=$(pc --cflags --libs cudanms)
echo "pkg-config --cflags --libs cudanms: $flags"
# shellcheck disable=SC2086
set -- $flags
[ "$*" = "-I$inc -L$lib -lcudanms" ] || fail "pkg-config gives '$*'"

cd "$CNMS_SCRATCH"

# Every declared function, linked by address from a program built as an
# application builds (a declaration without its export does not link) and
# run on the installed library with every symbol bound at load.
{
  printf '%s\n' "#include <stdio.h>" "#include <cudanms.h>" \
    "void (*const cnms_api[]) (void) = {"
  sed 's/.*/  (void (*) (void)) &,/' "$CNMS_SCRATCH/declared"
  printf '%s\n' "};" "int main (void) {" \
    '  printf ("%d\n", (int) (sizeof cnms_api / sizeof cnms_api[0]));' \
    "  return 0;" "}"
} > cnms-api.c
cc -std=c99 -Wall -Wextra -Werror -o cnms-api cnms-api.c "$@" \
  || fail "cc cnms-api.c (the address of every function of cudanms.h) \$(pkg-config --cflags --libs cudanms)"
n=$(LD_PRELOAD=$preload LD_LIBRARY_PATH=$lib LD_BIND_NOW=1 ./cnms-api) \
  || fail "cnms-api exits $?"
echo "cnms-api: $n functions linked"
[ "$n" = "$(wc -l < "$CNMS_SCRATCH/declared")" ] || fail "cnms-api links $n functions"

# The example, as an application builds it: cudanms.h and -lcudanms only.
cc -std=c99 -Wall -Wextra -Werror -o cnms-example \
  "$CUDANMS_SOURCE_ROOT/pipelines/c/cnms-example.c" "$@" \
  || fail "cc cnms-example.c \$(pkg-config --cflags --libs cudanms)"
# It loads the installed library.
loaded=$(LD_LIBRARY_PATH="$lib" ldd ./cnms-example | awk -v so="$soname" '$1 == so { print $3 }')
[ "$loaded" = "$lib/$soname" ] || fail "cnms-example loads $soname from '$loaded'"

check_output () {  # NAME LD_LIBRARY_PATH PROGRAM
  out=$(LD_PRELOAD=$preload LD_LIBRARY_PATH=$2 "$3") || fail "$1 exits $?"
  echo "$1:"
  echo "$out"
  [ "$out" = "$expected" ] || { echo "expected:"; echo "$expected"; fail "$1's output"; }
}
check_output "installed cnms-example" "$lib" ./cnms-example
check_output "the build's cnms-example" "${LD_LIBRARY_PATH:-}" "$CNMS_EXAMPLE"
echo "OK: libcudanms, cudanms.h and cudanms.pc installed; an application builds and runs on them"
