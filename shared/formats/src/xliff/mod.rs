//! XLIFF 1.2 (`urn:oasis:names:tc:xliff:document:1.2`), the exchange format of translation
//! tools (OmegaT, Trados, memoQ, Weblate, translate-toolkit): a book's passages written out for
//! a translator's tool, and the targets of such a file read back.
//!
//! A passage's inline marks travel as XLIFF inline codes, so a tool shows them as tags the
//! translator places but cannot edit (`codes`): a paired mark (`<i>`, `<a href>`, `<span>` ...)
//! is a `<g id>`, a mark alone (`<br/>`, `<ref/>`, `<num/>`) an `<x id/>`, ids numbered from 1
//! in the source's order. What the marks carry (a link's address, a class, a note's id) stays
//! on booktr's side: a target's codes are turned back into the source's marks by id.
//!
//! Writing escapes every text and attribute (`write`); reading (`read`) takes UTF-8 without a
//! DTD (so no entity is ever declared, let alone expanded), within bounds on the units and the
//! nesting, and reads of each unit only what an import needs: its id, its file, its target.
//! The stages import only the ones before them: `escape`, `codes`, then `write` and `read`.

mod codes;
mod escape;
mod read;
#[cfg(test)]
mod tests;
mod write;

pub use codes::{canonical, from_inline, to_inline, CodeError, Inline};
pub use read::{read, ReadError, ReadLimits, ReadUnit, Target};
pub use write::{write, Document, File, State, Unit, MEDIA_TYPE, NAMESPACE};
