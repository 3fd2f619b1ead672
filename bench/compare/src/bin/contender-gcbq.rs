//! bench-compare's contender for `google-cloud-bigquery` (0.19, googleapis/google-cloud-rust):
//! runs one scenario once with the crate's defaults, the way its docs show, and prints one
//! JSON line (see `bench_compare::print_outcome`).
//!
//! `contender-gcbq <scenario>`, with the server in `BENCH_REST` (its REST v2 API) and
//! `BENCH_GRPC` (Storage Read and Write), the project in `BENCH_PROJECT` and the scratch
//! dataset in `BENCH_DATASET`; anonymous credentials against an emulator.
//!
//! What the crate has, and so what each scenario does here:
//! - queries: REST `jobs.query` with `JOB_CREATION_OPTIONAL` (its default), JSON pages, rows
//!   converted with `#[derive(FromRow)]`. Arrow query results are behind an unstable cfg flag.
//! - `scan_arrow`: its Storage Read client is the raw generated one; it returns Arrow IPC
//!   bytes that the caller decodes (here with `arrow-ipc`), one task per stream, 16 streams
//!   asked for and LZ4 buffers (the `bigquery` crate's benchmark harness's settings).
//! - `scan_typed`: it has no typed Storage Read, so a `SELECT *` query read as `FromRow` rows
//!   (the `bigquery` crate's benchmark harness does the same).
//! - writes: its Storage Write client takes Arrow IPC the caller serializes; its protobuf
//!   writer is not public. `write_1m_objects` turns the row structs into Arrow inside the
//!   timed part; 25,000-row requests, 8 in flight.

use std::time::Instant;

use arrow_array::RecordBatch;
use bench_compare::{
    ARROW_WRITE_BATCH_ROWS, ContenderArgs, Measured, NotRun, cpu_seconds, fresh_write_table,
    print_outcome, scan_arrow_schema, scan_batches, scan_rows, scenario_sql,
};
use futures::{StreamExt, TryStreamExt};
use google_cloud_bigquery::client::{BigQuery, Read, Write};
use google_cloud_bigquery::model::{
    ArrowRecordBatch, ArrowSchema, ArrowSerializationOptions, DataFormat, ReadSession,
    arrow_serialization_options::CompressionCodec, read_session::TableReadOptions,
};
use google_cloud_bigquery::query::{FromRow, FromSql};
use google_cloud_type::model::Date;
use google_cloud_wkt::Timestamp;
use rust_decimal::Decimal;

#[derive(Debug, FromRow)]
#[allow(dead_code)]
struct RowConst {
    x: i64,
}

#[derive(Debug, FromRow)]
#[allow(dead_code)]
struct Row1k {
    n: i64,
    s: String,
}

#[derive(Debug, FromRow)]
#[allow(dead_code)]
struct Row200k {
    id: i64,
    x: f64,
    name: String,
    flag: bool,
}

#[derive(Debug, FromSql)]
struct Rec {
    a: i64,
    b: String,
}

/// The scan table's row in the crate's own value types (`rust_decimal` for NUMERIC,
/// `google_cloud_type::model::Date`, `google_cloud_wkt::Timestamp`).
#[derive(Debug, FromRow)]
struct ScanRow {
    id: i64,
    amount: f64,
    name: String,
    active: bool,
    price: Decimal,
    day: Date,
    ts: Timestamp,
    maybe_int: Option<i64>,
    maybe_float: Option<f64>,
    city: Option<String>,
    flagged: Option<bool>,
    discount: Option<Decimal>,
    shipped: Option<Date>,
    seen: Option<Timestamp>,
    code: String,
    score: f64,
    qty: i64,
    note: Option<String>,
    rec: Rec,
    arr: Vec<i64>,
}

/// Days since 1970-01-01 of a civil date (H. Hinnant's `days_from_civil`).
fn days_from_civil(d: &Date) -> i32 {
    let (m, day) = (d.month, d.day);
    let y = if m <= 2 { d.year - 1 } else { d.year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date of `days` since 1970-01-01 (H. Hinnant's `civil_from_days`).
fn civil_from_days(days: i32) -> Date {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i32::from(month <= 2);
    Date::new().set_year(year).set_month(month).set_day(day)
}

impl ScanRow {
    /// Row `n` of the scan table, the values of `bench_compare::ScanRow::generate`.
    fn generate(n: i64) -> ScanRow {
        let opt = |m: i64| n % m != 0;
        let ts = |secs: i64| Timestamp::clamp(secs, 0);
        ScanRow {
            id: n,
            amount: n as f64 * 1.5,
            name: format!("name-{n}"),
            active: n % 2 == 0,
            price: Decimal::new(n, 2),
            day: civil_from_days(18262 + (n % 1000) as i32),
            ts: ts(1_704_067_200 + n),
            maybe_int: opt(5).then_some(n * 7),
            maybe_float: opt(7).then_some(n as f64 / 7.0),
            city: opt(3).then(|| format!("city-{}", n % 50)),
            flagged: opt(11).then_some(n % 3 == 0),
            discount: opt(13).then(|| Decimal::new(n % 10_000, 3)),
            shipped: opt(17).then(|| civil_from_days(18779 + (n % 365) as i32)),
            seen: opt(19).then(|| ts(1_735_689_600 + 60 * n)),
            code: format!("code-{}", n % 997),
            score: (n % 1000) as f64 / 10.0,
            qty: (n * 13) % 100,
            note: opt(4).then(|| format!("note for {n}")),
            rec: Rec {
                a: n,
                b: format!("s{n}"),
            },
            arr: vec![n, n + 1, n + 2],
        }
    }
}

/// NUMERIC as BigQuery's Arrow `Decimal128(38, 9)` value.
fn scaled9(d: &Decimal) -> i128 {
    let scale = d.scale();
    let m = d.mantissa();
    if scale <= 9 {
        m * 10i128.pow(9 - scale)
    } else {
        m / 10i128.pow(scale - 9)
    }
}

fn micros(t: &Timestamp) -> i64 {
    t.seconds() * 1_000_000 + i64::from(t.nanos()) / 1000
}

/// What a user of this crate writes to append row structs: Arrow columns built by hand.
fn rows_to_batch(rows: &[ScanRow]) -> RecordBatch {
    use arrow_array::builder::{
        BooleanBuilder, Date32Builder, Decimal128Builder, Float64Builder, Int64Builder,
        ListBuilder, StringBuilder, TimestampMicrosecondBuilder,
    };
    use arrow_array::{ArrayRef, StructArray};
    use std::sync::Arc;
    let schema = scan_arrow_schema();
    let len = rows.len();
    macro_rules! col {
        ($builder:expr, |$r:ident: &ScanRow| $get:expr) => {{
            let mut b = $builder;
            for $r in rows {
                b.append_option($get);
            }
            Arc::new(b.finish()) as ArrayRef
        }};
    }
    let num = || {
        Decimal128Builder::with_capacity(len)
            .with_precision_and_scale(38, 9)
            .expect("valid")
    };
    let ts = || TimestampMicrosecondBuilder::with_capacity(len).with_timezone("UTC");
    let arrow_schema::DataType::Struct(rec_fields) = schema.field(18).data_type().clone() else {
        unreachable!("rec is a struct")
    };
    let rec = StructArray::new(
        rec_fields,
        vec![
            col!(Int64Builder::with_capacity(len), |r: &ScanRow| Some(
                r.rec.a
            )),
            col!(StringBuilder::with_capacity(len, len * 8), |r: &ScanRow| {
                Some(r.rec.b.as_str())
            }),
        ],
        None,
    );
    let mut arr =
        ListBuilder::with_capacity(Int64Builder::with_capacity(len * 3), len).with_field(Arc::new(
            arrow_schema::Field::new("item", arrow_schema::DataType::Int64, false),
        ));
    for r in rows {
        arr.values().append_slice(&r.arr);
        arr.append(true);
    }
    let columns: Vec<ArrayRef> = vec![
        col!(Int64Builder::with_capacity(len), |r: &ScanRow| Some(r.id)),
        col!(Float64Builder::with_capacity(len), |r: &ScanRow| Some(
            r.amount
        )),
        col!(
            StringBuilder::with_capacity(len, len * 12),
            |r: &ScanRow| Some(r.name.as_str())
        ),
        col!(BooleanBuilder::with_capacity(len), |r: &ScanRow| Some(
            r.active
        )),
        col!(num(), |r: &ScanRow| Some(scaled9(&r.price))),
        col!(Date32Builder::with_capacity(len), |r: &ScanRow| Some(
            days_from_civil(&r.day)
        )),
        col!(ts(), |r: &ScanRow| Some(micros(&r.ts))),
        col!(Int64Builder::with_capacity(len), |r: &ScanRow| r.maybe_int),
        col!(Float64Builder::with_capacity(len), |r: &ScanRow| r
            .maybe_float),
        col!(StringBuilder::with_capacity(len, len * 8), |r: &ScanRow| r
            .city
            .as_deref()),
        col!(BooleanBuilder::with_capacity(len), |r: &ScanRow| r.flagged),
        col!(num(), |r: &ScanRow| r.discount.as_ref().map(scaled9)),
        col!(Date32Builder::with_capacity(len), |r: &ScanRow| r
            .shipped
            .as_ref()
            .map(days_from_civil)),
        col!(ts(), |r: &ScanRow| r.seen.as_ref().map(micros)),
        col!(StringBuilder::with_capacity(len, len * 9), |r: &ScanRow| {
            Some(r.code.as_str())
        }),
        col!(Float64Builder::with_capacity(len), |r: &ScanRow| Some(
            r.score
        )),
        col!(Int64Builder::with_capacity(len), |r: &ScanRow| Some(r.qty)),
        col!(
            StringBuilder::with_capacity(len, len * 14),
            |r: &ScanRow| r.note.as_deref()
        ),
        Arc::new(rec),
        Arc::new(arr.finish()),
    ];
    RecordBatch::try_new(schema, columns).expect("the columns match the schema")
}

/// Arrow IPC messages, as the crate's `ArrowSchema` / `ArrowRecordBatch` take them: the schema
/// message once, then each batch's message on its own.
struct Ipc {
    schema: arrow_schema::SchemaRef,
}

impl Ipc {
    fn schema_message(&self) -> Vec<u8> {
        let w = arrow_ipc::writer::StreamWriter::try_new(Vec::new(), &self.schema)
            .expect("the schema serializes");
        w.get_ref().clone()
    }

    fn batch_message(&self, batch: &RecordBatch) -> ArrowRecordBatch {
        let mut w = arrow_ipc::writer::StreamWriter::try_new(Vec::new(), &self.schema)
            .expect("the schema serializes");
        w.get_mut().clear();
        w.write(batch).expect("the batch serializes");
        ArrowRecordBatch::new().set_serialized_record_batch(std::mem::take(w.get_mut()))
    }
}

#[tokio::main]
async fn main() {
    let args = ContenderArgs::parse("contender-gcbq <scenario>");
    print_outcome(run(&args.scenario).await);
}

fn env(name: &str) -> Result<String, NotRun> {
    std::env::var(name).map_err(|_| NotRun::Failed(format!("{name} is not set")))
}

fn anonymous() -> google_cloud_auth::credentials::Credentials {
    google_cloud_auth::credentials::anonymous::Builder::new().build()
}

async fn bigquery() -> Result<BigQuery, NotRun> {
    let mut b = BigQuery::builder().with_project_id(env("BENCH_PROJECT")?);
    if let Ok(rest) = std::env::var("BENCH_REST") {
        b = b.with_endpoint(rest).with_credentials(anonymous());
    }
    Ok(b.build().await?)
}

fn storage_endpoint() -> Result<Option<String>, NotRun> {
    match (std::env::var("BENCH_REST"), std::env::var("BENCH_GRPC")) {
        (Ok(_), Err(_)) => Err(NotRun::Unsupported(
            "the server has no Storage API endpoint (BENCH_GRPC)".into(),
        )),
        (_, grpc) => Ok(grpc.ok()),
    }
}

async fn read_client() -> Result<Read, NotRun> {
    let mut b = Read::builder();
    if let Some(grpc) = storage_endpoint()? {
        b = b.with_endpoint(grpc).with_credentials(anonymous());
    }
    Ok(b.build().await?)
}

async fn write_client() -> Result<Write, NotRun> {
    let mut b = Write::builder();
    if let Some(grpc) = storage_endpoint()? {
        b = b.with_endpoint(grpc).with_credentials(anonymous());
    }
    Ok(b.build().await?)
}

fn table_path(dataset: &str, table: &str) -> Result<String, NotRun> {
    Ok(format!(
        "projects/{}/datasets/{dataset}/tables/{table}",
        env("BENCH_PROJECT")?
    ))
}

/// Runs `sql` and converts every row with `FromRow`; returns the rows and whether BigQuery
/// created a job.
async fn typed_query<T>(client: &BigQuery, sql: String) -> Result<(Vec<T>, bool), NotRun>
where
    T: TryFrom<google_cloud_bigquery::query::Row, Error = google_cloud_bigquery::error::RowError>,
{
    let done = client
        .query(sql)
        .set_use_query_cache(false)
        .until_done()
        .await?;
    let job = done.metadata().job_reference.is_some();
    let mut it = done.read();
    let mut rows = Vec::new();
    while let Some(row) = it.next().await.transpose()? {
        rows.push(T::try_from(row)?);
    }
    Ok((rows, job))
}

fn query_path(job: bool) -> &'static str {
    if job {
        "REST jobs.query, job created; JSON pages, FromRow"
    } else {
        "REST jobs.query, short query mode (no job); JSON pages, FromRow"
    }
}

/// Appends `batches` to the default stream of `table`, 8 requests in flight.
async fn append_arrow(
    writer_client: &Write,
    table: &str,
    ipc: &Ipc,
    batches: impl Iterator<Item = ArrowRecordBatch>,
) -> Result<(usize, usize), NotRun> {
    let writer = writer_client
        .open_default_stream(table)
        .build_arrow(ArrowSchema::new().set_serialized_schema(ipc.schema_message()))
        .await
        .map_err(|e| NotRun::Failed(format!("opening the default stream: {e:?}")))?;
    let sent = std::sync::atomic::AtomicUsize::new(0);
    let requests: Vec<_> = futures::stream::iter(batches)
        .map(|b| {
            sent.fetch_add(
                b.serialized_record_batch.len(),
                std::sync::atomic::Ordering::Relaxed,
            );
            writer.append(b).send()
        })
        .buffered(8)
        .map_err(|e| NotRun::Failed(format!("append: {e:?}")))
        .try_collect()
        .await?;
    Ok((requests.len(), sent.into_inner()))
}

async fn run(scenario: &str) -> Result<Measured, NotRun> {
    let ds = env("BENCH_DATASET")?;
    match scenario {
        "query_const" | "query_1k" | "query_200k_rows" => {
            let client = bigquery().await?;
            let sql = scenario_sql(scenario, &ds);
            let (t, c) = (Instant::now(), cpu_seconds());
            let (rows, job) = match scenario {
                "query_const" => {
                    let (r, j) = typed_query::<RowConst>(&client, sql).await?;
                    (r.len(), j)
                }
                "query_1k" => {
                    let (r, j) = typed_query::<Row1k>(&client, sql).await?;
                    (r.len(), j)
                }
                _ => {
                    let (r, j) = typed_query::<Row200k>(&client, sql).await?;
                    (r.len(), j)
                }
            };
            Ok(Measured::new(rows, t, c, query_path(job)))
        }
        "scan_typed" => {
            let client = bigquery().await?;
            let sql = format!("SELECT * FROM `{ds}.scan`");
            let (t, c) = (Instant::now(), cpu_seconds());
            let (rows, _) = typed_query::<ScanRow>(&client, sql).await?;
            Ok(Measured::new(
                rows.len(),
                t,
                c,
                "SELECT * query (no typed Storage Read in this crate): REST JSON pages, FromRow",
            ))
        }
        "scan_arrow" => {
            let read = read_client().await?;
            let project = env("BENCH_PROJECT")?;
            let (t, c) = (Instant::now(), cpu_seconds());
            let session = read
                .create_read_session()
                .set_parent(format!("projects/{project}"))
                .set_read_session(
                    ReadSession::new()
                        .set_data_format(DataFormat::Arrow)
                        .set_table(table_path(&ds, "scan")?)
                        .set_read_options(
                            TableReadOptions::new().set_arrow_serialization_options(
                                ArrowSerializationOptions::new()
                                    .set_buffer_compression(CompressionCodec::Lz4Frame),
                            ),
                        ),
                )
                .set_max_stream_count(16)
                .send()
                .await?;
            let schema = session
                .arrow_schema()
                .ok_or("the read session has no Arrow schema")?
                .serialized_schema
                .clone();
            let streams = session.streams.len();
            let tasks: Vec<_> = session
                .streams
                .iter()
                .map(|s| {
                    let (read, name, schema) = (read.clone(), s.name.clone(), schema.clone());
                    tokio::spawn(async move {
                        let mut rows = read.read_rows().set_read_stream(name).send().await?;
                        let mut decoder = arrow_ipc::reader::StreamDecoder::new();
                        let mut buf = arrow_buffer::Buffer::from(schema.to_vec());
                        if decoder.decode(&mut buf)?.is_some() {
                            return Err(NotRun::Failed("a batch in the schema message".into()));
                        }
                        let mut batches = Vec::new();
                        while let Some(resp) = rows.next().await.transpose()? {
                            let Some(b) = resp.arrow_record_batch() else {
                                continue;
                            };
                            let mut buf =
                                arrow_buffer::Buffer::from(b.serialized_record_batch.clone());
                            while !buf.is_empty() {
                                if let Some(batch) = decoder.decode(&mut buf)? {
                                    batches.push(batch);
                                }
                            }
                        }
                        Ok::<_, NotRun>(batches)
                    })
                })
                .collect();
            let mut rows = 0;
            for task in tasks {
                let batches = task.await??;
                rows += batches.iter().map(|b| b.num_rows()).sum::<usize>();
            }
            let path = format!(
                "Storage Read (raw client), {streams} streams of 16 asked, LZ4, one task per \
                 stream, IPC decoded with arrow-ipc"
            );
            Ok(Measured::new(rows, t, c, &path))
        }
        "write_1m_objects" => {
            fresh_write_table(&ds, "write_target_gcbq").await?;
            let table = table_path(&ds, "write_target_gcbq")?;
            let write = write_client().await?;
            // The rows are made before the clock starts; the time covers turning them into
            // Arrow, the IPC encoding and the appends.
            let rows: Vec<ScanRow> = (1..=scan_rows() as i64).map(ScanRow::generate).collect();
            let ipc = Ipc {
                schema: scan_arrow_schema(),
            };
            let (t, c) = (Instant::now(), cpu_seconds());
            let batches = rows
                .chunks(ARROW_WRITE_BATCH_ROWS)
                .map(|chunk| ipc.batch_message(&rows_to_batch(chunk)));
            let (requests, bytes) = append_arrow(&write, &table, &ipc, batches).await?;
            let path = format!(
                "Storage Write default stream: row structs -> Arrow built by hand -> IPC, \
                 {requests} requests, {:.1} MB, 8 in flight",
                bytes as f64 / 1e6
            );
            Ok(Measured::new(rows.len(), t, c, &path))
        }
        "write_1m_arrow" => {
            fresh_write_table(&ds, "write_target_gcbq_arrow").await?;
            let table = table_path(&ds, "write_target_gcbq_arrow")?;
            let write = write_client().await?;
            // The batches are made before the clock starts; the time covers their IPC
            // encoding and the appends.
            let batches = scan_batches(scan_rows(), ARROW_WRITE_BATCH_ROWS);
            let rows = batches.iter().map(|b| b.num_rows()).sum();
            let ipc = Ipc {
                schema: scan_arrow_schema(),
            };
            let (t, c) = (Instant::now(), cpu_seconds());
            let messages = batches.iter().map(|b| ipc.batch_message(b));
            let (requests, bytes) = append_arrow(&write, &table, &ipc, messages).await?;
            let path = format!(
                "Storage Write default stream: Arrow -> IPC, {requests} requests, {:.1} MB, \
                 8 in flight",
                bytes as f64 / 1e6
            );
            Ok(Measured::new(rows, t, c, &path))
        }
        other => Err(NotRun::Unsupported(format!(
            "no {other:?} scenario in this contender"
        ))),
    }
}
