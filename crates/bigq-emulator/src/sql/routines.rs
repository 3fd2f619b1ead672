//! SQL functions users define (`CREATE TEMP FUNCTION`, `CREATE FUNCTION ds.f`): kept as
//! their parameters, return type and body, and called by writing the body in place of the
//! call, each parameter replaced by its argument (coerced to the parameter's type as
//! BigQuery coerces it, else its error), the whole coerced to the return type. JavaScript and remote functions are refused by name.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex};

use datafusion::sql::sqlparser::ast::{
    self, CreateFunction, CreateFunctionBody, DataType, Expr, FunctionArg, FunctionArgExpr,
    FunctionArguments, FunctionReturnType, ObjectName, VisitMut, VisitorMut,
};

use serde_json::Value;

use crate::error::{BqError, BqResult};

/// A script's or session's temporary functions, by lower-case name.
pub type Routines = Arc<Mutex<HashMap<String, Arc<SqlFunction>>>>;

/// A SQL function: what a call of it stands for.
#[derive(Clone, Debug)]
pub struct SqlFunction {
    /// Its name as written.
    pub name: String,
    /// Its parameters with their types (`None`: `ANY TYPE`).
    pub params: Vec<(String, Option<DataType>)>,
    /// `RETURNS`, if given.
    pub returns: Option<DataType>,
    /// The expression after `AS`.
    pub body: Expr,
    /// Why a call of it is refused (a JavaScript routine, a procedure), if it is.
    pub refused: Option<String>,
}

impl SqlFunction {
    /// The function a `CREATE FUNCTION` statement defines.
    pub fn from_create(cf: &CreateFunction) -> BqResult<SqlFunction> {
        let name = cf.name.to_string();
        if let Some(lang) = &cf.language
            && !lang.value.eq_ignore_ascii_case("sql")
        {
            return Err(BqError::unsupported(format!(
                "functions in {} (function {name}); only SQL functions are",
                lang.value
            )));
        }
        if cf.remote_connection.is_some() {
            return Err(BqError::unsupported(format!("remote function {name}")));
        }
        let body = match &cf.function_body {
            Some(CreateFunctionBody::AsBeforeOptions { body, .. })
            | Some(CreateFunctionBody::AsAfterOptions(body)) => body.clone(),
            _ => {
                return Err(BqError::invalid_query(format!(
                    "Function {name} needs a body: AS (expression)"
                )));
            }
        };
        let mut params = Vec::new();
        for a in cf.args.iter().flatten() {
            let Some(n) = &a.name else {
                return Err(BqError::invalid_query(format!(
                    "Parameters of function {name} must be named"
                )));
            };
            let t = match &a.data_type {
                DataType::AnyType => None,
                t => Some(t.clone()),
            };
            params.push((n.value.clone(), t));
        }
        let returns = match &cf.return_type {
            Some(FunctionReturnType::DataType(t)) => Some(t.clone()),
            Some(other) => {
                return Err(BqError::invalid_query(format!(
                    "Function {name} cannot return {other}"
                )));
            }
            None => None,
        };
        Ok(SqlFunction {
            name,
            params,
            returns,
            body,
            refused: None,
        })
    }

    /// The expression a call with `args` stands for.
    fn expand(&self, args: Vec<Expr>) -> BqResult<Expr> {
        if let Some(why) = &self.refused {
            return Err(BqError::unsupported(why.clone()));
        }
        if args.len() != self.params.len() {
            let sig: Vec<String> = self
                .params
                .iter()
                .map(|(_, t)| t.as_ref().map_or("ANY TYPE".to_string(), |t| t.to_string()))
                .collect();
            return Err(BqError::invalid_query(format!(
                "No matching signature for function {} with {} argument{}. Supported \
                 signature: {}({})",
                self.name,
                args.len(),
                if args.len() == 1 { "" } else { "s" },
                self.name,
                sig.join(", ")
            )));
        }
        let values: HashMap<String, Expr> = self
            .params
            .iter()
            .zip(args)
            .map(|((n, t), a)| {
                let a = match t {
                    Some(t) => self.coerced(a, t, &format!("argument {n}")),
                    None => Expr::Nested(Box::new(a)),
                };
                (n.to_ascii_lowercase(), a)
            })
            .collect();
        let mut body = self.body.clone();
        let _ = body.visit(&mut Substitute(&values));
        Ok(match &self.returns {
            Some(t) => self.coerced(body, t, "the result"),
            None => Expr::Nested(Box::new(body)),
        })
    }

    /// `e` as type `t` where BigQuery coerces it so, else BigQuery's "No matching
    /// signature" when the query is planned (never a CAST that would round or parse it).
    fn coerced(&self, e: Expr, t: &DataType, what: &str) -> Expr {
        let text = |s: &str| Expr::value(ast::Value::SingleQuotedString(s.to_string()));
        crate::sql::ast::call(
            crate::sql::functions::ROUTINE_ARGUMENT,
            vec![
                e,
                cast(Expr::value(ast::Value::Null), t),
                text(&self.name),
                text(what),
            ],
        )
    }
}

fn cast(e: Expr, t: &DataType) -> Expr {
    Expr::Cast {
        kind: ast::CastKind::Cast,
        expr: Box::new(e),
        data_type: t.clone(),
        array: false,
        format: None,
    }
}

/// Parameters replaced by their arguments.
struct Substitute<'a>(&'a HashMap<String, Expr>);

impl VisitorMut for Substitute<'_> {
    type Break = ();

    fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        match e {
            Expr::Identifier(id) => {
                if let Some(v) = self.0.get(&id.value.to_ascii_lowercase()) {
                    *e = v.clone();
                }
            }
            Expr::CompoundIdentifier(ids) => {
                if let Some(v) = self.0.get(&ids[0].value.to_ascii_lowercase()) {
                    *e = Expr::CompoundFieldAccess {
                        root: Box::new(Expr::Nested(Box::new(v.clone()))),
                        access_chain: ids[1..]
                            .iter()
                            .map(|f| ast::AccessExpr::Dot(Expr::Identifier(f.clone())))
                            .collect(),
                    };
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

/// Replaces every call of a SQL function in `node` by what it stands for; `find` knows the
/// functions in scope.
pub fn expand_calls(
    node: &mut impl VisitMut,
    find: &dyn Fn(&ObjectName) -> Option<Arc<SqlFunction>>,
) -> BqResult<()> {
    let mut v = Expand {
        find,
        expanding: Vec::new(),
    };
    match node.visit(&mut v) {
        ControlFlow::Break(e) => Err(e),
        ControlFlow::Continue(()) => Ok(()),
    }
}

struct Expand<'a> {
    find: &'a dyn Fn(&ObjectName) -> Option<Arc<SqlFunction>>,
    /// The functions whose bodies are being expanded, outermost first.
    expanding: Vec<String>,
}

impl VisitorMut for Expand<'_> {
    type Break = BqError;

    fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<BqError> {
        let Expr::Function(f) = e else {
            return ControlFlow::Continue(());
        };
        let Some(def) = (self.find)(&f.name) else {
            return ControlFlow::Continue(());
        };
        let args = match &f.args {
            FunctionArguments::List(list) if list.duplicate_treatment.is_none() => list
                .args
                .iter()
                .map(|a| match a {
                    FunctionArg::Unnamed(FunctionArgExpr::Expr(x)) => Ok(x.clone()),
                    other => Err(BqError::invalid_query(format!(
                        "Invalid argument {other} of function {}",
                        def.name
                    ))),
                })
                .collect::<BqResult<Vec<_>>>(),
            FunctionArguments::None => Ok(Vec::new()),
            other => Err(BqError::invalid_query(format!(
                "Invalid arguments {other} of function {}",
                def.name
            ))),
        };
        // A body is read when its function is made, before the function exists: a call of
        // itself (or of a function calling it) names no function there.
        let key = def.name.to_ascii_lowercase();
        if self.expanding.contains(&key) {
            return ControlFlow::Break(BqError::invalid_query(format!(
                "Function not found: {}",
                def.name
            )));
        }
        let mut expanded = match args.and_then(|args| def.expand(args)) {
            Ok(x) => x,
            Err(err) => return ControlFlow::Break(err),
        };
        self.expanding.push(key);
        let inner = expanded.visit(self);
        self.expanding.pop();
        if let ControlFlow::Break(err) = inner {
            return ControlFlow::Break(err);
        }
        *e = expanded;
        ControlFlow::Continue(())
    }
}

/// A routine's REST resource as the function it defines; a routine the emulator cannot
/// call (JavaScript, a procedure, a table function) is kept with the reason it is refused.
pub fn from_resource(id: &str, r: &serde_json::Map<String, Value>) -> SqlFunction {
    let refused = |why: String| SqlFunction {
        name: id.to_string(),
        params: Vec::new(),
        returns: None,
        body: Expr::value(ast::Value::Null),
        refused: Some(why),
    };
    let text = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("");
    let language = match text("language") {
        "" => "SQL",
        l => l,
    };
    if language != "SQL" {
        return refused(format!("calling {language} routine {id}"));
    }
    match text("routineType") {
        "" | "SCALAR_FUNCTION" => {}
        other => return refused(format!("calling {other} routine {id}")),
    }
    let built = (|| -> BqResult<SqlFunction> {
        let mut params = Vec::new();
        for a in r
            .get("arguments")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = a
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let t = if a.get("argumentKind").and_then(Value::as_str) == Some("ANY_TYPE") {
                None
            } else {
                let t = a.get("dataType").ok_or_else(|| {
                    BqError::invalid(format!("Argument {name} of routine {id} has no dataType"))
                })?;
                Some(parse_type(&type_text(t)?)?)
            };
            params.push((name, t));
        }
        let returns = match r.get("returnType") {
            Some(t) if !t.is_null() => Some(parse_type(&type_text(t)?)?),
            _ => None,
        };
        let body = parse_body(text("definitionBody"))?;
        Ok(SqlFunction {
            name: id.to_string(),
            params,
            returns,
            body,
            refused: None,
        })
    })();
    built.unwrap_or_else(|e| refused(format!("routine {id}: {}", e.message)))
}

/// A `CREATE FUNCTION` statement's routine resource (without the server's fields).
pub fn resource_of(
    cf: &CreateFunction,
    reference: Value,
) -> BqResult<serde_json::Map<String, Value>> {
    let f = SqlFunction::from_create(cf)?;
    let mut args = Vec::new();
    for (name, t) in &f.params {
        args.push(match t {
            Some(t) => serde_json::json!({"name": name, "dataType": standard_type(t)?}),
            None => serde_json::json!({"name": name, "argumentKind": "ANY_TYPE"}),
        });
    }
    let body = match &f.body {
        Expr::Nested(inner) => inner.to_string(),
        other => other.to_string(),
    };
    let mut r = serde_json::Map::new();
    r.insert("routineReference".into(), reference);
    r.insert("routineType".into(), "SCALAR_FUNCTION".into());
    r.insert("language".into(), "SQL".into());
    if !args.is_empty() {
        r.insert("arguments".into(), Value::Array(args));
    }
    if let Some(t) = &f.returns {
        r.insert("returnType".into(), standard_type(t)?);
    }
    r.insert("definitionBody".into(), body.into());
    for o in cf.options.iter().flatten() {
        if let ast::SqlOption::KeyValue { key, value } = o
            && key.value.eq_ignore_ascii_case("description")
            && let Expr::Value(v) = value
            && let ast::Value::SingleQuotedString(s) | ast::Value::DoubleQuotedString(s) = &v.value
        {
            r.insert("description".into(), s.clone().into());
        }
    }
    Ok(r)
}

/// A `StandardSqlDataType` (`{"typeKind": "ARRAY", "arrayElementType": ..}`) as GoogleSQL
/// type text.
pub fn type_text(t: &Value) -> BqResult<String> {
    let kind = t.get("typeKind").and_then(Value::as_str).unwrap_or("");
    Ok(match kind {
        "ARRAY" => format!(
            "ARRAY<{}>",
            type_text(t.get("arrayElementType").unwrap_or(&Value::Null))?
        ),
        "RANGE" => format!(
            "RANGE<{}>",
            type_text(t.get("rangeElementType").unwrap_or(&Value::Null))?
        ),
        "STRUCT" => {
            let mut fields = Vec::new();
            for f in t
                .pointer("/structType/fields")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let name = f.get("name").and_then(Value::as_str).unwrap_or("");
                let inner = type_text(f.get("type").unwrap_or(&Value::Null))?;
                fields.push(if name.is_empty() {
                    inner
                } else {
                    format!("`{name}` {inner}")
                });
            }
            format!("STRUCT<{}>", fields.join(", "))
        }
        "" | "TYPE_KIND_UNSPECIFIED" => {
            return Err(BqError::invalid("A data type needs its typeKind"));
        }
        k => k.to_string(),
    })
}

/// GoogleSQL type text as the sqlparser type.
fn parse_type(text: &str) -> BqResult<DataType> {
    match crate::sql::parse::parse_expr(&format!("CAST(NULL AS {text})"))? {
        Expr::Cast { data_type, .. } => Ok(data_type),
        _ => Err(BqError::invalid(format!("Not a type: {text}"))),
    }
}

/// A routine's `definitionBody`, an expression.
fn parse_body(text: &str) -> BqResult<Expr> {
    crate::sql::parse::parse_expr(&format!("({text})"))
}

/// A GoogleSQL type as a `StandardSqlDataType`.
fn standard_type(t: &DataType) -> BqResult<Value> {
    Ok(standard_of_field(&crate::sql::types::bq_field_of_sql(
        "", t,
    )?))
}

/// A BigQuery field's type as a `StandardSqlDataType` (REPEATED as an ARRAY of it).
fn standard_of_field(f: &bigq_codec::schema::TableFieldSchema) -> Value {
    use bigq_codec::schema::{FieldMode, FieldType};
    let mut out = serde_json::json!({ "typeKind": f.field_type.standard_sql_name() });
    match &f.field_type {
        FieldType::Record => {
            let fields: Vec<Value> = f
                .fields
                .iter()
                .map(|sub| serde_json::json!({"name": sub.name, "type": standard_of_field(sub)}))
                .collect();
            out["structType"] = serde_json::json!({ "fields": fields });
        }
        FieldType::Range => {
            if let Some(e) = &f.range_element_type {
                out["rangeElementType"] =
                    serde_json::json!({ "typeKind": e.element_type.standard_sql_name() });
            }
        }
        _ => {}
    }
    if f.mode() == FieldMode::Repeated {
        return serde_json::json!({ "typeKind": "ARRAY", "arrayElementType": out });
    }
    out
}
