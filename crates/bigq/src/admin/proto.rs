//! Datasets, tables, jobs and schemas as the BigQuery v2 gRPC services' messages: the same
//! resources as REST, converted to and from the v2 messages for the gRPC transport.

use bigq_codec::schema::{
    FieldMode, FieldType, PolicyTags, RangeElementType, RoundingMode, TableFieldSchema, TableSchema,
};
use gcloud_sdk::google::cloud::bigquery::v2 as pb;

use super::datasets::{Dataset, DatasetListItem, DatasetReference};
use super::jobs::{
    Job, JobConfiguration, JobError, JobStatistics, JobStatus, QueryConfiguration,
    QueryJobStatistics, TableReference as JobTableReference,
};
use super::tables::{Table, TableListItem, TableReference};
use crate::client::grpc::non_empty;
use crate::ids::TableId;
use crate::query::response::{DmlStats, JobReference};

fn non_zero(n: i64) -> Option<i64> {
    (n != 0).then_some(n)
}

/// A dataset as `ListDatasets` describes it.
pub(crate) fn dataset_list_item_from_proto(d: pb::ListFormatDataset) -> DatasetListItem {
    let r = d.dataset_reference.unwrap_or_default();
    DatasetListItem {
        dataset_reference: DatasetReference {
            project_id: r.project_id,
            dataset_id: r.dataset_id,
        },
        location: non_empty(d.location),
        friendly_name: d.friendly_name,
        labels: d.labels.into_iter().collect(),
    }
}

/// A table as `ListTables` describes it.
pub(crate) fn table_list_item_from_proto(t: pb::ListFormatTable) -> TableListItem {
    TableListItem {
        table_reference: t.table_reference.map(table_reference).unwrap_or_default(),
        table_type: non_empty(t.r#type),
    }
}

/// A job as the v2 gRPC services describe it (the same fields as the REST resource).
pub(crate) fn job_from_proto(job: pb::Job) -> Job {
    let status = job.status.unwrap_or_default();
    let query = job.configuration.and_then(|c| c.query);
    let stats = job.statistics.unwrap_or_default();
    Job {
        job_reference: job
            .job_reference
            .map(job_reference_from_proto)
            .unwrap_or_else(|| JobReference {
                project_id: String::new(),
                job_id: String::new(),
                location: None,
            }),
        status: JobStatus {
            state: non_empty(status.state),
            error_result: status.error_result.map(|e| JobError {
                reason: non_empty(e.reason),
                message: non_empty(e.message),
            }),
        },
        configuration: JobConfiguration {
            query: query.map(|q| QueryConfiguration {
                query: non_empty(q.query),
                destination_table: q.destination_table.map(|t| JobTableReference {
                    project_id: t.project_id,
                    dataset_id: t.dataset_id,
                    table_id: t.table_id,
                }),
            }),
        },
        statistics: job_statistics_from_proto(stats),
    }
}

/// A job's statistics as the v2 services report them (the REST resource's fields; 0 for a
/// time not reached is absent).
fn job_statistics_from_proto(s: pb::JobStatistics) -> JobStatistics {
    JobStatistics {
        creation_time: non_zero(s.creation_time),
        start_time: non_zero(s.start_time),
        end_time: non_zero(s.end_time),
        total_bytes_processed: s.total_bytes_processed,
        total_slot_ms: s.total_slot_ms,
        parent_job_id: non_empty(s.parent_job_id),
        num_child_jobs: non_zero(s.num_child_jobs),
        query: s.query.map(|q| QueryJobStatistics {
            total_bytes_processed: q.total_bytes_processed,
            total_bytes_billed: q.total_bytes_billed,
            total_slot_ms: q.total_slot_ms,
            cache_hit: q.cache_hit,
            num_dml_affected_rows: q.num_dml_affected_rows,
            dml_stats: q.dml_stats.map(|d| DmlStats {
                inserted_row_count: d.inserted_row_count,
                deleted_row_count: d.deleted_row_count,
                updated_row_count: d.updated_row_count,
            }),
            referenced_tables: q
                .referenced_tables
                .into_iter()
                .map(|t| TableId {
                    project: t.project_id,
                    dataset: t.dataset_id,
                    table: t.table_id,
                })
                .collect(),
            statement_type: non_empty(q.statement_type),
        }),
    }
}

/// A job as `ListJobs` describes it (the configuration only with the `FULL` projection).
pub(crate) fn job_list_item_from_proto(j: pb::ListFormatJob) -> Job {
    let mut status = j.status.unwrap_or_default();
    if status.state.is_empty() {
        status.state = j.state;
    }
    if status.error_result.is_none() {
        status.error_result = j.error_result;
    }
    job_from_proto(pb::Job {
        job_reference: j.job_reference,
        configuration: j.configuration,
        statistics: j.statistics,
        status: Some(status),
        ..Default::default()
    })
}

/// A v2 `JobReference` as bigq's.
pub(crate) fn job_reference_from_proto(j: pb::JobReference) -> JobReference {
    JobReference {
        project_id: j.project_id,
        job_id: j.job_id,
        location: j.location.filter(|l| !l.is_empty()),
    }
}

pub(crate) fn dataset_to_proto(d: Dataset) -> pb::Dataset {
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

pub(crate) fn dataset_from_proto(d: pb::Dataset) -> Dataset {
    let r = d.dataset_reference.unwrap_or_default();
    let mut out = Dataset::new(r.dataset_id);
    out.dataset_reference.project_id = r.project_id;
    out.location = non_empty(d.location);
    out.description = d.description;
    out.friendly_name = d.friendly_name;
    out.labels = d.labels.into_iter().collect();
    out.default_table_expiration_ms = d.default_table_expiration_ms;
    out.etag = non_empty(d.etag);
    out.creation_time = non_zero(d.creation_time);
    out
}

/// The first dataset option bigq does not yet carry in the v2 `Dataset` message, by its
/// REST name (sending it over gRPC would drop it).
pub(crate) fn dataset_option_not_carried(d: &Dataset) -> Option<&'static str> {
    [
        (
            "defaultPartitionExpirationMs",
            d.default_partition_expiration_ms.is_some(),
        ),
        ("isCaseInsensitive", d.is_case_insensitive.is_some()),
        ("maxTimeTravelHours", d.max_time_travel_hours.is_some()),
        ("defaultRoundingMode", d.default_rounding_mode.is_some()),
        ("defaultCollation", d.default_collation.is_some()),
    ]
    .into_iter()
    .find_map(|(name, set)| set.then_some(name))
}

fn table_reference(r: pb::TableReference) -> TableReference {
    TableReference {
        project_id: r.project_id,
        dataset_id: r.dataset_id,
        table_id: r.table_id,
    }
}

/// The first table option bigq does not yet carry in the v2 `Table` message, by its REST
/// name: sending the table over gRPC would drop it, so the call is refused instead.
pub(crate) fn option_not_carried(t: &Table) -> Option<&'static str> {
    [
        ("friendlyName", t.friendly_name.is_some()),
        ("expirationTime", t.expiration_time.is_some()),
        ("timePartitioning", t.time_partitioning.is_some()),
        ("rangePartitioning", t.range_partitioning.is_some()),
        (
            "requirePartitionFilter",
            t.require_partition_filter.is_some(),
        ),
        ("clustering", t.clustering.is_some()),
        ("tableConstraints", t.table_constraints.is_some()),
        ("defaultCollation", t.default_collation.is_some()),
        ("defaultRoundingMode", t.default_rounding_mode.is_some()),
        ("maxStaleness", t.max_staleness.is_some()),
        ("view", t.view.is_some()),
        ("materializedView", t.materialized_view.is_some()),
    ]
    .into_iter()
    .find_map(|(name, set)| set.then_some(name))
}

pub(crate) fn table_to_proto(t: Table) -> pb::Table {
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

pub(crate) fn table_from_proto(t: pb::Table) -> Table {
    let mut out = Table::new(String::new(), TableSchema::default());
    out.table_reference = t.table_reference.map(table_reference).unwrap_or_default();
    out.schema = t.schema.as_ref().map(schema_from_proto);
    out.description = t.description;
    out.labels = t.labels.into_iter().collect();
    out.etag = non_empty(t.etag);
    out.table_type = non_empty(t.r#type);
    out.num_rows = t.num_rows;
    out.num_bytes = t.num_bytes;
    out.location = non_empty(t.location);
    out.creation_time = non_zero(t.creation_time);
    out
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
        rounding_mode: pb::table_field_schema::RoundingMode::try_from(f.rounding_mode)
            .ok()
            .filter(|m| *m != pb::table_field_schema::RoundingMode::Unspecified)
            .map(|m| RoundingMode::parse(m.as_str_name())),
        collation: f.collation.clone(),
        policy_tags: f.policy_tags.as_ref().map(|p| PolicyTags {
            names: p.names.clone(),
        }),
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
        rounding_mode: f
            .rounding_mode
            .as_ref()
            .and_then(|m| pb::table_field_schema::RoundingMode::from_str_name(m.as_str()))
            .map_or(0, |m| m as i32),
        collation: f.collation.clone(),
        policy_tags: f
            .policy_tags
            .as_ref()
            .map(|p| pb::table_field_schema::PolicyTagList {
                names: p.names.clone(),
            }),
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
        with_details.fields[1].rounding_mode = Some(RoundingMode::HalfEven);
        with_details.fields[2].collation = Some("und:ci".into());
        with_details.fields[2].policy_tags = Some(PolicyTags {
            names: vec!["projects/p/locations/us/taxonomies/1/policyTags/2".into()],
        });
        with_details.fields[3].range_element_type = Some(bigq_codec::schema::RangeElementType {
            element_type: FieldType::Date,
        });
        let back = schema_from_proto(&schema_to_proto(&with_details));
        assert_eq!(back, with_details);
    }
}
