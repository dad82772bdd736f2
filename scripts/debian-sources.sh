#!/usr/bin/env bash
# Writes apt entries of one type (deb or deb-src) for this machine's Debian release, derived from
# the machine's own apt sources: the same URIs, suites, components and options (Signed-By, ...)
# as its `deb` entries, whatever mirror, proxy or dated snapshot they name. Which mirror a machine
# uses is its business; lockstep names none.
#
#   scripts/debian-sources.sh TYPE DIR [CODENAME]
#
# Reads /etc/apt/sources.list and /etc/apt/sources.list.d/*.list (one-line format) and
# /etc/apt/sources.list.d/*.sources (deb822), keeps the enabled `deb` entries whose suite is
# CODENAME or CODENAME-something (default: this machine's, from /etc/os-release: bookworm,
# bookworm-updates, bookworm-security, ...), and writes them with their type changed to TYPE:
# the one-line ones to DIR/lockstep-TYPE.list, the deb822 ones to DIR/lockstep-TYPE.sources
# (each file only where there is something to write; an old one is removed first). Prints the
# files it wrote; exits 1, saying so, when the machine has no such entry.
#
# Plain bash and awk (mawk): it runs on a minimal Debian before anything else is installed.
set -euo pipefail

type=${1:?usage: debian-sources.sh TYPE DIR [CODENAME]}
dir=${2:?usage: debian-sources.sh TYPE DIR [CODENAME]}
codename=${3:-}
case "$type" in deb | deb-src) ;; *)
  echo "debian-sources.sh: TYPE is deb or deb-src, not '$type'" >&2
  exit 2
  ;;
esac
if [ -z "$codename" ]; then
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
fi
[ -n "$codename" ] || {
  echo "debian-sources.sh: /etc/os-release names no VERSION_CODENAME; give the codename" >&2
  exit 2
}

etc=${LOCKSTEP_APT_ETC:-/etc/apt} # another folder for the tests
one_line=()
[ -f "$etc/sources.list" ] && one_line+=("$etc/sources.list")
deb822=()
for f in "$etc"/sources.list.d/*; do
  [ -f "$f" ] || continue
  case "$f" in
  */lockstep-*) ;; # what this script wrote before
  *.list) one_line+=("$f") ;;
  *.sources) deb822+=("$f") ;;
  esac
done

mkdir -p "$dir"
list_out="$dir/lockstep-$type.list"
sources_out="$dir/lockstep-$type.sources"
rm -f "$list_out" "$sources_out"

# One-line format: TYPE [ options ] URI SUITE [COMPONENT...]; '#' starts a comment.
if [ "${#one_line[@]}" -gt 0 ]; then
  awk -v type="$type" -v codename="$codename" '
    { sub(/#.*/, "") }
    $1 != "deb" { next }
    {
      line = $0
      sub(/^[ \t]*deb[ \t]+/, "", line)
      options = ""
      if (substr(line, 1, 1) == "[") {
        end = index(line, "]")
        if (end == 0) next
        options = substr(line, 1, end) " "
        line = substr(line, end + 1)
      }
      n = split(line, word, /[ \t]+/)
      first = (word[1] == "") ? 2 : 1
      uri = word[first]; suite = word[first + 1]
      if (suite != codename && index(suite, codename "-") != 1) next
      out = type " " options uri " " suite
      for (i = first + 2; i <= n; i++) if (word[i] != "") out = out " " word[i]
      print out
    }' "${one_line[@]}" >"$list_out.tmp"
  if [ -s "$list_out.tmp" ]; then mv "$list_out.tmp" "$list_out"; else rm -f "$list_out.tmp"; fi
fi

# deb822: stanzas separated by blank lines; a line that starts with white space continues the
# field before it (a Signed-By key block); comment lines are dropped. Every field is kept as it
# is but Types (replaced) and Suites (only the release's suites kept).
if [ "${#deb822[@]}" -gt 0 ]; then
  awk -v type="$type" -v codename="$codename" '
    function flush(   i, keep, types, n, t, has_deb, suites, s, out) {
      if (count == 0) return
      has_deb = 0; keep = ""; enabled = 1
      for (i = 1; i <= count; i++) {
        if (tolower(name[i]) == "types") {
          n = split(value[i], t, /[ \t]+/)
          for (s = 1; s <= n; s++) if (t[s] == "deb") has_deb = 1
        } else if (tolower(name[i]) == "enabled" && tolower(value[i]) ~ /^[ \t]*no/) {
          enabled = 0
        } else if (tolower(name[i]) == "suites") {
          n = split(value[i], t, /[ \t]+/)
          suites = ""
          for (s = 1; s <= n; s++)
            if (t[s] == codename || index(t[s], codename "-") == 1) suites = suites " " t[s]
        }
      }
      if (has_deb && enabled && suites != "") {
        out = "Types: " type "\n"
        for (i = 1; i <= count; i++) {
          if (tolower(name[i]) == "types") continue
          if (tolower(name[i]) == "suites") out = out "Suites:" suites "\n"
          else out = out text[i]
        }
        printf "%s%s", (printed ? "\n" : ""), out
        printed = 1
      }
      count = 0
    }
    FNR == 1 { flush() }
    /^#/ { next }
    /^[ \t]*$/ { flush(); next }
    /^[ \t]/ { if (count > 0) text[count] = text[count] $0 "\n"; next }
    {
      count++
      colon = index($0, ":")
      name[count] = substr($0, 1, colon - 1)
      value[count] = substr($0, colon + 1)
      sub(/^[ \t]+/, "", value[count])
      text[count] = $0 "\n"
    }
    END { flush() }
  ' "${deb822[@]}" >"$sources_out.tmp"
  if [ -s "$sources_out.tmp" ]; then mv "$sources_out.tmp" "$sources_out"; else rm -f "$sources_out.tmp"; fi
fi

wrote=0
for f in "$list_out" "$sources_out"; do
  if [ -f "$f" ]; then
    echo "$f"
    wrote=1
  fi
done
if [ "$wrote" = 0 ]; then
  echo "debian-sources.sh: this machine's apt sources have no enabled 'deb' entry for $codename" \
    "(read: ${one_line[*]:-} ${deb822[*]:-})" >&2
  exit 1
fi
