//! GoogleSQL on DataFusion: parsing and rewriting, types, parameters, execution.

pub mod engine;
mod generate;
pub mod geo;
pub mod interval;
pub mod json;
pub mod params;
pub mod range;
pub mod rewrite;
pub mod types;
mod udf;
pub mod values;
