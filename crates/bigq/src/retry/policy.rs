//! The retry policy: how many attempts, how long between them, how long each may take, and
//! for how long in all.

use std::time::Duration;

/// How bigq retries a failed request.
///
/// A request is retried only when it is safe to send again (reads, and writes that carry a
/// request id or job id) and the failure is [retryable](crate::Error::is_retryable). Waits
/// grow exponentially with full jitter, unless the server says how long to wait (gRPC's
/// `RetryInfo`, HTTP's `Retry-After`), and stop at `max_attempts` or `total_timeout`,
/// whichever comes first. Errors report the attempts made and the time spent.
///
/// Every call ends by a deadline: an attempt that has no answer after `attempt_timeout` is
/// abandoned and retried, a stream (ReadRows, AppendRows, a REST response body) that sends
/// nothing for `idle_timeout` is reopened where it broke, and no attempt starts, or goes on,
/// after `total_timeout`. A timeout error says which deadline passed
/// ([`Error::deadline`](crate::Error::deadline)).
///
/// The defaults follow Google's clients: backoff from 1 s doubling to 32 s, attempts
/// bounded only by a total of 600 s.
///
/// The client's policy ([`ClientBuilder::with_retry_policy`](crate::ClientBuilder::with_retry_policy))
/// covers every RPC, query result page and stream reconnect; a query's job is run again
/// under a policy of its own ([`QueryBuilder::job_retry`](crate::query::QueryBuilder::job_retry)).
///
/// ```
/// use std::time::Duration;
/// use bigq::RetryPolicy;
///
/// let policy = RetryPolicy::default()
///     .with_max_attempts(4)
///     .with_initial_backoff(Duration::from_millis(50))
///     .with_total_timeout(Duration::from_secs(30));
/// assert_eq!(policy.max_attempts, 4);
/// assert_eq!(policy.max_backoff, RetryPolicy::default().max_backoff);
/// assert_eq!(RetryPolicy::never().max_attempts, 1);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// Attempts in all, including the first (1 disables retries; the default, `u32::MAX`,
    /// leaves the bound to `total_timeout`).
    pub max_attempts: u32,
    /// The wait before the second attempt.
    pub initial_backoff: Duration,
    /// The longest wait between attempts.
    pub max_backoff: Duration,
    /// The factor the wait grows by after each attempt.
    pub multiplier: f64,
    /// No new attempt starts after this much time since the first, and one under way is
    /// abandoned when it passes.
    pub total_timeout: Duration,
    /// The longest one attempt of a unary call may take (a call that asks the server to wait,
    /// such as `jobs.query` with `timeoutMs`, gets that wait on top).
    pub attempt_timeout: Duration,
    /// The longest a stream may send nothing: ReadRows, AppendRows awaiting a response, a
    /// REST response body.
    pub idle_timeout: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_attempts: u32::MAX,
            initial_backoff: Duration::from_secs(1),
            max_backoff: Duration::from_secs(32),
            multiplier: 2.0,
            total_timeout: Duration::from_secs(600),
            attempt_timeout: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// No retries.
    pub fn never() -> Self {
        RetryPolicy {
            max_attempts: 1,
            ..Default::default()
        }
    }

    /// Sets the attempts in all, including the first (1 disables retries).
    pub fn with_max_attempts(mut self, attempts: u32) -> Self {
        self.max_attempts = attempts;
        self
    }

    /// Sets the wait before the second attempt.
    pub fn with_initial_backoff(mut self, wait: Duration) -> Self {
        self.initial_backoff = wait;
        self
    }

    /// Sets the longest wait between attempts.
    pub fn with_max_backoff(mut self, wait: Duration) -> Self {
        self.max_backoff = wait;
        self
    }

    /// Sets the factor the wait grows by after each attempt.
    pub fn with_multiplier(mut self, multiplier: f64) -> Self {
        self.multiplier = multiplier;
        self
    }

    /// Sets the time after the first attempt when no new attempt starts.
    pub fn with_total_timeout(mut self, timeout: Duration) -> Self {
        self.total_timeout = timeout;
        self
    }

    /// Sets the longest one attempt of a unary call may take.
    pub fn with_attempt_timeout(mut self, timeout: Duration) -> Self {
        self.attempt_timeout = timeout;
        self
    }

    /// Sets the longest a stream may send nothing before it is reopened.
    pub fn with_idle_timeout(mut self, timeout: Duration) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// The wait before attempt `attempt + 1` (with `attempt` ≥ 1), with full jitter.
    pub(crate) fn backoff(&self, attempt: u32) -> Duration {
        let base = self.initial_backoff.as_secs_f64()
            * self.multiplier.powi(attempt.saturating_sub(1) as i32);
        let capped = base.min(self.max_backoff.as_secs_f64());
        Duration::from_secs_f64(capped * rand::random::<f64>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_is_capped() {
        let p = RetryPolicy::default();
        for attempt in 1..20 {
            let b = p.backoff(attempt);
            assert!(b <= p.max_backoff);
            let cap = (2f64.powi(attempt as i32 - 1)).min(32.0);
            assert!(
                b.as_secs_f64() <= cap + 1e-9,
                "attempt {attempt}: {b:?} > {cap}"
            );
        }
    }
}
