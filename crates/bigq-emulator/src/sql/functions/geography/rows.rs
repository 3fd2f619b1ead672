//! How a GEOGRAPHY function is made: [`unary!`] and [`two_points`] over typed arrays, and
//! [`udf`], which hands each row's arguments to a function of them ([`Arg`] in, [`Out`]
//! out; NULL in, NULL out).

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, BooleanArray, BooleanBuilder, Float64Array, ListBuilder,
    StringArray, StringBuilder,
};
use datafusion::arrow::datatypes::{DataType, Field};
use datafusion::common::{DataFusionError, Result as DfResult};
use datafusion::logical_expr::{
    ColumnarValue, ScalarFunctionArgs, ScalarUDF, ScalarUDFImpl, Signature, TypeSignature,
    Volatility, create_udf,
};
use geo::HasDimensions;
use geo_types::{Coord, Geometry};

use super::sphere::distance;
use super::value::{Geo, Geography};
use crate::sql::functions::udf::{arrays, result};

pub(super) fn strings<'a>(a: &'a ArrayRef, function: &str) -> DfResult<&'a StringArray> {
    a.as_any().downcast_ref::<StringArray>().ok_or_else(|| {
        DataFusionError::Internal(format!("{function}: GEOGRAPHY as {}", a.data_type()))
    })
}

pub(super) fn floats<'a>(a: &'a ArrayRef, function: &str) -> DfResult<&'a Float64Array> {
    a.as_any().downcast_ref::<Float64Array>().ok_or_else(|| {
        DataFusionError::Internal(format!("{function}: FLOAT64 as {}", a.data_type()))
    })
}

/// The geography in row `i` of `a`, or `None` for NULL.
pub(super) fn geo_at(a: &StringArray, i: usize, function: &str) -> DfResult<Option<Geo>> {
    if a.is_null(i) {
        return Ok(None);
    }
    Geo::parse(a.value(i)).map(Some).map_err(|e| {
        DataFusionError::Execution(format!(
            "{function} failed: Invalid WKT {:?}: {e}",
            a.value(i)
        ))
    })
}

/// A one-geography function returning what `f` makes of it.
macro_rules! unary {
    ($name:literal, $ret:expr, $builder:ty, $f:expr) => {{
        let fun = move |args: &[::datafusion::logical_expr::ColumnarValue]|
              -> ::datafusion::common::Result<::datafusion::logical_expr::ColumnarValue> {
            let (a, rows) = $crate::sql::functions::udf::arrays(args)?;
            let g = $crate::sql::functions::geography::rows::strings(&a[0], $name)?;
            let mut out = <$builder>::new();
            for i in 0..rows {
                match $crate::sql::functions::geography::rows::geo_at(g, i, $name)? {
                    Some(geo) => out.append_value($f(&geo)),
                    None => out.append_null(),
                }
            }
            $crate::sql::functions::udf::result(::std::sync::Arc::new(out.finish()), args)
        };
        ::datafusion::logical_expr::create_udf(
            $name,
            vec![::datafusion::arrow::datatypes::DataType::Utf8],
            $ret,
            ::datafusion::logical_expr::Volatility::Immutable,
            ::std::sync::Arc::new(fun),
        )
    }};
}

pub(super) use unary;

/// What a function of two points computes.
#[derive(Clone, Copy)]
pub(super) enum PointPair {
    /// `ST_DISTANCE`: metres.
    Distance,
    /// `ST_DWITHIN`: within the third argument's metres.
    Within,
    /// `ST_EQUALS`: the same point.
    Same,
}

/// A function of two points; other shapes are refused by name.
pub(super) fn two_points(name: &'static str, pair: PointPair) -> ScalarUDF {
    let fun = move |args: &[ColumnarValue]| -> DfResult<ColumnarValue> {
        let (a, rows) = arrays(args)?;
        let (g1, g2) = (strings(&a[0], name)?, strings(&a[1], name)?);
        let limit = match pair {
            PointPair::Within => Some(floats(&a[2], name)?),
            _ => None,
        };
        let mut metres = Float64Array::builder(rows);
        let mut truth = BooleanBuilder::with_capacity(rows);
        for i in 0..rows {
            let (Some(p), Some(q)) = (geo_at(g1, i, name)?, geo_at(g2, i, name)?) else {
                metres.append_null();
                truth.append_null();
                continue;
            };
            if p.is_empty() || q.is_empty() {
                metres.append_null();
                truth.append_null();
                continue;
            }
            let (p, q) = (p.as_point(name)?, q.as_point(name)?);
            let same = p.x == q.x && p.y == q.y;
            match pair {
                PointPair::Distance => metres.append_value(distance(p, q)),
                PointPair::Within => match limit {
                    Some(l) if !l.is_null(i) => truth.append_value(distance(p, q) <= l.value(i)),
                    _ => truth.append_null(),
                },
                PointPair::Same => truth.append_value(same),
            }
        }
        let array: ArrayRef = match pair {
            PointPair::Distance => Arc::new(metres.finish()),
            _ => Arc::new(truth.finish()),
        };
        result(array, args)
    };
    let mut inputs = vec![DataType::Utf8, DataType::Utf8];
    if matches!(pair, PointPair::Within) {
        inputs.push(DataType::Float64);
    }
    let ret = match pair {
        PointPair::Distance => DataType::Float64,
        _ => DataType::Boolean,
    };
    create_udf(name, inputs, ret, Volatility::Immutable, Arc::new(fun))
}

pub(super) fn exec(msg: String) -> DataFusionError {
    DataFusionError::Execution(msg)
}

/// One row's argument.
pub(super) enum Arg {
    Text(String),
    Float(f64),
    Int(i64),
    Bool(bool),
    Bytes(Vec<u8>),
    Texts(Vec<String>),
}

/// One row's result.
pub(super) enum Out {
    /// NULL, where BigQuery's function has no value (`ST_AZIMUTH` of one point twice).
    Null,
    /// Text that is not a geography (`ST_GEOHASH`).
    Text(String),
    Geo(Geo),
    Float(f64),
    Bool(bool),
    Bytes(Vec<u8>),
    Geos(Vec<Geo>),
}

pub(super) type Fun = fn(&str, &[Arg]) -> DfResult<Out>;

/// A GEOGRAPHY function: NULL in, NULL out; each row's arguments handed to `fun`.
#[derive(Debug)]
struct GeoFn {
    name: &'static str,
    signature: Signature,
    ret: DataType,
    fun: Fun,
}

impl PartialEq for GeoFn {
    fn eq(&self, o: &Self) -> bool {
        self.name == o.name
    }
}
impl Eq for GeoFn {}
impl std::hash::Hash for GeoFn {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.name.hash(h)
    }
}

pub(super) fn geo_list() -> DataType {
    DataType::List(Arc::new(Field::new("item", DataType::Utf8, true)))
}

pub(super) fn udf(
    name: &'static str,
    inputs: Vec<Vec<DataType>>,
    ret: DataType,
    fun: Fun,
) -> ScalarUDF {
    let signature = Signature::one_of(
        inputs.into_iter().map(TypeSignature::Exact).collect(),
        Volatility::Immutable,
    );
    ScalarUDF::new_from_impl(GeoFn {
        name,
        signature,
        ret,
        fun,
    })
}

fn arg_at(a: &ArrayRef, i: usize) -> DfResult<Option<Arg>> {
    if a.is_null(i) {
        return Ok(None);
    }
    Ok(Some(match a.data_type() {
        DataType::Utf8 => Arg::Text(a.as_string::<i32>().value(i).to_string()),
        DataType::Float64 => Arg::Float(
            a.as_primitive::<datafusion::arrow::datatypes::Float64Type>()
                .value(i),
        ),
        DataType::Int64 => Arg::Int(
            a.as_primitive::<datafusion::arrow::datatypes::Int64Type>()
                .value(i),
        ),
        DataType::Boolean => Arg::Bool(a.as_boolean().value(i)),
        DataType::Binary => Arg::Bytes(a.as_binary::<i32>().value(i).to_vec()),
        DataType::List(_) => {
            let items = a.as_list::<i32>().value(i);
            let s = items.as_string::<i32>();
            Arg::Texts(
                (0..s.len())
                    .filter(|&k| s.is_valid(k))
                    .map(|k| s.value(k).to_string())
                    .collect(),
            )
        }
        other => return Err(exec(format!("GEOGRAPHY function argument of type {other}"))),
    }))
}

impl ScalarUDFImpl for GeoFn {
    fn name(&self) -> &str {
        self.name
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> DfResult<DataType> {
        Ok(self.ret.clone())
    }
    fn invoke_with_args(&self, call: ScalarFunctionArgs) -> DfResult<ColumnarValue> {
        let args = &call.args;
        let (a, rows) = arrays(args)?;
        let mut outs = Vec::with_capacity(rows);
        for i in 0..rows {
            let row = a
                .iter()
                .map(|c| arg_at(c, i))
                .collect::<DfResult<Option<Vec<_>>>>()?;
            outs.push(match row {
                Some(row) => Some((self.fun)(self.name, &row)?),
                None => None,
            });
        }
        let out: ArrayRef = match &self.ret {
            DataType::Utf8 => Arc::new(StringArray::from_iter(outs.into_iter().map(|o| match o {
                Some(Out::Geo(g)) => Some(g.wkt()),
                Some(Out::Text(t)) => Some(t),
                _ => None,
            }))),
            DataType::Float64 => {
                Arc::new(Float64Array::from_iter(outs.into_iter().map(|o| match o {
                    Some(Out::Float(f)) => Some(f),
                    _ => None,
                })))
            }
            DataType::Boolean => {
                Arc::new(BooleanArray::from_iter(outs.into_iter().map(|o| match o {
                    Some(Out::Bool(v)) => Some(v),
                    _ => None,
                })))
            }
            DataType::Binary => {
                Arc::new(BinaryArray::from_iter(outs.into_iter().map(|o| match o {
                    Some(Out::Bytes(v)) => Some(v),
                    _ => None,
                })))
            }
            _ => {
                let mut b = ListBuilder::new(StringBuilder::new());
                for o in outs {
                    match o {
                        Some(Out::Geos(g)) => {
                            for g in g {
                                b.values().append_value(g.wkt());
                            }
                            b.append(true);
                        }
                        _ => b.append(false),
                    }
                }
                Arc::new(b.finish())
            }
        };
        result(out, args)
    }
}

/// The geography in a text argument.
pub(super) fn geo(name: &str, a: &Arg) -> DfResult<Geo> {
    match a {
        Arg::Text(t) => Geo::parse(t).map_err(|e| {
            exec(format!(
                "{} failed: Invalid WKT {t:?}: {e}",
                name.to_ascii_uppercase()
            ))
        }),
        _ => Err(exec(format!("{name}: expected a GEOGRAPHY"))),
    }
}

pub(super) fn geos(name: &str, a: &Arg) -> DfResult<Vec<Geo>> {
    match a {
        Arg::Texts(t) => t.iter().map(|t| geo(name, &Arg::Text(t.clone()))).collect(),
        _ => Err(exec(format!("{name}: expected an ARRAY<GEOGRAPHY>"))),
    }
}

pub(super) fn fail(name: &str, why: &str) -> DataFusionError {
    exec(format!("{} failed: {why}", name.to_ascii_uppercase()))
}

pub(super) fn point_of(name: &str, g: &Geo) -> DfResult<Coord> {
    match g {
        Geometry::Point(p) => Ok(p.0),
        other => Err(fail(
            name,
            &format!("the geography must be a point, not {}", other.type_name()),
        )),
    }
}

pub(super) fn line_of(name: &str, g: &Geo) -> DfResult<Vec<Coord>> {
    match g {
        Geometry::LineString(l) => Ok(l.0.clone()),
        other => Err(fail(
            name,
            &format!(
                "the geography must be a linestring, not {}",
                other.type_name()
            ),
        )),
    }
}
