#!/usr/bin/env bash
# kron record --compress end to end (trace format 1.2, docs/trace-format.md "Compressed record area"): the
# same deterministic program recorded with and without compression gives the same samples (kinds, data,
# group; timestamps, pids, cpus and wait flags differ from run to run) through kron info, expand and export; a
# compressed recording cut short reads to its last whole chunk; a damaged chunk is an error naming its
# offset; a bad level is refused naming the option.
set -euo pipefail
kron=${KRON:?}
sample=${KRON_SAMPLE1:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# 40000 loops: about 280 k samples, 9 MB of records: nine 1 MiB chunks; --wait: none lost.
"$kron" record -q --wait -o "$tmp/raw.trace" -- "$sample" 40000 >/dev/null
out=$("$kron" record --wait --compress -o "$tmp/z.trace" -- "$sample" 40000 2>&1 >/dev/null)
grep -q "kron record: compressed .* MB of records to .* MB (.*x, .* bytes a sample)" <<<"$out" || fail "summary: $out"
"$kron" record -q --wait --compress=9 -o "$tmp/z9.trace" -- "$sample" 40000 >/dev/null
# kron record's ratio is kron info's for the same file (ERRATUM E401): both over the whole record area, also
# with records that are not samples (kserver's histogram and counter snapshots).
ratio_of() { sed -n 's/.*[ (]\([0-9.]*\)x, .* bytes a [a-z]*).*/\1/p' <<<"$1"; }
out=$("$kron" record --compress --snapshot-interval 0.05 -o "$tmp/s.trace" -- "${KRON_KSERVER:?}" -t 2 -n 3000 \
  2>&1 >/dev/null)
rec_ratio=$(ratio_of "$out")
info_ratio=$(ratio_of "$("$kron" info "$tmp/s.trace")")
[ -n "$rec_ratio" ] && [ "$rec_ratio" = "$info_ratio" ] ||
  fail "kron record says ${rec_ratio}x, kron info ${info_ratio}x: $out"
python3 - "$("$kron" info --json "$tmp/raw.trace")" "$("$kron" info --json "$tmp/z.trace")" \
  "$("$kron" info --json "$tmp/z9.trace")" <<'PY'
import json, sys
raw, z, z9 = (json.loads(a) for a in sys.argv[1:])
assert raw["format"] == "1.7" and not raw["compressed"] and "compression_ratio" not in raw, raw
for j in (z, z9):
    assert j["complete"] and j["compressed"], j
    for k in ("trace_samples", "resource_samples", "overruns", "overwritten"):
        assert j[k] == raw[k], (k, j[k], raw[k])
    assert j["trace_samples"] == 2 + 40000 * 7, j["trace_samples"]
    assert j["passed_filter"] == j["samples"] + j["overruns"] + j["overwritten"]
    assert j["records_raw_bytes"] == raw["records_bytes"], (j["records_raw_bytes"], raw["records_bytes"])
    assert j["records_bytes"] * 2 < j["records_raw_bytes"], j  # it pays on this program
    assert abs(j["compression_ratio"] - j["records_raw_bytes"] / j["records_bytes"]) < 1e-6
assert z9["records_bytes"] <= z["records_bytes"], (z9["records_bytes"], z["records_bytes"])
PY
"$kron" info "$tmp/z.trace" | grep -q "records zstd-compressed: .* bytes for .* (.*x, .* bytes a record)" || fail "info text"

# The same samples, whatever their order across the two threads: data and group of each (the header
# byte's flags, a probe that waited, differ from run to run; the kinds are compared by kron info above).
fields() { "$kron" expand "$1" | awk '{print $4, $6}' | sort; }
fields "$tmp/raw.trace" >"$tmp/raw.txt"
fields "$tmp/z.trace" >"$tmp/z.txt"
# 2 + 7 a loop trace samples, resource samples at the start, every 500 loops and at the end
[ "$(wc -l <"$tmp/raw.txt")" -eq 280084 ] || fail "expand of the uncompressed file: $(wc -l <"$tmp/raw.txt") lines"
cmp -s "$tmp/raw.txt" "$tmp/z.txt" || fail "expand: compressed and uncompressed recordings differ"
"$kron" export --format csv -o "$tmp/z.csv" "$tmp/z.trace"
"$kron" export --format csv -o "$tmp/raw.csv" "$tmp/raw.trace"
[ "$(wc -l <"$tmp/z.csv")" -eq "$(wc -l <"$tmp/raw.csv")" ] || fail "export row counts"

# A recording cut short (the complete flag cleared, the file cut in a chunk): whole chunks read back,
# the cut one is reported as dropped bytes.
python3 - "$tmp/z.trace" "$tmp/cut.trace" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
flags = struct.unpack_from("<I", b, 20)[0]
struct.pack_into("<I", b, 20, flags & ~1)  # FileHeader::flags: not closed
records_bytes = struct.unpack_from("<Q", b, 56)[0]  # FileHeader::records_bytes
open(sys.argv[2], "wb").write(b[: struct.unpack_from("<I", b, 16)[0] + records_bytes // 2])  # header_size + half
PY
cut=$("$kron" info "$tmp/cut.trace")
grep -q "NOT closed" <<<"$cut" || fail "cut file: $cut"
grep -q "dropped [1-9][0-9]* bytes" <<<"$cut" || fail "cut file dropped bytes: $cut"
n=$("$kron" expand "$tmp/cut.trace" 2>/dev/null | wc -l)
[ "$n" -gt 0 ] && [ "$n" -lt 280084 ] || fail "cut file expands to $n samples"

# A damaged chunk (bytes of the second chunk's frame flipped): exit 2, the file and the chunk's offset.
python3 - "$tmp/z.trace" "$tmp/bad.trace" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
hs = struct.unpack_from("<I", b, 16)[0]  # header_size
stored = struct.unpack_from("<I", b, hs)[0]
second = hs + 16 + (stored + 7) // 8 * 8
for i in range(16):
    b[second + 16 + 200 + i] ^= 0x5A
open(sys.argv[2], "wb").write(b)
print(second, file=open(sys.argv[2] + ".at", "w"))
PY
set +e
err=$("$kron" expand "$tmp/bad.trace" 2>&1 >/dev/null); rc=$?
set -e
[ $rc -eq 2 ] || fail "damaged chunk: exit $rc"
grep -q "bad.trace: offset $(cat "$tmp/bad.trace.at"): compressed chunk: zstd" <<<"$err" || fail "damaged chunk: $err"

# Bad levels: exit 2 naming the option; nothing recorded.
for lvl in 0 20 x; do
  set +e
  err=$("$kron" record -q --compress=$lvl -o "$tmp/l.trace" -- "$sample" 10 2>&1); rc=$?
  set -e
  [ $rc -eq 2 ] || fail "--compress=$lvl: exit $rc"
  grep -q -- "--compress=$lvl" <<<"$err" || fail "--compress=$lvl: $err"
  [ ! -e "$tmp/l.trace" ] || fail "--compress=$lvl wrote a file"
done
echo "compress: same samples compressed and not, cut file, damaged chunk, bad levels"
