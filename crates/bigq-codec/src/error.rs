//! The codec's error type.

use std::fmt;

/// What went wrong in a codec.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum CodecErrorKind {
    /// The bytes are not well-formed JSON, or the body is truncated.
    Syntax,
    /// A value does not parse as its column's type, or is out of range.
    Value,
    /// The schema is invalid or names a type this version does not know.
    Schema,
    /// A typed row does not match the result (missing column, NULL into a non-`Option`,
    /// wrong type).
    Deserialize,
    /// A row could not be encoded.
    Serialize,
    /// Arrow IPC bytes are malformed or truncated, or a batch cannot be encoded as IPC.
    Ipc,
}

/// An error from a codec, naming the column, row and value where they are known.
#[derive(Clone, PartialEq, Eq)]
pub struct CodecError {
    kind: CodecErrorKind,
    message: String,
    column: Option<String>,
    row: Option<u64>,
    value: Option<String>,
    offset: Option<u64>,
}

impl CodecError {
    /// A new error of `kind` with a message.
    pub fn new(kind: CodecErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            column: None,
            row: None,
            value: None,
            offset: None,
        }
    }

    pub(crate) fn syntax(message: impl Into<String>) -> Self {
        Self::new(CodecErrorKind::Syntax, message)
    }

    pub(crate) fn schema(message: impl Into<String>) -> Self {
        Self::new(CodecErrorKind::Schema, message)
    }

    /// Sets the column (a dotted path for nested fields), unless one is already set.
    pub fn with_column(mut self, column: impl Into<String>) -> Self {
        if self.column.is_none() {
            self.column = Some(column.into());
        }
        self
    }

    /// Prefixes the column path with a parent field name.
    pub fn with_parent_column(mut self, parent: &str) -> Self {
        self.column = Some(match self.column.take() {
            Some(c) => format!("{parent}.{c}"),
            None => parent.to_string(),
        });
        self
    }

    /// Sets the row index (0-based, counted over the whole result), unless one is set.
    pub fn with_row(mut self, row: u64) -> Self {
        if self.row.is_none() {
            self.row = Some(row);
        }
        self
    }

    /// Adds to the row index (used when a batch's rows are counted from 0).
    pub fn offset_row(mut self, by: u64) -> Self {
        if let Some(r) = self.row.as_mut() {
            *r += by;
        }
        self
    }

    /// Sets the offending value (cut to 64 bytes).
    pub fn with_value(mut self, value: impl AsRef<[u8]>) -> Self {
        let v = value.as_ref();
        let cut = v.get(..64).unwrap_or(v);
        let mut s = String::from_utf8_lossy(cut).into_owned();
        if v.len() > 64 {
            s.push('…');
        }
        self.value = Some(s);
        self
    }

    /// Sets the byte offset in the input where the error was found.
    pub fn with_offset(mut self, offset: u64) -> Self {
        if self.offset.is_none() {
            self.offset = Some(offset);
        }
        self
    }

    /// Moves the byte offset forward by `by` (an error found in a later part of the input).
    pub(crate) fn shift_offset(mut self, by: u64) -> Self {
        if let Some(o) = self.offset.as_mut() {
            *o += by;
        }
        self
    }

    /// The kind of error.
    pub fn kind(&self) -> CodecErrorKind {
        self.kind
    }

    /// The message, without the column, row and value.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The column the error is in (dotted path for nested fields).
    pub fn column(&self) -> Option<&str> {
        self.column.as_deref()
    }

    /// The 0-based row the error is in.
    pub fn row(&self) -> Option<u64> {
        self.row
    }

    /// The offending value, as text (at most 64 bytes of it).
    pub fn value(&self) -> Option<&str> {
        self.value.as_deref()
    }

    /// The byte offset in the input.
    pub fn offset(&self) -> Option<u64> {
        self.offset
    }
}

impl fmt::Display for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        if let Some(c) = &self.column {
            write!(f, " (column `{c}`")?;
            if let Some(r) = self.row {
                write!(f, ", row {r}")?;
            }
            f.write_str(")")?;
        } else if let Some(r) = self.row {
            write!(f, " (row {r})")?;
        }
        if let Some(v) = &self.value {
            write!(f, ": value {v:?}")?;
        }
        if let Some(o) = self.offset {
            write!(f, " at byte {o}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for CodecError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CodecError({:?}: {})", self.kind, self)
    }
}

impl std::error::Error for CodecError {}
