//! The failures armed now, and how the services ask for them.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// Which error an error rate answers with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum FaultError {
    /// HTTP 503 `backendError` / gRPC `UNAVAILABLE`.
    #[default]
    Unavailable,
    /// HTTP 429 `rateLimitExceeded` / gRPC `RESOURCE_EXHAUSTED`.
    ResourceExhausted,
}

/// Failures to arm, as the `/emulator/v1/faults` endpoint and `--faults` take them (JSON,
/// camelCase). Absent fields leave what is armed as it is.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FaultSpec {
    /// Cuts the next `ReadRows` call after this many rows (see
    /// [`Faults::cut_next_read_rows`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut_read_rows_after_rows: Option<u64>,
    /// Cuts the next `AppendRows` connection after this many requests (see
    /// [`Faults::cut_next_append_rows`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cut_append_rows_after_requests: Option<u64>,
    /// The fraction (0 to 1) of REST requests answered with [`Self::error`] instead of
    /// being served.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rest_error_rate: Option<f64>,
    /// The fraction (0 to 1) of gRPC calls answered with [`Self::error`] (with a
    /// `google.rpc.RetryInfo`) instead of being served.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grpc_error_rate: Option<f64>,
    /// The error of the error rates (`unavailable` unless given).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<FaultError>,
    /// A delay before every REST and gRPC answer, ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delay_ms: Option<u64>,
    /// The next this many changing requests (REST POST / PUT / PATCH / DELETE that
    /// succeed, gRPC calls other than reads, `AppendRows` requests) are served, their
    /// change applied, and their answer lost: the connection is cut instead.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drop_responses_after_commit: Option<u64>,
    /// A seed for the error rates' random draws, to make a run repeatable.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

/// The wire faults armed now.
#[derive(Clone, Debug, Default)]
struct Wire {
    rest_error_rate: f64,
    grpc_error_rate: f64,
    error: FaultError,
    delay: Duration,
    drops: u64,
}

/// Failures armed by tests. Shared by the emulator's services; see
/// [`Emulator::faults`](crate::Emulator::faults).
#[derive(Debug, Default)]
pub struct Faults {
    read_cuts: Mutex<VecDeque<u64>>,
    read_cuts_fired: AtomicU64,
    append_cuts: Mutex<VecDeque<u64>>,
    append_cuts_fired: AtomicU64,
    wire: Mutex<Wire>,
    rng: AtomicU64,
    errors_fired: AtomicU64,
    drops_fired: AtomicU64,
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

    /// Arms what `spec` names (see [`FaultSpec`]); a rate outside 0 to 1 is refused.
    pub fn arm(&self, spec: &FaultSpec) -> Result<(), String> {
        for (name, rate) in [
            ("restErrorRate", spec.rest_error_rate),
            ("grpcErrorRate", spec.grpc_error_rate),
        ] {
            if rate.is_some_and(|r| !(0.0..=1.0).contains(&r)) {
                return Err(format!("{name} must be between 0 and 1"));
            }
        }
        if let Some(n) = spec.cut_read_rows_after_rows {
            self.cut_next_read_rows(n);
        }
        if let Some(n) = spec.cut_append_rows_after_requests {
            self.cut_next_append_rows(n);
        }
        if let Some(seed) = spec.seed {
            self.rng.store(seed.max(1), Ordering::SeqCst);
        }
        let mut w = self.wire.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(r) = spec.rest_error_rate {
            w.rest_error_rate = r;
        }
        if let Some(r) = spec.grpc_error_rate {
            w.grpc_error_rate = r;
        }
        if let Some(e) = spec.error {
            w.error = e;
        }
        if let Some(ms) = spec.delay_ms {
            w.delay = Duration::from_millis(ms);
        }
        if let Some(n) = spec.drop_responses_after_commit {
            w.drops = n;
        }
        Ok(())
    }

    /// Disarms every fault (the counters stay).
    pub fn clear(&self) {
        self.read_cuts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        self.append_cuts
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        *self.wire.lock().unwrap_or_else(|e| e.into_inner()) = Wire::default();
    }

    /// What is armed now, as a [`FaultSpec`].
    pub fn armed(&self) -> FaultSpec {
        let w = self.wire.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let reads = self.read_cuts.lock().unwrap_or_else(|e| e.into_inner());
        let appends = self.append_cuts.lock().unwrap_or_else(|e| e.into_inner());
        FaultSpec {
            cut_read_rows_after_rows: reads.front().copied(),
            cut_append_rows_after_requests: appends.front().copied(),
            rest_error_rate: Some(w.rest_error_rate),
            grpc_error_rate: Some(w.grpc_error_rate),
            error: Some(w.error),
            delay_ms: Some(w.delay.as_millis() as u64),
            drop_responses_after_commit: Some(w.drops),
            seed: None,
        }
    }

    /// How many requests an error rate has failed so far.
    pub fn errors_injected(&self) -> u64 {
        self.errors_fired.load(Ordering::SeqCst)
    }

    /// How many answers have been dropped after their change was applied so far.
    pub fn responses_dropped(&self) -> u64 {
        self.drops_fired.load(Ordering::SeqCst)
    }

    /// The delay before an answer.
    pub(crate) fn delay(&self) -> Duration {
        self.wire.lock().unwrap_or_else(|e| e.into_inner()).delay
    }

    /// Whether this REST request (`grpc` false) or gRPC call fails now, and with what.
    pub(crate) fn draw_error(&self, grpc: bool) -> Option<FaultError> {
        let (rate, error) = {
            let w = self.wire.lock().unwrap_or_else(|e| e.into_inner());
            let rate = if grpc {
                w.grpc_error_rate
            } else {
                w.rest_error_rate
            };
            (rate, w.error)
        };
        if rate <= 0.0 || self.next_unit() >= rate {
            return None;
        }
        self.errors_fired.fetch_add(1, Ordering::SeqCst);
        Some(error)
    }

    /// Takes one armed answer drop, if any.
    pub(crate) fn take_drop(&self) -> bool {
        let mut w = self.wire.lock().unwrap_or_else(|e| e.into_inner());
        if w.drops == 0 {
            return false;
        }
        w.drops -= 1;
        self.drops_fired.fetch_add(1, Ordering::SeqCst);
        true
    }

    /// A uniform draw in [0, 1): xorshift64*, enough for failure rates and repeatable
    /// under a seed.
    fn next_unit(&self) -> f64 {
        let mut x = self.rng.load(Ordering::SeqCst);
        if x == 0 {
            x = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(1)
                | 1;
        }
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.rng.store(x, Ordering::SeqCst);
        (x.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}
