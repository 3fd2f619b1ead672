//! BigQuery's functions that DataFusion lacks or spells otherwise, and the registry of them.
//!
//! Each family of BigQuery's function reference has a file (`geography/` a folder); a
//! function is made there in one of two ways:
//!
//! - a scalar UDF, a `fn() -> ScalarUDF`, added to the DataFusion session under its lower-case
//!   name (`ST_X` as `st_x`; internal `bigq_` names for what only a rewrite calls);
//! - a rewrite of the call before planning, a `fn(name, call) -> BqResult<Option<Expr>>`
//!   that gives SQL DataFusion runs (its own functions and operators, or a UDF of the
//!   emulator), or `None` to leave the call as written.
//!
//! [`FUNCTIONS`] lists every one, by family, with its signatures in BigQuery's type names (`T`
//! a type parameter: any type for a conditional, each RANGE element type for a RANGE
//! function), and [`register`] adds the UDFs to a session: adding a function is writing it in
//! its family's file and adding its line to [`FUNCTIONS`]. The tests check that each UDF
//! accepts its listed signatures with their result types and has its listed name, and that
//! no name is listed twice.

mod aggregate;
mod array;
mod conditional;
mod date;
mod geography;
mod interval;
mod json;
mod math;
mod range;
mod string;
mod timestamp;
mod udf;
mod utility;

use std::collections::HashMap;
use std::fmt;
use std::sync::OnceLock;

use datafusion::logical_expr::ScalarUDF;
use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::{self, Expr};

use crate::error::BqResult;
use crate::sql::ast::function_name;

/// The families of BigQuery's function reference that the emulator has functions of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    Aggregate,
    Array,
    Conditional,
    Date,
    Datetime,
    Geography,
    Interval,
    Json,
    Math,
    Range,
    String,
    Time,
    Timestamp,
    Utility,
}

/// A rewrite of a call: given the call's upper-case name and the call, the SQL DataFusion runs
/// instead, or `None` to leave the call as written.
type Rewrite = fn(&str, &ast::Function) -> BqResult<Option<Expr>>;

/// How a function is made.
#[derive(Clone, Copy)]
enum Implementation {
    /// A scalar UDF in the session.
    Udf(fn() -> ScalarUDF),
    /// The call rewritten before planning (given the call's upper-case name).
    Rewrite(Rewrite),
}

/// One function of the registry.
#[derive(Clone, Copy)]
struct Function {
    family: Family,
    /// Its signatures, `NAME(ARG, ...) -> RESULT` in BigQuery's type names, `[, ARG]` an
    /// argument that may be left out. The name is the one a query calls it by: BigQuery's, in
    /// upper case, or an internal lower-case name that only a rewrite calls.
    signatures: &'static [&'static str],
    implementation: Implementation,
}

impl Function {
    /// The name its signatures give it.
    fn name(&self) -> &'static str {
        let first = self.signatures.first().copied().unwrap_or_default();
        first.split('(').next().unwrap_or_default()
    }
}

impl fmt::Display for Function {
    /// `Geography: ST_X(GEOGRAPHY) -> FLOAT64; ...`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}: {}", self.family, self.signatures.join("; "))
    }
}

const fn udf(
    family: Family,
    signatures: &'static [&'static str],
    make: fn() -> ScalarUDF,
) -> Function {
    Function {
        family,
        signatures,
        implementation: Implementation::Udf(make),
    }
}

const fn rewrite(
    family: Family,
    signatures: &'static [&'static str],
    rewrite: Rewrite,
) -> Function {
    Function {
        family,
        signatures,
        implementation: Implementation::Rewrite(rewrite),
    }
}

use Family::{
    Aggregate, Array, Conditional, Date, Datetime, Geography, Interval, Json, Math, Range, Time,
    Timestamp, Utility,
};

/// Every function the emulator adds to DataFusion's, by family.
#[rustfmt::skip]
const FUNCTIONS: &[Function] = &[
    // Aggregate functions.
    rewrite(Aggregate, &["COUNTIF(BOOL) -> INT64"], aggregate::countif),
    // Array functions.
    rewrite(Array, &["ARRAY(subquery) -> ARRAY"], array::array),
    rewrite(Array, &["GENERATE_ARRAY(INT64, INT64[, INT64]) -> ARRAY<INT64>"], array::generate_array),
    udf(Array, &["bq_generate_array(INT64, INT64[, INT64]) -> ARRAY<INT64>"], array::bq_generate_array),
    // Conditional expressions.
    rewrite(Conditional, &["IF(BOOL, T, T) -> T"], conditional::if_),
    rewrite(Conditional, &["IFNULL(T, T) -> T"], conditional::ifnull),
    // Date functions.
    rewrite(Date, &["DATE(TIMESTAMP) -> DATE", "DATE(DATETIME) -> DATE", "DATE(INT64, INT64, INT64) -> DATE"],
        date::date),
    rewrite(Date, &["DATE_ADD(DATE, INTERVAL INT64 date_part) -> DATE"], date::add_or_sub),
    rewrite(Date, &["DATE_SUB(DATE, INTERVAL INT64 date_part) -> DATE"], date::add_or_sub),
    rewrite(Date, &["DATE_DIFF(DATE, DATE, date_part) -> INT64"], date::diff_in_part),
    rewrite(Date, &["DATE_TRUNC(DATE, date_part) -> DATE"], date::trunc),
    rewrite(Date, &["DATE_FROM_UNIX_DATE(INT64) -> DATE"], date::date_from_unix_date),
    rewrite(Date, &["FORMAT_DATE(STRING, DATE) -> STRING"], date::format),
    rewrite(Date, &["PARSE_DATE(STRING, STRING) -> DATE"], date::parse),
    rewrite(Date, &["UNIX_DATE(DATE) -> INT64"], date::unix_date),
    // Datetime functions.
    rewrite(Datetime, &["DATETIME_ADD(DATETIME, INTERVAL INT64 part) -> DATETIME"], date::add_or_sub),
    rewrite(Datetime, &["DATETIME_SUB(DATETIME, INTERVAL INT64 part) -> DATETIME"], date::add_or_sub),
    rewrite(Datetime, &["DATETIME_DIFF(DATETIME, DATETIME, part) -> INT64"], date::diff_in_part),
    rewrite(Datetime, &["DATETIME_TRUNC(DATETIME, part) -> DATETIME"], date::trunc),
    rewrite(Datetime, &["FORMAT_DATETIME(STRING, DATETIME) -> STRING"], date::format),
    rewrite(Datetime, &["PARSE_DATETIME(STRING, STRING) -> DATETIME"], date::parse),
    // Geography functions.
    udf(Geography, &["ST_AREA(GEOGRAPHY[, BOOL]) -> FLOAT64"], geography::st_area),
    udf(Geography, &["ST_ASBINARY(GEOGRAPHY) -> BYTES"], geography::st_asbinary),
    udf(Geography, &["ST_ASGEOJSON(GEOGRAPHY) -> STRING"], geography::st_asgeojson),
    udf(Geography, &["ST_ASTEXT(GEOGRAPHY) -> STRING"], geography::st_astext),
    udf(Geography, &["ST_BOUNDARY(GEOGRAPHY) -> GEOGRAPHY"], geography::st_boundary),
    udf(Geography, &["ST_BUFFER(GEOGRAPHY, FLOAT64[, INT64]) -> GEOGRAPHY", "ST_BUFFER(GEOGRAPHY, INT64[, INT64]) -> GEOGRAPHY",
        "ST_BUFFER(GEOGRAPHY, FLOAT64, FLOAT64) -> GEOGRAPHY", "ST_BUFFER(GEOGRAPHY, INT64, FLOAT64) -> GEOGRAPHY"],
        geography::st_buffer),
    udf(Geography, &["ST_CENTROID(GEOGRAPHY) -> GEOGRAPHY"], geography::st_centroid),
    udf(Geography, &["ST_CLOSESTPOINT(GEOGRAPHY, GEOGRAPHY) -> GEOGRAPHY"], geography::st_closestpoint),
    udf(Geography, &["ST_CONTAINS(GEOGRAPHY, GEOGRAPHY) -> BOOL"], geography::st_contains),
    udf(Geography, &["ST_CONVEXHULL(GEOGRAPHY) -> GEOGRAPHY"], geography::st_convexhull),
    udf(Geography, &["ST_COVEREDBY(GEOGRAPHY, GEOGRAPHY) -> BOOL"], geography::st_coveredby),
    udf(Geography, &["ST_COVERS(GEOGRAPHY, GEOGRAPHY) -> BOOL"], geography::st_covers),
    udf(Geography, &["ST_DIFFERENCE(GEOGRAPHY, GEOGRAPHY) -> GEOGRAPHY"], geography::st_difference),
    udf(Geography, &["ST_DIMENSION(GEOGRAPHY) -> INT64"], geography::st_dimension),
    udf(Geography, &["ST_DISJOINT(GEOGRAPHY, GEOGRAPHY) -> BOOL"], geography::st_disjoint),
    udf(Geography, &["ST_DISTANCE(GEOGRAPHY, GEOGRAPHY) -> FLOAT64"], geography::st_distance),
    udf(Geography, &["ST_DUMP(GEOGRAPHY) -> ARRAY<GEOGRAPHY>"], geography::st_dump),
    udf(Geography, &["ST_DWITHIN(GEOGRAPHY, GEOGRAPHY, FLOAT64) -> BOOL"], geography::st_dwithin),
    udf(Geography, &["ST_ENDPOINT(GEOGRAPHY) -> GEOGRAPHY"], geography::st_endpoint),
    udf(Geography, &["ST_EQUALS(GEOGRAPHY, GEOGRAPHY) -> BOOL"], geography::st_equals),
    udf(Geography, &["ST_GEOGFROMGEOJSON(STRING) -> GEOGRAPHY"], geography::st_geogfromgeojson),
    udf(Geography, &["ST_GEOGFROMTEXT(STRING) -> GEOGRAPHY"], geography::st_geogfromtext),
    udf(Geography, &["ST_GEOGFROMWKB(BYTES) -> GEOGRAPHY", "ST_GEOGFROMWKB(STRING) -> GEOGRAPHY"],
        geography::st_geogfromwkb),
    udf(Geography, &["ST_GEOGPOINT(FLOAT64, FLOAT64) -> GEOGRAPHY"], geography::st_geogpoint),
    udf(Geography, &["ST_GEOMETRYTYPE(GEOGRAPHY) -> STRING"], geography::st_geometrytype),
    udf(Geography, &["ST_INTERSECTION(GEOGRAPHY, GEOGRAPHY) -> GEOGRAPHY"], geography::st_intersection),
    udf(Geography, &["ST_INTERSECTS(GEOGRAPHY, GEOGRAPHY) -> BOOL"], geography::st_intersects),
    udf(Geography, &["ST_INTERSECTSBOX(GEOGRAPHY, FLOAT64, FLOAT64, FLOAT64, FLOAT64) -> BOOL"],
        geography::st_intersectsbox),
    udf(Geography, &["ST_ISCLOSED(GEOGRAPHY) -> BOOL"], geography::st_isclosed),
    udf(Geography, &["ST_ISCOLLECTION(GEOGRAPHY) -> BOOL"], geography::st_iscollection),
    udf(Geography, &["ST_ISEMPTY(GEOGRAPHY) -> BOOL"], geography::st_isempty),
    udf(Geography, &["ST_ISRING(GEOGRAPHY) -> BOOL"], geography::st_isring),
    udf(Geography, &["ST_LENGTH(GEOGRAPHY) -> FLOAT64"], geography::st_length),
    udf(Geography, &["ST_MAKELINE(GEOGRAPHY, GEOGRAPHY) -> GEOGRAPHY",
        "ST_MAKELINE(ARRAY<GEOGRAPHY>) -> GEOGRAPHY"],
        geography::st_makeline),
    udf(Geography, &["ST_MAKEPOLYGON(GEOGRAPHY[, ARRAY<GEOGRAPHY>]) -> GEOGRAPHY"], geography::st_makepolygon),
    udf(Geography, &["ST_MAKEPOLYGONORIENTED(ARRAY<GEOGRAPHY>) -> GEOGRAPHY"],
        geography::st_makepolygonoriented),
    udf(Geography, &["ST_MAXDISTANCE(GEOGRAPHY, GEOGRAPHY) -> FLOAT64"], geography::st_maxdistance),
    udf(Geography, &["ST_NPOINTS(GEOGRAPHY) -> INT64"], geography::st_npoints),
    udf(Geography, &["ST_NUMPOINTS(GEOGRAPHY) -> INT64"], geography::st_numpoints),
    udf(Geography, &["ST_PERIMETER(GEOGRAPHY[, BOOL]) -> FLOAT64"], geography::st_perimeter),
    udf(Geography, &["ST_POINTN(GEOGRAPHY, INT64) -> GEOGRAPHY"], geography::st_pointn),
    udf(Geography, &["ST_SIMPLIFY(GEOGRAPHY, FLOAT64) -> GEOGRAPHY",
        "ST_SIMPLIFY(GEOGRAPHY, INT64) -> GEOGRAPHY"],
        geography::st_simplify),
    udf(Geography, &["ST_SNAPTOGRID(GEOGRAPHY, FLOAT64) -> GEOGRAPHY"], geography::st_snaptogrid),
    udf(Geography, &["ST_STARTPOINT(GEOGRAPHY) -> GEOGRAPHY"], geography::st_startpoint),
    udf(Geography, &["ST_TOUCHES(GEOGRAPHY, GEOGRAPHY) -> BOOL"], geography::st_touches),
    udf(Geography, &["ST_UNION(GEOGRAPHY, GEOGRAPHY) -> GEOGRAPHY", "ST_UNION(ARRAY<GEOGRAPHY>) -> GEOGRAPHY"],
        geography::st_union),
    rewrite(Geography, &["ST_UNION_AGG(GEOGRAPHY) -> GEOGRAPHY"], geography::st_union_agg),
    udf(Geography, &["ST_WITHIN(GEOGRAPHY, GEOGRAPHY) -> BOOL"], geography::st_within),
    udf(Geography, &["ST_X(GEOGRAPHY) -> FLOAT64"], geography::st_x),
    udf(Geography, &["ST_Y(GEOGRAPHY) -> FLOAT64"], geography::st_y),
    // Interval functions, and the interval arithmetic of `x + INTERVAL ...`.
    udf(Interval, &["bigq_add_interval(DATE, INTERVAL) -> DATETIME", "bigq_add_interval(DATETIME, INTERVAL) -> DATETIME",
        "bigq_add_interval(TIMESTAMP, INTERVAL) -> TIMESTAMP", "bigq_add_interval(INTERVAL, INTERVAL) -> INTERVAL"],
        interval::bigq_add_interval),
    udf(Interval, &["bigq_sub_interval(DATE, INTERVAL) -> DATETIME", "bigq_sub_interval(DATETIME, INTERVAL) -> DATETIME",
        "bigq_sub_interval(TIMESTAMP, INTERVAL) -> TIMESTAMP", "bigq_sub_interval(INTERVAL, INTERVAL) -> INTERVAL"],
        interval::bigq_sub_interval),
    udf(Interval, &["JUSTIFY_DAYS(INTERVAL) -> INTERVAL"], interval::justify_days),
    udf(Interval, &["JUSTIFY_HOURS(INTERVAL) -> INTERVAL"], interval::justify_hours),
    udf(Interval, &["JUSTIFY_INTERVAL(INTERVAL) -> INTERVAL"], interval::justify_interval),
    udf(Interval, &["MAKE_INTERVAL(INT64, INT64, INT64, INT64, INT64, INT64) -> INTERVAL"],
        interval::make_interval),
    // JSON functions.
    udf(Json, &["PARSE_JSON(STRING) -> JSON"], json::parse_json),
    // Mathematical functions.
    rewrite(Math, &["DIV(INT64, INT64) -> INT64"], math::div),
    rewrite(Math, &["MOD(INT64, INT64) -> INT64"], math::modulo),
    rewrite(Math, &["SAFE_DIVIDE(INT64, INT64) -> FLOAT64", "SAFE_DIVIDE(FLOAT64, FLOAT64) -> FLOAT64"],
        math::safe_divide),
    // Range functions (`RANGE<T> '...'` literals are calls of the `bigq_range_literal_`
    // parsers; `RANGE_SESSIONIZE` is rewritten before parsing).
    rewrite(Range, &["RANGE(T, T) -> RANGE<T>"], range::range),
    udf(Range, &["bigq_range(T, T) -> RANGE<T>"], range::bigq_range),
    udf(Range, &["bigq_range_literal_date(STRING) -> RANGE<DATE>"], range::bigq_range_literal_date),
    udf(Range, &["bigq_range_literal_datetime(STRING) -> RANGE<DATETIME>"],
        range::bigq_range_literal_datetime),
    udf(Range, &["bigq_range_literal_timestamp(STRING) -> RANGE<TIMESTAMP>"],
        range::bigq_range_literal_timestamp),
    udf(Range, &["GENERATE_RANGE_ARRAY(RANGE<T>, INTERVAL[, BOOL]) -> ARRAY<RANGE<T>>"],
        range::generate_range_array),
    udf(Range, &["RANGE_CONTAINS(RANGE<T>, T) -> BOOL", "RANGE_CONTAINS(RANGE<T>, RANGE<T>) -> BOOL"],
        range::range_contains),
    udf(Range, &["RANGE_END(RANGE<T>) -> T"], range::range_end),
    udf(Range, &["RANGE_INTERSECT(RANGE<T>, RANGE<T>) -> RANGE<T>"], range::range_intersect),
    udf(Range, &["RANGE_OVERLAPS(RANGE<T>, RANGE<T>) -> BOOL"], range::range_overlaps),
    udf(Range, &["RANGE_START(RANGE<T>) -> T"], range::range_start),
    // String functions.
    rewrite(Family::String, &["FROM_HEX(STRING) -> BYTES"], string::from_hex),
    rewrite(Family::String, &["REGEXP_CONTAINS(STRING, STRING) -> BOOL"], string::regexp_contains),
    // Time functions.
    rewrite(Time, &["TIME_ADD(TIME, INTERVAL INT64 part) -> TIME"], date::add_or_sub),
    rewrite(Time, &["TIME_SUB(TIME, INTERVAL INT64 part) -> TIME"], date::add_or_sub),
    rewrite(Time, &["TIME_DIFF(TIME, TIME, part) -> INT64"], date::diff_in_part),
    rewrite(Time, &["FORMAT_TIME(STRING, TIME) -> STRING"], date::format),
    // Timestamp functions.
    rewrite(Timestamp, &["TIMESTAMP_ADD(TIMESTAMP, INTERVAL INT64 part) -> TIMESTAMP"], date::add_or_sub),
    rewrite(Timestamp, &["TIMESTAMP_SUB(TIMESTAMP, INTERVAL INT64 part) -> TIMESTAMP"], date::add_or_sub),
    rewrite(Timestamp, &["TIMESTAMP_DIFF(TIMESTAMP, TIMESTAMP, part) -> INT64"], date::diff_in_part),
    rewrite(Timestamp, &["TIMESTAMP_TRUNC(TIMESTAMP, part) -> TIMESTAMP"], date::trunc),
    rewrite(Timestamp, &["FORMAT_TIMESTAMP(STRING, TIMESTAMP) -> STRING"], date::format),
    rewrite(Timestamp, &["PARSE_TIMESTAMP(STRING, STRING) -> TIMESTAMP"], date::parse),
    rewrite(Timestamp, &["TIMESTAMP_MICROS(INT64) -> TIMESTAMP"], timestamp::from_unix_units),
    rewrite(Timestamp, &["TIMESTAMP_MILLIS(INT64) -> TIMESTAMP"], timestamp::from_unix_units),
    rewrite(Timestamp, &["TIMESTAMP_SECONDS(INT64) -> TIMESTAMP"], timestamp::from_unix_units),
    rewrite(Timestamp, &["UNIX_MICROS(TIMESTAMP) -> INT64"], timestamp::unix_units),
    rewrite(Timestamp, &["UNIX_MILLIS(TIMESTAMP) -> INT64"], timestamp::unix_units),
    rewrite(Timestamp, &["UNIX_SECONDS(TIMESTAMP) -> INT64"], timestamp::unix_units),
    // Utility functions.
    rewrite(Utility, &["GENERATE_UUID() -> STRING"], utility::generate_uuid),
];

/// Adds every UDF of [`FUNCTIONS`] to the session.
pub(crate) fn register(ctx: &SessionContext) {
    for f in FUNCTIONS {
        if let Implementation::Udf(make) = f.implementation {
            ctx.register_udf(make());
        }
    }
}

/// The rewrites of [`FUNCTIONS`], by upper-case name.
fn rewrites() -> &'static HashMap<String, Rewrite> {
    static REWRITES: OnceLock<HashMap<String, Rewrite>> = OnceLock::new();
    REWRITES.get_or_init(|| {
        FUNCTIONS
            .iter()
            .filter_map(|f| match f.implementation {
                Implementation::Rewrite(r) => Some((f.name().to_ascii_uppercase(), r)),
                Implementation::Udf(_) => None,
            })
            .collect()
    })
}

/// A call of a function the registry rewrites, rewritten; `None` for any other call (and for
/// a call the rewrite leaves as written).
pub(crate) fn rewrite_call(f: &ast::Function) -> BqResult<Option<Expr>> {
    let Some(name) = function_name(f) else {
        return Ok(None);
    };
    match rewrites().get(&name) {
        Some(rewrite) => rewrite(&name, f),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::sync::Arc;

    use datafusion::arrow::datatypes::{DataType, Field, IntervalUnit, TimeUnit};
    use datafusion::execution::FunctionRegistry;
    use datafusion::logical_expr::type_coercion::functions::fields_with_udf;

    use super::*;
    use crate::sql::types::{UTC, range_type};

    #[test]
    fn every_name_is_listed_once_and_named_in_its_signatures() {
        let mut seen = HashSet::new();
        for f in FUNCTIONS {
            let name = f.name();
            assert!(!name.is_empty(), "{f}");
            assert!(seen.insert(name.to_ascii_uppercase()), "{name} twice");
            for s in f.signatures {
                assert!(s.starts_with(&format!("{name}(")), "{f}");
            }
        }
    }

    #[test]
    fn every_udf_is_registered_under_its_name() {
        let ctx = SessionContext::new();
        register(&ctx);
        for f in FUNCTIONS {
            if let Implementation::Udf(make) = f.implementation {
                let name = f.name().to_ascii_lowercase();
                assert_eq!(make().name(), name, "{f}");
                assert!(ctx.udf(&name).is_ok(), "{f}");
            }
        }
    }

    /// The Arrow type the emulator gives a value of the BigQuery type `t` (`T` as `element`).
    fn arrow_type(t: &str, element: &DataType) -> DataType {
        if let Some(inner) = t.strip_prefix("ARRAY<").and_then(|r| r.strip_suffix('>')) {
            return DataType::List(Arc::new(Field::new(
                "item",
                arrow_type(inner, element),
                true,
            )));
        }
        if let Some(inner) = t.strip_prefix("RANGE<").and_then(|r| r.strip_suffix('>')) {
            return range_type(arrow_type(inner, element));
        }
        match t {
            "T" => element.clone(),
            "INT64" => DataType::Int64,
            "FLOAT64" => DataType::Float64,
            "BOOL" => DataType::Boolean,
            "STRING" | "GEOGRAPHY" | "JSON" => DataType::Utf8,
            "BYTES" => DataType::Binary,
            "DATE" => DataType::Date32,
            "DATETIME" => DataType::Timestamp(TimeUnit::Microsecond, None),
            "TIMESTAMP" => DataType::Timestamp(TimeUnit::Microsecond, Some(UTC.into())),
            "INTERVAL" => DataType::Interval(IntervalUnit::MonthDayNano),
            other => panic!("no Arrow type for {other}"),
        }
    }

    /// The argument lists `NAME(A, B<C, D>[, E]) -> R` stands for (with and without `E`), each
    /// with the result type.
    fn parse_signature(s: &str) -> Vec<(Vec<String>, String)> {
        let (call, ret) = s.split_once(" -> ").expect(s);
        let args = &call[call.find('(').expect(s) + 1..call.len() - 1];
        let lists = match args.split_once("[, ") {
            None => vec![args.to_string()],
            Some((required, optional)) => {
                let optional = optional.strip_suffix(']').expect(s);
                vec![required.to_string(), format!("{required}, {optional}")]
            }
        };
        lists
            .iter()
            .map(|list| {
                let mut out = Vec::new();
                let (mut depth, mut cur) = (0, String::new());
                for c in list.chars() {
                    match c {
                        ',' if depth == 0 => out.push(std::mem::take(&mut cur).trim().to_string()),
                        '<' | '>' => {
                            depth += if c == '<' { 1 } else { -1 };
                            cur.push(c);
                        }
                        c => cur.push(c),
                    }
                }
                if !cur.trim().is_empty() {
                    out.push(cur.trim().to_string());
                }
                (out, ret.to_string())
            })
            .collect()
    }

    #[test]
    fn every_udf_signature_is_one_the_udf_accepts_with_its_result_type() {
        let elements = ["DATE", "DATETIME", "TIMESTAMP"].map(|t| arrow_type(t, &DataType::Null));
        for f in FUNCTIONS {
            let Implementation::Udf(make) = f.implementation else {
                continue;
            };
            let udf = make();
            for s in f.signatures {
                for (args, ret) in parse_signature(s) {
                    let generic = args
                        .iter()
                        .chain([&ret])
                        .any(|a| a == "T" || a.contains("<T>"));
                    let elements = if generic {
                        &elements[..]
                    } else {
                        &elements[..1]
                    };
                    for element in elements {
                        let shown = if generic {
                            format!("{s}, T = {element}")
                        } else {
                            s.to_string()
                        };
                        let fields: Vec<_> = args
                            .iter()
                            .map(|a| Arc::new(Field::new("a", arrow_type(a, element), true)))
                            .collect();
                        let coerced: Vec<DataType> = fields_with_udf(&fields, &udf)
                            .unwrap_or_else(|e| panic!("{shown}: {e}"))
                            .iter()
                            .map(|f| f.data_type().clone())
                            .collect();
                        let got = udf
                            .return_type(&coerced)
                            .unwrap_or_else(|e| panic!("{shown}: {e}"));
                        assert_eq!(got, arrow_type(&ret, element), "{shown}");
                    }
                }
            }
        }
    }
}
