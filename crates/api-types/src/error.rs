//! The error value every layer passes around: a code of the table and the client's message.

use std::fmt;

use crate::Code;

/// A user-facing error: a code of the table and a message for the client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub code: Code,
    pub message: String,
}

impl Error {
    /// Builds an error.
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
        }
    }

    /// Another instance's answer that is not a federated search response (`body`, shown cut):
    /// what the instance asking (`outbound::instance`) and the merge reading it (the engine)
    /// both report.
    pub fn remote_bad_response(body: &[u8]) -> Self {
        let shown: String = String::from_utf8_lossy(body).chars().take(200).collect();
        Error::new(
            Code::RemoteBadResponse,
            format!("could not parse response from the remote host as a federated search response:\n  - response from remote: {shown}\n  - hint: check that the remote instance is a Meilisearch instance running the same version"),
        )
    }

    /// An internal failure (500).
    pub fn internal(message: impl fmt::Display) -> Self {
        Error::new(Code::Internal, message.to_string())
    }

    /// The error as the body a client receives: `{"message","code","type","link"}`.
    pub fn body(&self) -> serde_json::Value {
        serde_json::json!({
            "message": self.message,
            "code": self.code.as_str(),
            "type": self.code.error_type().as_str(),
            "link": crate::link(self.code.as_str()),
        })
    }

    /// The error as JSON `{"code","message"}` (what the binding hands to TypeScript inside results).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({ "code": self.code.as_str(), "message": self.message })
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T, E = Error> = std::result::Result<T, E>;
