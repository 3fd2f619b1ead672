//! On the network test bed: bigq-emulator in one namespace, the client in the other, over a
//! veth link shaped by netem. Reads and writes of every stream type through packet loss on
//! a slow, delayed link; a read and a call over a link that goes dark mid-read end by
//! their deadline.
//! Skipped (saying why) where the bed cannot be had.

use std::time::{Duration, Instant};

use bigq::{Client, RetryPolicy};
use futures::StreamExt;

use super::deadlines::assert_names_its_deadline;
use super::write::{KINDS, create_table, figures, rows, table_figures, write};
use super::{Checksum, quick_policy, scan_batches, scan_schema};
use crate::netbed::{Bed, Link, NetnsEmulator, bed_or_skip};

async fn client(rest: String, grpc: String, policy: RetryPolicy) -> Client {
    Client::builder()
        .with_project("test-project")
        .with_emulator(rest)
        .with_emulator_grpc(grpc)
        .with_retry_policy(policy)
        .build()
        .await
        .unwrap()
}

/// bigq-emulator on the bed's server side with `ds.scan` of `rows` rows; their checksum.
fn seeded(bed: &Bed, rows: usize) -> (NetnsEmulator, Checksum) {
    let batches = scan_batches(rows, 8192);
    let want = Checksum::of(&batches);
    let emu = bed
        .emulator(move |emu| {
            let project = emu.project().to_string();
            emu.create_table_with_batches(&project, "ds", "scan", scan_schema(), batches)
                .unwrap_or_else(|e| panic!("seed ds.scan: {e}"));
        })
        .unwrap_or_else(|e| panic!("{e}"));
    (emu, want)
}

#[test]
fn reads_and_writes_on_a_lossy_slow_link_lose_and_double_nothing() {
    let Some(bed) = bed_or_skip("lossy_slow_link") else {
        return;
    };
    let (emu, want) = seeded(&bed, 50_000);
    // 10 ms round trip, 50 Mbit/s, 3% of packets lost each way; where the kernel has no
    // netem, the slow link alone.
    let link = if bed.has_netem() {
        Link {
            loss_percent: 3.0,
            ..Link::rtt(Duration::from_millis(10), 50_000_000)
        }
    } else {
        eprintln!("lossy_slow_link: this kernel has no netem: 50 Mbit/s without delay or loss");
        Link {
            rate_bits: Some(50_000_000),
            ..Link::default()
        }
    };
    bed.shape(&link).unwrap();
    let (rest, grpc) = (emu.rest.clone(), emu.grpc.clone());
    bed.client(move || async move {
        let c = client(rest, grpc, quick_policy()).await;
        let t = Instant::now();
        let batches = super::read::read_all(&c).await.unwrap();
        assert_eq!(Checksum::of(&batches), want, "read through {link:?}");
        eprintln!(
            "lossy_slow_link: read {} rows on 4 streams in {:?}",
            want.rows,
            t.elapsed()
        );
        let data = rows(5_000);
        for kind in KINDS {
            let table = format!("l_{kind:?}").to_lowercase();
            create_table(&c, &table).await;
            let t = Instant::now();
            write(&c, &table, kind, &data)
                .await
                .unwrap_or_else(|e| panic!("{kind:?}: {e:?}"));
            assert_eq!(
                table_figures(&c, &table).await,
                figures(&data),
                "{kind:?} through {link:?}"
            );
            eprintln!(
                "lossy_slow_link: wrote {} rows via {kind:?} in {:?}",
                data.len(),
                t.elapsed()
            );
        }
    });
}

#[test]
fn a_link_that_goes_dark_mid_read_ends_every_call_by_its_deadline() {
    let Some(bed) = bed_or_skip("dark_link") else {
        return;
    };
    let (emu, _) = seeded(&bed, 50_000);
    bed.shape(&Link {
        rate_bits: Some(100_000_000),
        ..Link::default()
    })
    .unwrap();
    let (rest, grpc) = (emu.rest.clone(), emu.grpc.clone());
    let ctl = bed.control();
    let policy = RetryPolicy::default()
        .with_initial_backoff(Duration::from_millis(50))
        .with_max_backoff(Duration::from_millis(200))
        .with_attempt_timeout(Duration::from_millis(700))
        .with_idle_timeout(Duration::from_millis(700))
        .with_total_timeout(Duration::from_secs(3));
    bed.client(move || async move {
        let c = client(rest, grpc, policy).await;
        c.get_table("ds.scan")
            .await
            .expect("the link works before the cut");
        let mut read = c.read("ds.scan").max_streams(4).batches().await.unwrap();
        let first = read.next().await.expect("a first batch").unwrap();
        assert!(first.num_rows() > 0);
        ctl.cut().unwrap();
        let t = Instant::now();
        let e = loop {
            match tokio::time::timeout(Duration::from_secs(30), read.next()).await {
                Ok(Some(Ok(_))) => continue,
                Ok(Some(Err(e))) => break e,
                Ok(None) => panic!("the read ended cleanly over a dark link"),
                Err(_) => panic!("the read did not end by its deadline"),
            }
        };
        assert_names_its_deadline(
            "Storage Read over a dark link",
            &e,
            t.elapsed(),
            Duration::from_secs(3),
        );
        let t = Instant::now();
        let e = c.get_table("ds.scan").await.unwrap_err();
        assert_names_its_deadline(
            "get_table over a dark link",
            &e,
            t.elapsed(),
            Duration::from_secs(3),
        );
    });
}
