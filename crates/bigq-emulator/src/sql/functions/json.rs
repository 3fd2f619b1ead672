//! JSON functions: `PARSE_JSON(text)`, a scalar UDF whose result field carries BigQuery's
//! `google:sqlType:json` tag, so the column is reported as JSON (the value is JSON text in
//! a Utf8 array, as JSON columns are kept).
//!
//! The text is written back as BigQuery writes a JSON value: compact, object keys sorted
//! (serde_json's map is ordered by key), numbers as parsed.

use std::sync::Arc;

use datafusion::arrow::array::{Array, StringArray, StringBuilder};
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::{DataFusionError, Result as DfResult};
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};

use bigq_codec::schema::FieldType;

use super::udf::{arrays, result};
use super::{Family, Function};
use crate::sql::types::tagged;

/// The JSON text of `text`, or BigQuery's complaint about it.
fn json_text(text: &str) -> Result<String, String> {
    let v: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        format!("Invalid input to PARSE_JSON: {text:?} is not a valid JSON value ({e})")
    })?;
    Ok(v.to_string())
}

/// `PARSE_JSON(STRING)`.
#[derive(Debug, PartialEq, Eq, Hash)]
struct ParseJson {
    signature: Signature,
}

impl ScalarUDFImpl for ParseJson {
    fn name(&self) -> &str {
        "parse_json"
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> DfResult<DataType> {
        Ok(DataType::Utf8)
    }

    /// Utf8 tagged as JSON, so that the column's type is JSON.
    fn return_field_from_args(&self, _: ReturnFieldArgs) -> DfResult<FieldRef> {
        Ok(Arc::new(tagged(
            Field::new(self.name(), DataType::Utf8, true),
            &FieldType::Json,
        )))
    }

    fn invoke_with_args(&self, call: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let args = &call.args;
        let (a, rows) = arrays(args)?;
        let text = a[0].as_any().downcast_ref::<StringArray>().ok_or_else(|| {
            DataFusionError::Internal(format!("PARSE_JSON of {}", a[0].data_type()))
        })?;
        let mut out = StringBuilder::new();
        for i in 0..rows {
            if text.is_null(i) {
                out.append_null();
                continue;
            }
            out.append_value(json_text(text.value(i)).map_err(DataFusionError::Execution)?);
        }
        result(Arc::new(out.finish()), args)
    }
}

/// `PARSE_JSON(STRING)`.
pub(crate) fn parse_json() -> ScalarUDF {
    ScalarUDF::new_from_impl(ParseJson {
        signature: Signature::exact(vec![DataType::Utf8], Volatility::Immutable),
    })
}

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::udf(Family::Json, &["PARSE_JSON(STRING) -> JSON"], parse_json),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_json_writes_compact_sorted_text() {
        // BigQuery: PARSE_JSON(ST_ASGEOJSON(ST_GEOGFROMTEXT('POINT(3 4)'))).
        assert_eq!(
            json_text(r#"{ "type": "Point", "coordinates": [3, 4] } "#).unwrap(),
            r#"{"coordinates":[3,4],"type":"Point"}"#
        );
        assert_eq!(json_text(" 1.5 ").unwrap(), "1.5");
        assert_eq!(json_text(r#""a""#).unwrap(), r#""a""#);
        assert!(json_text("{").is_err());
        assert!(json_text("").is_err());
    }
}
