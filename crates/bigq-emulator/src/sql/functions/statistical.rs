//! Statistical aggregate functions DataFusion spells otherwise: `VARIANCE`, BigQuery's alias
//! of `VAR_SAMP`. `COVAR_POP`/`SAMP`, `STDDEV`/`_POP`/`_SAMP` and `VAR_POP`/`SAMP` are
//! DataFusion's own, with BigQuery's NULL for too few rows; `CORR` is BigQuery's
//! ([`super::corr`]).

use datafusion::sql::sqlparser::ast::{self, Expr, Ident, ObjectName, ObjectNamePart};

use super::registry::{Family, Function};
use crate::error::BqResult;

/// `VARIANCE(x)` as `var_samp(x)`, keeping `DISTINCT`, `OVER` and the rest.
pub(crate) fn variance(_: &str, f: &ast::Function) -> BqResult<Option<Expr>> {
    let mut g = f.clone();
    g.name = ObjectName(vec![ObjectNamePart::Identifier(Ident::new("var_samp"))]);
    Ok(Some(Expr::Function(g)))
}

/// The functions this file makes, for the registry.
#[rustfmt::skip]
pub(super) const FUNCTIONS: &[Function] = &[
    Function::rewrite(Family::Statistical, &["VARIANCE(FLOAT64) -> FLOAT64"], variance),
];
