//! `bigq datasets`, `jobs`, `cancel`, `tables`, `show`, `schema`, `mk-dataset`, `mk-table`, `rm`.

use bigq::Transport;
use bigq::admin::{Dataset, PartitionUnit, RangePartitioning, Table, TimePartitioning};
use bigq::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};

use crate::cli::{Global, MkTableArgs};
use crate::connect;
use crate::error::{Failure, Result};

/// `bigq datasets`: one dataset id a line.
pub async fn datasets(global: &Global) -> Result<()> {
    let client = connect::client(global, Transport::Rest).await?;
    let mut datasets = client.list_datasets(None, false).try_collect().await?;
    datasets.sort_by(|a, b| a.dataset_id().cmp(b.dataset_id()));
    for d in datasets {
        println!("{}", d.dataset_id());
    }
    Ok(())
}

/// `bigq jobs`: one job a line, newest first: id, state, statement type, bytes billed.
pub async fn jobs(global: &Global, state: Option<&str>, limit: usize) -> Result<()> {
    use bigq::admin::{JobState, ListJobs};
    let client = connect::client(global, Transport::Rest).await?;
    let mut filter = ListJobs::new();
    if let Some(s) = state {
        filter = filter.state(match s.to_ascii_lowercase().as_str() {
            "pending" => JobState::Pending,
            "running" => JobState::Running,
            "done" => JobState::Done,
            other => {
                return Err(Failure::new(format!(
                    "--state {other}: expected pending, running or done"
                )));
            }
        });
    }
    use futures::TryStreamExt;
    let mut jobs = client.list_jobs(filter);
    let mut shown = 0;
    while shown < limit
        && let Some(job) = jobs.try_next().await?
    {
        let query = job.statistics().query.as_ref();
        let billed = query
            .and_then(|q| q.total_bytes_billed)
            .map_or_else(|| "-".to_string(), |b| b.to_string());
        println!(
            "{}\t{}\t{}\t{}",
            job.job_reference.job_id,
            job.state().unwrap_or("-"),
            job.statement_type().unwrap_or("-"),
            billed
        );
        shown += 1;
    }
    Ok(())
}

/// `bigq cancel JOB`: asks BigQuery to cancel the job and prints its state.
pub async fn cancel(global: &Global, job: &str, location: Option<String>) -> Result<()> {
    let client = connect::client(global, Transport::Rest).await?;
    let reference = bigq::query::JobReference {
        project_id: client.project().to_string(),
        job_id: job.to_string(),
        location,
    };
    let job = client.cancel_job(&reference).await?;
    println!(
        "{}\t{}",
        job.job_reference.job_id,
        job.state().unwrap_or("-")
    );
    Ok(())
}

/// `bigq tables DATASET`: one table id a line, with its type.
pub async fn tables(global: &Global, dataset: &str) -> Result<()> {
    let client = connect::client(global, Transport::Rest).await?;
    let mut tables = client.list_tables(dataset).try_collect().await?;
    tables.sort_by(|a, b| a.table_id().cmp(b.table_id()));
    for t in tables {
        println!(
            "{}\t{}",
            t.table_id(),
            t.table_type.as_deref().unwrap_or("TABLE")
        );
    }
    Ok(())
}

/// `bigq schema TABLE`: the columns as an indented tree, or BigQuery's JSON schema.
pub async fn schema(global: &Global, table: &str, json: bool) -> Result<()> {
    let client = connect::client(global, Transport::Rest).await?;
    let t = client.get_table(table).await?;
    let schema = t.schema.unwrap_or_default();
    if json {
        let text = serde_json::to_string_pretty(&schema.fields)
            .map_err(|e| Failure::new(e.to_string()))?;
        println!("{text}");
        return Ok(());
    }
    let mut out = String::new();
    tree(&schema.fields, 0, &mut out);
    print!("{out}");
    if let Some(n) = t.num_rows {
        eprintln!("{n} rows");
    }
    Ok(())
}

fn tree(fields: &[TableFieldSchema], depth: usize, out: &mut String) {
    for f in fields {
        let mode = match f.mode() {
            FieldMode::Nullable => "",
            FieldMode::Required => " REQUIRED",
            FieldMode::Repeated => " REPEATED",
        };
        out.push_str(&format!(
            "{:indent$}{} {}{mode}\n",
            "",
            f.name,
            f.field_type.standard_sql_name(),
            indent = depth * 2
        ));
        tree(&f.fields, depth + 1, out);
    }
}

/// `bigq mk-dataset`.
pub async fn mk_dataset(global: &Global, id: &str, description: Option<String>) -> Result<()> {
    let client = connect::client(global, Transport::Rest).await?;
    let mut ds = Dataset::new(id);
    if let Some(l) = &global.location {
        ds = ds.with_location(l);
    }
    if let Some(d) = description {
        ds = ds.with_description(d);
    }
    let ds = client.create_dataset(ds).await?;
    eprintln!("created dataset {}.{}", ds.project(), ds.dataset_id());
    Ok(())
}

/// `bigq mk-table`.
pub async fn mk_table(global: &Global, args: MkTableArgs) -> Result<()> {
    let fields = match (&args.schema, &args.schema_file) {
        (Some(spec), _) => parse_schema(spec)?,
        (None, Some(path)) => {
            let text = std::fs::read_to_string(path).map_err(|e| Failure::file(path, e))?;
            serde_json::from_str(&text)
                .map_err(|e| Failure::new(format!("{}: {e}", path.display())))?
        }
        (None, None) => {
            return Err(Failure::new(
                "give the columns with --schema or --schema-file",
            ));
        }
    };
    let client = connect::client(global, Transport::Rest).await?;
    let mut table = Table::new(&args.table, TableSchema::new(fields));
    if let Some(d) = &args.description {
        table = table.with_description(d);
    }
    table = with_options(table, &args)?;
    let t = client.create_table(table).await?;
    eprintln!(
        "created table {}.{}.{}",
        t.project(),
        t.dataset_id(),
        t.table_id()
    );
    Ok(())
}

/// The partitioning, clustering, expiration and label options of `mk-table`.
fn with_options(mut table: Table, args: &MkTableArgs) -> Result<Table> {
    if let Some(name) = &args.friendly_name {
        table = table.with_friendly_name(name);
    }
    for label in &args.labels {
        let (k, v) = label
            .split_once('=')
            .ok_or_else(|| Failure::new(format!("--label: {label:?} is not key=value")))?;
        table = table.with_label(k, v);
    }
    if let Some(ms) = args.expiration {
        table = table.with_expiration_time(ms);
    }
    if let Some(spec) = &args.time_partitioning {
        let (unit, column) = match spec.split_once(':') {
            Some((u, c)) => (u, Some(c)),
            None => (spec.as_str(), None),
        };
        let unit = match unit.to_ascii_uppercase().as_str() {
            "HOUR" => PartitionUnit::Hour,
            "DAY" => PartitionUnit::Day,
            "MONTH" => PartitionUnit::Month,
            "YEAR" => PartitionUnit::Year,
            other => {
                return Err(Failure::new(format!(
                    "--time-partitioning: unknown unit {other} (HOUR, DAY, MONTH or YEAR)"
                )));
            }
        };
        let mut p = match column {
            Some(c) => TimePartitioning::by_column(unit, c),
            None => TimePartitioning::ingestion_time(unit),
        };
        if let Some(ms) = args.partition_expiration {
            p = p.with_expiration_ms(ms);
        }
        table = table.with_time_partitioning(p);
    }
    if let Some(spec) = &args.range_partitioning {
        let parts: Vec<&str> = spec.split(':').collect();
        let bad = || {
            Failure::new(format!(
                "--range-partitioning: {spec:?} is not COLUMN:START:END:INTERVAL"
            ))
        };
        let [column, start, end, interval] = parts[..] else {
            return Err(bad());
        };
        let int = |s: &str| s.parse::<i64>().map_err(|_| bad());
        table = table.with_range_partitioning(RangePartitioning::new(
            column,
            int(start)?,
            int(end)?,
            int(interval)?,
        ));
    }
    if args.require_partition_filter {
        table = table.with_require_partition_filter(true);
    }
    if let Some(cols) = &args.clustering {
        table = table.with_clustering(cols.split(',').map(str::trim).filter(|c| !c.is_empty()));
    }
    Ok(table)
}

/// `bigq show TABLE`: the table resource, a field a line, then the schema.
pub async fn show(global: &Global, table: &str) -> Result<()> {
    let client = connect::client(global, Transport::Rest).await?;
    let t = client.get_table(table).await?;
    let mut out = String::new();
    let mut line = |k: &str, v: String| out.push_str(&format!("{k}: {v}\n"));
    line(
        "table",
        format!("{}.{}.{}", t.project(), t.dataset_id(), t.table_id()),
    );
    if let Some(v) = &t.table_type {
        line("type", v.clone());
    }
    if let Some(v) = &t.location {
        line("location", v.clone());
    }
    if let Some(v) = t.num_rows {
        line("rows", v.to_string());
    }
    if let Some(v) = t.num_bytes {
        line("bytes", v.to_string());
    }
    if let Some(v) = t.creation_time {
        line("created", v.to_string());
    }
    if let Some(v) = t.last_modified_time {
        line("modified", v.to_string());
    }
    if let Some(v) = &t.description {
        line("description", v.clone());
    }
    if let Some(v) = &t.friendly_name {
        line("friendly name", v.clone());
    }
    if !t.labels.is_empty() {
        line("labels", json(&t.labels));
    }
    if let Some(v) = t.expiration_time {
        line("expiration", v.to_string());
    }
    if let Some(v) = &t.time_partitioning {
        line("time partitioning", json(v));
    }
    if let Some(v) = &t.range_partitioning {
        line("range partitioning", json(v));
    }
    if let Some(v) = t.require_partition_filter {
        line("require partition filter", v.to_string());
    }
    if let Some(v) = &t.clustering {
        line("clustering", v.fields.join(","));
    }
    if let Some(v) = &t.table_constraints {
        line("constraints", json(v));
    }
    if let Some(v) = &t.default_collation {
        line("default collation", format!("{v:?}"));
    }
    if let Some(v) = &t.default_rounding_mode {
        line("default rounding mode", v.to_string());
    }
    if let Some(v) = &t.max_staleness {
        line("max staleness", v.clone());
    }
    if let Some(v) = &t.view {
        line("view", v.query.clone());
    }
    if let Some(v) = &t.materialized_view {
        line("materialized view", json(v));
    }
    if let Some(v) = &t.etag {
        line("etag", v.clone());
    }
    out.push_str("schema:\n");
    tree(&t.schema.unwrap_or_default().fields, 1, &mut out);
    print!("{out}");
    Ok(())
}

/// An option as its compact JSON, as BigQuery's resource has it.
fn json<T: serde::Serialize>(v: &T) -> String {
    serde_json::to_string(v).unwrap_or_else(|e| format!("<{e}>"))
}

/// `name:TYPE[:MODE],...`.
fn parse_schema(spec: &str) -> Result<Vec<TableFieldSchema>> {
    spec.split(',')
        .filter(|c| !c.trim().is_empty())
        .map(|col| {
            let parts: Vec<&str> = col.trim().split(':').collect();
            let (name, ty, mode) = match parts[..] {
                [n, t] => (n, t, None),
                [n, t, m] => (n, t, Some(m)),
                _ => {
                    return Err(Failure::new(format!(
                        "--schema: {col:?} is not name:TYPE or name:TYPE:MODE"
                    )));
                }
            };
            let field_type = match FieldType::parse(ty) {
                FieldType::Unknown(t) => {
                    return Err(Failure::new(format!("--schema: unknown type {t}")));
                }
                FieldType::Record | FieldType::Range => {
                    return Err(Failure::new(format!(
                        "--schema: {ty} columns need --schema-file"
                    )));
                }
                t => t,
            };
            let mut f = TableFieldSchema::new(name, field_type);
            if let Some(m) = mode {
                f = f.with_mode(match m.to_ascii_uppercase().as_str() {
                    "NULLABLE" => FieldMode::Nullable,
                    "REQUIRED" => FieldMode::Required,
                    "REPEATED" => FieldMode::Repeated,
                    _ => return Err(Failure::new(format!("--schema: unknown mode {m}"))),
                });
            }
            Ok(f)
        })
        .collect()
}

/// `bigq rm`.
pub async fn rm(global: &Global, id: &str, dataset: bool, recursive: bool) -> Result<()> {
    let client = connect::client(global, Transport::Rest).await?;
    if dataset {
        client.delete_dataset(id, recursive).await?;
        eprintln!("deleted dataset {id}");
    } else {
        client.delete_table(id).await?;
        eprintln!("deleted table {id}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_spec() {
        let f = parse_schema("id:INT64:REQUIRED, name:string,tags:STRING:repeated").unwrap();
        assert_eq!(f.len(), 3);
        assert_eq!(f[0].name, "id");
        assert_eq!(f[0].field_type, FieldType::Int64);
        assert_eq!(f[0].mode(), FieldMode::Required);
        assert_eq!(f[1].field_type, FieldType::String);
        assert_eq!(f[1].mode(), FieldMode::Nullable);
        assert_eq!(f[2].mode(), FieldMode::Repeated);
        let e = parse_schema("id").unwrap_err().to_string();
        assert!(e.contains("not name:TYPE"), "{e}");
        let e = parse_schema("id:WHAT").unwrap_err().to_string();
        assert!(e.contains("unknown type WHAT"), "{e}");
    }
}
