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
//! Every file is written to a `.tmp` name, synced to the disk and renamed into place, so a
//! reader sees either the old or the new file, never half of one. Writing happens while the
//! change is being committed, under the catalog's write lock, before the request that made
//! it is answered; a change that cannot be written fails its request and is undone in
//! memory. The order keeps every state on disk loadable: new row files first, then
//! `catalog.json`, then the deletion of the files the new catalog no longer reads (an older
//! generation, a dropped table). At start, a file that cannot be read, or whose rows do not
//! fit its table, is set aside (renamed to `*.damaged`) with a warning instead of keeping
//! the emulator from starting; so is a damaged `catalog.json`.
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

/// Writes `path` through a temporary file, synced to the disk, and a rename (the
/// directory synced too, so the rename itself survives a crash).
fn write_atomic(
    path: &Path,
    write: impl FnOnce(&mut fs::File) -> io::Result<()>,
) -> io::Result<()> {
    let tmp = path.with_extension("tmp");
    let mut f = fs::File::create(&tmp)?;
    let written = write(&mut f)
        .and_then(|()| f.flush())
        .and_then(|()| f.sync_all());
    drop(f);
    if let Err(e) = written {
        let _ = fs::remove_file(&tmp);
        return Err(e);
    }
    fs::rename(&tmp, path)?;
    if let Some(dir) = path.parent() {
        sync_dir(dir)?;
    }
    Ok(())
}

fn sync_dir(dir: &Path) -> io::Result<()> {
    fs::File::open(dir)?.sync_all()
}

/// Renames a file that cannot be loaded to `{name}.damaged`, saying so.
fn set_aside(path: &Path, why: &str) {
    let mut aside = path.as_os_str().to_owned();
    aside.push(".damaged");
    let moved = fs::rename(path, &aside);
    eprintln!(
        "bigq-emulator: {} cannot be loaded ({why}); {}",
        path.display(),
        match moved {
            Ok(()) => format!("set aside as {}", Path::new(&aside).display()),
            Err(e) => format!("and cannot be set aside: {e}"),
        }
    );
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
        "options": t.options,
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
        "options": d.options,
        "tables": tables,
        "routines": d.routines,
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

/// The batches of one segment file, in `table`'s layout, or why they cannot be loaded.
fn read_segment(path: &Path, table: &Table, t: &TableRef) -> Result<Vec<RecordBatch>, String> {
    let file = fs::File::open(path).map_err(|e| e.to_string())?;
    let reader =
        StreamReader::try_new(io::BufReader::new(file), None).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for batch in reader {
        let batch = batch.map_err(|e| e.to_string())?;
        let batch = if batch.schema() == table.arrow_schema {
            batch
        } else {
            RecordBatch::try_new(table.arrow_schema.clone(), batch.columns().to_vec())
                .map_err(|e| format!("rows do not fit table {t}: {e}"))?
        };
        out.push(batch);
    }
    Ok(out)
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
        let root: Value = match serde_json::from_str(&text) {
            Ok(root) => root,
            Err(e) => {
                // A catalog cut short or overwritten: start empty rather than not at all,
                // keeping the file (and the row files) for whoever wants them back.
                set_aside(&path, &e.to_string());
                return Ok((store, state));
            }
        };
        if root.get("format").and_then(Value::as_str) != Some(FORMAT) {
            // Another program's directory, or a newer format: refuse, touching nothing.
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
                if let Some(Value::Object(options)) = d.get("options") {
                    ds.options = options.clone();
                }
                ds.labels = serde_json::from_value::<BTreeMap<String, String>>(
                    d.get("labels").cloned().unwrap_or(Value::Null),
                )
                .unwrap_or_default();
                if let Some(Value::Object(routines)) = d.get("routines") {
                    for (rid, r) in routines {
                        if let Value::Object(r) = r {
                            ds.routines.insert(rid.clone(), r.clone());
                        }
                    }
                }
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
                    if let Some(serde_json::Value::Object(options)) = t.get("options") {
                        table.options = options.clone();
                    }
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
                // An unfinished write (files set aside stay for whoever wants them).
                None if name.ends_with(".tmp") => {
                    let _ = fs::remove_file(entry.path());
                }
                None => {}
            }
        }
        segments.sort();
        let mut generations: Vec<u64> = segments.iter().map(|((g, _), _)| *g).collect();
        generations.dedup();
        // The newest generation with a file that loads (a damaged file is set aside, its
        // rows lost but not the others'): a newer generation whose rows do not fit the
        // catalog's schema was written by a change whose catalog never reached the disk.
        let mut loaded = None;
        for &generation in generations.iter().rev() {
            let mut batches = Vec::new();
            let mut next_seq = None;
            for ((_, seq), path) in segments.iter().filter(|((g, _), _)| *g == generation) {
                match read_segment(path, table, t) {
                    Ok(b) => {
                        batches.extend(b);
                        next_seq = Some(seq + 1);
                    }
                    Err(why) => set_aside(path, &why),
                }
            }
            if let Some(next_seq) = next_seq {
                loaded = Some((generation, next_seq, batches));
                break;
            }
        }
        let Some((generation, next_seq, batches)) = loaded else {
            return Ok((generations.last().map_or(0, |g| g + 1), 0));
        };
        table.batches = batches;
        for ((g, _), path) in &segments {
            if *g < generation {
                let _ = fs::remove_file(path);
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
        // Files the new state no longer reads: deleted once the new catalog is on disk.
        let mut obsolete = Vec::new();
        for (project, datasets) in &state.projects {
            for (dataset, ds) in datasets {
                for (name, table) in &ds.tables {
                    let t = TableRef {
                        project: project.clone(),
                        dataset: dataset.clone(),
                        table: name.clone(),
                    };
                    self.sync_table(&mut p, &t, table, &mut obsolete)?;
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
        let json = catalog_json(state);
        if json != p.catalog_json {
            let path = self.dir.join(CATALOG);
            write_atomic(&path, |f| f.write_all(json.as_bytes()))?;
            p.catalog_json = json;
        }
        // Only now may what the old catalog read go.
        for path in obsolete {
            match fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        for t in gone {
            p.tables.remove(&t);
            let dir = self.table_dir(&t);
            match fs::remove_dir_all(&dir) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
            // The dataset's and project's folders go with their last table.
            if let Some(parent) = dir.parent() {
                let _ = fs::remove_dir(parent);
                if let Some(project_dir) = parent.parent() {
                    let _ = fs::remove_dir(project_dir);
                }
            }
        }
        Ok(())
    }

    fn sync_table(
        &self,
        p: &mut Persisted,
        t: &TableRef,
        table: &Arc<Table>,
        obsolete: &mut Vec<PathBuf>,
    ) -> io::Result<()> {
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
                // A new table: whatever an earlier one of the same name left is read no
                // more, and goes once the catalog is written.
                let newest = existing_generations(&dir)?.into_iter().max();
                obsolete.extend(segment_files(&dir)?);
                (newest.map_or(0, |g| g + 1), 0, 0, true)
            }
        };
        let batches = &table.batches[from..];
        let mut next_seq = seq;
        if !batches.is_empty() || new_generation {
            fs::create_dir_all(&dir)?;
            let path = dir.join(segment_name(generation, seq));
            self.write_segment(&path, table, batches)?;
            next_seq = seq + 1;
        }
        if new_generation {
            // The old generations' files go once the catalog is written.
            for path in segment_files(&dir)? {
                let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
                if name
                    .and_then(|n| parse_segment(&n))
                    .is_some_and(|(g, _)| g < generation)
                {
                    obsolete.push(path);
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

    /// Syncs the data directory itself (every file is synced as it is written).
    pub(crate) fn flush(&self) -> io::Result<()> {
        sync_dir(&self.dir)
    }
}

/// The segment files in a table's folder (none when it does not exist).
fn segment_files(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let entries = match fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    let mut out = Vec::new();
    for entry in entries {
        let entry = entry?;
        if parse_segment(&entry.file_name().to_string_lossy()).is_some() {
            out.push(entry.path());
        }
    }
    Ok(out)
}

/// The generations of the segment files in a table's folder.
fn existing_generations(dir: &Path) -> io::Result<Vec<u64>> {
    Ok(segment_files(dir)?
        .iter()
        .filter_map(|p| parse_segment(&p.file_name()?.to_string_lossy()))
        .map(|(g, _)| g)
        .collect())
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
