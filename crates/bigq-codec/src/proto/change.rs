//! BigQuery change data capture through Storage Write: the `_CHANGE_TYPE` and
//! `_CHANGE_SEQUENCE_NUMBER` pseudo-columns a row carries to upsert or delete by the table's
//! primary key.

use std::cmp::Ordering;
use std::fmt;
use std::str::FromStr;

use crate::{CodecError, CodecErrorKind};

/// The pseudo-column that says what a row does: `UPSERT` or `DELETE`.
pub const CHANGE_TYPE_COLUMN: &str = "_CHANGE_TYPE";

/// The pseudo-column that orders the changes of one primary key.
pub const CHANGE_SEQUENCE_COLUMN: &str = "_CHANGE_SEQUENCE_NUMBER";

/// Whether `name` is one of the change pseudo-columns (case-insensitively, as BigQuery
/// matches column names).
pub fn is_change_column(name: &str) -> bool {
    name.eq_ignore_ascii_case(CHANGE_TYPE_COLUMN)
        || name.eq_ignore_ascii_case(CHANGE_SEQUENCE_COLUMN)
}

/// What a change row does to the row of its primary key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChangeType {
    /// Inserts the row, or replaces the row with the same primary key.
    Upsert,
    /// Deletes the row with the same primary key, if there is one.
    Delete,
}

impl ChangeType {
    /// The value of `_CHANGE_TYPE`: `UPSERT` or `DELETE`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeType::Upsert => "UPSERT",
            ChangeType::Delete => "DELETE",
        }
    }

    /// `UPSERT` or `DELETE` (as BigQuery takes them, in capitals); `None` for anything else.
    pub fn parse(s: &str) -> Option<ChangeType> {
        match s {
            "UPSERT" => Some(ChangeType::Upsert),
            "DELETE" => Some(ChangeType::Delete),
            _ => None,
        }
    }
}

impl fmt::Display for ChangeType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A `_CHANGE_SEQUENCE_NUMBER`: one to four sections of at most 16 hexadecimal digits each,
/// separated by `/` (`"1A"`, `"0/FF/3"`), written from one `u64` or up to four.
///
/// Sequence numbers compare section by section, each as a number, from the left; a number
/// with fewer sections compares as if the missing ones were 0, and before a longer one that
/// is otherwise equal (`"FF" < "FF/0" < "FF/1"`). Among the changes of one primary key, the
/// highest sequence number wins.
///
/// ```
/// use bigq_codec::proto::ChangeSequence;
///
/// let a: ChangeSequence = "1/ff".parse()?;
/// assert_eq!(a, ChangeSequence::from([1, 255]));
/// assert_eq!(a.to_string(), "1/FF");
/// assert!(a > ChangeSequence::from(1));
/// assert!(ChangeSequence::from([1, 0x100]) > a);
/// assert!("1/2/3/4/5".parse::<ChangeSequence>().is_err());
/// # Ok::<(), bigq_codec::CodecError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChangeSequence {
    sections: [u64; 4],
    len: u8,
}

impl ChangeSequence {
    /// The most sections a sequence number has.
    pub const MAX_SECTIONS: usize = 4;

    /// A sequence number of the given sections; `None` for none or more than four.
    pub fn from_sections(sections: &[u64]) -> Option<ChangeSequence> {
        if sections.is_empty() || sections.len() > Self::MAX_SECTIONS {
            return None;
        }
        let mut out = [0u64; 4];
        for (slot, s) in out.iter_mut().zip(sections) {
            *slot = *s;
        }
        Some(ChangeSequence {
            sections: out,
            len: sections.len() as u8,
        })
    }

    /// The sections, most significant first.
    pub fn sections(&self) -> &[u64] {
        self.sections.get(..self.len as usize).unwrap_or(&[])
    }

    /// Parses BigQuery's text form (case-insensitive hexadecimal); the error names the
    /// value and what is wrong with it.
    pub fn parse(s: &str) -> Result<ChangeSequence, CodecError> {
        let invalid = |why: &str| {
            CodecError::new(
                CodecErrorKind::Value,
                format!("invalid {CHANGE_SEQUENCE_COLUMN} {s:?}: {why}"),
            )
            .with_column(CHANGE_SEQUENCE_COLUMN)
            .with_value(s)
        };
        let mut sections = [0u64; 4];
        let mut len = 0usize;
        for part in s.split('/') {
            let Some(slot) = sections.get_mut(len) else {
                return Err(invalid("more than 4 sections"));
            };
            if part.is_empty() {
                return Err(invalid("an empty section"));
            }
            if part.len() > 16 {
                return Err(invalid("a section of more than 16 hexadecimal digits"));
            }
            if !part.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(invalid("a section that is not hexadecimal"));
            }
            *slot = u64::from_str_radix(part, 16).map_err(|_| invalid("a section out of range"))?;
            len += 1;
        }
        Ok(ChangeSequence {
            sections,
            len: len as u8,
        })
    }
}

impl Ord for ChangeSequence {
    fn cmp(&self, other: &Self) -> Ordering {
        self.sections
            .cmp(&other.sections)
            .then(self.len.cmp(&other.len))
    }
}

impl PartialOrd for ChangeSequence {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for ChangeSequence {
    /// Upper-case hexadecimal sections separated by `/`, without leading zeros.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.sections().iter().enumerate() {
            if i > 0 {
                f.write_str("/")?;
            }
            write!(f, "{s:X}")?;
        }
        Ok(())
    }
}

impl FromStr for ChangeSequence {
    type Err = CodecError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ChangeSequence::parse(s)
    }
}

impl From<u64> for ChangeSequence {
    fn from(v: u64) -> Self {
        ChangeSequence {
            sections: [v, 0, 0, 0],
            len: 1,
        }
    }
}

macro_rules! from_array {
    ($($n:literal),*) => {$(
        impl From<[u64; $n]> for ChangeSequence {
            fn from(v: [u64; $n]) -> Self {
                let mut sections = [0u64; 4];
                for (slot, s) in sections.iter_mut().zip(v) {
                    *slot = s;
                }
                ChangeSequence { sections, len: $n }
            }
        }
    )*};
}
from_array!(1, 2, 3, 4);

#[cfg(test)]
mod tests {
    use super::*;

    fn seq(s: &str) -> ChangeSequence {
        s.parse().unwrap()
    }

    #[test]
    fn parses_and_formats_sections() {
        assert_eq!(seq("0").sections(), [0]);
        assert_eq!(seq("ff").sections(), [255]);
        assert_eq!(seq("FFFFFFFFFFFFFFFF").sections(), [u64::MAX]);
        assert_eq!(seq("1/2/3/4").sections(), [1, 2, 3, 4]);
        assert_eq!(seq("00a/B").to_string(), "A/B");
        assert_eq!(
            ChangeSequence::from([u64::MAX; 4]).to_string(),
            "FFFFFFFFFFFFFFFF/FFFFFFFFFFFFFFFF/FFFFFFFFFFFFFFFF/FFFFFFFFFFFFFFFF"
        );
        assert_eq!(
            ChangeSequence::from(0x18F2EBB6480).to_string(),
            "18F2EBB6480"
        );
        for s in [
            ChangeSequence::from(7),
            ChangeSequence::from([1, 2]),
            ChangeSequence::from([0, 0, 9]),
            ChangeSequence::from([3, 2, 1, 0]),
        ] {
            assert_eq!(seq(&s.to_string()), s);
        }
        assert_eq!(ChangeSequence::from_sections(&[]), None);
        assert_eq!(ChangeSequence::from_sections(&[1, 2, 3, 4, 5]), None);
        assert_eq!(
            ChangeSequence::from_sections(&[5, 6]),
            Some(ChangeSequence::from([5, 6]))
        );
    }

    #[test]
    fn refuses_malformed_text_naming_it() {
        for (s, why) in [
            ("", "an empty section"),
            ("1//2", "an empty section"),
            ("1/", "an empty section"),
            ("1/2/3/4/5", "more than 4 sections"),
            ("10000000000000000", "more than 16"),
            ("12g", "not hexadecimal"),
            ("-1", "not hexadecimal"),
            ("+1", "not hexadecimal"),
            (" 1", "not hexadecimal"),
        ] {
            let e = s.parse::<ChangeSequence>().unwrap_err();
            assert!(e.message().contains(why), "{s:?}: {}", e.message());
            assert_eq!(e.column(), Some(CHANGE_SEQUENCE_COLUMN));
            assert_eq!(e.value(), Some(s));
        }
    }

    #[test]
    fn orders_section_by_section_as_numbers() {
        // As numbers, not as text: "A" (10) is above "9", "10" above "F".
        assert!(seq("A") > seq("9"));
        assert!(seq("10") > seq("F"));
        assert!(seq("a") == seq("A"));
        assert!(seq("0001") == seq("1"));
        // The first section decides, then the next.
        assert!(seq("2/0") > seq("1/FFFFFFFFFFFFFFFF"));
        assert!(seq("1/2/3/5") > seq("1/2/3/4"));
        // Missing sections count as 0, and a shorter number comes first among equals.
        assert!(seq("1/1") > seq("1"));
        assert!(seq("1/0") > seq("1"));
        assert!(seq("2") > seq("1/5"));
        let mut v = vec![seq("3"), seq("1/1"), seq("1"), seq("0/FF"), seq("1/0/0/1")];
        v.sort();
        assert_eq!(
            v,
            [seq("0/FF"), seq("1"), seq("1/0/0/1"), seq("1/1"), seq("3")]
        );
    }

    #[test]
    fn change_types_are_upsert_and_delete() {
        assert_eq!(ChangeType::parse("UPSERT"), Some(ChangeType::Upsert));
        assert_eq!(ChangeType::parse("DELETE"), Some(ChangeType::Delete));
        assert_eq!(ChangeType::parse("INSERT"), None);
        assert_eq!(ChangeType::parse("upsert"), None);
        assert_eq!(ChangeType::Delete.to_string(), "DELETE");
        assert!(is_change_column("_change_type"));
        assert!(is_change_column("_CHANGE_SEQUENCE_NUMBER"));
        assert!(!is_change_column("_CHANGE"));
    }
}
