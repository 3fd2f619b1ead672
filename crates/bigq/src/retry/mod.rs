//! When and how requests are retried: the public [`RetryPolicy`], and the one driver every
//! call path runs its attempts through (REST and gRPC unary calls, query result pages,
//! Storage Read stream reconnects, Storage Write reconnects, and query job retries).

mod driver;
mod hint;
mod policy;

pub(crate) use driver::{Attempts, Failure, run, run_waiting};
pub(crate) use hint::{retry_after, retry_info};
pub use policy::RetryPolicy;

#[cfg(test)]
pub(crate) mod tests {
    pub(crate) use super::hint::tests::throttled;
}
