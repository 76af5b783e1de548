#!/usr/bin/env bash
# Schemathesis (pinned, in a virtualenv under target/) against `booktr serve`'s own published
# description: every operation, with its examples, coverage, fuzzing and stateful phases. Fails on
# any finding: a 5xx, a response outside its schema or content type, an undocumented status.
#
# The caller is a DEV user (never rate-limited), and every request comes from its own client
# address (scripts/schemathesis_hooks.py), so the run tests the API rather than the limiter.
# Left out: closing the account and revoking keys, which would end the run's own credential
# (both have black-box tests of their own). SCHEMATHESIS_EXAMPLES sets the budget per operation.
set -euo pipefail
cd "$(dirname "$0")/.."

version=4.32.5
venv=target/venv-schemathesis
if ! "$venv/bin/schemathesis" --version 2>/dev/null | grep -q "$version"; then
  echo "== installing schemathesis $version into $venv"
  python3 -m venv --clear "$venv"
  "$venv/bin/pip" install -q "schemathesis==$version"
fi
[ "${1:-}" != --install-only ] || exit 0

# The test build's own `booktr` (scripts/test.sh's `cargo test` builds it for the black-box
# suite): `cargo build` would resolve features without the dev-dependencies, and without the
# Lambdas' package its features differ again, so much of the tree would be built a second time.
cargo test -q --workspace --exclude booktr-lambdas --all-features --no-run
work=$(mktemp -d)
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
key=$(target/debug/booktr user create --role DEV --plan BUSINESS --email fuzz@example.com \
  --data "$work/data" 2>/dev/null | python3 -c 'import json, sys; print(json.load(sys.stdin)["apiKey"])')
BOOKTR_DATA_DIR="$work/data" BOOKTR_ADDR="127.0.0.1:$port" BOOKTR_TRUST_FORWARDED_FOR=true \
  BOOKTR_PUBLIC_URL="http://127.0.0.1:$port" target/debug/booktr serve >"$work/serve.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; wait $server 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$port/api/health" >/dev/null && break
  sleep 0.1
done

echo "== schemathesis $version against http://127.0.0.1:$port/api/openapi.json"
PYTHONPATH=scripts SCHEMATHESIS_HOOKS=schemathesis_hooks "$venv/bin/schemathesis" run \
  "http://127.0.0.1:$port/api/openapi.json" \
  --header "Authorization: Bearer $key" \
  --checks not_a_server_error,status_code_conformance,response_schema_conformance,content_type_conformance \
  --phases examples,coverage,fuzzing,stateful \
  --max-examples "${SCHEMATHESIS_EXAMPLES:-50}" \
  --exclude-operation-id close_account --exclude-operation-id revoke \
  --no-color
