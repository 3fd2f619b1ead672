//! The walk over one query: the names of its CTEs collected, each table factor and (after
//! its children) each expression handed to the rewrite for what it is.

use std::collections::HashSet;
use std::ops::ControlFlow;

use datafusion::sql::sqlparser::ast::{
    self, BinaryOperator, Expr, Query, TableFactor, UnaryOperator, Value, VisitMut, VisitorMut,
};

use super::{
    grouping, literals, operators, pivot, placeholders, recursive, result_names, set_operations,
    subqueries, tables, unnest, windows,
};
use crate::catalog::Catalog;
use crate::error::{BqError, BqResult};
use crate::sql::functions;
use crate::sql::names::NameContext;
use crate::sql::params::Params;

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
    result_names::name_result_columns(q, cx);
    rewrite(q, catalog, cx, params)
}

/// Rewrites a data manipulation statement in place, as [`rewrite_query`] rewrites a query:
/// the tables it names, its expressions and the queries inside it.
pub fn rewrite_statement(
    stmt: &mut ast::Statement,
    catalog: &Catalog,
    cx: &NameContext,
    params: &Params,
) -> BqResult<()> {
    rewrite(stmt, catalog, cx, params)
}

fn rewrite(
    node: &mut impl VisitMut,
    catalog: &Catalog,
    cx: &NameContext,
    params: &Params,
) -> BqResult<()> {
    let temp = cx.routines.lock().unwrap_or_else(|e| e.into_inner());
    if !temp.is_empty() || catalog.read().has_routines() {
        let find = |name: &ast::ObjectName| {
            let parts = crate::sql::names::name_parts(name).ok()?;
            let (p, d, r) = match parts.as_slice() {
                [one] => return temp.get(&one.to_ascii_lowercase()).cloned(),
                [d, r] => (cx.project.as_str(), d, r),
                [p, d, r] => (p.as_str(), d, r),
                _ => return None,
            };
            let read = catalog.read();
            let ds = read.dataset(p, d).ok()?;
            let (id, resource) = ds
                .routines
                .get_key_value(r.as_str())
                .or_else(|| ds.routines.iter().find(|(k, _)| k.eq_ignore_ascii_case(r)))?;
            Some(std::sync::Arc::new(crate::sql::routines::from_resource(
                &format!("{p}.{d}.{id}"),
                resource,
            )))
        };
        crate::sql::routines::expand_calls(node, &find)?;
    }
    drop(temp);
    let mut r = Rewriter {
        catalog,
        cx,
        params,
        ctes: HashSet::new(),
        positional: 0,
        interval_args: HashSet::new(),
    };
    match node.visit(&mut r) {
        ControlFlow::Continue(()) => Ok(()),
        ControlFlow::Break(e) => Err(e),
    }
}

struct Rewriter<'a> {
    catalog: &'a Catalog,
    cx: &'a NameContext,
    params: &'a Params,
    ctes: HashSet<String>,
    /// The `?` parameters met so far.
    positional: usize,
    /// Where the `INTERVAL n part` arguments of calls are (by address, while the walk is in
    /// the call): the call's rewrite reads them as written (`DATE_ADD`'s part, for one).
    interval_args: HashSet<usize>,
}

impl Rewriter<'_> {
    /// A parameter's value as an expression: a typed literal of its type (JSON, GEOGRAPHY,
    /// RANGE, INTERVAL), rewritten as the query's own literals are, or its value.
    fn parameter(&mut self, p: &crate::sql::params::Param) -> BqResult<Expr> {
        match placeholders::typed_literal(p)? {
            Some(mut e) => match e.visit(self) {
                ControlFlow::Continue(()) => Ok(e),
                ControlFlow::Break(err) => Err(err),
            },
            None => crate::sql::params::to_sql_expr(&p.value),
        }
    }

    fn table_factor(&mut self, tf: &mut TableFactor) -> BqResult<()> {
        match tf {
            TableFactor::Table { .. } => tables::table(tf, self.catalog, self.cx, &self.ctes),
            TableFactor::UNNEST { .. } => unnest::unnest(tf),
            TableFactor::Unpivot { .. } => pivot::unpivot(tf),
            _ => Ok(()),
        }
    }

    fn expr(&mut self, e: &mut Expr) -> BqResult<()> {
        match e {
            Expr::Interval(iv) if iv.last_field.is_some() => {
                *e = literals::range_interval(iv)?;
            }
            Expr::Interval(iv) => {
                literals::check_interval_count(iv)?;
                let argument = self.interval_args.contains(&(iv as *const _ as usize));
                if !argument && let Some(planned) = functions::interval_of_count(iv) {
                    *e = planned;
                }
            }
            Expr::Cast {
                format: Some(_), ..
            } => {
                if let Some(call) = functions::rewrite_cast_format(e)? {
                    *e = call;
                }
            }
            Expr::Cast {
                data_type: ast::DataType::JSON,
                expr,
                ..
            } => *e = functions::json_cast(std::mem::replace(expr, Expr::value(Value::Null))),
            Expr::Cast {
                kind,
                data_type: ast::DataType::Custom(name, _),
                expr,
                ..
            } if crate::sql::types::sql_type_element(&name.to_string()).is_some() => {
                let element = crate::sql::types::sql_type_element(&name.to_string());
                let inner = std::mem::replace(expr.as_mut(), Expr::value(Value::Null));
                *e = functions::range::cast_to_range(kind, element.unwrap_or("DATE"), inner);
            }
            Expr::Cast {
                data_type: ast::DataType::BigNumeric(info) | ast::DataType::BigDecimal(info),
                ..
            } if *info != ast::ExactNumberInfo::None => literals::parameterized_bignumeric(e),
            Expr::Cast {
                kind,
                data_type,
                expr,
                ..
            } => {
                literals::typed_struct_array(expr, data_type);
                literals::cast_type(kind, data_type)
            }
            Expr::TypedString(ts) if ts.data_type == ast::DataType::JSON => {
                *e = functions::json_literal(Expr::Value(ts.value.clone()));
            }
            Expr::TypedString(ts) => {
                if let Some(lit) = functions::rewrite_typed_literal(ts) {
                    *e = lit;
                } else if let Some(cast) = literals::typed_string(ts) {
                    *e = cast;
                }
            }
            Expr::BinaryOp {
                left,
                op: op @ (BinaryOperator::Plus | BinaryOperator::Minus),
                right,
            } if matches!(right.as_ref(), Expr::Interval(_))
                || functions::is_interval_of_count(right) =>
            {
                *e = operators::interval_arithmetic(left, op, right);
            }
            Expr::BinaryOp {
                op: BinaryOperator::Divide,
                left,
                right,
            } => *e = operators::division(left, right),
            Expr::BinaryOp { left, op, right } => {
                if let Some(call) = operators::bitwise(left, op, right) {
                    *e = call;
                }
            }
            Expr::UnaryOp {
                op: UnaryOperator::BitwiseNot,
                expr,
            } => *e = operators::bitwise_not(expr),
            Expr::Value(v) => match &v.value {
                Value::Placeholder(p) if p == "?" => {
                    let i = self.positional;
                    self.positional += 1;
                    *e = self.parameter(placeholders::positional(self.params, i)?)?;
                }
                Value::Placeholder(p) if p.starts_with('@') => {
                    *e = self.parameter(placeholders::named_param(self.params, &p[1..])?)?;
                }
                other => {
                    if let Some(literal) = literals::value(other) {
                        *e = literal;
                    }
                }
            },
            Expr::Struct { values, fields } if !fields.is_empty() => {
                literals::typed_struct(values, fields)?;
            }
            Expr::Struct { values, .. } => literals::untyped_struct(values),
            Expr::Array(arr) => literals::struct_array_names(arr),
            Expr::InUnnest {
                expr,
                array_expr,
                negated,
            } => *e = operators::in_unnest(expr, array_expr, *negated),
            Expr::CompoundFieldAccess { root, access_chain } => {
                // `(expr).field`: the field by its name, as DataFusion plans a dot access.
                for a in access_chain.iter_mut() {
                    if let ast::AccessExpr::Dot(Expr::Identifier(id)) = a {
                        *a = ast::AccessExpr::Dot(crate::sql::ast::string(&id.value));
                    }
                }
                if let Some(checked) = operators::subscripts(root, access_chain) {
                    *e = checked;
                }
            }
            Expr::Identifier(id)
                if id.quote_style.is_none()
                    && !id.value.starts_with('@')
                    && placeholders::variable(self.cx, &id.value).is_some() =>
            {
                if let Some(v) = placeholders::variable(self.cx, &id.value) {
                    *e = v;
                }
            }
            Expr::Identifier(id)
                if id.quote_style.is_none()
                    && id.value.eq_ignore_ascii_case("CURRENT_DATETIME") =>
            {
                if let Some(call) = functions::rewrite_current_datetime()? {
                    *e = call;
                }
            }
            Expr::Identifier(id) if id.quote_style.is_none() && id.value.starts_with("@@") => {
                *e = placeholders::system(self.cx, &id.value)?;
            }
            Expr::CompoundIdentifier(ids)
                if ids
                    .first()
                    .is_some_and(|i| i.quote_style.is_none() && i.value.starts_with("@@")) =>
            {
                let name: Vec<&str> = ids.iter().map(|i| i.value.as_str()).collect();
                *e = placeholders::system(self.cx, &name.join("."))?;
            }
            Expr::CompoundIdentifier(ids)
                if ids.len() > 1
                    && ids[0].quote_style.is_none()
                    && !ids[0].value.starts_with('@') =>
            {
                if let Some(v) = placeholders::struct_variable(self.cx, &ids[0].value) {
                    *e = Expr::CompoundFieldAccess {
                        root: Box::new(Expr::Nested(Box::new(v))),
                        access_chain: ids[1..]
                            .iter()
                            .map(|f| ast::AccessExpr::Dot(crate::sql::ast::string(&f.value)))
                            .collect(),
                    };
                }
            }
            Expr::Identifier(id) if id.quote_style.is_none() && id.value.starts_with('@') => {
                *e = self.parameter(placeholders::named_param(self.params, &id.value[1..])?)?;
            }
            Expr::CompoundIdentifier(ids)
                if ids
                    .first()
                    .is_some_and(|i| i.quote_style.is_none() && i.value.starts_with('@')) =>
            {
                let param = placeholders::named_param(self.params, &ids[0].value[1..])?;
                *e = match placeholders::typed_literal(param)? {
                    // `@j.a` of a JSON parameter: the field access of its literal.
                    Some(root) => {
                        let mut access = Expr::CompoundFieldAccess {
                            root: Box::new(Expr::Nested(Box::new(root))),
                            access_chain: ids[1..]
                                .iter()
                                .map(|f| ast::AccessExpr::Dot(Expr::Identifier(f.clone())))
                                .collect(),
                        };
                        if let ControlFlow::Break(err) = access.visit(self) {
                            return Err(err);
                        }
                        access
                    }
                    None => placeholders::named_path(self.params, ids)?,
                };
            }
            Expr::Extract { .. } => {
                if let Some(call) = functions::rewrite_extract(e)? {
                    *e = call;
                }
            }
            Expr::Substring { .. } => *e = functions::rewrite_substring(e)?,
            Expr::Case {
                operand: None,
                conditions,
                ..
            } => functions::check_case_conditions(conditions),
            Expr::Function(f) => {
                if let Some(call) = functions::rewrite_call(f)? {
                    *e = call;
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
        // A CTE of a subquery may shadow one of an enclosing query (BigQuery reads the
        // nearer); DataFusion refuses the name twice, so the nearer one is renamed, with the
        // tables of its query that name it.
        let mut renamed = Vec::new();
        if let Some(with) = &mut q.with {
            for cte in &mut with.cte_tables {
                let name = cte.alias.name.value.clone();
                if self.ctes.contains(&name) {
                    let fresh = format!("__bigq_cte{}_{name}", self.ctes.len());
                    cte.alias.name = ast::Ident::new(&fresh);
                    self.ctes.insert(fresh.clone());
                    renamed.push((name, fresh));
                } else {
                    self.ctes.insert(name);
                }
            }
        }
        if !renamed.is_empty() {
            let _ = q.visit(&mut RenameTables(&renamed));
        }
        if let Err(e) = recursive::check(q) {
            return ControlFlow::Break(e);
        }
        if let Err(e) = grouping::grouping_sets(q) {
            return ControlFlow::Break(e);
        }
        literals::tuple_select_items(q);
        if let Err(e) = windows::resolve(q) {
            return ControlFlow::Break(e);
        }
        unnest::correlated_paths(q);
        if let Err(e) = set_operations::check(&q.body) {
            return ControlFlow::Break(e);
        }
        match subqueries::outside_filters(q) {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => ControlFlow::Break(e),
        }
    }

    fn pre_visit_table_factor(&mut self, tf: &mut TableFactor) -> ControlFlow<BqError> {
        match self.table_factor(tf) {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => ControlFlow::Break(e),
        }
    }

    fn pre_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<BqError> {
        // `INTERVAL n part` is read as written by the functions that take it as syntax:
        // the `_ADD` and `_SUB` of each date and time type, and GENERATE_*_ARRAY's step.
        if let Expr::Function(f) = e
            && let ast::FunctionArguments::List(list) = &f.args
            && f.name.0.last().is_some_and(|p| {
                let n = p.to_string().to_ascii_uppercase();
                n.ends_with("_ADD") || n.ends_with("_SUB") || n.starts_with("GENERATE_")
            })
        {
            for a in &list.args {
                if let ast::FunctionArg::Unnamed(ast::FunctionArgExpr::Expr(Expr::Interval(iv))) = a
                {
                    self.interval_args.insert(iv as *const _ as usize);
                }
            }
        }
        let subquery = match e {
            Expr::Subquery(q) | Expr::Exists { subquery: q, .. } => Some(q),
            Expr::InSubquery { subquery: q, .. } => Some(q),
            Expr::Function(f) => match &mut f.args {
                ast::FunctionArguments::Subquery(q) => Some(q),
                _ => None,
            },
            _ => None,
        };
        match subquery.map(|q| literals::select_as_struct(q)) {
            Some(Err(e)) => ControlFlow::Break(e),
            _ => ControlFlow::Continue(()),
        }
    }

    fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<BqError> {
        match self.expr(e) {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => ControlFlow::Break(e),
        }
    }
}

/// Points the one-part table names `from` → `to` of a query at the renamed CTE, keeping
/// the name written as the table's alias.
struct RenameTables<'a>(&'a [(String, String)]);

impl VisitorMut for RenameTables<'_> {
    type Break = ();

    fn pre_visit_table_factor(&mut self, tf: &mut TableFactor) -> ControlFlow<()> {
        if let TableFactor::Table { name, alias, .. } = tf
            && let [ast::ObjectNamePart::Identifier(id)] = name.0.as_slice()
            && let Some((from, to)) = self.0.iter().find(|(from, _)| *from == id.value)
        {
            *name = ast::ObjectName::from(vec![ast::Ident::new(to)]);
            if alias.is_none() {
                *alias = Some(ast::TableAlias {
                    explicit: true,
                    name: ast::Ident::new(from),
                    columns: Vec::new(),
                    at: None,
                });
            }
        }
        ControlFlow::Continue(())
    }
}
