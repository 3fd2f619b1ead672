//! Runs GoogleSQL: the [`Engine`] (a DataFusion session over the catalog) plans and runs
//! queries; scripts run their statements in order, dispatching each by kind to queries,
//! data definition (`ddl`) and data manipulation (`dml`) on the catalog; `destination`
//! stores a query's result in its destination table.

mod cost;
mod ddl;
mod destination;
mod dml;
mod engine;
mod output;
mod script;
mod tags;

pub(crate) use self::cost::Cost;
pub(crate) use self::engine::Engine;
pub(crate) use self::output::{QueryOutput, QueryRequest, result_table};
