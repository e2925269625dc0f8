//! Documents compressed with a zstd dictionary trained on the index's own documents.
//!
//! A catalogue row encodes to about a hundred bytes: too short for a compressor to find
//! repeats within it, but its field ids, tags and common values repeat from one document to
//! the next. A dictionary of those, trained once per index on its first
//! [`TRAINING_SAMPLES`] documents, takes PyPI's stored documents from 93 to about 60 MB.
//! The frames carry their content size and zstd's content checksum (LMDB checksums nothing:
//! a frame changed in place fails to decompress), but no dictionary id (an index has one).
//!
//! The dictionary is written once and never replaced: every compressed document of an index
//! is read with the one it holds (see [`super::FieldsMap`]).

use std::cell::{Cell, RefCell};
use std::fmt;

use api_types::{Error, Result};
use zstd::zstd_safe::{CCtx, CDict, CParameter, DCtx, DDict};

/// How many encoded documents the dictionary is trained on (about 400 KB of catalogue rows).
pub(crate) const TRAINING_SAMPLES: usize = 4_096;

/// The largest dictionary trained: past this, PyPI's documents shrink by under 1%.
const MAX_DICTIONARY: usize = 64 << 10;

/// zstd's default: a tenth of what level 9 costs to compress, 3% larger on PyPI's rows.
const LEVEL: i32 = 3;

/// The largest document a frame may claim to hold (a corrupt header must not allocate more).
const MAX_DOCUMENT: u64 = 1 << 30;

/// A trained dictionary, digested for compressing and for decompressing.
pub(crate) struct Dictionary {
    bytes: Vec<u8>,
    compress: CDict<'static>,
    decompress: DDict<'static>,
}

impl fmt::Debug for Dictionary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Dictionary({} bytes)", self.bytes.len())
    }
}

impl PartialEq for Dictionary {
    fn eq(&self, other: &Dictionary) -> bool {
        self.bytes == other.bytes
    }
}

thread_local! {
    static COMPRESSOR: RefCell<CCtx<'static>> = RefCell::new(compressor());
    static DECOMPRESSOR: RefCell<DCtx<'static>> = RefCell::new(DCtx::create());
    static SCRATCH: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
}

/// The largest decompression buffer a thread keeps between documents.
const SCRATCH_KEPT: usize = 64 << 10;

fn compressor() -> CCtx<'static> {
    let mut c = CCtx::create();
    for p in [
        CParameter::ContentSizeFlag(true),
        CParameter::ChecksumFlag(true),
        CParameter::DictIdFlag(false),
    ] {
        c.set_parameter(p).expect("a valid frame parameter");
    }
    c
}

fn zstd_error(code: usize) -> Error {
    Error::internal(format!(
        "document compression: {}",
        zstd::zstd_safe::get_error_name(code)
    ))
}

impl Dictionary {
    /// A dictionary from its stored bytes.
    pub fn load(bytes: &[u8]) -> Result<Dictionary> {
        let decompress = DDict::try_create(bytes)
            .ok_or_else(|| Error::internal("the documents' dictionary is corrupt"))?;
        Ok(Dictionary {
            bytes: bytes.to_vec(),
            compress: CDict::try_create(bytes, LEVEL)
                .ok_or_else(|| Error::internal("the documents' dictionary is corrupt"))?,
            decompress,
        })
    }

    /// A dictionary trained on `samples` (encoded documents), or `None` when zstd finds
    /// nothing worth one in them (too few or too alike).
    pub fn train(samples: &[Vec<u8>]) -> Option<Dictionary> {
        let total: usize = samples.iter().map(Vec::len).sum();
        // zstd wants several times the dictionary's size in samples.
        let size = (total / 8).min(MAX_DICTIONARY);
        let bytes = zstd::dict::from_samples(samples, size).ok()?;
        Dictionary::load(&bytes).ok()
    }

    /// The bytes stored, to load it back.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Appends `plain` compressed to `out`.
    pub fn compress(&self, plain: &[u8], out: &mut Vec<u8>) -> Result<()> {
        let start = out.len();
        out.resize(start + zstd::zstd_safe::compress_bound(plain.len()), 0);
        let written = COMPRESSOR.with_borrow_mut(|c| {
            c.ref_cdict(&self.compress).map_err(zstd_error)?;
            let written = c.compress2(&mut out[start..], plain).map_err(zstd_error);
            // The context keeps no pointer to a dictionary that may be dropped.
            c.disable_dictionary().map_err(zstd_error)?;
            written
        })?;
        out.truncate(start + written);
        Ok(())
    }

    /// Calls `f` with `frame` decompressed.
    pub fn decompress<T>(&self, frame: &[u8], f: impl FnOnce(&[u8]) -> Result<T>) -> Result<T> {
        let size = match zstd::zstd_safe::get_frame_content_size(frame) {
            Ok(Some(n)) if n <= MAX_DOCUMENT => n as usize,
            _ => return Err(super::corrupt()),
        };
        // A buffer kept per thread: a filter's or a column's pass reads every document.
        let mut plain = SCRATCH.take();
        plain.clear();
        plain.reserve(size);
        let done = DECOMPRESSOR.with_borrow_mut(|d| {
            d.decompress_using_ddict(&mut plain, frame, &self.decompress)
                .map_err(|_| super::corrupt())
        });
        let out = done.and_then(|_| f(&plain));
        if plain.capacity() <= SCRATCH_KEPT {
            SCRATCH.set(plain);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(n: usize) -> Vec<Vec<u8>> {
        (0..n)
            .map(|i| {
                format!(
                    "\u{1}\u{0}\u{3}{i}\u{1}\u{3}package-{}\u{2}\u{3}A library for {} things",
                    i % 97,
                    ["parsing", "testing", "serving", "plotting"][i % 4]
                )
                .into_bytes()
            })
            .collect()
    }

    #[test]
    fn a_trained_dictionary_compresses_rows_and_reads_them_back_once_reloaded() {
        let samples = rows(TRAINING_SAMPLES);
        let dict = Dictionary::train(&samples).expect("rows alike enough to train on");
        let reloaded = Dictionary::load(dict.bytes()).unwrap();
        assert_eq!(reloaded, dict);
        let (mut plain, mut packed) = (0, 0);
        for row in rows(500) {
            let mut out = Vec::new();
            dict.compress(&row, &mut out).unwrap();
            plain += row.len();
            packed += out.len();
            let back = reloaded.decompress(&out, |p| Ok(p.to_vec())).unwrap();
            assert_eq!(back, row);
        }
        // Under half, but for the 4-byte checksum each frame carries.
        assert!(
            (packed - 4 * 500) * 2 < plain,
            "{packed} bytes from {plain}"
        );
    }

    #[test]
    fn a_corrupt_frame_is_an_error_not_a_panic() {
        let dict = Dictionary::train(&rows(TRAINING_SAMPLES)).unwrap();
        let mut out = Vec::new();
        dict.compress(b"\x01\x00\x03\x05hello", &mut out).unwrap();
        for cut in 0..out.len() {
            let _ = dict.decompress(&out[..cut], |p| Ok(p.len()));
        }
        let mut flipped = out.clone();
        let last = flipped.len() - 1;
        flipped[last] ^= 0xff;
        let _ = dict.decompress(&flipped, |p| Ok(p.len()));
        assert!(dict
            .decompress(&[0x28, 0xb5, 0x2f, 0xfd], |_| Ok(()))
            .is_err());
        assert!(dict.decompress(&[], |_| Ok(())).is_err());
    }
}
