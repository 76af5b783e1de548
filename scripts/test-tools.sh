#!/usr/bin/env bash
# What the test command needs besides cargo, installed when missing: the tools the tests check
# output with (epubcheck for EPUB files, poppler's pdftotext for PDF files, pandoc for Markdown
# files, fonts for PDF rendering, Chromium and its WebDriver for the pages, npm for axe-core;
# Debian packages, with sudo when not root), the Python checkers, translate-toolkit, axe-core,
# the AWS emulator and schemathesis (in virtualenvs under target/). `scripts/test.sh` runs it
# first; CI runs it while it compiles.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
[ -f /usr/share/java/epubcheck.jar ] || need+=(epubcheck)
command -v pdftotext >/dev/null 2>&1 || need+=(poppler-utils)
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
command -v npm >/dev/null 2>&1 || need+=(npm)
command -v pandoc >/dev/null 2>&1 || need+=(pandoc)
if [ ${#need[@]} -gt 0 ]; then
  echo "== installing test tools: ${need[*]}"
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${need[@]}"
fi

# Outside checkers of what the service publishes: the sitemap against its schema, the feed
# in a real feed reader's parser, the API description against the OpenAPI 3.1 schema.
checks=target/venv-checks
# Each virtualenv is made again from empty (`--clear`) when its import fails: a run stopped while
# it was being made leaves one without pip.
if ! "$checks/bin/python" -c 'import feedparser, xmlschema, openapi_spec_validator, prometheus_client' 2>/dev/null; then
  echo "== installing the feed, sitemap, OpenAPI and Prometheus checkers into $checks"
  python3 -m venv --clear "$checks"
  "$checks/bin/pip" install -q 'feedparser>=6,<7' 'xmlschema>=3,<5' 'openapi-spec-validator==0.7.2' \
    'prometheus-client>=0.20,<1'
fi

# translate-toolkit (pinned), the translation tools' own XLIFF and TMX library: the XLIFF and
# memory tests read what booktr exports with it and change or make files with it, as a
# translator's tool would.
translate=target/venv-translate
if ! "$translate/bin/python" -c 'import translate.storage.xliff, translate.storage.tmx' 2>/dev/null; then
  echo "== installing translate-toolkit into $translate"
  python3 -m venv --clear "$translate"
  "$translate/bin/pip" install -q 'translate-toolkit==3.20.4'
fi

# axe-core (pinned), which the browser tests inject into the web app's pages.
if [ ! -f target/axe/node_modules/axe-core/axe.min.js ]; then
  echo "== installing axe-core into target/axe"
  npm install --silent --no-audit --no-fund --prefix target/axe axe-core@4.10.2
fi

# The AWS emulator and schemathesis, each installed by the script that runs it.
BOOKTR_EMULATORS=0 . infra/emulator.sh
bash scripts/schemathesis.sh --install-only
