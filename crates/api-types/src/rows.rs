//! Reading the table: the error types, one row as a struct, and lookup by code.

use crate::Code;

/// The `type` field of an error body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorType {
    InvalidRequest,
    Internal,
    Auth,
    System,
}

impl ErrorType {
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorType::InvalidRequest => "invalid_request",
            ErrorType::Internal => "internal",
            ErrorType::Auth => "auth",
            ErrorType::System => "system",
        }
    }
}

/// One row of the table.
#[derive(Debug, Clone, Copy)]
pub struct CodeRow {
    pub code: &'static str,
    pub error_type: ErrorType,
    pub status: u16,
}

/// Every row of the table, in declaration order.
pub fn catalog() -> impl Iterator<Item = CodeRow> {
    Code::ALL.iter().map(|&code| CodeRow {
        code: code.as_str(),
        error_type: code.error_type(),
        status: code.status(),
    })
}

/// Where an error's `link` points: the documentation of its code.
pub fn link(code: &str) -> String {
    format!("https://docs.meilisearch.com/errors#{code}")
}

/// Looks one code up by the name clients see.
pub fn lookup(code: &str) -> Option<CodeRow> {
    catalog().find(|r| r.code == code)
}

/// A code is written as its name wherever it is serialized (`{"code": "index_not_found"}`).
impl serde::Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Code {
    /// The code a client named (`index_not_found`), as one answered by another instance.
    pub fn parse(name: &str) -> Option<Code> {
        Code::ALL.iter().copied().find(|c| c.as_str() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn codes_are_unique_and_snake_case() {
        let mut seen = HashSet::new();
        for row in catalog() {
            assert!(seen.insert(row.code), "duplicate {}", row.code);
            assert!(row
                .code
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'));
        }
        assert_eq!(seen.len(), 292);
    }

    #[test]
    fn each_variant_is_its_code_in_camel_case() {
        for &code in Code::ALL {
            let camel: String = code
                .as_str()
                .split('_')
                .map(|p| p[..1].to_ascii_uppercase() + &p[1..])
                .collect();
            assert_eq!(format!("{code:?}"), camel);
            assert_eq!(Code::parse(code.as_str()), Some(code));
        }
        assert_eq!(Code::parse("not_a_code"), None);
    }

    #[test]
    fn statuses_match_meilisearch() {
        assert_eq!(Code::IndexNotFound.status(), 404);
        assert_eq!(Code::InvalidApiKey.error_type(), ErrorType::Auth);
        assert_eq!(Code::PayloadTooLarge.status(), 413);
        assert_eq!(Code::MalformedPayload.status(), 400);
        assert_eq!(Code::TooManySearchRequests.status(), 503);
        assert!(lookup("not_a_code").is_none());
    }
}
