#!/bin/bash
# make bench in a brand-new Debian 12 (minbase) chroot, as ../shared/tools/fresh-check does for make demo
# and make test: nothing installed before, so make bench must install its own peers (LTTng-UST).
# Usage (as root): scripts/fresh-bench.sh [PROJECT_DIR]   (default: this checkout's HEAD, cloned)
# Needs the base system fresh-check caches in /var/tmp/kron-fresh-base (run fresh-check once first).
# Prints "fresh make bench: rc=N in S s"; the log is /tmp/fresh-bench.log, the figures /tmp/fresh-bench.json.
set -u
PROJ=$(cd "${1:-$(dirname "$0")/..}" && pwd)
BASE=${FRESH_BASE:-/var/tmp/kron-fresh-base}
[ -x "$BASE/bin/bash" ] || { echo "no base system in $BASE: run ../shared/tools/fresh-check once first"; exit 2; }
ROOT=$(mktemp -d /var/tmp/kron-bench.XXXXXX)
cp -a "$BASE/." "$ROOT/"
git clone -q "$PROJ" "$ROOT/root/kron"
mount -t proc proc "$ROOT/proc"; mount --rbind /dev "$ROOT/dev"; mount --rbind /sys "$ROOT/sys"
cleanup() {
  chroot "$ROOT" bash -c 'pkill lttng-sessiond' 2>/dev/null
  umount -R "$ROOT/dev" "$ROOT/sys" "$ROOT/proc" 2>/dev/null; rm -rf "$ROOT"
}
trap cleanup EXIT
start=$(date +%s)
chroot "$ROOT" bash -c "cd /root/kron && make bench" >/tmp/fresh-bench.log 2>&1; r=$?
echo "fresh make bench: rc=$r in $(( $(date +%s) - start )) s (log /tmp/fresh-bench.log)"
cp "$ROOT/root/kron/build/bench.json" /tmp/fresh-bench.json 2>/dev/null
exit $r
