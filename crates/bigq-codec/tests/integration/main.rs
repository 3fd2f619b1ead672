//! The integration tests, one module per subject, linked into one test binary (each
//! binary of its own links the whole dependency tree again: time and disk).

// Shared set-up.
mod common;

mod mutations;
mod recordings;
