//! Arrow to serde.
