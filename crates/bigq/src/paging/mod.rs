//! Paging: the pages of a listing or a result fetched one after another with the token the
//! page before gave, as a `Stream` of pages or of their items.

mod pages;

pub use pages::ListStream;
pub(crate) use pages::{ListPage, Paged, Pages};
