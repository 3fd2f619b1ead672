//! The functions of BigQuery's function reference that bigq-emulator does not compute, each
//! refused by name with its family: a call of one is `Unsupported by bigq-emulator:
//! KEYS.NEW_KEYSET (AEAD encryption functions)`, not BigQuery's `Function not found`, which
//! would say the query is wrong when it is the emulator that falls short.
//!
//! They need what a local emulator does not have (Cloud KMS and Cloud DLP keys, Cloud Storage
//! objects, models, a search index, another database) or BigQuery's own algorithms, whose
//! results a reimplementation would only approximate (S2 cells, KLL sketches, the text
//! analyzers), or they are geography functions not written yet.

use datafusion::sql::sqlparser::ast::{self, ObjectNamePart};

use crate::error::{BqError, BqResult};

/// Each refused function, by the family its reference page names.
const UNSUPPORTED: &[(&str, &[&str])] = &[
    (
        "AEAD encryption",
        &[
            "AEAD.DECRYPT_BYTES",
            "AEAD.DECRYPT_STRING",
            "AEAD.ENCRYPT",
            "DETERMINISTIC_DECRYPT_BYTES",
            "DETERMINISTIC_DECRYPT_STRING",
            "DETERMINISTIC_ENCRYPT",
            "KEYS.ADD_KEY_FROM_RAW_BYTES",
            "KEYS.KEYSET_CHAIN",
            "KEYS.KEYSET_FROM_JSON",
            "KEYS.KEYSET_LENGTH",
            "KEYS.KEYSET_TO_JSON",
            "KEYS.NEW_KEYSET",
            "KEYS.NEW_WRAPPED_KEYSET",
            "KEYS.REWRAP_KEYSET",
            "KEYS.ROTATE_KEYSET",
            "KEYS.ROTATE_WRAPPED_KEYSET",
        ],
    ),
    (
        "DLP encryption",
        &[
            "DLP_DETERMINISTIC_ENCRYPT",
            "DLP_DETERMINISTIC_DECRYPT",
            "DLP_KEY_CHAIN",
        ],
    ),
    (
        "KLL quantile",
        &[
            "KLL_QUANTILES.EXTRACT_INT64",
            "KLL_QUANTILES.EXTRACT_FLOAT64",
            "KLL_QUANTILES.EXTRACT_POINT_INT64",
            "KLL_QUANTILES.EXTRACT_POINT_FLOAT64",
            "KLL_QUANTILES.INIT_INT64",
            "KLL_QUANTILES.INIT_FLOAT64",
            "KLL_QUANTILES.MERGE_INT64",
            "KLL_QUANTILES.MERGE_FLOAT64",
            "KLL_QUANTILES.MERGE_PARTIAL",
            "KLL_QUANTILES.MERGE_POINT_INT64",
            "KLL_QUANTILES.MERGE_POINT_FLOAT64",
        ],
    ),
    (
        "geography",
        &[
            "S2_CELLIDFROMPOINT",
            "S2_COVERINGCELLIDS",
            "ST_BUFFERWITHTOLERANCE",
            "ST_CENTROID_AGG",
            "ST_CLUSTERDBSCAN",
            "ST_HAUSDORFFDISTANCE",
            "ST_HAUSDORFFDWITHIN",
            "ST_REGIONSTATS",
        ],
    ),
    ("search", &["SEARCH", "VECTOR_SEARCH"]),
    ("text analysis", &["BAG_OF_WORDS", "TEXT_ANALYZE", "TF_IDF"]),
    ("security", &["SESSION_USER"]),
    ("federated query", &["EXTERNAL_QUERY"]),
    ("table", &["APPENDS", "CHANGES"]),
    ("time series", &["GAP_FILL"]),
    (
        "ObjectRef",
        &["OBJ.FETCH_METADATA", "OBJ.GET_ACCESS_URL", "OBJ.MAKE_REF"],
    ),
];

/// Dotted prefixes whose every function is refused: BigQuery ML's and the AI functions,
/// which call models.
const UNSUPPORTED_PREFIXES: &[(&str, &str)] = &[("ML.", "BigQuery ML"), ("AI.", "AI")];

/// The family of the refused function `name` (upper case, dotted), if it is one.
pub(crate) fn family_of(name: &str) -> Option<&'static str> {
    UNSUPPORTED
        .iter()
        .find(|(_, names)| names.contains(&name))
        .map(|(family, _)| *family)
        .or_else(|| {
            UNSUPPORTED_PREFIXES
                .iter()
                .find(|(prefix, _)| name.starts_with(prefix))
                .map(|(_, family)| *family)
        })
}

/// Every refused function, for the function table.
#[cfg(test)]
pub(crate) fn names() -> impl Iterator<Item = &'static str> {
    UNSUPPORTED
        .iter()
        .flat_map(|(_, names)| names.iter().copied())
}

/// The error for a call of a refused function (`SAFE.` of one too); `Ok` for any other call.
pub(crate) fn refuse(f: &ast::Function) -> BqResult<()> {
    let parts: Vec<String> = f
        .name
        .0
        .iter()
        .map(|p| match p {
            ObjectNamePart::Identifier(id) => id.value.to_ascii_uppercase(),
            other => other.to_string().to_ascii_uppercase(),
        })
        .collect();
    let name = parts.join(".");
    let name = name.strip_prefix("SAFE.").unwrap_or(&name);
    match family_of(name) {
        Some(family) => Err(BqError::unsupported(format!("{name} ({family} functions)"))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_name_is_refused_once() {
        let mut seen = std::collections::HashSet::new();
        for n in names() {
            assert!(seen.insert(n), "{n} twice");
            assert_eq!(n, n.to_ascii_uppercase());
        }
        assert_eq!(family_of("KEYS.NEW_KEYSET"), Some("AEAD encryption"));
        assert_eq!(family_of("ML.PREDICT"), Some("BigQuery ML"));
        assert_eq!(family_of("ST_X"), None);
    }
}
