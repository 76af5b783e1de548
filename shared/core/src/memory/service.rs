//! The memory service: what a chapter takes from the user's memory, what it gives back, and the
//! owner's view of it (pairs, pages of entries, deletion, TMX in and out).

use std::collections::{BTreeMap, HashMap};

use booktr_formats::manuscript::Block;
use booktr_translate::glossary::GlossaryEntry;
use booktr_translate::memory::{closest, Candidate, Remembered, Similar};
use futures::future::join_all;
use tracing::{info, warn};

use super::error::MemoryError;
use super::model::{
    passage_id, rememberable, Entry, EntryPage, Imported, Origin, Pair, PairMemory, PairSummary,
    Passage, Recorded, CANDIDATES, MAX_PAIRS,
};
use super::record::{self, entries_prefix, entry_sk, pair_index, pair_sk, pk, PAIR_PREFIX};
use super::tmx;
use crate::fault::{DataError, Fault};
use crate::ports::table::MAX_TRANSACTION_OPS;
use crate::ports::{Condition, Index, Item, Ports, Query, StoreError, WriteOp};

/// Reads or writes of single entries in flight at once for one chapter.
const IN_FLIGHT: usize = 16;

/// What a lookup looks for besides exact matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    /// Exact matches only (what a quote counts as free, what the term pass leaves out).
    Exact,
    /// Close passages too, for the blocks without an exact match (what a chapter sends).
    WithClose,
}

#[derive(Clone)]
pub struct Memory {
    ports: Ports,
}

impl Memory {
    pub fn new(ports: Ports) -> Self {
        Memory { ports }
    }

    /// The user's pairs, counted.
    pub async fn pairs(&self, user_id: &str) -> Result<Vec<PairSummary>, MemoryError> {
        Ok(self.pairs_of(user_id).await?)
    }

    async fn pairs_of(&self, user_id: &str) -> Result<Vec<PairSummary>, DataError> {
        let query = Query::partition(pk(user_id)).prefix(PAIR_PREFIX);
        let items = self.ports.table.query(query).await?;
        Ok(items
            .iter()
            .map(record::pair_from)
            .collect::<Result<_, _>>()?)
    }

    /// The pair as counted, None when the user's memory has none.
    async fn summary(&self, user_id: &str, pair: &Pair) -> Result<Option<PairSummary>, DataError> {
        let item = self.ports.table.get(&pk(user_id), &pair_sk(pair)).await?;
        Ok(item.as_ref().map(record::pair_from).transpose()?)
    }

    /// Entries `offset..offset + limit` of the pair, newest first; 404 for a pair the user's
    /// memory does not have.
    pub async fn page(
        &self,
        user_id: &str,
        pair: &Pair,
        offset: usize,
        limit: usize,
    ) -> Result<EntryPage, MemoryError> {
        let summary = self
            .summary(user_id, pair)
            .await?
            .ok_or(MemoryError::NotFound("memory pair"))?;
        let query = Query::partition(pair_index(user_id, pair))
            .descending()
            .limit(offset.saturating_add(limit));
        let items = self.ports.table.query_index(Index::Gsi1, query).await?;
        let entries = items
            .iter()
            .skip(offset)
            .map(record::entry_from)
            .collect::<Result<Vec<_>, _>>()
            .map_err(Fault::from)?;
        Ok(EntryPage {
            pair: summary,
            offset: u32::try_from(offset).unwrap_or(u32::MAX),
            entries,
        })
    }

    /// Forgets one entry; 404 when the user's memory does not hold it.
    pub async fn delete_entry(
        &self,
        user_id: &str,
        pair: &Pair,
        id: &str,
    ) -> Result<(), MemoryError> {
        let not_found = MemoryError::NotFound("memory entry");
        if id.len() != 32 || !id.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(not_found);
        }
        let sk = entry_sk(pair, id);
        match self
            .ports
            .table
            .delete(&pk(user_id), &sk, Condition::Exists)
            .await
        {
            Ok(()) => {}
            Err(StoreError::Conflict | StoreError::NotFound) => return Err(not_found),
            Err(e) => return Err(e.into()),
        }
        self.fewer(user_id, pair, 1).await?;
        info!(%pair, "memory entry deleted");
        Ok(())
    }

    /// Forgets the pair and every entry of it; returns how many entries went. 404 when the
    /// user's memory does not have the pair. The pair goes first: a chapter recording into it
    /// meanwhile finds it gone and starts it afresh, so no entry is left outside a pair.
    pub async fn delete_pair(&self, user_id: &str, pair: &Pair) -> Result<u64, MemoryError> {
        match self
            .ports
            .table
            .delete(&pk(user_id), &pair_sk(pair), Condition::Exists)
            .await
        {
            Ok(()) => {}
            Err(StoreError::Conflict | StoreError::NotFound) => {
                return Err(MemoryError::NotFound("memory pair"))
            }
            Err(e) => return Err(e.into()),
        }
        let query = Query::partition(pk(user_id)).prefix(entries_prefix(pair));
        let items = self.ports.table.query(query).await?;
        let removed = self.delete_items(&items).await?;
        info!(%pair, removed, "memory pair deleted");
        Ok(removed as u64)
    }

    async fn delete_items(&self, items: &[Item]) -> Result<usize, StoreError> {
        let table = self.ports.table.as_ref();
        for some in items.chunks(IN_FLIGHT) {
            let deletes = some
                .iter()
                .map(|item| table.delete(&item.pk, &item.sk, Condition::Always));
            join_all(deletes)
                .await
                .into_iter()
                .collect::<Result<Vec<()>, _>>()?;
        }
        Ok(items.len())
    }

    /// Every pair with all its entries (newest first), for the account export.
    pub async fn all_of(&self, user_id: &str) -> Result<Vec<PairMemory>, DataError> {
        let mut all = Vec::new();
        for summary in self.pairs_of(user_id).await? {
            let entries = self.entries_of(user_id, &summary.pair).await?;
            all.push(PairMemory {
                pair: summary,
                entries,
            });
        }
        Ok(all)
    }

    /// Every entry of the pair, newest first (strongly consistent, unlike the index).
    async fn entries_of(&self, user_id: &str, pair: &Pair) -> Result<Vec<Entry>, DataError> {
        let query = Query::partition(pk(user_id)).prefix(entries_prefix(pair));
        let items = self.ports.table.query(query).await?;
        let mut entries = items
            .iter()
            .map(record::entry_from)
            .collect::<Result<Vec<_>, _>>()?;
        entries.sort_by(|a, b| b.updated_at.cmp(&a.updated_at).then(a.id.cmp(&b.id)));
        Ok(entries)
    }

    /// The pair's entries from `offset` (newest first) as a TMX file, as many as fit in
    /// [`tmx::MAX_TMX_BYTES`]; with the offset of the rest when some are left. 404 for a pair
    /// the user's memory does not have.
    pub async fn export(
        &self,
        user_id: &str,
        pair: &Pair,
        offset: usize,
    ) -> Result<(String, Option<usize>), MemoryError> {
        if self.summary(user_id, pair).await?.is_none() {
            return Err(MemoryError::NotFound("memory pair"));
        }
        let entries = self.entries_of(user_id, pair).await?;
        let rest = entries.get(offset..).unwrap_or_default();
        let written = tmx::write(pair, rest, tmx::MAX_TMX_BYTES);
        let next = offset + written.entries;
        Ok((written.tmx, (next < entries.len()).then_some(next)))
    }

    /// Remembers the units of a TMX file in the pair's languages, as imported (each replaces
    /// the entry of the same source); the units without both languages are skipped.
    pub async fn import(
        &self,
        user_id: &str,
        pair: &Pair,
        file: &str,
    ) -> Result<Imported, MemoryError> {
        let units = tmx::read(file, pair).map_err(|e| MemoryError::Invalid(e.to_string()))?;
        let passages = units
            .pairs
            .into_iter()
            .map(|(source, target)| Passage {
                source,
                target,
                origin: Origin::Import,
                book_id: None,
            })
            .collect();
        let recorded = self.record(user_id, pair, passages).await?;
        Ok(Imported {
            recorded,
            skipped: units.skipped as u32,
        })
    }

    /// Removes the whole memory of a closed account; returns how many items.
    pub(crate) async fn remove_all_of(&self, user_id: &str) -> Result<usize, DataError> {
        let items = self
            .ports
            .table
            .query(Query::partition(pk(user_id)))
            .await?;
        Ok(self.delete_items(&items).await?)
    }

    /// Remembers the passages in the pair: each replaces the entry of the same source, or is a
    /// new entry while the pair has room (the full pair counts what it refused). A passage the
    /// memory does not take (see `model::rememberable`) is refused too.
    pub async fn record(
        &self,
        user_id: &str,
        pair: &Pair,
        passages: Vec<Passage>,
    ) -> Result<Recorded, DataError> {
        let now = self.ports.clock.now();
        let mut done = Recorded::default();
        // One entry per source: the last passage given for it.
        let mut entries: BTreeMap<String, Entry> = BTreeMap::new();
        for passage in passages {
            if !rememberable(&passage.source, &passage.target) {
                done.refused += 1;
                continue;
            }
            let id = passage_id(&passage.source);
            entries.insert(
                id.clone(),
                Entry {
                    id,
                    source: passage.source,
                    target: passage.target,
                    origin: passage.origin,
                    book_id: passage.book_id,
                    updated_at: now,
                },
            );
        }
        if entries.is_empty() {
            return Ok(done);
        }
        if !self.ensure_pair(user_id, pair).await? {
            warn!(%pair, "the memory holds as many pairs as it may; passages not remembered");
            done.refused += entries.len() as u32;
            return Ok(done);
        }
        // Each batch the entries of one book (or of none), with room for its marker.
        let mut by_book: BTreeMap<Option<&str>, Vec<&Entry>> = BTreeMap::new();
        for entry in entries.values() {
            by_book
                .entry(entry.book_id.as_deref())
                .or_default()
                .push(entry);
        }
        let mut full = 0;
        for (book_id, entries) in by_book {
            for batch in entries.chunks(MAX_TRANSACTION_OPS - 1) {
                let taken = self.remember_all(user_id, pair, book_id, batch).await?;
                done.remembered += taken;
                full += batch.len() as u32 - taken;
            }
        }
        done.refused += full;
        if full > 0 {
            warn!(%pair, refused = full, "the memory's pair is full; passages not remembered");
            match self
                .ports
                .table
                .update(
                    &pk(user_id),
                    &pair_sk(pair),
                    record::refused(full),
                    Condition::Exists,
                )
                .await
            {
                Ok(_) | Err(StoreError::Conflict | StoreError::NotFound) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(done)
    }

    /// The entries written (at most a transaction's worth, all given by `book_id`): all new ones
    /// at once, in one write of the pair's count (their room taken while the pair has it) and
    /// one transaction of their items and their book's marker, which meets no other chapter's;
    /// else (room for some only, or some held already) the marker, then one entry at a time.
    /// Returns how many were remembered.
    async fn remember_all(
        &self,
        user_id: &str,
        pair: &Pair,
        book_id: Option<&str>,
        batch: &[&Entry],
    ) -> Result<u32, StoreError> {
        let table = &self.ports.table;
        let (pk, sk) = (pk(user_id), pair_sk(pair));
        let marker = book_id.map(|book_id| {
            let ids = batch.iter().map(|entry| entry.id.clone()).collect();
            record::marker_item(user_id, pair, book_id, ids)
        });
        let (more, room) = record::more(batch.len());
        match table.update(&pk, &sk, more, room).await {
            Ok(_) => {
                let puts = marker
                    .iter()
                    .map(|item| WriteOp::Put {
                        item: item.clone(),
                        condition: Condition::Always,
                    })
                    .chain(batch.iter().map(|entry| WriteOp::Put {
                        item: record::entry_item(user_id, pair, entry),
                        condition: Condition::NotExists,
                    }))
                    .collect();
                match table.transact(puts).await {
                    Ok(()) => return Ok(batch.len() as u32),
                    // Some held already, or the batch met another write: the room goes back,
                    // and each is written alone.
                    Err(_) => self.fewer(user_id, pair, batch.len()).await?,
                }
            }
            Err(StoreError::Conflict | StoreError::NotFound) => {}
            Err(e) => return Err(e),
        }
        // The marker before the entries, so that no entry a book gave is without one.
        if let Some(marker) = marker {
            table.put(marker, Condition::Always).await?;
        }
        let mut taken = 0;
        for some in batch.chunks(IN_FLIGHT) {
            let writes = some.iter().map(|entry| self.remember(user_id, pair, entry));
            for result in join_all(writes).await {
                taken += u32::from(result?);
            }
        }
        Ok(taken)
    }

    /// The entry written: a new one counted in the pair while it has room, else the entry of
    /// the same source replaced. False when neither (the pair full, or gone meanwhile).
    ///
    /// The room is taken first, by a conditional update of the pair's count alone, then the entry
    /// put: the count is in no transaction, so that the chapters of a run recording at once into
    /// one pair never cancel each other (DynamoDB cancels transactions that meet on an item). A
    /// process that stops between the two leaves the count over what the pair holds, never
    /// under.
    async fn remember(
        &self,
        user_id: &str,
        pair: &Pair,
        entry: &Entry,
    ) -> Result<bool, StoreError> {
        let table = &self.ports.table;
        let item = record::entry_item(user_id, pair, entry);
        let (pk, sk) = (pk(user_id), pair_sk(pair));
        let (one_more, room) = record::more(1);
        match table.update(&pk, &sk, one_more, room).await {
            Ok(_) => {}
            // Full (or gone): only a passage it holds may still be replaced.
            Err(StoreError::Conflict | StoreError::NotFound) => {
                return match table.put(item, Condition::Exists).await {
                    Ok(()) => Ok(true),
                    Err(StoreError::Conflict) => Ok(false),
                    Err(e) => Err(e),
                }
            }
            Err(e) => return Err(e),
        }
        match table.put(item.clone(), Condition::NotExists).await {
            Ok(()) => Ok(true),
            // Held already: the room taken goes back, and the entry is replaced.
            Err(StoreError::Conflict) => {
                self.fewer(user_id, pair, 1).await?;
                table.put(item, Condition::Always).await?;
                Ok(true)
            }
            Err(e) => {
                self.fewer(user_id, pair, 1).await?;
                Err(e)
            }
        }
    }

    /// Forgets the entries book `book_id` gave, each while it is still as that book gave it
    /// (another book's text for the same source stays), and their markers; returns how many
    /// entries went. A book's deletion calls this before and after it deletes the book item (see
    /// `Books::remove_everything`).
    pub(crate) async fn forget_book(&self, book_id: &str) -> Result<usize, DataError> {
        let table = &self.ports.table;
        let markers = table
            .query(Query::partition(record::given_pk(book_id)))
            .await?;
        let mut forgotten = 0;
        for item in &markers {
            let marker = record::marker_from(item)?;
            let (pk, given) = (pk(&marker.user_id), record::given_by(&marker.book_id));
            for some in marker.ids.chunks(IN_FLIGHT) {
                let deletes = some.iter().map(|id| {
                    let sk = entry_sk(&marker.pair, id);
                    let (pk, given) = (pk.clone(), given.clone());
                    async move { table.delete(&pk, &sk, given).await }
                });
                let mut gone = 0;
                for result in join_all(deletes).await {
                    match result {
                        Ok(()) => gone += 1,
                        Err(StoreError::Conflict | StoreError::NotFound) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                if gone > 0 {
                    self.fewer(&marker.user_id, &marker.pair, gone).await?;
                }
                forgotten += gone;
            }
            // The entries before their marker: a crash between leaves the marker to find them.
            table.delete(&item.pk, &item.sk, Condition::Always).await?;
        }
        if forgotten > 0 {
            info!(forgotten, "memory entries a deleted book gave forgotten");
        }
        Ok(forgotten)
    }

    /// `count` entries fewer in the pair's count (none when the pair is gone).
    async fn fewer(&self, user_id: &str, pair: &Pair, count: usize) -> Result<(), StoreError> {
        let update = record::fewer(count);
        match self
            .ports
            .table
            .update(&pk(user_id), &pair_sk(pair), update, Condition::Exists)
            .await
        {
            Ok(_) | Err(StoreError::NotFound | StoreError::Conflict) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Whether the pair is there to record into: there already, or made now while the user has
    /// fewer than [`MAX_PAIRS`] (two made at the same moment may both pass the count).
    async fn ensure_pair(&self, user_id: &str, pair: &Pair) -> Result<bool, DataError> {
        if self.summary(user_id, pair).await?.is_some() {
            return Ok(true);
        }
        let query = Query::partition(pk(user_id)).prefix(PAIR_PREFIX);
        if self.ports.table.query(query).await?.len() >= MAX_PAIRS {
            return Ok(false);
        }
        match self
            .ports
            .table
            .put(record::new_pair(user_id, pair), Condition::NotExists)
            .await
        {
            Ok(()) | Err(StoreError::Conflict) => Ok(true),
            Err(e) => Err(e.into()),
        }
    }

    /// What the user's memory holds for `blocks` of book `book_id`: each block whose source it
    /// holds exactly (and whose text misses none of `glossary`'s terms: else the entry is only
    /// a close passage), and with [`Lookup::WithClose`] the closest of the pair's newest
    /// [`CANDIDATES`] entries for the others. What the book itself gave the memory is left out:
    /// a book translated again with other choices is translated again (its own earlier text is
    /// what its translation key reuses), and a book's first run is as it would be without a
    /// memory.
    pub async fn lookup(
        &self,
        user_id: &str,
        pair: &Pair,
        book_id: &str,
        blocks: &[Block],
        glossary: &[GlossaryEntry],
        lookup: Lookup,
    ) -> Result<Remembered, DataError> {
        let mut found = Remembered::default();
        if self
            .summary(user_id, pair)
            .await?
            .is_none_or(|summary| summary.entries == 0)
        {
            return Ok(found);
        }
        let from_elsewhere = |entry: &Entry| entry.book_id.as_deref() != Some(book_id);
        let sources: HashMap<&str, Option<Entry>> = self
            .exact(user_id, pair, blocks)
            .await?
            .into_iter()
            .collect();
        for (index, block) in blocks.iter().enumerate() {
            let Some(Some(entry)) = sources.get(block.text.as_str()) else {
                continue;
            };
            if !from_elsewhere(entry) {
                continue;
            }
            if booktr_translate::protocol::glossary_violations(
                glossary,
                &entry.source,
                &entry.target,
            )
            .is_empty()
            {
                found.exact.insert(index, entry.target.clone());
            } else {
                found.similar.insert(
                    index,
                    Similar {
                        source: entry.source.clone(),
                        target: entry.target.clone(),
                    },
                );
            }
        }
        let open: Vec<usize> = (0..blocks.len())
            .filter(|i| !found.exact.contains_key(i) && !found.similar.contains_key(i))
            .filter(|i| !blocks[*i].text.trim().is_empty())
            .collect();
        if lookup == Lookup::WithClose && !open.is_empty() {
            let query = Query::partition(pair_index(user_id, pair))
                .descending()
                .limit(CANDIDATES);
            let candidates: Vec<Candidate> = self
                .ports
                .table
                .query_index(Index::Gsi1, query)
                .await?
                .iter()
                .map(record::entry_from)
                .collect::<Result<Vec<_>, _>>()?
                .into_iter()
                .filter(from_elsewhere)
                .map(|e| Candidate::new(e.source, e.target))
                .collect();
            for index in open {
                if let Some(close) = closest(&blocks[index].text, &candidates) {
                    let similar = Similar {
                        source: close.source.clone(),
                        target: close.target.clone(),
                    };
                    found.similar.insert(index, similar);
                }
            }
        }
        Ok(found)
    }

    /// The entry of each distinct non-blank source of `blocks`, if the pair holds one (and it is
    /// that source: the key is a hash).
    async fn exact<'b>(
        &self,
        user_id: &str,
        pair: &Pair,
        blocks: &'b [Block],
    ) -> Result<Vec<(&'b str, Option<Entry>)>, DataError> {
        let mut sources: Vec<&str> = blocks
            .iter()
            .map(|b| b.text.as_str())
            .filter(|t| !t.trim().is_empty())
            .collect();
        sources.sort_unstable();
        sources.dedup();
        let (table, user_pk) = (self.ports.table.as_ref(), pk(user_id));
        let keys: Vec<String> = sources
            .iter()
            .map(|source| entry_sk(pair, &passage_id(source)))
            .collect();
        let mut found = Vec::with_capacity(sources.len());
        for (some, keys) in sources.chunks(IN_FLIGHT).zip(keys.chunks(IN_FLIGHT)) {
            let reads = keys.iter().map(|sk| table.get(&user_pk, sk));
            for (source, item) in some.iter().zip(join_all(reads).await) {
                let entry = item?
                    .as_ref()
                    .map(record::entry_from)
                    .transpose()?
                    .filter(|e| e.source == *source);
                found.push((*source, entry));
            }
        }
        Ok(found)
    }
}
