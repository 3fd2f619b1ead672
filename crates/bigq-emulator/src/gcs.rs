//! `gs://bucket/object` URIs served from a local directory: `DIR/bucket/object`. Load jobs
//! read their source URIs here.
//!
//! As in Cloud Storage, an object name is a flat key: a `*` in a source URI matches any run
//! of characters, `/` included, and the objects are taken in name order.

use std::path::{Component, Path, PathBuf};

use crate::error::BqError;

/// Where `gs://` URIs live, if anywhere.
#[derive(Clone, Debug, Default)]
pub struct Gcs {
    dir: Option<PathBuf>,
}

/// A `gs://` URI split into bucket and object name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GcsUri<'a> {
    /// The bucket.
    pub bucket: &'a str,
    /// The object name (may hold `*`).
    pub object: &'a str,
}

/// One object a source URI named.
#[derive(Clone, Debug)]
pub struct Object {
    /// Its `gs://` URI.
    pub uri: String,
    /// Its file.
    pub path: PathBuf,
}

impl<'a> GcsUri<'a> {
    /// Parses `gs://bucket/object`; anything else is BigQuery's `invalid` error.
    pub fn parse(uri: &'a str) -> Result<GcsUri<'a>, BqError> {
        let rest = uri.strip_prefix("gs://").ok_or_else(|| {
            BqError::invalid(format!(
                "Unsupported by bigq-emulator: source URI {uri} (only gs:// URIs)"
            ))
        })?;
        let (bucket, object) = rest
            .split_once('/')
            .filter(|(b, o)| !b.is_empty() && !o.is_empty())
            .ok_or_else(|| BqError::invalid(format!("Invalid URI: {uri}")))?;
        let escapes = Path::new(object)
            .components()
            .any(|c| !matches!(c, Component::Normal(_)));
        if escapes || bucket.contains(['\\', '*']) || bucket.starts_with('.') {
            return Err(BqError::invalid(format!("Invalid URI: {uri}")));
        }
        Ok(GcsUri { bucket, object })
    }
}

/// Whether `name` matches `pattern`, where `*` stands for any run of characters.
fn matches(pattern: &str, name: &str) -> bool {
    let mut parts = pattern.split('*');
    let Some(first) = parts.next() else {
        return pattern == name;
    };
    let Some(mut rest) = name.strip_prefix(first) else {
        return false;
    };
    let parts: Vec<&str> = parts.collect();
    let Some((last, middle)) = parts.split_last() else {
        return rest.is_empty();
    };
    for p in middle {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

/// Every file under `dir`, as object names relative to `root` with `/` separators.
fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            walk(root, &path, out)?;
        } else if let Ok(rel) = path.strip_prefix(root) {
            let name: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            out.push(name.join("/"));
        }
    }
    Ok(())
}

impl Gcs {
    /// `gs://` URIs served from `dir`, or refused when `None`.
    pub fn new(dir: Option<PathBuf>) -> Gcs {
        Gcs { dir }
    }

    fn root(&self, uri: &str) -> Result<&Path, BqError> {
        self.dir.as_deref().ok_or_else(|| {
            BqError::invalid(format!(
                "Unsupported by bigq-emulator: {uri}: gs:// URIs need a directory to serve them \
                 from (start the emulator with --gcs-dir DIR, or EmulatorBuilder::with_gcs_dir)"
            ))
        })
    }

    /// The objects a source URI names, in name order: one for a plain URI, every match for
    /// one with `*`. None found is BigQuery's `notFound`.
    pub fn sources(&self, uri: &str) -> Result<Vec<Object>, BqError> {
        let u = GcsUri::parse(uri)?;
        let bucket = self.root(uri)?.join(u.bucket);
        let not_found = || BqError::not_found(format!("Not found: URI {uri}"));
        if !u.object.contains('*') {
            let path = bucket.join(u.object);
            if !path.is_file() {
                return Err(not_found());
            }
            return Ok(vec![Object {
                uri: uri.to_string(),
                path,
            }]);
        }
        let mut names = Vec::new();
        if bucket.is_dir() {
            walk(&bucket, &bucket, &mut names).map_err(|e| {
                BqError::internal(format!(
                    "bigq-emulator cannot list {}: {e}",
                    bucket.display()
                ))
            })?;
        }
        names.retain(|n| matches(u.object, n));
        names.sort();
        if names.is_empty() {
            return Err(not_found());
        }
        Ok(names
            .into_iter()
            .map(|n| Object {
                uri: format!("gs://{}/{n}", u.bucket),
                path: bucket.join(&n),
            })
            .collect())
    }

    /// Reads one object.
    pub fn read(&self, o: &Object) -> Result<Vec<u8>, BqError> {
        std::fs::read(&o.path)
            .map_err(|e| BqError::internal(format!("bigq-emulator cannot read {}: {e}", o.uri)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_match_runs_of_characters_slashes_included() {
        assert!(matches("a/*.csv", "a/b.csv"));
        assert!(matches("a/*.csv", "a/x/y.csv"));
        assert!(!matches("a/*.csv", "a/b.json"));
        assert!(matches("a*b*c", "a12b34c"));
        assert!(!matches("a*b*c", "a12c34b"));
        assert!(matches("part-*", "part-"));
        assert!(!matches("ab*ba", "aba"));
        assert!(matches("exact", "exact"));
        assert!(!matches("exact", "exactly"));
    }

    #[test]
    fn uris_that_leave_the_bucket_are_refused() {
        assert!(GcsUri::parse("gs://b/../etc/passwd").is_err());
        assert!(GcsUri::parse("gs://b/").is_err());
        assert!(GcsUri::parse("s3://b/x").is_err());
        assert_eq!(
            GcsUri::parse("gs://b/x/y.csv").ok(),
            Some(GcsUri {
                bucket: "b",
                object: "x/y.csv"
            })
        );
    }

    #[test]
    fn a_uri_without_a_directory_names_the_option() {
        let e = Gcs::new(None).sources("gs://b/x.csv").unwrap_err();
        assert!(e.message.contains("--gcs-dir"), "{e}");
    }
}
