//! Asking for a re-translation, and accepting or discarding what it proposes.

use std::collections::{BTreeSet, HashMap};

use booktr_formats::manuscript::{Block, Chapter as SourceChapter};
use booktr_translate::checks::Problem;
use booktr_translate::estimate::cost;
use booktr_translate::ladder::Ladder;
use booktr_translate::pipeline::{
    ChapterInput, ChapterOutput, ChapterTranslation, PassUsage, Rejected,
};
use booktr_translate::protocol::{Pass, MAX_INSTRUCTION_CHARS};
use tracing::{info, instrument, warn};

use super::record::{Finish, ProposalRecord, ProposalStatus, ProposalTexts, ProposedPassage};

use super::error::*;
use super::model::*;
use crate::accounts::User;
use crate::books::{store, Book};
use crate::fault::{DataError, Fault};
use crate::job::Job;
use crate::ports::{Query, StoreError};
use crate::translation::error::TranslationError;
use crate::translation::passages::error::PassageError;
use crate::translation::passages::model::{answer_failed, reason};
use crate::translation::passages::model::{Flag, Passage, PassageAt};
use crate::translation::passages::record::Provenance;
use crate::translation::passages::service::{OwnersText, Records};
use crate::translation::{StoredChapter, Translations};
use crate::usage::Spend;

/// What a request for a re-translation comes to, before anything is spent or written.
struct Planned {
    book: Book,
    model: String,
    engine: Option<String>,
    instruction: Option<String>,
    chapter: u32,
    index: Option<u32>,
    /// The passages to translate, as they are now.
    chosen: Vec<Passage>,
    blocks: Vec<Block>,
    left_alone: Vec<u32>,
    words: u64,
}

impl Translations {
    /// What a re-translation as asked would use and cost; nothing is spent or queued.
    #[instrument(skip(self, user, request), fields(user_id = %user.id))]
    pub async fn quote_retranslation(
        &self,
        user: &User,
        book_id: &str,
        scope: Scope,
        request: RetranslateRequest,
    ) -> Result<RetranslationQuote, ProposalError> {
        let planned = self
            .plan_retranslation(user, book_id, &scope, request)
            .await?;
        let terms = self.book_terms(&planned.book).await?.unwrap_or_default();
        let glossary = self.enforced_glossary(&planned.book.id, &terms).await?;
        let (ladder, ledger) = (Ladder::default(), HashMap::new());
        let input = ChapterInput {
            blocks: &planned.blocks,
            source_lang: &planned.book.original_lang,
            target_lang: &planned.book.target_lang,
            glossary: &glossary,
            ledger: &ledger,
            ladder: &ladder,
            instruction: planned.instruction.as_deref(),
            memory: &booktr_translate::memory::NOTHING,
        };
        let (_, settings) = self
            .pipeline_for(&planned.book.user_id, &planned.model)
            .await?;
        let passes = ChapterTranslation::new(&input, &settings, None).estimate();
        let total: PassUsage = passes.iter().copied().sum();
        let priced_by = planned.engine.as_deref().unwrap_or(&planned.model);
        let estimated = cost(priced_by, total.input_tokens, total.output_tokens);
        Ok(RetranslationQuote {
            chapter: planned.chapter,
            passages: planned.chosen.len() as u32,
            left_alone: planned.left_alone,
            words: planned.words,
            passes,
            total,
            estimated_cost: (estimated * 10_000.0).round() / 10_000.0,
            model: planned.model,
            engine: planned.engine,
        })
    }

    /// Asks for a re-translation: its words charged to the month's quota, the proposal stored
    /// as pending, and its job queued. The proposal is ready once the job has run.
    #[instrument(skip(self, user, request), fields(user_id = %user.id))]
    pub async fn retranslate(
        &self,
        user: &User,
        book_id: &str,
        scope: Scope,
        request: RetranslateRequest,
    ) -> Result<Proposal, ProposalError> {
        let include_edited = request.include_edited;
        let planned = self
            .plan_retranslation(user, book_id, &scope, request)
            .await?;
        let words = Spend {
            books: 0,
            words: planned.words,
        };
        let period = self
            .usage
            .spend(user, words)
            .await
            .map_err(TranslationError::from)?;
        let record = ProposalRecord {
            id: crate::ids::new_id(),
            book_id: planned.book.id.clone(),
            lang: planned.book.target_lang.clone(),
            chapter: planned.chapter,
            index: planned.index,
            instruction: planned.instruction.clone(),
            model: planned.model.clone(),
            include_edited,
            by: user.id.clone(),
            created_at: self.ports.clock.now(),
            finished_at: None,
            status: ProposalStatus::Pending,
            error: None,
            words: planned.words,
            period: period.clone(),
            passages: planned.chosen.len() as u32,
            left_alone: planned.left_alone.clone(),
            engine: None,
            usage: PassUsage::default(),
            cost_micros: 0,
            accepted: Vec::new(),
        };
        let texts = ProposalTexts {
            passages: planned
                .chosen
                .iter()
                .map(|p| ProposedPassage {
                    index: p.index,
                    version: p.version,
                    current: p.text.clone(),
                    proposed: None,
                    problems: Vec::new(),
                    pass: None,
                    rejected: false,
                })
                .collect(),
        };
        if let Err(e) = self.store_new_proposal(&record, &texts).await {
            self.usage.refund(&user.id, &period, words).await?;
            return Err(e.into());
        }
        info!(
            proposal = %record.id,
            chapter = record.chapter,
            passages = record.passages,
            words = record.words,
            model = %record.model,
            instructed = record.instruction.is_some(),
            "re-translation asked for"
        );
        Ok(self.proposal_of(record, None))
    }

    /// The book's proposals, newest first, without their passages.
    pub async fn proposals(
        &self,
        user_id: &str,
        book_id: &str,
    ) -> Result<Vec<Proposal>, ProposalError> {
        let book = self
            .books
            .get(user_id, book_id)
            .await
            .map_err(PassageError::from)?;
        let query = Query::partition(store::book_pk(&book.id)).prefix(store::PROPOSAL_PREFIX);
        let mut records = Vec::new();
        for item in self.ports.table.query(query).await? {
            records.push(ProposalRecord::from_item(&item).map_err(Fault::from)?);
        }
        records.sort_by(|a, b| (b.created_at, &b.id).cmp(&(a.created_at, &a.id)));
        Ok(records
            .into_iter()
            .map(|r| self.proposal_of(r, None))
            .collect())
    }

    /// One of the book's proposals, with its passages.
    pub async fn proposal(
        &self,
        user_id: &str,
        book_id: &str,
        proposal_id: &str,
    ) -> Result<Proposal, ProposalError> {
        let book = self
            .books
            .get(user_id, book_id)
            .await
            .map_err(PassageError::from)?;
        let record = self.proposal_record(&book.id, proposal_id).await?;
        self.with_passages(record).await
    }

    /// Discards the proposal (its texts go); a discarded one stays so. One still pending is
    /// dropped by its job, which gives its words back if it has not started.
    #[instrument(skip(self))]
    pub async fn discard_proposal(
        &self,
        user_id: &str,
        book_id: &str,
        proposal_id: &str,
    ) -> Result<Proposal, ProposalError> {
        let book = self
            .books
            .get(user_id, book_id)
            .await
            .map_err(PassageError::from)?;
        let record = self.proposal_record(&book.id, proposal_id).await?;
        let (update, condition) = ProposalRecord::discarded();
        let sk = store::proposal_sk(&record.id);
        match self
            .ports
            .table
            .update(&store::book_pk(&book.id), &sk, update, condition)
            .await
        {
            Ok(_) => {
                info!(proposal = %record.id, "proposal discarded");
                self.remove_texts(&book.id, &record.id).await;
            }
            // Already discarded.
            Err(StoreError::Conflict) => {}
            Err(e) => return Err(e.into()),
        }
        let record = self.proposal_record(&book.id, proposal_id).await?;
        Ok(self.proposal_of(record, None))
    }

    /// Accepts the proposal's passages numbered in `only` (whatever their flags), or every
    /// passage not accepted yet whose proposed text nothing was found wrong with. Each becomes
    /// the owner's text from the version it had when the proposal was asked for; the first
    /// passage changed since answers `Stale` (with the passages before it accepted).
    #[instrument(skip(self))]
    pub async fn accept_proposal(
        &self,
        user_id: &str,
        book_id: &str,
        proposal_id: &str,
        only: Option<Vec<u32>>,
    ) -> Result<Proposal, ProposalError> {
        let book = self
            .books
            .get(user_id, book_id)
            .await
            .map_err(PassageError::from)?;
        let record = self.proposal_record(&book.id, proposal_id).await?;
        acceptable(&record, &book)?;
        let texts = self.proposal_texts(&book.id, &record).await?;
        let chosen = chosen_passages(&texts, &record, only.as_deref())?;
        let source = self.source_of(&book.id, record.chapter).await?;
        let stored = self.model_text(&book, record.chapter).await?;
        let records = self.passage_records(&book, record.chapter).await?;
        let read = Read {
            book: &book,
            record: &record,
            source: &source,
            stored: stored.as_ref(),
            records: &records,
        };
        // Every passage checked before any is written: a stale one leaves the others as they
        // were, bar a change that comes between this and the writes.
        self.none_stale(&read, &chosen).await?;
        let (accepted, outcome) = self.take_proposed(&read, &chosen, user_id).await;
        self.note_accepted(&book, &record, &accepted).await?;
        outcome?;
        self.proposal(user_id, book_id, proposal_id).await
    }

    /// Fails with `Stale` on the first of the `chosen` passages changed since the proposal
    /// was asked for.
    async fn none_stale(
        &self,
        read: &Read<'_>,
        chosen: &[&ProposedPassage],
    ) -> Result<(), ProposalError> {
        let Read {
            book,
            record,
            source,
            stored,
            records,
        } = *read;
        for proposed in chosen {
            let at = PassageAt {
                chapter: record.chapter,
                index: proposed.index,
            };
            let now = self
                .passage(
                    &book.id,
                    at.chapter,
                    at.index as usize,
                    &source.blocks,
                    stored,
                    records.get(&at.index),
                )
                .await?;
            if now.version != proposed.version || now.text != proposed.current {
                return Err(PassageError::Stale {
                    read: proposed.version,
                    current: Box::new(now),
                }
                .into());
            }
        }
        Ok(())
    }

    /// Writes each of the `chosen` passages' proposed text as the owner's; the passages of the
    /// proposal accepted by then, and the first failure (which stops the writes).
    async fn take_proposed(
        &self,
        read: &Read<'_>,
        chosen: &[&ProposedPassage],
        user_id: &str,
    ) -> (Vec<u32>, Result<(), PassageError>) {
        let Read {
            book,
            record,
            source,
            records,
            ..
        } = *read;
        let mut accepted = record.accepted.clone();
        let mut outcome = Ok(());
        for proposed in chosen {
            let at = PassageAt {
                chapter: record.chapter,
                index: proposed.index,
            };
            let Some(text) = proposed.proposed.as_deref() else {
                continue;
            };
            let passage_record = match records.get(&at.index) {
                Some(r) => r.clone(),
                None => crate::translation::passages::record::PassageRecord::untouched(
                    &book.target_lang,
                    at.chapter,
                    at.index,
                ),
            };
            let owners = OwnersText {
                text,
                by: user_id,
                from: Some(Provenance::Retranslated {
                    model: record
                        .engine
                        .clone()
                        .unwrap_or_else(|| record.model.clone()),
                    pass: proposed.pass.unwrap_or(Pass::Translate),
                    instruction: record.instruction.clone(),
                    proposal: record.id.clone(),
                    accepted_with: proposed.problems.clone(),
                }),
            };
            match self
                .put_owners_text(book, at, source, &passage_record, owners)
                .await
            {
                Ok(()) => {
                    if !accepted.contains(&at.index) {
                        accepted.push(at.index);
                    }
                }
                Err(e) => {
                    outcome = Err(e);
                    break;
                }
            }
        }
        (accepted, outcome)
    }

    /// Keeps on the proposal which of its passages are accepted, when that changed, and
    /// follows up the chapter's change.
    async fn note_accepted(
        &self,
        book: &Book,
        record: &ProposalRecord,
        accepted: &[u32],
    ) -> Result<(), ProposalError> {
        if accepted.len() != record.accepted.len() {
            let (update, condition) = ProposalRecord::accepted(accepted);
            let sk = store::proposal_sk(&record.id);
            match self
                .ports
                .table
                .update(&store::book_pk(&book.id), &sk, update, condition)
                .await
            {
                // Discarded meanwhile: the passages are accepted all the same.
                Ok(_) | Err(StoreError::Conflict) => {}
                Err(e) => return Err(e.into()),
            }
            self.passage_changed(book, record.chapter).await?;
            info!(
                proposal = %record.id,
                accepted = accepted.len() - record.accepted.len(),
                "proposal accepted"
            );
        }
        Ok(())
    }

    /// What the job of proposal `proposal_id` works from; None when there is nothing to do
    /// (the book or the proposal gone, the proposal no longer pending). A proposal discarded
    /// before its job started has its words given back.
    pub async fn proposal_work(
        &self,
        book_id: &str,
        proposal_id: &str,
    ) -> Result<Option<ProposalWork>, DataError> {
        let Some(book) = self.books.find(book_id).await? else {
            info!("book deleted; dropping the re-translation");
            return Ok(None);
        };
        let sk = store::proposal_sk(proposal_id);
        let Some(item) = self.ports.table.get(&store::book_pk(book_id), &sk).await? else {
            info!("proposal gone; nothing to translate");
            return Ok(None);
        };
        let record = ProposalRecord::from_item(&item).map_err(Fault::from)?;
        match record.status {
            ProposalStatus::Pending => {}
            ProposalStatus::Discarded if record.finished_at.is_none() => {
                info!("proposal discarded before its job started; its words are given back");
                self.refund_proposal(&record).await?;
                return Ok(None);
            }
            // A job delivered again after it failed the proposal: the refund that delivery
            // owed may not have been written (refund_proposal gives back once either way).
            ProposalStatus::Failed => {
                info!("proposal failed before; its words are given back if they were not");
                self.refund_proposal(&record).await?;
                return Ok(None);
            }
            _ => {
                info!(
                    status = record.status.as_str(),
                    "proposal no longer pending"
                );
                return Ok(None);
            }
        }
        let texts = self.proposal_texts(book_id, &record).await?;
        let source = self
            .source_chapter(book_id, record.chapter)
            .await?
            .ok_or_else(|| Fault::Corrupt {
                what: format!("chapter {} of book {book_id}", record.chapter),
                detail: "the chapter's text is missing".into(),
            })?;
        let blocks = texts
            .passages
            .iter()
            .filter_map(|p| source.blocks.get(p.index as usize).cloned())
            .collect::<Vec<_>>();
        if blocks.len() != texts.passages.len() {
            return Err(Fault::Corrupt {
                what: format!("proposal {proposal_id}"),
                detail: "it names passages its chapter does not have".into(),
            }
            .into());
        }
        let terms = self.book_terms(&book).await?.unwrap_or_default();
        let glossary = self.enforced_glossary(&book.id, &terms).await?;
        Ok(Some(ProposalWork {
            book,
            record,
            texts,
            blocks,
            glossary,
        }))
    }

    /// Stores what the job's passes made of the proposal's passages: ready to accept.
    /// `engine` is what answered; `cost_micros` what its passes cost.
    pub async fn finish_proposal(
        &self,
        work: ProposalWork,
        output: ChapterOutput,
        engine: &str,
        cost_micros: i64,
    ) -> Result<(), DataError> {
        let ProposalWork {
            book,
            record,
            mut texts,
            blocks,
            ..
        } = work;
        let last_pass = output.quality.last_pass.clone().unwrap_or_default();
        for (at, passage) in texts.passages.iter_mut().enumerate() {
            let flagged: Vec<Problem> = output
                .quality
                .flagged
                .iter()
                .filter(|(_, blocks)| blocks.contains(&at))
                .map(|(problem, _)| *problem)
                .collect();
            let proposed = Proposed::of(
                blocks.get(at).map_or("", |b| b.text.as_str()),
                output.blocks.get(at).map(|b| b.text.clone()),
                flagged,
                output.rejected.get(&at),
            );
            passage.proposed = proposed.text;
            passage.problems = proposed.problems;
            passage.rejected = proposed.rejected;
            passage.pass = Some(last_pass.get(&at).copied().unwrap_or(Pass::Translate));
        }
        // A chapter's proposal holds the passages it changes; a passage asked for alone is
        // there whatever came of it.
        if record.index.is_none() {
            texts
                .passages
                .retain(|p| p.proposed != p.current || !p.problems.is_empty());
        }
        store_texts(self, &book.id, &record.id, &texts).await?;
        let q = &output.quality;
        let finish = Finish {
            status: ProposalStatus::Ready,
            error: None,
            at: self.ports.clock.now(),
            engine: Some(engine),
            usage: [q.translate, q.review, q.polish].into_iter().sum(),
            cost_micros,
            passages: texts.passages.len() as u32,
        };
        if self.finish(&book.id, &record.id, &finish).await? {
            info!(
                proposal = %record.id,
                passages = finish.passages,
                flagged = texts.passages.iter().filter(|p| !p.problems.is_empty()).count(),
                "proposal ready"
            );
        } else {
            self.remove_texts(&book.id, &record.id).await;
        }
        Ok(())
    }

    /// The proposal's job could not translate it, for `reason`: it fails, and its words are
    /// given back. What its passes used so far is kept on it.
    pub async fn fail_proposal(
        &self,
        book_id: &str,
        proposal_id: &str,
        reason: &str,
        engine: Option<&str>,
        usage: PassUsage,
        cost_micros: i64,
    ) -> Result<(), DataError> {
        let sk = store::proposal_sk(proposal_id);
        let Some(item) = self.ports.table.get(&store::book_pk(book_id), &sk).await? else {
            return Ok(());
        };
        let record = ProposalRecord::from_item(&item).map_err(Fault::from)?;
        let finish = Finish {
            status: ProposalStatus::Failed,
            error: Some(reason),
            at: self.ports.clock.now(),
            engine,
            usage,
            cost_micros,
            passages: record.passages,
        };
        if self.finish(book_id, proposal_id, &finish).await? {
            warn!(proposal = proposal_id, reason, "re-translation failed");
            self.refund_proposal(&record).await?;
        }
        Ok(())
    }

    /// Writes how the job ended while the proposal is pending; false when it no longer is.
    async fn finish(
        &self,
        book_id: &str,
        proposal_id: &str,
        finish: &Finish<'_>,
    ) -> Result<bool, DataError> {
        let (update, condition) = ProposalRecord::finished(finish);
        let sk = store::proposal_sk(proposal_id);
        match self
            .ports
            .table
            .update(&store::book_pk(book_id), &sk, update, condition)
            .await
        {
            Ok(_) => Ok(true),
            Err(StoreError::Conflict | StoreError::NotFound) => {
                info!(
                    proposal = proposal_id,
                    "proposal no longer pending; its result is dropped"
                );
                Ok(false)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Gives the proposal's words back once, whatever the job's deliveries: the proposal is
    /// marked refunded first, conditionally, and only the delivery that marked it refunds.
    /// Marked before, not after: a failure between the two loses this proposal's refund rather
    /// than giving it twice, which a redelivered job would otherwise do.
    async fn refund_proposal(&self, record: &ProposalRecord) -> Result<(), DataError> {
        let (update, condition) = ProposalRecord::refunded();
        let sk = store::proposal_sk(&record.id);
        match self
            .ports
            .table
            .update(&store::book_pk(&record.book_id), &sk, update, condition)
            .await
        {
            Ok(_) => {}
            Err(StoreError::Conflict) => {
                info!(proposal = %record.id, "proposal's words already given back");
                return Ok(());
            }
            // Gone with its book: nothing is left to give back to.
            Err(StoreError::NotFound) => return Ok(()),
            Err(e) => return Err(e.into()),
        }
        let words = Spend {
            books: 0,
            words: record.words,
        };
        self.usage.refund(&record.by, &record.period, words).await
    }

    /// Checks a request and reads what it would translate.
    async fn plan_retranslation(
        &self,
        user: &User,
        book_id: &str,
        scope: &Scope,
        request: RetranslateRequest,
    ) -> Result<Planned, ProposalError> {
        let book = self
            .books
            .get(&user.id, book_id)
            .await
            .map_err(PassageError::from)?;
        let instruction = instruction(request.instruction)?;
        let model = match request.model {
            Some(model) => model,
            None => match &book.translation_model {
                Some(model) => model.clone(),
                None => self.preferences(&user.id).await?.default_model,
            },
        };
        crate::translation::start::check_model(user, &model)?;
        let (chapter, index) = match scope {
            Scope::Passage(at) => (at.chapter, Some(at.index)),
            Scope::Chapter(number) => (*number, None),
        };
        let source = self.source_of(&book.id, chapter).await?;
        if let Some(index) = index {
            if source.blocks.get(index as usize).is_none() {
                return Err(crate::translation::passages::service::not_found(PassageAt {
                    chapter,
                    index,
                })
                .into());
            }
        }
        let Some(stored) = self.model_text(&book, chapter).await? else {
            return Err(PassageError::Invalid(format!(
                "chapter {chapter} is not translated yet: translate the book first"
            ))
            .into());
        };
        let records = self.passage_records(&book, chapter).await?;
        let indexes: Vec<u32> = match index {
            Some(index) => vec![index],
            None => (0..source.blocks.len() as u32).collect(),
        };
        let mut chosen = Vec::new();
        let mut left_alone = Vec::new();
        for index in indexes {
            let record = records.get(&index);
            if record.is_some_and(|r| r.edit().is_some()) && !request.include_edited {
                left_alone.push(index);
                continue;
            }
            chosen.push(
                self.passage(
                    &book.id,
                    chapter,
                    index as usize,
                    &source.blocks,
                    Some(&stored),
                    record,
                )
                .await?,
            );
        }
        if chosen.is_empty() {
            let what = match index {
                Some(index) => format!("passage {index} of chapter {chapter} is"),
                None => format!("every passage of chapter {chapter} is"),
            };
            return Err(PassageError::Invalid(format!(
                "{what} the owner's text (edited, accepted or kept): ask with includeEdited to \
                 translate it again"
            ))
            .into());
        }
        let blocks: Vec<Block> = chosen
            .iter()
            .filter_map(|p| source.blocks.get(p.index as usize).cloned())
            .collect();
        let words = blocks.iter().map(Block::word_count).sum();
        let engine = self.engine_for(&book.user_id, &model).await?;
        Ok(Planned {
            book,
            model,
            engine,
            instruction,
            chapter,
            index,
            chosen,
            blocks,
            left_alone,
            words,
        })
    }

    /// The proposal's texts, its item, then its job: a job never finds a proposal without
    /// its texts.
    async fn store_new_proposal(
        &self,
        record: &ProposalRecord,
        texts: &ProposalTexts,
    ) -> Result<(), DataError> {
        store_texts(self, &record.book_id, &record.id, texts).await?;
        let (item, condition) = record.to_new_item();
        self.ports.table.put(item, condition).await?;
        let job = Job::Retranslate {
            book_id: record.book_id.clone(),
            proposal_id: record.id.clone(),
        };
        if let Err(e) = job.enqueue(self.ports.queue.as_ref()).await {
            let sk = store::proposal_sk(&record.id);
            let pk = store::book_pk(&record.book_id);
            if let Err(e) = self
                .ports
                .table
                .delete(&pk, &sk, crate::ports::Condition::Exists)
                .await
            {
                warn!(error = %e, "could not remove a proposal whose job was not queued");
            }
            self.remove_texts(&record.book_id, &record.id).await;
            return Err(e);
        }
        Ok(())
    }

    async fn proposal_record(
        &self,
        book_id: &str,
        proposal_id: &str,
    ) -> Result<ProposalRecord, ProposalError> {
        let sk = store::proposal_sk(proposal_id);
        match self.ports.table.get(&store::book_pk(book_id), &sk).await? {
            Some(item) => Ok(ProposalRecord::from_item(&item).map_err(Fault::from)?),
            None => Err(PassageError::NotFound("proposal".into()).into()),
        }
    }

    async fn proposal_texts(
        &self,
        book_id: &str,
        record: &ProposalRecord,
    ) -> Result<ProposalTexts, DataError> {
        let key = store::proposal_key(book_id, &record.id)?;
        self.read_json(&key).await?.ok_or_else(|| {
            Fault::Corrupt {
                what: key.to_string(),
                detail: "the texts of a proposal are missing".into(),
            }
            .into()
        })
    }

    /// The proposal with its passages while they are there (ready, failed with texts).
    async fn with_passages(&self, record: ProposalRecord) -> Result<Proposal, ProposalError> {
        let texts = match record.status {
            ProposalStatus::Ready => Some(self.proposal_texts(&record.book_id, &record).await?),
            _ => None,
        };
        Ok(self.proposal_of(record, texts))
    }

    fn proposal_of(&self, record: ProposalRecord, texts: Option<ProposalTexts>) -> Proposal {
        let passages = texts
            .map(|t| t.passages)
            .unwrap_or_default()
            .into_iter()
            .filter_map(|p| {
                Some(ProposedText {
                    chapter: record.chapter,
                    index: p.index,
                    version: p.version,
                    accepted: record.accepted.contains(&p.index),
                    current: p.current,
                    proposed: p.proposed?,
                    flags: p
                        .problems
                        .iter()
                        .map(|problem| Flag {
                            kind: problem.name(),
                            reason: match p.rejected {
                                true => format!(
                                    "{}; accepting it takes it as it is",
                                    answer_failed(*problem)
                                ),
                                false => reason(*problem),
                            },
                        })
                        .collect(),
                    pass: p.pass.unwrap_or(Pass::Translate),
                    rejected: p.rejected,
                })
            })
            .collect();
        Proposal {
            id: record.id,
            book_id: record.book_id,
            chapter: record.chapter,
            index: record.index,
            instruction: record.instruction,
            model: record.model,
            engine: record.engine,
            include_edited: record.include_edited,
            status: record.status,
            error: record.error,
            created_at: record.created_at,
            finished_at: record.finished_at,
            words: record.words,
            usage: record.usage,
            cost: record.cost_micros as f64 / 1e6,
            left_alone: record.left_alone,
            passage_count: record.passages,
            passages,
        }
    }

    async fn remove_texts(&self, book_id: &str, proposal_id: &str) {
        let removed = match store::proposal_key(book_id, proposal_id) {
            Ok(key) => self.ports.blobs.delete(&key).await,
            Err(e) => Err(e),
        };
        if let Err(e) = removed {
            warn!(book_id, proposal_id, error = %e, "could not remove a proposal's texts");
        }
    }
}

/// What a proposal proposes for one passage.
#[derive(Debug, PartialEq)]
struct Proposed {
    text: Option<String>,
    problems: Vec<Problem>,
    rejected: bool,
}

impl Proposed {
    /// For a passage of source `source`: the pipeline's text and its flags, or, when every
    /// answer failed a check (the text is then the source), the model's last answer and what it
    /// failed, if the book can hold it as the owner's text (the source's marks, well-formed,
    /// within an edit's length, no character the book cannot carry): the owner may take it
    /// knowingly. An answer the book cannot hold, or none, leaves the source, flagged.
    fn of(
        source: &str,
        text: Option<String>,
        flagged: Vec<Problem>,
        rejected: Option<&Rejected>,
    ) -> Proposed {
        match rejected {
            Some(answer)
                if !flagged.is_empty()
                    && crate::translation::passages::checked::check_edit(source, &answer.text)
                        .is_ok() =>
            {
                Proposed {
                    text: Some(answer.text.clone()),
                    problems: answer.problems.clone(),
                    rejected: true,
                }
            }
            _ => Proposed {
                text,
                problems: flagged,
                rejected: false,
            },
        }
    }
}

async fn store_texts(
    translations: &Translations,
    book_id: &str,
    proposal_id: &str,
    texts: &ProposalTexts,
) -> Result<(), DataError> {
    translations
        .put_json(&store::proposal_key(book_id, proposal_id)?, texts)
        .await
}

/// The owner's instruction, trimmed (None when blank), or 400 when it is too long.
fn instruction(raw: Option<String>) -> Result<Option<String>, PassageError> {
    let Some(raw) = raw else { return Ok(None) };
    let trimmed = raw.trim();
    if trimmed.is_empty() {
        return Ok(None);
    }
    if trimmed.chars().count() > MAX_INSTRUCTION_CHARS {
        return Err(PassageError::Invalid(format!(
            "instruction: at most {MAX_INSTRUCTION_CHARS} characters"
        )));
    }
    Ok(Some(trimmed.to_string()))
}

/// What accepting a proposal reads once: the book, the proposal, and its chapter's source,
/// model text and passage items.
struct Read<'a> {
    book: &'a Book,
    record: &'a ProposalRecord,
    source: &'a SourceChapter,
    stored: Option<&'a StoredChapter>,
    records: &'a Records,
}

/// Fails unless the proposal is ready and into the book's language now.
fn acceptable(record: &ProposalRecord, book: &Book) -> Result<(), ProposalError> {
    if record.status != ProposalStatus::Ready {
        return Err(ProposalError::NotReady(format!(
            "the proposal is {}: only a ready one can be accepted",
            record.status.as_str()
        )));
    }
    if record.lang != book.target_lang {
        return Err(ProposalError::NotReady(format!(
            "the proposal is a translation into {}, and the book is now translated into {}",
            record.lang, book.target_lang
        )));
    }
    Ok(())
}

/// The passages numbered in `only`, or every passage not accepted yet whose proposed text
/// nothing was found wrong with.
fn chosen_passages<'a>(
    texts: &'a ProposalTexts,
    record: &ProposalRecord,
    only: Option<&[u32]>,
) -> Result<Vec<&'a ProposedPassage>, ProposalError> {
    Ok(match only {
        Some(indexes) => {
            let mut chosen = Vec::new();
            for index in indexes.iter().collect::<BTreeSet<_>>() {
                let passage = texts
                    .passages
                    .iter()
                    .find(|p| p.index == *index)
                    .ok_or_else(|| {
                        PassageError::Invalid(format!(
                            "passages: passage {index} is not in the proposal"
                        ))
                    })?;
                chosen.push(passage);
            }
            chosen
        }
        None => texts
            .passages
            .iter()
            .filter(|p| p.problems.is_empty() && !record.accepted.contains(&p.index))
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::translation::passages::Origin;

    #[test]
    fn a_passage_whose_every_answer_failed_proposes_the_last_answer_if_the_book_can_hold_it() {
        let source = "Call me <i>Ishmael</i>. Some years ago I went to sea.";
        let flagged = vec![Problem::Truncated, Problem::Untranslated];
        let cut = Rejected {
            text: "Llamadme <i>Ismael</i>. Hace unos".into(),
            problems: vec![Problem::Truncated],
        };
        assert_eq!(
            Proposed::of(source, Some(source.into()), flagged.clone(), Some(&cut)),
            Proposed {
                text: Some(cut.text.clone()),
                problems: vec![Problem::Truncated],
                rejected: true,
            }
        );
        // An answer whose marks are not the source's cannot be the owner's text: the source
        // stays, flagged as it was.
        let broken = Rejected {
            text: "Llamadme Ismael. Hace unos años".into(),
            problems: vec![Problem::BrokenMarks],
        };
        let kept = Proposed::of(source, Some(source.into()), flagged.clone(), Some(&broken));
        assert_eq!(kept.text.as_deref(), Some(source));
        assert_eq!((kept.problems, kept.rejected), (flagged.clone(), false));
        // No answer (left out, refused): the source, flagged.
        let none = Proposed::of(source, Some(source.into()), flagged.clone(), None);
        assert!(!none.rejected);
        // A text the checks passed is proposed as it is.
        let passed = Proposed::of(source, Some("Llamadme <i>Ismael</i>.".into()), vec![], None);
        assert_eq!(
            (passed.text.as_deref(), passed.rejected),
            (Some("Llamadme <i>Ismael</i>."), false)
        );
    }

    #[test]
    fn a_text_accepted_with_a_failed_check_keeps_the_check_in_its_origin() {
        let version = crate::translation::passages::record::Version {
            text: Some("v1-ab".into()),
            at: chrono::DateTime::from_timestamp(1_700_000_000, 0).unwrap_or_default(),
            by: "u1".into(),
            from: Some(Provenance::Retranslated {
                model: "gpt-4o".into(),
                pass: Pass::Translate,
                instruction: None,
                proposal: "p1".into(),
                accepted_with: vec![Problem::Truncated],
            }),
            bytes: Some(5),
        };
        match crate::translation::passages::service::owners_origin(&version) {
            Origin::Retranslated { accepted_with, .. } => {
                assert_eq!(accepted_with.len(), 1);
                assert_eq!(accepted_with[0].kind, "truncated");
                assert_eq!(accepted_with[0].reason, "the answer was cut off");
            }
            other => panic!("{other:?}"),
        }
        // Stored without the list (before it existed, or a text the checks passed): none.
        let stored = serde_json::json!({"kind": "retranslated", "model": "m", "pass": "review",
                                        "instruction": null, "proposal": "p2"});
        let read: Provenance = serde_json::from_value(stored).unwrap();
        assert!(
            matches!(read, Provenance::Retranslated { accepted_with, .. } if accepted_with.is_empty())
        );
    }

    #[test]
    fn an_instruction_is_trimmed_blank_is_none_and_too_long_is_refused() {
        assert_eq!(instruction(None).unwrap(), None);
        assert_eq!(instruction(Some("  ".into())).unwrap(), None);
        assert_eq!(
            instruction(Some(" use 'usted' ".into()))
                .unwrap()
                .as_deref(),
            Some("use 'usted'")
        );
        let long = "á".repeat(MAX_INSTRUCTION_CHARS + 1);
        assert!(matches!(
            instruction(Some(long)),
            Err(PassageError::Invalid(m)) if m.starts_with("instruction:")
        ));
    }
}
