//! GoogleSQL literals and type names as DataFusion reads them: raw, triple-quoted and bytes
//! literals, typed literals (`DATE '2024-01-01'`), casts to GoogleSQL types (`SAFE_CAST`
//! as `TRY_CAST`), range interval literals (`INTERVAL '1-2' YEAR TO MONTH`), typed
//! `STRUCT<..>(..)` values, and arrays of STRUCTs (tuples among them) named after their first
//! element.

use datafusion::sql::sqlparser::ast::{self, CastKind, Expr, Ident, TypedString, Value};

use crate::error::{BqError, BqResult};
use crate::sql::ast::{cast, string};
use crate::sql::types::datafusion_sql_type;

/// GoogleSQL's range interval literal (`INTERVAL '1-2' YEAR TO MONTH`,
/// `INTERVAL '3 4:5:6.5' DAY TO SECOND`) as the interval text DataFusion reads
/// (`'1 years 2 months'`, `'3 days 4 hours 5 minutes 6.5 seconds'`). The value's groups are
/// separated by spaces (year-month with `-`, the time with `:`, each with its own sign) and
/// name the fields from the leading one to the last in order.
/// The most a single-field interval literal may count of each unit (BigQuery's INTERVAL
/// spans 10,000 years, 3,660,000 days and 87,840,000 hours each way).
const INTERVAL_MAXIMUMS: [(&str, i128); 10] = [
    ("YEAR", 10_000),
    ("QUARTER", 40_000),
    ("MONTH", 120_000),
    ("WEEK", 522_857),
    ("DAY", 3_660_000),
    ("HOUR", 87_840_000),
    ("MINUTE", 5_270_400_000),
    ("SECOND", 316_224_000_000),
    ("MILLISECOND", 316_224_000_000_000),
    ("MICROSECOND", 316_224_000_000_000_000),
];

/// Checks `INTERVAL n UNIT` with a literal count is within INTERVAL's range.
pub(super) fn check_interval_count(iv: &ast::Interval) -> BqResult<()> {
    let (Some(field), None) = (&iv.leading_field, &iv.last_field) else {
        return Ok(());
    };
    let (negative, v) = match iv.value.as_ref() {
        Expr::UnaryOp {
            op: ast::UnaryOperator::Minus,
            expr,
        } => (true, expr.as_ref()),
        v => (false, v),
    };
    let Expr::Value(ast::ValueWithSpan {
        value: Value::Number(n, _),
        ..
    }) = v
    else {
        return Ok(());
    };
    let unit = field.to_string().to_ascii_uppercase();
    let (Ok(count), Some((_, max))) = (
        n.parse::<i128>(),
        INTERVAL_MAXIMUMS.iter().find(|(u, _)| *u == unit),
    ) else {
        return Ok(());
    };
    if count > *max {
        let sign = if negative { "-" } else { "" };
        return Err(BqError::invalid_query(format!(
            "Interval field value is out of range: {sign}{count} {unit} (at most {max})"
        )));
    }
    Ok(())
}

pub(super) fn range_interval(iv: &ast::Interval) -> BqResult<Expr> {
    const FIELDS: [&str; 6] = ["year", "month", "day", "hour", "minute", "second"];
    let bad =
        |why: &str| BqError::invalid_query(format!("Invalid interval literal {}: {why}", iv.value));
    let Expr::Value(v) = iv.value.as_ref() else {
        return Err(bad("the value must be a string"));
    };
    let (Value::SingleQuotedString(text) | Value::DoubleQuotedString(text)) = &v.value else {
        return Err(bad("the value must be a string"));
    };
    let index = |f: Option<&ast::DateTimeField>| {
        f.map(|f| f.to_string().to_ascii_lowercase())
            .and_then(|n| FIELDS.iter().position(|x| *x == n))
    };
    let (Some(first), Some(last)) = (
        index(iv.leading_field.as_ref()),
        index(iv.last_field.as_ref()),
    ) else {
        return Err(bad("unsupported fields"));
    };
    if first > last {
        return Err(bad("the leading field comes after the last"));
    }
    // Each field's number follows the one before with BigQuery's separator: `Y-M D H:M:S`.
    let separator = |i: usize| match FIELDS[i] {
        "year" => '-',
        "month" | "day" => ' ',
        _ => ':',
    };
    let expected: Vec<char> = (first..last).map(separator).collect();
    let mut found = Vec::new();
    for (g, group) in text.split_whitespace().enumerate() {
        if g > 0 {
            found.push(' ');
        }
        let body = group.trim_start_matches(['-', '+']);
        found.extend(body.chars().filter(|c| matches!(c, '-' | ':')));
    }
    if found != expected {
        let shown: String = FIELDS[first..=last]
            .iter()
            .enumerate()
            .map(|(k, f)| match k {
                0 => f.to_ascii_uppercase(),
                _ => format!("{}{}", separator(first + k - 1), f.to_ascii_uppercase()),
            })
            .collect();
        return Err(bad(&format!("the value must be written as {shown}")));
    }
    let mut numbers = Vec::new();
    for group in text.split_whitespace() {
        let (negative, body) = match group.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, group.strip_prefix('+').unwrap_or(group)),
        };
        for n in body.split(['-', ':']) {
            if n.is_empty() || !n.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
                return Err(bad("not a number"));
            }
            numbers.push(if negative {
                format!("-{n}")
            } else {
                n.to_string()
            });
        }
    }
    if numbers.len() != last - first + 1 {
        return Err(bad(&format!(
            "{} numbers for {} fields",
            numbers.len(),
            last - first + 1
        )));
    }
    let text = numbers
        .iter()
        .zip(&FIELDS[first..=last])
        .map(|(n, f)| format!("{n} {f}s"))
        .collect::<Vec<_>>()
        .join(" ");
    Ok(Expr::Interval(ast::Interval {
        value: Box::new(string(&text)),
        leading_field: None,
        leading_precision: None,
        last_field: None,
        fractional_seconds_precision: None,
    }))
}

/// A cast to a GoogleSQL type, as the DataFusion cast: `SAFE_CAST` is `TRY_CAST`.
pub(super) fn cast_type(kind: &mut CastKind, data_type: &mut ast::DataType) {
    if *kind == CastKind::SafeCast {
        *kind = CastKind::TryCast;
    }
    if let Some(t) = datafusion_sql_type(data_type) {
        *data_type = t;
    }
}

/// `CAST(x AS BIGNUMERIC(P[, S]))`: the value rounded to the type's digits, as a
/// BIGNUMERIC (a cast to the decimal of those digits, then to BIGNUMERIC's own). NUMERIC(P, S)
/// needs no such step: a decimal of at most 38 digits is a NUMERIC already.
pub(super) fn parameterized_bignumeric(e: &mut Expr) {
    let Expr::Cast {
        kind,
        expr,
        data_type,
        format,
        array,
    } = e
    else {
        return;
    };
    let (p, s) = match data_type {
        ast::DataType::BigNumeric(info) | ast::DataType::BigDecimal(info) => match info {
            ast::ExactNumberInfo::Precision(p) => (*p, 0),
            ast::ExactNumberInfo::PrecisionAndScale(p, s) => (*p, *s),
            ast::ExactNumberInfo::None => return,
        },
        _ => return,
    };
    if *kind == CastKind::SafeCast {
        *kind = CastKind::TryCast;
    }
    let inner = Expr::Cast {
        kind: kind.clone(),
        expr: std::mem::replace(expr, Box::new(Expr::value(Value::Null))),
        data_type: ast::DataType::Decimal(ast::ExactNumberInfo::PrecisionAndScale(p, s)),
        format: format.take(),
        array: *array,
    };
    **expr = inner;
    *data_type = ast::DataType::Decimal(ast::ExactNumberInfo::PrecisionAndScale(76, 38));
}

/// `CAST([(1, 'x'), ..] AS ARRAY<STRUCT<a INT64, b STRING>>)` (how a typed array literal
/// arrives): each tuple or unnamed struct element a struct with the type's field names, and
/// so on into the fields that are STRUCTs and ARRAYs of them.
pub(super) fn typed_struct_array(expr: &mut Expr, data_type: &ast::DataType) {
    if matches!(expr, Expr::Array(_)) {
        let e = std::mem::replace(expr, Expr::value(Value::Null));
        *expr = typed_value(e, data_type);
    }
}

/// The struct of `values` with the names (and, within, the names of the types) of `fields`.
fn named_fields(values: Vec<Expr>, fields: &[ast::StructField]) -> Expr {
    let named = values
        .into_iter()
        .zip(fields)
        .map(|(v, f)| {
            let v = match v {
                Expr::Named { expr, .. } => *expr,
                v => v,
            };
            let v = typed_value(v, &f.field_type);
            match &f.field_name {
                Some(name) => Expr::Named {
                    expr: Box::new(v),
                    name: name.clone(),
                },
                None => v,
            }
        })
        .collect();
    Expr::Struct {
        values: named,
        fields: Vec::new(),
    }
}

/// `v` with the field names of `t` given to each tuple or unnamed struct in it.
fn typed_value(v: Expr, t: &ast::DataType) -> Expr {
    match (v, t) {
        (
            Expr::Array(mut arr),
            ast::DataType::Array(ast::ArrayElemTypeDef::AngleBracket(inner)),
        ) => {
            arr.elem = arr
                .elem
                .into_iter()
                .map(|el| typed_value(el, inner))
                .collect();
            Expr::Array(arr)
        }
        (Expr::Tuple(values), ast::DataType::Struct(fields, _)) if values.len() == fields.len() => {
            named_fields(values, fields)
        }
        (
            Expr::Struct {
                values,
                fields: declared,
            },
            ast::DataType::Struct(fields, _),
        ) if declared.is_empty() && values.len() == fields.len() => named_fields(values, fields),
        (v, _) => v,
    }
}

/// `TYPE 'text'` as a cast of the text, when DataFusion names the type otherwise.
pub(super) fn typed_string(ts: &TypedString) -> Option<Expr> {
    let t = datafusion_sql_type(&ts.data_type)?;
    let value = match (&ts.data_type, &ts.value.value) {
        (
            ast::DataType::Timestamp(..) | ast::DataType::Datetime(_),
            Value::SingleQuotedString(text) | Value::DoubleQuotedString(text),
        ) => match two_digit_parts(text) {
            Some(padded) => string(&padded),
            None => Expr::Value(ts.value.clone()),
        },
        _ => Expr::Value(ts.value.clone()),
    };
    Some(cast(value, t))
}

/// `'2016-1-8 2:51:45'` as `'2016-01-08 02:51:45'`: BigQuery's canonical format allows one
/// digit for the month, day and hour, Arrow's parser only two; `None` when nothing changes.
fn two_digit_parts(text: &str) -> Option<String> {
    let t = text.trim();
    let (date, time) = match t.find([' ', 'T', 't']) {
        Some(i) => (&t[..i], Some((&t[i..i + 1], &t[i + 1..]))),
        None => (t, None),
    };
    let parts: Vec<&str> = date.split('-').collect();
    let [y, m, d] = parts.as_slice() else {
        return None;
    };
    let pad = |p: &str| {
        if p.len() == 1 && p.bytes().all(|b| b.is_ascii_digit()) {
            format!("0{p}")
        } else {
            p.to_string()
        }
    };
    let mut out = format!("{y}-{}-{}", pad(m), pad(d));
    if let Some((sep, rest)) = time {
        out.push_str(sep);
        match rest.split_once(':') {
            Some((h, rest)) => {
                out.push_str(&pad(h));
                out.push(':');
                out.push_str(rest);
            }
            None => out.push_str(rest),
        }
    }
    (out != t).then_some(out)
}

/// Raw, triple-quoted and bytes literals as the plain literals DataFusion reads; `None`
/// for any other value.
pub(super) fn value(v: &Value) -> Option<Expr> {
    match v {
        Value::SingleQuotedRawStringLiteral(r)
        | Value::DoubleQuotedRawStringLiteral(r)
        | Value::TripleSingleQuotedString(r)
        | Value::TripleDoubleQuotedString(r)
        | Value::TripleSingleQuotedRawStringLiteral(r)
        | Value::TripleDoubleQuotedRawStringLiteral(r) => Some(string(r)),
        Value::SingleQuotedByteStringLiteral(b) | Value::DoubleQuotedByteStringLiteral(b) => {
            let hex: String = unescape_bytes(b)
                .iter()
                .map(|x| format!("{x:02X}"))
                .collect();
            Some(Expr::value(Value::HexStringLiteral(hex)))
        }
        // `0x1F` is an INT64 in GoogleSQL (DataFusion reads it as BYTES).
        Value::HexStringLiteral(h) => i64::from_str_radix(h, 16)
            .ok()
            .map(|n| Expr::value(Value::Number(n.to_string(), false))),
        _ => None,
    }
}

/// The bytes of a bytes literal's text, its escapes (`\x05`, `\n`, `\101`, ...) read as
/// GoogleSQL reads them (the tokenizer keeps them as written).
fn unescape_bytes(text: &str) -> Vec<u8> {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' || i + 1 >= b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let c = b[i + 1];
        let hex = |s: &[u8]| {
            std::str::from_utf8(s)
                .ok()
                .and_then(|s| u8::from_str_radix(s, 16).ok())
        };
        let oct = |s: &[u8]| {
            std::str::from_utf8(s)
                .ok()
                .and_then(|s| u8::from_str_radix(s, 8).ok())
        };
        match c {
            b'x' | b'X' if i + 3 < b.len() && hex(&b[i + 2..i + 4]).is_some() => {
                out.extend(hex(&b[i + 2..i + 4]));
                i += 4;
            }
            b'0'..=b'7' if i + 3 < b.len() && oct(&b[i + 1..i + 4]).is_some() => {
                out.extend(oct(&b[i + 1..i + 4]));
                i += 4;
            }
            _ => {
                out.push(match c {
                    b'n' => b'\n',
                    b't' => b'\t',
                    b'r' => b'\r',
                    b'a' => 0x07,
                    b'b' => 0x08,
                    b'f' => 0x0c,
                    b'v' => 0x0b,
                    other => other,
                });
                i += 2;
            }
        }
    }
    out
}

/// `STRUCT<a INT64, b STRING>(1, 'x')`: each value named and cast.
pub(super) fn typed_struct(
    values: &mut Vec<Expr>,
    fields: &mut Vec<ast::StructField>,
) -> BqResult<()> {
    if fields.len() != values.len() {
        return Err(BqError::invalid_query(
            "STRUCT type and values have different lengths",
        ));
    }
    let named = values
        .drain(..)
        .zip(fields.iter())
        .enumerate()
        .map(|(i, (v, f))| {
            let t = datafusion_sql_type(&f.field_type).unwrap_or_else(|| f.field_type.clone());
            Expr::Named {
                expr: Box::new(cast(v, t)),
                name: f
                    .field_name
                    .clone()
                    .unwrap_or_else(|| Ident::new(format!("_field_{}", i + 1))),
            }
        })
        .collect();
    *values = named;
    fields.clear();
    Ok(())
}

/// `STRUCT(a, t.b, 1 + 2)`: BigQuery names a field by the column or path it reads (`a`,
/// `b`), and leaves the others anonymous (`_field_3`, as the REST API shows them).
pub(super) fn untyped_struct(values: &mut [Expr]) {
    for (i, v) in values.iter_mut().enumerate() {
        let name = match v {
            Expr::Named { .. } => continue,
            Expr::Identifier(id) => id.clone(),
            Expr::CompoundIdentifier(parts) => match parts.last() {
                Some(last) => last.clone(),
                None => continue,
            },
            _ => Ident::new(format!("_field_{}", i + 1)),
        };
        let expr = std::mem::replace(v, Expr::value(ast::Value::Null));
        *v = Expr::Named {
            expr: Box::new(expr),
            name,
        };
    }
}

/// `SELECT AS STRUCT a, b AS c FROM ..` where a subquery's one value is expected: the
/// query of the one STRUCT its row is (`SELECT STRUCT(a, b AS c) FROM ..`).
pub(super) fn select_as_struct(q: &mut ast::Query) -> BqResult<()> {
    // Each SELECT of a set operation; the later ones take the first one's field names, as
    // the set operation's columns take its column names.
    let mut names: Option<Vec<Option<Ident>>> = None;
    for select in crate::sql::ast::body_selects(q.body.as_mut()) {
        let distinct = match select.value_table_mode {
            Some(ast::ValueTableMode::AsStruct) => false,
            Some(ast::ValueTableMode::DistinctAsStruct) => true,
            _ => continue,
        };
        let mut values = Vec::with_capacity(select.projection.len());
        for item in select.projection.drain(..) {
            values.push(match item {
                ast::SelectItem::UnnamedExpr(e) => e,
                ast::SelectItem::ExprWithAlias { expr, alias } => Expr::Named {
                    expr: Box::new(expr),
                    name: alias,
                },
                _ => {
                    return Err(BqError::unsupported(
                        "SELECT AS STRUCT with * in a subquery (name the columns)",
                    ));
                }
            });
        }
        match &names {
            None => {
                names = Some(
                    values
                        .iter()
                        .map(|v| match v {
                            Expr::Named { name, .. } => Some(name.clone()),
                            _ => None,
                        })
                        .collect(),
                )
            }
            Some(first) if first.len() == values.len() => {
                for (v, n) in values.iter_mut().zip(first) {
                    if let Some(n) = n {
                        let inner = match std::mem::replace(v, Expr::value(Value::Null)) {
                            Expr::Named { expr, .. } => *expr,
                            other => other,
                        };
                        *v = Expr::Named {
                            expr: Box::new(inner),
                            name: n.clone(),
                        };
                    }
                }
            }
            Some(_) => {}
        }
        untyped_struct(&mut values);
        select.projection = vec![ast::SelectItem::UnnamedExpr(Expr::Struct {
            values,
            fields: Vec::new(),
        })];
        select.value_table_mode = None;
        if distinct {
            select.distinct = Some(ast::Distinct::Distinct);
        }
    }
    Ok(())
}

/// A tuple `(1, 'a')` where a value is expected (a SELECT item, an array element): the
/// anonymous STRUCT it is, whose fields BigQuery names `_field_1`, `_field_2`, ...
pub(super) fn tuple_struct(items: &mut Vec<Expr>) -> Expr {
    let values = std::mem::take(items)
        .into_iter()
        .enumerate()
        .map(|(i, v)| Expr::Named {
            expr: Box::new(v),
            name: Ident::new(format!("_field_{}", i + 1)),
        })
        .collect();
    Expr::Struct {
        values,
        fields: Vec::new(),
    }
}

/// The tuples among a query's SELECT items as the STRUCTs they are.
pub(super) fn tuple_select_items(q: &mut ast::Query) {
    for s in crate::sql::ast::body_selects(&mut q.body) {
        for item in &mut s.projection {
            if let ast::SelectItem::UnnamedExpr(e) | ast::SelectItem::ExprWithAlias { expr: e, .. } =
                item
                && let Expr::Tuple(items) = e
            {
                *e = tuple_struct(items);
            }
        }
    }
}

/// `[STRUCT(1 AS a), STRUCT(2), (3)]`: later structs and tuples take the first one's names.
pub(super) fn struct_array_names(arr: &mut ast::Array) {
    if let Some(Expr::Tuple(items)) = arr.elem.first_mut() {
        let first = tuple_struct(items);
        if let Some(el) = arr.elem.first_mut() {
            *el = first;
        }
    }
    let names: Option<Vec<Ident>> = match arr.elem.first() {
        Some(Expr::Struct { values, .. }) => values
            .iter()
            .map(|v| match v {
                Expr::Named { name, .. } => Some(name.clone()),
                _ => None,
            })
            .collect(),
        _ => None,
    };
    if let Some(names) = names {
        for el in arr.elem.iter_mut().skip(1) {
            // `[STRUCT(1 AS a), (2)]`: a tuple element is a struct of the array's type.
            if let Expr::Tuple(items) = el
                && items.len() == names.len()
            {
                *el = Expr::Struct {
                    values: std::mem::take(items),
                    fields: Vec::new(),
                };
            }
            if let Expr::Struct { values, .. } = el
                && values.len() == names.len()
            {
                // The element type is the first element's: its names win, over the ones
                // a later element's fields were given or took from their columns.
                for (v, n) in values.iter_mut().zip(&names) {
                    let inner = match std::mem::replace(v, Expr::value(Value::Null)) {
                        Expr::Named { expr, .. } => *expr,
                        other => other,
                    };
                    *v = Expr::Named {
                        expr: Box::new(inner),
                        name: n.clone(),
                    };
                }
            }
        }
    }
}
