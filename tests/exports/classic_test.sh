#!/usr/bin/env bash
# kron export from the device models' raw streams (every kind of kron trace): the first
# MultiKron's network stream (kron sim --chip mk1: 16-byte Trace and 80-byte Resource samples, 001 Table 7),
# the MultiKron II's (kron sim --chip mk2: 20/84-byte samples, 000 Table B8) and the PCI board's cable
# (MultiKron II samples, 003) into every format, each read back by its reader: the Perfetto trace inflated
# and decoded by protoc, the CTF trace by babeltrace2, the OTF2 archive by otf2-print (when built with
# OTF2), the Chrome JSON by Python. Each holds every sample kron expand prints, no more: a Trace sample as
# an instant (Perfetto, JSON) or a kron:trace event with its data word (CTF) or a Metric (OTF2); a Resource
# sample as one counter event of sixteen values, sixteen JSON counter values, a kron:resource event.
set -euo pipefail
kron=${KRON:?}
protoc=${KRON_PROTOC:?}
bt=${KRON_BABELTRACE2:?}
print=${KRON_OTF2_PRINT:-}
src=${KRON_SOURCE_DIR:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cd "$tmp"

# Streams: name, input format, how it is made. The mk1 scripts' samples are concatenated (each script
# starts its clock again: the exports must keep every sample of a stream whose time goes back).
"$kron" sim --chip mk1 --net a.raw "$src/examples/mk1/trace.sim" >/dev/null
"$kron" sim --chip mk1 --net b.raw "$src/examples/mk1/resource.sim" >/dev/null
"$kron" sim --chip mk1 --net c.raw "$src/examples/mk1/overrun.sim" >/dev/null
cat a.raw b.raw c.raw >mk1.raw
"$kron" sim --chip mk2 --net mk2.raw "$src/examples/mk2/demo.sim" >/dev/null
"$kron" sim --chip mk2 --net mk2r.raw "$src/examples/mk2/resource_sample.sim" >/dev/null
cat mk2.raw mk2r.raw >mk2all.raw
"$kron" sim --board pci "$src/examples/pci/cable.sim" >pci.raw 2>/dev/null
for s in mk1:mk1 mk2all:mk2 pci:mk2; do
  n=${s%%:*} fmt=${s##*:}
  in=(--input-format "$fmt" "$n.raw")
  "$kron" expand "${in[@]}" >$n.expand
  "$kron" export --format csv "${in[@]}" -o $n.csv >/dev/null
  "$kron" export "${in[@]}" -o $n.pftrace >/dev/null
  python3 "$src/tests/exports/perfetto_inflate.py" $n.pftrace $n.plain >/dev/null
  "$protoc" --decode=perfetto.protos.Trace -I "$src/tests/exports" perfetto_subset.proto <$n.plain >$n.txt ||
    fail "$n: protoc cannot decode the Perfetto trace"
  "$kron" export --format chrome-json "${in[@]}" -o $n.json >/dev/null
  "$kron" export --format ctf "${in[@]}" -o $n.ctf >/dev/null
  "$bt" $n.ctf >$n.bt 2>$n.bterr || fail "$n: babeltrace2 cannot read it: $(cat $n.bterr)"
  if [ -n "$print" ]; then
    "$kron" export --format otf2 "${in[@]}" -o $n.otf2 >/dev/null
    "$print" $n.otf2/traces.otf2 >$n.print 2>$n.err || fail "$n: otf2-print cannot read it: $(cat $n.err)"
  fi
done

python3 - "$print" <<'PY'
import csv, json, re, sys
from collections import Counter
have_otf2 = bool(sys.argv[1])
for n in ("mk1", "mk2all", "pci"):
    exp = [l.split() for l in open(f"{n}.expand") if re.match(r"[0-9a-f]{2} [0-9a-f]+ [0-9a-f]+ [0-9a-f]+", l)]
    rows = list(csv.DictReader(open(f"{n}.csv")))
    assert len(rows) == len(exp) > 0, (n, len(rows), len(exp))
    res = sum(1 for r in rows if r["type"].lower().startswith("res"))
    trc = len(rows) - res
    assert res > 0 and trc > 0, f"{n}: the stream should hold both kinds of sample ({trc} trace, {res} resource)"
    data = Counter(int(e[3], 16) for e in exp)
    # Perfetto: an instant a Trace sample, a counter event (with fifteen extra values) a Resource sample.
    t = open(f"{n}.txt").read()
    assert t.count("type: TYPE_INSTANT") == trc, (n, t.count("type: TYPE_INSTANT"), trc)
    assert t.count("type: TYPE_COUNTER") == res and t.count("extra_counter_values:") == 15 * res, n
    # Chrome JSON: the same.
    ev = json.load(open(f"{n}.json"))["traceEvents"]
    assert sum(1 for e in ev if e["ph"] == "i") == trc and sum(1 for e in ev if e["ph"] == "C") == 16 * res, n
    assert Counter(int(e["args"]["data"], 16) for e in ev if e["ph"] == "i") + \
        Counter(int(r["data"]) for r in rows if r["type"].lower().startswith("res")) == data, f"{n}: JSON data words"
    # CTF: every sample an event with its data word.
    bt = [l for l in open(f"{n}.bt") if l.startswith("[")]
    kinds = Counter(re.search(r"(kron:\w+)", l).group(1) for l in bt)
    assert kinds == Counter({"kron:trace": trc, "kron:resource": res}), (n, kinds)
    assert Counter(int(re.search(r"data = (\d+)", l).group(1)) for l in bt) == data, f"{n}: CTF data words"
    if have_otf2:
        metrics = sum(1 for l in open(f"{n}.print") if l.startswith("METRIC"))
        assert metrics == len(exp), (n, metrics, len(exp))
    print(f"{n}: {trc} trace and {res} resource samples in every format{' (OTF2 too)' if have_otf2 else ''}")
PY
echo "export_classic: ok"
