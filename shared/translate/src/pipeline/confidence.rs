//! How far each segment's text can be trusted, and which segments are unlike the rest of
//! their chapter.

use std::collections::{BTreeMap, BTreeSet};

use booktr_formats::markup;

use crate::adequacy::{self};
use crate::checks::{Checks, Problem};
use crate::ladder::Rung;

use super::checkpoint::*;
use super::input::*;
use super::segments::*;

/// How far each segment's text can be trusted, 0 to 100, from what the run already knows of
/// it: nothing for one the first pass could not translate or that still reads as its source;
/// less for one repaired on the way (the lower the rung, the less), missing a glossary or book
/// term, whose later pass's answer failed a check, unlike the rest of the chapter (another
/// block's text, a length out of the chapter's proportion), in another language, or shorter
/// than the chapter's ratio says (something left out); and, where the second opinion asked for
/// two translations, the less they agree (`Agreement::Counted`).
/// Documented figures, not a model: `scripts/quality-bench.sh` reports how they rank against
/// a human translation.
pub(super) fn confidence(
    input: &ChapterInput<'_>,
    segments: &[Segment],
    state: &Checkpoint,
    checks: &Checks,
    agreement: Agreement,
) -> BTreeMap<usize, u8> {
    let all: BTreeSet<usize> = (0..segments.len()).collect();
    let unlike = suspects(segments, &state.texts, &all);
    let failed: BTreeSet<usize> = state.failures.iter().map(|f| f.0).collect();
    let sizes: Vec<(usize, usize)> = all
        .iter()
        .map(|&id| {
            (
                plain_letters(&segments[id].source),
                plain_letters(&state.texts[id]),
            )
        })
        .collect();
    let ratio = adequacy::learned_ratio(sizes.iter().copied());
    all.into_iter()
        .map(|id| {
            let (source, text) = (&segments[id].source, &state.texts[id]);
            let untranslated = !may_stay(input, &segments[id]) && checks.untranslated(source, text);
            let mut score: i32 = 100;
            if failed.contains(&id) || untranslated {
                score = 0;
            }
            score -= match state.repaired_on.get(&id) {
                Some(Rung::Halves) => 10,
                Some(Rung::Singles) => 20,
                Some(Rung::Simple) => 35,
                Some(Rung::Chunk) | None => 0,
            };
            if state.violations.iter().any(|(at, _, _)| *at == id) {
                score -= 20;
            }
            if state.kept.iter().any(|(_, at, _)| *at == id) {
                score -= 10;
            }
            score -= match unlike.get(&id) {
                Some(Problem::Duplicate) => 40,
                Some(_) => 25,
                None => 0,
            };
            if state.judged_language && checks.in_wrong_language(source, text) {
                score -= 40;
            }
            // Shorter than the chapter's ratio by more than a translation's usual spread:
            // something is likely left out, the more so the shorter.
            let (source_letters, text_letters) = sizes[id];
            let short = ratio.map_or(0.0, |r| {
                adequacy::shortfall(r, source_letters, text_letters)
            });
            if short > SHORT_SPREAD {
                score -= (short * 80.0).min(50.0) as i32;
            }
            if agreement == Agreement::Counted {
                score -= state.agreement.get(&id).map_or(0, |a| penalty(*a));
            }
            (id, score.clamp(0, 100) as u8)
        })
        .collect()
}

/// Whether a block's confidence counts how far its two translations agreed: the final
/// confidence does; the later passes' choice of blocks does not, since a small model's review
/// of a block it translated two ways changes little (the second opinion already kept the more
/// complete), and they look where the run saw a fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Agreement {
    Counted,
    Left,
}

/// How much shorter than its chapter's ratio a block's text may be before its confidence drops:
/// translations of one chapter spread about a fifth either way.
pub(super) const SHORT_SPREAD: f64 = 0.2;

/// The letters of a block's translatable text.
pub(super) fn plain_letters(text: &str) -> usize {
    markup::translatable_text(text)
        .chars()
        .filter(|c| c.is_alphabetic())
        .count()
}

/// Among the segments `ids`, those whose text is unlike the rest of the chapter: the same
/// translation as another segment whose source differs, or a length out of proportion with the
/// ratio the chapter's own blocks show.
pub(super) fn suspects(
    segments: &[Segment],
    texts: &[String],
    ids: &BTreeSet<usize>,
) -> BTreeMap<usize, Problem> {
    let plain: Vec<(usize, String, String)> = ids
        .iter()
        .map(|&id| {
            (
                id,
                markup::translatable_text(&segments[id].source),
                markup::translatable_text(&texts[id]),
            )
        })
        .collect();
    let mut suspects: BTreeMap<usize, Problem> = adequacy::same_translations(&plain)
        .into_iter()
        .map(|id| (id, Problem::Duplicate))
        .collect();
    let letters = |text: &str| text.chars().filter(|c| c.is_alphabetic()).count();
    let sizes: Vec<(usize, usize, usize)> = plain
        .iter()
        .filter(|(id, _, _)| !suspects.contains_key(id))
        .map(|(id, source, text)| (*id, letters(source), letters(text)))
        .collect();
    if let Some(ratio) = adequacy::learned_ratio(sizes.iter().map(|(_, s, t)| (*s, *t))) {
        for (id, source, text) in sizes {
            if !adequacy::in_proportion(ratio, source, text) {
                suspects.insert(id, Problem::Length);
            }
        }
    }
    suspects
}

/// Agreement at or above which two translations count as agreeing: on the bench, the two
/// translations of the blocks that scored best against the human translation agreed at 70 to
/// 82.
const AGREED: f64 = 75.0;

/// Confidence lost per point of agreement under [`AGREED`], and at most: two translations
/// agreeing at 45 (the bench's worst blocks) leave a confidence of 55, under the review's 70.
const PER_POINT: f64 = 1.5;
const MOST: f64 = 60.0;

/// The confidence a block loses for its two translations agreeing at `agreement` (0 to 100).
pub(super) fn penalty(agreement: u8) -> i32 {
    ((AGREED - f64::from(agreement)).max(0.0) * PER_POINT).min(MOST) as i32
}
