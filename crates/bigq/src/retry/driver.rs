//! The retry driver: the attempts of one operation under a [`RetryPolicy`], the decision
//! after each failure (retryable? attempts left? time left?), the wait (the server's hint,
//! or exponential backoff with full jitter), and the attempts and time recorded on the
//! error given up with.
//!
//! Unary calls run through [`run`]. Streams that resume where they broke (Storage Read,
//! Storage Write, query result pages) keep an [`Attempts`] next to their own loop and
//! [`reset`](Attempts::reset) it whenever they make progress, so the policy bounds failures
//! in a row rather than over a whole read.
//!
//! Deadlines live here too: [`Attempts::within`] bounds one attempt by the policy's
//! `attempt_timeout` (plus any wait the request asks the server for) and by what is left of
//! `total_timeout`; streams bound each wait for a message by `idle_timeout`
//! ([`Attempts::idle`]). An attempt that runs out of time is retried like a retryable
//! failure; the overall deadline ends the call.

use std::future::Future;
use std::time::{Duration, Instant};

use super::policy::RetryPolicy;
use crate::error::{Deadline, Error, Result};

/// A failed attempt: the error, and whether the operation may be attempted again (the error
/// is retryable and sending again is safe).
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) error: Error,
    pub(crate) retryable: bool,
}

impl Failure {
    /// Attempted again when the error [is retryable](Error::is_retryable).
    pub(crate) fn of(error: Error) -> Self {
        Failure {
            retryable: error.is_retryable(),
            error,
        }
    }

    /// Not attempted again.
    #[cfg(test)]
    pub(crate) fn fatal(error: Error) -> Self {
        Failure {
            error,
            retryable: false,
        }
    }
}

/// The attempts of one operation: how many were made, since when, and whether another may
/// start.
#[derive(Debug, Clone)]
pub(crate) struct Attempts {
    policy: RetryPolicy,
    started: Instant,
    /// The attempt under way or just failed: 1 for the first.
    attempt: u32,
}

impl Attempts {
    /// The first attempt, starting now.
    pub(crate) fn new(policy: &RetryPolicy) -> Self {
        Attempts {
            policy: policy.clone(),
            started: Instant::now(),
            attempt: 1,
        }
    }

    /// The attempt under way: 1 for the first.
    pub(crate) fn attempt(&self) -> u32 {
        self.attempt
    }

    /// No new attempt starts after this instant.
    pub(crate) fn deadline(&self) -> Instant {
        self.started + self.policy.total_timeout
    }

    /// Awaits one attempt, `fut`, for at most the policy's `attempt_timeout` plus
    /// `server_wait` (the time the request asks the server to hold it, as `jobs.query`'s
    /// `timeoutMs` does), and never past the [deadline](Self::deadline). Running out of the
    /// first is a retryable failure; running out of the second is not.
    pub(crate) async fn within<T>(
        &self,
        server_wait: Duration,
        what: &str,
        fut: impl Future<Output = std::result::Result<T, Failure>>,
    ) -> std::result::Result<T, Failure> {
        let limit = self.policy.attempt_timeout.saturating_add(server_wait);
        let left = self.deadline().saturating_duration_since(Instant::now());
        let (limit, deadline, shown) = if limit < left {
            (limit, Deadline::Attempt, limit)
        } else {
            (left, Deadline::Total, self.policy.total_timeout)
        };
        match tokio::time::timeout(limit, fut).await {
            Ok(result) => result,
            Err(_) => Err(Failure {
                error: Error::deadline_passed(deadline, shown, what),
                retryable: deadline == Deadline::Attempt,
            }),
        }
    }

    /// Awaits the next message of a stream, `fut`, for at most the policy's
    /// `idle_timeout`: `None` when nothing came in time (a retryable failure, which
    /// [`idle_error`](Self::idle_error) describes).
    pub(crate) async fn idle<T>(&self, fut: impl Future<Output = T>) -> Option<T> {
        tokio::time::timeout(self.policy.idle_timeout, fut)
            .await
            .ok()
    }

    /// The error of a stream that sent nothing for the idle timeout.
    pub(crate) fn idle_error(&self, what: &str) -> Error {
        Error::deadline_passed(Deadline::Idle, self.policy.idle_timeout, what)
    }

    /// After the attempt under way failed with `error`: the wait before the next one (the
    /// server's [hint](Error::retry_delay), or the policy's backoff), or `None` to give up
    /// (not `retryable`, no attempts left, or the next one would start after the
    /// [deadline](Self::deadline)).
    pub(crate) fn retry(&mut self, error: &Error, retryable: bool) -> Option<Duration> {
        if !retryable || self.attempt >= self.policy.max_attempts {
            return None;
        }
        let wait = error
            .retry_delay()
            .unwrap_or_else(|| self.policy.backoff(self.attempt));
        if Instant::now() + wait > self.deadline() {
            return None;
        }
        self.attempt += 1;
        Some(wait)
    }

    /// The operation made progress (a stream delivered rows, a request was confirmed): the
    /// next failure counts as the first, and the time limit starts again.
    pub(crate) fn reset(&mut self) {
        self.started = Instant::now();
        self.attempt = 1;
    }

    /// `error`, given up with: the attempts made and the time they took are recorded on it
    /// when there was more than one.
    pub(crate) fn give_up(&self, error: Error) -> Error {
        if self.attempt > 1 {
            error.with_attempts(self.attempt, self.started.elapsed())
        } else {
            error
        }
    }
}

/// Runs `attempt` until it succeeds or the policy gives up, waiting between attempts.
/// `what` names the operation in logs.
pub(crate) async fn run<T, Fut>(
    policy: &RetryPolicy,
    what: &str,
    attempt: impl FnMut() -> Fut,
) -> Result<T>
where
    Fut: Future<Output = std::result::Result<T, Failure>>,
{
    run_waiting(policy, what, Duration::ZERO, attempt).await
}

/// [`run`] for a request that asks the server to hold it for up to `server_wait` (a long
/// poll): each attempt may take that much longer.
pub(crate) async fn run_waiting<T, Fut>(
    policy: &RetryPolicy,
    what: &str,
    server_wait: Duration,
    mut attempt: impl FnMut() -> Fut,
) -> Result<T>
where
    Fut: Future<Output = std::result::Result<T, Failure>>,
{
    let mut attempts = Attempts::new(policy);
    loop {
        let failure = match attempts.within(server_wait, what, attempt()).await {
            Ok(value) => return Ok(value),
            Err(failure) => failure,
        };
        match attempts.retry(&failure.error, failure.retryable) {
            Some(wait) => {
                tracing::debug!(
                    attempt = attempts.attempt() - 1,
                    error = %failure.error,
                    ?wait,
                    what,
                    "retrying"
                );
                tokio::time::sleep(wait).await;
            }
            None => return Err(attempts.give_up(failure.error)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;

    use super::*;
    use crate::error::ErrorKind;

    fn fast(attempts: u32) -> RetryPolicy {
        RetryPolicy::default()
            .with_max_attempts(attempts)
            .with_initial_backoff(Duration::from_millis(1))
            .with_max_backoff(Duration::from_millis(2))
    }

    fn unavailable() -> Error {
        Error::api(503, Some("backendError".into()), "try again")
    }

    #[tokio::test]
    async fn retries_until_success_and_stops_at_the_policy() {
        let calls = Cell::new(0);
        let got = run(&fast(5), "test", || async {
            calls.set(calls.get() + 1);
            if calls.get() < 3 {
                Err(Failure::of(unavailable()))
            } else {
                Ok(calls.get())
            }
        })
        .await
        .unwrap();
        assert_eq!((got, calls.get()), (3, 3));

        calls.set(0);
        let e = run(&fast(4), "test", || async {
            calls.set(calls.get() + 1);
            Err::<(), _>(Failure::of(unavailable()))
        })
        .await
        .unwrap_err();
        assert_eq!((calls.get(), e.attempts()), (4, 4));
        assert!(e.elapsed().is_some() && e.to_string().contains("after 4 attempts"));
    }

    #[tokio::test]
    async fn fatal_failures_and_non_retryable_errors_are_not_retried() {
        let calls = Cell::new(0);
        let e = run(&fast(5), "test", || async {
            calls.set(calls.get() + 1);
            Err::<(), _>(Failure::of(Error::api(
                404,
                Some("notFound".into()),
                "gone",
            )))
        })
        .await
        .unwrap_err();
        assert_eq!((calls.get(), e.attempts(), e.elapsed()), (1, 1, None));
        let e = run(&fast(5), "test", || async {
            calls.set(calls.get() + 1);
            Err::<(), _>(Failure::fatal(unavailable()))
        })
        .await
        .unwrap_err();
        assert_eq!((calls.get(), e.kind()), (2, ErrorKind::Api));
    }

    #[tokio::test]
    async fn the_servers_hint_replaces_the_backoff_and_counts_against_the_time_limit() {
        let hinted = || unavailable().with_retry_delay(Some(Duration::from_millis(30)));
        let mut a = Attempts::new(&fast(5));
        assert_eq!(a.retry(&hinted(), true), Some(Duration::from_millis(30)));
        assert!(a.retry(&unavailable(), true).unwrap() <= Duration::from_millis(2));
        assert_eq!(a.attempt(), 3);
        // A hint that ends after the time limit gives up instead of waiting.
        let mut a = Attempts::new(&fast(5).with_total_timeout(Duration::from_millis(20)));
        assert_eq!(a.retry(&hinted(), true), None);
        assert_eq!(a.give_up(hinted()).attempts(), 1);
    }

    #[tokio::test]
    async fn an_attempt_that_hangs_is_retried_and_the_total_deadline_ends_the_call() {
        let ms = Duration::from_millis;
        let policy = fast(u32::MAX)
            .with_attempt_timeout(ms(100))
            .with_total_timeout(ms(250));
        // The first attempt never answers; the second does.
        let calls = Cell::new(0);
        let got = run(&policy, "hanging call", || async {
            calls.set(calls.get() + 1);
            if calls.get() == 1 {
                std::future::pending::<()>().await;
            }
            Ok::<_, Failure>(calls.get())
        })
        .await
        .unwrap();
        assert_eq!(got, 2);

        // Every attempt hangs: two time out at 100 ms, the third is cut at the 250 ms
        // deadline.
        let started = Instant::now();
        calls.set(0);
        let e = run(&policy, "hanging call", || async {
            calls.set(calls.get() + 1);
            std::future::pending::<std::result::Result<(), Failure>>().await
        })
        .await
        .unwrap_err();
        assert!(e.is_timeout() && !e.is_retryable(), "{e:?}");
        assert_eq!(e.deadline(), Some(Deadline::Total));
        assert_eq!((calls.get(), e.attempts()), (3, 3));
        assert!(
            e.to_string().contains("hanging call: the overall deadline"),
            "{e}"
        );
        assert!(started.elapsed() >= ms(250), "{:?}", started.elapsed());

        // A long poll gets its server wait on top of the attempt timeout.
        calls.set(0);
        let got = run_waiting(&policy, "long poll", ms(100), || async {
            calls.set(calls.get() + 1);
            tokio::time::sleep(ms(150)).await;
            Ok::<_, Failure>(calls.get())
        })
        .await
        .unwrap();
        assert_eq!(got, 1);
    }

    #[tokio::test]
    async fn an_attempt_timeout_is_a_retryable_timeout_naming_its_deadline() {
        let policy = fast(1).with_attempt_timeout(Duration::from_millis(20));
        let e = run(&policy, "quiet server", || {
            std::future::pending::<std::result::Result<(), Failure>>()
        })
        .await
        .unwrap_err();
        assert!(e.is_timeout() && e.is_retryable(), "{e:?}");
        assert_eq!(e.deadline(), Some(Deadline::Attempt));
        assert!(
            e.to_string()
                .contains("quiet server: the attempt deadline (20.0ms) passed"),
            "{e}"
        );
        let a = Attempts::new(&policy.with_idle_timeout(Duration::from_millis(20)));
        assert_eq!(a.idle(std::future::pending::<()>()).await, None);
        assert_eq!(a.idle(async { 7 }).await, Some(7));
        assert_eq!(a.idle_error("ReadRows").deadline(), Some(Deadline::Idle));
    }

    #[test]
    fn progress_starts_the_count_again() {
        let mut a = Attempts::new(&fast(2));
        assert!(a.retry(&unavailable(), true).is_some());
        assert_eq!(a.retry(&unavailable(), true), None);
        a.reset();
        assert!(a.retry(&unavailable(), true).is_some());
        assert_eq!(a.give_up(unavailable()).attempts(), 2);
        assert_eq!(a.retry(&unavailable(), false), None);
    }
}
