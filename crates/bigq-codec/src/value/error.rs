//! The error of parsing a value from its text.

/// Error returned when a text does not parse as a BigQuery value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseValueError {
    type_name: &'static str,
    input: String,
}

impl ParseValueError {
    pub(crate) fn new(type_name: &'static str, input: &str) -> Self {
        Self {
            type_name,
            input: input.chars().take(64).collect(),
        }
    }

    /// The BigQuery type that was expected.
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }
}

impl std::fmt::Display for ParseValueError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid {} value {:?}", self.type_name, self.input)
    }
}

impl std::error::Error for ParseValueError {}
