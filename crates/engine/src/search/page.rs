//! Pagination: which slice of the ordered hits a request asks for, and the fields that describe
//! it in the response.
//!
//! A request pages in one of two forms: `offset`/`limit` (the response gives an estimated
//! total) or `page`/`hitsPerPage` (exact totals and a page count). `maxTotalHits` caps both the
//! hits reachable and the totals shown. The arithmetic saturates: an enormous page or offset
//! asks for nothing rather than overflowing.

use serde_json::{Map, Value};

use super::SearchQuery;

/// What a request asks of pagination: `offset`/`limit`, or `page`/`hitsPerPage` when either
/// is given. A search reads it from its query, a federated search from `federation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Ask {
    pub offset: usize,
    pub limit: usize,
    pub page: Option<usize>,
    pub hits_per_page: Option<usize>,
}

impl Ask {
    pub(super) fn of(q: &SearchQuery) -> Ask {
        Ask {
            offset: q.offset,
            limit: q.limit,
            page: q.page,
            hits_per_page: q.hits_per_page,
        }
    }
}

/// The slice of the ordered hits a search returns.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Window {
    pub offset: usize,
    pub limit: usize,
}

impl Window {
    /// The window `q` asks for, never reaching past `max_total_hits`.
    pub(super) fn of(q: &SearchQuery, max_total_hits: usize) -> Window {
        Window::asked(Ask::of(q), max_total_hits)
    }

    /// The window of `ask`, never reaching past `max_total_hits`.
    pub(super) fn asked(q: Ask, max_total_hits: usize) -> Window {
        let (offset, limit) = match (q.page, q.hits_per_page) {
            (None, None) => (q.offset, q.limit),
            (page, hpp) => {
                let hpp = hpp.unwrap_or(20);
                let page = page.unwrap_or(1);
                (
                    page.saturating_sub(1).saturating_mul(hpp),
                    if page == 0 { 0 } else { hpp },
                )
            }
        };
        let limit = limit.min(max_total_hits.saturating_sub(offset));
        Window { offset, limit }
    }

    /// How many of the best hits the window needs: everything up to its end.
    pub(super) fn end(self) -> usize {
        self.offset.saturating_add(self.limit)
    }
}

/// The pagination fields of a response, in the form the request used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Pagination {
    /// `limit`, `offset` (as asked) and `estimatedTotalHits`.
    Offset {
        limit: usize,
        offset: usize,
        estimated_total_hits: usize,
    },
    /// `hitsPerPage`, `page`, `totalPages` and `totalHits`.
    Pages {
        hits_per_page: usize,
        page: usize,
        total_pages: usize,
        total_hits: usize,
    },
}

impl Pagination {
    /// The fields for `q` when `candidates` documents matched.
    pub(super) fn of(q: &SearchQuery, candidates: usize, max_total_hits: usize) -> Pagination {
        Pagination::asked(Ask::of(q), candidates.min(max_total_hits))
    }

    /// The fields for `ask` when `total` documents are counted.
    pub(super) fn asked(q: Ask, total: usize) -> Pagination {
        match (q.page, q.hits_per_page) {
            (None, None) => Pagination::Offset {
                limit: q.limit,
                offset: q.offset,
                estimated_total_hits: total,
            },
            (page, hpp) => {
                let hpp = hpp.unwrap_or(20);
                Pagination::Pages {
                    hits_per_page: hpp,
                    page: page.unwrap_or(1),
                    total_pages: if hpp == 0 { 0 } else { total.div_ceil(hpp) },
                    total_hits: total,
                }
            }
        }
    }

    /// Appends the fields to `body`, in the response's order.
    pub(super) fn write(&self, body: &mut Map<String, Value>) {
        match *self {
            Pagination::Offset {
                limit,
                offset,
                estimated_total_hits,
            } => {
                body.insert("limit".into(), limit.into());
                body.insert("offset".into(), offset.into());
                body.insert("estimatedTotalHits".into(), estimated_total_hits.into());
            }
            Pagination::Pages {
                hits_per_page,
                page,
                total_pages,
                total_hits,
            } => {
                body.insert("hitsPerPage".into(), hits_per_page.into());
                body.insert("page".into(), page.into());
                body.insert("totalPages".into(), total_pages.into());
                body.insert("totalHits".into(), total_hits.into());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn query(v: Value) -> SearchQuery {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn test_offset_window_is_capped_by_max_total_hits() {
        let q = query(json!({"offset": 990, "limit": 20}));
        assert_eq!(
            Window::of(&q, 1000),
            Window {
                offset: 990,
                limit: 10
            }
        );
        let q = query(json!({"offset": 2000, "limit": 20}));
        assert_eq!(Window::of(&q, 1000).limit, 0);
    }

    #[test]
    fn test_page_zero_and_huge_pages_ask_for_nothing() {
        let q = query(json!({"page": 0, "hitsPerPage": 5}));
        assert_eq!(
            Window::of(&q, 1000),
            Window {
                offset: 0,
                limit: 0
            }
        );
        let q = query(json!({"page": usize::MAX, "hitsPerPage": usize::MAX}));
        let w = Window::of(&q, 1000);
        assert_eq!((w.offset, w.limit, w.end()), (usize::MAX, 0, usize::MAX));
    }

    #[test]
    fn test_page_fields_count_pages_of_the_capped_total() {
        let q = query(json!({"page": 2, "hitsPerPage": 3}));
        assert_eq!(
            Pagination::of(&q, 10, 1000),
            Pagination::Pages {
                hits_per_page: 3,
                page: 2,
                total_pages: 4,
                total_hits: 10
            }
        );
        let q = query(json!({"hitsPerPage": 0}));
        assert!(matches!(
            Pagination::of(&q, 10, 1000),
            Pagination::Pages {
                total_pages: 0,
                page: 1,
                ..
            }
        ));
    }
}
