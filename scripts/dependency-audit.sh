#!/usr/bin/env bash
# The dependency audit: every header and library from outside the source and build trees that a
# build read belongs to a Debian package that scripts/setup.sh installs (scripts/packages.txt)
# or that those packages depend on. A file that does not fails the audit with its path and the
# package it came from (dpkg -S), or the word that no package owns it (installed by hand).
#
#   scripts/dependency-audit.sh BUILD_DIR
#
# What a build read: the headers of every compile, from the compiler's dependency files (Ninja
# keeps them in .ninja_deps, `ninja -t deps`; a Make tree in each object's .d file), and every
# library that a link command names (a path, or -lNAME found where the compiler looks). The
# compiler's own start files and default libraries (crt*.o, libstdc++, libc) are not listed by
# either; they come with build-essential, as the compiler itself does.
#
# The packages allowed: the set-up's list and everything it depends on, recursively (Depends
# and Pre-Depends, as `apt-cache depends` lists them, virtual packages resolved to what
# provides them), read from this machine's apt and dpkg databases.
#
# Exit status: 0 every file accounted for, 1 some file not, 2 the audit could not run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source_dir=$(cd "$here/.." && pwd)
build=${1:?usage: dependency-audit.sh BUILD_DIR}
build=$(cd "$build" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
die() {
  echo "dependency-audit: $*" >&2
  exit 2
}
command -v dpkg-query >/dev/null && command -v apt-cache >/dev/null || die "needs dpkg and apt"

# --- what the build read -----------------------------------------------------------------------------
if [ -f "$build/build.ninja" ]; then
  ninja -C "$build" -t deps 2>/dev/null | awk '/^    / { print $1 }' >"$tmp/read" ||
    die "ninja -t deps failed in $build"
  ninja -C "$build" -t commands 2>/dev/null >"$tmp/commands" || die "ninja -t commands failed"
else
  find "$build" -name '*.o.d' -exec cat {} + 2>/dev/null | tr ' \\' '\n\n' | sed '/:$/d' >"$tmp/read"
  find "$build" -name link.txt -exec cat {} + >"$tmp/commands" 2>/dev/null || true
fi
[ -s "$tmp/read" ] || die "no dependency information in $build: build it first"
# Link commands: every library they name, by path or as -lNAME.
compiler=$(awk '/ -o [^ ]+\.o / { print $1 == ":" ? $3 : $1; exit }' "$tmp/commands")
grep -E '(^| )-o [^ ]+( |$)' "$tmp/commands" | grep -vE ' -c ' | tr ' ' '\n' | awk '
  /^-l[A-Za-z0-9_+.-]+$/ { print "lib:" substr($0, 3); next }
  /^\/.*\.(so(\.[0-9.]+)?|a)$/ { print }' | sort -u >"$tmp/linked"
while read -r item; do
  case "$item" in
  lib:*)
    name=${item#lib:}
    found=""
    for ext in so a; do
      f=$(${compiler:-c++} -print-file-name="lib$name.$ext" 2>/dev/null || true)
      if [ -n "$f" ] && [ "${f#/}" != "$f" ] && [ -e "$f" ]; then found=$f; break; fi
    done
    [ -n "$found" ] && echo "$found"
    ;;
  *) echo "$item" ;;
  esac
done <"$tmp/linked" >>"$tmp/read"

# Outside the trees, normalised (no .., symlinks kept: the name the package ships).
sort -u "$tmp/read" | while read -r f; do
  case "$f" in /*) ;; *) continue ;; esac
  f=$(realpath -s -m "$f")
  case "$f" in "$source_dir"/* | "$build"/*) continue ;; esac
  echo "$f"
done | sort -u >"$tmp/outside"
files=$(wc -l <"$tmp/outside")

# --- who owns each ----------------------------------------------------------------------------------
# dpkg -S knows a file by the path its package ships; on a merged-/usr system the build may have
# read it through /lib or through a symlink, so the resolved path and the /usr-less form are
# asked too.
owner_of() {
  local f=$1 candidate out
  for candidate in "$f" "$(realpath -m "$f")" "${f#/usr}" "/usr$f"; do
    [ -n "$candidate" ] || continue
    out=$(dpkg -S "$candidate" 2>/dev/null | awk -F': ' -v p="$candidate" '$2 == p { print $1; exit }')
    if [ -n "$out" ]; then
      echo "$out" | tr ',' '\n' | sed -e 's/^ *//' -e 's/:.*//' | head -1
      return 0
    fi
  done
  return 1
}

# Owners in one pass where dpkg can (one call for all files), then one by one for the rest.
xargs -a "$tmp/outside" -d '\n' dpkg -S 2>/dev/null | awk -F': ' '
  { n = split($1, pkgs, ", "); for (i = 1; i <= n; i++) { sub(/:.*/, "", pkgs[i]); print $2 "\t" pkgs[i] } }' |
  sort -u >"$tmp/owners" || true
: >"$tmp/unowned"
while read -r f; do
  grep -qF "$f	" "$tmp/owners" && continue
  if pkg=$(owner_of "$f"); then
    printf '%s\t%s\n' "$f" "$pkg" >>"$tmp/owners"
  else
    echo "$f" >>"$tmp/unowned"
  fi
done <"$tmp/outside"

# --- the packages allowed ------------------------------------------------------------------------------
mapfile -t wanted < <(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' -e 's/[[:space:]]//g' "$here/packages.txt")
apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
  --no-replaces --no-enhances "${wanted[@]}" 2>/dev/null |
  awk '/^[^ ]/ { print $1 } /^  *(Pre)?Depends: / { print $2 } /^    [^ ]/ { print $1 }' |
  tr -d '<>' | sed 's/:.*//' | sort -u >"$tmp/allowed"
[ -s "$tmp/allowed" ] || die "apt-cache depends listed nothing for: ${wanted[*]}"

# --- the verdict ----------------------------------------------------------------------------------------
bad=0
sort -t$'\t' -k1,1 -u "$tmp/owners" >"$tmp/owners.sorted"
# Per package not allowed: its files (the first five, then how many more).
while read -r pkg; do
  grep -qxF "$pkg" "$tmp/allowed" && continue
  n=$(awk -F'\t' -v p="$pkg" '$2 == p' "$tmp/owners.sorted" | wc -l)
  awk -F'\t' -v p="$pkg" '$2 == p { print $1 }' "$tmp/owners.sorted" | head -5 | while read -r f; do
    echo "dependency-audit: $f comes from $pkg"
  done
  [ "$n" -le 5 ] || echo "dependency-audit: ... and $((n - 5)) more files from $pkg"
  echo "dependency-audit: $pkg is not installed by scripts/setup.sh, nor a dependency of what it" \
    "installs: add it to scripts/packages.txt, or stop using it"
  bad=$((bad + n))
done < <(cut -f2 "$tmp/owners.sorted" | sort -u)
while read -r f; do
  [ -n "$f" ] || continue
  echo "dependency-audit: $f belongs to no Debian package (installed by hand?): the build must" \
    "not read it"
  bad=$((bad + 1))
done <"$tmp/unowned"
packages=$(cut -f2 "$tmp/owners.sorted" | sort -u | wc -l)
if [ "$bad" -gt 0 ]; then
  echo "dependency-audit: FAIL: $bad of $files files the build in $build read from outside its trees"
  exit 1
fi
echo "dependency-audit: ok: $files files read from outside the trees, from $packages packages," \
  "each installed by scripts/setup.sh or a dependency of what it installs:"
cut -f2 "$tmp/owners.sorted" | sort | uniq -c | sort -rn | awk '{ printf "  %s (%d files)\n", $2, $1 }'
