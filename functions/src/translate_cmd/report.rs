//! What a run did, for people (printed) and scripts (`--report`): tokens and cost per pass,
//! the glossary followed, and what became of the blocks (language, flags, repairs, changes).

use std::collections::BTreeMap;
use std::path::Path;

use booktr_formats::manuscript::Chapter;
use booktr_translate::checks::{language_of, Problem};
use booktr_translate::estimate::cost;
use booktr_translate::glossary::{self, contains_term, GlossaryEntry};
use booktr_translate::ladder::Repaired;
use booktr_translate::pipeline::{Changed, PassUsage, Quality, SecondOpinion};
use booktr_translate::protocol::Pass;
use booktr_translate::reading::Removed;
use booktr_translate::terms::TermList;

/// The run's result, for the chapters it was asked to translate, in reading order.
pub struct Translated {
    /// The chapters as extracted.
    pub sources: Vec<Chapter>,
    /// Each chapter translated, or its source where the run did not translate it (stopped at
    /// its cost cap).
    pub chapters: Vec<Chapter>,
    /// The quality record of each translated chapter, by its place in `sources`.
    pub qualities: Vec<(usize, Quality)>,
    /// The book's term list, and what finding it cost.
    pub terms: TermList,
}

impl Translated {
    fn word_count(&self) -> u64 {
        self.sources.iter().map(Chapter::word_count).sum()
    }
}

/// `Wrote FILE`, the chapters and words, tokens per pass, the estimated cost and how well
/// the glossary was followed.
pub fn print_summary(
    model: &str,
    offline: bool,
    glossary: &[GlossaryEntry],
    done: &Translated,
    out: &Path,
) {
    let qualities: Vec<&Quality> = done.qualities.iter().map(|(_, q)| q).collect();
    let sum = |f: fn(&Quality) -> PassUsage| qualities.iter().map(|q| f(q)).sum();
    let passes = [
        ("translate", sum(|q| q.translate)),
        ("review", sum(|q| q.review)),
        ("polish", sum(|q| q.polish)),
    ];
    let passes = [("terms", done.terms.usage)].into_iter().chain(passes);
    let passes: Vec<(&str, PassUsage)> = passes.collect();
    let total: PassUsage = passes.iter().map(|(_, p)| *p).sum();
    let (input, output) = (total.input_tokens, total.output_tokens);
    // The quality records count the book's terms with the glossary (every pass enforces
    // both); the user's glossary is counted on its own here.
    let (checked, satisfied) = glossary_uses(glossary, done);
    let listed: u32 = qualities.iter().map(|q| q.glossary_checked).sum();
    let followed: u32 = qualities.iter().map(|q| q.glossary_satisfied).sum();
    println!("Wrote {}", out.display());
    println!(
        "{} chapters, {} words, model {}",
        done.sources.len(),
        done.word_count(),
        if offline {
            "offline pseudo-translation"
        } else {
            model
        }
    );
    println!(
        "{} names and terms listed for the whole book",
        done.terms.terms.len()
    );
    for (name, usage) in passes {
        println!(
            "  {name:<9} {:>5} requests  {:>9} tokens in  {:>9} tokens out",
            usage.requests, usage.input_tokens, usage.output_tokens
        );
    }
    let price = if offline {
        0.0
    } else {
        cost(model, input, output)
    };
    println!("Estimated cost: ${price:.4} ({input} tokens in, {output} out)");
    if checked > 0 {
        println!(
            "Glossary: {satisfied} of {checked} uses follow the glossary ({:.1}%)",
            f64::from(satisfied) * 100.0 / f64::from(checked)
        );
    }
    if listed > 0 {
        println!(
            "Glossary and book terms: {followed} of {listed} uses follow the list ({:.1}%)",
            f64::from(followed) * 100.0 / f64::from(listed)
        );
    }
}

/// What the run's fallback model did and cost, when a chapter sent it anything (its tokens
/// are not in the passes above, and it is priced at its own list price, by what answered: the
/// offline engine costs nothing).
pub fn print_fallback(done: &Translated) {
    let Some(fallback) = FallbackReport::of(done) else {
        return;
    };
    let usage = fallback.usage;
    println!(
        "  fallback  {:>5} requests  {:>9} tokens in  {:>9} tokens out (${:.4} at {}'s list price)",
        usage.requests,
        usage.input_tokens,
        usage.output_tokens,
        cost(&fallback.model, usage.input_tokens, usage.output_tokens),
        fallback.model
    );
}

/// What the run's fallback model did over the chapters.
#[derive(Debug, Clone, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FallbackReport {
    model: String,
    /// Blocks sent to it, and those whose text is now its.
    sent: u32,
    taken: u32,
    usage: PassUsage,
}

impl FallbackReport {
    /// The chapters' fallback records summed; None when none sent it anything.
    fn of(done: &Translated) -> Option<FallbackReport> {
        let mut sum: Option<FallbackReport> = None;
        for fallback in done
            .qualities
            .iter()
            .filter_map(|(_, q)| q.fallback.as_ref())
        {
            let report = sum.get_or_insert_with(FallbackReport::default);
            report.model = fallback.model.clone();
            report.sent += fallback.sent;
            report.taken += fallback.taken;
            report.usage += fallback.usage;
        }
        sum
    }

    /// The report's line: "Sent to the fallback model (X): N blocks, M taken".
    fn line(&self) -> String {
        format!(
            "Sent to the fallback model ({}): {} blocks, {} taken",
            self.model, self.sent, self.taken
        )
    }
}

/// Uses of the glossary's terms in the source blocks, and how many of the translated blocks
/// carry the glossary's translation.
fn glossary_uses(glossary: &[GlossaryEntry], done: &Translated) -> (u32, u32) {
    let (mut checked, mut satisfied) = (0, 0);
    let blocks = done
        .sources
        .iter()
        .zip(&done.chapters)
        .flat_map(|(s, t)| s.blocks.iter().zip(&t.blocks));
    let sources = glossary::sources(glossary);
    for (source, target) in blocks {
        let (source, target) = (source.plain_text(), target.plain_text());
        for entry in sources.keep_present(glossary, &source) {
            checked += 1;
            satisfied += u32::from(contains_term(&target, &entry.target));
        }
    }
    (checked, satisfied)
}

/// What a run did to the book's blocks, for people (printed) and scripts (`--report`).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    chapters: usize,
    blocks: usize,
    /// Whether the offline engine translated. Its pseudo-translation keeps the source
    /// language's words (vowels accented), so language identification does not apply: the
    /// five counts below are null.
    offline: bool,
    /// Blocks long enough for language identification to judge, and how it judged their text.
    judged: Option<usize>,
    in_target: Option<usize>,
    in_source: Option<usize>,
    in_other: Option<usize>,
    /// Blocks in the source language that no flag reports (must be 0).
    silently_in_source: Option<usize>,
    /// Flagged blocks, and per kind (a block may be flagged for two reasons).
    flagged_blocks: usize,
    flagged: BTreeMap<Problem, usize>,
    repaired: Repaired,
    removed: Removed,
    /// Blocks whose review or polish answer was refused (they kept the previous pass's text).
    kept_previous: usize,
    /// Blocks the review and the polish changed.
    changed: Changed,
    /// Blocks sent to the review and to the polish (the small profile sends only those that
    /// need a look), and the chapters where a pass was not asked, its answers being echoes.
    sent: Changed,
    echo_stopped: BTreeMap<&'static str, usize>,
    /// Blocks the first pass translated twice (the small profile), and those whose second
    /// translation was kept as the more complete.
    second_opinion: SecondOpinion,
    /// The model profiles the chapters ran with (one, unless the run was resumed otherwise).
    profiles: Vec<String>,
    /// What the fallback model did (blocks sent, taken, its tokens); null without one or when
    /// no chapter sent it anything.
    fallback: Option<FallbackReport>,
    /// Blocks by confidence: under 50, 50 to 79, 80 and over.
    confidence: [usize; 3],
    /// Every block's confidence in reading order (null for a block with nothing to
    /// translate), for scoring it against a human translation (scripts/quality_bench.py).
    block_confidence: Vec<Option<u8>>,
    requests: u32,
    /// Tokens and requests of each pass, and of the term list.
    usage: BTreeMap<&'static str, PassUsage>,
    seconds: f64,
}

impl Report {
    /// `offline`: the offline engine translated (language identification is then left out).
    pub fn of(
        done: &Translated,
        source_lang: &str,
        target: &str,
        took: std::time::Duration,
        offline: bool,
    ) -> Report {
        let primary = |l: &str| l.split(['-', '_']).next().unwrap_or(l).to_ascii_lowercase();
        let (source_lang, target) = (primary(source_lang), primary(target));
        let mut report = Report {
            chapters: done.qualities.len(),
            blocks: 0,
            offline,
            judged: None,
            in_target: None,
            in_source: None,
            in_other: None,
            silently_in_source: None,
            flagged_blocks: 0,
            flagged: BTreeMap::new(),
            repaired: Repaired::default(),
            removed: Removed::default(),
            kept_previous: 0,
            changed: Changed::default(),
            sent: Changed::default(),
            echo_stopped: BTreeMap::new(),
            second_opinion: SecondOpinion::default(),
            profiles: Vec::new(),
            fallback: FallbackReport::of(done),
            confidence: [0; 3],
            block_confidence: Vec::new(),
            requests: done.terms.usage.requests,
            usage: BTreeMap::from([("terms", done.terms.usage)]),
            seconds: took.as_secs_f64(),
        };
        let (mut judged, mut in_target, mut in_source, mut in_other) = (0, 0, 0, 0);
        let mut silently_in_source = 0;
        for (place, quality) in &done.qualities {
            let (original, translated) = (&done.sources[*place], &done.chapters[*place]);
            let flagged = quality.flagged_blocks();
            report.add(quality);
            for (i, (block, source_block)) in
                translated.blocks.iter().zip(&original.blocks).enumerate()
            {
                report
                    .block_confidence
                    .push(quality.confidence.get(&i).copied());
                if source_block.text.trim().is_empty() {
                    continue;
                }
                report.blocks += 1;
                if offline {
                    continue;
                }
                let Some(lang) = language_of(&block.plain_text()) else {
                    continue;
                };
                judged += 1;
                if lang == target {
                    in_target += 1;
                } else if lang == source_lang {
                    in_source += 1;
                    silently_in_source += usize::from(!flagged.contains(&i));
                } else {
                    in_other += 1;
                }
            }
        }
        if !offline {
            report.judged = Some(judged);
            report.in_target = Some(in_target);
            report.in_source = Some(in_source);
            report.in_other = Some(in_other);
            report.silently_in_source = Some(silently_in_source);
        }
        report
    }

    /// One chapter's quality record counted in.
    fn add(&mut self, quality: &Quality) {
        self.flagged_blocks += quality.flagged_blocks().len();
        for (kind, n) in quality.flag_counts() {
            *self.flagged.entry(kind).or_default() += n;
        }
        self.repaired += quality.repaired;
        self.removed += quality.removed;
        self.kept_previous += quality.kept_previous.len();
        self.changed += quality.changed;
        self.sent += quality.sent;
        self.second_opinion += quality.second_opinion;
        for pass in &quality.echo_stopped {
            *self.echo_stopped.entry(pass.task()).or_default() += 1;
        }
        if let Some(profile) = &quality.profile {
            if !self.profiles.contains(profile) {
                self.profiles.push(profile.clone());
            }
        }
        for confidence in quality.confidence.values() {
            self.confidence[match confidence {
                0..50 => 0,
                50..80 => 1,
                _ => 2,
            }] += 1;
        }
        for pass in Pass::ALL {
            *self.usage.entry(pass.task()).or_default() += quality.usage(pass);
        }
        self.requests +=
            quality.translate.requests + quality.review.requests + quality.polish.requests;
    }

    pub fn print(&self, target: &str) {
        let percent = |n: usize, of: usize| {
            if of == 0 {
                100.0
            } else {
                n as f64 * 100.0 / of as f64
            }
        };
        match (self.in_target, self.judged, self.in_source, self.in_other) {
            (Some(in_target), Some(judged), Some(in_source), Some(in_other)) => println!(
                "Language identification: {in_target} of {judged} blocks long enough to judge are in {target} ({:.1}%), {in_source} in the source language, {in_other} in another",
                percent(in_target, judged),
            ),
            _ => println!("Language identification: not applicable (offline pseudo-translation)"),
        }
        if self.flagged.is_empty() {
            println!("Flagged blocks: none");
        } else {
            let kinds: Vec<String> = self
                .flagged
                .iter()
                .map(|(kind, n)| format!("{n} {}", kind.describe()))
                .collect();
            println!(
                "Flagged blocks: {} of {} ({}); each keeps its source text",
                self.flagged_blocks,
                self.blocks,
                kinds.join(", ")
            );
        }
        let r = self.repaired;
        println!(
            "Repaired when asked again: {} blocks (in halves {}, one at a time {}, with the simplest prompt {})",
            r.total(),
            r.halves,
            r.singles,
            r.simple
        );
        let m = self.removed;
        println!(
            "Removed from answers: {} (reasoning {}, fences {}, before the blocks {}, between {}, after {}, repeated {}, not asked for {})",
            m.total(),
            m.reasoning,
            m.fences,
            m.before,
            m.between,
            m.after,
            m.duplicates,
            m.extra
        );
        println!("Model profile: {}", self.profiles.join(", "));
        if self.second_opinion.asked > 0 {
            println!(
                "Translated twice: {} blocks; the second translation kept as the more complete for {}",
                self.second_opinion.asked, self.second_opinion.taken
            );
        }
        println!(
            "Changed by the review: {} of {} blocks sent; by the polish: {} of {}",
            self.changed.review, self.sent.review, self.changed.polish, self.sent.polish
        );
        if let Some(fallback) = &self.fallback {
            println!("{}", fallback.line());
        }
        for (pass, chapters) in &self.echo_stopped {
            println!(
                "Not asked for the {pass} in {chapters} chapters: the model answered it with echoes (every block back as it was)"
            );
        }
        let [low, middle, high] = self.confidence;
        println!("Confidence: {low} blocks under 50, {middle} from 50 to 79, {high} of 80 or more");
        if self.kept_previous > 0 {
            println!(
                "Review or polish changes not kept for {} blocks (they failed a check; the previous pass's text was kept)",
                self.kept_previous
            );
        }
        for (pass, usage) in &self.usage {
            println!(
                "Tokens, {pass}: {} in, {} out, {} requests",
                usage.input_tokens, usage.output_tokens, usage.requests
            );
        }
        println!("Requests: {}", self.requests);
    }
}
