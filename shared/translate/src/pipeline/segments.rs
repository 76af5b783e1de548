//! What goes to the model: a chapter's segments (whole blocks, and parts of blocks larger than
//! a chunk), the requests built of them, and the chapter's blocks put back together from them.

use std::collections::{BTreeMap, BTreeSet};

use booktr_formats::manuscript::{Block, BlockKind};
use booktr_formats::markup;

use crate::checks::{latin_only, Problem};
use crate::glossary::{self, contains_term, matching, TermSet};
use crate::protocol::{build_request, Pass, PromptContext, Unit, Window};
use crate::split::join_parts;

use super::config::*;
use super::input::*;

/// The glossary's uses in the sources of the blocks `translated` (block, final text) and how
/// many of those the text carries with the glossary's target: (checked, satisfied).
pub(crate) fn glossary_counts<'t>(
    input: &ChapterInput<'_>,
    translated: impl Iterator<Item = (usize, &'t str)>,
) -> (u32, u32) {
    let sources = glossary::sources(input.glossary);
    let (mut checked, mut satisfied) = (0, 0);
    for (block, text) in translated {
        let plain = booktr_formats::markup::plain_text(&input.blocks[block].text);
        let plain_translated = booktr_formats::markup::plain_text(text);
        for entry in sources.keep_present(input.glossary, &plain) {
            checked += 1;
            if contains_term(&plain_translated, &entry.target) {
                satisfied += 1;
            }
        }
    }
    (checked, satisfied)
}

/// The blocks of the segments that failed every rung with an answer given, each with the
/// block's text holding those answers (the parts that passed as they are) and what they failed.
pub(super) fn rejected_blocks(
    segments: &[Segment],
    texts: &[String],
    failures: &BTreeSet<(usize, Problem)>,
    rejected: BTreeMap<usize, (String, Problem)>,
) -> BTreeMap<usize, Rejected> {
    let mut with_answers = texts.to_vec();
    let mut problems: BTreeMap<usize, BTreeSet<Problem>> = BTreeMap::new();
    for (id, (answer, problem)) in rejected {
        if id < with_answers.len() && failures.iter().any(|(failed, _)| *failed == id) {
            with_answers[id] = answer;
            problems
                .entry(segments[id].block)
                .or_default()
                .insert(problem);
        }
    }
    if problems.is_empty() {
        return BTreeMap::new();
    }
    let joined = joined(segments, &with_answers);
    problems
        .into_iter()
        .filter_map(|(block, problems)| {
            Some((
                block,
                Rejected {
                    text: joined.get(&block)?.clone(),
                    problems: problems.into_iter().collect(),
                },
            ))
        })
        .collect()
}

/// Each block's text from its segments' (blocks sent in parts joined back), by block.
pub(super) fn joined(segments: &[Segment], texts: &[String]) -> BTreeMap<usize, String> {
    let mut parts: BTreeMap<usize, Vec<(&str, &str)>> = BTreeMap::new();
    for (id, segment) in segments.iter().enumerate() {
        parts
            .entry(segment.block)
            .or_default()
            .push((texts[id].as_str(), segment.separator.as_str()));
    }
    parts
        .into_iter()
        .map(|(block, parts)| (block, join_parts(parts)))
        .collect()
}

/// The blocks with the texts of `translated` (the others as they are).
pub(super) fn with_texts(blocks: &[Block], translated: &BTreeMap<usize, String>) -> Vec<Block> {
    blocks
        .iter()
        .enumerate()
        .map(|(i, block)| Block {
            text: translated
                .get(&i)
                .cloned()
                .unwrap_or_else(|| block.text.clone()),
            ..block.clone()
        })
        .collect()
}

/// Whether a block's text goes to no model: blank, or nothing but code and `translate="no"`
/// text, which the book keeps as the source has it.
pub(super) fn nothing_to_translate(text: &str) -> bool {
    text.trim().is_empty()
        || (markup::has_kept(text) && markup::translatable_text(text).trim().is_empty())
}

/// The segments' sources, hashed, and the texts the memory supplied: a checkpoint applies
/// only to the text it was made of (a chapter without memory hashes its sources alone, as it
/// always has).
pub(super) fn fingerprint(segments: &[Segment], texts: &[String]) -> String {
    use sha2::{Digest, Sha256};
    let mut hash = Sha256::new();
    for (segment, text) in segments.iter().zip(texts) {
        hash.update((segment.source.len() as u64).to_be_bytes());
        hash.update(segment.source.as_bytes());
        if segment.remembered {
            hash.update(b"\0remembered");
            hash.update((text.len() as u64).to_be_bytes());
            hash.update(text.as_bytes());
        }
    }
    hash.finalize()
        .iter()
        .take(16)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A block, or a part of one, as translated.
pub(super) struct Segment {
    pub(super) block: usize,
    pub(super) source: String,
    /// The whitespace between this part and the next in the block.
    pub(super) separator: String,
    /// A whole block the memory supplied: its text is taken as it is, no pass asks for it,
    /// and it stands in the translation so far for its neighbours.
    pub(super) remembered: bool,
}

/// The largest part of a block, in estimated tokens: a chunk less the unit's own overhead
/// (its marker) and room for marks reopened at a cut.
pub(super) fn part_budget(chunk_tokens: u64) -> u64 {
    chunk_tokens.saturating_sub(40).max(64)
}

/// A chapter of more estimated source tokens than this (four chunks of 2,000) has its first
/// pass's chunks sent at once, without the window: one after the other, its wall time would
/// grow with its length (most chapters of novels are one or two chunks of 2,000; Moby-Dick's
/// longest is seven). Counted in tokens, not chunks, so that smaller chunks for a small model
/// (`chunk_tokens`, `chunk_blocks`) keep the window over the same chapters.
pub(super) const MAX_WINDOWED_TOKENS: u64 = 8_000;

/// Whether the first pass over a chapter of `source_tokens` estimated tokens goes chunk after
/// chunk, each with the translation before it in view.
pub fn windowed(config: &PipelineConfig, source_tokens: u64) -> bool {
    config.window == Window::Translation && carries_window(config, source_tokens)
}

/// Whether the first pass's requests over a chapter of `source_tokens` estimated tokens carry
/// the text before their blocks: the source always (it is there from the start), the
/// translation so far only where the chapter may go chunk after chunk.
pub(super) fn carries_window(config: &PipelineConfig, source_tokens: u64) -> bool {
    config.context_tokens > 0
        && (config.window == Window::Source || source_tokens <= MAX_WINDOWED_TOKENS)
}

/// Whether a later pass's estimate counts block `id` as changed: one block in four, the share
/// an editor is assumed to change (the offline engine answers the same share, so that a run
/// without a key spends what the quote says). Measured on a real model: docs/translation.md.
pub fn edited(id: usize) -> bool {
    id.is_multiple_of(4)
}

/// Whether a segment's text may rightly stay as its source: preformatted text (code, tables
/// drawn in characters) is not judged untranslated.
pub(super) fn may_stay(input: &ChapterInput<'_>, segment: &Segment) -> bool {
    matches!(input.blocks[segment.block].kind, BlockKind::Preformatted)
}

/// A close passage the memory holds for a unit of a request: the unit's id, the passage's
/// source and its accepted text.
pub(super) type SimilarLine = (usize, String, String);

/// The close passages the memory holds for the first pass's `units`, for blocks sent whole (a
/// block sent in parts is too long to carry another of its length beside it).
pub(super) fn similar_lines(
    input: &ChapterInput<'_>,
    segments: &[Segment],
    pass: Pass,
    units: &[Unit],
) -> Vec<SimilarLine> {
    if pass != Pass::Translate || input.memory.similar.is_empty() {
        return Vec::new();
    }
    units
        .iter()
        .filter_map(|unit| {
            let block = segments.get(unit.id)?.block;
            let whole = segments.iter().filter(|s| s.block == block).count() == 1;
            let similar = input.memory.similar.get(&block).filter(|_| whole)?;
            Some((unit.id, similar.source.clone(), similar.target.clone()))
        })
        .collect()
}

/// The request for one chunk of a pass: `text` is the units' sources joined, `ids` theirs,
/// `earlier` the text just before them (the first pass's window) and what that text is, and
/// `similar` the close passages translated before (see [`similar_lines`]).
pub(super) fn chunk_request(
    input: &ChapterInput<'_>,
    pass: Pass,
    units: &[Unit],
    text: &str,
    violations: &[(usize, String, String)],
    ids: &BTreeSet<usize>,
    (window, earlier, similar): (Window, &[String], &[SimilarLine]),
) -> crate::model::ChatRequest {
    let ctx = PromptContext {
        source_lang: input.source_lang,
        target_lang: input.target_lang,
        glossary: matching(input.glossary, &booktr_formats::markup::plain_text(text)),
        ledger: if pass == Pass::Review {
            let entries: Vec<(&String, &String)> = input.ledger.iter().collect();
            TermSet::new(entries.iter().map(|(source, _)| source.as_str()))
                .keep_present(&entries, text)
                .into_iter()
                .map(|(source, target)| ((*source).clone(), (*target).clone()))
                .collect()
        } else {
            Vec::new()
        },
        violations: violations
            .iter()
            .filter(|(id, _, _)| ids.contains(id))
            .cloned()
            .collect(),
        earlier: earlier.to_vec(),
        window,
        instruction: input.instruction,
        similar: similar.to_vec(),
    };
    // Twice the source and a margin: a translation is about as long as its source (scripts'
    // densities differ by less than that in tokens), and a small model caught in a loop stops
    // sooner (Qwen2.5-1.5B wrote 5,380 tokens of one repeated sentence for a 1,600-token chunk).
    // One block between two Latin-script languages gets half again and a smaller margin: its
    // translations by Qwen2.5-1.5B came to 1.05 to 1.25 times the source's estimate, and its
    // answers that ran round one sentence (a small model's, one block a request) wrote three.
    let tokens = crate::model::estimate_tokens(text);
    let latin = latin_only(input.source_lang) && latin_only(input.target_lang);
    let max_output = if units.len() == 1 && latin {
        tokens * 3 / 2 + 64
    } else {
        tokens * 2 + 256
    }
    .min(16_000) as u32;
    build_request(pass, &ctx, units, max_output)
}
