//! bigq
