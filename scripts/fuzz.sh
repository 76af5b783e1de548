#!/usr/bin/env bash
# Fuzzes every extractor for SECONDS (default 60) each, seeded with the test corpus.
# Needs cargo-fuzz (`cargo install cargo-fuzz`); RUSTC_BOOTSTRAP lets the stable toolchain take
# the sanitizer flags libFuzzer builds use.
set -euo pipefail
cd "$(dirname "$0")/.."
cd shared/formats
seconds=${1:-60}
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked
export RUSTC_BOOTSTRAP=1
targets=${FUZZ_TARGETS:-epub docx pdf html txt markdown fb2}
for target in $targets; do
  seeds="fuzz/corpus/$target"
  mkdir -p "$seeds"
  case $target in
    epub) cp ../../corpus/wasteland.epub "$seeds/" ;;
    markdown) cp ../../tests/fixtures/wasteland.md ../../tests/fixtures/voyage.md "$seeds/" ;;
    fb2) cp ../../tests/fixtures/poems.fb2 "$seeds/" ;;
    *) cp "../../tests/fixtures/wasteland.$target" "$seeds/" ;;
  esac
  echo "== fuzzing $target for ${seconds}s"
  cargo fuzz run "$target" "$seeds" -- -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=20
done
echo "all fuzz targets ran ${seconds}s without a crash"
