//! JSON rows to Arrow.
