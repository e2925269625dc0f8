//! Reading the table: the error types, one row as a struct, and lookup by code.

use crate::table::TABLE;

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
    TABLE.iter().map(|&(code, error_type, status)| CodeRow {
        code,
        error_type,
        status,
    })
}

/// Where an error's `link` points: the documentation of its code.
pub fn link(code: &str) -> String {
    format!("https://docs.meilisearch.com/errors#{code}")
}

/// Looks one code up.
pub fn lookup(code: &str) -> Option<CodeRow> {
    catalog().find(|r| r.code == code)
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
        assert_eq!(seen.len(), 291);
    }

    #[test]
    fn statuses_match_meilisearch() {
        assert_eq!(lookup("index_not_found").unwrap().status, 404);
        assert_eq!(
            lookup("invalid_api_key").unwrap().error_type,
            ErrorType::Auth
        );
        assert_eq!(lookup("payload_too_large").unwrap().status, 413);
        assert_eq!(lookup("malformed_payload").unwrap().status, 400);
        assert_eq!(lookup("too_many_search_requests").unwrap().status, 503);
        assert!(lookup("not_a_code").is_none());
    }
}
