//! The item of a re-translation's proposal (`BOOK#<id>` / `PROPOSAL#<proposal id>`, see
//! `crate::books::store`), and the one place its attributes are named:
//!
//! | attribute | holds |
//! |---|---|
//! | `id`, `lang`, `chapter`, `index` | the proposal, the translation's language, the chapter, and the passage (absent for the whole chapter) |
//! | `instruction`, `model`, `includeEdited` | what the owner asked for |
//! | `by`, `createdAt`, `finishedAt` | who asked, when, and when its job ended |
//! | `status`, `error` | `pending`, `ready`, `failed` (with why) or `discarded` |
//! | `words`, `period` | the words charged to the owner's quota, and the month charged |
//! | `refunds` | how many times its words were given back: 1 at most (absent: 0) |
//! | `passages`, `leftAlone` | how many passages it translates; the owner's passages it leaves alone |
//! | `engine`, `usage`, `costMicros` | what answered, the tokens its passes used, their cost |
//! | `accepted` | the passages the owner accepted |
//!
//! The passages' texts (a chapter's can outgrow an item's 400 KB) are in the proposal's blob
//! (`crate::books::store::proposal_key`), which [`ProposalTexts`] maps.

use booktr_translate::checks::Problem;
use booktr_translate::pipeline::PassUsage;
use booktr_translate::protocol::Pass;
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::books::store::{book_pk, proposal_sk};
use crate::items::{self, CorruptItem, Fields};
use crate::ports::{Condition, Item, Update};

/// Where a proposal stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProposalStatus {
    /// Its job has not finished.
    Pending,
    /// Its texts are there to accept.
    Ready,
    /// Its job could not translate it (`error` says why); its words were given back.
    Failed,
    /// The owner discarded it.
    Discarded,
}

impl ProposalStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            ProposalStatus::Pending => "pending",
            ProposalStatus::Ready => "ready",
            ProposalStatus::Failed => "failed",
            ProposalStatus::Discarded => "discarded",
        }
    }
}

impl std::str::FromStr for ProposalStatus {
    type Err = ();

    fn from_str(s: &str) -> Result<Self, ()> {
        match s {
            "pending" => Ok(ProposalStatus::Pending),
            "ready" => Ok(ProposalStatus::Ready),
            "failed" => Ok(ProposalStatus::Failed),
            "discarded" => Ok(ProposalStatus::Discarded),
            _ => Err(()),
        }
    }
}

/// Everything a proposal item holds.
#[derive(Debug, Clone, PartialEq)]
pub struct ProposalRecord {
    pub id: String,
    pub book_id: String,
    pub lang: String,
    pub chapter: u32,
    /// The passage, or None for the chapter.
    pub index: Option<u32>,
    pub instruction: Option<String>,
    pub model: String,
    pub include_edited: bool,
    pub by: String,
    pub created_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
    pub status: ProposalStatus,
    pub error: Option<String>,
    pub words: u64,
    pub period: String,
    pub passages: u32,
    pub left_alone: Vec<u32>,
    pub engine: Option<String>,
    pub usage: PassUsage,
    pub cost_micros: i64,
    pub accepted: Vec<u32>,
}

/// How a proposal's job ended.
pub struct Finish<'a> {
    pub status: ProposalStatus,
    pub error: Option<&'a str>,
    pub at: DateTime<Utc>,
    pub engine: Option<&'a str>,
    pub usage: PassUsage,
    pub cost_micros: i64,
    /// The passages it holds now.
    pub passages: u32,
}

impl ProposalRecord {
    /// The new proposal's item, written only if there is none by its id.
    pub fn to_new_item(&self) -> (Item, Condition) {
        let item = Item::new(book_pk(&self.book_id), proposal_sk(&self.id))
            .with("id", self.id.as_str())
            .with("bookId", self.book_id.as_str())
            .with("lang", self.lang.as_str())
            .with("chapter", self.chapter)
            .with("index", json(&self.index))
            .with("instruction", json(&self.instruction))
            .with("model", self.model.as_str())
            .with("includeEdited", self.include_edited)
            .with("by", self.by.as_str())
            .with("createdAt", items::time(self.created_at))
            .with("status", self.status.as_str())
            .with("words", self.words)
            .with("period", self.period.as_str())
            .with("passages", self.passages)
            .with("leftAlone", json(&self.left_alone))
            .with("usage", json(&self.usage))
            .with("costMicros", self.cost_micros)
            .with("accepted", json(&self.accepted));
        (item, Condition::NotExists)
    }

    pub fn from_item(item: &Item) -> Result<ProposalRecord, CorruptItem> {
        let f = Fields::of(item);
        let list = |name: &str| -> Result<Vec<u32>, CorruptItem> {
            match f.json(name) {
                None => Ok(Vec::new()),
                Some(v) => serde_json::from_value(v.clone()).map_err(|_| f.corrupt(name)),
            }
        };
        let usage = match f.json("usage") {
            None => PassUsage::default(),
            Some(v) => serde_json::from_value(v.clone()).map_err(|_| f.corrupt("usage"))?,
        };
        Ok(ProposalRecord {
            id: f.string("id")?,
            book_id: f.string("bookId")?,
            lang: f.string("lang")?,
            chapter: f.int("chapter")?,
            index: f.opt_int("index")?,
            instruction: f.opt_string("instruction")?,
            model: f.string("model")?,
            include_edited: f.opt_bool("includeEdited")?.unwrap_or(false),
            by: f.string("by")?,
            created_at: f.time("createdAt")?,
            finished_at: f.opt_time("finishedAt")?,
            status: f.parsed("status")?,
            error: f.opt_string("error")?,
            words: f.int("words")?,
            period: f.string("period")?,
            passages: f.int("passages")?,
            left_alone: list("leftAlone")?,
            engine: f.opt_string("engine")?,
            usage,
            cost_micros: f.opt_int("costMicros")?.unwrap_or(0),
            accepted: list("accepted")?,
        })
    }

    /// The end of its job, written only while it is pending (a proposal discarded meanwhile
    /// stays discarded).
    pub fn finished(finish: &Finish<'_>) -> (Update, Condition) {
        let update = Update::default()
            .set("status", finish.status.as_str())
            .set("error", json(&finish.error))
            .set("finishedAt", items::time(finish.at))
            .set("engine", json(&finish.engine))
            .set("usage", json(&finish.usage))
            .set("costMicros", finish.cost_micros)
            .set("passages", finish.passages);
        (update, pending())
    }

    /// Discarded by the owner, unless it already is.
    pub fn discarded() -> (Update, Condition) {
        let update = Update::default().set("status", ProposalStatus::Discarded.as_str());
        let open = [
            ProposalStatus::Pending,
            ProposalStatus::Ready,
            ProposalStatus::Failed,
        ]
        .map(|s| Value::from(s.as_str()))
        .to_vec();
        (update, Condition::In("status".into(), open))
    }

    /// Its words marked as given back, unless they already were: the marker a redelivered job
    /// meets, so that a proposal is refunded once whatever the deliveries.
    pub fn refunded() -> (Update, Condition) {
        let update = Update::default().add("refunds", 1);
        (update, Condition::AtMost("refunds".into(), 0))
    }

    /// The passages accepted so far (`accepted`), while it is ready.
    pub fn accepted(accepted: &[u32]) -> (Update, Condition) {
        let update = Update::default().set("accepted", json(&accepted));
        (
            update,
            Condition::equals("status", ProposalStatus::Ready.as_str()),
        )
    }
}

fn pending() -> Condition {
    Condition::equals("status", ProposalStatus::Pending.as_str())
}

fn json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// A proposal's passages, as its blob holds them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProposalTexts {
    pub passages: Vec<ProposedPassage>,
}

/// One passage of a proposal.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProposedPassage {
    pub index: u32,
    /// The passage's version when the proposal was asked for, which accepting it names.
    pub version: u64,
    /// Its text then.
    pub current: Option<String>,
    /// The re-translation's text; None until the job has it.
    pub proposed: Option<String>,
    /// What the checks found wrong with the proposed text.
    #[serde(default)]
    pub problems: Vec<Problem>,
    /// The pass that last changed the proposed text.
    pub pass: Option<Pass>,
    /// The proposed text is the model's last answer, which failed the checks in `problems`
    /// (every answer did): there for the owner to read, and to accept knowingly.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rejected: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> ProposalRecord {
        ProposalRecord {
            id: "p1".into(),
            book_id: "b1".into(),
            lang: "es".into(),
            chapter: 2,
            index: Some(3),
            instruction: Some("use 'usted'".into()),
            model: "gpt-4o-mini".into(),
            include_edited: false,
            by: "u1".into(),
            created_at: DateTime::from_timestamp(1_700_000_000, 0).unwrap_or_default(),
            finished_at: None,
            status: ProposalStatus::Pending,
            error: None,
            words: 12,
            period: "2026-11".into(),
            passages: 1,
            left_alone: vec![4],
            engine: None,
            usage: PassUsage::default(),
            cost_micros: 0,
            accepted: Vec::new(),
        }
    }

    #[test]
    fn a_proposal_item_reads_back_and_finishes_only_while_pending() {
        let (item, condition) = record().to_new_item();
        assert_eq!(condition, Condition::NotExists);
        assert_eq!(item.sk, "PROPOSAL#p1");
        assert_eq!(ProposalRecord::from_item(&item).unwrap(), record());
        let finish = Finish {
            status: ProposalStatus::Ready,
            error: None,
            at: DateTime::from_timestamp(1_700_000_060, 0).unwrap_or_default(),
            engine: Some("offline-pseudo"),
            usage: PassUsage {
                input_tokens: 10,
                output_tokens: 5,
                requests: 3,
            },
            cost_micros: 7,
            passages: 1,
        };
        let (update, condition) = ProposalRecord::finished(&finish);
        let mut attrs = item.attrs.clone();
        assert!(condition.holds_for(Some(&attrs)));
        update.apply_to(&mut attrs);
        let done = ProposalRecord::from_item(&Item {
            attrs: attrs.clone(),
            ..item.clone()
        })
        .unwrap();
        assert_eq!(done.status, ProposalStatus::Ready);
        assert_eq!(done.usage.requests, 3);
        assert!(!condition.holds_for(Some(&attrs)), "finished once");
        let (discard, open) = ProposalRecord::discarded();
        assert!(open.holds_for(Some(&attrs)));
        discard.apply_to(&mut attrs);
        assert!(!open.holds_for(Some(&attrs)), "discarded once");
    }

    #[test]
    fn a_proposals_refund_is_marked_once() {
        let (item, _) = record().to_new_item();
        let mut attrs = item.attrs.clone();
        let (mark, unmarked) = ProposalRecord::refunded();
        assert!(
            unmarked.holds_for(Some(&attrs)),
            "a new proposal owes its refund"
        );
        mark.apply_to(&mut attrs);
        assert!(!unmarked.holds_for(Some(&attrs)), "refunded once");
        assert!(
            !unmarked.holds_for(None),
            "a proposal that is gone refunds nothing"
        );
    }

    #[test]
    fn a_proposal_with_a_status_it_cannot_have_is_an_error_naming_the_attribute() {
        let (item, _) = record().to_new_item();
        let item = item.with("status", "maybe");
        assert_eq!(
            ProposalRecord::from_item(&item).unwrap_err().attribute,
            "status"
        );
    }
}
