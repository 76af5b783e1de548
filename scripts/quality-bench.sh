#!/usr/bin/env bash
# Quality against a human translation: a letter of Frankenstein (corpus/reference) into French
# by a real small model on this machine, two ways, scored with chrF (sacrebleu) against the
# 1821 French translation:
#
#   - the plain baseline: the same model asked "Translate into French; reply with the
#     translation only" for one paragraph at a time;
#   - `booktr translate`, with the text after each of its three passes.
#
# The model samples (temperature 0.3, as a plain script would ask), so one run of either system
# is one draw: on letter 1 the plain prompts scored from 57.0 to 60.6 over five seeds. Both
# systems run once per seed (SEEDS, default "1 2 3"), the server restarted with that seed, and
# the figures are their means, with each seed's beside them.
#
# Prints per seed and system: chrF, paragraphs, paragraphs with the same text as another's
# (whose source differs), paragraphs given back in English, tokens, requests and wall time;
# booktr's flags, blocks changed per later pass and blocks repaired; then the means, and
# booktr's confidence against each paragraph's chrF over every seed's paragraphs.
#
#   bash scripts/quality-bench.sh                 # letter 1, Qwen2.5-Coder-1.5B, seeds 1 2 3
#   LETTER=2 MODEL=0.5b SEEDS=7 bash scripts/quality-bench.sh
#   RECORD=1 bash scripts/quality-bench.sh        # also keep booktr's raw answers
#   BASELINE=keep bash scripts/quality-bench.sh   # each seed's last baseline (same answers)
#   BOOKTR=/tmp/booktr bash scripts/quality-bench.sh  # that binary, not a build of the tree
#
# On 2 cores a seed takes 2 to 12 minutes (the model writes 10-25 tokens a second).
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/lib/real-model.sh
model=${MODEL:-1.5b}
letter=${LETTER:-1}
port=${PORT:-8766}
seeds=${SEEDS:-1 2 3}
model_setup "$model"
py=$venv/bin/python
"$py" -c 'import sacrebleu' 2>/dev/null || "$venv/bin/pip" install -q "sacrebleu==2.4.3"

# BOOKTR=PATH benches that binary (a build kept aside while the tree changes) instead of
# building one.
booktr=${BOOKTR:-target/release/booktr}
if [ -z "${BOOKTR:-}" ]; then
  echo "== building booktr (release)"
  cargo build --release -q --bin booktr
fi

work=$dir/quality-$model-letter$letter
# The server samples from its seed, so the same prompts get the same answers: BASELINE=keep
# reuses each seed's last baseline for this model and letter instead of asking for it again.
kept=$(mktemp -d)
if [ "${BASELINE:-}" = keep ] && [ -d "$work" ]; then
  for seed in $seeds; do
    [ -s "$work/seed-$seed/baseline.txt" ] && mkdir -p "$kept/$seed" &&
      cp "$work/seed-$seed/baseline.txt" "$work/seed-$seed/baseline.json" "$kept/$seed/"
  done
fi
rm -rf "$work"
"$py" scripts/quality_bench.py extract --letter "$letter" --out "$work"

for seed in $seeds; do
  run=$work/seed-$seed
  mkdir -p "$run"
  model_serve "$port" "$seed"
  if [ -s "$kept/$seed/baseline.txt" ]; then
    echo "== seed $seed: the plain baseline kept from the last run (BASELINE=keep)"
    cp "$kept/$seed/baseline.txt" "$kept/$seed/baseline.json" "$run/"
  else
    echo "== seed $seed: the plain baseline, one prompt per paragraph"
    "$py" scripts/quality_bench.py baseline --url "http://127.0.0.1:$port/v1" \
      --source "$work/letter.txt" --out "$run/baseline.txt" --stats "$run/baseline.json"
  fi

  echo "== seed $seed: booktr translate"
  record=()
  [ -n "${RECORD:-}" ] && record=(--record-answers "$run/answers.jsonl")
  # The local server answers one request at a time, a few tokens a second: far slower than a
  # hosted model's 180 s allow. Nothing else is set: a model behind OPENAI_BASE_URL runs the
  # small profile (docs/operations.md, BOOKTR_MODEL_PROFILE); CHUNK_TOKENS and CHUNK_BLOCKS set
  # the request's size by hand (CHUNK_TOKENS=2000 CHUNK_BLOCKS=100 measures the hosted models'
  # size).
  by_hand=()
  [ -n "${CHUNK_TOKENS:-}" ] && by_hand+=("BOOKTR_CHUNK_TOKENS=$CHUNK_TOKENS")
  [ -n "${CHUNK_BLOCKS:-}" ] && by_hand+=("BOOKTR_CHUNK_BLOCKS=$CHUNK_BLOCKS")
  env "${by_hand[@]}" BOOKTR_MODEL_TIMEOUT_SECS=3600 OPENAI_API_KEY=local OPENAI_BASE_URL="http://127.0.0.1:$port/v1" \
    "$booktr" translate "$work/letter.txt" --from en --to fr --parallel 1 \
    --out "$run/letter.fr.epub" --report "$run/report.json" --pass-texts "$run/passes" \
    "${record[@]}" >"$run/booktr.log" 2>&1 || { tail -30 "$run/booktr.log"; exit 1; }
  grep -E "^(Model|Language|Flagged|Repaired|Translated twice|Changed|Not asked|Confidence|Tokens|Requests)" "$run/booktr.log" || true
  model_stop
done
rm -rf "$kept"

"$py" scripts/quality_bench.py score --work "$work"
