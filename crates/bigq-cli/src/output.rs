//! Arrow record batches out as a table grid, CSV, JSON, NDJSON or Parquet.
//!
//! CSV, JSON and NDJSON are written batch by batch and flushed after each, so rows reach
//! stdout as they arrive; the grid is the one format that waits (for the first rows only).

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use arrow_array::RecordBatch;
use arrow_json::writer::{JsonArray, LineDelimited};
use arrow_schema::SchemaRef;

use crate::cli::Format;
use crate::error::{Failure, Result};

/// Rows shown by `--format table` unless `--max-rows` says otherwise.
pub const DEFAULT_TABLE_ROWS: u64 = 100;

type Out = Box<dyn Write + Send>;

/// Where rows go, in one format, with a row limit.
pub struct Sink {
    format: Inner,
    schema: SchemaRef,
    limit: Option<u64>,
    rows: u64,
    bytes: Arc<AtomicU64>,
}

enum Inner {
    Table { out: Out, batches: Vec<RecordBatch> },
    Csv(arrow_csv::Writer<Out>),
    Json(arrow_json::Writer<Out, JsonArray>),
    Ndjson(arrow_json::Writer<Out, LineDelimited>),
    Parquet(parquet::arrow::ArrowWriter<Counting<std::fs::File>>),
}

impl Sink {
    /// A sink for `format` writing to `out` (stdout when `None`; Parquet needs a file).
    pub fn new(
        format: Format,
        schema: SchemaRef,
        out: Option<&std::path::Path>,
        limit: Option<u64>,
    ) -> Result<Self> {
        let bytes = Arc::new(AtomicU64::new(0));
        let writer = |bytes: &Arc<AtomicU64>| -> Result<Out> {
            Ok(match out {
                Some(path) => Box::new(Counting::new(
                    std::io::BufWriter::new(
                        std::fs::File::create(path).map_err(|e| Failure::file(path, e))?,
                    ),
                    bytes.clone(),
                )),
                None => Box::new(Counting::new(
                    std::io::BufWriter::new(std::io::stdout()),
                    bytes.clone(),
                )),
            })
        };
        let inner = match format {
            Format::Table => Inner::Table {
                out: writer(&bytes)?,
                batches: Vec::new(),
            },
            Format::Csv => Inner::Csv(arrow_csv::WriterBuilder::new().build(writer(&bytes)?)),
            Format::Json => Inner::Json(
                arrow_json::WriterBuilder::new()
                    .with_explicit_nulls(true)
                    .build(writer(&bytes)?),
            ),
            Format::Ndjson => Inner::Ndjson(
                arrow_json::WriterBuilder::new()
                    .with_explicit_nulls(true)
                    .build(writer(&bytes)?),
            ),
            Format::Parquet => {
                let path = out.ok_or_else(|| {
                    Failure::new("--format parquet writes to a file: add --out FILE.parquet")
                })?;
                let file = std::fs::File::create(path).map_err(|e| Failure::file(path, e))?;
                Inner::Parquet(parquet::arrow::ArrowWriter::try_new(
                    Counting::new(file, bytes.clone()),
                    schema.clone(),
                    None,
                )?)
            }
        };
        let limit = match (format, limit) {
            (Format::Table, None) => Some(DEFAULT_TABLE_ROWS),
            (_, l) => l,
        };
        Ok(Sink {
            format: inner,
            schema,
            limit,
            rows: 0,
            bytes,
        })
    }

    /// Writes `batch` (cut at the row limit). Returns false once the limit is reached.
    pub fn write(&mut self, batch: &RecordBatch) -> Result<bool> {
        let mut batch = batch.clone();
        if let Some(limit) = self.limit {
            let left = limit.saturating_sub(self.rows);
            if (batch.num_rows() as u64) > left {
                batch = batch.slice(0, left as usize);
            }
        }
        self.rows += batch.num_rows() as u64;
        if !matches!(self.format, Inner::Parquet(_)) {
            batch = bytes_as_base64(&batch)?;
            batch = decimals_as_text(&batch)?;
        }
        match &mut self.format {
            Inner::Table { batches, .. } => batches.push(batch),
            Inner::Csv(w) => w.write(&nested_as_json(&batch)?)?,
            Inner::Json(w) => {
                w.write(&batch)?;
                w.get_mut().flush()?;
            }
            Inner::Ndjson(w) => {
                w.write(&batch)?;
                w.get_mut().flush()?;
            }
            Inner::Parquet(w) => w.write(&batch)?,
        }
        Ok(self.limit.is_none_or(|l| self.rows < l))
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// A counter of the bytes written so far (Parquet: as row groups are flushed).
    pub fn bytes(&self) -> Arc<AtomicU64> {
        self.bytes.clone()
    }

    /// Writes what is left (the grid, the JSON array's end, Parquet's footer) and flushes.
    pub fn finish(self) -> Result<()> {
        match self.format {
            Inner::Table { mut out, batches } => {
                if self.schema.fields().is_empty() {
                    return Ok(());
                }
                let batches = if batches.is_empty() {
                    vec![RecordBatch::new_empty(self.schema.clone())]
                } else {
                    batches
                };
                let grid = arrow_cast::pretty::pretty_format_batches(&batches)?;
                writeln!(out, "{grid}")?;
                out.flush()?;
            }
            Inner::Csv(mut w) => {
                // Writes the header line when no row came (and nothing otherwise).
                w.write(&nested_as_json(&RecordBatch::new_empty(
                    self.schema.clone(),
                ))?)?;
                w.into_inner().flush()?;
            }
            Inner::Json(mut w) => {
                w.finish()?;
                let mut out = w.into_inner();
                writeln!(out)?;
                out.flush()?;
            }
            Inner::Ndjson(mut w) => {
                w.finish()?;
                w.into_inner().flush()?;
            }
            Inner::Parquet(w) => {
                w.close()?;
            }
        }
        Ok(())
    }
}

/// `batch` with its BYTES columns as base64 text, as BigQuery prints them (arrow's
/// formatters would write hex).
fn bytes_as_base64(batch: &RecordBatch) -> Result<RecordBatch> {
    use arrow_array::Array;
    use base64::Engine;
    let schema = batch.schema();
    if !schema
        .fields()
        .iter()
        .any(|f| f.data_type() == &arrow_schema::DataType::Binary)
    {
        return Ok(batch.clone());
    }
    let mut fields = Vec::with_capacity(batch.num_columns());
    let mut columns = Vec::with_capacity(batch.num_columns());
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        let Some(bin) = column.as_any().downcast_ref::<arrow_array::BinaryArray>() else {
            fields.push(field.clone());
            columns.push(column.clone());
            continue;
        };
        let text: arrow_array::StringArray = (0..bin.len())
            .map(|i| {
                (!bin.is_null(i))
                    .then(|| base64::engine::general_purpose::STANDARD.encode(bin.value(i)))
            })
            .collect();
        fields.push(Arc::new(arrow_schema::Field::new(
            field.name(),
            arrow_schema::DataType::Utf8,
            field.is_nullable(),
        )));
        columns.push(Arc::new(text) as arrow_array::ArrayRef);
    }
    Ok(RecordBatch::try_new(
        Arc::new(arrow_schema::Schema::new(fields)),
        columns,
    )?)
}

/// `batch` with its NUMERIC and BIGNUMERIC values (at any depth) as BigQuery renders them:
/// no trailing zeros after the point, no point without a fraction (`1.25`, `3`; Arrow's
/// formatters write every digit of the scale, `1.250000000`). The JSON formats write them
/// as strings, as BigQuery's API does, since a JSON number would not hold 38 or 76 digits.
fn decimals_as_text(batch: &RecordBatch) -> Result<RecordBatch> {
    fn has_decimal(t: &arrow_schema::DataType) -> bool {
        use arrow_schema::DataType as D;
        match t {
            D::Decimal128(..) | D::Decimal256(..) => true,
            D::List(f) | D::LargeList(f) | D::FixedSizeList(f, _) => has_decimal(f.data_type()),
            D::Struct(fs) => fs.iter().any(|f| has_decimal(f.data_type())),
            _ => false,
        }
    }
    let schema = batch.schema();
    if !schema.fields().iter().any(|f| has_decimal(f.data_type())) {
        return Ok(batch.clone());
    }
    let mut fields = Vec::with_capacity(batch.num_columns());
    let mut columns = Vec::with_capacity(batch.num_columns());
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        let (f, c) = decimal_text(field, column)?;
        fields.push(f);
        columns.push(c);
    }
    Ok(RecordBatch::try_new(
        Arc::new(arrow_schema::Schema::new(fields)),
        columns,
    )?)
}

/// A column with its decimals as text (see [`decimals_as_text`]), and its field so typed.
fn decimal_text(
    field: &arrow_schema::FieldRef,
    column: &arrow_array::ArrayRef,
) -> Result<(arrow_schema::FieldRef, arrow_array::ArrayRef)> {
    use arrow_array::Array;
    use arrow_schema::DataType as D;
    let retyped = |t: D| Arc::new(field.as_ref().clone().with_data_type(t));
    match field.data_type() {
        D::Decimal128(..) | D::Decimal256(..) => {
            let text = arrow_cast::cast(column, &D::Utf8)?;
            let text = text
                .as_any()
                .downcast_ref::<arrow_array::StringArray>()
                .ok_or_else(|| Failure::new("NUMERIC as text"))?;
            let trimmed: arrow_array::StringArray =
                text.iter().map(|v| v.map(trim_decimal)).collect();
            Ok((retyped(D::Utf8), Arc::new(trimmed)))
        }
        D::Struct(_) => {
            let s = column
                .as_any()
                .downcast_ref::<arrow_array::StructArray>()
                .ok_or_else(|| Failure::new("STRUCT column"))?;
            let mut fields = Vec::with_capacity(s.num_columns());
            let mut columns = Vec::with_capacity(s.num_columns());
            for (f, c) in s.fields().iter().zip(s.columns()) {
                let (f, c) = decimal_text(f, c)?;
                fields.push(f);
                columns.push(c);
            }
            let out = arrow_array::StructArray::try_new(
                fields.clone().into(),
                columns,
                s.nulls().cloned(),
            )?;
            Ok((retyped(D::Struct(fields.into())), Arc::new(out)))
        }
        D::List(_) => {
            let l = column
                .as_any()
                .downcast_ref::<arrow_array::ListArray>()
                .ok_or_else(|| Failure::new("ARRAY column"))?;
            let D::List(item) = field.data_type() else {
                unreachable!("matched as a list")
            };
            let (item, values) = decimal_text(item, l.values())?;
            let out = arrow_array::ListArray::try_new(
                item.clone(),
                l.offsets().clone(),
                values,
                l.nulls().cloned(),
            )?;
            Ok((retyped(D::List(item)), Arc::new(out)))
        }
        _ => Ok((field.clone(), column.clone())),
    }
}

/// `1.250000000` as `1.25`, `3.000000000` as `3`.
fn trim_decimal(v: &str) -> String {
    if !v.contains('.') {
        return v.to_string();
    }
    let t = v.trim_end_matches('0').trim_end_matches('.');
    if t == "-0" {
        "0".to_string()
    } else {
        t.to_string()
    }
}

/// `batch` with every ARRAY, STRUCT and RANGE column as JSON text, which CSV can hold.
fn nested_as_json(batch: &RecordBatch) -> Result<RecordBatch> {
    let schema = batch.schema();
    if !schema.fields().iter().any(|f| f.data_type().is_nested()) {
        return Ok(batch.clone());
    }
    let options = arrow_json::writer::EncoderOptions::default().with_explicit_nulls(true);
    let mut fields = Vec::with_capacity(batch.num_columns());
    let mut columns = Vec::with_capacity(batch.num_columns());
    let mut cell = Vec::new();
    for (field, column) in schema.fields().iter().zip(batch.columns()) {
        if !field.data_type().is_nested() {
            fields.push(field.clone());
            columns.push(column.clone());
            continue;
        }
        // Each cell as arrow-json's writer encodes it: struct members in the column's order,
        // NUMERIC as text, as the JSON formats print them.
        let mut encoder = arrow_json::writer::make_encoder(field, column, &options)?;
        let mut text = arrow_array::builder::StringBuilder::new();
        for i in 0..column.len() {
            if encoder.is_null(i) {
                text.append_null();
                continue;
            }
            cell.clear();
            encoder.encode(i, &mut cell);
            let json = std::str::from_utf8(&cell).map_err(|e| Failure::new(e.to_string()))?;
            text.append_value(json);
        }
        fields.push(Arc::new(arrow_schema::Field::new(
            field.name(),
            arrow_schema::DataType::Utf8,
            true,
        )));
        columns.push(Arc::new(text.finish()) as arrow_array::ArrayRef);
    }
    Ok(RecordBatch::try_new(
        Arc::new(arrow_schema::Schema::new(fields)),
        columns,
    )?)
}

/// A writer that counts the bytes through it.
pub struct Counting<W> {
    inner: W,
    bytes: Arc<AtomicU64>,
}

impl<W> Counting<W> {
    fn new(inner: W, bytes: Arc<AtomicU64>) -> Self {
        Counting { inner, bytes }
    }
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::trim_decimal;

    #[test]
    fn decimals_trim_as_bigquery_renders_them() {
        for (v, want) in [
            ("1.250000000", "1.25"),
            ("3.000000000", "3"),
            ("-0.500000000", "-0.5"),
            ("0.000000000", "0"),
            ("-0.000000000", "0"),
            ("120", "120"),
            ("100.000", "100"),
        ] {
            assert_eq!(trim_decimal(v), want);
        }
    }
}
