//! The distances between vectors of BigQuery's mathematical functions, `COSINE_DISTANCE`
//! and `EUCLIDEAN_DISTANCE`: a vector is dense, an `ARRAY<FLOAT64>` whose positions are its
//! dimensions, or sparse, an `ARRAY<STRUCT<dimension INT64 or STRING, magnitude FLOAT64>>`
//! whose dimensions match by identifier (a dimension one vector lacks is 0 there).

use std::collections::BTreeMap;

use datafusion::arrow::array::Array;
use datafusion::common::{Result as DfResult, ScalarValue};

use super::registry::{Family, Function};
use super::row::{Call, elements, fail, udf};

/// The second signature is the sparse form: `T` a `STRUCT<INT64, FLOAT64>` or
/// `STRUCT<STRING, FLOAT64>`.
const COSINE_DISTANCE: &[&str] = &[
    "COSINE_DISTANCE(ARRAY<FLOAT64>, ARRAY<FLOAT64>) -> FLOAT64",
    "COSINE_DISTANCE(ARRAY<T>, ARRAY<T>) -> FLOAT64",
];
const EUCLIDEAN_DISTANCE: &[&str] = &[
    "EUCLIDEAN_DISTANCE(ARRAY<FLOAT64>, ARRAY<FLOAT64>) -> FLOAT64",
    "EUCLIDEAN_DISTANCE(ARRAY<T>, ARRAY<T>) -> FLOAT64",
];

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::udf(Family::Math, COSINE_DISTANCE, || udf(COSINE_DISTANCE, cosine_distance)),
    Function::udf(Family::Math, EUCLIDEAN_DISTANCE, || udf(EUCLIDEAN_DISTANCE, euclidean_distance)),
];

/// A sparse vector's dimension identifier.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Dimension {
    Int(i64),
    Text(String),
}

/// A vector as its magnitudes by dimension (a dense vector's dimensions are its positions).
struct Vector {
    sparse: bool,
    magnitudes: BTreeMap<Dimension, f64>,
}

fn number(name: &str, v: &ScalarValue) -> DfResult<f64> {
    let x = match v {
        ScalarValue::Float64(x) => *x,
        ScalarValue::Float32(x) => x.map(f64::from),
        ScalarValue::Int64(x) => x.map(|i| i as f64),
        _ => {
            return Err(fail(
                name,
                format!("a magnitude must be FLOAT64, not {v:?}"),
            ));
        }
    };
    x.ok_or_else(|| {
        fail(
            name,
            "cannot compute the distance of a vector with a NULL element",
        )
    })
}

fn vector(name: &str, v: &ScalarValue) -> DfResult<Vector> {
    let items = elements(v)?.unwrap_or_default();
    let mut magnitudes = BTreeMap::new();
    let mut sparse = false;
    for (i, item) in items.iter().enumerate() {
        let (dimension, magnitude) = match item {
            ScalarValue::Struct(s) => {
                sparse = true;
                if s.is_null(0) || s.num_columns() != 2 {
                    return Err(fail(
                        name,
                        "cannot compute the distance of a vector with a NULL element",
                    ));
                }
                let d = ScalarValue::try_from_array(s.column(0), 0)?;
                let dimension = match d {
                    ScalarValue::Int64(Some(i)) => Dimension::Int(i),
                    ScalarValue::Utf8(Some(t)) | ScalarValue::Utf8View(Some(t)) => {
                        Dimension::Text(t)
                    }
                    ScalarValue::Int64(None) | ScalarValue::Utf8(None) => {
                        return Err(fail(name, "a dimension of a sparse vector cannot be NULL"));
                    }
                    other => {
                        return Err(fail(
                            name,
                            format!("a dimension must be INT64 or STRING, not {other:?}"),
                        ));
                    }
                };
                let m = ScalarValue::try_from_array(s.column(1), 0)?;
                (dimension, number(name, &m)?)
            }
            other => (Dimension::Int(i as i64), number(name, other)?),
        };
        if magnitudes.insert(dimension.clone(), magnitude).is_some() {
            return Err(fail(
                name,
                format!("a sparse vector has the dimension {dimension:?} more than once"),
            ));
        }
    }
    Ok(Vector { sparse, magnitudes })
}

/// The two vectors of a call, dense ones of one length.
fn vectors(name: &str, a: &[ScalarValue]) -> DfResult<(Vector, Vector)> {
    let (x, y) = (vector(name, &a[0])?, vector(name, &a[1])?);
    if !x.sparse && !y.sparse && x.magnitudes.len() != y.magnitudes.len() {
        return Err(fail(
            name,
            format!(
                "Array length mismatch: {} and {}",
                x.magnitudes.len(),
                y.magnitudes.len()
            ),
        ));
    }
    Ok((x, y))
}

fn norm(v: &Vector) -> f64 {
    v.magnitudes.values().map(|m| m * m).sum::<f64>().sqrt()
}

fn cosine_distance(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let (x, y) = vectors("COSINE_DISTANCE", a)?;
    let (nx, ny) = (norm(&x), norm(&y));
    if nx == 0.0 || ny == 0.0 {
        return Err(fail(
            "COSINE_DISTANCE",
            "Cannot compute cosine distance against zero vector",
        ));
    }
    let dot: f64 = x
        .magnitudes
        .iter()
        .filter_map(|(d, m)| y.magnitudes.get(d).map(|n| m * n))
        .sum();
    Ok(ScalarValue::Float64(Some(1.0 - dot / (nx * ny))))
}

fn euclidean_distance(_: &Call, a: &[ScalarValue]) -> DfResult<ScalarValue> {
    let (x, y) = vectors("EUCLIDEAN_DISTANCE", a)?;
    let mut sum = 0.0;
    for (d, m) in &x.magnitudes {
        let n = y.magnitudes.get(d).copied().unwrap_or(0.0);
        sum += (m - n) * (m - n);
    }
    for (d, n) in &y.magnitudes {
        if !x.magnitudes.contains_key(d) {
            sum += n * n;
        }
    }
    Ok(ScalarValue::Float64(Some(sum.sqrt())))
}
