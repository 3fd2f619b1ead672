//! One module per subcommand.

pub mod admin;
pub mod emulator;
pub mod query;
pub mod read;
pub mod write;
