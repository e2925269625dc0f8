//! The error value every layer passes around: a code of the table and the client's message.

use std::fmt;

use crate::lookup;

/// A user-facing error: a code of the table and a message for the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub code: &'static str,
    pub message: String,
}

impl Error {
    /// Builds an error. In debug builds, an unknown code panics so that typos surface in tests.
    pub fn new(code: &'static str, message: impl Into<String>) -> Self {
        debug_assert!(
            lookup(code).is_some(),
            "error code `{code}` is not in the table"
        );
        Error {
            code,
            message: message.into(),
        }
    }

    /// An internal failure (500).
    pub fn internal(message: impl fmt::Display) -> Self {
        Error::new("internal", message.to_string())
    }

    /// The error as the body a client receives: `{"message","code","type","link"}`.
    pub fn body(&self) -> serde_json::Value {
        let kind = lookup(self.code).map_or("internal", |r| r.error_type.as_str());
        serde_json::json!({
            "message": self.message,
            "code": self.code,
            "type": kind,
            "link": crate::link(self.code),
        })
    }

    /// The error as JSON `{"code","message"}` (what the binding hands to TypeScript inside results).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({ "code": self.code, "message": self.message })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;
