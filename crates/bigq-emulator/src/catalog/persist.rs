//! `--data-dir`: the catalog kept on disk, so datasets, tables and rows survive a restart.
//!
//! Layout of the directory:
//!
//! - `catalog.json`: projects, datasets (with their metadata) and tables (BigQuery schema,
//!   view query, times, description), no rows. Rewritten whole (to a temporary file, then
//!   renamed over the old one) whenever any of it changes.
//! - `tables/{project}/{dataset}/{table}/{generation}-{sequence}.arrows`: the rows, as Arrow
//!   IPC streams in the table's Arrow layout. A commit that only adds rows (`INSERT`,
//!   `insertAll`, Storage Write) writes its batches as one new segment; a change to existing
//!   rows (`UPDATE`, `DELETE`, `MERGE`, `ALTER TABLE`, `CREATE OR REPLACE`) writes the whole
//!   table as a new generation and then deletes the older one. Only the newest generation
//!   is read back. Names are percent-encoded outside `[A-Za-z0-9_-]`.
//!
//! Every file is written to a `.tmp` name and renamed into place, so a reader sees either
//! the old or the new file, never half of one. Writing happens while the change is being
//! committed (when the catalog's write lock is released), before the request that made it
//! is answered: a crash of the emulator loses at most the requests in flight. Files are
//! synced to the disk on shutdown; between shutdowns they are in the OS's page cache, so
//! an OS crash (not a process crash) may lose the most recent writes.
//!
//! Why these formats: JSON for the few, human-readable catalog facts (the same field names
//! as the REST API's `TableFieldSchema`); Arrow IPC for the rows, the layout the tables
//! already have in memory, so loading is a copy and no value is re-parsed or re-typed.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::io::{self, Write as _};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use arrow_ipc::reader::StreamReader;
use arrow_ipc::writer::StreamWriter;
use bigq_codec::schema::TableFieldSchema;
use datafusion::arrow::record_batch::RecordBatch;
use serde_json::{Value, json};

use super::model::{Dataset, State, Table, TableKind, TableRef};

const CATALOG: &str = "catalog.json";
const FORMAT: &str = "bigq-emulator-data/1";

/// What was last written for one table.
#[derive(Debug)]
struct Written {
    table: Arc<Table>,
    generation: u64,
    next_seq: u64,
}

#[derive(Debug, Default)]
struct Persisted {
    catalog_json: String,
    tables: HashMap<TableRef, Written>,
    /// Files written since the last sync to disk.
    dirty: HashSet<PathBuf>,
}

/// The on-disk copy of a catalog.
#[derive(Debug)]
pub(crate) struct Store {
    dir: PathBuf,
    persisted: Mutex<Persisted>,
}

fn invalid(msg: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg)
}

/// A directory name for an id: `[A-Za-z0-9_-]` as is, every other byte `%XX`.
fn encode_name(id: &str) -> String {
    let mut out = String::with_capacity(id.len());
    for b in id.bytes() {
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn segment_name(generation: u64, seq: u64) -> String {
    format!("{generation:08}-{seq:08}.arrows")
}

/// `(generation, sequence)` of a segment file name.
fn parse_segment(name: &str) -> Option<(u64, u64)> {
    let (g, s) = name.strip_suffix(".arrows")?.split_once('-')?;
    Some((g.parse().ok()?, s.parse().ok()?))
}

/// Writes `bytes` to `path` through a temporary file and a rename.
fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut fs::File) -> io::Result<()>,
) -> io::Result<()> {
    let tmp = path.with_extension("tmp");
    let mut f = fs::File::create(&tmp)?;
    write(&mut f)?;
    f.flush()?;
    drop(f);
    fs::rename(&tmp, path)
}

fn sync_dir(dir: &Path) {
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
}

fn table_json(t: &Table) -> Value {
    json!({
        "schema": t.schema,
        "view": match &t.kind {
            TableKind::View { query } => Some(query),
            TableKind::Table => None,
        },
        "creationTime": t.creation_time,
        "lastModifiedTime": t.last_modified_time,
        "description": t.description,
    })
}

fn dataset_json(d: &Dataset) -> Value {
    let tables: serde_json::Map<String, Value> = d
        .tables
        .iter()
        .map(|(k, t)| (k.clone(), table_json(t)))
        .collect();
    json!({
        "creationTime": d.creation_time,
        "lastModifiedTime": d.last_modified_time,
        "location": d.location,
        "description": d.description,
        "friendlyName": d.friendly_name,
        "labels": d.labels,
        "tables": tables,
    })
}

fn catalog_json(state: &State) -> String {
    let projects: serde_json::Map<String, Value> = state
        .projects
        .iter()
        .map(|(p, datasets)| {
            let ds: serde_json::Map<String, Value> = datasets
                .iter()
                .map(|(k, d)| (k.clone(), dataset_json(d)))
                .collect();
            (p.clone(), Value::Object(ds))
        })
        .collect();
    serde_json::to_string_pretty(&json!({"format": FORMAT, "projects": projects}))
        .unwrap_or_default()
}

fn field<'a>(v: &'a Value, name: &str, at: &str) -> io::Result<&'a Value> {
    v.get(name)
        .ok_or_else(|| invalid(format!("{CATALOG}: {at} has no `{name}`")))
}

fn opt_string(v: &Value, name: &str) -> Option<String> {
    v.get(name).and_then(Value::as_str).map(str::to_string)
}

fn int(v: &Value, name: &str) -> i64 {
    v.get(name).and_then(Value::as_i64).unwrap_or(0)
}

impl Store {
    fn table_dir(&self, t: &TableRef) -> PathBuf {
        self.dir
            .join("tables")
            .join(encode_name(&t.project))
            .join(encode_name(&t.dataset))
            .join(encode_name(&t.table))
    }

    /// Opens `dir` (created if missing) and reads the catalog kept there.
    pub(crate) fn open(dir: &Path) -> io::Result<(Store, State)> {
        fs::create_dir_all(dir)?;
        let mut store = Store {
            dir: dir.to_path_buf(),
            persisted: Mutex::new(Persisted::default()),
        };
        let mut state = State::default();
        let path = dir.join(CATALOG);
        let text = match fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((store, state)),
            Err(e) => return Err(e),
        };
        let root: Value =
            serde_json::from_str(&text).map_err(|e| invalid(format!("{}: {e}", path.display())))?;
        if root.get("format").and_then(Value::as_str) != Some(FORMAT) {
            return Err(invalid(format!(
                "{}: not a bigq-emulator data directory of format {FORMAT}",
                path.display()
            )));
        }
        let mut persisted = Persisted::default();
        let projects = field(&root, "projects", "the catalog")?
            .as_object()
            .cloned()
            .unwrap_or_default();
        for (project, datasets) in projects {
            let p = state.projects.entry(project.clone()).or_default();
            for (id, d) in datasets.as_object().cloned().unwrap_or_default() {
                let mut ds = Dataset::new(opt_string(&d, "location"));
                ds.creation_time = int(&d, "creationTime");
                ds.last_modified_time = int(&d, "lastModifiedTime");
                ds.description = opt_string(&d, "description");
                ds.friendly_name = opt_string(&d, "friendlyName");
                ds.labels = serde_json::from_value::<BTreeMap<String, String>>(
                    d.get("labels").cloned().unwrap_or(Value::Null),
                )
                .unwrap_or_default();
                let tables = d
                    .get("tables")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                for (name, t) in tables {
                    let tref = TableRef {
                        project: project.clone(),
                        dataset: id.clone(),
                        table: name.clone(),
                    };
                    let at = format!("table {tref}");
                    let schema: Vec<TableFieldSchema> =
                        serde_json::from_value(field(&t, "schema", &at)?.clone())
                            .map_err(|e| invalid(format!("{CATALOG}: {at}: {e}")))?;
                    let mut table = Table::new(schema)
                        .map_err(|e| invalid(format!("{CATALOG}: {at}: {}", e.message)))?;
                    table.creation_time = int(&t, "creationTime");
                    table.last_modified_time = int(&t, "lastModifiedTime");
                    table.description = opt_string(&t, "description");
                    if let Some(query) = opt_string(&t, "view") {
                        table.kind = TableKind::View { query };
                    }
                    let (generation, next_seq) = store.load_rows(&tref, &mut table)?;
                    let table = Arc::new(table);
                    ds.tables.insert(name, table.clone());
                    persisted.tables.insert(
                        tref,
                        Written {
                            table,
                            generation,
                            next_seq,
                        },
                    );
                }
                p.insert(id, ds);
            }
        }
        persisted.catalog_json = catalog_json(&state);
        store.persisted = Mutex::new(persisted);
        Ok((store, state))
    }

    /// Reads a table's newest generation of segments into `table`; removes older
    /// generations and unfinished files. Returns the generation and the next sequence.
    fn load_rows(&self, t: &TableRef, table: &mut Table) -> io::Result<(u64, u64)> {
        let dir = self.table_dir(t);
        let mut segments = Vec::new();
        let entries = match fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok((0, 0)),
            Err(e) => return Err(e),
        };
        for entry in entries {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            match parse_segment(&name) {
                Some(gs) => segments.push((gs, entry.path())),
                None => {
                    // An unfinished write.
                    let _ = fs::remove_file(entry.path());
                }
            }
        }
        let Some(generation) = segments.iter().map(|((g, _), _)| *g).max() else {
            return Ok((0, 0));
        };
        segments.sort();
        let mut next_seq = 0;
        for ((g, seq), path) in segments {
            if g != generation {
                let _ = fs::remove_file(&path);
                continue;
            }
            next_seq = seq + 1;
            let bad = |e: String| invalid(format!("{}: {e}", path.display()));
            let reader = StreamReader::try_new(io::BufReader::new(fs::File::open(&path)?), None)
                .map_err(|e| bad(e.to_string()))?;
            for batch in reader {
                let batch = batch.map_err(|e| bad(e.to_string()))?;
                let batch = if batch.schema() == table.arrow_schema {
                    batch
                } else {
                    RecordBatch::try_new(table.arrow_schema.clone(), batch.columns().to_vec())
                        .map_err(|e| bad(format!("rows do not fit table {t}: {e}")))?
                };
                table.batches.push(batch);
            }
        }
        Ok((generation, next_seq))
    }

    fn write_segment(&self, path: &Path, table: &Table, batches: &[RecordBatch]) -> io::Result<()> {
        write_atomic(path, |f| {
            let mut w = StreamWriter::try_new(io::BufWriter::new(f), &table.arrow_schema)
                .map_err(io::Error::other)?;
            for b in batches {
                w.write(b).map_err(io::Error::other)?;
            }
            w.finish().map_err(io::Error::other)?;
            w.into_inner().map_err(io::Error::other)?.flush()
        })
    }

    /// Brings the files up to `state`: called with the catalog's write lock held, after
    /// each change.
    pub(crate) fn sync(&self, state: &State) -> io::Result<()> {
        let mut p = self.persisted.lock().unwrap_or_else(|e| e.into_inner());
        let mut seen = HashSet::new();
        for (project, datasets) in &state.projects {
            for (dataset, ds) in datasets {
                for (name, table) in &ds.tables {
                    let t = TableRef {
                        project: project.clone(),
                        dataset: dataset.clone(),
                        table: name.clone(),
                    };
                    self.sync_table(&mut p, &t, table)?;
                    seen.insert(t);
                }
            }
        }
        let gone: Vec<TableRef> = p
            .tables
            .keys()
            .filter(|t| !seen.contains(*t))
            .cloned()
            .collect();
        for t in gone {
            p.tables.remove(&t);
            let dir = self.table_dir(&t);
            match fs::remove_dir_all(&dir) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
            p.dirty.retain(|f| !f.starts_with(&dir));
            // The dataset's and project's folders go with their last table.
            if let Some(parent) = dir.parent() {
                let _ = fs::remove_dir(parent);
                if let Some(project_dir) = parent.parent() {
                    let _ = fs::remove_dir(project_dir);
                }
            }
        }
        let json = catalog_json(state);
        if json != p.catalog_json {
            let path = self.dir.join(CATALOG);
            write_atomic(&path, |f| f.write_all(json.as_bytes()))?;
            p.catalog_json = json;
            p.dirty.insert(path);
        }
        Ok(())
    }

    fn sync_table(&self, p: &mut Persisted, t: &TableRef, table: &Arc<Table>) -> io::Result<()> {
        let dir = self.table_dir(t);
        // Where the new rows start, and whether the table is written whole as a new
        // generation (rows changed, not only added).
        let (generation, seq, from, new_generation) = match p.tables.get(t) {
            Some(w) if Arc::ptr_eq(&w.table, table) => return Ok(()),
            Some(w) if appended(&w.table, table) => {
                (w.generation, w.next_seq, w.table.batches.len(), false)
            }
            Some(w) => (w.generation + 1, 0, 0, true),
            None => {
                // A new table: whatever an earlier one of the same name left goes.
                match fs::remove_dir_all(&dir) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                    Err(e) => return Err(e),
                }
                (0, 0, 0, false)
            }
        };
        let batches = &table.batches[from..];
        let mut next_seq = seq;
        if !batches.is_empty() || new_generation {
            fs::create_dir_all(&dir)?;
            let path = dir.join(segment_name(generation, seq));
            self.write_segment(&path, table, batches)?;
            p.dirty.insert(path);
            next_seq = seq + 1;
        }
        if new_generation {
            // The new generation is in place: the old one's files go.
            for entry in fs::read_dir(&dir)? {
                let entry = entry?;
                let name = entry.file_name().to_string_lossy().into_owned();
                if parse_segment(&name).is_some_and(|(g, _)| g < generation) {
                    fs::remove_file(entry.path())?;
                    p.dirty.remove(&entry.path());
                }
            }
        }
        p.tables.insert(
            t.clone(),
            Written {
                table: table.clone(),
                generation,
                next_seq,
            },
        );
        Ok(())
    }

    /// Syncs every file written since the last call to the disk.
    pub(crate) fn flush(&self) -> io::Result<()> {
        let mut p = self.persisted.lock().unwrap_or_else(|e| e.into_inner());
        let mut dirs = HashSet::new();
        for path in p.dirty.drain() {
            if let Ok(f) = fs::File::open(&path) {
                f.sync_all()?;
            }
            if let Some(d) = path.parent() {
                dirs.insert(d.to_path_buf());
            }
        }
        for d in dirs {
            sync_dir(&d);
        }
        sync_dir(&self.dir);
        Ok(())
    }
}

/// Whether `new` is `old` with rows added at the end: same schema and kind, and `old`'s
/// batches (the same arrays, not copies) first.
fn appended(old: &Table, new: &Table) -> bool {
    old.schema == new.schema
        && matches!((&old.kind, &new.kind), (TableKind::Table, TableKind::Table))
        && new.batches.len() >= old.batches.len()
        && old.batches.iter().zip(&new.batches).all(|(a, b)| {
            a.num_rows() == b.num_rows()
                && a.columns()
                    .iter()
                    .zip(b.columns())
                    .all(|(x, y)| Arc::ptr_eq(x, y))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_safe_file_names() {
        assert_eq!(encode_name("my-proj_1"), "my-proj_1");
        assert_eq!(encode_name("example.com:p"), "example%2Ecom%3Ap");
        assert_eq!(encode_name("../x"), "%2E%2E%2Fx");
        assert_eq!(parse_segment(&segment_name(3, 12)), Some((3, 12)));
        assert_eq!(parse_segment("00000001-00000002.tmp"), None);
    }
}
