//! Fault hooks: tests arm a failure and the gRPC services inject it where a real network or
//! a real BigQuery would fail, so clients' resume and retry paths can be exercised.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// Failures armed by tests. Shared by the emulator's services; see
/// [`Emulator::faults`](crate::Emulator::faults).
#[derive(Debug, Default)]
pub struct Faults {
    read_cuts: Mutex<VecDeque<u64>>,
    read_cuts_fired: AtomicU64,
    append_cuts: Mutex<VecDeque<u64>>,
    append_cuts_fired: AtomicU64,
}

impl Faults {
    /// Cuts the next `ReadRows` call (on any stream) once it has sent `after_rows` rows:
    /// the rows up to that point arrive, then the call fails with `UNAVAILABLE`, as a
    /// dropped connection does, and a client resumes at the offset it reached. Each call
    /// arms one cut; cuts are taken by calls in the order they start.
    pub fn cut_next_read_rows(&self, after_rows: u64) {
        self.read_cuts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push_back(after_rows);
    }

    /// How many `ReadRows` calls have been cut so far.
    pub fn read_rows_cut(&self) -> u64 {
        self.read_cuts_fired.load(Ordering::SeqCst)
    }

    /// The cut armed for a `ReadRows` call starting now, if any.
    pub(crate) fn take_read_cut(&self) -> Option<u64> {
        self.read_cuts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop_front()
    }

    pub(crate) fn read_cut_fired(&self) {
        self.read_cuts_fired.fetch_add(1, Ordering::SeqCst);
    }

    /// Cuts the next `AppendRows` connection once it has answered `after_requests`
    /// requests: the next request is not processed and the call fails with `UNAVAILABLE`,
    /// as a dropped connection does. Each call arms one cut.
    pub fn cut_next_append_rows(&self, after_requests: u64) {
        self.append_cuts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push_back(after_requests);
    }

    /// How many `AppendRows` connections have been cut so far.
    pub fn append_rows_cut(&self) -> u64 {
        self.append_cuts_fired.load(Ordering::SeqCst)
    }

    pub(crate) fn take_append_cut(&self) -> Option<u64> {
        self.append_cuts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pop_front()
    }

    pub(crate) fn append_cut_fired(&self) {
        self.append_cuts_fired.fetch_add(1, Ordering::SeqCst);
    }
}
