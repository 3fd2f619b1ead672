//! GoogleSQL → DataFusion SQL, as rewrites of the parsed AST: table names qualified as
//! `project.dataset.table`, views inlined, GoogleSQL type names, `/` as float division,
//! `@name` and `?` parameters as DataFusion placeholders, and a few functions.

use std::collections::HashSet;
use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    self, BinaryOperator, CastKind, Expr, Ident, ObjectName, ObjectNamePart, Query, TableAlias,
    TableAliasColumnDef, TableFactor, Value, VisitMut, VisitorMut,
};
use datafusion::sql::sqlparser::dialect::BigQueryDialect;
use datafusion::sql::sqlparser::parser::Parser;

use crate::catalog::{Catalog, TableKind, TableRef};
use crate::error::{BqError, BqResult};
use crate::sql::params::{Params, to_sql_expr};
use crate::sql::types::datafusion_sql_type;

/// Where unqualified names resolve.
#[derive(Clone, Debug, Default)]
pub struct NameContext {
    /// The project that runs the query.
    pub project: String,
    /// The default dataset (`defaultDataset` of the request), if any.
    pub default_dataset: Option<(String, String)>,
    /// The temporary tables of the script or session, found first for a one-part name.
    pub temp: Option<TempScope>,
    /// The script's (or session's) variables, by lower-case name, as literals.
    pub vars: Vars,
}

/// Script variables (`DECLARE`, `SET`), by lower-case name, each as the literal of its value.
pub type Vars = std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, Expr>>>;

/// Datasets that hold temporary tables start with this (and are not listed).
pub const TEMP_DATASET_PREFIX: &str = "_bigq_temp_";

/// Where a script's or a session's temporary tables live: a hidden dataset, and the names
/// created in it so far (shared by every statement of the script or session).
#[derive(Clone, Debug, Default)]
pub struct TempScope {
    /// The project of the hidden dataset.
    pub project: String,
    /// The hidden dataset.
    pub dataset: String,
    tables: std::sync::Arc<std::sync::Mutex<HashSet<String>>>,
    /// The session's variables.
    pub vars: Vars,
}

impl TempScope {
    /// A scope with a fresh hidden dataset name in `project` (the dataset is made when the
    /// first temporary table is).
    pub fn new(project: &str) -> Self {
        TempScope {
            project: project.to_string(),
            dataset: format!("{TEMP_DATASET_PREFIX}{}", uuid::Uuid::new_v4().simple()),
            tables: Default::default(),
            vars: Default::default(),
        }
    }

    fn table_ref(&self, name: &str) -> TableRef {
        TableRef {
            project: self.project.clone(),
            dataset: self.dataset.clone(),
            table: name.to_ascii_lowercase(),
        }
    }

    /// The temporary table `name`, if the scope made one.
    pub fn get(&self, name: &str) -> Option<TableRef> {
        let tables = self.tables.lock().unwrap_or_else(|e| e.into_inner());
        tables
            .contains(&name.to_ascii_lowercase())
            .then(|| self.table_ref(name))
    }

    /// Records the temporary table `name` and returns where it lives.
    pub fn add(&self, name: &str) -> TableRef {
        let mut tables = self.tables.lock().unwrap_or_else(|e| e.into_inner());
        tables.insert(name.to_ascii_lowercase());
        self.table_ref(name)
    }
}

/// Parses GoogleSQL (one statement or a script).
pub fn parse(sql: &str) -> BqResult<Vec<ast::Statement>> {
    let sql = crate::sql::range::pre_parse(sql).map_err(BqError::invalid_query)?;
    Parser::parse_sql(&BigQueryDialect {}, &sql)
        .map_err(|e| BqError::invalid_query(format!("Syntax error: {}", clean_parser_error(&e))))
}

fn clean_parser_error(e: &datafusion::sql::sqlparser::parser::ParserError) -> String {
    let s = e.to_string();
    s.strip_prefix("sql parser error: ")
        .unwrap_or(&s)
        .to_string()
}

/// The parts of a (possibly backquoted, dotted) name: `` `p.d.t` `` is three parts.
pub fn name_parts(name: &ObjectName) -> BqResult<Vec<String>> {
    let mut out = Vec::new();
    for part in &name.0 {
        match part {
            ObjectNamePart::Identifier(id) => {
                if id.quote_style == Some('`') {
                    out.extend(id.value.split('.').map(str::to_string));
                } else {
                    out.push(id.value.clone());
                }
            }
            other => return Err(BqError::unsupported(format!("name part {other}"))),
        }
    }
    Ok(out)
}

/// Resolves a table name to its address.
pub fn resolve(name: &ObjectName, cx: &NameContext) -> BqResult<TableRef> {
    let parts = name_parts(name)?;
    resolve_parts(&parts, cx)
}

fn resolve_parts(parts: &[String], cx: &NameContext) -> BqResult<TableRef> {
    match parts {
        [p, d, t] => Ok(TableRef {
            project: p.clone(),
            dataset: d.clone(),
            table: t.clone(),
        }),
        [d, t] => Ok(TableRef {
            project: cx.project.clone(),
            dataset: d.clone(),
            table: t.clone(),
        }),
        [t] => {
            if let Some(temp) = cx.temp.as_ref().and_then(|s| s.get(t)) {
                return Ok(temp);
            }
            match &cx.default_dataset {
                Some((p, d)) => Ok(TableRef {
                    project: p.clone(),
                    dataset: d.clone(),
                    table: t.clone(),
                }),
                None => Err(BqError::invalid_query(format!(
                    "Table \"{t}\" must be qualified with a dataset (e.g. dataset.table)."
                ))),
            }
        }
        _ => Err(BqError::invalid_query(format!(
            "Invalid table name: {}",
            parts.join(".")
        ))),
    }
}

/// The three-part name DataFusion resolves against the catalog.
pub fn qualified_name(t: &TableRef) -> ObjectName {
    let id = |s: &str| ObjectNamePart::Identifier(Ident::with_quote('`', s));
    ObjectName(vec![id(&t.project), id(&t.dataset), id(&t.table)])
}

/// Rewrites one query in place. Tables it reads must exist; parameters become typed
/// literals.
pub fn rewrite_query(
    q: &mut Query,
    catalog: &Catalog,
    cx: &NameContext,
    params: &Params,
) -> BqResult<()> {
    // Named before the rewrite, while a column is still the name the query wrote (a script
    // variable's value replaces its name below).
    name_result_columns(q, cx);
    let mut r = Rewriter {
        catalog,
        cx,
        params,
        ctes: HashSet::new(),
        positional: 0,
    };
    match q.visit(&mut r) {
        ControlFlow::Continue(()) => Ok(()),
        ControlFlow::Break(e) => Err(e),
    }
}

/// Names the result columns as BigQuery does: a column reference or a path (`t.x`,
/// `s.a.b`) by its last part, any other expression without an alias `f0_`, `f1_`, ... (in
/// the order of such columns); DataFusion would name them after the expression
/// (`count(*)`, `Int64(1)`); a script variable keeps its name, though its value replaces
/// it. Only the outermost SELECT's names reach the result (the leftmost one of a set
/// operation).
fn name_result_columns(q: &mut Query, cx: &NameContext) {
    fn leftmost(body: &mut ast::SetExpr) -> Option<&mut ast::Select> {
        match body {
            ast::SetExpr::Select(s) => Some(s),
            ast::SetExpr::SetOperation { left, .. } => leftmost(left),
            ast::SetExpr::Query(q) => leftmost(&mut q.body),
            _ => None,
        }
    }
    let Some(select) = leftmost(&mut q.body) else {
        return;
    };
    let vars = cx.vars.lock().unwrap_or_else(|e| e.into_inner());
    let mut anonymous = 0;
    for item in &mut select.projection {
        let ast::SelectItem::UnnamedExpr(e) = item else {
            continue;
        };
        let alias = match e {
            Expr::Identifier(id)
                if id.quote_style.is_none()
                    && vars.contains_key(&id.value.to_ascii_lowercase()) =>
            {
                id.clone()
            }
            Expr::Identifier(_) => continue,
            Expr::CompoundIdentifier(parts) => match parts.last() {
                Some(last) => last.clone(),
                None => continue,
            },
            _ => {
                let name = Ident::new(format!("f{anonymous}_"));
                anonymous += 1;
                name
            }
        };
        let expr = std::mem::replace(e, Expr::value(Value::Null));
        *item = ast::SelectItem::ExprWithAlias { expr, alias };
    }
}

struct Rewriter<'a> {
    catalog: &'a Catalog,
    cx: &'a NameContext,
    params: &'a Params,
    ctes: HashSet<String>,
    positional: usize,
}

fn string(s: &str) -> Expr {
    Expr::value(Value::SingleQuotedString(s.to_string()))
}

fn number(n: i64) -> Expr {
    Expr::value(Value::Number(n.to_string(), false))
}

fn binary(left: Expr, op: BinaryOperator, right: Expr) -> Expr {
    Expr::Nested(Box::new(Expr::BinaryOp {
        left: Box::new(left),
        op,
        right: Box::new(right),
    }))
}

/// A date part given as a bare word (`MONTH`) or a string.
fn part_name(e: &Expr) -> Option<String> {
    match e {
        Expr::Identifier(id) => Some(id.value.to_ascii_lowercase()),
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) | Value::DoubleQuotedString(s) => {
                Some(s.to_ascii_lowercase())
            }
            _ => None,
        },
        _ => None,
    }
}

/// GoogleSQL `INTERVAL n PART` as an interval DataFusion reads.
fn interval(e: &Expr) -> Option<Expr> {
    let Expr::Interval(iv) = e else {
        return None;
    };
    let field = iv.leading_field.as_ref()?.to_string().to_ascii_lowercase();
    let unit = Expr::Interval(ast::Interval {
        value: Box::new(string(&format!("1 {field}"))),
        leading_field: None,
        leading_precision: None,
        last_field: None,
        fractional_seconds_precision: None,
    });
    Some(match iv.value.as_ref() {
        Expr::Value(v) if matches!(v.value, Value::Number(..)) => Expr::Interval(ast::Interval {
            value: Box::new(string(&format!("{} {field}", v.value))),
            leading_field: None,
            leading_precision: None,
            last_field: None,
            fractional_seconds_precision: None,
        }),
        other => binary(other.clone(), BinaryOperator::Multiply, unit),
    })
}

/// GoogleSQL's range interval literal (`INTERVAL '1-2' YEAR TO MONTH`,
/// `INTERVAL '3 4:5:6.5' DAY TO SECOND`) as the interval text DataFusion reads
/// (`'1 years 2 months'`, `'3 days 4 hours 5 minutes 6.5 seconds'`). The value's groups are
/// separated by spaces (year-month with `-`, the time with `:`, each with its own sign) and
/// name the fields from the leading one to the last in order.
fn range_interval(iv: &ast::Interval) -> BqResult<Expr> {
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

/// Seconds in a fixed-length part, for TIMESTAMP_DIFF and DATE_DIFF.
fn part_seconds(part: &str) -> Option<i64> {
    Some(match part {
        "microsecond" => return None,
        "millisecond" => return None,
        "second" => 1,
        "minute" => 60,
        "hour" => 3600,
        "day" => 86_400,
        "week" => 7 * 86_400,
        _ => return None,
    })
}

/// `a - b` counted in `part`, truncated toward zero as BigQuery's *_DIFF do.
fn diff(a: Expr, b: Expr, part: &str) -> Option<Expr> {
    let epoch = |e: Expr| call("date_part", vec![string("epoch"), e]);
    let months = |e: Expr| {
        binary(
            binary(
                call("date_part", vec![string("year"), e.clone()]),
                BinaryOperator::Multiply,
                number(12),
            ),
            BinaryOperator::Plus,
            call("date_part", vec![string("month"), e]),
        )
    };
    let raw = match part {
        "month" => binary(months(a), BinaryOperator::Minus, months(b)),
        "year" => binary(
            call("date_part", vec![string("year"), a]),
            BinaryOperator::Minus,
            call("date_part", vec![string("year"), b]),
        ),
        "millisecond" | "microsecond" => {
            let scale = if part == "millisecond" {
                1_000
            } else {
                1_000_000
            };
            binary(
                binary(epoch(a), BinaryOperator::Minus, epoch(b)),
                BinaryOperator::Multiply,
                number(scale),
            )
        }
        p => {
            let secs = part_seconds(p)?;
            binary(
                binary(epoch(a), BinaryOperator::Minus, epoch(b)),
                BinaryOperator::Divide,
                number(secs),
            )
        }
    };
    Some(cast(call("trunc", vec![raw]), ast::DataType::BigInt(None)))
}

impl Rewriter<'_> {
    /// `dataset.INFORMATION_SCHEMA.TABLES` as a query over the catalog.
    fn information_schema(&self, parts: &[String]) -> BqResult<Box<Query>> {
        let view = parts[parts.len() - 1].to_ascii_uppercase();
        if view != "TABLES" {
            return Err(BqError::unsupported(format!("INFORMATION_SCHEMA.{view}")));
        }
        let (project, dataset) = match &parts[..parts.len() - 2] {
            [p, d] => (p.clone(), d.clone()),
            [d] => (self.cx.project.clone(), d.clone()),
            _ => {
                return Err(BqError::unsupported(
                    "region-qualified INFORMATION_SCHEMA views",
                ));
            }
        };
        let quote = |s: &str| format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'"));
        let rows: Vec<String> = {
            let r = self.catalog.read();
            let ds = r.dataset(&project, &dataset)?;
            ds.tables
                .iter()
                .map(|(name, t)| {
                    let kind = match t.kind {
                        TableKind::Table => "BASE TABLE",
                        TableKind::View { .. } => "VIEW",
                    };
                    format!(
                        "SELECT {} AS table_catalog, {} AS table_schema, {} AS table_name, '{kind}' AS table_type",
                        quote(&project),
                        quote(&dataset),
                        quote(name)
                    )
                })
                .collect()
        };
        let sql = if rows.is_empty() {
            "SELECT CAST(NULL AS STRING) AS table_catalog, CAST(NULL AS STRING) AS table_schema, \
             CAST(NULL AS STRING) AS table_name, CAST(NULL AS STRING) AS table_type FROM (SELECT 1) AS __empty WHERE FALSE"
                .to_string()
        } else {
            rows.join(" UNION ALL ")
        };
        match parse(&sql)?.pop() {
            Some(ast::Statement::Query(q)) => Ok(q),
            _ => Err(BqError::internal("INFORMATION_SCHEMA query")),
        }
    }

    fn named_param(&self, name: &str) -> BqResult<Expr> {
        let v = self
            .params
            .named(name)
            .ok_or_else(|| BqError::invalid_query(format!("Query parameter '{name}' not found")))?;
        to_sql_expr(v)
    }
}

fn cast(expr: Expr, data_type: ast::DataType) -> Expr {
    Expr::Cast {
        kind: CastKind::Cast,
        expr: Box::new(expr),
        data_type,
        array: false,
        format: None,
    }
}

fn function_name(f: &ast::Function) -> Option<String> {
    match f.name.0.as_slice() {
        [ObjectNamePart::Identifier(id)] => Some(id.value.to_ascii_uppercase()),
        _ => None,
    }
}

fn function_args(f: &ast::Function) -> Option<Vec<Expr>> {
    match &f.args {
        ast::FunctionArguments::List(list) => list
            .args
            .iter()
            .map(|a| match a {
                ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)) => Some(e.clone()),
                _ => None,
            })
            .collect(),
        ast::FunctionArguments::None => Some(Vec::new()),
        _ => None,
    }
}

/// A call of the function `name` with positional arguments.
pub(crate) fn call(name: &str, args: Vec<Expr>) -> Expr {
    Expr::Function(ast::Function {
        name: ObjectName(vec![ObjectNamePart::Identifier(Ident::new(name))]),
        uses_odbc_syntax: false,
        parameters: ast::FunctionArguments::None,
        args: ast::FunctionArguments::List(ast::FunctionArgumentList {
            duplicate_treatment: None,
            args: args
                .into_iter()
                .map(|e| ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(e)))
                .collect(),
            clauses: Vec::new(),
        }),
        filter: None,
        null_treatment: None,
        over: None,
        within_group: Vec::new(),
    })
}

impl Rewriter<'_> {
    /// The value of the script variable `name`, if one is declared.
    fn variable(&self, name: &str) -> Option<Expr> {
        let vars = self.cx.vars.lock().unwrap_or_else(|e| e.into_inner());
        vars.get(&name.to_ascii_lowercase()).cloned()
    }

    fn table_factor(&mut self, tf: &mut TableFactor) -> BqResult<()> {
        match tf {
            TableFactor::Table {
                name, alias, args, ..
            } => {
                if args.is_some() {
                    return Err(BqError::unsupported("table-valued functions"));
                }
                let parts = name_parts(name)?;
                if parts.len() == 1 && self.ctes.contains(&parts[0]) {
                    return Ok(());
                }
                if parts.len() >= 2
                    && parts[parts.len() - 2].eq_ignore_ascii_case("INFORMATION_SCHEMA")
                {
                    let q = self.information_schema(&parts)?;
                    let alias = alias.clone().or_else(|| {
                        Some(TableAlias {
                            explicit: true,
                            name: Ident::new(&parts[parts.len() - 1]),
                            columns: Vec::new(),
                            at: None,
                        })
                    });
                    *tf = TableFactor::Derived {
                        lateral: false,
                        subquery: q,
                        alias,
                        sample: None,
                    };
                    return Ok(());
                }
                let t = resolve_parts(&parts, self.cx)?;
                let table = {
                    let r = self.catalog.read();
                    if !r.has_project(&t.project) {
                        return Err(BqError::access_denied(format!(
                            "Access Denied: Table {t}: User does not have permission to query table {t}, or perhaps it does not exist."
                        )));
                    }
                    r.table(&t)?
                };
                if let TableKind::View { query } = &table.kind {
                    let mut stmts = parse(query)?;
                    let Some(ast::Statement::Query(q)) = stmts.pop() else {
                        return Err(BqError::internal("view without a query"));
                    };
                    let alias = alias.clone().or_else(|| {
                        Some(TableAlias {
                            explicit: true,
                            name: Ident::new(&t.table),
                            columns: Vec::new(),
                            at: None,
                        })
                    });
                    *tf = TableFactor::Derived {
                        lateral: false,
                        subquery: q,
                        alias,
                        sample: None,
                    };
                    return Ok(());
                }
                *name = qualified_name(&t);
                if alias.is_none() {
                    // BigQuery lets `t.col` refer to the last name part.
                    *alias = Some(TableAlias {
                        explicit: true,
                        name: Ident::new(&t.table),
                        columns: Vec::new(),
                        at: None,
                    });
                }
            }
            TableFactor::UNNEST {
                alias,
                with_offset,
                with_offset_alias,
                array_exprs,
                ..
            } => {
                if *with_offset {
                    // Zip the array with its 0-based positions.
                    let [arr] = array_exprs.as_slice() else {
                        return Err(BqError::unsupported("UNNEST of several arrays WITH OFFSET"));
                    };
                    // 0 to length - 1 (DataFusion's `generate_series` includes its end; its
                    // `range` would be taken for GoogleSQL's RANGE by the rewrite).
                    let positions = call(
                        "generate_series",
                        vec![
                            number(0),
                            binary(
                                cast(
                                    call("cardinality", vec![arr.clone()]),
                                    ast::DataType::BigInt(None),
                                ),
                                BinaryOperator::Minus,
                                number(1),
                            ),
                        ],
                    );
                    array_exprs.push(positions);
                    let value = alias
                        .as_ref()
                        .map(|a| a.name.clone())
                        .unwrap_or_else(|| Ident::new("f0_"));
                    let offset = with_offset_alias
                        .take()
                        .unwrap_or_else(|| Ident::new("offset"));
                    *with_offset = false;
                    *alias = Some(TableAlias {
                        explicit: true,
                        name: Ident::new(format!("__unnest_{}", value.value)),
                        columns: vec![
                            TableAliasColumnDef {
                                name: value,
                                data_type: None,
                            },
                            TableAliasColumnDef {
                                name: offset,
                                data_type: None,
                            },
                        ],
                        at: None,
                    });
                    return Ok(());
                }
                match alias {
                    Some(a) if a.columns.is_empty() => {
                        a.columns = vec![TableAliasColumnDef {
                            name: a.name.clone(),
                            data_type: None,
                        }];
                        a.name = Ident::new(format!("__unnest_{}", a.name.value));
                    }
                    Some(_) => {}
                    None => {
                        *alias = Some(TableAlias {
                            explicit: true,
                            name: Ident::new(ANONYMOUS_UNNEST),
                            columns: vec![TableAliasColumnDef {
                                name: Ident::new("f0_"),
                                data_type: None,
                            }],
                            at: None,
                        });
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn expr(&mut self, e: &mut Expr) -> BqResult<()> {
        match e {
            Expr::Interval(iv) if iv.last_field.is_some() => {
                *e = range_interval(iv)?;
            }
            Expr::Cast {
                kind, data_type, ..
            } => {
                if *kind == CastKind::SafeCast {
                    *kind = CastKind::TryCast;
                }
                if let Some(t) = datafusion_sql_type(data_type) {
                    *data_type = t;
                }
            }
            Expr::TypedString(ts) => {
                if let Some(t) = datafusion_sql_type(&ts.data_type) {
                    let value = Expr::Value(ts.value.clone());
                    *e = cast(value, t);
                }
            }
            Expr::BinaryOp {
                left,
                op: op @ (BinaryOperator::Plus | BinaryOperator::Minus),
                right,
            } if matches!(right.as_ref(), Expr::Interval(_)) => {
                // DATE + INTERVAL is a DATETIME in BigQuery (DataFusion keeps DATE).
                let name = if *op == BinaryOperator::Plus {
                    "bigq_add_interval"
                } else {
                    "bigq_sub_interval"
                };
                let l = std::mem::replace(left.as_mut(), Expr::value(Value::Null));
                let r = std::mem::replace(right.as_mut(), Expr::value(Value::Null));
                *e = call(name, vec![l, r]);
            }
            Expr::BinaryOp {
                op: BinaryOperator::Divide,
                left,
                ..
            } => {
                let l = std::mem::replace(left.as_mut(), Expr::value(Value::Null));
                **left = cast(l, ast::DataType::Double(ast::ExactNumberInfo::None));
            }
            Expr::Value(v) => match &v.value {
                Value::Placeholder(p) if p == "?" => {
                    let i = self.positional;
                    self.positional += 1;
                    let v = self.params.positional(i).ok_or_else(|| {
                        BqError::invalid_query(format!(
                            "Positional query parameter {} has no value",
                            i + 1
                        ))
                    })?;
                    *e = to_sql_expr(v)?;
                }
                Value::Placeholder(p) if p.starts_with('@') => {
                    *e = self.named_param(&p[1..])?;
                }
                Value::SingleQuotedRawStringLiteral(r)
                | Value::DoubleQuotedRawStringLiteral(r)
                | Value::TripleSingleQuotedString(r)
                | Value::TripleDoubleQuotedString(r)
                | Value::TripleSingleQuotedRawStringLiteral(r)
                | Value::TripleDoubleQuotedRawStringLiteral(r) => {
                    *e = string(r);
                }
                Value::SingleQuotedByteStringLiteral(b)
                | Value::DoubleQuotedByteStringLiteral(b) => {
                    let hex: String = b.bytes().map(|x| format!("{x:02X}")).collect();
                    *e = Expr::value(Value::HexStringLiteral(hex));
                }
                _ => {}
            },
            Expr::Struct { values, fields } if !fields.is_empty() => {
                // STRUCT<a INT64, b STRING>(1, 'x'): name and cast each value.
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
                        let t = datafusion_sql_type(&f.field_type)
                            .unwrap_or_else(|| f.field_type.clone());
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
            }
            Expr::Array(arr) => {
                // [STRUCT(1 AS a), STRUCT(2)]: later structs take the first one's names.
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
                        if let Expr::Struct { values, .. } = el
                            && values.len() == names.len()
                        {
                            for (v, n) in values.iter_mut().zip(&names) {
                                if !matches!(v, Expr::Named { .. }) {
                                    let inner = std::mem::replace(v, Expr::value(Value::Null));
                                    *v = Expr::Named {
                                        expr: Box::new(inner),
                                        name: n.clone(),
                                    };
                                }
                            }
                        }
                    }
                }
            }
            Expr::InUnnest {
                expr,
                array_expr,
                negated,
            } => {
                let has = call("array_has", vec![(**array_expr).clone(), (**expr).clone()]);
                *e = if *negated {
                    Expr::UnaryOp {
                        op: ast::UnaryOperator::Not,
                        expr: Box::new(has),
                    }
                } else {
                    has
                };
            }
            Expr::CompoundFieldAccess { access_chain, .. } => {
                for a in access_chain.iter_mut() {
                    if let ast::AccessExpr::Subscript(ast::Subscript::Index { index }) = a
                        && let Expr::Function(f) = index
                        && let Some(n) = function_name(f)
                        && let Some(mut args) = function_args(f).filter(|a| a.len() == 1)
                    {
                        let i = args.pop().unwrap_or(Expr::value(Value::Null));
                        *index = match n.as_str() {
                            "OFFSET" | "SAFE_OFFSET" => binary(i, BinaryOperator::Plus, number(1)),
                            "ORDINAL" | "SAFE_ORDINAL" => i,
                            _ => continue,
                        };
                    }
                }
            }
            Expr::Identifier(id)
                if id.quote_style.is_none()
                    && !id.value.starts_with('@')
                    && self.variable(&id.value).is_some() =>
            {
                if let Some(v) = self.variable(&id.value) {
                    *e = v;
                }
            }
            Expr::Identifier(id) if id.quote_style.is_none() && id.value.starts_with('@') => {
                *e = self.named_param(&id.value[1..])?;
            }
            Expr::CompoundIdentifier(ids)
                if ids
                    .first()
                    .is_some_and(|i| i.quote_style.is_none() && i.value.starts_with('@')) =>
            {
                let mut out = self.named_param(&ids[0].value[1..])?;
                for f in &ids[1..] {
                    out = call(
                        "get_field",
                        vec![out, Expr::value(Value::SingleQuotedString(f.value.clone()))],
                    );
                }
                *e = out;
            }
            Expr::Function(f) => {
                let Some(name) = function_name(f) else {
                    return Ok(());
                };
                if let ast::FunctionArguments::Subquery(q) = &f.args
                    && name == "ARRAY"
                {
                    // ARRAY(SELECT x ...): aggregate the one column, [] when empty.
                    let sql = format!(
                        "SELECT coalesce(array_agg(__array.__v), make_array()) FROM ({q}) AS __array(__v)"
                    );
                    match parse(&sql)?.pop() {
                        Some(ast::Statement::Query(wrapper)) => *e = Expr::Subquery(wrapper),
                        _ => return Err(BqError::internal("ARRAY subquery")),
                    }
                    return Ok(());
                }
                match name.as_str() {
                    "FROM_HEX" => {
                        if let Some(mut args) = function_args(f).filter(|a| a.len() == 1) {
                            args.push(string("hex"));
                            *e = call("decode", args);
                        }
                    }
                    // An aggregate of the array of its inputs.
                    "ST_UNION_AGG" => {
                        if let Some(args) = function_args(f).filter(|a| a.len() == 1) {
                            *e = call("st_union", vec![call("array_agg", args)]);
                        }
                    }
                    // DataFusion has a `range` of its own (an array of integers).
                    "RANGE" => {
                        f.name =
                            ObjectName(vec![ObjectNamePart::Identifier(Ident::new("bigq_range"))]);
                    }
                    "GENERATE_ARRAY" => {
                        let args = function_args(f)
                            .ok_or_else(|| BqError::unsupported("GENERATE_ARRAY arguments"))?;
                        *e = call(super::generate::GENERATE_ARRAY, args);
                    }
                    "IF" => {
                        let args = function_args(f)
                            .filter(|a| a.len() == 3)
                            .ok_or_else(|| BqError::invalid_query("IF takes 3 arguments"))?;
                        let mut it = args.into_iter();
                        let (c, a, b) = (it.next(), it.next(), it.next());
                        if let (Some(c), Some(a), Some(b)) = (c, a, b) {
                            *e = Expr::Case {
                                case_token: ast::helpers::attached_token::AttachedToken::empty(),
                                end_token: ast::helpers::attached_token::AttachedToken::empty(),
                                operand: None,
                                conditions: vec![ast::CaseWhen {
                                    condition: c,
                                    result: a,
                                }],
                                else_result: Some(Box::new(b)),
                            };
                        }
                    }
                    "MOD" => {
                        if let Some(args) = function_args(f).filter(|a| a.len() == 2) {
                            let mut it = args.into_iter();
                            if let (Some(a), Some(b)) = (it.next(), it.next()) {
                                *e = Expr::Nested(Box::new(Expr::BinaryOp {
                                    left: Box::new(a),
                                    op: BinaryOperator::Modulo,
                                    right: Box::new(b),
                                }));
                            }
                        }
                    }
                    "COUNTIF" => {
                        if let Some(args) = function_args(f).filter(|a| a.len() == 1) {
                            let c = args.into_iter().next().unwrap_or(Expr::value(Value::Null));
                            let mut g = f.clone();
                            g.name =
                                ObjectName(vec![ObjectNamePart::Identifier(Ident::new("count"))]);
                            g.args = ast::FunctionArguments::List(ast::FunctionArgumentList {
                                duplicate_treatment: None,
                                args: vec![ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(
                                    Expr::Case {
                                        case_token:
                                            ast::helpers::attached_token::AttachedToken::empty(),
                                        end_token:
                                            ast::helpers::attached_token::AttachedToken::empty(),
                                        operand: None,
                                        conditions: vec![ast::CaseWhen {
                                            condition: c,
                                            result: Expr::value(Value::Number("1".into(), false)),
                                        }],
                                        else_result: None,
                                    },
                                ))],
                                clauses: Vec::new(),
                            });
                            *e = Expr::Function(g);
                        }
                    }
                    "DATE_TRUNC" | "DATETIME_TRUNC" | "TIMESTAMP_TRUNC" => {
                        if let Some(args) = function_args(f).filter(|a| a.len() >= 2)
                            && let Some(part) = part_name(&args[1])
                        {
                            let t = call("date_trunc", vec![string(&part), args[0].clone()]);
                            *e = if name == "DATE_TRUNC" {
                                cast(t, ast::DataType::Date)
                            } else {
                                t
                            };
                        }
                    }
                    "DATE_ADD" | "DATETIME_ADD" | "TIMESTAMP_ADD" | "TIME_ADD" | "DATE_SUB"
                    | "DATETIME_SUB" | "TIMESTAMP_SUB" | "TIME_SUB" => {
                        if let Some(args) = function_args(f).filter(|a| a.len() == 2)
                            && let Some(iv) = interval(&args[1])
                        {
                            let op = if name.ends_with("_ADD") {
                                BinaryOperator::Plus
                            } else {
                                BinaryOperator::Minus
                            };
                            *e = binary(args[0].clone(), op, iv);
                        }
                    }
                    "DATE_DIFF" | "DATETIME_DIFF" | "TIMESTAMP_DIFF" | "TIME_DIFF" => {
                        if let Some(args) = function_args(f).filter(|a| a.len() == 3)
                            && let Some(part) = part_name(&args[2])
                        {
                            match diff(args[0].clone(), args[1].clone(), &part) {
                                Some(d) => *e = d,
                                None => {
                                    return Err(BqError::unsupported(format!(
                                        "{name} with part {part}"
                                    )));
                                }
                            }
                        }
                    }
                    "UNIX_SECONDS" | "UNIX_MILLIS" | "UNIX_MICROS" | "UNIX_DATE" => {
                        if let Some(args) = function_args(f).filter(|a| a.len() == 1) {
                            let scale = match name.as_str() {
                                "UNIX_MILLIS" => 1_000,
                                "UNIX_MICROS" => 1_000_000,
                                _ => 1,
                            };
                            let mut v = call("date_part", vec![string("epoch"), args[0].clone()]);
                            if scale != 1 {
                                v = binary(v, BinaryOperator::Multiply, number(scale));
                            }
                            if name == "UNIX_DATE" {
                                v = binary(v, BinaryOperator::Divide, number(86_400));
                            }
                            *e = cast(call("floor", vec![v]), ast::DataType::BigInt(None));
                        }
                    }
                    "DATE_FROM_UNIX_DATE" => {
                        if let Some(args) = function_args(f).filter(|a| a.len() == 1) {
                            let secs =
                                binary(args[0].clone(), BinaryOperator::Multiply, number(86_400));
                            *e = cast(
                                call("to_timestamp_seconds", vec![secs]),
                                ast::DataType::Date,
                            );
                        }
                    }
                    "TIMESTAMP_SECONDS" | "TIMESTAMP_MILLIS" | "TIMESTAMP_MICROS" => {
                        if let Some(args) = function_args(f).filter(|a| a.len() == 1) {
                            let fname = match name.as_str() {
                                "TIMESTAMP_SECONDS" => "to_timestamp_seconds",
                                "TIMESTAMP_MILLIS" => "to_timestamp_millis",
                                _ => "to_timestamp_micros",
                            };
                            *e = cast(
                                call(fname, args),
                                ast::DataType::Timestamp(None, ast::TimezoneInfo::Tz),
                            );
                        }
                    }
                    "DATE" => match function_args(f) {
                        Some(args) if args.len() == 1 => {
                            *e = cast(
                                args.into_iter().next().unwrap_or(Expr::value(Value::Null)),
                                ast::DataType::Date,
                            );
                        }
                        Some(args) if args.len() == 3 => *e = call("make_date", args),
                        _ => {}
                    },
                    "FORMAT_DATE" | "FORMAT_DATETIME" | "FORMAT_TIMESTAMP" | "FORMAT_TIME" => {
                        if let Some(args) = function_args(f).filter(|a| a.len() == 2) {
                            *e = call("to_char", vec![args[1].clone(), args[0].clone()]);
                        }
                    }
                    "PARSE_DATE" | "PARSE_TIMESTAMP" | "PARSE_DATETIME" => {
                        if let Some(args) = function_args(f).filter(|a| a.len() == 2) {
                            let fname = if name == "PARSE_DATE" {
                                "to_date"
                            } else {
                                "to_timestamp"
                            };
                            let mut v = call(fname, vec![args[1].clone(), args[0].clone()]);
                            if name == "PARSE_TIMESTAMP" {
                                v = cast(v, ast::DataType::Timestamp(None, ast::TimezoneInfo::Tz));
                            }
                            *e = v;
                        }
                    }
                    "REGEXP_CONTAINS" => {
                        if let Some(args) = function_args(f) {
                            *e = call("regexp_like", args);
                        }
                    }
                    "GENERATE_UUID" => *e = call("uuid", Vec::new()),
                    "DIV" => {
                        if let Some(args) = function_args(f).filter(|a| a.len() == 2) {
                            *e = binary(args[0].clone(), BinaryOperator::Divide, args[1].clone());
                        }
                    }
                    "IFNULL" => {
                        if let Some(args) = function_args(f) {
                            *e = call("coalesce", args);
                        }
                    }
                    "SAFE_DIVIDE" => {
                        if let Some(args) = function_args(f).filter(|a| a.len() == 2) {
                            let mut it = args.into_iter();
                            if let (Some(a), Some(b)) = (it.next(), it.next()) {
                                let a = cast(a, ast::DataType::Double(ast::ExactNumberInfo::None));
                                *e = Expr::Case {
                                    case_token: ast::helpers::attached_token::AttachedToken::empty(
                                    ),
                                    end_token: ast::helpers::attached_token::AttachedToken::empty(),
                                    operand: None,
                                    conditions: vec![ast::CaseWhen {
                                        condition: Expr::BinaryOp {
                                            left: Box::new(b.clone()),
                                            op: BinaryOperator::Eq,
                                            right: Box::new(Expr::value(Value::Number(
                                                "0".into(),
                                                false,
                                            ))),
                                        },
                                        result: Expr::value(Value::Null),
                                    }],
                                    else_result: Some(Box::new(Expr::BinaryOp {
                                        left: Box::new(a),
                                        op: BinaryOperator::Divide,
                                        right: Box::new(b),
                                    })),
                                };
                            }
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
        Ok(())
    }
}

impl VisitorMut for Rewriter<'_> {
    type Break = BqError;

    fn pre_visit_query(&mut self, q: &mut Query) -> ControlFlow<BqError> {
        if let Some(with) = &q.with {
            for cte in &with.cte_tables {
                self.ctes.insert(cte.alias.name.value.clone());
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, tf: &mut TableFactor) -> ControlFlow<BqError> {
        match self.table_factor(tf) {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => ControlFlow::Break(e),
        }
    }

    fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<BqError> {
        match self.expr(e) {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => ControlFlow::Break(e),
        }
    }
}

/// The alias the rewrite gives an `UNNEST` the query left without one.
const ANONYMOUS_UNNEST: &str = "__unnest";

fn is_anonymous_unnest(tf: &TableFactor) -> Option<&Expr> {
    match tf {
        TableFactor::UNNEST {
            alias: Some(a),
            array_exprs,
            with_offset: false,
            ..
        } if a.name.value == ANONYMOUS_UNNEST && array_exprs.len() == 1 => array_exprs.first(),
        _ => None,
    }
}

/// The array expressions of the `UNNEST`s in the FROM clauses that have no alias, in the
/// order [`expand_struct_unnests`] meets them (for the engine to learn their types).
pub fn anonymous_unnests(q: &mut Query) -> Vec<Expr> {
    let mut found = Vec::new();
    let _ = q.visit(&mut FactorVisitor(|tf: &mut TableFactor| {
        if let Some(e) = is_anonymous_unnest(tf) {
            found.push(e.clone());
        }
    }));
    found
}

/// BigQuery makes the fields of an unaliased `UNNEST` of an array of STRUCTs its columns:
/// each such `UNNEST` (in [`anonymous_unnests`]' order) whose element is a STRUCT with the
/// `fields` given becomes `(SELECT get_field(v, 'a') AS a, ... FROM UNNEST(..) AS s(v))`.
pub fn expand_struct_unnests(q: &mut Query, fields: &[Option<Vec<String>>]) -> BqResult<()> {
    let template = match parse("SELECT 1 FROM UNNEST([1]) AS __bigq_struct(v)")?.pop() {
        Some(ast::Statement::Query(t)) => t,
        _ => return Err(BqError::internal("UNNEST template")),
    };
    let mut k = 0;
    let _ = q.visit(&mut FactorVisitor(|tf: &mut TableFactor| {
        let Some(array) = is_anonymous_unnest(tf).cloned() else {
            return;
        };
        let names = fields.get(k).cloned().flatten();
        k += 1;
        let Some(names) = names else {
            return;
        };
        let mut sub = template.clone();
        if let ast::SetExpr::Select(select) = sub.body.as_mut() {
            let value =
                Expr::CompoundIdentifier(vec![Ident::new("__bigq_struct"), Ident::new("v")]);
            select.projection = names
                .iter()
                .map(|n| ast::SelectItem::ExprWithAlias {
                    expr: call("get_field", vec![value.clone(), string(n)]),
                    alias: Ident::with_quote('`', n),
                })
                .collect();
            if let Some(TableFactor::UNNEST { array_exprs, .. }) =
                select.from.first_mut().map(|t| &mut t.relation)
            {
                *array_exprs = vec![array];
            }
        }
        *tf = TableFactor::Derived {
            lateral: false,
            subquery: sub,
            alias: Some(TableAlias {
                explicit: true,
                name: Ident::new(format!("__unnest_struct{k}")),
                columns: Vec::new(),
                at: None,
            }),
            sample: None,
        };
    }));
    Ok(())
}

/// Calls a closure on every table factor, before its children.
struct FactorVisitor<F>(F);

impl<F: FnMut(&mut TableFactor)> VisitorMut for FactorVisitor<F> {
    type Break = ();

    fn pre_visit_table_factor(&mut self, tf: &mut TableFactor) -> ControlFlow<()> {
        (self.0)(tf);
        ControlFlow::Continue(())
    }
}
