//! The per-index document store: one LMDB environment (heed) under `<index>/store`.
//!
//! Databases:
//! - `docs`: internal id (u32, big endian) → the document in the compact encoding of
//!   `codec.rs` (field ids from the `fieldsMap` meta value instead of names).
//! - `ids`: external id (the primary-key value as text) → internal id (u32, big endian),
//!   followed by the CRC-32 of the key and the id.
//! - `meta`: small values, each beside its checksum (see [`Store::get_meta`]): primary key, next internal id, settings, field distribution,
//!   generation, the dirty set not yet in tantivy, the results of the last applied batch,
//!   the fields map (field names by id, append-only), the documents' compression
//!   dictionary (written once), and the vectors' registry.
//! - `vectors`: the embeddings' HNSW graphs (see [`crate::vectors`]).
//! - `texts`: (embedder id, internal id) → a hash of the text the embedder last embedded for
//!   that document, so an update that renders the same text is not embedded again.

use std::path::Path;

use api_types::{Error, Result};
use heed::byteorder::BE;
use heed::types::{Bytes, Str, U32};
use heed::{Database, Env, EnvOpenOptions, RoTxn, RwTxn, WithoutTls};
use roaring::RoaringBitmap;

use crate::codec::FieldsMap;

pub(crate) type DocsDb = Database<U32<BE>, Bytes>;
/// External id → internal id: see [`Store::internal_id`].
pub(crate) type IdsDb = Database<Str, Bytes>;
pub(crate) type MetaDb = Database<Str, Bytes>;
pub(crate) type TextsDb = Database<Bytes, heed::types::U64<BE>>;

pub(crate) mod keys {
    pub const PRIMARY_KEY: &str = "primaryKey";
    pub const NEXT_ID: &str = "nextId";
    pub const SETTINGS: &str = "settings";
    pub const FIELD_DISTRIBUTION: &str = "fieldDistribution";
    pub const GENERATION: &str = "generation";
    pub const DIRTY: &str = "dirty";
    pub const LAST_BATCH: &str = "lastBatch";
    pub const FIELDS_MAP: &str = "fieldsMap";
    /// The dictionary documents are compressed with (see `codec::compress`), written once.
    pub const DICTIONARY: &str = "docsDictionary";
    /// The layout of the terms tantivy holds (see `Index::open`).
    pub const TEXT_LAYOUT: &str = "textLayout";
    /// The index's pair words (see `text::PairWords`), written once they are chosen.
    pub const PAIR_WORDS: &str = "pairWords";
    /// The paths below the top-level attributes the documents have held (see `FieldsMap`).
    pub const NESTED_PATHS: &str = "nestedPaths";
}

/// The `ids` value of `ext` → `iid`: the id (big endian), then the CRC-32 (little-endian) of
/// the key and the id, so that a value or a key changed in place is found when it is read.
fn id_value(ext: &str, iid: u32) -> [u8; 8] {
    let id = iid.to_be_bytes();
    let mut h = crc32fast::Hasher::new();
    h.update(ext.as_bytes());
    h.update(&id);
    let sum = h.finalize().to_le_bytes();
    [id[0], id[1], id[2], id[3], sum[0], sum[1], sum[2], sum[3]]
}

/// The `meta` key of `key`'s checksum (the CRC-32 of its value, little-endian). LMDB checksums
/// nothing: this finds a value changed in place on a page whose structure is intact.
fn sum_key(key: &str) -> String {
    format!("{key}\u{0}crc32")
}

pub(crate) struct Store {
    pub env: Env<WithoutTls>,
    pub docs: DocsDb,
    pub ids: IdsDb,
    pub meta: MetaDb,
    pub vectors: crate::vectors::VectorStore,
    pub texts: TextsDb,
}

/// Virtual address space reserved for one index's store (LMDB maps lazily; nothing is allocated).
const MAP_SIZE: usize = 64 << 30;

pub(crate) use api_types::heed_error;

/// The bytes of the pages one LMDB database uses.
pub(crate) fn stat_bytes(stat: &heed::DatabaseStat) -> u64 {
    (stat.leaf_pages + stat.branch_pages + stat.overflow_pages) as u64 * stat.page_size as u64
}

impl Store {
    pub fn open(dir: &Path) -> Result<Store> {
        std::fs::create_dir_all(dir).map_err(crate::payload::io_error)?;
        // SAFETY: the environment is opened once per index directory by this process; the
        // TypeScript registry holds exactly one handle per index.
        let env = unsafe {
            EnvOpenOptions::new()
                .read_txn_without_tls()
                .map_size(MAP_SIZE)
                .max_dbs(8)
                .open(dir)
        }
        .map_err(heed_error)?;
        let mut wtxn = env.write_txn().map_err(heed_error)?;
        let docs = env
            .create_database(&mut wtxn, Some("docs"))
            .map_err(heed_error)?;
        let ids = env
            .create_database(&mut wtxn, Some("ids"))
            .map_err(heed_error)?;
        let meta = env
            .create_database(&mut wtxn, Some("meta"))
            .map_err(heed_error)?;
        let vectors = crate::vectors::VectorStore::open(&env, &mut wtxn)?;
        let texts = env
            .create_database(&mut wtxn, Some("texts"))
            .map_err(heed_error)?;
        wtxn.commit().map_err(heed_error)?;
        Ok(Store {
            env,
            docs,
            ids,
            meta,
            vectors,
            texts,
        })
    }

    /// Opens the store in `dir` without write access (`MDB_RDONLY`), beside the process that
    /// writes it: nothing is created or written, and this process's read transactions never
    /// block that writer's commits. A store whose databases are not all there yet (an index
    /// being created) is refused; the caller opens it again later.
    pub fn open_read_only(dir: &Path) -> Result<Store> {
        // SAFETY: as in `open`; the read-only environment is opened once per index directory
        // by this process, and LMDB lets any number of processes read beside one writer.
        let env = unsafe {
            let mut options = EnvOpenOptions::new().read_txn_without_tls();
            options
                .map_size(MAP_SIZE)
                .max_dbs(8)
                .flags(heed::EnvFlags::READ_ONLY);
            options.open(dir)
        }
        .map_err(heed_error)?;
        let rtxn = env.read_txn().map_err(heed_error)?;
        let missing = || {
            Error::internal(format!(
                "the store `{}` has not been created yet",
                dir.display()
            ))
        };
        let docs = env
            .open_database(&rtxn, Some("docs"))
            .map_err(heed_error)?
            .ok_or_else(missing)?;
        let ids = env
            .open_database(&rtxn, Some("ids"))
            .map_err(heed_error)?
            .ok_or_else(missing)?;
        let meta = env
            .open_database(&rtxn, Some("meta"))
            .map_err(heed_error)?
            .ok_or_else(missing)?;
        let vectors =
            crate::vectors::VectorStore::open_existing(&env, &rtxn)?.ok_or_else(missing)?;
        let texts = env
            .open_database(&rtxn, Some("texts"))
            .map_err(heed_error)?
            .ok_or_else(missing)?;
        rtxn.commit().map_err(heed_error)?;
        Ok(Store {
            env,
            docs,
            ids,
            meta,
            vectors,
            texts,
        })
    }

    pub fn read(&self) -> Result<RoTxn<'_, WithoutTls>> {
        self.env.read_txn().map_err(heed_error)
    }

    /// A read transaction that owns its handle on the environment, for what outlives a
    /// request (see [`crate::vectors::table`]).
    pub fn static_read(&self) -> Result<RoTxn<'static, WithoutTls>> {
        self.env.clone().static_read_txn().map_err(heed_error)
    }

    pub fn write(&self) -> Result<RwTxn<'_>> {
        self.env.write_txn().map_err(heed_error)
    }

    /// The `meta` value `key`, checked against its checksum when it has one (values written
    /// before checksums were kept have none).
    pub fn get_meta<'t>(&self, txn: &'t RoTxn, key: &str) -> Result<Option<&'t [u8]>> {
        let Some(value) = self.meta.get(txn, key).map_err(heed_error)? else {
            return Ok(None);
        };
        match self.meta.get(txn, &sum_key(key)).map_err(heed_error)? {
            Some(sum) if sum != crc32fast::hash(value).to_le_bytes() => Err(Error::new(
                api_types::Code::InvalidStoreFile,
                format!("The database file is in an invalid state: the stored value `{key}` does not match its checksum."),
            )),
            _ => Ok(Some(value)),
        }
    }

    /// Writes the `meta` value `key` with its checksum.
    pub fn put_meta(&self, txn: &mut RwTxn, key: &str, value: &[u8]) -> Result<()> {
        let sum = crc32fast::hash(value).to_le_bytes();
        self.meta.put(txn, key, value).map_err(heed_error)?;
        self.meta.put(txn, &sum_key(key), &sum).map_err(heed_error)
    }

    pub fn del_meta(&self, txn: &mut RwTxn, key: &str) -> Result<()> {
        self.meta.delete(txn, key).map_err(heed_error)?;
        self.meta
            .delete(txn, &sum_key(key))
            .map(|_| ())
            .map_err(heed_error)
    }

    /// What reading the stored documents takes: the fields map and the dictionary.
    pub fn fields_map(&self, txn: &RoTxn) -> Result<FieldsMap> {
        FieldsMap::from_json(self.get_meta(txn, keys::FIELDS_MAP)?)?
            .with_dictionary(self.get_meta(txn, keys::DICTIONARY)?)?
            .with_nested(self.get_meta(txn, keys::NESTED_PATHS)?)
    }

    /// Stores `fields`, and its dictionary the first time it has one.
    pub fn put_fields_map(&self, txn: &mut RwTxn, fields: &FieldsMap) -> Result<()> {
        self.put_meta(txn, keys::FIELDS_MAP, &fields.to_json())?;
        if let Some(nested) = fields.nested_to_json() {
            self.put_meta(txn, keys::NESTED_PATHS, &nested)?;
        }
        match fields.dictionary() {
            Some(d) if self.get_meta(txn, keys::DICTIONARY)?.is_none() => {
                self.put_meta(txn, keys::DICTIONARY, d.bytes())
            }
            _ => Ok(()),
        }
    }

    pub fn get_u64(&self, txn: &RoTxn, key: &str) -> Result<u64> {
        Ok(self
            .get_meta(txn, key)?
            .and_then(|b| b.try_into().ok())
            .map(u64::from_be_bytes)
            .unwrap_or(0))
    }

    pub fn get_string(&self, txn: &RoTxn, key: &str) -> Result<Option<String>> {
        Ok(self
            .get_meta(txn, key)?
            .map(|b| String::from_utf8_lossy(b).into_owned()))
    }

    pub fn get_dirty(&self, txn: &RoTxn) -> Result<Option<RoaringBitmap>> {
        match self.get_meta(txn, keys::DIRTY)? {
            None => Ok(None),
            Some(bytes) => RoaringBitmap::deserialize_from(bytes)
                .map(Some)
                .map_err(Error::internal),
        }
    }

    pub fn put_dirty(&self, txn: &mut RwTxn, dirty: &RoaringBitmap) -> Result<()> {
        let mut bytes = Vec::with_capacity(dirty.serialized_size());
        dirty.serialize_into(&mut bytes).map_err(Error::internal)?;
        self.put_meta(txn, keys::DIRTY, &bytes)
    }
}

/// The `texts` key of document `iid` for embedder `id`.
pub(crate) fn text_key(id: u8, iid: u32) -> [u8; 5] {
    let b = iid.to_be_bytes();
    [id, b[0], b[1], b[2], b[3]]
}

/// A stable 64-bit hash of an embedded text (FNV-1a: the same on every build and platform).
pub(crate) fn text_hash(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

impl Store {
    /// The internal id of the document whose primary key is `ext`. A key LMDB cannot hold
    /// (empty, or longer than 511 bytes) names no document, so it is `None`, not an error.
    pub fn internal_id(&self, txn: &RoTxn, ext: &str) -> Result<Option<u32>> {
        if ext.is_empty() || ext.len() > crate::docid::MAX_ID_BYTES {
            return Ok(None);
        }
        let Some(value) = self.ids.get(txn, ext).map_err(heed_error)? else {
            return Ok(None);
        };
        let iid = value
            .get(..4)
            .map(|b| u32::from_be_bytes(b.try_into().expect("four bytes")));
        match (iid, value.len()) {
            // Written before ids carried a checksum.
            (Some(iid), 4) => Ok(Some(iid)),
            (Some(iid), 8) if value == id_value(ext, iid) => Ok(Some(iid)),
            _ => Err(Error::new(
                api_types::Code::InvalidStoreFile,
                format!("The database file is in an invalid state: the internal id of the document `{ext}` does not match its checksum."),
            )),
        }
    }

    /// Records `iid` as the internal id of the document whose primary key is `ext`.
    pub fn put_internal_id(&self, txn: &mut RwTxn, ext: &str, iid: u32) -> Result<()> {
        self.ids
            .put(txn, ext, &id_value(ext, iid))
            .map_err(heed_error)
    }

    /// Forgets every embedded-text hash of embedder `id` (its vectors were dropped).
    pub fn forget_texts(&self, txn: &mut RwTxn, id: u8) -> Result<()> {
        let start = [id, 0, 0, 0, 0];
        let end = [id, 0xff, 0xff, 0xff, 0xff];
        let range = (
            std::ops::Bound::Included(&start[..]),
            std::ops::Bound::Included(&end[..]),
        );
        self.texts
            .delete_range(txn, &range)
            .map(|_| ())
            .map_err(heed_error)
    }
}
