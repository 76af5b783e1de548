#!/usr/bin/env bash
# Starts local AWS emulators (moto server, from PyPI, in a virtualenv under target/) for the AWS
# adapters' tests and for trying managed-queue mode without an account. Source it:
#   . infra/emulator.sh                    # one emulator; exports AWS_ENDPOINT_URL, dummy
#                                          # credentials and a region
#   BOOKTR_EMULATORS=2 . infra/emulator.sh  # two: BOOKTR_TEST_EMULATORS lists their URLs (the
#                                          # first is AWS_ENDPOINT_URL); the tests take them in turn
#   BOOKTR_EMULATORS=0 . infra/emulator.sh  # none: installs the emulator only
# The servers stop when the sourcing shell exits (a trap), or with `kill $BOOKTR_EMULATOR_PIDS`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/target/aws-venv"
# Pinned: infra/moto_server.py caches two of moto's internal lookups.
moto_version=5.2.5
if ! "$venv/bin/python" -c "import moto, sys; sys.exit(moto.__version__ != '$moto_version')" 2>/dev/null; then
  echo "== installing the AWS emulator (moto[server] $moto_version) into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "moto[server]==$moto_version"
fi
# None asked for: installed only (scripts/test-tools.sh).
[ "${BOOKTR_EMULATORS:-1}" != 0 ] || return 0
BOOKTR_EMULATOR_PIDS=""
BOOKTR_TEST_EMULATORS=""
trap 'kill $BOOKTR_EMULATOR_PIDS 2>/dev/null || true' EXIT
for n in $(seq 1 "${BOOKTR_EMULATORS:-1}"); do
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
  log="$root/target/moto-$n.log"
  "$venv/bin/python" "$root/infra/moto_server.py" "$port" > "$log" 2>&1 &
  BOOKTR_EMULATOR_PIDS="$BOOKTR_EMULATOR_PIDS $!"
  for _ in $(seq 1 100); do
    if python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/moto-api/')" 2>/dev/null; then
      break
    fi
    sleep 0.1
  done
  BOOKTR_TEST_EMULATORS="$BOOKTR_TEST_EMULATORS http://127.0.0.1:$port"
  echo "== AWS emulator at http://127.0.0.1:$port (log: $log)"
done
BOOKTR_TEST_EMULATORS="${BOOKTR_TEST_EMULATORS# }"
export AWS_ENDPOINT_URL="${BOOKTR_TEST_EMULATORS%% *}"
export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1
export BOOKTR_TEST_EMULATORS BOOKTR_EMULATOR_PIDS
