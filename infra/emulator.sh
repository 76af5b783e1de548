#!/usr/bin/env bash
# Starts a local AWS emulator (moto server, from PyPI, in a virtualenv under target/) for the AWS
# adapters' tests and for trying managed-queue mode without an account. Source it:
#   . infra/emulator.sh      # exports AWS_ENDPOINT_URL, dummy credentials and a region
# The server stops when the sourcing shell exits (a trap), or with `kill $BOOKTR_EMULATOR_PID`.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/target/aws-venv"
if [ ! -x "$venv/bin/moto_server" ]; then
  echo "== installing the AWS emulator (moto[server]) into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q 'moto[server]>=5,<6'
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
log="$root/target/moto.log"
# One request at a time: moto's threaded server does not make DynamoDB's atomic counters atomic
# under concurrent updates (a real table does), and the port conformance suite checks that.
"$venv/bin/python" -c '
import sys
from werkzeug.serving import run_simple
from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app
run_simple("127.0.0.1", int(sys.argv[1]), DomainDispatcherApplication(create_backend_app),
           threaded=False, request_handler=MotoRequestHandler)
' "$port" > "$log" 2>&1 &
BOOKTR_EMULATOR_PID=$!
trap 'kill $BOOKTR_EMULATOR_PID 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  if python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$port/moto-api/')" 2>/dev/null; then
    break
  fi
  sleep 0.1
done
export AWS_ENDPOINT_URL="http://127.0.0.1:$port"
export AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing AWS_REGION=us-east-1 AWS_DEFAULT_REGION=us-east-1
export BOOKTR_EMULATOR_PID
echo "== AWS emulator at $AWS_ENDPOINT_URL (log: $log)"
