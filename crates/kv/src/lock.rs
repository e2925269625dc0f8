//! One process per data directory: an exclusive advisory lock on `<dir>/quarry.lock`, held
//! while the directory is open (by the server or by the embedded library).
//!
//! LMDB itself would let a second process open the same environments, and tantivy refuses a
//! second writer only when it first writes: two Quarry processes on one directory would each
//! run their own task queue over the same stores. The lock makes the second one fail at once
//! with a message that says which process holds the directory. It is the operating system's
//! file lock (`flock` on Unix), so it is released when the holder exits, even by `kill -9`;
//! a stale lock file never blocks a restart.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;

use api_types::{io_error, Error, Result};

/// The lock file's name inside the data directory.
pub const LOCK_FILE: &str = "quarry.lock";

/// A held lock; dropping it releases the directory.
#[derive(Debug)]
pub struct DirLock {
    file: File,
}

impl DirLock {
    /// Locks `dir` (which must exist) for this process, writing its pid in the lock file.
    /// Fails with `internal` and a message naming the holder's pid when another process
    /// (or another open of this process) holds it.
    pub fn acquire(dir: &Path) -> Result<DirLock> {
        let path = dir.join(LOCK_FILE);
        let mut file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&path)
            .map_err(io_error)?;
        match file.try_lock() {
            Ok(()) => {}
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim();
                let who = if holder.is_empty() {
                    String::from("another process")
                } else if holder == std::process::id().to_string() {
                    String::from("this process (it is already open here)")
                } else {
                    format!("another process (pid {holder})")
                };
                return Err(Error::internal(format!(
                    "The data directory `{}` is in use by {who}. Only one Quarry server or library may open a data directory at a time: stop the other one, or choose another directory.",
                    dir.display()
                )));
            }
            Err(TryLockError::Error(e)) => return Err(io_error(e)),
        }
        file.set_len(0).map_err(io_error)?;
        file.seek(SeekFrom::Start(0)).map_err(io_error)?;
        write!(file, "{}", std::process::id()).map_err(io_error)?;
        file.flush().map_err(io_error)?;
        Ok(DirLock { file })
    }

    /// Releases the lock now (dropping the value does the same).
    pub fn release(self) {
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_on_the_same_directory_is_refused_until_the_first_is_released() {
        let dir = tempfile::tempdir().unwrap();
        let first = DirLock::acquire(dir.path()).unwrap();
        let err = DirLock::acquire(dir.path()).unwrap_err();
        assert!(
            err.to_string().contains("is in use by this process"),
            "{err}"
        );
        first.release();
        DirLock::acquire(dir.path()).unwrap();
    }
}
