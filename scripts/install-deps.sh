#!/usr/bin/env bash
# Installs the Debian packages listed in deps/debian-packages.txt (and in each EXTRA_LIST_FILE) that are
# missing.
# Usage: scripts/install-deps.sh [EXTRA_LIST_FILE...]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
lists=("$here/deps/debian-packages.txt" "$@")
wanted=$(grep -hv '^\s*#' "${lists[@]}" | awk 'NF{print $1}')
missing=()
for p in $wanted; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "install-deps: installing ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages (${missing[*]}) and not root; run as root or install them" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
