#!/usr/bin/env bash
# The whole test suite, on a fresh machine too: installs the tools the tests check output with
# (epubcheck for EPUB files, poppler's pdftotext for PDF files, fonts for PDF rendering) when
# they are missing, starts a local AWS emulator (moto, in a virtualenv under target/) for the AWS
# adapters, then runs every test. Extra arguments go to `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
[ -f /usr/share/java/epubcheck.jar ] || need+=(epubcheck)
command -v pdftotext >/dev/null 2>&1 || need+=(poppler-utils)
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
if [ ${#need[@]} -gt 0 ]; then
  echo "== installing test tools: ${need[*]}"
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

# The AWS adapters run their conformance suites against a local emulator.
. infra/emulator.sh

cargo test --workspace "$@"
