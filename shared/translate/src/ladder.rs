//! The repair ladder: blocks whose answer failed a check are asked for again, and only they, in
//! ever smaller requests: the failed blocks of a chunk together, then in halves, then one block
//! per request, and last one block per request with the simplest prompt there is (the text in,
//! its translation out), which even small local models follow.
//!
//! A model that keeps failing a rung should not be asked on it for every chunk of the book:
//! [`Ladder`] remembers how each rung has done in this run, and requests start on the lowest
//! rung that has not proved useless. It also forgives: once the rung requests start on has
//! answered [`GROW_AFTER`] blocks in a row cleanly, the rung above is given a new trial, so a
//! model that stumbled on a few hard paragraphs early is asked for whole chunks again.
//!
//! The run's record also holds how the later passes' answers go: a model asked to review or
//! polish that answers every block back as it was (instead of `NO CHANGES`) pays for the
//! whole chapter again and changes nothing; once [`ECHO_TRIAL`] blocks show it, the pass is
//! not asked again in this run ([`Ladder::echoes`]). The ladder is the first pass's: the review and the polish
//! answer with the blocks they change, and a change that fails a check is not asked for again
//! (the block keeps its checked translation).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use serde::{Deserialize, Serialize};

use crate::protocol::Pass;

/// How blocks are asked for, from the cheapest to the surest.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Rung {
    /// Every block of the chunk in one request (the first try).
    Chunk,
    /// The blocks in two requests.
    Halves,
    /// One block per request, in the block protocol.
    Singles,
    /// One block per request, the simplest prompt: no markers, the text alone.
    Simple,
}

impl Rung {
    pub const ALL: [Rung; 4] = [Rung::Chunk, Rung::Halves, Rung::Singles, Rung::Simple];

    fn index(self) -> usize {
        self as usize
    }

    /// The rung for the blocks still failing after this one (None after the last): halves
    /// only of two blocks or more, and one block at a time in the block protocol only for
    /// blocks that were asked with others (`asked_alone` false): asked alone, that request
    /// would be the one that just failed, and a small model that ran on to its token limit
    /// ran on again when asked it twice. Not the run's record: a request's way down is the
    /// same however the other chunks fared, so that a recorded run replays request for request.
    pub fn next(self, blocks: usize, asked_alone: bool) -> Option<Rung> {
        Rung::ALL
            .into_iter()
            .filter(|r| *r > self && *r != Rung::Chunk)
            .filter(|r| !(*r == Rung::Halves && blocks < 2))
            .find(|r| !(*r == Rung::Singles && asked_alone))
    }

    pub fn name(self) -> &'static str {
        match self {
            Rung::Chunk => "chunk",
            Rung::Halves => "halves",
            Rung::Singles => "singles",
            Rung::Simple => "simple",
        }
    }
}

/// Blocks that passed only on a later rung, by the rung that repaired them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Repaired {
    pub halves: u32,
    pub singles: u32,
    pub simple: u32,
}

impl Repaired {
    pub fn add(&mut self, rung: Rung, blocks: u32) {
        match rung {
            // A chunk is only ever the first try.
            Rung::Chunk => {}
            Rung::Halves => self.halves += blocks,
            Rung::Singles => self.singles += blocks,
            Rung::Simple => self.simple += blocks,
        }
    }

    pub fn total(&self) -> u32 {
        self.halves + self.singles + self.simple
    }
}

impl std::ops::AddAssign for Repaired {
    fn add_assign(&mut self, o: Repaired) {
        self.halves += o.halves;
        self.singles += o.singles;
        self.simple += o.simple;
    }
}

/// Blocks asked on a rung before its record can rule it out.
const TRIAL_BLOCKS: u32 = 8;

/// Blocks answered cleanly in a row on the rung requests start on, after which the rung above
/// is tried again.
pub const GROW_AFTER: u32 = 16;

/// Blocks a later pass is asked about before its echoes can stop it.
pub const ECHO_TRIAL: u32 = 12;

/// How each rung has done in one run of one model: blocks asked and blocks that passed every
/// check. Shared by the run's chapters.
#[derive(Debug, Default)]
pub struct Ladder {
    asked: [AtomicU32; 4],
    passed: [AtomicU32; 4],
    /// Blocks that passed in a row on each rung (reset by a request with a failure).
    clean_run: [AtomicU32; 4],
    /// Blocks the review and the polish were asked about, and those answered back unchanged.
    edit_asked: [AtomicU32; 2],
    edit_echoed: [AtomicU32; 2],
}

impl Ladder {
    /// The run's ladder: one per model and run key (a book's id and run number on the
    /// server; the CLI keeps its own). Process-wide, so the chapters of a run share it.
    pub fn for_run(model: &str, run: &str) -> Arc<Ladder> {
        static RUNS: Mutex<Vec<(String, Arc<Ladder>)>> = Mutex::new(Vec::new());
        /// Runs remembered; older ones are forgotten first.
        const KEPT: usize = 256;
        let key = format!("{model}\n{run}");
        let mut runs = RUNS.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, ladder)) = runs.iter().find(|(k, _)| *k == key) {
            return ladder.clone();
        }
        if runs.len() >= KEPT {
            runs.remove(0);
        }
        let ladder = Arc::new(Ladder::default());
        runs.push((key, ladder.clone()));
        ladder
    }

    pub fn record(&self, rung: Rung, asked: u32, passed: u32) {
        self.asked[rung.index()].fetch_add(asked, Ordering::Relaxed);
        self.passed[rung.index()].fetch_add(passed, Ordering::Relaxed);
        let clean_run = &self.clean_run[rung.index()];
        if passed >= asked {
            clean_run.fetch_add(asked, Ordering::Relaxed);
        } else {
            clean_run.store(0, Ordering::Relaxed);
        }
    }

    /// A later pass asked about `asked` blocks answered `echoed` of them back unchanged.
    pub fn record_edit(&self, pass: Pass, asked: u32, echoed: u32) {
        if let Some(at) = edit_index(pass) {
            self.edit_asked[at].fetch_add(asked, Ordering::Relaxed);
            self.edit_echoed[at].fetch_add(echoed, Ordering::Relaxed);
        }
    }

    /// Whether the model's answers to `pass` have been echoes in this run: of at least
    /// [`ECHO_TRIAL`] blocks asked, three in four or more came back as they were sent.
    pub fn echoes(&self, pass: Pass) -> bool {
        edit_index(pass).is_some_and(|at| {
            let asked = self.edit_asked[at].load(Ordering::Relaxed);
            let echoed = self.edit_echoed[at].load(Ordering::Relaxed);
            asked >= ECHO_TRIAL && echoed * 4 >= asked * 3
        })
    }

    /// A rung that has been tried on enough blocks and failed most of them.
    fn useless(&self, rung: Rung) -> bool {
        let asked = self.asked[rung.index()].load(Ordering::Relaxed);
        let passed = self.passed[rung.index()].load(Ordering::Relaxed);
        asked >= TRIAL_BLOCKS && passed * 2 < asked
    }

    /// Where the first pass's chunks start: the first rung the run's record has not ruled out
    /// (the last is never ruled out). Asked once per chapter, before its chunks go out.
    pub fn first(&self) -> Rung {
        let first = Rung::ALL
            .into_iter()
            .find(|r| *r == Rung::Simple || !self.useless(*r))
            .unwrap_or(Rung::Simple);
        let index = first.index();
        if index > 0 && self.clean_run[index].load(Ordering::Relaxed) >= GROW_AFTER {
            // A new trial for the rung above: its record starts again.
            let above = Rung::ALL[index - 1];
            self.asked[above.index()].store(0, Ordering::Relaxed);
            self.passed[above.index()].store(0, Ordering::Relaxed);
            self.clean_run[index].store(0, Ordering::Relaxed);
            tracing::info!(
                from = first.name(),
                to = above.name(),
                "clean answers: requests grow back a rung"
            );
            return above;
        }
        first
    }
}

/// Where a later pass's record is kept; None for the first pass.
fn edit_index(pass: Pass) -> Option<usize> {
    match pass {
        Pass::Translate => None,
        Pass::Review => Some(0),
        Pass::Polish => Some(1),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rung_that_keeps_failing_is_skipped_and_the_last_never_is() {
        let ladder = Ladder::default();
        assert_eq!(ladder.first(), Rung::Chunk);
        ladder.record(Rung::Chunk, 10, 1);
        assert_eq!(ladder.first(), Rung::Halves);
        ladder.record(Rung::Halves, 8, 0);
        ladder.record(Rung::Singles, 8, 3);
        assert_eq!(ladder.first(), Rung::Simple);
        ladder.record(Rung::Simple, 8, 0);
        assert_eq!(ladder.first(), Rung::Simple);
    }

    #[test]
    fn after_enough_clean_answers_the_rung_above_is_tried_again_and_can_be_ruled_out_again() {
        let ladder = Ladder::default();
        ladder.record(Rung::Chunk, 10, 2);
        assert_eq!(ladder.first(), Rung::Halves);
        ladder.record(Rung::Halves, GROW_AFTER - 1, GROW_AFTER - 1);
        assert_eq!(ladder.first(), Rung::Halves, "not yet");
        ladder.record(Rung::Halves, 1, 1);
        assert_eq!(ladder.first(), Rung::Chunk, "grown back");
        // The new trial goes as the first did: the chunk fails again and is ruled out again.
        assert_eq!(ladder.first(), Rung::Chunk);
        ladder.record(Rung::Chunk, TRIAL_BLOCKS, 1);
        assert_eq!(ladder.first(), Rung::Halves);
        // A failure on the way resets the run of clean answers.
        ladder.record(Rung::Halves, GROW_AFTER - 1, GROW_AFTER - 1);
        ladder.record(Rung::Halves, 2, 1);
        ladder.record(Rung::Halves, 2, 2);
        assert_eq!(ladder.first(), Rung::Halves);
    }

    #[test]
    fn a_pass_whose_answers_are_echoes_stops_and_the_other_goes_on() {
        let ladder = Ladder::default();
        ladder.record_edit(Pass::Review, ECHO_TRIAL - 1, ECHO_TRIAL - 1);
        assert!(!ladder.echoes(Pass::Review), "too few to tell");
        ladder.record_edit(Pass::Review, 1, 1);
        assert!(ladder.echoes(Pass::Review));
        // A polish that changes what it answers, or leaves the rest out, goes on.
        ladder.record_edit(Pass::Polish, 20, 4);
        assert!(!ladder.echoes(Pass::Polish));
        assert!(!ladder.echoes(Pass::Translate));
    }

    #[test]
    fn failed_blocks_go_down_in_order_and_no_request_is_asked_twice_on_the_way() {
        assert_eq!(Rung::Chunk.next(5, false), Some(Rung::Halves));
        // One block left of a chunk of several is asked alone; a chunk of one block, already
        // asked alone, goes to the simplest prompt instead of the same request again.
        assert_eq!(Rung::Chunk.next(1, false), Some(Rung::Singles));
        assert_eq!(Rung::Chunk.next(1, true), Some(Rung::Simple));
        assert_eq!(Rung::Halves.next(2, false), Some(Rung::Singles));
        assert_eq!(Rung::Halves.next(1, true), Some(Rung::Simple));
        assert_eq!(Rung::Singles.next(1, true), Some(Rung::Simple));
        assert_eq!(Rung::Simple.next(1, true), None);
        let healthy = Ladder::default();
        healthy.record(Rung::Chunk, 100, 80);
        assert_eq!(healthy.first(), Rung::Chunk);
    }

    #[test]
    fn a_run_keeps_its_ladder_and_another_run_has_its_own() {
        let a = Ladder::for_run("m", "book-1#1");
        a.record(Rung::Chunk, 10, 0);
        assert_eq!(Ladder::for_run("m", "book-1#1").first(), Rung::Halves);
        assert_eq!(Ladder::for_run("m", "book-1#2").first(), Rung::Chunk);
    }
}
