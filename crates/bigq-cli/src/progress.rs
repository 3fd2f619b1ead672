//! Progress bars on stderr (indicatif hides them when stderr is not a terminal).

use std::time::{Duration, Instant};

use indicatif::{HumanBytes, ProgressBar, ProgressStyle};

/// A spinner with a message, for a wait of unknown length.
pub fn spinner(message: &str) -> ProgressBar {
    let pb = ProgressBar::new_spinner().with_message(message.to_string());
    pb.set_style(
        ProgressStyle::with_template("{spinner} {msg} {elapsed}").expect("a valid template"),
    );
    pb.enable_steady_tick(Duration::from_millis(120));
    pb
}

/// A bar of rows, with `total` when known, and a message for bytes per second.
pub fn rows(total: Option<u64>) -> ProgressBar {
    match total {
        Some(n) => {
            let pb = ProgressBar::new(n);
            pb.set_style(
                ProgressStyle::with_template(
                    "{bar:30} {human_pos}/{human_len} rows {msg} ({elapsed}, eta {eta})",
                )
                .expect("a valid template"),
            );
            pb
        }
        None => {
            let pb = ProgressBar::new_spinner();
            pb.set_style(
                ProgressStyle::with_template("{spinner} {human_pos} rows {msg} ({elapsed})")
                    .expect("a valid template"),
            );
            pb
        }
    }
}

/// A bar of bytes of an input file, with rows in the message.
pub fn file(len: u64) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template(
            "{bar:30} {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} {msg} (eta {eta})",
        )
        .expect("a valid template"),
    );
    pb
}

/// `1.2 MiB/s` for `bytes` since `started`.
pub fn rate(bytes: u64, started: Instant) -> String {
    let secs = started.elapsed().as_secs_f64().max(1e-3);
    format!("{}/s", HumanBytes((bytes as f64 / secs) as u64))
}
