#!/usr/bin/env bash
# The Lambda bootstraps' sizes, built as `sam build` builds them: `cargo lambda build --release
# --bin NAME` in `lambdas/` (cargo-lambda pinned, in a virtualenv under target/), which applies
# `lambdas/Cargo.toml`'s size settings. Prints each stripped size and fails when one is 15 MB
# (15,000,000 bytes) or more, the goal of the README's "Builds".
#
# By default the two largest, the download function and the render worker, and the jobs worker,
# where the next features go (docs/benchmarks.md, "Lambda bootstraps", has their figures): each
# is linked with fat LTO, about 3 minutes apiece on one core. Name others as arguments. Builds into
# CARGO_TARGET_DIR when it is set (CI builds them beside the tests' build, in a directory of their
# own), else into target/.
set -euo pipefail
cd "$(dirname "$0")/.."

version=1.9.2
limit=15000000
venv=target/venv-cargo-lambda
if ! "$venv/bin/cargo-lambda" lambda --version 2>/dev/null | grep -q "$version"; then
  echo "== installing cargo-lambda $version into $venv"
  python3 -m venv --clear "$venv"
  "$venv/bin/pip" install -q "cargo-lambda==$version"
fi

bins=("$@")
[ ${#bins[@]} -gt 0 ] || bins=(worker-jobs worker-render http-download)
# One build for all of them: cargo then links them side by side, and each link (the fat LTO pass)
# runs on one core. The package is named: cargo-lambda applies `lambdas/Cargo.toml`'s
# `[package.metadata.lambda.build]` when it knows the package, from `-p` or a single `--bin`
# (what `sam build` passes); given several `--bin` alone, it built them at opt-level 3 without
# LTO, 21.7 MB each.
selected=(-p booktr-lambdas)
for bin in "${bins[@]}"; do selected+=(--bin "$bin"); done
(cd lambdas && PATH="$PWD/../$venv/bin:$PATH" cargo-lambda lambda build --release "${selected[@]}")
over=0
for bin in "${bins[@]}"; do
  # `strip = "symbols"` in the release profile: this is the file `sam build` packages.
  size=$(stat -c %s "${CARGO_TARGET_DIR:-target}/lambda/$bin/bootstrap")
  verdict="under"
  if [ "$size" -ge "$limit" ]; then
    verdict="OVER"
    over=1
  fi
  awk -v bin="$bin" -v size="$size" -v verdict="$verdict" -v limit="$limit" \
    'BEGIN { printf "%-20s %10d bytes (%.2f MB), %s the %d-byte limit\n", bin, size, size / 1e6, verdict, limit }'
done
exit "$over"
