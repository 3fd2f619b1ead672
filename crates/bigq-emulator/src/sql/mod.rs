//! GoogleSQL on DataFusion: text parsed in BigQuery's dialect (`parse`, with the procedural
//! language's blocks in `script`), names resolved
//! (`names`), the AST rewritten into SQL DataFusion plans (`rewrite`, with `ast` to build
//! nodes), BigQuery's functions DataFusion lacks (`functions`), statements run on the
//! catalog (`exec`); BigQuery's types and Arrow's (`types`), query parameters (`params`) and
//! JSON values as Arrow scalars (`values`).

pub(crate) mod ast;
pub(crate) mod dialect;
pub(crate) mod escapes;
pub(crate) mod exec;
pub(crate) mod functions;
pub(crate) mod names;
pub(crate) mod params;
pub(crate) mod parse;
pub(crate) mod rewrite;
pub(crate) mod routines;
pub(crate) mod script;
pub(crate) mod types;
pub(crate) mod values;
