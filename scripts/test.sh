#!/usr/bin/env bash
# The whole test suite, on a fresh machine too: installs what the tests need when it is missing
# (scripts/test-tools.sh: the tools the tests check output with, the AWS emulator, schemathesis),
# starts local AWS emulators (moto) for the AWS adapters, then runs every test. Extra arguments
# go to `cargo test`.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/test-tools.sh

# The AWS adapters run their conformance suites against local emulators, one per core: an
# emulator answers one request at a time, and the suite on the AWS adapters waits on it.
cores=$(nproc)
BOOKTR_EMULATORS=$cores . infra/emulator.sh

# The Lambda binaries (`lambdas/`) are a few lines each over booktr-functions and hold no tests:
# left out, `cargo test` does not link seventeen empty test harnesses. CI builds and lints them
# with the rest, and builds two as `sam build` does.
echo "== cargo test ($(date +%T))"
cargo test --workspace --exclude booktr-lambdas --all-features "$@"

# The API against its own published description (schemathesis; fails on any finding).
echo "== schemathesis ($(date +%T))"
bash scripts/schemathesis.sh

# The black-box suite again, on the AWS adapters (DynamoDB, SQS, S3 on the emulator). Left out:
# what only the embedded mode has (the `booktr` binary and its data directory: cli, crash,
# metrics, sign_in_attack, hostile, health's worker-queue counts; managed health is checked in
# aws::), and the tests whose queue delays follow the test's manual clock, which SQS does not (its
# retry delays and visibility are real minutes); the redrive to the dead-letter queue on SQS is
# tested in aws::. And the tests of what does not depend on the backend, each minutes long on it:
# the hour of browsing in web_traps:: (2,700 requests: which ones count against the API's limits;
# the limits' counters on DynamoDB are checked by limits::), the web app driven in a real browser
# (browser::, a quarter of the suite's time on the emulator; what its pages ask of the backend,
# sessions, reading, settings and edits, is asked over HTTP by web_app::, reader::, web_editor::
# and passages::), and two of rendering alone (the corpus's chapters in a browser, the offline
# API reference).
echo "== the black-box suite on the AWS adapters ($(date +%T))"
# Two tests per emulator, so that one's requests are served while the other computes.
BOOKTR_TEST_BACKEND=aws cargo test --workspace --exclude booktr-lambdas --all-features --test api "$@" -- \
  --test-threads $((2 * cores)) \
  --skip cli:: --skip crash:: --skip metrics:: --skip sign_in_attack:: --skip hostile:: \
  --skip health:: --skip aws:: \
  --skip translation::a_chapter_that_always_fails_ends_in_error_and_resume_finishes_the_book \
  --skip translation::a_chapter_failing_in_its_review_pays_its_translate_pass_once_and_resumes_at_the_review \
  --skip upload::an_extraction_that_keeps_failing_ends_in_error_through_the_dead_letter_queue \
  --skip webhooks::a_failing_receiver_is_retried_after_1_5_and_30_minutes_and_then_the_delivery_fails \
  --skip webhooks::a_receiver_that_recovers_stops_the_retries \
  --skip web_traps::a_signed_in_persons_hour_of_pages_and_live_updates_never_meets_a_429_while_api_calls_still_do \
  --skip browser:: \
  --skip editions::each_corpus_books_chapter_renders_in_a_browser_with_its_sources_structure \
  --skip openapi::the_interactive_page_renders_the_description_offline_in_a_real_browser
