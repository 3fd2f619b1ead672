//! The error the row deserializer works with inside: a boxed [`CodecError`], so that the
//! `Result` of every cell stays one word wide on the hot path.

use std::fmt;

use crate::{CodecError, CodecErrorKind};

/// A [`CodecError`] of kind `Deserialize`, boxed.
pub(crate) struct DeError(Box<CodecError>);

impl DeError {
    #[cold]
    pub(crate) fn new(message: impl Into<String>) -> Self {
        DeError(Box::new(CodecError::new(
            CodecErrorKind::Deserialize,
            message,
        )))
    }

    /// NULL where the target has no `Option`.
    #[cold]
    pub(crate) fn null() -> Self {
        Self::new("NULL into a non-Option field (use Option<_> for a nullable column)")
    }

    /// A column whose Arrow type this decoder does not read.
    #[cold]
    pub(crate) fn unsupported(data_type: &arrow_schema::DataType) -> Self {
        Self::new(format!("unsupported Arrow type {data_type}"))
    }

    /// Prefixes the column path with the name of the column the error came through.
    #[cold]
    pub(crate) fn in_column(self, name: &str) -> Self {
        DeError(Box::new(self.0.with_parent_column(name)))
    }

    /// Records the offending value, unless a deeper level already did.
    #[cold]
    pub(crate) fn with_value(self, value: impl AsRef<[u8]>) -> Self {
        if self.0.value().is_some() {
            return self;
        }
        DeError(Box::new(self.0.with_value(value)))
    }

    pub(crate) fn has_value(&self) -> bool {
        self.0.value().is_some()
    }

    /// The error, numbered with its row over the whole result.
    #[cold]
    pub(crate) fn at_row(self, row: u64) -> CodecError {
        self.0.with_row(row)
    }
}

impl fmt::Display for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(&self.0, f)
    }
}

impl fmt::Debug for DeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl std::error::Error for DeError {}

impl serde::de::Error for DeError {
    #[cold]
    fn custom<T: fmt::Display>(msg: T) -> Self {
        DeError::new(msg.to_string())
    }

    #[cold]
    fn missing_field(field: &'static str) -> Self {
        let e = CodecError::new(
            CodecErrorKind::Deserialize,
            format!("no column for field `{field}`"),
        );
        DeError(Box::new(e.with_column(field)))
    }
}
