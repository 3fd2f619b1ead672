//! Fault hooks: tests arm a failure and the services inject it where a real network or a
//! real BigQuery would fail, so clients' resume and retry paths can be exercised. Armed
//! in-process through [`Faults`], or by clients in any language through the REST port's
//! `/emulator/v1/faults` endpoint and the binary's `--faults JSON` ([`FaultSpec`]).

mod armed;
mod wire;

pub use armed::{FaultError, FaultSpec, Faults};
pub(crate) use wire::{admin_router, grpc_drops, grpc_fault, rest_layer};
