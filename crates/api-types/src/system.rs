//! Failures of the system under Quarry mapped onto codes: I/O errors and, with the `heed`
//! feature, LMDB errors, used by the engine's store and by the key-value store alike; and a
//! panic, which [`catch_panic`] turns into an internal error.

use crate::{Code, Error};

/// An I/O failure: a full disk and exhausted file descriptors have codes of their own;
/// anything else is `io_error`.
pub fn io_error(e: std::io::Error) -> Error {
    let code = match e.raw_os_error() {
        Some(28) => Code::NoSpaceLeftOnDevice,
        Some(24) => Code::TooManyOpenFiles,
        _ => Code::IoError,
    };
    Error::new(code, format!("{e}. This error generally happens when you have no space left on device or when your database doesn't have read or write right."))
}

/// An I/O failure while writing into `dir`: as [`io_error`], except that an `EIO` on a
/// filesystem left with less than 4 MiB is the full disk it is (LMDB's copy reports a write
/// the disk cut short as `EIO`).
pub fn io_error_in(e: std::io::Error, dir: &std::path::Path) -> Error {
    if e.raw_os_error() == Some(libc::EIO) && space_left(dir).is_some_and(|bytes| bytes < 4 << 20) {
        return io_error(std::io::Error::from_raw_os_error(libc::ENOSPC));
    }
    io_error(e)
}

/// The bytes an unprivileged writer may still use on the filesystem holding `dir`.
fn space_left(dir: &std::path::Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: `path` is NUL-terminated and `st` is a writable `statvfs` that the call fills.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(path.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(st.f_bavail as u64 * st.f_frsize as u64)
}

/// An LMDB failure while writing into `dir` (a copy of an environment): as [`heed_error`], with
/// [`io_error_in`] for its I/O failures.
#[cfg(feature = "heed")]
pub fn heed_error_in(e: heed::Error, dir: &std::path::Path) -> Error {
    match e {
        heed::Error::Io(io) => io_error_in(io, dir),
        other => heed_error(other),
    }
}

/// How the message of a damaged LMDB file starts (Meilisearch's words for `invalid_store_file`);
/// where the file is known, [`damaged_in`] puts its name instead.
#[cfg(feature = "heed")]
const DAMAGED: &str = "The database file is in an invalid state: ";

/// `invalid_store_file` for the file `file`, and what is wrong with it (`why`, a sentence).
pub fn damaged_file(file: &std::path::Path, why: &str) -> Error {
    Error::new(
        Code::InvalidStoreFile,
        format!("The file `{}` is damaged: {why}", file.display()),
    )
}

/// `e`, raised while opening or reading the file `file`, which only Quarry writes: what fails
/// to read or to decode there (a damaged LMDB file, or an internal error) is that file's damage,
/// named with it; any other failure (a full disk, a permission) keeps its code.
#[cfg(feature = "heed")]
pub fn damaged_in(e: Error, file: &std::path::Path) -> Error {
    match e.message.strip_prefix(DAMAGED) {
        Some(why) if e.code == Code::InvalidStoreFile => damaged_file(file, why),
        _ if e.code == Code::Internal => damaged_file(file, &e.message),
        _ => e,
    }
}

/// An LMDB failure: a full map is `database_size_limit_reached`, a damaged file (a page of the
/// wrong type or out of the file, a file that is not LMDB's, or a decoding that fails on what
/// LMDB stored) is Meilisearch's `invalid_store_file`, an I/O failure goes through [`io_error`],
/// anything else is internal.
#[cfg(feature = "heed")]
pub fn heed_error(e: heed::Error) -> Error {
    use heed::MdbError as M;
    match e {
        heed::Error::Mdb(M::MapFull) => Error::new(
            Code::DatabaseSizeLimitReached,
            "Maximum database size has been reached.",
        ),
        heed::Error::Mdb(
            M::Corrupted | M::PageNotFound | M::Invalid | M::VersionMismatch | M::Panic,
        )
        | heed::Error::Decoding(_) => Error::new(Code::InvalidStoreFile, format!("{DAMAGED}{e}.")),
        heed::Error::Io(io) => io_error(io),
        other => Error::internal(other),
    }
}

/// Runs `f`, turning a panic into an `internal` error: a bug that one request reaches fails
/// that request, never the process (a panic unwinding into N-API's C frames would abort it).
/// A lock held by the panicking code is left poisoned, so later calls on it fail the same way.
pub fn catch_panic<T>(f: impl FnOnce() -> Result<T, Error>) -> Result<T, Error> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "a panic without a message".to_string());
        Err(Error::internal(format!("the engine panicked: {what}")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_full_disk_has_its_own_code() {
        assert_eq!(
            io_error(std::io::Error::from_raw_os_error(28)).code,
            Code::NoSpaceLeftOnDevice
        );
        assert_eq!(io_error(std::io::Error::other("boom")).code, Code::IoError);
    }

    #[test]
    fn test_an_eio_is_a_full_disk_only_where_no_space_is_left() {
        // This machine's temporary directory has room: an EIO there stays an I/O error.
        let e = io_error_in(
            std::io::Error::from_raw_os_error(libc::EIO),
            &std::env::temp_dir(),
        );
        assert_eq!(e.code, Code::IoError);
        assert!(space_left(&std::env::temp_dir()).is_some_and(|b| b > 0));
        assert_eq!(space_left(std::path::Path::new("/no/such/dir")), None);
    }

    #[cfg(feature = "heed")]
    #[test]
    fn test_full_map_is_a_size_limit() {
        let e = heed_error(heed::Error::Mdb(heed::MdbError::MapFull));
        assert_eq!(e.code, Code::DatabaseSizeLimitReached);
    }

    #[cfg(feature = "heed")]
    #[test]
    fn test_a_damaged_file_is_an_invalid_store_file() {
        for e in [heed::MdbError::Corrupted, heed::MdbError::Invalid] {
            let e = heed_error(heed::Error::Mdb(e));
            assert_eq!(e.code, Code::InvalidStoreFile);
            assert!(e.message.starts_with(DAMAGED), "{}", e.message);
        }
    }

    #[cfg(feature = "heed")]
    #[test]
    fn test_a_damaged_file_is_named_where_it_is_known() {
        let file = std::path::Path::new("/db/tasks/data.mdb");
        let e = damaged_in(heed_error(heed::Error::Mdb(heed::MdbError::Invalid)), file);
        assert_eq!(e.code, Code::InvalidStoreFile);
        assert!(
            e.message
                .starts_with("The file `/db/tasks/data.mdb` is damaged: MDB_INVALID"),
            "{}",
            e.message
        );
        let e = damaged_in(Error::internal("no main database"), file);
        assert_eq!(e.code, Code::InvalidStoreFile);
        assert!(
            e.message.ends_with("is damaged: no main database"),
            "{}",
            e.message
        );
        let full = damaged_in(io_error(std::io::Error::from_raw_os_error(28)), file);
        assert_eq!(full.code, Code::NoSpaceLeftOnDevice);
    }

    #[test]
    fn test_a_panic_becomes_an_internal_error() {
        let e = catch_panic::<()>(|| panic!("index out of bounds")).unwrap_err();
        assert_eq!(e.code, Code::Internal);
        assert!(e.message.contains("index out of bounds"), "{}", e.message);
        let n: usize = 7;
        let e = catch_panic::<()>(|| panic!("{} items", n)).unwrap_err();
        assert!(e.message.contains("7 items"), "{}", e.message);
        assert_eq!(catch_panic(|| Ok(3)).unwrap(), 3);
    }
}
