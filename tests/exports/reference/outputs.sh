#!/usr/bin/env bash
# Every output of the trace side for the recordings beside this script: each export format, kron rpt (text,
# -s -h, -n, --wide, --json, --html), kron hist (text, JSON) and kron info (text, JSON). Written into OUT, one
# file (or directory) per output, by the kron given. same_outputs.py compares them with the outputs that the
# code before the timeline restructuring wrote (expected.tar.xz), byte for byte.
# Usage: outputs.sh KRON OUT
set -euo pipefail
kron=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
cd "$here"  # inputs by relative name: the outputs that name their inputs (CTF, JSON) do not depend on where
for f in *.kron; do
  n=${f%.kron}
  info=()
  [ -f "$n.info" ] && info=(-f "$n.info")
  "$kron" export --format perfetto --compress 0 "${info[@]}" -o "$out/$n.plain.pftrace" "$f" >/dev/null
  "$kron" export --format perfetto "${info[@]}" -o "$out/$n.pftrace" "$f" >/dev/null
  "$kron" export --format chrome-json "${info[@]}" -o "$out/$n.json" "$f" >/dev/null
  "$kron" export --format csv -o "$out/$n.csv" "$f" >/dev/null
  "$kron" export --format ctf -o "$out/$n.ctf" "$f" >/dev/null
  "$kron" export --format otf2 -o "$out/$n.otf2" "$f" >/dev/null
  "$kron" rpt "${info[@]}" "$f" >"$out/$n.rpt.txt"
  "$kron" rpt -s -h "${info[@]}" "$f" >"$out/$n.rpt-s-h.txt"
  "$kron" rpt -n "${info[@]}" "$f" >"$out/$n.rpt-n.txt"
  "$kron" rpt --wide -v "${info[@]}" "$f" >"$out/$n.rpt-wide.txt"
  "$kron" rpt --json -h "${info[@]}" "$f" >"$out/$n.rpt.json"
  "$kron" rpt "${info[@]}" --html "$out/$n.rpt.html" "$f" >/dev/null
  "$kron" hist "$f" >"$out/$n.hist.txt"
  "$kron" hist --json "$f" >"$out/$n.hist.json"
  "$kron" info "$f" >"$out/$n.info.txt"
  "$kron" info --json "$f" >"$out/$n.info.json"
done
# kron rpt --phase: the report of one phase only.
"$kron" rpt --phase 1 kserver.kron >"$out/kserver.rpt-phase1.txt"
