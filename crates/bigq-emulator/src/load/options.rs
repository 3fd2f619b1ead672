//! `configuration.load` read into typed options, with BigQuery's defaults, and the
//! configuration a load job reports back.

use bigq_codec::schema::TableFieldSchema;
use serde_json::{Value, json};

use crate::catalog::TableRef;
use crate::error::BqError;

/// `sourceFormat`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `CSV` (the default).
    Csv,
    /// `NEWLINE_DELIMITED_JSON`.
    Json,
    /// `PARQUET`.
    Parquet,
}

impl Format {
    /// The name BigQuery's messages use (`CSV table encountered too many errors`).
    pub fn table_word(self) -> &'static str {
        match self {
            Format::Csv => "CSV",
            Format::Json => "JSON",
            Format::Parquet => "Parquet",
        }
    }
}

/// The CSV options of a load.
#[derive(Clone, Debug)]
pub struct CsvOptions {
    /// `fieldDelimiter`, one byte (`,` by default; `\t` and `tab` for a tab).
    pub delimiter: u8,
    /// `quote` (`"` by default); None when quoting is off (`quote: ""`).
    pub quote: Option<u8>,
    /// `skipLeadingRows`; None when not given (autodetect then looks for a header).
    pub skip_leading_rows: Option<u64>,
    /// `nullMarker`; None for BigQuery's default, the empty string.
    pub null_marker: Option<String>,
    /// `encoding` is ISO-8859-1 (else UTF-8).
    pub latin1: bool,
    /// `allowJaggedRows`.
    pub allow_jagged_rows: bool,
    /// `allowQuotedNewlines`.
    pub allow_quoted_newlines: bool,
}

/// A load job's options.
#[derive(Clone, Debug)]
pub struct LoadOptions {
    /// `destinationTable`.
    pub destination: TableRef,
    /// `sourceUris`.
    pub source_uris: Vec<String>,
    /// `sourceFormat`.
    pub format: Format,
    /// `schema.fields`, when given.
    pub schema: Option<Vec<TableFieldSchema>>,
    /// `autodetect`.
    pub autodetect: bool,
    /// `createDisposition` is CREATE_NEVER.
    pub create_never: bool,
    /// `writeDisposition` (WRITE_APPEND by default for loads).
    pub write: String,
    /// `maxBadRecords`.
    pub max_bad_records: u64,
    /// `ignoreUnknownValues`.
    pub ignore_unknown_values: bool,
    /// The CSV options.
    pub csv: CsvOptions,
}

fn str_at<'a>(cfg: &'a Value, key: &str) -> Option<&'a str> {
    cfg.get(key).and_then(Value::as_str)
}

fn bool_at(cfg: &Value, key: &str) -> bool {
    cfg.get(key).and_then(Value::as_bool).unwrap_or(false)
}

/// An int64 given as a JSON number or string.
fn int_at(cfg: &Value, key: &str) -> Result<Option<u64>, BqError> {
    match cfg.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => v
            .as_u64()
            .or_else(|| v.as_str()?.parse().ok())
            .map(Some)
            .ok_or_else(|| BqError::invalid(format!("Invalid value for {key}: {v}"))),
    }
}

/// One delimiter byte of `fieldDelimiter`, read as BigQuery reads it.
fn delimiter(d: &str, latin1: bool) -> Result<u8, BqError> {
    let d = match d {
        "\\t" | "tab" | "\t" => "\t",
        other => other,
    };
    let mut chars = d.chars();
    let (Some(c), None) = (chars.next(), chars.next()) else {
        return Err(BqError::invalid(format!(
            "Unsupported by bigq-emulator: fieldDelimiter {d:?} (one character only)"
        )));
    };
    let limit = if latin1 { 0xff } else { 0x7f };
    u8::try_from(u32::from(c))
        .ok()
        .filter(|b| u32::from(*b) <= limit)
        .ok_or_else(|| {
            BqError::invalid(format!(
                "Unsupported by bigq-emulator: fieldDelimiter {d:?} outside ASCII in UTF-8 files"
            ))
        })
}

impl LoadOptions {
    /// Reads `configuration.load`; `project` is the job's.
    pub fn parse(project: &str, cfg: &Value) -> Result<LoadOptions, BqError> {
        let d = cfg
            .get("destinationTable")
            .ok_or_else(|| BqError::invalid("Required parameter is missing: destinationTable"))?;
        let part = |k: &str| {
            d.get(k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let destination = TableRef {
            project: part("projectId").unwrap_or_else(|| project.to_string()),
            dataset: part("datasetId").ok_or_else(|| {
                BqError::invalid("Required parameter is missing: destinationTable.datasetId")
            })?,
            table: part("tableId").ok_or_else(|| {
                BqError::invalid("Required parameter is missing: destinationTable.tableId")
            })?,
        };
        let format = match str_at(cfg, "sourceFormat").unwrap_or("CSV") {
            "" | "CSV" => Format::Csv,
            "NEWLINE_DELIMITED_JSON" => Format::Json,
            "PARQUET" => Format::Parquet,
            other => {
                return Err(BqError::invalid(format!(
                    "Unsupported by bigq-emulator: sourceFormat {other} (CSV, NEWLINE_DELIMITED_JSON and PARQUET only)"
                )));
            }
        };
        let schema = match cfg.pointer("/schema/fields") {
            None | Some(Value::Null) => None,
            Some(f) => Some(
                serde_json::from_value::<Vec<TableFieldSchema>>(f.clone())
                    .map_err(|e| BqError::invalid(format!("Invalid schema: {e}")))?,
            ),
        }
        .filter(|f| !f.is_empty());
        let latin1 = match str_at(cfg, "encoding").unwrap_or("UTF-8") {
            "" | "UTF-8" | "UTF8" => false,
            "ISO-8859-1" => true,
            other => {
                return Err(BqError::invalid(format!(
                    "Unsupported by bigq-emulator: encoding {other} (UTF-8 and ISO-8859-1 only)"
                )));
            }
        };
        let quote = match str_at(cfg, "quote") {
            None => Some(b'"'),
            Some("") => None,
            Some(q) => Some(delimiter(q, latin1).map_err(|_| {
                BqError::invalid(format!(
                    "Unsupported by bigq-emulator: quote {q:?} (one ASCII character only)"
                ))
            })?),
        };
        let csv = CsvOptions {
            delimiter: delimiter(str_at(cfg, "fieldDelimiter").unwrap_or(","), latin1)?,
            quote,
            skip_leading_rows: int_at(cfg, "skipLeadingRows")?,
            null_marker: str_at(cfg, "nullMarker").map(str::to_string),
            latin1,
            allow_jagged_rows: bool_at(cfg, "allowJaggedRows"),
            allow_quoted_newlines: bool_at(cfg, "allowQuotedNewlines"),
        };
        let write = str_at(cfg, "writeDisposition")
            .filter(|w| !w.is_empty())
            .unwrap_or("WRITE_APPEND")
            .to_string();
        if !["WRITE_APPEND", "WRITE_TRUNCATE", "WRITE_EMPTY"].contains(&write.as_str()) {
            return Err(BqError::invalid(format!(
                "Invalid value for writeDisposition: {write}"
            )));
        }
        let create_never = match str_at(cfg, "createDisposition").unwrap_or("") {
            "" | "CREATE_IF_NEEDED" => false,
            "CREATE_NEVER" => true,
            other => {
                return Err(BqError::invalid(format!(
                    "Invalid value for createDisposition: {other}"
                )));
            }
        };
        let source_uris: Vec<String> = cfg
            .get("sourceUris")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        Ok(LoadOptions {
            destination,
            source_uris,
            format,
            schema,
            autodetect: bool_at(cfg, "autodetect"),
            create_never,
            write,
            max_bad_records: int_at(cfg, "maxBadRecords")?.unwrap_or(0),
            ignore_unknown_values: bool_at(cfg, "ignoreUnknownValues"),
            csv,
        })
    }
}

/// The `configuration` BigQuery reports for a load job: the request's, with the
/// disposition defaults spelled out.
pub fn configuration(cfg: &Value) -> Value {
    let mut l = cfg.as_object().cloned().unwrap_or_default();
    l.entry("sourceFormat").or_insert("CSV".into());
    l.entry("writeDisposition").or_insert("WRITE_APPEND".into());
    l.entry("createDisposition")
        .or_insert("CREATE_IF_NEEDED".into());
    json!({"load": l, "jobType": "LOAD"})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_bigquerys() {
        let o = LoadOptions::parse(
            "p",
            &json!({"destinationTable": {"datasetId": "d", "tableId": "t"}, "sourceUris": ["gs://b/x"]}),
        )
        .unwrap();
        assert_eq!(o.destination, TableRef::new("p", "d", "t"));
        assert_eq!(o.format, Format::Csv);
        assert_eq!(o.write, "WRITE_APPEND");
        assert!(!o.create_never);
        assert_eq!(o.csv.delimiter, b',');
        assert_eq!(o.csv.quote, Some(b'"'));
        assert_eq!(o.max_bad_records, 0);
    }

    #[test]
    fn tab_delimiters_and_bad_options_are_read_as_bigquery_reads_them() {
        assert_eq!(delimiter("\\t", false).unwrap(), b'\t');
        assert_eq!(delimiter("tab", false).unwrap(), b'\t');
        assert_eq!(delimiter("\u{fe}", true).unwrap(), 0xfe);
        assert!(delimiter("\u{fe}", false).is_err());
        assert!(delimiter("ab", false).is_err());
        let e = LoadOptions::parse(
            "p",
            &json!({"destinationTable": {"datasetId": "d", "tableId": "t"}, "sourceFormat": "ORC"}),
        )
        .unwrap_err();
        assert!(e.message.contains("ORC"), "{e}");
    }
}
