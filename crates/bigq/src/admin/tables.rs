use std::collections::BTreeMap;

use bigq_codec::schema::TableSchema;
use serde::{Deserialize, Serialize};

use super::{parse_dataset, parse_table};
use crate::client::rest::{Idempotent, Request};
use crate::client::{Client, Transport};
use crate::error::Result;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct TableReference {
    pub(super) project_id: String,
    pub(super) dataset_id: String,
    pub(super) table_id: String,
}

/// A table (the REST `Table` resource, the fields bigq knows).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Table {
    pub(super) table_reference: TableReference,
    /// The schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<TableSchema>,
    /// A description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Labels.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    /// `TABLE`, `VIEW`, `EXTERNAL`, ...
    #[serde(default, rename = "type", skip_serializing)]
    pub table_type: Option<String>,
    /// Rows in the table (not counting the streaming buffer).
    #[serde(
        default,
        skip_serializing,
        deserialize_with = "bigq_codec::int64_text::opt_u64::deserialize"
    )]
    pub num_rows: Option<u64>,
    /// Bytes in the table.
    #[serde(
        default,
        skip_serializing,
        deserialize_with = "bigq_codec::int64_text::opt_i64::deserialize"
    )]
    pub num_bytes: Option<i64>,
    /// The location.
    #[serde(default, skip_serializing)]
    pub location: Option<String>,
    /// Creation time, milliseconds since the epoch.
    #[serde(
        default,
        skip_serializing,
        deserialize_with = "bigq_codec::int64_text::opt_i64::deserialize"
    )]
    pub creation_time: Option<i64>,
}

impl Table {
    /// A table to create: `id` is `dataset.table` or `project.dataset.table`.
    pub fn new(id: impl Into<String>, schema: TableSchema) -> Self {
        let id = id.into();
        let parts: Vec<&str> = id.split('.').collect();
        let (p, d, t) = match parts.as_slice() {
            [p, d, t] => (p.to_string(), d.to_string(), t.to_string()),
            [d, t] => (String::new(), d.to_string(), t.to_string()),
            _ => (String::new(), String::new(), id.clone()),
        };
        Table {
            table_reference: TableReference {
                project_id: p,
                dataset_id: d,
                table_id: t,
            },
            schema: Some(schema),
            description: None,
            labels: BTreeMap::new(),
            table_type: None,
            num_rows: None,
            num_bytes: None,
            location: None,
            creation_time: None,
        }
    }

    /// Sets the description.
    pub fn with_description(mut self, d: impl Into<String>) -> Self {
        self.description = Some(d.into());
        self
    }

    /// The project.
    pub fn project(&self) -> &str {
        &self.table_reference.project_id
    }

    /// The dataset.
    pub fn dataset_id(&self) -> &str {
        &self.table_reference.dataset_id
    }

    /// The table id.
    pub fn table_id(&self) -> &str {
        &self.table_reference.table_id
    }
}

/// A table as `tables.list` returns it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct TableListItem {
    pub(super) table_reference: TableReference,
    /// `TABLE`, `VIEW`, ...
    #[serde(default, rename = "type")]
    pub table_type: Option<String>,
}

impl TableListItem {
    /// The table id.
    pub fn table_id(&self) -> &str {
        &self.table_reference.table_id
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TableList {
    #[serde(default)]
    tables: Vec<TableListItem>,
    #[serde(default)]
    next_page_token: Option<String>,
}

impl Client {
    /// Creates a table with a schema.
    pub async fn create_table(&self, mut table: Table) -> Result<Table> {
        if table.table_reference.project_id.is_empty() {
            table.table_reference.project_id = self.inner.project.clone();
        }
        if table.table_reference.dataset_id.is_empty() {
            return Err(crate::Error::config(
                "a table to create needs a dataset: use dataset.table",
            ));
        }
        if self.inner.transport == Transport::Grpc {
            return Box::pin(self.grpc_create_table(table)).await;
        }
        let r = table.table_reference.clone();
        let path = [
            "projects",
            r.project_id.as_str(),
            "datasets",
            r.dataset_id.as_str(),
            "tables",
        ];
        self.call(Request::post(&path, &table, Idempotent::Yes)?)
            .await
    }

    /// Gets a table (its schema, row count, ...).
    pub async fn get_table(&self, id: &str) -> Result<Table> {
        let id = parse_table(&self.inner.project, id)?;
        if self.inner.transport == Transport::Grpc {
            return Box::pin(self.grpc_get_table(&id)).await;
        }
        self.call(Request::get(&[
            "projects",
            &id.project,
            "datasets",
            &id.dataset,
            "tables",
            &id.table,
        ]))
        .await
    }

    /// Deletes a table.
    pub async fn delete_table(&self, id: &str) -> Result<()> {
        let id = parse_table(&self.inner.project, id)?;
        if self.inner.transport == Transport::Grpc {
            return Box::pin(self.grpc_delete_table(&id)).await;
        }
        self.call_empty(Request::delete(&[
            "projects",
            &id.project,
            "datasets",
            &id.dataset,
            "tables",
            &id.table,
        ]))
        .await
    }

    /// Lists the tables of a dataset, every page.
    pub async fn list_tables(&self, dataset: &str) -> Result<Vec<TableListItem>> {
        let id = parse_dataset(&self.inner.project, dataset)?;
        let mut out = Vec::new();
        let mut token: Option<String> = None;
        loop {
            if self.inner.transport == Transport::Grpc {
                let (tables, next) = Box::pin(self.grpc_list_tables(&id, token.as_deref())).await?;
                out.extend(tables);
                match next {
                    Some(t) => token = Some(t),
                    None => return Ok(out),
                }
                continue;
            }
            let path = [
                "projects",
                id.project.as_str(),
                "datasets",
                id.dataset.as_str(),
                "tables",
            ];
            let mut req = Request::get(&path);
            if let Some(t) = &token {
                req = req.query("pageToken", t);
            }
            let page: TableList = self.call(req).await?;
            out.extend(page.tables);
            match page.next_page_token {
                Some(t) if !t.is_empty() => token = Some(t),
                _ => return Ok(out),
            }
        }
    }
}
