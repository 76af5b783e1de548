//! Answers the checks refuse: repaired down the ladder, or flagged with their source.

use async_trait::async_trait;

use super::*;

#[tokio::test]
async fn chatter_around_the_blocks_is_removed_and_never_reaches_the_book() {
    let clean = clean().await;
    for fault in [
        Fault::Reasoning,
        Fault::Preamble,
        Fault::SignOff,
        Fault::Fenced,
    ] {
        let model = Misbehaving::new(OfflineEngine, &[fault], 1);
        let out = run(&model).await;
        assert_eq!(out.blocks, clean.blocks, "{fault:?}");
        assert!(
            out.quality.flagged.is_empty(),
            "{fault:?}: {:?}",
            out.quality.flagged
        );
        assert!(
            out.quality.removed.total() >= 3,
            "{fault:?}: {:?}",
            out.quality.removed
        );
        assert_eq!(out.quality.retries, 0, "{fault:?}: nothing to ask again");
    }
}

#[tokio::test]
async fn every_spoiled_answer_is_repaired_when_asked_again() {
    let clean = clean().await;
    for fault in Fault::ALL {
        // Every second answer spoiled, the answers that repair it included.
        let model = Misbehaving::new(OfflineEngine, &[fault], 2);
        let out = run(&model).await;
        assert_eq!(out.blocks, clean.blocks, "{fault:?}");
        assert!(
            out.quality.flagged.is_empty(),
            "{fault:?}: {:?}",
            out.quality.flagged
        );
    }
}

#[tokio::test]
async fn a_model_that_keeps_misbehaving_leaves_its_blocks_flagged_by_kind_with_their_source() {
    let source = chapter();
    let cases = [
        (Fault::Refusal, Problem::Refusal),
        (Fault::Remark, Problem::Refusal),
        (Fault::Tripled, Problem::Repeated),
        (Fault::OtherScript, Problem::WrongLanguage),
        (Fault::StripsMarks, Problem::BrokenMarks),
        (Fault::Truncated, Problem::Truncated),
        (Fault::AddsYear, Problem::Numbers),
    ];
    for (fault, kind) in cases {
        let model = Misbehaving::new(OfflineEngine, &[fault], 1);
        let out = run(&model).await;
        let flags = flagged(&out);
        assert!(
            flags.iter().any(|(k, _)| *k == kind),
            "{fault:?}: {flags:?}"
        );
        for (_, blocks) in &flags {
            for &block in blocks {
                assert_eq!(
                    out.blocks[block].text, source[block].text,
                    "{fault:?} keeps the source"
                );
            }
        }
        for block in &out.blocks {
            for added in ["Note", "sorry", "这是", "\u{60}\u{60}\u{60}"] {
                assert!(!block.text.contains(added), "{fault:?}: {}", block.text);
            }
        }
    }
}

#[tokio::test]
async fn a_block_whose_every_answer_failed_keeps_the_last_answer_and_the_check_it_failed() {
    let source = chapter();
    // Cut off: the answer's last block is kept as the model gave it, named by its check.
    let model = Misbehaving::new(OfflineEngine, &[Fault::Truncated], 1);
    let out = run(&model).await;
    assert!(!out.rejected.is_empty(), "{:?}", out.quality.flagged);
    for (block, rejected) in &out.rejected {
        assert_eq!(
            out.blocks[*block].text, source[*block].text,
            "keeps its source"
        );
        assert_eq!(rejected.problems, vec![Problem::Truncated]);
        assert_ne!(rejected.text, source[*block].text);
        assert!(!rejected.text.is_empty());
        assert!(out.quality.flagged_blocks().contains(block));
    }
    // In another script: the answer is there, named by its check.
    let model = Misbehaving::new(OfflineEngine, &[Fault::OtherScript], 1);
    let out = run(&model).await;
    assert!(
        out.rejected
            .values()
            .any(|r| r.problems == vec![Problem::WrongLanguage] && r.text.contains("这是")),
        "{:?}",
        out.rejected
    );
    // Refused: there is no answer to keep.
    let model = Misbehaving::new(OfflineEngine, &[Fault::Refusal], 1);
    assert!(run(&model).await.rejected.is_empty());
    // Repaired when asked again: nothing rejected is left.
    let model = Misbehaving::new(OfflineEngine, &[Fault::Truncated], 2);
    assert!(run(&model).await.rejected.is_empty());
}

#[tokio::test]
async fn blocks_left_untranslated_are_not_sent_to_the_review_or_the_polish() {
    let model = Misbehaving::new(OfflineEngine, &[Fault::Refusal], 1);
    let out = run(&model).await;
    assert_eq!(out.blocks, chapter(), "every block keeps its source");
    assert!(out.quality.translate.requests > 0);
    assert_eq!(out.quality.review.requests, 0);
    assert_eq!(out.quality.polish.requests, 0);
}

#[tokio::test]
async fn blocks_the_block_protocol_cannot_get_come_one_at_a_time_with_the_simplest_prompt() {
    let clean = clean().await;
    // Echoes every block it is sent in the block protocol, as the smallest models do.
    let model = Misbehaving::new(OfflineEngine, &[Fault::Echo], 1);
    let ladder = Ladder::default();
    let out = run_on(&model, &chapter(), &ladder).await;
    // The heading's echo is not kept either: "Chapter" is a word of the source language.
    assert_eq!(out.blocks, clean.blocks);
    assert!(out.quality.flagged.is_empty(), "{:?}", out.quality.flagged);
    assert_eq!(out.quality.repaired.simple, 3, "{:?}", out.quality.repaired);
    // Once a run's blocks have failed on three rungs and passed on the fourth often enough,
    // its chunks start on the fourth.
    let long: Vec<Block> = (0..12)
        .map(|i| {
            Block::new(
                BlockKind::Paragraph,
                format!(
                    "Some years ago, number {i}, never mind how long precisely, I went to sea."
                ),
            )
        })
        .collect();
    let first = run_on(&model, &long, &ladder).await;
    assert_eq!(first.quality.translate.requests, 1 + 2 + 12 + 12);
    let counting = Counting::default();
    let echoing = Misbehaving::new(&counting, &[Fault::Echo], 1);
    let out = run_on(&echoing, &long, &ladder).await;
    assert_eq!(out.blocks, first.blocks);
    assert!(out.quality.flagged.is_empty(), "{:?}", out.quality.flagged);
    assert_eq!(
        out.quality.translate.requests, 12,
        "one simple request per block"
    );
    let tasks = counting.tasks.lock().unwrap();
    assert!(
        !tasks.iter().any(|t| t.starts_with("TASK: translate")),
        "{tasks:?}"
    );
}

#[tokio::test]
async fn a_heading_that_swallowed_its_paragraph_is_asked_again_and_never_kept() {
    let clean = clean().await;
    let model = Misbehaving::new(OfflineEngine, &[Fault::MergedOnOneLine], 1);
    let out = run(&model).await;
    // Merged in every chunk answer, whole in the single-block answers.
    assert_eq!(out.blocks, clean.blocks);
    assert!(out.quality.flagged.is_empty(), "{:?}", out.quality.flagged);
    assert!(
        out.quality.repaired.total() >= 2,
        "{:?}",
        out.quality.repaired
    );
}

#[tokio::test]
async fn an_ignored_glossary_term_is_fixed_by_the_review_pass_when_told() {
    let out = run(&IgnoresGlossary { until_told: true }).await;
    assert_eq!(
        (out.quality.glossary_checked, out.quality.glossary_satisfied),
        (1, 1)
    );
    assert!(out.blocks[1].text.contains("ballena"));
}

#[tokio::test]
async fn a_glossary_term_never_used_is_reported() {
    let out = run(&IgnoresGlossary { until_told: false }).await;
    assert_eq!(
        out.quality.glossary_violations,
        [(1, "whale".to_string(), "ballena".to_string())]
    );
    assert_eq!(out.quality.glossary_compliance(), 0.0);
}

/// The offline engine (which changes every word it is sent, code too), keeping each
/// request's system prompt and blocks.
#[derive(Default)]
struct Listening {
    requests: std::sync::Mutex<Vec<(String, String)>>,
}

#[async_trait]
impl ChatModel for Listening {
    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
        let seen = (request.system.clone(), request.user.clone());
        self.requests.lock().unwrap().push(seen);
        OfflineEngine.complete(request).await
    }

    fn name(&self) -> &str {
        "listening"
    }
}

#[tokio::test]
async fn code_and_translate_no_text_reach_the_book_as_written_and_code_alone_is_never_sent() {
    let mut blocks = chapter();
    let with_code = "Type <code>cat whale.txt</code> to read of the <keep>Pequod</keep> at sea.";
    let code_alone = "<code>cat whale.txt | wc -l</code>";
    blocks.push(Block::new(BlockKind::Paragraph, with_code.into()));
    blocks.push(Block::new(BlockKind::Preformatted, code_alone.into()));
    let model = Listening::default();
    let out = run_on(&model, &blocks, &Ladder::default()).await;

    let translated = &out.blocks[3].text;
    assert_ne!(
        translated, with_code,
        "the words around the code are translated"
    );
    assert!(
        translated.contains("<code>cat whale.txt</code>")
            && translated.contains("<keep>Pequod</keep>"),
        "{translated}"
    );
    assert_eq!(out.blocks[4].text, code_alone);
    assert!(out.quality.flagged.is_empty(), "{:?}", out.quality.flagged);
    let requests = model.requests.lock().unwrap();
    assert!(requests.iter().all(|(_, user)| !user.contains("wc -l")));
    // Only requests that carry kept text are told about it, so recorded answers to every
    // other request still match.
    for (system, user) in requests.iter() {
        assert_eq!(
            system.contains("<keep>...</keep>"),
            user.contains("<code>"),
            "{user}"
        );
    }
}

#[tokio::test]
async fn a_model_writing_one_paragraph_for_several_has_them_asked_again_and_none_kept_twice() {
    let blocks = paragraphs(6);
    let clean = run_on(&OfflineEngine, &blocks, &Ladder::default()).await;
    // Every answer of more than one block gives the first block's text for all of them.
    let model = Misbehaving::new(OfflineEngine, &[Fault::OneForSeveral], 1);
    let out = run_on(&model, &blocks, &Ladder::default()).await;
    assert_eq!(out.blocks, clean.blocks);
    assert!(out.quality.flagged.is_empty(), "{:?}", out.quality.flagged);
    assert!(
        out.quality.repaired.singles >= 5,
        "{:?}",
        out.quality.repaired
    );
    let texts: BTreeSet<&str> = out.blocks.iter().map(|b| b.text.as_str()).collect();
    assert_eq!(
        texts.len(),
        blocks.len(),
        "no two blocks share a translation"
    );
}
