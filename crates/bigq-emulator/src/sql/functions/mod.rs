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
//! Each file's `FUNCTIONS` lists the ones it makes, by family, with its signatures in BigQuery's type names (`T`
//! a type parameter: any type for a conditional, each RANGE element type for a RANGE
//! function), and [`register`] adds the UDFs to a session: adding a function is writing it in
//! its family's file and adding its line to that file's `FUNCTIONS`. The tests check that each UDF
//! accepts its listed signatures with their result types and has its listed name, and that
//! no name is listed twice.

mod aggregate;
mod approximate;
mod array;
mod array_join;
mod avg;
mod bit;
mod cast_int;
mod civil;
mod comparable;
mod conditional;
mod corr;
mod date;
mod datetime;
mod geography;
mod hash;
mod interval;
mod interval_ops;
mod json;
pub(crate) mod math;
mod net;
mod numeric_text;
mod percentile;
pub(crate) mod range;
mod registry;
mod routine_args;
mod row;
pub(crate) mod safe;
mod statistical;
mod string;
mod sum;
mod tag;
mod time;
mod time_series;
mod timestamp;
mod udf;
mod unsupported;
mod utility;
mod vector;
mod window;

use std::collections::HashMap;
use std::sync::OnceLock;

use datafusion::prelude::SessionContext;
use datafusion::sql::sqlparser::ast::{self, Expr};

use crate::error::{BqError, BqResult};
use crate::sql::ast::function_name;

use self::registry::{Function, Implementation, Rewrite};

/// Every function the emulator adds to DataFusion's, by the file that makes it.
fn functions() -> impl Iterator<Item = &'static Function> {
    [
        aggregate::FUNCTIONS,
        approximate::FUNCTIONS,
        array::FUNCTIONS,
        bit::FUNCTIONS,
        conditional::FUNCTIONS,
        date::FUNCTIONS,
        datetime::FUNCTIONS,
        geography::FUNCTIONS,
        hash::FUNCTIONS,
        interval::FUNCTIONS,
        interval_ops::FUNCTIONS,
        json::FUNCTIONS,
        math::FUNCTIONS,
        net::FUNCTIONS,
        numeric_text::FUNCTIONS,
        percentile::FUNCTIONS,
        range::FUNCTIONS,
        routine_args::FUNCTIONS,
        safe::FUNCTIONS,
        statistical::FUNCTIONS,
        string::FUNCTIONS,
        tag::FUNCTIONS,
        time::FUNCTIONS,
        time_series::FUNCTIONS,
        timestamp::FUNCTIONS,
        utility::FUNCTIONS,
        vector::FUNCTIONS,
        window::FUNCTIONS,
    ]
    .into_iter()
    .flatten()
}

pub(crate) use cast_int::{cast_int64_udf, casts_to_int64};
pub(crate) use date::bigq_date_in_range;
pub(crate) use interval::{bigq_datetime_minus, interval_of_count, is_datetime_minus};
pub(crate) use interval_ops::{IntervalPlanner, cast_interval_udf};
pub(crate) use json::planner::JsonPlanner;
pub(crate) use json::{cast as json_cast, literal as json_literal};
pub(crate) use numeric_text::{cast_decimal_udf, casts_to_decimal};
pub(crate) use routine_args::ROUTINE_ARGUMENT;
pub(crate) use row::bq_type_name;
pub(crate) use string::{cast_string_udf, casts_to_string};
pub(crate) use tag::tag_udf_name;
pub(crate) use timestamp::civil_cast_udf;

/// Adds every UDF of [`FUNCTIONS`] to the session.
pub(crate) fn register(ctx: &SessionContext) {
    for f in functions() {
        if let Implementation::Udf(make) = f.implementation {
            // A geography function's WKT text is typed GEOGRAPHY in its result.
            let geography = f.family == registry::Family::Geography
                && f.signatures.iter().all(|s| s.ends_with("-> GEOGRAPHY"));
            ctx.register_udf(if geography {
                tag::geography_result(make())
            } else {
                make()
            });
        }
    }
    for a in percentile::aggregates() {
        ctx.register_udaf(a);
    }
    ctx.register_udaf(sum::sum_udaf());
    ctx.register_udaf(avg::avg_udaf());
    ctx.register_udaf(corr::corr_udaf());
}

/// The rewrites of [`FUNCTIONS`], by upper-case name.
fn rewrites() -> &'static HashMap<String, Rewrite> {
    static REWRITES: OnceLock<HashMap<String, Rewrite>> = OnceLock::new();
    REWRITES.get_or_init(|| {
        functions()
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
    unsupported::refuse(f)?;
    // `NET.HOST`, `HLL_COUNT.INIT` and the other functions of a dotted family are
    // rewrites listed by their dotted name; `SAFE.` of a JSON function is the JSON
    // function's own; any other dotted name may be a `SAFE.` call.
    let name = match function_name(f) {
        Some(name) => name,
        None => match f.name.0.as_slice() {
            [
                ast::ObjectNamePart::Identifier(a),
                ast::ObjectNamePart::Identifier(b),
            ] if a.value.eq_ignore_ascii_case("NET")
                || a.value.eq_ignore_ascii_case("HLL_COUNT") =>
            {
                format!(
                    "{}.{}",
                    a.value.to_ascii_uppercase(),
                    b.value.to_ascii_uppercase()
                )
            }
            _ => match json::safe_name(f) {
                Some(name) => name,
                None => return safe::rewrite(f, rewrite_call),
            },
        },
    };
    match rewrites().get(name.strip_prefix("SAFE.").unwrap_or(&name)) {
        Some(rewrite) => rewrite(&name, f),
        None => positional_arguments(&name, f),
    }
}

/// The parameter names of the UDFs that take an argument by name (`EDIT_DISTANCE(a, b,
/// max_distance => 2)`), in order; DataFusion calls a UDF with positional arguments only.
const NAMED_PARAMETERS: &[(&str, &[&str])] = &[
    ("EDIT_DISTANCE", &["value1", "value2", "max_distance"]),
    (
        "ST_GEOGFROMTEXT",
        &["wkt_string", "oriented", "planar", "make_valid"],
    ),
    (
        "ST_GEOGFROMWKB",
        &["wkb_bytes_expression", "oriented", "planar", "make_valid"],
    ),
    ("ST_GEOGFROMGEOJSON", &["geojson_string", "make_valid"]),
    (
        "CONTAINS_SUBSTR",
        &["expression", "search_value_literal", "json_scope"],
    ),
];

/// A call of a UDF of [`NAMED_PARAMETERS`] with its named arguments put in their places;
/// `None` when it has none.
fn positional_arguments(name: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let Some((_, params)) = NAMED_PARAMETERS.iter().find(|(n, _)| *n == name) else {
        return Ok(None);
    };
    let ast::FunctionArguments::List(list) = &f.args else {
        return Ok(None);
    };
    if !list
        .args
        .iter()
        .any(|a| matches!(a, ast::FunctionArg::Named { .. }))
    {
        return Ok(None);
    }
    let mut slots: Vec<Option<ast::FunctionArg>> = vec![None; params.len()];
    let mut next = 0;
    for a in &list.args {
        let (slot, value) = match a {
            ast::FunctionArg::Named { name: n, arg, .. } => {
                let key = n.value.to_ascii_lowercase();
                let slot = params.iter().position(|p| *p == key).ok_or_else(|| {
                    BqError::invalid_query(format!("{name} has no argument named {}", n.value))
                })?;
                (slot, arg.clone())
            }
            ast::FunctionArg::Unnamed(arg) => (next, arg.clone()),
            other => {
                return Err(BqError::invalid_query(format!(
                    "{name}: unexpected argument {other}"
                )));
            }
        };
        match slots.get_mut(slot) {
            Some(s @ None) => *s = Some(ast::FunctionArg::Unnamed(value)),
            _ => {
                return Err(BqError::invalid_query(format!(
                    "{name}: too many arguments, or {} given twice",
                    params.get(slot).unwrap_or(&"an argument")
                )));
            }
        }
        next = slot + 1;
    }
    let Some(filled) = slots.iter().rposition(Option::is_some) else {
        return Ok(None);
    };
    // The geography parsers' options left out are FALSE.
    let options = name.starts_with("ST_GEOGFROM");
    let args = slots[..=filled]
        .iter()
        .enumerate()
        .map(|(i, s)| match s {
            Some(a) => Some(a.clone()),
            None if options && i > 0 => Some(ast::FunctionArg::Unnamed(
                ast::FunctionArgExpr::Expr(Expr::Value(ast::Value::Boolean(false).into())),
            )),
            None => None,
        })
        .collect::<Option<Vec<_>>>()
        .ok_or_else(|| BqError::invalid_query(format!("{name}: an argument is missing")))?;
    let mut g = f.clone();
    g.args = ast::FunctionArguments::List(ast::FunctionArgumentList {
        duplicate_treatment: list.duplicate_treatment,
        args,
        clauses: list.clauses.clone(),
    });
    Ok(Some(Expr::Function(g)))
}

/// `EXTRACT(part FROM x)` as the date family's UDFs compute it; `None` for any other
/// expression.
pub(crate) fn rewrite_extract(e: &Expr) -> BqResult<Option<Expr>> {
    date::extract(e)
}

/// `DATE '...'`, `DATETIME '...'`, `TIME '...'` and `TIMESTAMP '...'` as BigQuery reads
/// them; `None` for any other typed literal.
pub(crate) fn rewrite_typed_literal(ts: &ast::TypedString) -> Option<Expr> {
    timestamp::typed_literal(ts)
}

/// `CAST(x AS STRING FORMAT '...')` and `CAST(s AS DATE FORMAT '...')` (DATETIME, TIME,
/// TIMESTAMP) for the date and time types; `None` for a cast without a format.
pub(crate) fn rewrite_cast_format(e: &Expr) -> BqResult<Option<Expr>> {
    date::cast_format(e)
}

/// `SUBSTR(s, pos[, len])` and `SUBSTRING(..)`, which the parser reads as its own node and
/// DataFusion would plan as its own `substr` (other semantics for a position below 1), as
/// calls of BigQuery's SUBSTR.
pub(crate) fn rewrite_substring(e: &Expr) -> BqResult<Expr> {
    string::substring(e)
}

/// Whether `e` is an `INTERVAL n part` of a count expression, as the walk rewrote it.
pub(crate) fn is_interval_of_count(e: &Expr) -> bool {
    interval::is_interval_of_count(e)
}

/// The conditions of a searched `CASE`, each passed through a check that it is BOOL.
pub(crate) fn check_case_conditions(conditions: &mut [ast::CaseWhen]) {
    conditional::case_conditions(conditions)
}

/// Checks the results of each `CASE`, `IF` and `COALESCE` of a plan (not yet coerced) have
/// a common type, and that what it compares, groups and orders can be, as BigQuery requires.
pub(crate) fn check_results(plan: &datafusion::logical_expr::LogicalPlan) -> BqResult<()> {
    comparable::check_plan(plan)
}

/// `CURRENT_DATETIME` written without parentheses (a name to the parser), as the call.
pub(crate) fn rewrite_current_datetime() -> BqResult<Option<Expr>> {
    let call = crate::sql::ast::call("CURRENT_DATETIME", Vec::new());
    match &call {
        Expr::Function(f) => rewrite_call(f),
        _ => Ok(None),
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
        for f in functions() {
            let name = f.name();
            assert!(!name.is_empty(), "{f}");
            assert!(seen.insert(name.to_ascii_uppercase()), "{name} twice");
            for s in f.signatures {
                assert!(s.starts_with(&format!("{name}(")), "{f}");
            }
        }
    }

    #[test]
    fn no_function_is_both_made_and_refused() {
        for f in functions() {
            let name = f.name().to_ascii_uppercase();
            assert!(unsupported::family_of(&name).is_none(), "{name}");
        }
        for name in unsupported::names() {
            assert!(rewrites().get(name).is_none(), "{name}");
        }
    }

    #[test]
    fn every_udf_is_registered_under_its_name() {
        let ctx = SessionContext::new();
        register(&ctx);
        for f in functions() {
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
        if let Some(inner) = t.strip_prefix("STRUCT<").and_then(|r| r.strip_suffix('>')) {
            let fields: Vec<Field> = split_top_level(inner)
                .iter()
                .map(|f| {
                    let (name, t) = f.split_once(' ').expect(f);
                    Field::new(name, arrow_type(t, element), true)
                })
                .collect();
            return DataType::Struct(fields.into());
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
            "TIME" => DataType::Time64(TimeUnit::Microsecond),
            "TIMESTAMP" => DataType::Timestamp(TimeUnit::Microsecond, Some(UTC.into())),
            "INTERVAL" => DataType::Interval(IntervalUnit::MonthDayNano),
            "NUMERIC" => DataType::Decimal128(38, 9),
            "BIGNUMERIC" => DataType::Decimal256(76, 38),
            // What ERROR returns: it never returns.
            "NULL" => DataType::Null,
            other => panic!("no Arrow type for {other}"),
        }
    }

    /// `A, B<C, D>` as `A` and `B<C, D>`.
    fn split_top_level(list: &str) -> Vec<String> {
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
        out
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
            .map(|list| (split_top_level(list), ret.to_string()))
            .collect()
    }

    #[test]
    fn every_udf_signature_is_one_the_udf_accepts_with_its_result_type() {
        let elements = ["DATE", "DATETIME", "TIMESTAMP"].map(|t| arrow_type(t, &DataType::Null));
        for f in functions() {
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
