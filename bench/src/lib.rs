//! Workloads shared by bigq's benchmarks.

pub mod lineitem;

pub fn x() {}
