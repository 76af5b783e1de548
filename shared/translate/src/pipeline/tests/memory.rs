//! The owner's translation memory in a chapter's passes: the blocks it supplies go to no
//! model, stand in the translation so far for their neighbours, and its close passages go
//! beside their blocks in the first pass.

use std::sync::Mutex;

use super::*;
use crate::memory::{Remembered, Similar};

/// The offline engine, keeping every request it is sent.
#[derive(Default)]
struct Recording {
    requests: Mutex<Vec<ChatRequest>>,
}

#[async_trait]
impl ChatModel for Recording {
    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
        self.requests
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(request.clone());
        OfflineEngine.complete(request).await
    }

    fn name(&self) -> &str {
        "recording"
    }
}

impl Recording {
    fn users(&self) -> Vec<String> {
        let requests = self.requests.lock().unwrap_or_else(|p| p.into_inner());
        requests.iter().map(|r| r.user.clone()).collect()
    }
}

/// One block a chunk, so the first pass goes block after block with the translation so far.
fn block_by_block() -> PipelineConfig {
    PipelineConfig {
        chunk_blocks: 1,
        ..PipelineConfig::default()
    }
}

async fn translate_with(
    model: &dyn ChatModel,
    memory: &Remembered,
    config: &PipelineConfig,
) -> ChapterOutput {
    let (blocks, glossary, ledger) = (chapter(), glossary(), HashMap::new());
    let input = ChapterInput {
        blocks: &blocks,
        source_lang: "en",
        target_lang: "es",
        glossary: &glossary,
        ledger: &ledger,
        ladder: &Ladder::default(),
        instruction: None,
        memory,
    };
    translate_chapter(model, &input, config).await.unwrap()
}

#[tokio::test]
async fn a_chapter_the_memory_supplies_whole_asks_no_model_and_costs_nothing() {
    let memory = Remembered {
        exact: [
            (0, "Capítulo 1. Espejismos.".to_string()),
            (
                1,
                "Llámame <i>Ismael</i>. La ballena es blanca y vieja.".to_string(),
            ),
            (
                2,
                "Hace unos años, no importa cuántos, me fui al mar.".to_string(),
            ),
        ]
        .into(),
        ..Remembered::default()
    };
    let model = Recording::default();
    let output = translate_with(&model, &memory, &PipelineConfig::default()).await;
    assert!(model.users().is_empty(), "asked: {:?}", model.users());
    let texts: Vec<&str> = output.blocks.iter().map(|b| b.text.as_str()).collect();
    assert_eq!(
        texts[1],
        "Llámame <i>Ismael</i>. La ballena es blanca y vieja."
    );
    assert_eq!(output.quality.remembered, [0, 1, 2]);
    for pass in [Pass::Translate, Pass::Review, Pass::Polish] {
        assert_eq!(output.quality.usage(pass), PassUsage::default());
    }
    assert!(output.quality.flagged.is_empty());
    assert!(output.quality.confidence.is_empty());
}

#[tokio::test]
async fn a_remembered_block_is_in_its_neighbours_window_and_no_pass_asks_for_it() {
    let remembered = "Llámame <i>Ismael</i>. La ballena es blanca y vieja.";
    let memory = Remembered {
        exact: [(1, remembered.to_string())].into(),
        ..Remembered::default()
    };
    let model = Recording::default();
    let output = translate_with(&model, &memory, &block_by_block()).await;
    assert_eq!(output.blocks[1].text, remembered);
    assert_eq!(output.quality.remembered, [1]);
    let users = model.users();
    assert!(
        users.iter().all(|u| !u.contains("Call me")),
        "a pass asked for the remembered block: {users:?}"
    );
    let next = users
        .iter()
        .find(|u| u.starts_with("TASK: translate") && u.contains("Some years ago"))
        .expect("the block after it was translated");
    assert!(next.contains("EARLIER:\n"), "{next}");
    assert!(
        next.contains(&format!("\n{remembered}\nBLOCKS:\n[[2]] Some years ago")),
        "{next}"
    );
    // The review and the polish saw the two other blocks.
    assert!(users.iter().any(|u| u.starts_with("TASK: review")));
}

#[tokio::test]
async fn a_close_passage_goes_beside_its_block_in_the_first_pass_only() {
    let memory = Remembered {
        similar: [(
            2,
            Similar {
                source: "Some years ago, never mind how long, I went to sea.".into(),
                target: "Hace unos años, no importa cuántos, me fui al mar.".into(),
            },
        )]
        .into(),
        ..Remembered::default()
    };
    let model = Recording::default();
    translate_with(&model, &memory, &block_by_block()).await;
    let users = model.users();
    let with_line: Vec<&String> = users.iter().filter(|u| u.contains("SIMILAR:")).collect();
    assert_eq!(with_line.len(), 1, "{users:?}");
    assert!(with_line[0].starts_with("TASK: translate"));
    assert!(with_line[0].contains("[[2]] a similar passage was translated before:"));
    assert!(with_line[0].contains("BLOCKS:\n[[2]] Some years ago"));
}

#[tokio::test]
async fn a_checkpoint_made_without_the_memory_is_not_taken_with_it() {
    let (blocks, glossary, ledger) = (chapter(), glossary(), HashMap::new());
    let (config, ladder) = (PipelineConfig::default(), Ladder::default());
    let input = |memory| ChapterInput {
        blocks: &blocks,
        source_lang: "en",
        target_lang: "es",
        glossary: &glossary,
        ledger: &ledger,
        ladder: &ladder,
        instruction: None,
        memory,
    };
    let plain = input(&crate::memory::NOTHING);
    let mut first = ChapterTranslation::new(&plain, &config, None);
    first.run_pass(&OfflineEngine).await.unwrap();
    let checkpoint = first.checkpoint().clone();
    let memory = Remembered {
        exact: [(1, "Llámame Ismael.".to_string())].into(),
        ..Remembered::default()
    };
    let remembering = input(&memory);
    let again = ChapterTranslation::new(&remembering, &config, Some(checkpoint.clone()));
    assert_eq!(again.checkpoint().passes_done, 0);
    let same = ChapterTranslation::new(&plain, &config, Some(checkpoint));
    assert_eq!(same.checkpoint().passes_done, 1);
}
