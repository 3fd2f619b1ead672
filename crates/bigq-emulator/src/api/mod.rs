//! The operations both wire surfaces serve, independent of encoding: run a query, page
//! its results, look jobs up, and create, read, change and delete datasets and tables.
//!
//! `rest/` decodes JSON into these calls and encodes their answers as JSON; `grpc/v2/`
//! does the same with the BigQuery v2 protobuf messages. Nothing here knows either wire.

pub mod datasets;
pub mod jobs;
pub mod routines;
pub mod tables;

use crate::error::BqError;

/// An opaque etag (both wires send one with every resource).
pub fn etag(seed: i64) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(format!("{seed:x}"))
}

/// The position of one page in a list: the first item and the most items to return.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PageRequest {
    /// Index of the first item.
    pub start: usize,
    /// The most items in the page (`None`: no limit beyond the server's).
    pub max: Option<usize>,
}

impl PageRequest {
    /// A page from BigQuery's `pageToken` (the emulator's tokens are row or item indexes)
    /// and `maxResults`; an empty token is the first page.
    pub fn from_token(token: Option<&str>, max: Option<usize>) -> Result<PageRequest, BqError> {
        let start = match token.filter(|t| !t.is_empty()) {
            None => 0,
            Some(t) => t
                .parse()
                .map_err(|_| BqError::invalid(format!("Invalid page token: {t}")))?,
        };
        Ok(PageRequest { start, max })
    }

    /// Cuts this page out of `items`; the second value is the next page's token, if any.
    pub fn slice<T: Clone>(&self, items: &[T]) -> (Vec<T>, Option<String>) {
        let page: Vec<T> = items
            .iter()
            .skip(self.start)
            .take(self.max.unwrap_or(usize::MAX))
            .cloned()
            .collect();
        let end = self.start.saturating_add(page.len());
        let next = (end < items.len()).then(|| end.to_string());
        (page, next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_cover_items_once_and_name_the_next() {
        let items = [1, 2, 3, 4, 5];
        let p = PageRequest::from_token(None, Some(2)).unwrap();
        assert_eq!(p.slice(&items), (vec![1, 2], Some("2".to_string())));
        let p = PageRequest::from_token(Some("4"), Some(2)).unwrap();
        assert_eq!(p.slice(&items), (vec![5], None));
        let p = PageRequest::from_token(Some(""), None).unwrap();
        assert_eq!(p.slice(&items).0.len(), 5);
        let e = PageRequest::from_token(Some("x"), None).unwrap_err();
        assert_eq!(e.message, "Invalid page token: x");
    }
}
