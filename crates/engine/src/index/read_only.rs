//! An index opened read-only, beside the process that writes it (another Node process of the
//! same app: `Quarry.open(dir, { readOnly: true })`).
//!
//! Nothing is written and nothing recovered: LMDB is opened `MDB_RDONLY` (its readers never
//! block the writer's commit), tantivy's directory without a writer. The writer commits LMDB
//! (generation G) and then tantivy (payload G), see [`super::update::commit`]; this process
//! follows it by reading the generation in each read transaction ([`Index::read_txn`], one
//! LMDB read): when it has moved on, the fields map, tantivy's searcher (new segments decoded
//! as the writer's process does) and the pair words are reloaded, and the per-generation
//! caches, keyed by generation, miss. Until tantivy's payload reaches G (the writer is between
//! its two commits) the reload is tried again by the next read, as the writer's own readers
//! see tantivy's last published commit meanwhile. A merge ([`super::Compaction`]) keeps the
//! generation: searchers are also reloaded once [`RELOAD_EVERY`] has passed, so merged
//! segments are read, and the files the merge replaced are let go, within that bound.
//!
//! The writer deletes the files of merged segments (tantivy's garbage collection knows
//! nothing of other processes). A segment already open here is mapped in memory, and an
//! unlinked file's pages stay readable while mapped; a segment deleted between reading
//! `meta.json` and opening its files fails the reload, which is tried again from the newer
//! `meta.json`, the searcher in use kept meanwhile.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use api_types::{Error, Result};
use heed::{RoTxn, WithoutTls};

use super::open::{schema, with_reader, Parts, TEXT_LAYOUT};
use super::{tv, Index};
use crate::store::{keys, Store};

/// How long a read-only opening searches with the same tantivy searcher at most while the
/// generation stays (a merge changes segments, not the generation).
pub const RELOAD_EVERY: Duration = Duration::from_secs(1);

/// How many times a reload that lost a race with the writer's file deletions is tried again
/// within one read before the searcher in use is kept.
const RELOAD_ATTEMPTS: usize = 4;

/// What a read-only opening knows of the writer's progress.
pub(crate) struct ReadOnly {
    /// 1 + the generation the searcher, fields map and pair words are level with (0: none yet).
    level: AtomicU64,
    /// 1 + the generation of the fields map in use (it only grows).
    fields_at: AtomicU64,
    /// When the searcher was last reloaded; held while reloading (one reload at a time).
    reloaded: Mutex<Instant>,
}

impl Index {
    /// Opens the index in `dir` read-only (see the module): it must have been created by a
    /// writer, with the current layout of its inverted index.
    pub fn open_read_only(dir: impl AsRef<Path>) -> Result<Index> {
        let dir = dir.as_ref().to_path_buf();
        let store = Store::open_read_only(&dir.join("store"))?;
        {
            let rtxn = store.read()?;
            if store.get_u64(&rtxn, keys::TEXT_LAYOUT)? != TEXT_LAYOUT {
                return Err(Error::internal(format!(
                    "the inverted index in `{}` has another layout: the writing process rebuilds it when it opens the index",
                    dir.display()
                )));
            }
        }
        let (schema, fields) = schema();
        let mmap = tantivy::directory::MmapDirectory::open(dir.join("tantivy"))
            .map_err(|e| Error::internal(e.to_string()))?;
        let tantivy = tantivy::Index::open(mmap).map_err(tv)?;
        if tantivy.schema() != schema {
            return Err(Error::internal(
                "the inverted index was written with another schema",
            ));
        }
        let (tantivy, reader) = with_reader(tantivy).map_err(tv)?;
        let index = Index::assemble(Parts {
            dir,
            repaired: None,
            store,
            tantivy,
            reader,
            fields,
            read_only: Some(ReadOnly {
                level: AtomicU64::new(0),
                fields_at: AtomicU64::new(0),
                reloaded: Mutex::new(Instant::now()),
            }),
            merged_at: None,
        });
        drop(index.read_txn()?);
        Ok(index)
    }

    /// Whether this index was opened read-only.
    pub fn is_read_only(&self) -> bool {
        self.read_only.is_some()
    }

    /// A read transaction of the read side. Opened read-only, the index is first brought level
    /// with the generation the transaction sees (see the module).
    pub(crate) fn read_txn(&self) -> Result<RoTxn<'_, WithoutTls>> {
        let rtxn = self.store.read()?;
        if let Some(ro) = &self.read_only {
            self.follow(ro, &rtxn)?;
        }
        Ok(rtxn)
    }

    fn follow(&self, ro: &ReadOnly, rtxn: &RoTxn<WithoutTls>) -> Result<()> {
        let generation = self.store.get_u64(rtxn, keys::GENERATION)?;
        let level = ro.level.load(Ordering::Acquire);
        let behind = level < generation + 1;
        if !behind && ro.reloaded.lock().unwrap().elapsed() < RELOAD_EVERY {
            return Ok(());
        }
        let mut reloaded = ro.reloaded.lock().unwrap();
        let behind = ro.level.load(Ordering::Acquire) < generation + 1;
        if !behind && reloaded.elapsed() < RELOAD_EVERY {
            return Ok(());
        }
        // The fields map is append-only: one read at a newer generation serves older ones.
        if ro.fields_at.load(Ordering::Acquire) < generation + 1 {
            *self.fields_map.write().unwrap() = Arc::new(self.store.fields_map(rtxn)?);
            ro.fields_at.store(generation + 1, Ordering::Release);
        }
        for _ in 0..RELOAD_ATTEMPTS {
            // tantivy's payload first: what is published next is at least as new.
            let Ok(metas) = self.tantivy.load_metas() else {
                continue;
            };
            let payload: u64 = metas.payload.and_then(|p| p.parse().ok()).unwrap_or(0);
            // Level, and no merge since: the searcher (and the caches of its generation) stays.
            if !behind && self.searches_segments(&metas.segments) {
                *reloaded = Instant::now();
                break;
            }
            if self.publish_segments().is_err() {
                continue;
            }
            *reloaded = Instant::now();
            if payload >= generation {
                ro.level.fetch_max(generation + 1, Ordering::AcqRel);
            }
            break;
        }
        self.publish_pair_words()
    }

    /// Whether the searcher in use reads exactly `segments`.
    fn searches_segments(&self, segments: &[tantivy::index::SegmentMeta]) -> bool {
        let searcher = self.reader.searcher();
        let mut live: Vec<_> = searcher
            .segment_readers()
            .iter()
            .map(|r| r.segment_id())
            .collect();
        let mut listed: Vec<_> = segments.iter().map(|m| m.id()).collect();
        live.sort();
        listed.sort();
        live == listed
    }
}
