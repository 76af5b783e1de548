//! The chapter around each request: the window before it, and answers carrying a neighbour's text.

use async_trait::async_trait;

use super::*;

/// Answers like the offline engine, except that the translation of block `swapped` in a
/// first-pass answer of several blocks is its neighbour's: sameness across chunks is only
/// seen in the chapter as a whole.
struct CopiesAcrossChunks;

#[async_trait]
impl ChatModel for CopiesAcrossChunks {
    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
        let mut response = OfflineEngine.complete(request.clone()).await?;
        if request.user.starts_with("TASK: translate") && request.user.contains("[[3]] ") {
            let earlier = request.user.split("EARLIER:\n").nth(1).unwrap_or_default();
            let previous = earlier.lines().last().unwrap_or_default().to_string();
            response.text = response
                .text
                .lines()
                .map(|line| match line.strip_prefix("[[3]] ") {
                    Some(_) => format!("[[3]] {previous}"),
                    None => line.to_string(),
                })
                .collect::<Vec<_>>()
                .join("\n");
        }
        Ok(response)
    }

    fn name(&self) -> &str {
        "copies-across-chunks"
    }
}

#[tokio::test]
async fn the_first_pass_sees_the_chapters_translation_so_far_and_the_chapter_is_judged_whole() {
    let blocks = paragraphs(6);
    let glossary = glossary();
    let ledger = HashMap::new();
    let ladder = Ladder::default();
    let input = ChapterInput {
        blocks: &blocks,
        source_lang: "en",
        target_lang: "es",
        glossary: &glossary,
        ledger: &ledger,
        ladder: &ladder,
        instruction: None,
        memory: &crate::memory::NOTHING,
    };
    // Chunks of three blocks: block 3 opens the second, with blocks 0 to 2 in its window.
    let config = PipelineConfig {
        chunk_tokens: 100,
        ..PipelineConfig::default()
    };
    let clean = translate_chapter(&OfflineEngine, &input, &config)
        .await
        .unwrap();
    let out = translate_chapter(&CopiesAcrossChunks, &input, &config)
        .await
        .unwrap();
    // Block 3 came back as block 2's translation (the window's last line): both were asked
    // for again, alone, and the chapter is as the clean run's.
    assert_eq!(out.blocks, clean.blocks);
    assert!(out.quality.flagged.is_empty(), "{:?}", out.quality.flagged);
    assert_eq!(out.quality.retries, 2, "blocks 2 and 3 asked again");
}

/// The offline engine after a pause, noting the most first-pass requests in flight at once
/// and each one's EARLIER lines.
#[derive(Default)]
struct Overlapping {
    in_flight: AtomicU32,
    most: AtomicU32,
    earlier: std::sync::Mutex<Vec<String>>,
}

#[async_trait]
impl ChatModel for Overlapping {
    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
        if request.user.starts_with("TASK: translate") {
            let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            self.most.fetch_max(now, Ordering::SeqCst);
            let earlier = request
                .user
                .split("EARLIER:\n")
                .nth(1)
                .and_then(|rest| rest.split("BLOCKS:\n").next())
                .unwrap_or_default();
            self.earlier.lock().unwrap().push(earlier.to_string());
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
        }
        OfflineEngine.complete(request).await
    }

    fn name(&self) -> &str {
        "overlapping"
    }
}

#[tokio::test]
async fn with_the_source_as_the_window_a_chapters_chunks_go_out_at_once_each_with_the_text_before_it(
) {
    let blocks = paragraphs(8);
    let glossary = glossary();
    let ledger = HashMap::new();
    let ladder = Ladder::default();
    let input = ChapterInput {
        blocks: &blocks,
        source_lang: "en",
        target_lang: "es",
        glossary: &glossary,
        ledger: &ledger,
        ladder: &ladder,
        instruction: None,
        memory: &crate::memory::NOTHING,
    };
    let config = PipelineConfig {
        chunk_tokens: 50,
        window: Window::Source,
        ..PipelineConfig::default()
    };
    let model = Overlapping::default();
    let out = translate_chapter(&model, &input, &config).await.unwrap();
    assert!(out.quality.flagged.is_empty(), "{:?}", out.quality.flagged);
    assert!(
        model.most.load(Ordering::SeqCst) > 1,
        "the chunks overlapped"
    );
    let earlier = model.earlier.lock().unwrap().clone();
    assert!(earlier.len() > 2, "{earlier:?}");
    // Every chunk but the chapter's first sees the English just before it: its window ends
    // on a block's source.
    let seen: Vec<&String> = earlier.iter().filter(|e| !e.is_empty()).collect();
    assert_eq!(seen.len(), earlier.len() - 1, "{earlier:?}");
    assert!(
        seen.iter().all(|e| blocks
            .iter()
            .any(|b| e.trim_end().ends_with(b.text.as_str()))),
        "{seen:?}"
    );
}

/// The offline engine, except that the review and the polish change block 2 into Chinese.
struct EditsIntoChinese {
    outputs: std::sync::Mutex<Vec<(String, u64)>>,
}

#[async_trait]
impl ChatModel for EditsIntoChinese {
    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
        let mut response = OfflineEngine.complete(request.clone()).await?;
        let task = request.user.lines().next().unwrap_or_default().to_string();
        if !task.starts_with("TASK: translate") {
            response.text = format!(
                "[[2]] 这是一段中文文本，不是目标语言，这是一段中文文本。\nWHY: better\n{}",
                response.text
            );
        }
        self.outputs
            .lock()
            .unwrap()
            .push((task, response.output_tokens));
        Ok(response)
    }

    fn name(&self) -> &str {
        "edits-into-chinese"
    }

    fn writes_language(&self) -> bool {
        true
    }
}

#[tokio::test]
async fn the_review_and_the_polish_answer_with_their_changes_and_a_failed_change_is_not_kept() {
    let clean = clean().await;
    let model = EditsIntoChinese {
        outputs: Default::default(),
    };
    let out = run(&model).await;
    assert_eq!(out.blocks, clean.blocks);
    assert!(out.quality.flagged.is_empty(), "{:?}", out.quality.flagged);
    assert_eq!(
        out.quality.kept_previous,
        vec![
            (Pass::Review, 2, Problem::WrongLanguage),
            (Pass::Polish, 2, Problem::WrongLanguage)
        ]
    );
    assert_eq!(out.quality.changed, Changed::default());
    assert_eq!(
        out.quality.last_pass,
        Some(BTreeMap::new()),
        "a change not kept leaves the translate pass's text"
    );
    // The clean engine's later passes answer one block in four, as an editor is assumed
    // to change: together at most what the first pass wrote, half of what they wrote when
    // each gave every block back.
    let eight = run_on(&OfflineEngine, &paragraphs(8), &Ladder::default()).await;
    let q = eight.quality;
    assert!(
        q.review.output_tokens + q.polish.output_tokens <= q.translate.output_tokens,
        "{q:?}"
    );
}

/// The offline engine, except that in the pass `task` the answer for block `into` also
/// carries block `from`'s text (after its own when `from` is the next block, before it when
/// it is the previous one): in the first pass while `from` keeps its own line, in the later
/// passes with `from` left out as unchanged. A request without both blocks (a block asked
/// again alone) is answered as it should be.
struct CarriesNeighbour {
    task: &'static str,
    into: usize,
    from: usize,
}

#[async_trait]
impl ChatModel for CarriesNeighbour {
    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
        let mut response = OfflineEngine.complete(request.clone()).await?;
        if !request.user.starts_with(&format!("TASK: {}", self.task)) {
            return Ok(response);
        }
        let translating = self.task == "translate";
        let texts = if translating {
            read_answer(&response.text, None).blocks
        } else {
            let drafts = request.user.split_once("DRAFT:\n").map_or("", |(_, d)| d);
            read_answer(drafts, None).blocks
        };
        let (Some(own), Some(theirs)) = (texts.get(&self.into), texts.get(&self.from)) else {
            return Ok(response);
        };
        let merged = if self.from > self.into {
            format!("{own} {theirs}")
        } else {
            format!("{theirs} {own}")
        };
        response.text = if translating {
            texts
                .iter()
                .map(|(id, text)| {
                    let text = if *id == self.into { &merged } else { text };
                    format!("[[{id}]] {text}\n")
                })
                .collect()
        } else {
            format!("[[{}]] {merged}\nWHY: reads better as one\n", self.into)
        };
        Ok(response)
    }

    fn name(&self) -> &str {
        "carries-neighbour"
    }
}

/// Paragraphs without marks, each short enough that two of them together stay inside
/// every length bound.
fn short_paragraphs() -> Vec<Block> {
    [
        "Chapter 2. The Carpet-Bag.",
        "I stuffed a shirt or two into my old carpet-bag and started for Cape Horn.",
        "Quitting the good city of old Manhatto, I duly arrived in New Bedford.",
        "It was a Saturday night in December, and the packet had already sailed.",
        "As most young candidates for the pains and penalties of whaling stop at this port.",
    ]
    .into_iter()
    .map(|text| Block::new(BlockKind::Paragraph, text.into()))
    .collect()
}

#[tokio::test]
async fn a_first_pass_answer_carrying_the_next_or_the_previous_block_is_asked_again() {
    let blocks = short_paragraphs();
    let clean = run_on(&OfflineEngine, &blocks, &Ladder::default()).await;
    for (into, from) in [(1, 2), (3, 2)] {
        let model = CarriesNeighbour {
            task: "translate",
            into,
            from,
        };
        let out = run_on(&model, &blocks, &Ladder::default()).await;
        assert_eq!(out.blocks, clean.blocks, "block {into} carrying {from}");
        assert!(out.quality.flagged.is_empty(), "{:?}", out.quality.flagged);
        assert_eq!(out.quality.retries, 1, "block {into} asked again");
    }
}

#[tokio::test]
async fn a_review_or_polish_change_carrying_a_neighbours_text_is_not_kept() {
    let blocks = short_paragraphs();
    let clean = run_on(&OfflineEngine, &blocks, &Ladder::default()).await;
    for (task, pass) in [("review", Pass::Review), ("polish", Pass::Polish)] {
        // Block 0 carrying block 3: the later passes answer with some blocks only, and the
        // one whose marker was dropped may be any up to the next they answer.
        for (into, from) in [(1, 2), (2, 1), (0, 3)] {
            let model = CarriesNeighbour { task, into, from };
            let out = run_on(&model, &blocks, &Ladder::default()).await;
            assert_eq!(
                out.blocks, clean.blocks,
                "{task}: block {into} carrying {from}"
            );
            assert!(out.quality.flagged.is_empty(), "{:?}", out.quality.flagged);
            assert_eq!(
                out.quality.kept_previous,
                vec![(pass, into, Problem::Merged)],
                "{task}"
            );
        }
    }
}

/// Blocks that share text with their neighbours by right: a line that quotes the next, a
/// refrain said twice, short answers said again.
fn blocks_that_share_text() -> Vec<Block> {
    [
        "The bill on the wall read: “WHALING VOYAGE BY ONE ISHMAEL.” and I read it twice.",
        "“WHALING VOYAGE BY ONE ISHMAEL.",
        "Then this ebony bird beguiling my sad fancy into smiling. Quoth the Raven, “Nevermore.”",
        "Quoth the Raven, “Nevermore.”",
        "Quoth the Raven, “Nevermore.”",
        "Yes.",
        "No.",
        "Yes, sir.",
        "Captain Peleg and Captain Bildad owned the Pequod in 1851.",
        "Captain Peleg and Captain Bildad were Quakers.",
    ]
    .into_iter()
    .map(|text| Block::new(BlockKind::Paragraph, text.into()))
    .collect()
}

/// The offline engine, except that the review rewrites block 0, which quotes block 1.
struct RewritesTheQuote;

#[async_trait]
impl ChatModel for RewritesTheQuote {
    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
        let mut response = OfflineEngine.complete(request.clone()).await?;
        if request.user.starts_with("TASK: review") {
            let better = crate::offline::pseudo(&blocks_that_share_text()[0].text, &[])
                .replace(" twìcé.", " twìcé, sí.");
            response.text = format!("[[0]] {better}\nWHY: smoother\n");
        }
        Ok(response)
    }

    fn name(&self) -> &str {
        "rewrites-the-quote"
    }
}

#[tokio::test]
async fn blocks_that_share_text_with_their_neighbours_by_right_pass_every_pass() {
    let blocks = blocks_that_share_text();
    let out = run_on(&OfflineEngine, &blocks, &Ladder::default()).await;
    assert!(out.quality.flagged.is_empty(), "{:?}", out.quality.flagged);
    assert_eq!(out.quality.retries, 0);
    assert!(
        out.quality.kept_previous.is_empty(),
        "{:?}",
        out.quality.kept_previous
    );
    let out = run_on(&RewritesTheQuote, &blocks, &Ladder::default()).await;
    assert!(out.blocks[0].text.ends_with(", sí."), "{:?}", out.blocks[0]);
    assert!(out.quality.kept_previous.is_empty());
}

/// The offline engine, except that every answer carries control characters and a
/// right-to-left override.
struct Controls;

#[async_trait]
impl ChatModel for Controls {
    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
        let mut response = OfflineEngine.complete(request).await?;
        response.text = response
            .text
            .replace("é", "é\u{1}")
            .replace(". ", ".\u{202E} \u{FFFF}");
        Ok(response)
    }

    fn name(&self) -> &str {
        "controls"
    }
}

#[tokio::test]
async fn control_characters_and_bidi_overrides_of_an_answer_never_reach_the_book() {
    let clean = run(&OfflineEngine).await;
    let out = run(&Controls).await;
    assert_eq!(out.blocks, clean.blocks);
    assert!(out.quality.flagged.is_empty(), "{:?}", out.quality.flagged);
}

/// The offline engine, except that the polish rewrites block 2 (still a good translation).
struct PolishesBlockTwo;

#[async_trait]
impl ChatModel for PolishesBlockTwo {
    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
        let mut response = OfflineEngine.complete(request.clone()).await?;
        if request.user.starts_with("TASK: polish") {
            let better = crate::offline::pseudo(&chapter()[2].text, &[]).replace('.', ", sí.");
            response.text = format!("[[2]] {better}\nWHY: smoother\n{}", response.text);
        }
        Ok(response)
    }

    fn name(&self) -> &str {
        "polishes-block-two"
    }
}

#[tokio::test]
async fn each_block_records_the_last_pass_that_changed_it() {
    let out = run(&PolishesBlockTwo).await;
    assert!(out.quality.flagged.is_empty(), "{:?}", out.quality.flagged);
    assert!(out.blocks[2].text.ends_with(", sí."), "{:?}", out.blocks[2]);
    assert_eq!(out.quality.changed.polish, 1, "{:?}", out.quality);
    assert_eq!(
        out.quality.last_pass,
        Some(BTreeMap::from([(2, Pass::Polish)])),
        "the other blocks hold the translate pass's text"
    );
}
