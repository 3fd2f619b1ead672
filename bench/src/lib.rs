//! Workloads shared by bigq's benchmarks.

pub mod lineitem;
