#!/bin/sh
# Runs the stock twin of a broken-script scenario: the same file without its
# `scripts = { ... }` line, so every script is the stock one from lua/, and with each
# expectation marked `# stock: "<verdict>"` set to that verdict.
#
#   stock_twin.sh LOCKSTEP BROKEN.toml OUT_DIR
#
# Exit status: lockstep run's (0 when the stock run gives the verdict the marks state), or 2 when
# the file has not exactly one scripts line or no marked expectation (the twin would then not
# differ from the broken run, and the test would prove nothing).
set -eu
lockstep=$1
broken=$2
out=$3
mkdir -p "$out"
twin="$out/stock.toml"
scripts=$(grep -c '^scripts = ' "$broken" || true)
marks=$(grep -c '# stock: "[a-z]*"$' "$broken" || true)
if [ "$scripts" != 1 ] || [ "$marks" = 0 ]; then
  echo "$broken: needs exactly one 'scripts = ' line (has $scripts) and at least one" \
       "expectation marked '# stock: \"hold\"' (has $marks)" >&2
  exit 2
fi
sed -e '/^scripts = /d' \
    -e '0,/^name = "\(.*\)"$/s//name = "\1-stock"/' \
    -e 's/^\([a-z_]*\) = "[a-z]*"\( *\)# stock: "\([a-z]*\)"$/\1 = "\3"\2# stock twin/' \
    "$broken" > "$twin"
exec "$lockstep" run "$twin" --quiet --force --out "$out/run"
