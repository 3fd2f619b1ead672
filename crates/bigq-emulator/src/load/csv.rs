//! CSV files: records split by the `csv` crate (arrow-csv's own reader, used directly for
//! the byte offset and line of each record, which BigQuery's errors name, and for jagged
//! rows), each cell converted as BigQuery converts CSV text to its column's type; schemas
//! detected by arrow-csv's inference.

use std::borrow::Cow;

use arrow_csv::reader::Format as ArrowCsvFormat;
use bigq_codec::schema::{FieldMode, FieldType, TableFieldSchema};
use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::scalar::ScalarValue;
use serde_json::Value;

use super::options::CsvOptions;
use super::rows::{BadRecord, BadRecords, RowsBuilder};
use crate::error::BqError;
use crate::sql::values::json_to_scalar;

/// A file's bytes as text: UTF-8 checked, or ISO-8859-1 decoded.
pub fn text<'a>(bytes: &'a [u8], uri: &str, latin1: bool) -> Result<Cow<'a, str>, BqError> {
    if latin1 {
        return Ok(Cow::Owned(bytes.iter().map(|&b| char::from(b)).collect()));
    }
    std::str::from_utf8(bytes).map(Cow::Borrowed).map_err(|e| {
        BqError::invalid(format!(
            "Error while reading data, error message: Bad character (invalid UTF-8) at byte offset {} of {uri}; set encoding to ISO-8859-1 for Latin-1 files",
            e.valid_up_to()
        ))
        .with_location(uri.to_string())
    })
}

fn reader<'a>(text: &'a str, o: &CsvOptions) -> csv::Reader<&'a [u8]> {
    let mut b = csv::ReaderBuilder::new();
    b.has_headers(false)
        .flexible(true)
        .delimiter(o.delimiter)
        .quoting(o.quote.is_some())
        .double_quote(true);
    if let Some(q) = o.quote {
        b.quote(q);
    }
    b.from_reader(text.as_bytes())
}

/// The byte offset of the record after the first `skip` (the end when there are fewer).
fn offset_after(text: &str, o: &CsvOptions, skip: u64) -> Result<usize, BqError> {
    let mut r = reader(text, o);
    let mut rec = csv::ByteRecord::new();
    for _ in 0..skip {
        if !r.read_byte_record(&mut rec).map_err(csv_error)? {
            return Ok(text.len());
        }
    }
    Ok(usize::try_from(r.position().byte()).unwrap_or(text.len()))
}

fn csv_error(e: csv::Error) -> BqError {
    let at = e
        .position()
        .map(|p| format!(" at line {} (byte {})", p.line(), p.byte()))
        .unwrap_or_default();
    BqError::invalid(format!(
        "Error while reading data, error message: CSV data cannot be read{at}: {e}"
    ))
}

/// The BigQuery type of a column arrow-csv inferred.
fn detected(t: &DataType) -> FieldType {
    match t {
        DataType::Int64 => FieldType::Int64,
        DataType::Float64 => FieldType::Float64,
        DataType::Boolean => FieldType::Bool,
        DataType::Date32 => FieldType::Date,
        DataType::Timestamp(..) => FieldType::Timestamp,
        _ => FieldType::String,
    }
}

/// A column name BigQuery accepts, from a header cell: letters, digits and underscores.
fn column_name(header: &str, i: usize, t: &FieldType) -> String {
    let name: String = header
        .trim()
        .chars()
        .map(|c| if c.is_alphanumeric() { c } else { '_' })
        .collect();
    if name.is_empty() {
        format!("{}_field_{i}", t.standard_sql_name().to_ascii_lowercase())
    } else if name.starts_with(|c: char| c.is_ascii_digit()) {
        format!("_{name}")
    } else {
        name
    }
}

fn arrow_format(o: &CsvOptions, header: bool) -> ArrowCsvFormat {
    let mut f = ArrowCsvFormat::default()
        .with_header(header)
        .with_delimiter(o.delimiter)
        .with_truncated_rows(true);
    if let Some(q) = o.quote {
        f = f.with_quote(q);
    }
    f
}

/// `autodetect`: the columns of a CSV file and how many leading rows to skip. Types come
/// from arrow-csv's inference over the rows after `skipLeadingRows`; when that is not given,
/// a first row of text over other rows that are not all text is a header, as BigQuery
/// decides, and names the columns; else they are named `string_field_0`, `int64_field_1`, ...
pub fn detect(
    text: &str,
    o: &CsvOptions,
    uri: &str,
) -> Result<(Vec<TableFieldSchema>, u64), BqError> {
    let infer_error = |e: datafusion::arrow::error::ArrowError| {
        BqError::invalid(format!(
            "Error while reading data, error message: cannot detect the schema of {uri}: {e}"
        ))
    };
    let start = offset_after(text, o, o.skip_leading_rows.unwrap_or(0))?;
    let body = text.get(start..).unwrap_or("");
    let (all, _) = arrow_format(o, false)
        .infer_schema(body.as_bytes(), None)
        .map_err(infer_error)?;
    let mut skip = o.skip_leading_rows.unwrap_or(0);
    let mut names: Option<Vec<String>> = None;
    let mut types: Vec<FieldType> = all
        .fields()
        .iter()
        .map(|f| detected(f.data_type()))
        .collect();
    if o.skip_leading_rows.is_none() {
        let (first, _) = arrow_format(o, false)
            .infer_schema(body.as_bytes(), Some(1))
            .map_err(infer_error)?;
        let second = offset_after(body, o, 1)?;
        let (rest, n) = arrow_format(o, false)
            .infer_schema(body.get(second..).unwrap_or("").as_bytes(), None)
            .map_err(infer_error)?;
        let first_all_text = first
            .fields()
            .iter()
            .all(|f| matches!(f.data_type(), DataType::Utf8 | DataType::Null));
        let rest_typed = rest
            .fields()
            .iter()
            .any(|f| !matches!(f.data_type(), DataType::Utf8 | DataType::Null));
        if n > 0 && first_all_text && rest_typed {
            skip = 1;
            let mut r = reader(body, o);
            let mut rec = csv::StringRecord::new();
            if r.read_record(&mut rec).map_err(csv_error)? {
                names = Some(rec.iter().map(str::to_string).collect());
            }
            types = rest
                .fields()
                .iter()
                .map(|f| detected(f.data_type()))
                .collect();
        }
    }
    let fields = types
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let name = match names.as_ref().and_then(|n| n.get(i)) {
                Some(h) => column_name(h, i, t),
                None => format!("{}_field_{i}", t.standard_sql_name().to_ascii_lowercase()),
            };
            TableFieldSchema::new(name, t.clone())
        })
        .collect();
    Ok((fields, skip))
}

/// BigQuery's CSV spellings of BOOL: true/false, t/f, yes/no, y/n, 1/0, any case.
fn csv_bool(cell: &str) -> Option<bool> {
    match cell.to_ascii_lowercase().as_str() {
        "true" | "t" | "yes" | "y" | "1" => Some(true),
        "false" | "f" | "no" | "n" | "0" => Some(false),
        _ => None,
    }
}

/// One cell as its column's value; the error names the column and the value.
fn cell(
    f: &TableFieldSchema,
    position: usize,
    cell: Option<&str>,
    o: &CsvOptions,
    offset: u64,
) -> Result<ScalarValue, String> {
    let v = match cell {
        None => Value::Null,
        Some(c) if o.null_marker.as_deref() == Some(c) => Value::Null,
        Some("") if o.null_marker.is_none() => Value::Null,
        Some(c) if f.field_type == FieldType::Bool => match csv_bool(c) {
            Some(b) => Value::Bool(b),
            None => Value::String(c.to_string()),
        },
        Some(c) => Value::String(c.to_string()),
    };
    let shown = cell.unwrap_or("");
    json_to_scalar(f, &v).map_err(|e| {
        if v.is_null() {
            format!(
                "Required column value for column index: {position} is missing. Column name: {}",
                f.name
            )
        } else {
            format!(
                "Could not parse '{shown}' as {} for field {} (position {position}) starting at location {offset} with message '{}'; column_index: {position} column_name: \"{}\" column_type: {} value: \"{shown}\"",
                f.field_type.standard_sql_name(),
                f.name,
                e.message,
                f.name,
                f.field_type.standard_sql_name(),
            )
        }
    })
}

/// Reads the records of one file after `skip` leading ones into `schema`'s layout; bad
/// records go to `bad` (an error past `maxBadRecords`). Answers the batch and the rows read.
#[allow(clippy::too_many_arguments)]
pub fn decode(
    text: &str,
    uri: &str,
    fields: &[TableFieldSchema],
    schema: SchemaRef,
    o: &CsvOptions,
    skip: u64,
    ignore_unknown_values: bool,
    bad: &mut BadRecords,
) -> Result<(Option<RecordBatch>, u64), BqError> {
    let mut r = reader(text, o);
    let mut rec = csv::StringRecord::new();
    let mut rows = RowsBuilder::new(schema);
    let mut read = 0u64;
    let mut skipped = 0u64;
    loop {
        let more = match r.read_record(&mut rec) {
            Ok(more) => more,
            Err(e) => {
                let (line, offset) = e.position().map_or((0, 0), |p| (p.line(), p.byte()));
                read += 1;
                bad.push(
                    BadRecord {
                        uri: uri.to_string(),
                        line,
                        offset,
                        message: format!("CSV data cannot be read: {e}"),
                    },
                    read,
                )?;
                // The csv crate resynchronises at the next record.
                continue;
            }
        };
        if !more {
            break;
        }
        if skipped < skip {
            skipped += 1;
            continue;
        }
        read += 1;
        let (line, offset) = rec.position().map_or((0, 0), |p| (p.line(), p.byte()));
        let bad_record = |message: String| BadRecord {
            uri: uri.to_string(),
            line,
            offset,
            message,
        };
        // A single empty line is no record at all.
        if rec.len() == 1 && rec.get(0) == Some("") && fields.len() > 1 {
            read -= 1;
            continue;
        }
        if !o.allow_quoted_newlines && rec.iter().any(|c| c.contains('\n')) {
            bad.push(
                bad_record(format!(
                    "Error detected while parsing row starting at position: {offset}. Error: Missing close double quote (\") character."
                )),
                read,
            )?;
            continue;
        }
        if rec.len() > fields.len() && !ignore_unknown_values {
            bad.push(
                bad_record(format!(
                    "Too many values in row starting at position: {offset}. Found {} column(s) while expected {}.",
                    rec.len(),
                    fields.len()
                )),
                read,
            )?;
            continue;
        }
        if rec.len() < fields.len() && !o.allow_jagged_rows {
            bad.push(
                bad_record(format!(
                    "CSV table references column position {}, but line contains only {} columns.",
                    fields.len() - 1,
                    rec.len()
                )),
                read,
            )?;
            continue;
        }
        let values: Result<Vec<ScalarValue>, String> = fields
            .iter()
            .enumerate()
            .map(|(i, f)| cell(f, i, rec.get(i), o, offset))
            .collect();
        match values {
            Ok(v) => rows.push(v),
            Err(message) => bad.push(bad_record(message), read)?,
        }
    }
    Ok((rows.finish()?, read))
}

/// Whether every column is one CSV can hold (BigQuery's CSV has no RECORD or REPEATED).
pub fn check_flat(fields: &[TableFieldSchema]) -> Result<(), BqError> {
    match fields
        .iter()
        .find(|f| f.mode() == FieldMode::Repeated || f.field_type == FieldType::Record)
    {
        Some(f) => Err(BqError::invalid(format!(
            "Error while reading data, error message: CSV cannot load field {} of type {}{}: nested and repeated fields need NEWLINE_DELIMITED_JSON or PARQUET",
            f.name,
            if f.mode() == FieldMode::Repeated {
                "REPEATED "
            } else {
                ""
            },
            f.field_type.as_str()
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> CsvOptions {
        CsvOptions {
            delimiter: b',',
            quote: Some(b'"'),
            skip_leading_rows: None,
            null_marker: None,
            latin1: false,
            allow_jagged_rows: false,
            allow_quoted_newlines: false,
        }
    }

    #[test]
    fn a_text_first_row_over_typed_rows_is_a_header() {
        let (fields, skip) = detect("id,name\n1,a\n2,b\n", &opts(), "gs://b/x").unwrap();
        assert_eq!(skip, 1);
        assert_eq!(fields[0].name, "id");
        assert_eq!(fields[0].field_type, FieldType::Int64);
        assert_eq!(fields[1].field_type, FieldType::String);
        let (fields, skip) = detect("1,a\n2,b\n", &opts(), "gs://b/x").unwrap();
        assert_eq!(skip, 0);
        assert_eq!(fields[0].name, "int64_field_0");
        assert_eq!(fields[1].name, "string_field_1");
    }

    #[test]
    fn latin1_is_decoded_and_bad_utf8_is_an_error_naming_the_offset() {
        assert_eq!(text(b"caf\xe9", "gs://b/x", true).unwrap(), "café");
        let e = text(b"ab\xe9", "gs://b/x", false).unwrap_err();
        assert!(e.message.contains("byte offset 2"), "{e}");
    }
}
