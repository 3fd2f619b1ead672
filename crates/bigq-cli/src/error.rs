//! The one error a command returns: a message for stderr and an exit code.

use std::fmt;

/// Why a command failed, as the user reads it.
#[derive(Debug)]
pub struct Failure {
    message: String,
    /// A closed stdout (`bigq query .. | head`): stop quietly, exit 0.
    quiet: bool,
}

/// The result of a command.
pub type Result<T, E = Failure> = std::result::Result<T, E>;

impl Failure {
    /// A failure with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Failure {
            message: message.into(),
            quiet: false,
        }
    }

    /// Whether the failure is a closed pipe, not worth a message.
    pub fn is_quiet(&self) -> bool {
        self.quiet
    }

    fn io(e: &std::io::Error, context: Option<&str>) -> Self {
        let mut f = match context {
            Some(c) => Failure::new(format!("{c}: {e}")),
            None => Failure::new(e.to_string()),
        };
        f.quiet = e.kind() == std::io::ErrorKind::BrokenPipe;
        f
    }

    /// An I/O error on `path`.
    pub fn file(path: &std::path::Path, e: std::io::Error) -> Self {
        Failure::io(&e, Some(&path.display().to_string()))
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl From<bigq::Error> for Failure {
    fn from(e: bigq::Error) -> Self {
        Failure::new(e.to_string())
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Failure::io(&e, None)
    }
}

impl From<arrow_schema::ArrowError> for Failure {
    fn from(e: arrow_schema::ArrowError) -> Self {
        match e {
            arrow_schema::ArrowError::IoError(_, io) => Failure::io(&io, None),
            other => Failure::new(other.to_string()),
        }
    }
}

impl From<parquet::errors::ParquetError> for Failure {
    fn from(e: parquet::errors::ParquetError) -> Self {
        Failure::new(format!("parquet: {e}"))
    }
}
