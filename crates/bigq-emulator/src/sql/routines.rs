//! SQL functions users define (`CREATE TEMP FUNCTION`, `CREATE FUNCTION ds.f`): kept as
//! their parameters, return type and body, and called by writing the body in place of the
//! call, each parameter replaced by its argument (cast to the parameter's type), the whole
//! cast to the return type. JavaScript and remote functions are refused by name.

use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex};

use datafusion::sql::sqlparser::ast::{
    self, CreateFunction, CreateFunctionBody, DataType, Expr, FunctionArg, FunctionArgExpr,
    FunctionArguments, FunctionReturnType, ObjectName, VisitMut, VisitorMut,
};

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
        })
    }

    /// The expression a call with `args` stands for.
    fn expand(&self, args: Vec<Expr>) -> BqResult<Expr> {
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
                    Some(t) => cast(a, t),
                    None => Expr::Nested(Box::new(a)),
                };
                (n.to_ascii_lowercase(), a)
            })
            .collect();
        let mut body = self.body.clone();
        let _ = body.visit(&mut Substitute(&values));
        Ok(match &self.returns {
            Some(t) => cast(body, t),
            None => Expr::Nested(Box::new(body)),
        })
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
        let expanded = args.and_then(|args| def.expand(args));
        let mut expanded = match expanded {
            Ok(x) => x,
            Err(err) => return ControlFlow::Break(err),
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
