//! GoogleSQL on DataFusion: parsing and rewriting, types, parameters, execution.

pub mod engine;
pub mod geo;
pub mod interval;
pub mod params;
pub mod rewrite;
pub mod types;
pub mod values;
