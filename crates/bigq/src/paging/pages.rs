//! The paginator: a `Stream` of pages, each fetched with the token the page before it gave,
//! either when the consumer asks for it or, read ahead, as soon as the page before arrives.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use futures::{FutureExt, Stream, TryStreamExt};
use tokio::task::JoinHandle;

use crate::error::{Error, ErrorKind, Result};

/// One page: its items and the token of the page after it (`None` on the last page).
#[derive(Debug)]
pub(crate) struct ListPage<T> {
    pub(crate) items: Vec<T>,
    pub(crate) next_page_token: Option<String>,
}

/// A page that names the page after it.
pub(crate) trait Paged: Send + 'static {
    /// The token of the page after this one; `None` on the last page.
    fn next_page_token(&self) -> Option<String>;
}

impl<T: Send + 'static> Paged for ListPage<T> {
    fn next_page_token(&self) -> Option<String> {
        self.next_page_token.clone()
    }
}

impl<T> ListPage<T> {
    /// A page, with an empty token read as "no more pages" (proto3 sends an absent string
    /// as empty, and some servers send `""` in JSON too).
    pub(crate) fn new(items: Vec<T>, next_page_token: Option<String>) -> Self {
        ListPage {
            items,
            next_page_token: next_page_token.filter(|t| !t.is_empty()),
        }
    }
}

type Fetch<P> = Box<dyn FnMut(Option<String>) -> BoxFuture<'static, Result<P>> + Send>;

enum State<P> {
    /// The page with this token (the first page for `None`) is fetched when polled.
    Next(Option<String>),
    /// A fetch polled by the consumer.
    Fetching(BoxFuture<'static, Result<P>>),
    /// A fetch running on its own task, started when the page before arrived.
    Ahead(JoinHandle<Result<P>>),
    Done,
}

/// The pages of a listing or a result, in order. The first error ends the stream.
/// Dropping it stops a fetch that is under way.
pub(crate) struct Pages<P> {
    fetch: Fetch<P>,
    state: State<P>,
    read_ahead: bool,
}

impl<P: Paged> Pages<P> {
    /// Pages fetched one at a time, each when the consumer asks for it; `fetch` gets the
    /// token of the page it fetches (`None` for a listing's first page).
    pub(crate) fn lazy<F, Fut>(first: Option<String>, fetch: F) -> Self
    where
        F: FnMut(Option<String>) -> Fut + Send + 'static,
        Fut: Future<Output = Result<P>> + Send + 'static,
    {
        Pages::new(first, fetch, false)
    }

    /// Pages read ahead: the first page's fetch starts at once, and each next page's as soon
    /// as the page before it arrives, on a task of its own, while the consumer works through
    /// the pages before. Needs a Tokio runtime.
    pub(crate) fn read_ahead<F, Fut>(first: Option<String>, fetch: F) -> Self
    where
        F: FnMut(Option<String>) -> Fut + Send + 'static,
        Fut: Future<Output = Result<P>> + Send + 'static,
    {
        Pages::new(first, fetch, true)
    }

    fn new<F, Fut>(first: Option<String>, mut fetch: F, read_ahead: bool) -> Self
    where
        F: FnMut(Option<String>) -> Fut + Send + 'static,
        Fut: Future<Output = Result<P>> + Send + 'static,
    {
        let mut pages = Pages {
            fetch: Box::new(move |token| fetch(token).boxed()),
            state: State::Done,
            read_ahead,
        };
        pages.state = if read_ahead {
            pages.start(first)
        } else {
            State::Next(first)
        };
        pages
    }

    /// Starts fetching the page after `token`.
    fn start(&mut self, token: Option<String>) -> State<P> {
        let fetching = (self.fetch)(token);
        if self.read_ahead {
            State::Ahead(tokio::spawn(fetching))
        } else {
            State::Fetching(fetching)
        }
    }

    /// The state after `page` arrived: the next page's fetch under way when read ahead.
    fn after(&mut self, page: &P) -> State<P> {
        match page.next_page_token() {
            None => State::Done,
            Some(t) if self.read_ahead => self.start(Some(t)),
            Some(t) => State::Next(Some(t)),
        }
    }
}

impl<P: Paged> Stream for Pages<P> {
    type Item = Result<P>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            let arrived = match &mut this.state {
                State::Done => return Poll::Ready(None),
                State::Next(token) => {
                    let token = token.take();
                    this.state = this.start(token);
                    continue;
                }
                State::Fetching(f) => match f.poll_unpin(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(r) => r,
                },
                State::Ahead(h) => match h.poll_unpin(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Ok(r)) => r,
                    Poll::Ready(Err(e)) => Err(Error::new(
                        ErrorKind::Transport,
                        format!("the page task failed: {e}"),
                    )),
                },
            };
            return Poll::Ready(Some(match arrived {
                Ok(page) => {
                    this.state = this.after(&page);
                    Ok(page)
                }
                Err(e) => {
                    this.state = State::Done;
                    Err(e)
                }
            }));
        }
    }
}

impl<P> Drop for Pages<P> {
    fn drop(&mut self) {
        if let State::Ahead(h) = &self.state {
            h.abort();
        }
    }
}

/// The items of a listing (datasets, tables), page after page: each page is fetched when
/// the items before it have been read. The first error ends the stream.
///
/// A `futures::Stream` of `Result<T>`; [`try_collect`](Self::try_collect) gathers every
/// item.
#[must_use = "a listing does nothing until it is read"]
pub struct ListStream<T> {
    inner: Pin<Box<dyn Stream<Item = Result<T>> + Send>>,
}

impl<T> std::fmt::Debug for ListStream<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ListStream").finish_non_exhaustive()
    }
}

impl<T: Send + 'static> ListStream<T> {
    /// Every item of every page, in order.
    pub(crate) fn new(pages: Pages<ListPage<T>>) -> Self {
        ListStream {
            inner: Box::pin(items(pages)),
        }
    }

    /// A listing that fails with `error` (an id that does not parse) before any page.
    pub(crate) fn failed(error: Error) -> Self {
        ListStream {
            inner: Box::pin(futures::stream::iter([Err(error)])),
        }
    }

    /// Collects every item.
    pub async fn try_collect(self) -> Result<Vec<T>> {
        TryStreamExt::try_collect(self).await
    }
}

impl<T> Stream for ListStream<T> {
    type Item = Result<T>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}

/// Every item of every page, in order.
fn items<T: Send + 'static>(
    pages: Pages<ListPage<T>>,
) -> impl Stream<Item = Result<T>> + Send + Unpin + 'static {
    pages
        .map_ok(|page| futures::stream::iter(page.items.into_iter().map(Ok)))
        .try_flatten()
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use futures::StreamExt;

    use super::*;

    /// Pages of `per` numbers up to `total`, the token being the first number of the page;
    /// `asked` records the tokens fetched.
    fn numbers(
        total: u32,
        per: u32,
        asked: Arc<Mutex<Vec<Option<String>>>>,
    ) -> impl FnMut(Option<String>) -> BoxFuture<'static, Result<ListPage<u32>>> + Send + 'static
    {
        move |token| {
            asked.lock().unwrap().push(token.clone());
            let start: u32 = token.map_or(0, |t| t.parse().unwrap());
            let end = (start + per).min(total);
            let next = (end < total).then(|| end.to_string());
            async move { Ok(ListPage::new((start..end).collect(), next)) }.boxed()
        }
    }

    #[tokio::test]
    async fn lazy_pages_are_fetched_as_their_items_are_consumed() {
        let asked = Arc::new(Mutex::new(Vec::new()));
        let mut items = items(Pages::lazy(None, numbers(10, 4, asked.clone())));
        assert!(
            asked.lock().unwrap().is_empty(),
            "nothing fetched before a poll"
        );
        assert_eq!(items.next().await.unwrap().unwrap(), 0);
        assert_eq!(
            asked.lock().unwrap().len(),
            1,
            "one page for the first item"
        );
        let rest: Vec<u32> = items.try_collect().await.unwrap();
        assert_eq!(rest, (1..10).collect::<Vec<_>>());
        assert_eq!(
            *asked.lock().unwrap(),
            [None, Some("4".into()), Some("8".into())]
        );
    }

    #[tokio::test]
    async fn read_ahead_starts_the_next_page_when_one_arrives() {
        let asked = Arc::new(Mutex::new(Vec::new()));
        let mut pages = Pages::read_ahead(Some("2".into()), numbers(9, 3, asked.clone()));
        tokio::task::yield_now().await;
        assert_eq!(
            *asked.lock().unwrap(),
            [Some("2".into())],
            "the first page is on its way before it is asked for"
        );
        let first = pages.next().await.unwrap().unwrap();
        assert_eq!(first.items, [2, 3, 4]);
        tokio::task::yield_now().await;
        assert_eq!(
            *asked.lock().unwrap(),
            [Some("2".into()), Some("5".into())],
            "the page after the first is on its way before it is asked for"
        );
        let all: Vec<Vec<u32>> = pages.map_ok(|p| p.items).try_collect().await.unwrap();
        assert_eq!(all, [vec![5, 6, 7], vec![8]]);
    }

    #[tokio::test]
    async fn an_error_ends_the_pages() {
        let mut calls = 0;
        let pages = Pages::lazy(None, move |_| {
            calls += 1;
            let page = if calls == 1 {
                Ok(ListPage::new(vec![1], Some("next".into())))
            } else {
                Err(Error::config("no"))
            };
            async move { page }
        });
        let got: Vec<Result<u32>> = items(pages).collect().await;
        assert_eq!(got.len(), 2);
        assert_eq!(*got[0].as_ref().unwrap(), 1);
        assert!(got[1].is_err());
    }
}
