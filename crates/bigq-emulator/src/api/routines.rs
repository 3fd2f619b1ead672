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
pub fn etag(r: &Resource) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    serde_json::to_string(r).unwrap_or_default().hash(&mut h);
    super::etag(h.finish() as i64)
}

/// Checks a routine resource as BigQuery does before keeping it.
fn check(id: &str, r: &Resource) -> Result<(), BqError> {
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
fn settable(mut r: Resource) -> Resource {
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
    body: Resource,
) -> Result<Resource, BqError> {
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
pub fn get(s: &AppState, project: &str, dataset: &str, id: &str) -> Result<Resource, BqError> {
    let r = s.catalog.read();
    r.dataset(project, dataset)?
        .routines
        .get(id)
        .cloned()
        .ok_or_else(|| not_found(project, dataset, id))
}

fn not_found(project: &str, dataset: &str, id: &str) -> BqError {
    BqError::not_found(format!("Not found: Routine {project}:{dataset}.{id}"))
}

/// `routines.update`: the body replaces the routine (it must exist); with `if_match`, only
/// while the routine still has that etag.
pub fn update(
    s: &AppState,
    project: &str,
    dataset: &str,
    id: &str,
    body: Resource,
    if_match: Option<&str>,
) -> Result<Resource, BqError> {
    // The etag is compared under the write that replaces the routine, so that a change
    // between the two is refused, not lost.
    s.catalog.update(|w| {
        let current = w
            .dataset_mut(project, dataset)?
            .routines
            .get(id)
            .ok_or_else(|| not_found(project, dataset, id))?;
        if let Some(tag) = if_match
            && tag != "*"
            && tag != etag(current)
        {
            return Err(BqError::condition_not_met(format!(
                "Precondition check failed: routine {project}:{dataset}.{id} changed since \
                 etag {tag} was read"
            )));
        }
        check(id, &body)?;
        w.put_routine(project, dataset, id, settable(body), true)
    })
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
    let all: Vec<Resource> = r
        .dataset(project, dataset)?
        .routines
        .values()
        .cloned()
        .collect();
    Ok(page.slice(&all))
}
