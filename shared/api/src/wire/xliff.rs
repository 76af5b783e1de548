//! What an XLIFF import answers: every unit of the file and what became of it.

use booktr_core::translation::passages::xliff as domain;
use booktr_core::translation::passages::PassageError;

use super::Mirror;

/// The import's report: the units counted by outcome, and each unit in the file's order.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct XliffReport {
    /// Units whose target became their passage's text (the owner's edit).
    pub changed: usize,
    /// Units without a target, with the text exported, or with the text the passage holds.
    pub unchanged: usize,
    /// Units whose passage changed in booktr since the export: left as it is.
    pub conflicts: usize,
    /// Units whose target was not written, with why.
    pub refused: usize,
    /// Units that name no passage of the book.
    pub unknown: usize,
    pub units: Vec<XliffUnit>,
}

/// One unit of the file and its outcome.
#[derive(serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct XliffUnit {
    /// The unit's id, as the file has it.
    pub id: String,
    /// Its passage's chapter and index, when its id names one.
    pub chapter: Option<u32>,
    pub index: Option<u32>,
    /// `changed`, `unchanged`, `conflict`, `refused` or `unknown`.
    pub outcome: &'static str,
    /// The passage's version: after the change (`changed`), or now (`conflict`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// Why a unit was refused: `marks_mismatch`, `text_too_long`, `invalid_character`,
    /// `bad_request` (an empty text), `invalid_codes` (inline codes that are not the source's
    /// marks) or `change_limit` (the import changed as many passages as one may).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<&'static str>,
    /// For people: why a unit is a conflict, refused or unknown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

impl Mirror<domain::XliffReport> for XliffReport {
    fn mirror(from: domain::XliffReport) -> Self {
        use domain::Outcome;
        XliffReport {
            changed: from.count(|o| matches!(o, Outcome::Changed { .. })),
            unchanged: from.count(|o| matches!(o, Outcome::Unchanged)),
            conflicts: from.count(|o| matches!(o, Outcome::Conflict { .. })),
            refused: from.count(|o| matches!(o, Outcome::Refused(_))),
            unknown: from.count(|o| matches!(o, Outcome::Unknown(_))),
            units: from.units.into_iter().map(XliffUnit::mirror).collect(),
        }
    }
}

impl Mirror<domain::UnitReport> for XliffUnit {
    fn mirror(from: domain::UnitReport) -> Self {
        use domain::Outcome;
        let (outcome, version, error, message) = match from.outcome {
            Outcome::Changed { version } => ("changed", Some(version), None, None),
            Outcome::Unchanged => ("unchanged", None, None, None),
            Outcome::Conflict { version } => (
                "conflict",
                Some(version),
                None,
                Some(format!(
                    "the passage changed in booktr since the export (it is at version {version} \
                     now) and was left as it is; export it again to work on it as it is"
                )),
            ),
            Outcome::Refused(refusal) => {
                let (code, why) = refused(refusal);
                ("refused", None, Some(code), Some(why))
            }
            Outcome::Unknown(why) => ("unknown", None, None, Some(why)),
        };
        XliffUnit {
            id: from.id,
            chapter: from.at.map(|at| at.chapter),
            index: from.at.map(|at| at.index),
            outcome,
            version,
            error,
            message,
        }
    }
}

/// A refusal's code and message, the codes an edit of the passage would answer.
fn refused(refusal: domain::Refusal) -> (&'static str, String) {
    match refusal {
        domain::Refusal::Codes(why) => ("invalid_codes", why),
        domain::Refusal::ChangeLimit => (
            "change_limit",
            format!(
                "one import changes at most {} passages; import the file again to change this \
                 one (the passages changed already are then unchanged)",
                domain::MAX_CHANGES
            ),
        ),
        domain::Refusal::Edit(e) => {
            let code = match e {
                PassageError::Marks(_) => "marks_mismatch",
                PassageError::TooLong(_) => "text_too_long",
                PassageError::Characters(_) => "invalid_character",
                _ => "bad_request",
            };
            (code, e.to_string())
        }
    }
}
