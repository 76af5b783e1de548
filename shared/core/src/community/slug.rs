//! Slugs: readable, transliterated URL names (`¿Qué es Moby-Dick?` -> `que-es-moby-dick`),
//! unique per kind through a claim item.

use super::record;
use crate::fault::{DataError, Fault};
use crate::ids::random_hex;
use crate::ports::Ports;
use crate::ports::{Condition, Item, StoreError};

/// The longest slug, in characters.
const MAX_LEN: usize = 80;
/// Numbered variants (`-2`, `-3`, ...) tried before random suffixes.
const NUMBERED: u32 = 20;
/// Random 32-bit suffixes tried once the numbered variants are taken: a collision of all of
/// them is as unlikely as it gets, and still ends (in a [`Fault::Internal`], a 500) rather
/// than looping.
const RANDOM_TRIES: usize = 3;

/// ASCII lowercase letters and digits joined by single hyphens; `fallback` when nothing of
/// `text` survives (a title of emoji, say).
pub fn slugify(text: &str, fallback: &str) -> String {
    let ascii = deunicode::deunicode(text).to_lowercase();
    let mut slug = String::with_capacity(ascii.len());
    for c in ascii.chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.is_empty() && !slug.ends_with('-') {
            slug.push('-');
        }
    }
    let mut slug: String = slug.chars().take(MAX_LEN).collect();
    while slug.ends_with('-') {
        slug.pop();
    }
    if slug.is_empty() {
        fallback.to_string()
    } else {
        slug
    }
}

pub(super) use super::record::{slug_claim_pk as claim_pk, SLUG_CLAIM_SK as CLAIM_SK};

/// The claim of `slug` (of a `kind`) for `owner_id`.
pub(super) fn claim_item(kind: &str, slug: &str, owner_id: &str) -> Item {
    record::slug_claim(claim_pk(kind, slug), CLAIM_SK, owner_id)
}

/// The claim is `owner_id`'s.
pub(super) fn claimed_by(owner_id: &str) -> Condition {
    record::slug_claimed_by(owner_id)
}

/// Claims the first free slug of `base`, `base-2`, ... for `owner_id`, and returns it. A claim
/// is a conditional put, so concurrent writers never get the same slug.
pub(super) async fn claim(
    ports: &Ports,
    kind: &str,
    base: &str,
    owner_id: &str,
) -> Result<String, DataError> {
    let candidates = std::iter::once(base.to_string())
        .chain((2..=NUMBERED).map(|n| format!("{base}-{n}")))
        // Random, not a prefix of a time-ordered id: those share their first characters for a
        // minute, so a popular title would run out of slugs.
        .chain((0..RANDOM_TRIES).map(|_| format!("{base}-{}", random_hex(4))));
    for slug in candidates {
        let item = claim_item(kind, &slug, owner_id);
        match ports.table.put(item, Condition::NotExists).await {
            Ok(()) => return Ok(slug),
            Err(StoreError::Conflict) => continue,
            Err(e) => return Err(e.into()),
        }
    }
    Err(Fault::Internal(format!(
        "no free slug for '{base}' after {} tries",
        NUMBERED as usize + RANDOM_TRIES
    ))
    .into())
}

/// The id owning `slug`, if any.
pub(super) async fn owner(
    ports: &Ports,
    kind: &str,
    slug: &str,
) -> Result<Option<String>, DataError> {
    let item = ports.table.get(&claim_pk(kind, slug), CLAIM_SK).await?;
    Ok(item.as_ref().and_then(record::slug_owner))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_transliterated_lowercase_words_joined_by_hyphens() {
        assert_eq!(slugify("¿Qué es Moby-Dick?", "post"), "que-es-moby-dick");
        assert_eq!(slugify("Ærøskøbing  & Co.", "post"), "aeroskobing-co");
        assert_eq!(
            slugify("Москва слезам не верит", "post"),
            "moskva-slezam-ne-verit"
        );
        assert_eq!(slugify("🎉", "post"), "tada");
        assert_eq!(slugify("¡¿ — ?!", "post"), "post");
        assert_eq!(slugify(&"a ".repeat(200), "post").len(), 79);
    }
}
