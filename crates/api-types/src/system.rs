//! Failures of the system under Quarry mapped onto codes: I/O errors and, with the `heed`
//! feature, LMDB errors. Used by the engine's store and by the key-value store alike.

use crate::Error;

/// An I/O failure: a full disk and exhausted file descriptors have codes of their own;
/// anything else is `io_error`.
pub fn io_error(e: std::io::Error) -> Error {
    let code = match e.raw_os_error() {
        Some(28) => "no_space_left_on_device",
        Some(24) => "too_many_open_files",
        _ => "io_error",
    };
    Error::new(code, format!("{e}. This error generally happens when you have no space left on device or when your database doesn't have read or write right."))
}

/// An LMDB failure: a full map is `database_size_limit_reached`, an I/O failure goes through
/// [`io_error`], anything else is internal.
#[cfg(feature = "heed")]
pub fn heed_error(e: heed::Error) -> Error {
    match e {
        heed::Error::Mdb(heed::MdbError::MapFull) => Error::new(
            "database_size_limit_reached",
            "Maximum database size has been reached.",
        ),
        heed::Error::Io(io) => io_error(io),
        other => Error::internal(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_full_disk_has_its_own_code() {
        assert_eq!(
            io_error(std::io::Error::from_raw_os_error(28)).code,
            "no_space_left_on_device"
        );
        assert_eq!(io_error(std::io::Error::other("boom")).code, "io_error");
    }

    #[cfg(feature = "heed")]
    #[test]
    fn test_full_map_is_a_size_limit() {
        let e = heed_error(heed::Error::Mdb(heed::MdbError::MapFull));
        assert_eq!(e.code, "database_size_limit_reached");
    }
}
