//! Load jobs (`configuration.load`): files read from `gs://` URIs (or an upload) into a
//! table. `options` reads the configuration; `csv`, `ndjson` and `parquet` decode one file
//! each into the table's Arrow layout; `rows` holds what the text formats share (typed rows,
//! bad records against `maxBadRecords`); this module picks the schema (given, the table's,
//! detected) and stores the rows under the write and create dispositions.

mod csv;
mod ndjson;
pub mod options;
mod parquet;
mod rows;

use bigq_codec::schema::TableFieldSchema;
use bytes::Bytes;
use datafusion::arrow::record_batch::RecordBatch;

use self::options::{Format, LoadOptions};
use self::rows::BadRecords;
use crate::catalog::{Catalog, Table, TableKind, TableRef, WriteGuard};
use crate::error::BqError;
use crate::gcs::Gcs;
use crate::jobs::TransferStats;

/// One file to load.
#[derive(Clone, Debug)]
pub struct Source {
    /// Its URI (`gs://..`, or the upload's name).
    pub uri: String,
    /// Its bytes.
    pub bytes: Bytes,
}

/// The files `sourceUris` name, read, in order (a URI with `*` names every match).
pub fn read_sources(gcs: &Gcs, uris: &[String]) -> Result<Vec<Source>, BqError> {
    if uris.is_empty() {
        return Err(BqError::invalid(
            "Required parameter is missing: sourceUris",
        ));
    }
    let mut out = Vec::new();
    for uri in uris {
        for o in gcs.sources(uri)? {
            let bytes = Bytes::from(gcs.read(&o)?);
            out.push(Source { uri: o.uri, bytes });
        }
    }
    Ok(out)
}

/// The table's columns, whether the job gave them, and the leading CSV rows to skip.
struct Columns {
    fields: Vec<TableFieldSchema>,
    given: bool,
    skip: u64,
}

fn no_schema() -> BqError {
    BqError::invalid("No schema specified on job or table.")
}

/// The schema the rows are read into: the job's, else the table's (unless a WRITE_TRUNCATE
/// with `autodetect` replaces it), else the one Parquet files carry or `autodetect` finds.
fn columns(o: &LoadOptions, existing: Option<&Table>, first: &Source) -> Result<Columns, BqError> {
    let skip = o.csv.skip_leading_rows.unwrap_or(0);
    if let Some(fields) = &o.schema {
        return Ok(Columns {
            fields: fields.clone(),
            given: true,
            skip,
        });
    }
    let redetect = o.autodetect && o.write == "WRITE_TRUNCATE";
    if let Some(t) = existing.filter(|_| !redetect) {
        return Ok(Columns {
            fields: t.schema.clone(),
            given: false,
            skip,
        });
    }
    let (fields, skip) = match o.format {
        Format::Parquet => (parquet::detect(&first.bytes, &first.uri)?, 0),
        _ if !o.autodetect => return Err(no_schema()),
        Format::Csv => {
            let text = csv::text(&first.bytes, &first.uri, o.csv.latin1)?;
            csv::detect(&text, &o.csv, &first.uri)?
        }
        Format::Json => {
            let text = csv::text(&first.bytes, &first.uri, false)?;
            (ndjson::detect(&text, &first.uri)?, 0)
        }
    };
    if fields.is_empty() {
        return Err(no_schema());
    }
    Ok(Columns {
        fields,
        given: true,
        skip,
    })
}

/// Runs a load of `sources` as `o` asks, recording what it moved in `stats`; the change is
/// one catalog commit (so it asks the job's gate, when there is one).
pub fn run(
    catalog: &Catalog,
    o: &LoadOptions,
    sources: &[Source],
    stats: &mut TransferStats,
) -> Result<(), BqError> {
    let t = &o.destination;
    stats.input_files = sources.len() as u64;
    stats.input_file_bytes = sources.iter().map(|s| s.bytes.len() as u64).sum();
    let existing = {
        let r = catalog.read();
        r.dataset(&t.project, &t.dataset)?;
        r.table(t).ok()
    };
    if let Some(e) = &existing
        && let TableKind::View { .. } = e.kind
    {
        return Err(BqError::invalid(format!(
            "Cannot load into {t}: it is a view, not a table."
        )));
    }
    let Some(first) = sources.first() else {
        return Err(BqError::invalid(
            "Required parameter is missing: sourceUris",
        ));
    };
    let cols = columns(o, existing.as_deref(), first)?;
    if o.format == Format::Csv {
        csv::check_flat(&cols.fields)?;
    }
    let table = Table::new(cols.fields.clone())?;
    let schema = table.arrow_schema.clone();
    let mut bad = BadRecords::new(o.format, o.max_bad_records);
    let mut batches: Vec<RecordBatch> = Vec::new();
    let outcome = (|| {
        for src in sources {
            match o.format {
                Format::Csv => {
                    let text = csv::text(&src.bytes, &src.uri, o.csv.latin1)?;
                    let (b, _) = csv::decode(
                        &text,
                        &src.uri,
                        &cols.fields,
                        schema.clone(),
                        &o.csv,
                        cols.skip,
                        o.ignore_unknown_values,
                        &mut bad,
                    )?;
                    batches.extend(b);
                }
                Format::Json => {
                    let text = csv::text(&src.bytes, &src.uri, false)?;
                    let (b, _) = ndjson::decode(
                        &text,
                        &src.uri,
                        &cols.fields,
                        schema.clone(),
                        o.ignore_unknown_values,
                        &mut bad,
                    )?;
                    batches.extend(b);
                }
                Format::Parquet => {
                    let (b, _) =
                        parquet::decode(src.bytes.clone(), &src.uri, &cols.fields, schema.clone())?;
                    batches.extend(b);
                }
            }
        }
        Ok::<(), BqError>(())
    })();
    stats.bad_records = bad.records.len() as u64;
    stats.errors = bad.records.iter().map(|b| b.to_error_proto()).collect();
    outcome?;
    stats.output_rows = batches.iter().map(|b| b.num_rows() as u64).sum();
    stats.output_bytes = crate::memory::batches_bytes(&batches) as u64;
    catalog.update(|w| store(w, t, o, cols.fields, cols.given, table, batches))
}

/// Whether two schemas have the same columns (names in any case, types), in order.
fn same_columns(a: &[TableFieldSchema], b: &[TableFieldSchema]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.name.eq_ignore_ascii_case(&y.name) && x.field_type == y.field_type)
}

/// Stores the loaded rows under the write and create dispositions.
fn store(
    w: &mut WriteGuard<'_>,
    t: &TableRef,
    o: &LoadOptions,
    fields: Vec<TableFieldSchema>,
    given: bool,
    mut fresh: Table,
    batches: Vec<RecordBatch>,
) -> Result<(), BqError> {
    w.dataset_mut(&t.project, &t.dataset)?;
    let Some(old) = w.table(t).ok() else {
        if o.create_never {
            return Err(BqError::not_found(format!("Not found: Table {t}")));
        }
        fresh.batches = batches;
        return w.create_table(t, fresh, false);
    };
    let replace = |mut table: Table| {
        table.schema = fields.clone();
        table.arrow_schema = fresh.arrow_schema.clone();
        table.batches = batches.clone();
        table.generation += 1;
        table
    };
    match o.write.as_str() {
        "WRITE_TRUNCATE" => w.put_table(t, replace((*old).clone())),
        "WRITE_EMPTY" if old.num_rows() > 0 => {
            Err(BqError::duplicate(format!("Already Exists: Table {t}")))
        }
        "WRITE_EMPTY" => w.put_table(t, replace((*old).clone())),
        _ => {
            if given && !same_columns(&fields, &old.schema) {
                return Err(BqError::invalid(format!(
                    "Provided Schema does not match Table {t}. Cannot add fields or change field types."
                )));
            }
            let mut table = (*old).clone();
            for b in batches {
                table.batches.push(
                    RecordBatch::try_new(table.arrow_schema.clone(), b.columns().to_vec())
                        .map_err(|e| {
                            BqError::invalid(format!(
                                "Provided Schema does not match Table {t}: {e}"
                            ))
                        })?,
                );
            }
            table.generation += 1;
            w.put_table(t, table)
        }
    }
}
