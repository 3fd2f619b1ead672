//! Query parameters (`queryParameters` of a request) as DataFusion placeholder values.

use bigq_codec::schema::{FieldMode, FieldType, TableFieldSchema};
use datafusion::arrow::datatypes::DataType;
use datafusion::scalar::ScalarValue;
use datafusion::sql::sqlparser::ast;
use serde_json::{Map, Value};

use crate::error::{BqError, BqResult};
use crate::sql::ast::call;
use crate::sql::values::json_to_scalar;

/// Parameters of one query, each with its BigQuery type.
#[derive(Clone, Debug, Default)]
pub struct Params {
    named: Vec<(String, Param)>,
    positional: Vec<Param>,
}

/// One parameter: its value, and its type as a BigQuery field. A JSON, GEOGRAPHY, RANGE or
/// INTERVAL value is kept as its text (the query reads it as a literal of its type).
#[derive(Clone, Debug)]
pub struct Param {
    /// The value.
    pub value: ScalarValue,
    /// Its type.
    pub field: TableFieldSchema,
}

impl Params {
    /// Parses `queryParameters`; `mode` is `parameterMode` (`NAMED` or `POSITIONAL`).
    pub fn from_json(params: Option<&Value>) -> BqResult<Params> {
        let mut out = Params::default();
        let Some(list) = params.and_then(Value::as_array) else {
            return Ok(out);
        };
        for p in list {
            let ty = p
                .get("parameterType")
                .ok_or_else(|| BqError::invalid("Query parameter is missing its type"))?;
            let name = p.get("name").and_then(Value::as_str).unwrap_or("");
            let shown = if name.is_empty() { "?" } else { name };
            let field = type_to_field(name, ty)?;
            let value = value_to_json(p.get("parameterValue").unwrap_or(&Value::Null), ty);
            check_precision(shown, ty, &value)?;
            let scalar = match field.field_type {
                FieldType::Range | FieldType::Interval if field.mode() != FieldMode::Repeated => {
                    match &value {
                        Value::Null => ScalarValue::Utf8(None),
                        Value::String(s) => ScalarValue::Utf8(Some(s.clone())),
                        other => {
                            return Err(BqError::invalid_query(format!(
                                "Invalid value for query parameter {shown}: {other}"
                            )));
                        }
                    }
                }
                _ => json_to_scalar(&field, &value).map_err(|e| {
                    BqError::invalid_query(format!(
                        "Invalid value for query parameter {shown}: {}",
                        e.message
                    ))
                })?,
            };
            let param = Param {
                value: scalar,
                field,
            };
            if name.is_empty() {
                out.positional.push(param);
            } else {
                out.named.push((name.to_string(), param));
            }
        }
        Ok(out)
    }
}

fn type_to_field(name: &str, ty: &Value) -> BqResult<TableFieldSchema> {
    let t = ty.get("type").and_then(Value::as_str).unwrap_or("STRING");
    match t {
        "ARRAY" => {
            let inner = ty
                .get("arrayType")
                .ok_or_else(|| BqError::invalid("ARRAY parameter type needs arrayType"))?;
            let mut f = type_to_field(name, inner)?;
            f.mode = Some(FieldMode::Repeated);
            Ok(f)
        }
        "STRUCT" => {
            let mut subs = Vec::new();
            for (i, st) in ty
                .get("structTypes")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                let n = st
                    .get("name")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_else(|| format!("_field_{}", i + 1));
                let inner = st.get("type").unwrap_or(&Value::Null);
                subs.push(type_to_field(&n, inner)?);
            }
            Ok(TableFieldSchema::record(name, subs))
        }
        "RANGE" => {
            let element = ty
                .pointer("/rangeElementType/type")
                .and_then(Value::as_str)
                .ok_or_else(|| BqError::invalid("RANGE parameter type needs rangeElementType"))?;
            match FieldType::parse(element) {
                e @ (FieldType::Date | FieldType::DateTime | FieldType::Timestamp) => {
                    Ok(TableFieldSchema::range(name, e))
                }
                _ => Err(BqError::invalid_query(format!(
                    "RANGE parameter {name} has element type {element}; RANGE takes DATE, \
                     DATETIME or TIMESTAMP"
                ))),
            }
        }
        other => match FieldType::parse(other) {
            FieldType::Unknown(u) => Err(BqError::invalid_query(format!(
                "Unsupported query parameter type {u}"
            ))),
            ft => Ok(TableFieldSchema::new(name, ft)),
        },
    }
}

/// `{"value": ..}` / `{"arrayValues": [..]}` / `{"structValues": {..}}` to plain JSON.
fn value_to_json(v: &Value, ty: &Value) -> Value {
    let t = ty.get("type").and_then(Value::as_str).unwrap_or("");
    match t {
        "ARRAY" => {
            let inner = ty.get("arrayType").unwrap_or(&Value::Null);
            match v.get("arrayValues").and_then(Value::as_array) {
                Some(items) => {
                    Value::Array(items.iter().map(|i| value_to_json(i, inner)).collect())
                }
                None => Value::Null,
            }
        }
        "STRUCT" => match v.get("structValues").and_then(Value::as_object) {
            Some(vals) => {
                let mut out = Map::new();
                for st in ty
                    .get("structTypes")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let n = st.get("name").and_then(Value::as_str).unwrap_or("");
                    let inner = st.get("type").unwrap_or(&Value::Null);
                    out.insert(
                        n.to_string(),
                        value_to_json(vals.get(n).unwrap_or(&Value::Null), inner),
                    );
                }
                Value::Object(out)
            }
            None => Value::Null,
        },
        // `{"rangeValue": {"start": {"value": ..}, "end": {"value": ..}}}` as RANGE's text,
        // an absent or NULL bound unbounded.
        "RANGE" => match v.get("rangeValue") {
            Some(r) => {
                let bound = |k: &str| {
                    r.get(k)
                        .and_then(|b| b.get("value"))
                        .and_then(Value::as_str)
                        .unwrap_or("UNBOUNDED")
                        .to_string()
                };
                Value::String(format!("[{}, {})", bound("start"), bound("end")))
            }
            None => Value::Null,
        },
        _ => v.get("value").cloned().unwrap_or(Value::Null),
    }
}

/// `timestampPrecision` 12 (picoseconds): a TIMESTAMP value is kept at microseconds, so a
/// value with digits below them is refused rather than cut.
fn check_precision(name: &str, ty: &Value, value: &Value) -> BqResult<()> {
    let precision = ty
        .get("timestampPrecision")
        .and_then(|p| p.as_i64().or_else(|| p.as_str()?.parse().ok()))
        .unwrap_or(6);
    if precision <= 6 {
        return Ok(());
    }
    let Some(text) = value.as_str() else {
        return Ok(());
    };
    let digits: String = text
        .split_once('.')
        .map(|(_, f)| f.chars().take_while(char::is_ascii_digit).collect())
        .unwrap_or_default();
    if digits.len() > 6 && digits[6..].chars().any(|c| c != '0') {
        return Err(BqError::unsupported(format!(
            "query parameter {name}: TIMESTAMP values below microseconds \
             (timestampPrecision {precision}): {text}"
        )));
    }
    Ok(())
}

impl Params {
    /// Parameters given as values (`EXECUTE IMMEDIATE .. USING`).
    pub fn of(named: Vec<(String, Param)>, positional: Vec<Param>) -> Params {
        Params { named, positional }
    }

    /// A named parameter.
    pub fn named(&self, name: &str) -> Option<&Param> {
        self.named
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    }

    /// The `i`-th (0-based) positional parameter.
    pub fn positional(&self, i: usize) -> Option<&Param> {
        self.positional.get(i)
    }
}

impl Param {
    /// The GoogleSQL literal of a JSON, GEOGRAPHY, RANGE or INTERVAL value, for the query's
    /// rewrite to read as if the query had it written; `None` for other types.
    pub fn typed_literal(&self) -> Option<String> {
        if self.field.mode() == FieldMode::Repeated {
            // An empty or NULL array keeps its element type (an ARRAY<STRUCT> has no type
            // to cast its elements' literal to).
            let empty = match &self.value {
                ScalarValue::List(l) => {
                    use datafusion::arrow::array::Array;
                    l.is_null(0) || l.value(0).is_empty()
                }
                _ => false,
            };
            return empty.then(|| format!("{}[]", type_text(&self.field)));
        }
        let type_name = match &self.field.field_type {
            FieldType::Json | FieldType::Geography | FieldType::Interval | FieldType::Range => {
                type_text(&self.field)
            }
            _ => return None,
        };
        let text = match &self.value {
            ScalarValue::Utf8(Some(s)) => s,
            _ => return Some(format!("CAST(NULL AS {type_name})")),
        };
        let quoted = format!(
            "'{}'",
            text.replace('\\', "\\\\")
                .replace('\'', "\\'")
                .replace('\n', "\\n")
                .replace('\r', "\\r")
        );
        Some(match &self.field.field_type {
            FieldType::Geography => format!("ST_GEOGFROMTEXT({quoted})"),
            FieldType::Interval => format!("CAST({quoted} AS INTERVAL)"),
            _ => format!("{type_name} {quoted}"),
        })
    }
}

/// A BigQuery field's type as GoogleSQL type text (`ARRAY<STRUCT<`x` INT64>>`).
fn type_text(f: &TableFieldSchema) -> String {
    let one = match &f.field_type {
        FieldType::Record => {
            let fields: Vec<String> = f
                .fields
                .iter()
                .map(|sub| format!("`{}` {}", sub.name, type_text(sub)))
                .collect();
            format!("STRUCT<{}>", fields.join(", "))
        }
        FieldType::Range => format!(
            "RANGE<{}>",
            f.range_element_type
                .as_ref()
                .map_or("DATE", |r| r.element_type.standard_sql_name())
        ),
        other => other.standard_sql_name().to_string(),
    };
    if f.mode() == FieldMode::Repeated {
        format!("ARRAY<{one}>")
    } else {
        one
    }
}

fn sql_type(t: &DataType) -> Option<ast::DataType> {
    use ast::DataType as D;
    Some(match t {
        DataType::Int64 => D::BigInt(None),
        DataType::Float64 => D::Double(ast::ExactNumberInfo::None),
        DataType::Utf8 | DataType::Utf8View | DataType::LargeUtf8 => D::Varchar(None),
        DataType::Boolean => D::Boolean,
        DataType::Binary => D::Bytea,
        DataType::Decimal128(p, s) | DataType::Decimal256(p, s) => D::Decimal(
            ast::ExactNumberInfo::PrecisionAndScale(*p as u64, *s as i64),
        ),
        DataType::Date32 => D::Date,
        DataType::Time64(_) => D::Time(None, ast::TimezoneInfo::None),
        DataType::Timestamp(_, None) => D::Timestamp(None, ast::TimezoneInfo::None),
        DataType::Timestamp(_, Some(_)) => D::Timestamp(None, ast::TimezoneInfo::Tz),
        DataType::List(f) => D::Array(ast::ArrayElemTypeDef::SquareBracket(
            Box::new(sql_type(f.data_type())?),
            None,
        )),
        _ => return None,
    })
}

fn lit(v: ast::Value) -> ast::Expr {
    ast::Expr::value(v)
}

fn cast_expr(e: ast::Expr, t: &DataType) -> BqResult<ast::Expr> {
    let data_type =
        sql_type(t).ok_or_else(|| BqError::unsupported(format!("query parameter of type {t}")))?;
    Ok(ast::Expr::Cast {
        kind: ast::CastKind::Cast,
        expr: Box::new(e),
        data_type,
        array: false,
        format: None,
    })
}

/// A parameter value as a typed SQL literal expression, so that DataFusion plans it
/// with its type known (field access on a STRUCT parameter, UNNEST of an ARRAY).
pub fn to_sql_expr(v: &ScalarValue) -> BqResult<ast::Expr> {
    use datafusion::arrow::array::{Array, AsArray};
    let t = v.data_type();
    if let ScalarValue::Struct(s) = v {
        let mut args = Vec::new();
        for (i, f) in s.fields().iter().enumerate() {
            let sv = ScalarValue::try_from_array(s.column(i), 0)
                .map_err(|e| BqError::internal(e.to_string()))?;
            args.push(lit(ast::Value::SingleQuotedString(f.name().clone())));
            args.push(to_sql_expr(&sv)?);
        }
        return Ok(call("named_struct", args));
    }
    if v.is_null() {
        return cast_expr(lit(ast::Value::Null), &t);
    }
    Ok(match v {
        ScalarValue::Int64(Some(n)) => lit(ast::Value::Number(n.to_string(), false)),
        ScalarValue::Boolean(Some(b)) => lit(ast::Value::Boolean(*b)),
        ScalarValue::Utf8(Some(s))
        | ScalarValue::Utf8View(Some(s))
        | ScalarValue::LargeUtf8(Some(s)) => lit(ast::Value::SingleQuotedString(s.clone())),
        ScalarValue::Binary(Some(b)) => {
            let hex: String = b.iter().map(|x| format!("{x:02X}")).collect();
            lit(ast::Value::HexStringLiteral(hex))
        }
        ScalarValue::List(l) => {
            let values = l.value(0);
            let mut elems = Vec::with_capacity(values.len());
            for i in 0..values.len() {
                let sv = ScalarValue::try_from_array(&values, i)
                    .map_err(|e| BqError::internal(e.to_string()))?;
                elems.push(to_sql_expr(&sv)?);
            }
            let typed = sql_type(&t).is_some();
            let arr = ast::Expr::Array(ast::Array {
                elem: elems,
                named: false,
            });
            if !typed && !values.is_empty() {
                arr
            } else {
                cast_expr(arr, &t)?
            }
        }
        other => {
            let arr = other
                .to_array()
                .map_err(|e| BqError::internal(e.to_string()))?;
            let text = datafusion::arrow::compute::cast(&arr, &DataType::Utf8)
                .map_err(|e| BqError::internal(e.to_string()))?;
            let s = text.as_string::<i32>().value(0).to_string();
            cast_expr(lit(ast::Value::SingleQuotedString(s)), &t)?
        }
    })
}
