//! A book's passages out to a translator's tool and back, as XLIFF 1.2
//! (`booktr_formats::xliff`): the export writes one `<file>` per translated chapter and one
//! `<trans-unit>` per passage; the import makes each target the translator changed the
//! owner's edit, through the same check and the same versioned write as an edit in the editor.
//!
//! A unit's id names its passage and the passage as it was exported (`unit_id`):
//! `c<chapter>-p<index>-v<version>-<fingerprint>`, the fingerprint a hash of the text exported
//! (in the book's target language). Tools keep ids (and notes) through every round trip, where
//! they may drop attributes of their own; so the id alone tells the import which passage a
//! unit is, whether its target is the text exported, and whether the passage changed in
//! booktr since (an edit, an undo, a new run of the model): then the unit is a conflict, and
//! the passage is left as it is.
//!
//! A target's state says where the text came from: the model's text is `translated`, or
//! `needs-review-translation` when the checks flagged it or its confidence is low (the
//! review's bound); the owner's text (an edit, a re-translation they accepted, the model's
//! text they kept) is `signed-off` and `approved="yes"` (XLIFF 1.2 has no "reviewed"; its
//! `final` tells some tools to lock the unit, and the owner's text stays the translator's to
//! change). The flags, the confidence and the origin are notes.

mod error;
mod export;
mod import;
mod unit_id;

pub use error::XliffError;
pub use export::XliffExport;
pub use import::{
    Outcome, Refusal, UnitReport, XliffReport, MAX_CHANGES, MAX_DEPTH, MAX_UNITS, MAX_XLIFF_BYTES,
};
