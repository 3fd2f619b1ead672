//! Rows of an NDJSON or CSV file as JSON objects shaped for the table's schema.
//!
//! bigq's Storage Write encoder takes any `Serialize` row, so a `serde_json::Value` object
//! goes in as it is; this module only reads the file and gives text the JSON type the
//! column wants (`"12"` for INT64 becomes `12`, as BigQuery's own JSON and CSV loads
//! accept). A value that does not parse is passed on as it is, and the encoder's error
//! names the column and the value.

use std::io::BufRead;

use bigq::schema::{FieldType, TableFieldSchema};
use serde_json::{Map, Value};

use crate::error::{Failure, Result};

/// One row and the line of the file it starts on (1-based).
pub struct Row {
    /// The file's line number.
    pub line: u64,
    /// The row, a JSON object.
    pub value: Value,
}

/// A source of rows.
pub trait Rows {
    /// The next row, `None` at the end; an error names the line.
    fn next_row(&mut self) -> Option<Result<Row>>;
    /// Bytes of the file read so far.
    fn position(&self) -> u64;
}

/// NDJSON: one object a line, blank lines skipped.
pub struct Ndjson<R> {
    reader: R,
    fields: Vec<TableFieldSchema>,
    line: u64,
    pos: u64,
    buf: String,
}

impl<R: BufRead> Ndjson<R> {
    /// Reads `reader`, shaping rows for `fields`.
    pub fn new(reader: R, fields: Vec<TableFieldSchema>) -> Self {
        Ndjson {
            reader,
            fields,
            line: 0,
            pos: 0,
            buf: String::new(),
        }
    }
}

impl<R: BufRead> Rows for Ndjson<R> {
    fn next_row(&mut self) -> Option<Result<Row>> {
        loop {
            self.buf.clear();
            let n = match self.reader.read_line(&mut self.buf) {
                Ok(0) => return None,
                Ok(n) => n,
                Err(e) => return Some(Err(Failure::new(format!("line {}: {e}", self.line + 1)))),
            };
            self.line += 1;
            self.pos += n as u64;
            let text = self.buf.trim();
            if text.is_empty() {
                continue;
            }
            let value = match serde_json::from_str::<Value>(text) {
                Ok(Value::Object(mut m)) => {
                    shape_object(&mut m, &self.fields);
                    Value::Object(m)
                }
                Ok(_) => {
                    return Some(Err(Failure::new(format!(
                        "line {}: not a JSON object",
                        self.line
                    ))));
                }
                Err(e) => {
                    return Some(Err(Failure::new(format!(
                        "line {}: invalid JSON: {e}",
                        self.line
                    ))));
                }
            };
            return Some(Ok(Row {
                line: self.line,
                value,
            }));
        }
    }

    fn position(&self) -> u64 {
        self.pos
    }
}

/// CSV with a header line naming the columns; an empty field is NULL.
pub struct Csv<R: std::io::Read> {
    reader: csv::Reader<R>,
    /// Per CSV column, its name and the table field.
    columns: Vec<(String, Option<TableFieldSchema>)>,
    record: csv::StringRecord,
}

impl<R: std::io::Read> Csv<R> {
    /// Reads `reader`, whose first line names the columns.
    pub fn new(reader: R, fields: &[TableFieldSchema]) -> Result<Self> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(true)
            .from_reader(reader);
        let headers = reader
            .headers()
            .map_err(|e| Failure::new(format!("line 1: {e}")))?
            .clone();
        let columns = headers
            .iter()
            .map(|h| {
                let f = fields
                    .iter()
                    .find(|f| f.name.eq_ignore_ascii_case(h))
                    .cloned();
                (h.to_string(), f)
            })
            .collect();
        Ok(Csv {
            reader,
            columns,
            record: csv::StringRecord::new(),
        })
    }
}

impl<R: std::io::Read> Rows for Csv<R> {
    fn next_row(&mut self) -> Option<Result<Row>> {
        match self.reader.read_record(&mut self.record) {
            Ok(false) => None,
            Ok(true) => {
                let line = self.record.position().map_or(0, |p| p.line());
                let mut m = Map::new();
                for (i, text) in self.record.iter().enumerate() {
                    let Some((name, field)) = self.columns.get(i) else {
                        return Some(Err(Failure::new(format!(
                            "line {line}: more fields than the header names"
                        ))));
                    };
                    let value = match field {
                        Some(f) if f.field_type == FieldType::String => Value::from(text),
                        _ if text.is_empty() => Value::Null,
                        Some(f) => {
                            from_text(&f.field_type, text).unwrap_or_else(|| Value::from(text))
                        }
                        None => Value::from(text),
                    };
                    m.insert(name.clone(), value);
                }
                Some(Ok(Row {
                    line,
                    value: Value::Object(m),
                }))
            }
            Err(e) => {
                let line = e.position().map_or(0, |p| p.line());
                Some(Err(Failure::new(format!("line {line}: {e}"))))
            }
        }
    }

    fn position(&self) -> u64 {
        self.reader.position().byte()
    }
}

/// Shapes every member of `m` that names a field.
fn shape_object(m: &mut Map<String, Value>, fields: &[TableFieldSchema]) {
    for (name, v) in m.iter_mut() {
        if let Some(f) = fields.iter().find(|f| f.name.eq_ignore_ascii_case(name)) {
            shape(v, f);
        }
    }
}

/// Gives text the JSON type `field` wants, through arrays and records.
fn shape(v: &mut Value, field: &TableFieldSchema) {
    match v {
        Value::Array(items) if field.is_repeated() => {
            for item in items {
                shape_scalar(item, field);
            }
        }
        _ => shape_scalar(v, field),
    }
}

fn shape_scalar(v: &mut Value, field: &TableFieldSchema) {
    match (&field.field_type, &mut *v) {
        (FieldType::Record, Value::Object(m)) => shape_object(m, &field.fields),
        (FieldType::Numeric | FieldType::BigNumeric, Value::Number(n)) => {
            // Text keeps every digit; the encoder parses decimals from text.
            *v = Value::String(n.to_string());
        }
        (ty, Value::String(s)) => {
            if let Some(typed) = from_text(ty, s) {
                *v = typed;
            }
        }
        _ => {}
    }
}

/// `text` as the JSON type a column of type `ty` wants, or `None` where it stays text (a
/// type taken as text, or a value that does not parse).
fn from_text(ty: &FieldType, text: &str) -> Option<Value> {
    let t = text.trim();
    match ty {
        FieldType::Int64 => t.parse::<i64>().ok().map(Value::from),
        FieldType::Float64 => {
            let n = match t {
                "NaN" | "nan" => Some(f64::NAN),
                "Infinity" | "inf" => Some(f64::INFINITY),
                "-Infinity" | "-inf" => Some(f64::NEG_INFINITY),
                _ => t.parse::<f64>().ok(),
            };
            // serde_json has no NaN or infinity: those stay text, which the encoder reports.
            n.and_then(serde_json::Number::from_f64).map(Value::Number)
        }
        FieldType::Bool if t.eq_ignore_ascii_case("true") || t == "1" => Some(Value::Bool(true)),
        FieldType::Bool if t.eq_ignore_ascii_case("false") || t == "0" => Some(Value::Bool(false)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bigq::schema::FieldMode;

    fn fields() -> Vec<TableFieldSchema> {
        vec![
            TableFieldSchema::new("id", FieldType::Int64),
            TableFieldSchema::new("name", FieldType::String),
            TableFieldSchema::new("score", FieldType::Float64),
            TableFieldSchema::new("ok", FieldType::Bool),
            TableFieldSchema::new("tags", FieldType::Int64).with_mode(FieldMode::Repeated),
        ]
    }

    fn all(rows: &mut dyn Rows) -> Vec<(u64, String)> {
        let mut out = Vec::new();
        while let Some(r) = rows.next_row() {
            let r = r.unwrap_or_else(|e| panic!("{e}"));
            out.push((r.line, r.value.to_string()));
        }
        out
    }

    #[test]
    fn ndjson_lines_and_types() {
        let text =
            "{\"id\":\"1\",\"name\":\"a\",\"tags\":[\"2\",3]}\n\n{\"id\":4,\"ok\":\"TRUE\"}\n";
        let mut r = Ndjson::new(text.as_bytes(), fields());
        assert_eq!(
            all(&mut r),
            vec![
                (1, r#"{"id":1,"name":"a","tags":[2,3]}"#.to_string()),
                (3, r#"{"id":4,"ok":true}"#.to_string()),
            ]
        );
        assert_eq!(r.position(), text.len() as u64);
    }

    #[test]
    fn ndjson_errors_name_the_line() {
        let mut r = Ndjson::new("{\"id\":1}\n[1]\n{oops\n".as_bytes(), fields());
        assert!(r.next_row().unwrap().is_ok());
        let e = r.next_row().unwrap().err().unwrap().to_string();
        assert_eq!(e, "line 2: not a JSON object");
        let e = r.next_row().unwrap().err().unwrap().to_string();
        assert!(e.starts_with("line 3: invalid JSON"), "{e}");
    }

    #[test]
    fn csv_rows_with_header_and_nulls() {
        let text = "id,name,score,ok\n1,a,1.5,true\n2,,,\n\"3\",\"x,y\",nope,false\n";
        let mut r = Csv::new(text.as_bytes(), &fields()).unwrap();
        assert_eq!(
            all(&mut r),
            vec![
                (
                    2,
                    r#"{"id":1,"name":"a","ok":true,"score":1.5}"#.to_string()
                ),
                (
                    3,
                    r#"{"id":2,"name":"","ok":null,"score":null}"#.to_string()
                ),
                // "nope" stays text: the encoder reports it with its column.
                (
                    4,
                    r#"{"id":3,"name":"x,y","ok":false,"score":"nope"}"#.to_string()
                ),
            ]
        );
    }
}
