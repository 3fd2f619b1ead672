//! Keeping a table in step with a Rust type: [`Client::table`] gives a [`TableSync`], whose
//! `plan::<T>()` compares the live table with `T`'s schema and whose `sync::<T>()` applies
//! the plan.

use bigq_codec::schema::{Schema, TableSchema};

use super::plan::{self, PlanAction, PlanOptions, SchemaChange, TablePlan};
use super::table_options::TimePartitioning;
use super::tables::Table;
use crate::client::Client;
use crate::error::{Error, Result};
use crate::ids::{IntoTableId, TableId, table_id};

/// A table to keep in step with a schema; from [`Client::table`].
#[derive(Clone)]
#[must_use]
pub struct TableSync {
    client: Client,
    id: Result<TableId, String>,
    options: PlanOptions,
}

/// What [`TableSync::sync`] did: the plan it applied, and the table after it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct SyncOutcome {
    /// The plan applied (empty when the table was in step).
    pub plan: TablePlan,
    /// The table as it is now.
    pub table: Table,
}

impl Client {
    /// The table `id` (as in [`get_table`](Client::get_table)), to bring in step with a
    /// Rust type: [`TableSync::plan`] says what it would take, [`TableSync::sync`] does it.
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
    /// # client.create_dataset(bigq::admin::Dataset::new("ds")).await?;
    /// use bigq::admin::PlanAction;
    /// #[derive(bigq::Schema)]
    /// struct Event {
    ///     id: i64,
    ///     kind: Option<String>,
    /// }
    /// let plan = client.table("ds.events").plan::<Event>().await?;
    /// assert_eq!(plan.action, PlanAction::Create);
    /// # Ok(()) }
    /// ```
    pub fn table(&self, id: impl IntoTableId) -> TableSync {
        TableSync {
            client: self.clone(),
            id: table_id(&self.inner.project, id).map_err(|e| e.to_string()),
            options: PlanOptions::default(),
        }
    }
}

impl TableSync {
    /// Drops the columns the schema no longer has (top-level ones; refused by default).
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
    /// # client.create_dataset(bigq::admin::Dataset::new("ds")).await?;
    /// # client.query("CREATE TABLE ds.t (id INT64 NOT NULL, old STRING)").execute().await?;
    /// #[derive(bigq::Schema)]
    /// struct Row {
    ///     id: i64,
    /// }
    /// let refused = client.table("ds.t").plan::<Row>().await?;
    /// assert_eq!(refused.refusals[0].path, "old");
    /// let done = client.table("ds.t").allow_drop_columns(true).sync::<Row>().await?;
    /// assert_eq!(done.table.schema.unwrap().fields.len(), 1);
    /// # Ok(()) }
    /// ```
    pub fn allow_drop_columns(mut self, yes: bool) -> Self {
        self.options.allow_drop_columns = yes;
        self
    }

    /// Recreates an empty table when a change cannot be made in place (a type change, a
    /// rename, ...): it is dropped and created with the schema.
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
    /// # client.create_dataset(bigq::admin::Dataset::new("ds")).await?;
    /// # client.query("CREATE TABLE ds.t (id STRING)").execute().await?;
    /// use bigq::admin::PlanAction;
    /// use bigq::schema::FieldType;
    /// #[derive(bigq::Schema)]
    /// struct Row {
    ///     id: Option<i64>,
    /// }
    /// let done = client.table("ds.t").recreate_if_empty(true).sync::<Row>().await?;
    /// assert_eq!(done.plan.action, PlanAction::Recreate { snapshot: None });
    /// assert_eq!(done.table.schema.unwrap().fields[0].field_type, FieldType::Int64);
    /// # Ok(()) }
    /// ```
    pub fn recreate_if_empty(mut self, yes: bool) -> Self {
        self.options.recreate_if_empty = yes;
        self
    }

    /// Recreates the table, empty or not, when a change cannot be made in place, after
    /// taking a snapshot of it (`CREATE SNAPSHOT TABLE snapshot CLONE table`): the old rows
    /// stay in the snapshot. `snapshot` is named as in [`Client::get_table`].
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
    /// # client.create_dataset(bigq::admin::Dataset::new("ds")).await?;
    /// # client.query("CREATE TABLE ds.t AS SELECT 'a' AS id").execute().await?;
    /// #[derive(bigq::Schema)]
    /// struct Row {
    ///     id: Option<i64>,
    /// }
    /// let sync = client.table("ds.t").snapshot_before_recreate("ds.t_before")?;
    /// let done = sync.sync::<Row>().await?;
    /// assert_eq!(done.table.num_rows, Some(0));
    /// assert_eq!(client.get_table("ds.t_before").await?.num_rows, Some(1));
    /// # Ok(()) }
    /// ```
    pub fn snapshot_before_recreate(mut self, snapshot: impl IntoTableId) -> Result<Self> {
        let project = self.client.inner.project.clone();
        self.options.snapshot = Some(table_id(&project, snapshot)?);
        Ok(self)
    }

    /// The wanted time partitioning: a new table gets it, a live one with another is a
    /// refusal ([`RefusalReason::PartitioningChanged`](super::RefusalReason)).
    pub fn with_time_partitioning(mut self, p: TimePartitioning) -> Self {
        self.options.time_partitioning = Some(p);
        self
    }

    /// The wanted clustering columns: a new table gets them, a live one with others is a
    /// refusal ([`RefusalReason::ClusteringChanged`](super::RefusalReason)).
    pub fn with_clustering<S: Into<String>>(
        mut self,
        columns: impl IntoIterator<Item = S>,
    ) -> Self {
        self.options.clustering = Some(columns.into_iter().map(Into::into).collect());
        self
    }

    fn id(&self) -> Result<TableId> {
        self.id.clone().map_err(Error::config)
    }

    /// What bringing the table in step with `T`'s schema ([`TableSchema::of`]) takes, and
    /// what BigQuery would refuse; nothing is changed.
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
    /// # client.create_dataset(bigq::admin::Dataset::new("ds")).await?;
    /// # client.query("CREATE TABLE ds.t (id INT64 NOT NULL, n INT64)").execute().await?;
    /// use bigq::admin::{PlanAction, SchemaChange};
    /// #[derive(bigq::Schema)]
    /// struct Row {
    ///     id: i64,
    ///     n: Option<bigq::value::Numeric>,
    ///     note: Option<String>,
    /// }
    /// let plan = client.table("ds.t").plan::<Row>().await?;
    /// assert_eq!(plan.action, PlanAction::Alter);
    /// assert_eq!(plan.changes.len(), 2);
    /// assert!(matches!(&plan.changes[0], SchemaChange::WidenColumn { path, .. } if path == "n"));
    /// assert!(plan.to_string().contains("+ column note STRING NULLABLE"));
    /// # Ok(()) }
    /// ```
    pub async fn plan<T: Schema + ?Sized>(&self) -> Result<TablePlan> {
        self.plan_schema(TableSchema::of::<T>()).await
    }

    /// [`plan`](TableSync::plan) for a schema given as it is.
    pub async fn plan_schema(&self, schema: TableSchema) -> Result<TablePlan> {
        let id = self.id()?;
        let live = match self.client.get_table(id.clone()).await {
            Ok(t) => Some(t),
            Err(e) if e.is_not_found() => None,
            Err(e) => return Err(e),
        };
        Ok(plan::plan(id, live, schema, &self.options))
    }

    /// Brings the table in step with `T`'s schema: plans, then applies the plan. Columns
    /// are added, relaxed and described through `tables.patch` with the etag the plan read
    /// (a table changed meanwhile is an error, [`Error::is_precondition_failed`]);
    /// widened and dropped through `ALTER TABLE`. A table in step is left alone, so a
    /// second sync changes nothing. A plan with refusals is an error naming each column.
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
    /// # client.create_dataset(bigq::admin::Dataset::new("ds")).await?;
    /// #[derive(bigq::Schema)]
    /// struct Row {
    ///     id: i64,
    /// }
    /// let first = client.table("ds.t").sync::<Row>().await?;
    /// let again = client.table("ds.t").sync::<Row>().await?;
    /// assert!(!first.plan.is_empty() && again.plan.is_empty());
    /// assert_eq!(first.table.etag, again.table.etag);
    /// # Ok(()) }
    /// ```
    pub async fn sync<T: Schema + ?Sized>(&self) -> Result<SyncOutcome> {
        self.sync_schema(TableSchema::of::<T>()).await
    }

    /// [`sync`](TableSync::sync) to a schema given as it is.
    pub async fn sync_schema(&self, schema: TableSchema) -> Result<SyncOutcome> {
        let plan = self.plan_schema(schema).await?;
        let table = self.apply(&plan).await?;
        Ok(SyncOutcome { plan, table })
    }

    /// Applies a plan made by [`plan`](TableSync::plan) (by this `TableSync` or another).
    pub async fn apply(&self, plan: &TablePlan) -> Result<Table> {
        let client = &self.client;
        let id = &plan.table;
        match &plan.action {
            PlanAction::Nothing => match &plan.live {
                Some(t) => Ok(t.clone()),
                None => client.get_table(id.clone()).await,
            },
            PlanAction::Create => client.create_table(self.new_table(plan)).await,
            PlanAction::Refused => {
                let list: Vec<String> = plan.refusals.iter().map(|r| r.to_string()).collect();
                Err(Error::config(format!(
                    "table {id} cannot be brought in step with the schema: {}",
                    list.join("; ")
                )))
            }
            PlanAction::Recreate { snapshot } => {
                self.check_etag(plan).await?;
                if let Some(s) = snapshot {
                    client
                        .query(format!(
                            "CREATE SNAPSHOT TABLE {} CLONE {}",
                            quoted(s),
                            quoted(id)
                        ))
                        .execute()
                        .await?;
                }
                client.delete_table(id.clone()).await?;
                client.create_table(self.new_table(plan)).await
            }
            PlanAction::Alter => self.alter(plan).await,
        }
    }

    async fn alter(&self, plan: &TablePlan) -> Result<Table> {
        let client = &self.client;
        let id = &plan.table;
        let Some(live) = &plan.live else {
            return Err(Error::config(format!(
                "a plan to change table {id} needs the table it was made from"
            )));
        };
        let empty = TableSchema::default();
        let live_schema = live.schema.as_ref().unwrap_or(&empty);
        let patched = plan::patched_schema(live_schema, &plan.changes);
        if &patched != live_schema {
            let mut change = live.clone();
            change.schema = Some(patched);
            client.patch_table(change).await?;
        } else {
            self.check_etag(plan).await?;
        }
        let mut ddl = Vec::new();
        for c in &plan.changes {
            match c {
                SchemaChange::WidenColumn { path, to, .. } => ddl.push(format!(
                    "ALTER COLUMN `{path}` SET DATA TYPE {}",
                    to.standard_sql_name()
                )),
                SchemaChange::DropColumn { path } => ddl.push(format!("DROP COLUMN `{path}`")),
                _ => {}
            }
        }
        if !ddl.is_empty() {
            client
                .query(format!("ALTER TABLE {} {}", quoted(id), ddl.join(", ")))
                .execute()
                .await?;
        }
        client.get_table(id.clone()).await
    }

    /// A change made through a query cannot send the etag: the table is read again, and a
    /// table changed since the plan was made is refused as `tables.patch` would refuse it.
    async fn check_etag(&self, plan: &TablePlan) -> Result<()> {
        let Some(live) = &plan.live else {
            return Ok(());
        };
        let now = self.client.get_table(plan.table.clone()).await?;
        if now.etag != live.etag {
            return Err(Error::api(
                412,
                Some("conditionNotMet".into()),
                format!(
                    "table {} changed since the plan was made (etag {:?}, now {:?})",
                    plan.table, live.etag, now.etag
                ),
            ));
        }
        Ok(())
    }

    fn new_table(&self, plan: &TablePlan) -> Table {
        let t = &plan.table;
        let mut table = Table::new(
            format!("{}.{}.{}", t.project, t.dataset, t.table),
            plan.schema.clone(),
        );
        if let Some(live) = &plan.live {
            table.description = live.description.clone();
            table.labels = live.labels.clone();
            table.friendly_name = live.friendly_name.clone();
            table.time_partitioning = live.time_partitioning.clone();
            table.clustering = live.clustering.clone();
        }
        if let Some(p) = &self.options.time_partitioning {
            table.time_partitioning = Some(p.clone());
        }
        if let Some(c) = &self.options.clustering {
            table.clustering = Some(plan::clustering(c));
        }
        table
    }
}

/// `project.dataset.table` quoted for GoogleSQL.
fn quoted(t: &TableId) -> String {
    format!("`{}`.`{}`.`{}`", t.project, t.dataset, t.table)
}
