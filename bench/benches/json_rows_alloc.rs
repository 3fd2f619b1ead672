//! Heap allocated per cell by the two `json_rows` decoders, with a counting global
//! allocator: bytes and allocations (a `realloc` counts as a new allocation of the new
//! size), against the bytes of Arrow data they produce.
//!
//! `cargo bench -p bigq-bench --bench json_rows_alloc`

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use bigq_bench::lineitem::{self, COLUMNS};

struct Counting;

static BYTES: AtomicUsize = AtomicUsize::new(0);
static COUNT: AtomicUsize = AtomicUsize::new(0);
static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

fn grew(by: usize) {
    let live = LIVE.fetch_add(by, Relaxed) + by;
    PEAK.fetch_max(live, Relaxed);
}

// SAFETY: every call is forwarded to the system allocator unchanged; only counters are
// updated on the side.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        BYTES.fetch_add(layout.size(), Relaxed);
        COUNT.fetch_add(1, Relaxed);
        grew(layout.size());
        // SAFETY: forwarded with the caller's layout.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Relaxed);
        // SAFETY: forwarded with the caller's pointer and layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        BYTES.fetch_add(new_size, Relaxed);
        COUNT.fetch_add(1, Relaxed);
        LIVE.fetch_sub(layout.size(), Relaxed);
        grew(new_size);
        // SAFETY: forwarded with the caller's pointer, layout and size.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn measure(name: &str, rows: usize, run: impl Fn() -> Vec<arrow_array::RecordBatch>) {
    // One run first so that lazily initialised state is not counted.
    drop(run());
    let live_before = LIVE.load(Relaxed);
    BYTES.store(0, Relaxed);
    COUNT.store(0, Relaxed);
    PEAK.store(live_before, Relaxed);
    let batches = run();
    let (bytes, count) = (BYTES.load(Relaxed), COUNT.load(Relaxed));
    let peak = PEAK.load(Relaxed) - live_before;
    let cells = (rows * COLUMNS) as f64;
    let out = lineitem::arrow_bytes(&batches);
    println!(
        "{name:<28} {:>7.1} B/cell allocated  {:>6.3} allocs/cell  {:>6.1} B/cell Arrow output  \
         ({:.2}x output)  peak {:.0} MB above the body",
        bytes as f64 / cells,
        count as f64 / cells,
        out as f64 / cells,
        bytes as f64 / out as f64,
        peak as f64 / 1e6,
    );
}

fn main() {
    let rows = lineitem::rows_for_this_run();
    let body = lineitem::body(rows);
    let schema = lineitem::schema();
    println!(
        "{rows} rows x {COLUMNS} columns, {:.1} MB body, {:.1} B/cell of JSON",
        body.len() as f64 / 1e6,
        body.len() as f64 / (rows * COLUMNS) as f64
    );
    measure("bigq decoder (64 KiB chunks)", rows, || {
        lineitem::decode_bigq(&body, &schema, 64 * 1024)
    });
    measure("serde_json::Value + builders", rows, || {
        lineitem::decode_serde_value(&body, &schema)
    });
}
