//! Routines (persistent SQL functions): insert, get, update, delete, list. A routine is
//! kept as its resource; SQL scalar functions are callable from queries
//! ([`crate::sql::routines`]), others are kept and refused when called.

use serde_json::{Map, Value};

use super::PageRequest;
use crate::error::BqError;
use crate::state::AppState;

/// A routine's REST resource.
pub type Resource = Map<String, Value>;

/// The resource's etag: it changes with any change of the routine.
pub fn etag(r: &Map<String, Value>) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    Value::Object(r.clone()).to_string().hash(&mut h);
    super::etag(h.finish() as i64)
}

/// Checks a routine resource as BigQuery does before keeping it.
fn check(id: &str, r: &Map<String, Value>) -> Result<(), BqError> {
    if id.is_empty() {
        return Err(BqError::invalid(
            "Required parameter is missing: routineReference.routineId",
        ));
    }
    if id.len() > 256 || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(BqError::invalid(format!(
            "Invalid routine ID \"{id}\". Routine IDs must be alphanumeric (plus underscores) \
             and must be at most 256 characters long."
        )));
    }
    if r.get("routineType").and_then(Value::as_str).is_none() {
        return Err(BqError::invalid("Required field is missing: routineType"));
    }
    if r.get("definitionBody").and_then(Value::as_str).is_none() {
        return Err(BqError::invalid(
            "Required field is missing: definitionBody",
        ));
    }
    Ok(())
}

/// The server's fields, which a request's body does not set.
fn settable(mut r: Map<String, Value>) -> Map<String, Value> {
    for k in [
        "etag",
        "creationTime",
        "lastModifiedTime",
        "routineReference",
    ] {
        r.remove(k);
    }
    r
}

/// `routines.insert`: the stored routine.
pub fn insert(
    s: &AppState,
    project: &str,
    dataset: &str,
    body: Map<String, Value>,
) -> Result<Map<String, Value>, BqError> {
    let id = body
        .get("routineReference")
        .and_then(|r| r.get("routineId"))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    check(&id, &body)?;
    s.catalog
        .update(|w| w.put_routine(project, dataset, &id, settable(body), false))
}

/// `routines.get`.
pub fn get(
    s: &AppState,
    project: &str,
    dataset: &str,
    id: &str,
) -> Result<Map<String, Value>, BqError> {
    let r = s.catalog.read();
    r.dataset(project, dataset)?
        .routines
        .get(id)
        .cloned()
        .ok_or_else(|| BqError::not_found(format!("Not found: Routine {project}:{dataset}.{id}")))
}

/// `routines.update`: the body replaces the routine (it must exist); with `if_match`, only
/// while the routine still has that etag.
pub fn update(
    s: &AppState,
    project: &str,
    dataset: &str,
    id: &str,
    body: Map<String, Value>,
    if_match: Option<&str>,
) -> Result<Map<String, Value>, BqError> {
    let current = get(s, project, dataset, id)?;
    if let Some(tag) = if_match
        && tag != "*"
        && tag != etag(&current)
    {
        return Err(BqError::condition_not_met(format!(
            "Precondition check failed: routine {project}:{dataset}.{id} changed since etag \
             {tag} was read"
        )));
    }
    check(id, &body)?;
    s.catalog
        .update(|w| w.put_routine(project, dataset, id, settable(body), true))
}

/// `routines.delete`.
pub fn delete(s: &AppState, project: &str, dataset: &str, id: &str) -> Result<(), BqError> {
    s.catalog.update(|w| w.delete_routine(project, dataset, id))
}

/// `routines.list`: one page of routines and the next page's token.
pub fn list(
    s: &AppState,
    project: &str,
    dataset: &str,
    page: PageRequest,
) -> Result<(Vec<Resource>, Option<String>), BqError> {
    let r = s.catalog.read();
    let all: Vec<Map<String, Value>> = r
        .dataset(project, dataset)?
        .routines
        .values()
        .cloned()
        .collect();
    Ok(page.slice(&all))
}
