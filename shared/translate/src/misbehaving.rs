//! A stand-in model that misbehaves the way real ones do, for tests and benchmarks: it answers
//! like the model it wraps (the offline engine, usually), except that one answer in `every`
//! comes back spoiled in one of the [`Fault`]s, taken in turn. Built with the `stand-ins`
//! feature (and for this crate's tests); never part of a deployed binary.

use std::sync::atomic::{AtomicU32, Ordering};

use async_trait::async_trait;

use crate::model::{ChatError, ChatModel, ChatRequest, ChatResponse};
use crate::reading::read_answer;

/// One way an answer goes wrong, each seen in the issue trackers of open-source translators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Reasoning in `<think>` tags before the answer.
    Reasoning,
    /// "Sure! Here is the translation:" before the blocks.
    Preamble,
    /// "I hope this helps!" after them.
    SignOff,
    /// The answer inside a Markdown fence.
    Fenced,
    /// The blocks given back as they were sent.
    Echo,
    /// The second block's marker dropped, its text run onto the first block's line.
    MergedOnOneLine,
    /// The second block's marker dropped, its text on a line of its own.
    MergedOnNextLine,
    /// The first block's text three times.
    Tripled,
    /// The first plain block in Chinese.
    OtherScript,
    /// The first long block replaced by another block's text as sent (the source language).
    SourceLanguage,
    /// A refusal instead of the answer.
    Refusal,
    /// A remark after the first block's text.
    Remark,
    /// The answer cut at 60% and reported as stopped at the token limit.
    Truncated,
    /// The first block left out.
    DropsBlock,
    /// The `<i>` marks stripped.
    StripsMarks,
    /// The first block's text given for every block (one paragraph written where several were
    /// asked for: Qwen2.5-Coder-1.5B did so for 6 of 24 paragraphs).
    OneForSeveral,
    /// A year the source does not have added to the first block ("... en 2023.").
    AddsYear,
}

impl Fault {
    pub const ALL: [Fault; 17] = [
        Fault::Reasoning,
        Fault::Preamble,
        Fault::SignOff,
        Fault::Fenced,
        Fault::Echo,
        Fault::MergedOnOneLine,
        Fault::MergedOnNextLine,
        Fault::Tripled,
        Fault::OtherScript,
        Fault::SourceLanguage,
        Fault::Refusal,
        Fault::Remark,
        Fault::Truncated,
        Fault::DropsBlock,
        Fault::StripsMarks,
        Fault::OneForSeveral,
        Fault::AddsYear,
    ];
}

pub struct Misbehaving<M> {
    inner: M,
    faults: Vec<Fault>,
    /// One answer in this many misbehaves (1: every answer).
    every: u32,
    answers: AtomicU32,
    /// Answers spoiled so far.
    pub spoiled: AtomicU32,
}

impl<M: ChatModel> Misbehaving<M> {
    pub fn new(inner: M, faults: &[Fault], every: u32) -> Self {
        Misbehaving {
            inner,
            faults: faults.to_vec(),
            every: every.max(1),
            answers: AtomicU32::new(0),
            spoiled: AtomicU32::new(0),
        }
    }
}

#[async_trait]
impl<M: ChatModel> ChatModel for Misbehaving<M> {
    async fn complete(&self, request: ChatRequest) -> Result<ChatResponse, ChatError> {
        let mut response = self.inner.complete(request.clone()).await?;
        let n = self.answers.fetch_add(1, Ordering::SeqCst);
        if self.faults.is_empty() || !(n + 1).is_multiple_of(self.every) {
            return Ok(response);
        }
        let fault = self.faults[(n / self.every) as usize % self.faults.len()];
        if let Some(spoiled) = spoil(fault, &request, &response.text) {
            self.spoiled.fetch_add(1, Ordering::SeqCst);
            response.truncated = fault == Fault::Truncated;
            response.text = spoiled;
        }
        Ok(response)
    }

    fn name(&self) -> &str {
        self.inner.name()
    }

    /// Judged as a real model is, whatever it wraps: its answers are checked as a provider's.
    fn writes_language(&self) -> bool {
        true
    }

    fn on_operators_server(&self) -> bool {
        self.inner.on_operators_server()
    }
}

/// The answer `text` to `request`, spoiled by `fault`; None when the fault has nothing to
/// work on in this answer (no second block to merge, no marks to strip).
pub fn spoil(fault: Fault, request: &ChatRequest, text: &str) -> Option<String> {
    let lines: Vec<&str> = text.lines().collect();
    let block_lines: Vec<usize> = (0..lines.len())
        .filter(|&i| lines[i].starts_with("[[") || !request.user.starts_with("TASK: "))
        .collect();
    block_lines.first()?;
    match around_the_answer(fault, text) {
        Some(spoiled) => spoiled,
        None => in_the_blocks(fault, request, text, &lines, &block_lines),
    }
}

/// The faults that work on the answer as a whole: Some(the spoiled answer, or None when there
/// is nothing to spoil); None for the faults that work on its blocks.
fn around_the_answer(fault: Fault, text: &str) -> Option<Option<String>> {
    let spoiled = match fault {
        Fault::Reasoning => format!(
            "<think>\nThe user wants a translation. I should keep the markers.\n</think>\n{text}"
        ),
        Fault::Preamble => format!("Sure! Here is the translation:\n\n{text}"),
        Fault::SignOff => {
            format!("{text}\n\nI hope this helps! Let me know if you need anything else.")
        }
        Fault::Fenced => format!("```text\n{text}\n```"),
        Fault::Refusal => "I'm sorry, but I can't help with translating this text.".to_string(),
        Fault::Truncated => {
            let cut = text.len() * 6 / 10;
            let cut = (0..=cut)
                .rev()
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(0);
            text[..cut].to_string()
        }
        Fault::StripsMarks => {
            if !text.contains("<i>") {
                return Some(None);
            }
            text.replace("<i>", "").replace("</i>", "")
        }
        _ => return None,
    };
    Some(Some(spoiled))
}

/// The faults that work on the answer's blocks (`block_lines` of its `lines`).
fn in_the_blocks(
    fault: Fault,
    request: &ChatRequest,
    text: &str,
    lines: &[&str],
    block_lines: &[usize],
) -> Option<String> {
    let first = *block_lines.first()?;
    let replace_line = |at: usize, new: String| -> String {
        let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        out[at] = new;
        out.join("\n")
    };
    let spoiled = match fault {
        Fault::Echo => {
            let sent = read_answer(section(&request.user, "BLOCKS:\n")?, None);
            if sent.blocks.is_empty() {
                return None;
            }
            sent.blocks
                .iter()
                .map(|(id, source)| format!("[[{id}]] {source}\n"))
                .collect()
        }
        Fault::MergedOnOneLine | Fault::MergedOnNextLine => {
            let second = *block_lines.get(1)?;
            let joint = if fault == Fault::MergedOnOneLine {
                " "
            } else {
                "\n"
            };
            let merged = format!("{}{joint}{}", lines[first], body(lines[second]));
            let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            out[first] = merged;
            out.remove(second);
            out.join("\n")
        }
        Fault::Tripled => {
            let text = body(lines[first]);
            replace_line(
                first,
                format!("{}{text} {text} {text}", marker_of(lines[first])),
            )
        }
        Fault::OtherScript => {
            let at = *block_lines.iter().find(|&&i| !lines[i].contains('<'))?;
            let letters = body(lines[at])
                .chars()
                .filter(|c| c.is_alphabetic())
                .count();
            let chinese: String = "这是一段中文文本，不是目标语言。"
                .chars()
                .cycle()
                .take(letters / 2 + 8)
                .collect();
            replace_line(at, format!("{}{chinese}", marker_of(lines[at])))
        }
        Fault::SourceLanguage => {
            let sent = read_answer(section(&request.user, "BLOCKS:\n")?, None);
            let sources: Vec<&String> = sent.blocks.values().collect();
            let long = block_lines
                .iter()
                .position(|&i| body(lines[i]).len() > 80)?;
            let other = sources
                .get(long + 1)
                .or_else(|| sources.get(long.checked_sub(1)?))?;
            let at = block_lines[long];
            replace_line(at, format!("{}{other}", marker_of(lines[at])))
        }
        Fault::Remark => replace_line(
            first,
            format!(
                "{} (Note: I kept the names as in the original.)",
                lines[first]
            ),
        ),
        Fault::DropsBlock => {
            let mut out: Vec<&str> = lines.to_vec();
            out.remove(first);
            out.join("\n")
        }
        Fault::OneForSeveral => {
            if block_lines.len() < 2 {
                return None;
            }
            let first_text = body(lines[first]);
            let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            for &at in &block_lines[1..] {
                out[at] = format!("{}{first_text}", marker_of(lines[at]));
            }
            out.join("\n")
        }
        Fault::AddsYear => replace_line(first, format!("{} 2023.", lines[first].trim_end())),
        _ => text.to_string(),
    };
    Some(spoiled)
}

/// A block line's text without its marker.
fn body(line: &str) -> String {
    match line.split_once("]] ") {
        Some((_, rest)) if line.starts_with("[[") => rest.to_string(),
        _ => line.to_string(),
    }
}

/// A block line's marker with the space after it; nothing for a line without one.
fn marker_of(line: &str) -> String {
    match line.split_once("]] ") {
        Some((marker, _)) if line.starts_with("[[") => format!("{marker}]] "),
        _ => String::new(),
    }
}

fn section<'a>(user: &'a str, header: &str) -> Option<&'a str> {
    user.split_once(header).map(|(_, rest)| rest)
}
