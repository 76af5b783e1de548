#!/usr/bin/env bash
# The whole test suite, on a fresh machine too: installs the tools the tests check output with
# (epubcheck for EPUB files, poppler's pdftotext for PDF files, fonts for PDF rendering,
# Chromium and its WebDriver for the pages, npm for axe-core) when
# they are missing, starts a local AWS emulator (moto, in a virtualenv under target/) for the AWS
# adapters, then runs every test. Extra arguments go to `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."

need=()
[ -f /usr/share/java/epubcheck.jar ] || need+=(epubcheck)
command -v pdftotext >/dev/null 2>&1 || need+=(poppler-utils)
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || need+=(fonts-dejavu-core)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
command -v chromedriver >/dev/null 2>&1 || need+=(chromium-driver)
command -v npm >/dev/null 2>&1 || need+=(npm)
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
if ! "$checks/bin/python" -c 'import feedparser, xmlschema, openapi_spec_validator, prometheus_client' 2>/dev/null; then
  echo "== installing the feed, sitemap, OpenAPI and Prometheus checkers into $checks"
  python3 -m venv "$checks"
  "$checks/bin/pip" install -q 'feedparser>=6,<7' 'xmlschema>=3,<5' 'openapi-spec-validator==0.7.2' \
    'prometheus-client>=0.20,<1'
fi

# axe-core (pinned), which the browser tests inject into the web app's pages.
if [ ! -f target/axe/node_modules/axe-core/axe.min.js ]; then
  echo "== installing axe-core into target/axe"
  npm install --silent --no-audit --no-fund --prefix target/axe axe-core@4.10.2
fi

# The AWS adapters run their conformance suites against local emulators, one per core: an
# emulator answers one request at a time, and the suite on the AWS adapters waits on it.
cores=$(nproc)
BOOKTR_EMULATORS=$cores . infra/emulator.sh

# The Lambda binaries (`lambdas/`) are a few lines each over booktr-functions and hold no tests:
# left out, `cargo test` does not link sixteen empty test harnesses. CI's clippy checks them and
# builds two as `sam build` does.
echo "== cargo test ($(date +%T))"
cargo test --workspace --exclude booktr-lambdas --all-features "$@"

# The API against its own published description (schemathesis; fails on any finding).
echo "== schemathesis ($(date +%T))"
bash scripts/schemathesis.sh

# The black-box suite again, on the AWS adapters (DynamoDB, SQS, S3 on the emulator). Left out:
# what only the embedded mode has (the `booktr` binary and its data directory: cli, crash, metrics,
# sign_in_attack, health's worker-queue counts; managed health is checked in aws::), and the tests whose queue
# delays follow the test's manual clock, which SQS does not (its retry delays and visibility are
# real minutes); the redrive to the dead-letter queue on SQS is tested in aws::. And four tests
# of what does not depend on the backend, each minutes long on it: the hour of browsing in
# web_traps:: (2,700 requests: which ones count against the API's limits; the limits' counters on
# DynamoDB are checked by limits::), and three of rendering alone (the corpus's chapters in a
# browser, the community and administration pages' accessibility, the offline API reference).
echo "== the black-box suite on the AWS adapters ($(date +%T))"
# Two tests per emulator, so that one's requests are served while the other computes.
BOOKTR_TEST_BACKEND=aws cargo test --workspace --exclude booktr-lambdas --all-features --test api "$@" -- \
  --test-threads $((2 * cores)) \
  --skip cli:: --skip crash:: --skip metrics:: --skip sign_in_attack:: --skip health:: --skip aws:: \
  --skip translation::a_chapter_that_always_fails_ends_in_error_and_resume_finishes_the_book \
  --skip translation::a_chapter_failing_in_its_review_pays_its_translate_pass_once_and_resumes_at_the_review \
  --skip upload::an_extraction_that_keeps_failing_ends_in_error_through_the_dead_letter_queue \
  --skip webhooks::a_failing_receiver_is_retried_after_1_5_and_30_minutes_and_then_the_delivery_fails \
  --skip webhooks::a_receiver_that_recovers_stops_the_retries \
  --skip web_traps::a_signed_in_persons_hour_of_pages_and_live_updates_never_meets_a_429_while_api_calls_still_do \
  --skip editions::each_corpus_books_chapter_renders_in_a_browser_with_its_sources_structure \
  --skip browser::the_community_and_administration_pages_have_no_accessibility_violation \
  --skip openapi::the_interactive_page_renders_the_description_offline_in_a_real_browser
