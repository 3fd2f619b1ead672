//! A table plan: what it takes to bring a live table in step with a schema (usually a Rust
//! type's, [`TableSchema::of`]), and what BigQuery would refuse. Computed without I/O from
//! the live table and the wanted schema; [`TableSync`](super::TableSync) reads the one and
//! applies the plan.

use std::fmt;

use bigq_codec::schema::{FieldMode, FieldType, TableFieldSchema, TableSchema};

use super::table_options::{Clustering, TimePartitioning};
use super::tables::Table;
use crate::ids::TableId;

/// What a [`TablePlan`] does to the table as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlanAction {
    /// The table is in step: nothing to do.
    Nothing,
    /// The table does not exist: create it.
    Create,
    /// Change the table in place: [`TablePlan::changes`].
    Alter,
    /// Drop the table and create it anew with the wanted schema, because of the
    /// [`refusals`](TablePlan::refusals) no change in place can make. Taken only when asked:
    /// the table is empty and [`recreate_if_empty`](super::TableSync::recreate_if_empty) is
    /// set, or a snapshot is taken first
    /// ([`snapshot_before_recreate`](super::TableSync::snapshot_before_recreate)), which
    /// keeps the old rows.
    Recreate {
        /// The snapshot taken first, if any.
        snapshot: Option<TableId>,
    },
    /// Some change is refused (see [`TablePlan::refusals`]): applying the plan is an error.
    Refused,
}

/// One change of a plan, on the column at `path` (`address.city` for a nested one).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum SchemaChange {
    /// Add a column (NULLABLE or REPEATED), nested ones inside their RECORD.
    AddColumn {
        /// The column's path.
        path: String,
        /// The column.
        field: Box<TableFieldSchema>,
    },
    /// Relax a REQUIRED column to NULLABLE.
    RelaxColumn {
        /// The column's path.
        path: String,
    },
    /// Widen a column's type as BigQuery's `ALTER COLUMN SET DATA TYPE` allows (INT64 to
    /// NUMERIC, BIGNUMERIC or FLOAT64; NUMERIC to BIGNUMERIC or FLOAT64; BIGNUMERIC to
    /// FLOAT64).
    WidenColumn {
        /// The column's path.
        path: String,
        /// The live type.
        from: FieldType,
        /// The wanted type.
        to: FieldType,
    },
    /// Change a column's description.
    SetDescription {
        /// The column's path.
        path: String,
        /// The live description.
        from: Option<String>,
        /// The wanted description.
        to: String,
    },
    /// Drop a column the schema no longer has (only with
    /// [`allow_drop_columns`](super::TableSync::allow_drop_columns)).
    DropColumn {
        /// The column's path.
        path: String,
    },
}

impl SchemaChange {
    /// The path of the column changed.
    pub fn path(&self) -> &str {
        match self {
            SchemaChange::AddColumn { path, .. }
            | SchemaChange::RelaxColumn { path }
            | SchemaChange::WidenColumn { path, .. }
            | SchemaChange::SetDescription { path, .. }
            | SchemaChange::DropColumn { path } => path,
        }
    }
}

/// Why a change is refused.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RefusalReason {
    /// The column is in the table, not in the schema, and dropping columns was not allowed
    /// (or it is nested: BigQuery drops top-level columns only).
    Dropped,
    /// The column seems renamed (same place, type and mode, another name): BigQuery would
    /// see a drop and an add, and the rows would lose the column's values.
    Renamed {
        /// The name in the schema.
        to: String,
    },
    /// The wanted type is narrower than the live one (NUMERIC to INT64, ...).
    Narrowed {
        /// The live type.
        from: FieldType,
        /// The wanted type.
        to: FieldType,
    },
    /// The type changes to one BigQuery cannot convert the column to.
    TypeChanged {
        /// The live type.
        from: FieldType,
        /// The wanted type.
        to: FieldType,
    },
    /// A nested column's type would widen: `ALTER COLUMN` reaches top-level columns only.
    NestedWidening {
        /// The live type.
        from: FieldType,
        /// The wanted type.
        to: FieldType,
    },
    /// A NULLABLE column would become REQUIRED.
    Tightened,
    /// A new column is REQUIRED: BigQuery adds NULLABLE or REPEATED columns only (make the
    /// field an `Option`).
    RequiredAdded,
    /// The column would become REPEATED, or stop being so.
    RepeatedChanged {
        /// The live mode.
        from: FieldMode,
        /// The wanted mode.
        to: FieldMode,
    },
    /// The table's partitioning differs from the wanted one.
    PartitioningChanged,
    /// The table's clustering differs from the wanted one.
    ClusteringChanged,
}

/// A change BigQuery (or the plan's options) would not make, on the column at `path` (empty
/// for the table's partitioning and clustering).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Refusal {
    /// The column's path.
    pub path: String,
    /// Why.
    pub reason: RefusalReason,
}

/// What bringing a table in step with a schema takes: see
/// [`TableSync::plan`](super::TableSync::plan). `Display` writes it for people to read, a
/// line per change.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> bigq::Result<()> {
/// # let emulator = bigq_emulator::Emulator::start().await.unwrap();
/// # let client = bigq::Client::builder()
/// #     .with_project(emulator.project())
/// #     .with_emulator(emulator.rest_endpoint())
/// #     .build()
/// #     .await?;
/// # client.create_dataset(bigq::admin::Dataset::new("shop")).await?;
/// #[derive(bigq::Schema)]
/// struct Order {
///     id: i64,
///     amount: Option<i64>,
/// }
/// client.table("shop.orders").sync::<Order>().await?; // creates it
///
/// // Later the type grows a field and a wider amount.
/// #[derive(bigq::Schema)]
/// struct OrderV2 {
///     id: i64,
///     amount: Option<bigq::value::Numeric>,
///     #[bigq(description = "free text")]
///     note: Option<String>,
/// }
/// let plan = client.table("shop.orders").plan::<OrderV2>().await?;
/// let text = plan.to_string();
/// let lines: Vec<&str> = text.lines().skip(1).collect();
/// assert_eq!(
///     lines,
///     [
///         "    ~ column amount: INT64 -> NUMERIC",
///         "    + column note STRING NULLABLE",
///     ]
/// );
/// let done = client.table("shop.orders").sync::<OrderV2>().await?;
/// assert_eq!(done.table.schema.unwrap().fields.len(), 3);
/// assert!(client.table("shop.orders").sync::<OrderV2>().await?.plan.is_empty());
/// # Ok(()) }
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct TablePlan {
    /// The table.
    pub table: TableId,
    /// What happens to the table as a whole.
    pub action: PlanAction,
    /// The changes in place, in the order they are applied.
    pub changes: Vec<SchemaChange>,
    /// The changes refused.
    pub refusals: Vec<Refusal>,
    /// The wanted schema.
    pub schema: TableSchema,
    /// The live table the plan was made from (`None` when it is missing).
    pub live: Option<Table>,
}

impl TablePlan {
    /// Whether the plan does nothing.
    pub fn is_empty(&self) -> bool {
        self.action == PlanAction::Nothing
    }
}

/// What the plan's options allow; see [`TableSync`](super::TableSync).
#[derive(Debug, Clone, Default)]
pub(crate) struct PlanOptions {
    pub(crate) allow_drop_columns: bool,
    pub(crate) recreate_if_empty: bool,
    pub(crate) snapshot: Option<TableId>,
    pub(crate) time_partitioning: Option<TimePartitioning>,
    pub(crate) clustering: Option<Vec<String>>,
}

/// Whether `ALTER COLUMN SET DATA TYPE` widens `from` to `to` (BigQuery's coercions).
pub(crate) fn widens(from: &FieldType, to: &FieldType) -> bool {
    use FieldType as T;
    matches!(
        (from, to),
        (T::Int64, T::Numeric | T::BigNumeric | T::Float64)
            | (T::Numeric, T::BigNumeric | T::Float64)
            | (T::BigNumeric, T::Float64)
    )
}

/// The plan for `live` (or a missing table) and the wanted `schema`.
pub(crate) fn plan(
    table: TableId,
    live: Option<Table>,
    schema: TableSchema,
    options: &PlanOptions,
) -> TablePlan {
    let Some(live_table) = &live else {
        return TablePlan {
            table,
            action: PlanAction::Create,
            changes: Vec::new(),
            refusals: Vec::new(),
            schema,
            live,
        };
    };
    let mut changes = Vec::new();
    let mut refusals = Vec::new();
    let empty = TableSchema::default();
    let live_schema = live_table.schema.as_ref().unwrap_or(&empty);
    diff(
        &live_schema.fields,
        &schema.fields,
        "",
        options,
        &mut changes,
        &mut refusals,
    );
    if let Some(p) = &options.time_partitioning
        && live_table.time_partitioning.as_ref() != Some(p)
    {
        refusals.push(Refusal {
            path: String::new(),
            reason: RefusalReason::PartitioningChanged,
        });
    }
    if let Some(c) = &options.clustering {
        let live_c = live_table
            .clustering
            .as_ref()
            .map(|c| c.fields.as_slice())
            .unwrap_or_default();
        if live_c != c.as_slice() {
            refusals.push(Refusal {
                path: String::new(),
                reason: RefusalReason::ClusteringChanged,
            });
        }
    }
    let action = if !refusals.is_empty() {
        let rows = live_table.num_rows.unwrap_or(0);
        if options.snapshot.is_some() {
            PlanAction::Recreate {
                snapshot: options.snapshot.clone(),
            }
        } else if rows == 0 && options.recreate_if_empty {
            PlanAction::Recreate { snapshot: None }
        } else {
            PlanAction::Refused
        }
    } else if changes.is_empty() {
        PlanAction::Nothing
    } else {
        PlanAction::Alter
    };
    TablePlan {
        table,
        action,
        changes,
        refusals,
        schema,
        live,
    }
}

fn diff(
    live: &[TableFieldSchema],
    want: &[TableFieldSchema],
    prefix: &str,
    options: &PlanOptions,
    changes: &mut Vec<SchemaChange>,
    refusals: &mut Vec<Refusal>,
) {
    let find = |fields: &[TableFieldSchema], name: &str| {
        fields
            .iter()
            .position(|f| f.name.eq_ignore_ascii_case(name))
    };
    let mut renamed_to = Vec::new();
    for (i, l) in live.iter().enumerate() {
        let path = format!("{prefix}{}", l.name);
        let Some(w) = find(want, &l.name).and_then(|j| want.get(j)) else {
            // Same place, type and mode under a name the table lacks: a rename.
            let rename = want.get(i).filter(|w| {
                find(live, &w.name).is_none()
                    && w.field_type == l.field_type
                    && w.mode() == l.mode()
                    && w.fields == l.fields
            });
            let reason = match rename {
                Some(w) => {
                    renamed_to.push(w.name.clone());
                    RefusalReason::Renamed { to: w.name.clone() }
                }
                None if options.allow_drop_columns && prefix.is_empty() => {
                    changes.push(SchemaChange::DropColumn { path });
                    continue;
                }
                None => RefusalReason::Dropped,
            };
            refusals.push(Refusal { path, reason });
            continue;
        };
        let (lm, wm) = (l.mode(), w.mode());
        if (lm == FieldMode::Repeated) != (wm == FieldMode::Repeated) {
            refusals.push(Refusal {
                path,
                reason: RefusalReason::RepeatedChanged { from: lm, to: wm },
            });
            continue;
        }
        if l.field_type != w.field_type {
            let (from, to) = (l.field_type.clone(), w.field_type.clone());
            let reason = if widens(&from, &to) {
                if prefix.is_empty() && lm != FieldMode::Repeated {
                    changes.push(SchemaChange::WidenColumn {
                        path: path.clone(),
                        from,
                        to,
                    });
                    None
                } else {
                    Some(RefusalReason::NestedWidening { from, to })
                }
            } else if widens(&to, &from) {
                Some(RefusalReason::Narrowed { from, to })
            } else {
                Some(RefusalReason::TypeChanged { from, to })
            };
            if let Some(reason) = reason {
                refusals.push(Refusal { path, reason });
                continue;
            }
        }
        match (lm, wm) {
            (FieldMode::Required, FieldMode::Nullable) => {
                changes.push(SchemaChange::RelaxColumn { path: path.clone() });
            }
            (FieldMode::Nullable, FieldMode::Required) => {
                refusals.push(Refusal {
                    path: path.clone(),
                    reason: RefusalReason::Tightened,
                });
            }
            _ => {}
        }
        if let Some(d) = &w.description
            && l.description.as_ref() != Some(d)
        {
            changes.push(SchemaChange::SetDescription {
                path: path.clone(),
                from: l.description.clone(),
                to: d.clone(),
            });
        }
        if l.field_type == FieldType::Record {
            diff(
                &l.fields,
                &w.fields,
                &format!("{path}."),
                options,
                changes,
                refusals,
            );
        }
    }
    for w in want {
        if find(live, &w.name).is_some() || renamed_to.contains(&w.name) {
            continue;
        }
        let path = format!("{prefix}{}", w.name);
        if w.mode() == FieldMode::Required {
            refusals.push(Refusal {
                path,
                reason: RefusalReason::RequiredAdded,
            });
        } else {
            changes.push(SchemaChange::AddColumn {
                path,
                field: Box::new(w.clone()),
            });
        }
    }
}

/// `live`'s columns with the plan's additions, relaxations and descriptions: the schema
/// `tables.patch` is sent (widenings and drops go through `ALTER TABLE`).
pub(crate) fn patched_schema(live: &TableSchema, changes: &[SchemaChange]) -> TableSchema {
    let mut out = live.clone();
    for c in changes {
        match c {
            SchemaChange::AddColumn { path, field } => {
                let parent = path.rsplit_once('.').map(|(p, _)| p);
                let fields = match parent {
                    None => Some(&mut out.fields),
                    Some(p) => field_at(&mut out.fields, p).map(|f| &mut f.fields),
                };
                if let Some(fields) = fields {
                    fields.push((**field).clone());
                }
            }
            SchemaChange::RelaxColumn { path } => {
                if let Some(f) = field_at(&mut out.fields, path) {
                    f.mode = Some(FieldMode::Nullable);
                }
            }
            SchemaChange::SetDescription { path, to, .. } => {
                if let Some(f) = field_at(&mut out.fields, path) {
                    f.description = Some(to.clone());
                }
            }
            SchemaChange::WidenColumn { .. } | SchemaChange::DropColumn { .. } => {}
        }
    }
    out
}

fn field_at<'a>(
    fields: &'a mut [TableFieldSchema],
    path: &str,
) -> Option<&'a mut TableFieldSchema> {
    let (head, rest) = match path.split_once('.') {
        Some((h, r)) => (h, Some(r)),
        None => (path, None),
    };
    let f = fields
        .iter_mut()
        .find(|f| f.name.eq_ignore_ascii_case(head))?;
    match rest {
        None => Some(f),
        Some(r) => field_at(&mut f.fields, r),
    }
}

/// A column's type for people: `INT64`, `STRING REPEATED`, `STRUCT<2 fields> NULLABLE`.
fn column_type(f: &TableFieldSchema) -> String {
    let t = if f.field_type == FieldType::Record {
        format!("STRUCT<{} fields>", f.fields.len())
    } else {
        f.field_type.standard_sql_name().to_string()
    };
    let mode = match f.mode() {
        FieldMode::Nullable => "NULLABLE",
        FieldMode::Required => "REQUIRED",
        FieldMode::Repeated => "REPEATED",
    };
    format!("{t} {mode}")
}

impl fmt::Display for RefusalReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = FieldType::standard_sql_name;
        match self {
            RefusalReason::Dropped => f.write_str(
                "is in the table but not in the schema (dropping columns is not allowed)",
            ),
            RefusalReason::Renamed { to } => write!(
                f,
                "seems renamed to {to}: BigQuery cannot rename a column and keep its values this way"
            ),
            RefusalReason::Narrowed { from, to } => {
                write!(f, "would narrow from {} to {}", t(from), t(to))
            }
            RefusalReason::TypeChanged { from, to } => write!(
                f,
                "would change type from {} to {}, which BigQuery cannot convert",
                t(from),
                t(to)
            ),
            RefusalReason::NestedWidening { from, to } => write!(
                f,
                "would widen from {} to {}, but ALTER COLUMN reaches top-level columns only",
                t(from),
                t(to)
            ),
            RefusalReason::Tightened => f.write_str("would change from NULLABLE to REQUIRED"),
            RefusalReason::RequiredAdded => {
                f.write_str("is new and REQUIRED: BigQuery adds NULLABLE or REPEATED columns only")
            }
            RefusalReason::RepeatedChanged { from, to } => {
                write!(f, "would change mode from {from:?} to {to:?}")
            }
            RefusalReason::PartitioningChanged => {
                f.write_str("partitioning differs from the wanted one")
            }
            RefusalReason::ClusteringChanged => {
                f.write_str("clustering differs from the wanted one")
            }
        }
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            write!(f, "table: {}", self.reason)
        } else {
            write!(f, "column {} {}", self.path, self.reason)
        }
    }
}

impl fmt::Display for SchemaChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = FieldType::standard_sql_name;
        match self {
            SchemaChange::AddColumn { path, field } => {
                write!(f, "+ column {path} {}", column_type(field))
            }
            SchemaChange::RelaxColumn { path } => {
                write!(f, "~ column {path}: REQUIRED -> NULLABLE")
            }
            SchemaChange::WidenColumn { path, from, to } => {
                write!(f, "~ column {path}: {} -> {}", t(from), t(to))
            }
            SchemaChange::SetDescription { path, from, to } => match from {
                Some(from) => write!(f, "~ column {path}: description {from:?} -> {to:?}"),
                None => write!(f, "~ column {path}: description -> {to:?}"),
            },
            SchemaChange::DropColumn { path } => write!(f, "- column {path}"),
        }
    }
}

impl fmt::Display for TablePlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = &self.table;
        match &self.action {
            PlanAction::Nothing => return writeln!(f, "table {t}: in step, nothing to do"),
            PlanAction::Create => {
                writeln!(f, "+ table {t}")?;
                for c in &self.schema.fields {
                    writeln!(f, "    + column {} {}", c.name, column_type(c))?;
                }
                return Ok(());
            }
            PlanAction::Alter => writeln!(f, "~ table {t}: {} to change", self.changes.len())?,
            PlanAction::Recreate { snapshot } => {
                match snapshot {
                    Some(s) => writeln!(f, "-/+ table {t}: recreated, after a snapshot {s}")?,
                    None => writeln!(f, "-/+ table {t}: recreated (it is empty)")?,
                }
                for r in &self.refusals {
                    writeln!(f, "    ! {r}")?;
                }
                for c in &self.schema.fields {
                    writeln!(f, "    + column {} {}", c.name, column_type(c))?;
                }
                return Ok(());
            }
            PlanAction::Refused => writeln!(
                f,
                "! table {t}: {} refused, {} to change",
                self.refusals.len(),
                self.changes.len()
            )?,
        }
        for c in &self.changes {
            writeln!(f, "    {c}")?;
        }
        for r in &self.refusals {
            writeln!(f, "    ! {r}")?;
        }
        Ok(())
    }
}

/// The wanted clustering as the table resource spells it.
pub(crate) fn clustering(columns: &[String]) -> Clustering {
    Clustering {
        fields: columns.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bigq_codec::schema::FieldMode::{Nullable, Repeated, Required};

    fn col(name: &str, t: FieldType, m: FieldMode) -> TableFieldSchema {
        TableFieldSchema::new(name, t).with_mode(m)
    }

    fn live(fields: Vec<TableFieldSchema>, rows: u64) -> Table {
        let mut t = Table::new("ds.t", TableSchema::new(fields));
        t.num_rows = Some(rows);
        t
    }

    fn id() -> TableId {
        TableId::new("p", "ds", "t")
    }

    #[test]
    fn every_kind_of_change_in_place() {
        let old = vec![
            col("id", FieldType::Int64, Required),
            col("amount", FieldType::Int64, Nullable),
            TableFieldSchema::record("addr", vec![col("city", FieldType::String, Nullable)]),
            col("gone", FieldType::Bytes, Nullable),
        ];
        let want = TableSchema::new(vec![
            col("id", FieldType::Int64, Nullable).with_description("the key"),
            col("amount", FieldType::Numeric, Nullable),
            TableFieldSchema::record(
                "addr",
                vec![
                    col("city", FieldType::String, Nullable),
                    col("zip", FieldType::String, Nullable),
                ],
            ),
            col("note", FieldType::String, Nullable),
            col("tags", FieldType::String, Repeated),
        ]);
        let options = PlanOptions {
            allow_drop_columns: true,
            ..Default::default()
        };
        let p = plan(id(), Some(live(old, 3)), want, &options);
        assert_eq!(p.action, PlanAction::Alter);
        assert!(p.refusals.is_empty(), "{p}");
        let paths: Vec<String> = p.changes.iter().map(|c| c.to_string()).collect();
        assert_eq!(
            paths,
            [
                "~ column id: REQUIRED -> NULLABLE",
                "~ column id: description -> \"the key\"",
                "~ column amount: INT64 -> NUMERIC",
                "+ column addr.zip STRING NULLABLE",
                "- column gone",
                "+ column note STRING NULLABLE",
                "+ column tags STRING REPEATED",
            ]
        );
        let patched = patched_schema(
            p.live.as_ref().unwrap().schema.as_ref().unwrap(),
            &p.changes,
        );
        assert_eq!(patched.fields[0].mode(), Nullable);
        assert_eq!(patched.fields[2].fields[1].name, "zip");
        assert_eq!(patched.fields.len(), 6, "adds two, drops none yet");
    }

    #[test]
    fn refusals_name_their_column() {
        let old = vec![
            col("a", FieldType::Numeric, Nullable),
            col("b", FieldType::String, Nullable),
            col("c", FieldType::String, Nullable),
            col("d", FieldType::String, Repeated),
            col("e", FieldType::Int64, Nullable),
            col("old_name", FieldType::Date, Nullable),
        ];
        let want = TableSchema::new(vec![
            col("a", FieldType::Int64, Nullable),
            col("b", FieldType::Int64, Nullable),
            col("c", FieldType::String, Required),
            col("d", FieldType::String, Nullable),
            col("e", FieldType::Int64, Nullable),
            col("new_name", FieldType::Date, Nullable),
            col("f", FieldType::Bool, Required),
        ]);
        let p = plan(id(), Some(live(old, 1)), want, &PlanOptions::default());
        assert_eq!(p.action, PlanAction::Refused);
        let got: Vec<(&str, &RefusalReason)> = p
            .refusals
            .iter()
            .map(|r| (r.path.as_str(), &r.reason))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "a",
                    &RefusalReason::Narrowed {
                        from: FieldType::Numeric,
                        to: FieldType::Int64
                    }
                ),
                (
                    "b",
                    &RefusalReason::TypeChanged {
                        from: FieldType::String,
                        to: FieldType::Int64
                    }
                ),
                ("c", &RefusalReason::Tightened),
                (
                    "d",
                    &RefusalReason::RepeatedChanged {
                        from: Repeated,
                        to: Nullable
                    }
                ),
                (
                    "old_name",
                    &RefusalReason::Renamed {
                        to: "new_name".into()
                    }
                ),
                ("f", &RefusalReason::RequiredAdded),
            ]
        );
        assert!(
            p.to_string()
                .contains("! column b would change type from STRING to INT64")
        );
    }

    #[test]
    fn a_drop_is_refused_unless_allowed_and_an_empty_table_may_be_recreated() {
        let old = vec![
            col("a", FieldType::Int64, Nullable),
            col("b", FieldType::Int64, Nullable),
        ];
        let want = TableSchema::new(vec![col("a", FieldType::Int64, Nullable)]);
        let p = plan(
            id(),
            Some(live(old.clone(), 5)),
            want.clone(),
            &PlanOptions::default(),
        );
        assert_eq!(p.refusals[0].reason, RefusalReason::Dropped);
        assert_eq!(p.refusals[0].path, "b");
        let recreate = PlanOptions {
            recreate_if_empty: true,
            ..Default::default()
        };
        let p = plan(id(), Some(live(old.clone(), 5)), want.clone(), &recreate);
        assert_eq!(p.action, PlanAction::Refused, "not empty");
        let p = plan(id(), Some(live(old, 0)), want, &recreate);
        assert_eq!(p.action, PlanAction::Recreate { snapshot: None });
    }

    #[test]
    fn a_missing_table_is_created_and_an_equal_one_is_left_alone() {
        let want = TableSchema::new(vec![col("a", FieldType::Int64, Required)]);
        let p = plan(id(), None, want.clone(), &PlanOptions::default());
        assert_eq!(p.action, PlanAction::Create);
        assert_eq!(
            p.to_string(),
            "+ table p.ds.t\n    + column a INT64 REQUIRED\n"
        );
        let p = plan(
            id(),
            Some(live(want.fields.clone(), 0)),
            want,
            &PlanOptions::default(),
        );
        assert!(p.is_empty());
    }

    #[test]
    fn a_nested_widening_is_refused() {
        let old = vec![TableFieldSchema::record(
            "r",
            vec![col("n", FieldType::Int64, Nullable)],
        )];
        let want = TableSchema::new(vec![TableFieldSchema::record(
            "r",
            vec![col("n", FieldType::Float64, Nullable)],
        )]);
        let p = plan(id(), Some(live(old, 0)), want, &PlanOptions::default());
        assert_eq!(p.refusals[0].path, "r.n");
        assert!(matches!(
            p.refusals[0].reason,
            RefusalReason::NestedWidening { .. }
        ));
    }
}
