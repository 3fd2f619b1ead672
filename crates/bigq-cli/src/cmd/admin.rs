//! `bigq datasets`, `jobs`, `cancel`, `tables`, `schema`, `mk-dataset`, `mk-table`, `rm`.

use bigq::Transport;
use bigq::admin::{Dataset, Table};
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
    if let Some(d) = args.description {
        table = table.with_description(d);
    }
    let t = client.create_table(table).await?;
    eprintln!(
        "created table {}.{}.{}",
        t.project(),
        t.dataset_id(),
        t.table_id()
    );
    Ok(())
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
