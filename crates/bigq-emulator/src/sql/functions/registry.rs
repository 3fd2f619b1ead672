//! The registry's entries: the families of BigQuery's function reference, and how each
//! function is made (a scalar UDF, or a rewrite of its calls). Each family's file lists its
//! functions with these; `functions/mod.rs` gathers the lists.

use std::fmt;

use datafusion::logical_expr::ScalarUDF;
use datafusion::sql::sqlparser::ast::{self, Expr};

use crate::error::BqResult;

/// The families of BigQuery's function reference that the emulator has functions of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Family {
    Aggregate,
    Approximate,
    Array,
    Bit,
    Conditional,
    Conversion,
    Date,
    Datetime,
    Geography,
    Hash,
    Interval,
    Json,
    Math,
    Navigation,
    Net,
    Numbering,
    Range,
    Statistical,
    String,
    Time,
    TimeSeries,
    Timestamp,
    Utility,
}

/// A rewrite of a call: given the call's upper-case name and the call, the SQL DataFusion runs
/// instead, or `None` to leave the call as written.
pub(crate) type Rewrite = fn(&str, &ast::Function) -> BqResult<Option<Expr>>;

/// How a function is made.
#[derive(Clone, Copy)]
pub(crate) enum Implementation {
    /// A scalar UDF in the session.
    Udf(fn() -> ScalarUDF),
    /// The call rewritten before planning (given the call's upper-case name).
    Rewrite(Rewrite),
}

/// One function of the registry.
#[derive(Clone, Copy)]
pub(crate) struct Function {
    pub(crate) family: Family,
    /// Its signatures, `NAME(ARG, ...) -> RESULT` in BigQuery's type names, `[, ARG]` an
    /// argument that may be left out. The name is the one a query calls it by: BigQuery's, in
    /// upper case, or an internal lower-case name that only a rewrite calls.
    pub(crate) signatures: &'static [&'static str],
    pub(crate) implementation: Implementation,
}

impl Function {
    /// The name its signatures give it.
    pub(crate) fn name(&self) -> &'static str {
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

impl Function {
    /// A function made as a scalar UDF.
    pub(crate) const fn udf(
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

    /// A function made by rewriting its calls.
    pub(crate) const fn rewrite(
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
}
