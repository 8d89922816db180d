#!/usr/bin/env bash
# The Python module kron as a user has it: make install's tree (a temporary prefix), PYTHONPATH at the installed
# module. `import kron` without a board; a Python program's scopes recorded under kron record and read back
# (check_trace.py): every sample as numpy, the scopes as intervals, histograms, counters, batches, a compressed
# file.
set -euo pipefail
build=$1
python=${2:-python3}  # the python3 the module was built for (Debian's)
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
PYTHONPATH=$(echo "$tmp"/prefix/lib/python3*/dist-packages)
[ -f "$PYTHONPATH/kron/__init__.py" ] || fail "make install put no module kron in PREFIX/lib/python3.X/dist-packages"
export PYTHONPATH
kron="$tmp/prefix/bin/kron"
cd "$tmp"  # not the build tree's folder (its kron/ would be imported instead of the installed one)
# No board: the import works, silently, and every probe is off.
out=$(env -u KRON_BOARD "$python" -c 'import kron; kron.trace(1, 2); print(kron.attached())' 2>&1)
[ "$out" = False ] || fail "import kron without a board: $out"
out=$(KRON_BOARD=no-such-board-$$ "$python" -c 'import kron; print(kron.attached())' 2>/dev/null)
[ "$out" = False ] || fail "import kron with a missing board: $out"
"$python" -c 'import kron, os; assert os.path.dirname(kron.__file__).startswith(os.environ["PYTHONPATH"]), kron.__file__'
n=200
"$kron" record -q -o "$tmp/p.trace" -- "$python" "$here/probe_prog.py" $n >"$tmp/out.txt"
grep -q "attached True" "$tmp/out.txt" || fail "the program did not attach: $(cat "$tmp/out.txt")"
"$kron" record -q --compress -o "$tmp/c.trace" -- "$python" "$here/probe_prog.py" $n >/dev/null
"$kron" export --format csv -o "$tmp/p.csv" "$tmp/p.trace" >/dev/null
"$python" "$here/check_trace.py" "$tmp/p.trace" "$tmp/p.csv" $n "$tmp/c.trace"
# kron expand and the exports show the signed values as given (DECISION D30, D31).
max=$(((1 << 47) - 1)) min=$((-(1 << 47)))
python3 "$here/../../tests/support/signed_values.py" "$kron" "$tmp/p.trace" "signed=-5,0,$max,$min" \
  "signed outside=$min,$max,-5" "signed numpy=-5,-5" "scope:signed scope=-5" >/dev/null || fail "the signed values above"
# kron rpt agrees: the decorated function's scope, both threads.
"$kron" rpt "$tmp/p.trace" >"$tmp/rpt.txt"
grep -q "step" "$tmp/rpt.txt" && grep -q "py worker" "$tmp/rpt.txt" || fail "kron rpt: $(cat "$tmp/rpt.txt")"
echo ok
