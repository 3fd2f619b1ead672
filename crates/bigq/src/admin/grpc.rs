//! Datasets and tables over the BigQuery v2 gRPC services (`DatasetService`,
//! `TableService`), for clients on [`Transport::Grpc`](crate::Transport::Grpc): the same
//! resources as REST, converted to and from the v2 messages.

use bigq_codec::schema::{FieldMode, FieldType, RangeElementType, TableFieldSchema, TableSchema};
use gcloud_sdk::google::cloud::bigquery::v2 as pb;
use pb::dataset_service_client::DatasetServiceClient;
use pb::table_service_client::TableServiceClient;
use tonic::transport::Channel;

use super::datasets::{Dataset, DatasetListItem, DatasetReference};
use super::tables::{Table, TableListItem, TableReference};
use super::{DatasetId, TableId};
use crate::client::Client;
use crate::client::grpc::non_empty;
use crate::error::Result;

fn datasets(channel: Channel) -> DatasetServiceClient<Channel> {
    DatasetServiceClient::new(channel)
}

fn tables(channel: Channel) -> TableServiceClient<Channel> {
    TableServiceClient::new(channel)
}

fn non_zero(n: i64) -> Option<i64> {
    (n != 0).then_some(n)
}

impl Client {
    pub(super) async fn grpc_create_dataset(&self, dataset: Dataset) -> Result<Dataset> {
        let project = dataset.dataset_reference.project_id.clone();
        let request = pb::InsertDatasetRequest {
            project_id: project.clone(),
            dataset: Some(dataset_to_proto(dataset)),
            ..Default::default()
        };
        // Creating the same dataset twice fails with ALREADY_EXISTS, so a retry is harmless.
        let created = self
            .v2_unary("InsertDataset", &project, request, |ch, req| async move {
                datasets(ch).insert_dataset(req).await
            })
            .await?;
        Ok(dataset_from_proto(created))
    }

    pub(super) async fn grpc_get_dataset(&self, id: &DatasetId) -> Result<Dataset> {
        let request = pb::GetDatasetRequest {
            project_id: id.project.clone(),
            dataset_id: id.dataset.clone(),
            ..Default::default()
        };
        let found = self
            .v2_unary("GetDataset", &id.project, request, |ch, req| async move {
                datasets(ch).get_dataset(req).await
            })
            .await?;
        Ok(dataset_from_proto(found))
    }

    pub(super) async fn grpc_list_datasets(
        &self,
        project: &str,
        all: bool,
        page_token: Option<&str>,
    ) -> Result<(Vec<DatasetListItem>, Option<String>)> {
        let request = pb::ListDatasetsRequest {
            project_id: project.to_string(),
            page_token: page_token.unwrap_or_default().to_string(),
            all,
            ..Default::default()
        };
        let list = self
            .v2_unary("ListDatasets", project, request, |ch, req| async move {
                datasets(ch).list_datasets(req).await
            })
            .await?;
        let items = list
            .datasets
            .into_iter()
            .map(|d| DatasetListItem {
                dataset_reference: d
                    .dataset_reference
                    .map(|r| DatasetReference {
                        project_id: r.project_id,
                        dataset_id: r.dataset_id,
                    })
                    .unwrap_or_else(|| DatasetReference {
                        project_id: String::new(),
                        dataset_id: String::new(),
                    }),
                location: non_empty(d.location),
                friendly_name: d.friendly_name,
                labels: d.labels.into_iter().collect(),
            })
            .collect();
        Ok((items, non_empty(list.next_page_token)))
    }

    pub(super) async fn grpc_delete_dataset(
        &self,
        id: &DatasetId,
        delete_contents: bool,
    ) -> Result<()> {
        let request = pb::DeleteDatasetRequest {
            project_id: id.project.clone(),
            dataset_id: id.dataset.clone(),
            delete_contents,
        };
        self.v2_unary(
            "DeleteDataset",
            &id.project,
            request,
            |ch, req| async move { datasets(ch).delete_dataset(req).await },
        )
        .await
    }

    pub(super) async fn grpc_create_table(&self, table: Table) -> Result<Table> {
        let r = table.table_reference.clone();
        let request = pb::InsertTableRequest {
            project_id: r.project_id.clone(),
            dataset_id: r.dataset_id.clone(),
            table: Some(table_to_proto(table)),
        };
        let created = self
            .v2_unary(
                "InsertTable",
                &r.project_id,
                request,
                |ch, req| async move { tables(ch).insert_table(req).await },
            )
            .await?;
        Ok(table_from_proto(created))
    }

    pub(super) async fn grpc_get_table(&self, id: &TableId) -> Result<Table> {
        let request = pb::GetTableRequest {
            project_id: id.project.clone(),
            dataset_id: id.dataset.clone(),
            table_id: id.table.clone(),
            ..Default::default()
        };
        let found = self
            .v2_unary("GetTable", &id.project, request, |ch, req| async move {
                tables(ch).get_table(req).await
            })
            .await?;
        Ok(table_from_proto(found))
    }

    pub(super) async fn grpc_delete_table(&self, id: &TableId) -> Result<()> {
        let request = pb::DeleteTableRequest {
            project_id: id.project.clone(),
            dataset_id: id.dataset.clone(),
            table_id: id.table.clone(),
        };
        self.v2_unary("DeleteTable", &id.project, request, |ch, req| async move {
            tables(ch).delete_table(req).await
        })
        .await
    }

    /// One `ListTables` page: the tables and the next page's token.
    pub(super) async fn grpc_list_tables(
        &self,
        id: &DatasetId,
        page_token: Option<&str>,
    ) -> Result<(Vec<TableListItem>, Option<String>)> {
        let request = pb::ListTablesRequest {
            project_id: id.project.clone(),
            dataset_id: id.dataset.clone(),
            page_token: page_token.unwrap_or_default().to_string(),
            max_results: None,
        };
        let list = self
            .v2_unary("ListTables", &id.project, request, |ch, req| async move {
                tables(ch).list_tables(req).await
            })
            .await?;
        let items = list
            .tables
            .into_iter()
            .map(|t| TableListItem {
                table_reference: t.table_reference.map(table_reference).unwrap_or_default(),
                table_type: non_empty(t.r#type),
            })
            .collect();
        Ok((items, non_empty(list.next_page_token)))
    }
}

fn dataset_to_proto(d: Dataset) -> pb::Dataset {
    pb::Dataset {
        dataset_reference: Some(pb::DatasetReference {
            project_id: d.dataset_reference.project_id,
            dataset_id: d.dataset_reference.dataset_id,
        }),
        location: d.location.unwrap_or_default(),
        description: d.description,
        friendly_name: d.friendly_name,
        labels: d.labels.into_iter().collect(),
        default_table_expiration_ms: d.default_table_expiration_ms,
        ..Default::default()
    }
}

fn dataset_from_proto(d: pb::Dataset) -> Dataset {
    let r = d.dataset_reference.unwrap_or_default();
    Dataset {
        dataset_reference: DatasetReference {
            project_id: r.project_id,
            dataset_id: r.dataset_id,
        },
        location: non_empty(d.location),
        description: d.description,
        friendly_name: d.friendly_name,
        labels: d.labels.into_iter().collect(),
        default_table_expiration_ms: d.default_table_expiration_ms,
        creation_time: non_zero(d.creation_time),
    }
}

fn table_reference(r: pb::TableReference) -> TableReference {
    TableReference {
        project_id: r.project_id,
        dataset_id: r.dataset_id,
        table_id: r.table_id,
    }
}

fn table_to_proto(t: Table) -> pb::Table {
    let r = t.table_reference;
    pb::Table {
        table_reference: Some(pb::TableReference {
            project_id: r.project_id,
            dataset_id: r.dataset_id,
            table_id: r.table_id,
        }),
        schema: t.schema.as_ref().map(schema_to_proto),
        description: t.description,
        labels: t.labels.into_iter().collect(),
        ..Default::default()
    }
}

fn table_from_proto(t: pb::Table) -> Table {
    Table {
        table_reference: t.table_reference.map(table_reference).unwrap_or_default(),
        schema: t.schema.as_ref().map(schema_from_proto),
        description: t.description,
        labels: t.labels.into_iter().collect(),
        table_type: non_empty(t.r#type),
        num_rows: t.num_rows,
        num_bytes: t.num_bytes,
        location: non_empty(t.location),
        creation_time: non_zero(t.creation_time),
    }
}

/// A v2 `TableSchema` as bigq's (the other way: [`schema_to_proto`]).
pub(crate) fn schema_from_proto(s: &pb::TableSchema) -> TableSchema {
    TableSchema {
        fields: s.fields.iter().map(field_from_proto).collect(),
    }
}

fn field_from_proto(f: &pb::TableFieldSchema) -> TableFieldSchema {
    let positive = |n: i64| (n > 0).then_some(n);
    TableFieldSchema {
        name: f.name.clone(),
        field_type: FieldType::parse(&f.r#type),
        mode: match f.mode.to_ascii_uppercase().as_str() {
            "REQUIRED" => Some(FieldMode::Required),
            "REPEATED" => Some(FieldMode::Repeated),
            "NULLABLE" => Some(FieldMode::Nullable),
            _ => None,
        },
        fields: f.fields.iter().map(field_from_proto).collect(),
        range_element_type: f.range_element_type.as_ref().map(|r| RangeElementType {
            element_type: FieldType::parse(&r.r#type),
        }),
        description: f.description.clone(),
        max_length: positive(f.max_length),
        precision: positive(f.precision),
        scale: positive(f.scale),
        default_value_expression: f.default_value_expression.clone(),
    }
}

/// bigq's schema as a v2 `TableSchema`.
pub(crate) fn schema_to_proto(s: &TableSchema) -> pb::TableSchema {
    pb::TableSchema {
        fields: s.fields.iter().map(field_to_proto).collect(),
        foreign_type_info: None,
    }
}

fn field_to_proto(f: &TableFieldSchema) -> pb::TableFieldSchema {
    pb::TableFieldSchema {
        name: f.name.clone(),
        r#type: f.field_type.to_string(),
        mode: match f.mode {
            Some(FieldMode::Required) => "REQUIRED",
            Some(FieldMode::Repeated) => "REPEATED",
            Some(FieldMode::Nullable) => "NULLABLE",
            None => "",
        }
        .to_string(),
        fields: f.fields.iter().map(field_to_proto).collect(),
        description: f.description.clone(),
        max_length: f.max_length.unwrap_or(0),
        precision: f.precision.unwrap_or(0),
        scale: f.scale.unwrap_or(0),
        default_value_expression: f.default_value_expression.clone(),
        range_element_type: f.range_element_type.as_ref().map(|r| {
            pb::table_field_schema::FieldElementType {
                r#type: r.element_type.to_string(),
            }
        }),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bigq_codec::schema::FieldType;

    #[test]
    fn schemas_survive_the_v2_messages() {
        let schema = TableSchema::new(vec![
            TableFieldSchema::new("id", FieldType::Int64).with_mode(FieldMode::Required),
            TableFieldSchema::new("amount", FieldType::Numeric),
            TableFieldSchema::new("tags", FieldType::String).with_mode(FieldMode::Repeated),
            TableFieldSchema::new("when", FieldType::Range),
            TableFieldSchema::record(
                "rec",
                vec![TableFieldSchema::new("ts", FieldType::Timestamp)],
            ),
        ]);
        let mut with_details = schema.clone();
        with_details.fields[1].precision = Some(20);
        with_details.fields[1].scale = Some(4);
        with_details.fields[3].range_element_type = Some(bigq_codec::schema::RangeElementType {
            element_type: FieldType::Date,
        });
        let back = schema_from_proto(&schema_to_proto(&with_details));
        assert_eq!(back, with_details);
    }
}
