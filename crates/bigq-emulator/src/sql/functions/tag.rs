//! `bigq_tag_json(v)` and `bigq_tag_geography(v)`: a text value as it is, typed JSON or
//! GEOGRAPHY. The emulator keeps those types as text tagged in the field's metadata, and
//! DataFusion's UNNEST gives an element's field without its metadata: the rewrite of an
//! `UNNEST` of an `ARRAY<JSON>` or `ARRAY<GEOGRAPHY>` tags each element again.

use std::sync::Arc;

use bigq_codec::schema::FieldType;
use datafusion::arrow::datatypes::{DataType, Field, FieldRef};
use datafusion::common::Result as DfResult;
use datafusion::logical_expr::{
    ColumnarValue, ReturnFieldArgs, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature,
    Volatility,
};

use super::registry::{Family, Function};
use crate::sql::types::tagged;

/// The name of the UDF that types text as `t`, for the types kept as tagged text.
pub(crate) fn tag_udf_name(t: &FieldType) -> Option<&'static str> {
    match t {
        FieldType::Json => Some("bigq_tag_json"),
        FieldType::Geography => Some("bigq_tag_geography"),
        _ => None,
    }
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct Tag {
    name: &'static str,
    json: bool,
    signature: Signature,
}

impl ScalarUDFImpl for Tag {
    fn name(&self) -> &str {
        self.name
    }

    fn signature(&self) -> &Signature {
        &self.signature
    }

    fn return_type(&self, _: &[DataType]) -> DfResult<DataType> {
        Ok(DataType::Utf8)
    }

    fn return_field_from_args(&self, _: ReturnFieldArgs) -> DfResult<FieldRef> {
        let t = if self.json {
            FieldType::Json
        } else {
            FieldType::Geography
        };
        Ok(Arc::new(tagged(
            Field::new(self.name, DataType::Utf8, true),
            &t,
        )))
    }

    fn invoke_with_args(&self, call: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        Ok(call.args[0].clone())
    }
}

fn tag(name: &'static str, json: bool) -> ScalarUDF {
    ScalarUDF::new_from_impl(Tag {
        name,
        json,
        signature: Signature::exact(vec![DataType::Utf8], Volatility::Immutable),
    })
}

pub(super) const FUNCTIONS: &[Function] = &[
    Function::udf(Family::Utility, &["bigq_tag_json(STRING) -> JSON"], || {
        tag("bigq_tag_json", true)
    }),
    Function::udf(
        Family::Utility,
        &["bigq_tag_geography(STRING) -> GEOGRAPHY"],
        || tag("bigq_tag_geography", false),
    ),
];

/// `f` with its result field typed GEOGRAPHY: the geography functions compute WKT text, and
/// a query's result column of one is BigQuery's GEOGRAPHY, not STRING.
pub(super) fn geography_result(f: ScalarUDF) -> ScalarUDF {
    ScalarUDF::new_from_impl(Typed { inner: Arc::new(f) })
}

#[derive(Debug, PartialEq, Eq, Hash)]
struct Typed {
    inner: Arc<ScalarUDF>,
}

impl ScalarUDFImpl for Typed {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn signature(&self) -> &Signature {
        self.inner.signature()
    }

    fn coerce_types(&self, types: &[DataType]) -> DfResult<Vec<DataType>> {
        self.inner.coerce_types(types)
    }

    fn return_type(&self, types: &[DataType]) -> DfResult<DataType> {
        self.inner.return_type(types)
    }

    fn return_field_from_args(&self, args: ReturnFieldArgs) -> DfResult<FieldRef> {
        let f = self.inner.return_field_from_args(args)?;
        Ok(Arc::new(tagged(f.as_ref().clone(), &FieldType::Geography)))
    }

    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        self.inner.invoke_with_args(args)
    }
}
