//! The error table: every error code Quarry can answer with, its type and its HTTP status.
//!
//! This is the single source of error codes. The engine builds [`Error`]s from these codes,
//! the N-API binding exports [`catalog`] to the TypeScript layer, which renders every error as
//! `{message, code, type, link}` from it. Codes and statuses follow Meilisearch's table.
//!
//! - `table`: the rows themselves (data only), which declare the [`Code`] enum.
//! - `rows`: reading them ([`catalog()`], [`lookup`], [`ErrorType`], [`CodeRow`]).
//! - `error`: the [`Error`] value and [`Result`].
//! - `system`: how failures of the operating system and of LMDB map onto codes
//!   ([`io_error`], and [`heed_error`] behind the `heed` feature).
//!
//! Design decision: the LMDB error mapping lives here, behind a feature, rather than in the
//! engine or the key-value store, because both of them open LMDB environments and this crate is
//! the one that knows codes; each then maps a full map to `database_size_limit_reached` the
//! same way without depending on the other.

mod error;
mod rows;
mod system;
mod table;

pub use error::{Error, Result};
pub use rows::{catalog, link, lookup, CodeRow, ErrorType};
pub use system::{catch_panic, damaged_file, io_error, io_error_in};
#[cfg(feature = "heed")]
pub use system::{damaged_in, heed_error, heed_error_in};
pub use table::Code;
