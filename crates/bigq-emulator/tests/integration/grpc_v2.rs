//! The BigQuery v2 gRPC services (JobService, DatasetService, TableService) at the wire,
//! through the generated clients over a plain channel: rows struct-encoded and in Arrow,
//! page by page, against what REST answers for the same query; parameters, DML, jobs,
//! errors as statuses; dataset and table CRUD.

use arrow_ipc::reader::StreamReader;
use bigq_emulator::Emulator;
use datafusion::arrow::array::{Array, AsArray, RecordBatch};
use datafusion::arrow::datatypes::{DataType, Float64Type, Int64Type};
use gcloud_sdk::google::cloud::bigquery::v2::arrow_serialization_options::CompressionCodec;
use gcloud_sdk::google::cloud::bigquery::v2::dataset_service_client::DatasetServiceClient;
use gcloud_sdk::google::cloud::bigquery::v2::job_service_client::JobServiceClient;
use gcloud_sdk::google::cloud::bigquery::v2::query_request::{
    JobCreationMode, QueryResultsFormat, ResultsFormatSerializationOptions,
};
use gcloud_sdk::google::cloud::bigquery::v2::table_service_client::TableServiceClient;
use gcloud_sdk::google::cloud::bigquery::v2::{
    ArrowSerializationOptions, CancelJobRequest, Dataset, DatasetList, DatasetReference,
    DeleteDatasetRequest, DeleteJobRequest, DeleteTableRequest, GetDatasetRequest, GetJobRequest,
    GetQueryResultsRequest, GetTableRequest, InsertDatasetRequest, InsertJobRequest,
    InsertTableRequest, Job, JobConfiguration, JobConfigurationQuery, JobList, JobReference,
    ListDatasetsRequest, ListJobsRequest, ListTablesRequest, PostQueryRequest, QueryParameter,
    QueryParameterType, QueryParameterValue, QueryRequest, QueryResponse, Table, TableFieldSchema,
    TableReference, TableSchema, UpdateOrPatchDatasetRequest, UpdateOrPatchTableRequest,
    query_response,
};
use serde_json::{Value, json};
use tonic::Code;
use tonic::transport::Channel;

use crate::common;

use common::Rest;

struct Ctx {
    _emu: Emulator,
    jobs: JobServiceClient<Channel>,
    datasets: DatasetServiceClient<Channel>,
    tables: TableServiceClient<Channel>,
    rest: Rest,
}

impl Ctx {
    async fn new() -> Ctx {
        let emu = common::emulator().await;
        let channel = common::channel(&emu).await;
        Ctx {
            jobs: JobServiceClient::new(channel.clone()),
            datasets: DatasetServiceClient::new(channel.clone()),
            tables: TableServiceClient::new(channel),
            rest: Rest::new(&emu),
            _emu: emu,
        }
    }

    /// Every row of `sql` through REST, `page` rows at a time, as `f`/`v` JSON.
    async fn rest_rows(&self, sql: &str, page: usize) -> Vec<Value> {
        let v = self
            .rest
            .post(
                "/queries",
                json!({"query": sql, "useLegacySql": false, "maxResults": page}),
            )
            .await;
        let mut rows: Vec<Value> = v["rows"].as_array().cloned().unwrap_or_default();
        let job = v["jobReference"]["jobId"].as_str().unwrap().to_string();
        let mut token = v["pageToken"].as_str().map(str::to_string);
        while let Some(t) = token {
            let p = self
                .rest
                .get(&format!("/queries/{job}?pageToken={t}&maxResults={page}"))
                .await;
            rows.extend(p["rows"].as_array().cloned().unwrap_or_default());
            token = p["pageToken"].as_str().map(str::to_string);
        }
        rows
    }

    async fn query(&mut self, q: QueryRequest) -> Result<QueryResponse, tonic::Status> {
        self.jobs
            .query(PostQueryRequest {
                project_id: "p".into(),
                query_request: Some(q),
            })
            .await
            .map(tonic::Response::into_inner)
    }

    async fn sql(&mut self, sql: &str) -> QueryResponse {
        self.query(QueryRequest {
            query: sql.into(),
            use_legacy_sql: Some(false),
            ..Default::default()
        })
        .await
        .unwrap_or_else(|s| panic!("{sql}: {s:?}"))
    }

    async fn dataset(&mut self, id: &str) -> Dataset {
        self.insert_dataset(id).await.unwrap()
    }

    async fn insert_dataset(&mut self, id: &str) -> Result<Dataset, tonic::Status> {
        self.datasets
            .insert_dataset(InsertDatasetRequest {
                project_id: "p".into(),
                dataset: Some(Dataset {
                    dataset_reference: Some(DatasetReference {
                        project_id: "p".into(),
                        dataset_id: id.into(),
                    }),
                    ..Default::default()
                }),
                ..Default::default()
            })
            .await
            .map(tonic::Response::into_inner)
    }

    async fn get_dataset(&mut self, id: &str) -> Result<Dataset, tonic::Status> {
        self.datasets
            .get_dataset(GetDatasetRequest {
                project_id: "p".into(),
                dataset_id: id.into(),
                ..Default::default()
            })
            .await
            .map(tonic::Response::into_inner)
    }

    /// UpdateDataset, or PatchDataset when `patch`.
    async fn change_dataset(&mut self, id: &str, patch: bool, dataset: Dataset) -> Dataset {
        let req = UpdateOrPatchDatasetRequest {
            project_id: "p".into(),
            dataset_id: id.into(),
            dataset: Some(dataset),
            ..Default::default()
        };
        let r = if patch {
            self.datasets.patch_dataset(req).await
        } else {
            self.datasets.update_dataset(req).await
        };
        r.unwrap().into_inner()
    }

    async fn list_datasets(&mut self, max_results: Option<u32>, page_token: String) -> DatasetList {
        self.datasets
            .list_datasets(ListDatasetsRequest {
                project_id: "p".into(),
                max_results,
                page_token,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner()
    }

    async fn delete_dataset(
        &mut self,
        id: &str,
        delete_contents: bool,
    ) -> Result<(), tonic::Status> {
        self.datasets
            .delete_dataset(DeleteDatasetRequest {
                project_id: "p".into(),
                dataset_id: id.into(),
                delete_contents,
            })
            .await
            .map(|_| ())
    }

    /// InsertTable of `table` into the dataset its reference names.
    async fn insert_table(&mut self, table: Table) -> Table {
        let dataset_id = table.table_reference.as_ref().unwrap().dataset_id.clone();
        self.tables
            .insert_table(InsertTableRequest {
                project_id: "p".into(),
                dataset_id,
                table: Some(table),
            })
            .await
            .unwrap()
            .into_inner()
    }

    async fn get_table(&mut self, ds: &str, id: &str, view: i32) -> Result<Table, tonic::Status> {
        self.tables
            .get_table(GetTableRequest {
                project_id: "p".into(),
                dataset_id: ds.into(),
                table_id: id.into(),
                view,
                ..Default::default()
            })
            .await
            .map(tonic::Response::into_inner)
    }

    async fn patch_table(
        &mut self,
        ds: &str,
        id: &str,
        table: Table,
    ) -> Result<Table, tonic::Status> {
        self.tables
            .patch_table(UpdateOrPatchTableRequest {
                project_id: "p".into(),
                dataset_id: ds.into(),
                table_id: id.into(),
                table: Some(table),
                ..Default::default()
            })
            .await
            .map(tonic::Response::into_inner)
    }

    async fn insert_job(&mut self, job: Job) -> Result<Job, tonic::Status> {
        self.jobs
            .insert_job(InsertJobRequest {
                project_id: "p".into(),
                job: Some(job),
            })
            .await
            .map(tonic::Response::into_inner)
    }

    async fn get_job(&mut self, id: &str) -> Result<Job, tonic::Status> {
        self.jobs
            .get_job(GetJobRequest {
                project_id: "p".into(),
                job_id: id.into(),
                ..Default::default()
            })
            .await
            .map(tonic::Response::into_inner)
    }

    /// ListJobs of project `p` with the rest of `req`.
    async fn list_jobs(&mut self, req: ListJobsRequest) -> JobList {
        self.jobs
            .list_jobs(ListJobsRequest {
                project_id: "p".into(),
                ..req
            })
            .await
            .unwrap()
            .into_inner()
    }
}

/// A query job running `query`, named `job_id` (or by the server when `None`).
fn query_job(job_id: Option<&str>, query: JobConfigurationQuery) -> Job {
    Job {
        job_reference: job_id.map(|id| JobReference {
            project_id: "p".into(),
            job_id: id.into(),
            location: None,
        }),
        configuration: Some(JobConfiguration {
            query: Some(query),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// The configuration of a query job running `sql`, everything else left default.
fn sql_config(sql: &str) -> JobConfigurationQuery {
    JobConfigurationQuery {
        query: sql.into(),
        ..Default::default()
    }
}

fn table_ref(ds: &str, id: &str) -> Option<TableReference> {
    Some(TableReference {
        project_id: "p".into(),
        dataset_id: ds.into(),
        table_id: id.into(),
    })
}

fn schema(fields: Vec<TableFieldSchema>) -> Option<TableSchema> {
    Some(TableSchema {
        fields,
        ..Default::default()
    })
}

/// A protobuf Struct row as the JSON REST sends.
fn struct_json(v: &prost_types::Value) -> Value {
    use prost_types::value::Kind;
    match &v.kind {
        None | Some(Kind::NullValue(_)) => Value::Null,
        Some(Kind::BoolValue(b)) => (*b).into(),
        Some(Kind::NumberValue(n)) => json!(n),
        Some(Kind::StringValue(s)) => s.clone().into(),
        Some(Kind::ListValue(l)) => Value::Array(l.values.iter().map(struct_json).collect()),
        Some(Kind::StructValue(s)) => row_json(s),
    }
}

fn row_json(s: &prost_types::Struct) -> Value {
    Value::Object(
        s.fields
            .iter()
            .map(|(k, v)| (k.clone(), struct_json(v)))
            .collect(),
    )
}

fn arrow(r: &QueryResponse) -> Vec<RecordBatch> {
    let (
        Some(query_response::ResultsSchema::ArrowSchema(schema)),
        Some(query_response::Results::ArrowRecordBatch(batch)),
    ) = (&r.results_schema, &r.results)
    else {
        panic!("no Arrow results: {r:?}");
    };
    let mut bytes = schema.serialized_schema.clone();
    bytes.extend_from_slice(&batch.serialized_record_batch);
    StreamReader::try_new(std::io::Cursor::new(bytes), None)
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

const MIXED: &str = "SELECT n, CONCAT('row ', CAST(n AS STRING)) AS s, n * 1.5 AS f, MOD(n, 2) = 0 AS even, \
     IF(MOD(n, 3) = 0, NULL, n) AS maybe, [n, n + 1] AS pair, STRUCT(n AS a, 'x' AS b) AS rec \
     FROM UNNEST(GENERATE_ARRAY(1, 25)) AS n ORDER BY n";

#[tokio::test]
async fn struct_rows_page_by_page_equal_the_rest_rows() {
    let mut c = Ctx::new().await;
    let rest = c.rest_rows(MIXED, 10).await;
    assert_eq!(rest.len(), 25);

    let first = c
        .query(QueryRequest {
            query: MIXED.into(),
            use_legacy_sql: Some(false),
            max_results: Some(10),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(first.job_complete, Some(true));
    assert_eq!(first.total_rows, Some(25));
    assert_eq!(first.rows.len(), 10);
    assert_eq!(first.page_row_count, 10);
    assert_eq!(first.page_token, "10");
    assert_eq!(first.statement_type, "SELECT");
    let names: Vec<&str> = first
        .schema
        .as_ref()
        .unwrap()
        .fields
        .iter()
        .map(|f| f.name.as_str())
        .collect();
    assert_eq!(names, ["n", "s", "f", "even", "maybe", "pair", "rec"]);
    let job = first.job_reference.clone().unwrap();
    let mut rows: Vec<Value> = first.rows.iter().map(row_json).collect();
    let mut token = first.page_token.clone();
    let mut pages = 1;
    while !token.is_empty() {
        let p = c
            .jobs
            .get_query_results(GetQueryResultsRequest {
                project_id: "p".into(),
                job_id: job.job_id.clone(),
                page_token: token,
                max_results: Some(10),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(p.total_rows, Some(25));
        rows.extend(p.rows.iter().map(row_json));
        token = p.page_token;
        pages += 1;
    }
    assert_eq!(pages, 3);
    assert_eq!(rows, rest);
    assert_eq!(
        rows[2],
        json!({"f": [{"v": "3"}, {"v": "row 3"}, {"v": "4.5"}, {"v": "false"}, {"v": null},
                     {"v": [{"v": "3"}, {"v": "4"}]}, {"v": {"f": [{"v": "3"}, {"v": "x"}]}}]})
    );
}

#[tokio::test]
async fn arrow_results_page_by_page_equal_the_rest_rows() {
    let mut c = Ctx::new().await;
    let rest = c.rest_rows(MIXED, 25).await;
    for codec in [
        CompressionCodec::CompressionUnspecified,
        CompressionCodec::Lz4Frame,
        CompressionCodec::Zstd,
    ] {
        let r = c
            .query(QueryRequest {
                query: MIXED.into(),
                use_legacy_sql: Some(false),
                max_results: Some(10),
                query_results_format: QueryResultsFormat::Arrow.into(),
                results_format_serialization_options: Some(
                    ResultsFormatSerializationOptions::ArrowSerializationOptions(
                        ArrowSerializationOptions {
                            buffer_compression: codec.into(),
                            ..Default::default()
                        },
                    ),
                ),
                ..Default::default()
            })
            .await
            .unwrap();
        // job.proto: with ARROW, neither `schema` nor `rows`.
        assert!(r.schema.is_none(), "{codec:?}");
        assert!(r.rows.is_empty());
        assert_eq!(r.total_rows, Some(25));
        assert_eq!(r.page_row_count, 10);
        assert_eq!(r.page_token, "10");
        let batches = arrow(&r);
        let batch = &batches[0];
        assert_eq!(batch.num_rows(), 10);
        let schema = batch.schema();
        assert_eq!(schema.field(0).data_type(), &DataType::Int64);
        assert!(matches!(schema.field(5).data_type(), DataType::List(_)));
        assert!(matches!(schema.field(6).data_type(), DataType::Struct(_)));
        let n = batch.column(0).as_primitive::<Int64Type>();
        let s = batch.column(1).as_string::<i32>();
        let f = batch.column(2).as_primitive::<Float64Type>();
        let even = batch.column(3).as_boolean();
        let maybe = batch.column(4).as_primitive::<Int64Type>();
        for (i, row) in rest.iter().enumerate().take(10) {
            let cells = row["f"].as_array().unwrap();
            assert_eq!(n.value(i).to_string(), cells[0]["v"]);
            assert_eq!(s.value(i), cells[1]["v"]);
            assert_eq!(
                f.value(i),
                cells[2]["v"].as_str().unwrap().parse::<f64>().unwrap()
            );
            assert_eq!(even.value(i).to_string(), cells[3]["v"]);
            match cells[4]["v"].as_str() {
                None => assert!(maybe.is_null(i)),
                Some(v) => assert_eq!(maybe.value(i).to_string(), v),
            }
        }
        // The remaining pages, struct-encoded (GetQueryResults has no results format).
        let job = r.job_reference.unwrap().job_id;
        let p = c
            .jobs
            .get_query_results(GetQueryResultsRequest {
                project_id: "p".into(),
                job_id: job,
                page_token: r.page_token.clone(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        let rows: Vec<Value> = p.rows.iter().map(row_json).collect();
        assert_eq!(rows, rest[10..]);
        assert!(p.page_token.is_empty());
    }
}

#[tokio::test]
async fn invalid_query_is_invalid_argument_with_bigquery_message() {
    let mut c = Ctx::new().await;
    let sql = "SELECT nope FROM UNNEST([1]) AS x";
    let rest = c
        .rest
        .post("/queries", json!({"query": sql, "useLegacySql": false}))
        .await;
    let want = rest["error"]["message"].as_str().unwrap().to_string();
    assert_eq!(rest["error"]["errors"][0]["reason"], "invalidQuery");
    let e = c
        .query(QueryRequest {
            query: sql.into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert_eq!(e.message(), want);
    assert!(want.contains("nope"), "{want}");

    let e = c.query(QueryRequest::default()).await.unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert_eq!(e.message(), "Required parameter is missing: query");

    let e = c.get_job("no_such_job").await.unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
    assert_eq!(e.message(), "Not found: Job p:no_such_job");
}

fn param(name: &str, ty: &str, value: &str) -> QueryParameter {
    QueryParameter {
        name: name.into(),
        parameter_type: Some(QueryParameterType {
            r#type: ty.into(),
            ..Default::default()
        }),
        parameter_value: Some(QueryParameterValue {
            value: Some(value.into()),
            ..Default::default()
        }),
    }
}

#[tokio::test]
async fn parameters_dml_counts_and_default_dataset() {
    let mut c = Ctx::new().await;
    c.dataset("ds").await;
    let r = c.sql("CREATE TABLE ds.t (id INT64, name STRING)").await;
    assert_eq!(r.statement_type, "CREATE_TABLE");
    assert_eq!(r.total_rows, None);
    let r = c
        .query(QueryRequest {
            query: "INSERT INTO t (id, name) VALUES (@a, @an), (@b, 'bee')".into(),
            default_dataset: Some(DatasetReference {
                project_id: String::new(),
                dataset_id: "ds".into(),
            }),
            parameter_mode: "NAMED".into(),
            query_parameters: vec![
                param("a", "INT64", "1"),
                param("an", "STRING", "ay"),
                param("b", "INT64", "2"),
            ],
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(r.statement_type, "INSERT");
    assert_eq!(r.num_dml_affected_rows, Some(2));
    assert_eq!(r.dml_stats.unwrap().inserted_row_count, Some(2));
    let r = c
        .query(QueryRequest {
            query: "SELECT name FROM ds.t WHERE id > ? ORDER BY id".into(),
            parameter_mode: "POSITIONAL".into(),
            query_parameters: vec![param("", "INT64", "1")],
            ..Default::default()
        })
        .await
        .unwrap();
    let rows: Vec<Value> = r.rows.iter().map(row_json).collect();
    assert_eq!(rows, [json!({"f": [{"v": "bee"}]})]);
    let r = c.sql("DELETE FROM ds.t WHERE TRUE").await;
    assert_eq!(r.statement_type, "DELETE");
    assert_eq!(r.num_dml_affected_rows, Some(2));
}

#[tokio::test]
async fn short_query_mode_dry_run_and_timeouts() {
    let mut c = Ctx::new().await;
    let r = c
        .query(QueryRequest {
            query: "SELECT 1 AS x".into(),
            job_creation_mode: JobCreationMode::JobCreationOptional.into(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(r.job_reference.is_none(), "{r:?}");
    assert!(r.query_id.starts_with("query_"));
    assert_eq!(
        r.rows.iter().map(row_json).collect::<Vec<_>>(),
        [json!({"f": [{"v": "1"}]})]
    );
    let r = c
        .query(QueryRequest {
            query: "SELECT n FROM UNNEST(GENERATE_ARRAY(1, 10)) AS n".into(),
            job_creation_mode: JobCreationMode::JobCreationOptional.into(),
            max_results: Some(5),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(r.job_reference.is_some());
    assert_eq!(r.job_creation_reason.unwrap().code, 3, "LARGE_RESULTS");
    let r = c
        .query(QueryRequest {
            query: "SELECT 1 AS x, 'a' AS y".into(),
            dry_run: true,
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(r.rows.is_empty());
    assert_eq!(r.total_rows, None);
    assert_eq!(r.schema.unwrap().fields.len(), 2);
    assert_eq!(r.statement_type, "SELECT");

    // A slow job: jobComplete false until done.
    let slow = Emulator::builder()
        .with_query_delay(std::time::Duration::from_millis(400))
        .start()
        .await
        .unwrap();
    let mut jobs = JobServiceClient::connect(slow.grpc_endpoint())
        .await
        .unwrap();
    let r = jobs
        .query(PostQueryRequest {
            project_id: "test-project".into(),
            query_request: Some(QueryRequest {
                query: "SELECT 7 AS x".into(),
                timeout_ms: Some(0),
                ..Default::default()
            }),
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(r.job_complete, Some(false));
    assert!(r.rows.is_empty());
    let job = r.job_reference.unwrap();
    let done = jobs
        .get_query_results(GetQueryResultsRequest {
            project_id: "test-project".into(),
            job_id: job.job_id,
            timeout_ms: Some(5000),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(done.job_complete, Some(true));
    assert_eq!(
        done.rows.iter().map(row_json).collect::<Vec<_>>(),
        [json!({"f": [{"v": "7"}]})]
    );
}

#[tokio::test]
async fn jobs_insert_get_list_cancel_delete() {
    let mut c = Ctx::new().await;
    c.dataset("ds").await;
    let job = c
        .insert_job(query_job(
            Some("my_job"),
            JobConfigurationQuery {
                destination_table: table_ref("ds", "squares"),
                use_legacy_sql: Some(false),
                ..sql_config("SELECT n, n * n AS sq FROM UNNEST(GENERATE_ARRAY(1, 4)) AS n")
            },
        ))
        .await
        .unwrap();
    assert_eq!(job.job_reference.as_ref().unwrap().job_id, "my_job");
    assert_eq!(job.status.as_ref().unwrap().state, "DONE");
    let got = c.get_job("my_job").await.unwrap();
    let q = got.configuration.as_ref().unwrap().query.as_ref().unwrap();
    assert_eq!(q.destination_table.as_ref().unwrap().table_id, "squares");
    assert_eq!(got.configuration.as_ref().unwrap().job_type, "QUERY");
    let stats = got.statistics.as_ref().unwrap().query.as_ref().unwrap();
    assert_eq!(stats.statement_type, "SELECT");
    assert_eq!(stats.schema.as_ref().unwrap().fields.len(), 2);
    // The destination table holds the rows.
    let t = c.get_table("ds", "squares", 0).await.unwrap();
    assert_eq!(t.num_rows, Some(4));

    // A job whose query fails is created and failed.
    let bad = c
        .insert_job(query_job(None, sql_config("SELECT * FROM ds.missing")))
        .await
        .unwrap();
    let err = bad.status.unwrap().error_result.unwrap();
    assert_eq!(err.reason, "notFound");
    assert!(err.message.contains("ds.missing"), "{}", err.message);

    // Dry run: no job.
    let mut dry = query_job(None, sql_config("SELECT 1 AS one"));
    dry.configuration.as_mut().unwrap().dry_run = Some(true);
    let dry = c.insert_job(dry).await.unwrap();
    assert_eq!(dry.job_reference.unwrap().job_id, "");
    assert_eq!(
        dry.statistics
            .unwrap()
            .query
            .unwrap()
            .schema
            .unwrap()
            .fields[0]
            .name,
        "one"
    );

    // Listing: newest first, paged.
    let list = c
        .list_jobs(ListJobsRequest {
            max_results: Some(1),
            ..Default::default()
        })
        .await;
    assert_eq!(list.jobs.len(), 1);
    assert_eq!(list.next_page_token, "1");
    assert_eq!(list.jobs[0].state, "DONE");
    assert_eq!(
        list.jobs[0].error_result.as_ref().unwrap().reason,
        "notFound"
    );
    let rest_of = c
        .list_jobs(ListJobsRequest {
            page_token: list.next_page_token,
            ..Default::default()
        })
        .await;
    assert_eq!(rest_of.jobs.len(), 1);
    assert_eq!(
        rest_of.jobs[0].job_reference.as_ref().unwrap().job_id,
        "my_job"
    );
    // Creation time bounds: none created a minute from now, both DONE jobs before the end
    // of time.
    let later = c
        .list_jobs(ListJobsRequest {
            min_creation_time: (got.statistics.as_ref().unwrap().creation_time + 60_000) as u64,
            ..Default::default()
        })
        .await;
    assert!(later.jobs.is_empty());
    let all = c
        .list_jobs(ListJobsRequest {
            max_creation_time: Some(u64::MAX),
            state_filter: vec![0],
            ..Default::default()
        })
        .await;
    assert_eq!(all.jobs.len(), 2);

    // Duplicate id, cancel of a finished job, delete.
    let e = c
        .insert_job(query_job(Some("my_job"), sql_config("SELECT 1")))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::AlreadyExists);
    assert_eq!(e.message(), "Already Exists: Job p:US.my_job");
    let cancelled = c
        .jobs
        .cancel_job(CancelJobRequest {
            project_id: "p".into(),
            job_id: "my_job".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let st = cancelled.job.unwrap().status.unwrap();
    assert_eq!(st.state, "DONE");
    assert!(st.error_result.is_none(), "a finished job stays finished");
    c.jobs
        .delete_job(DeleteJobRequest {
            project_id: "p".into(),
            job_id: "my_job".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let e = c.get_job("my_job").await.unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
}

fn field(name: &str, ty: &str, mode: &str) -> TableFieldSchema {
    TableFieldSchema {
        name: name.into(),
        r#type: ty.into(),
        mode: mode.into(),
        ..Default::default()
    }
}

#[tokio::test]
async fn datasets_and_tables_crud() {
    let mut c = Ctx::new().await;
    let ds = c.dataset("one").await;
    assert_eq!(ds.id, "p:one");
    assert_eq!(ds.location, "US");
    c.dataset("two").await;
    let e = c.insert_dataset("one").await.unwrap_err();
    assert_eq!(e.code(), Code::AlreadyExists);
    assert_eq!(e.message(), "Already Exists: Dataset p:one");
    let e = c.insert_dataset("bad-id").await.unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().starts_with("Invalid dataset ID \"bad-id\""));

    let patched = c
        .change_dataset(
            "one",
            true,
            Dataset {
                description: Some("the first".into()),
                labels: [("team".to_string(), "data".to_string())].into(),
                ..Default::default()
            },
        )
        .await;
    assert_eq!(patched.description.as_deref(), Some("the first"));
    let got = c.get_dataset("one").await.unwrap();
    assert_eq!(got.description.as_deref(), Some("the first"));
    assert_eq!(got.labels.get("team").map(String::as_str), Some("data"));
    // REST sees the same dataset.
    let rest = c.rest.get("/datasets/one").await;
    assert_eq!(rest["description"], "the first");
    // UpdateDataset replaces: what it leaves out is cleared.
    let updated = c
        .change_dataset(
            "two",
            false,
            Dataset {
                friendly_name: Some("Two".into()),
                ..Default::default()
            },
        )
        .await;
    assert_eq!(updated.friendly_name.as_deref(), Some("Two"));
    let updated = c
        .change_dataset(
            "two",
            false,
            Dataset {
                description: Some("second".into()),
                ..Default::default()
            },
        )
        .await;
    assert_eq!(updated.description.as_deref(), Some("second"));
    assert_eq!(updated.friendly_name, None);

    let page = c.list_datasets(Some(1), String::new()).await;
    assert_eq!(page.datasets.len(), 1);
    assert_eq!(page.datasets[0].id, "p:one");
    assert_eq!(page.next_page_token, "1");
    let page = c.list_datasets(None, page.next_page_token).await;
    assert_eq!(page.datasets[0].id, "p:two");
    assert_eq!(page.next_page_token, "");

    // Tables.
    let t = c
        .insert_table(Table {
            table_reference: table_ref("one", "t"),
            schema: schema(vec![
                field("id", "INTEGER", "REQUIRED"),
                field("tags", "STRING", "REPEATED"),
            ]),
            description: Some("a table".into()),
            ..Default::default()
        })
        .await;
    assert_eq!(t.id, "p:one.t");
    assert_eq!(t.r#type, "TABLE");
    assert_eq!(t.num_rows, Some(0));
    assert_eq!(t.schema.as_ref().unwrap().fields[1].mode, "REPEATED");
    c.sql("INSERT INTO one.t (id, tags) VALUES (1, ['a'])")
        .await;
    let patched = c
        .patch_table(
            "one",
            "t",
            Table {
                schema: schema(vec![
                    field("id", "INTEGER", "REQUIRED"),
                    field("tags", "STRING", "REPEATED"),
                    field("note", "STRING", "NULLABLE"),
                ]),
                ..Default::default()
            },
        )
        .await
        .unwrap();
    assert_eq!(patched.schema.unwrap().fields.len(), 3);
    assert_eq!(patched.description.as_deref(), Some("a table"));
    assert_eq!(patched.num_rows, Some(1));
    // The BASIC view leaves out the storage statistics (table.proto).
    let basic = c.get_table("one", "t", 1).await.unwrap();
    assert_eq!(basic.num_rows, None);
    assert_eq!(basic.num_bytes, None);
    assert_eq!(basic.schema.unwrap().fields.len(), 3);
    let e = c.get_table("one", "t", 9).await.unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert_eq!(e.message(), "Invalid value for view: 9");
    let r = c.sql("SELECT id, note FROM one.t").await;
    assert_eq!(
        r.rows.iter().map(row_json).collect::<Vec<_>>(),
        [json!({"f": [{"v": "1"}, {"v": null}]})]
    );
    let e = c
        .patch_table(
            "one",
            "t",
            Table {
                schema: schema(vec![field("id", "STRING", "REQUIRED")]),
                ..Default::default()
            },
        )
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(
        e.message()
            .contains("Provided Schema does not match Table p:one.t"),
        "{}",
        e.message()
    );

    let view = c
        .insert_table(Table {
            table_reference: table_ref("one", "v"),
            view: Some(gcloud_sdk::google::cloud::bigquery::v2::ViewDefinition {
                query: "SELECT id FROM one.t".into(),
                ..Default::default()
            }),
            ..Default::default()
        })
        .await;
    assert_eq!(view.r#type, "VIEW");
    let list = c
        .tables
        .list_tables(ListTablesRequest {
            project_id: "p".into(),
            dataset_id: "one".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(list.total_items, Some(2));
    let kinds: Vec<(&str, &str)> = list
        .tables
        .iter()
        .map(|t| {
            (
                t.table_reference.as_ref().unwrap().table_id.as_str(),
                t.r#type.as_str(),
            )
        })
        .collect();
    assert_eq!(kinds, [("t", "TABLE"), ("v", "VIEW")]);

    let e = c.delete_dataset("one", false).await.unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert_eq!(e.message(), "Dataset p:one is still in use");
    c.tables
        .delete_table(DeleteTableRequest {
            project_id: "p".into(),
            dataset_id: "one".into(),
            table_id: "v".into(),
        })
        .await
        .unwrap();
    let e = c.get_table("one", "v", 0).await.unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
    assert_eq!(
        e.message(),
        "Not found: Table p:one.v was not found in location US"
    );
    c.delete_dataset("one", true).await.unwrap();
    let e = c.get_dataset("one").await.unwrap_err();
    assert_eq!(e.code(), Code::NotFound);
    assert_eq!(e.message(), "Not found: Dataset p:one");
}

#[tokio::test]
async fn timestamp_formats_and_bad_serialization_options() {
    use gcloud_sdk::google::cloud::bigquery::v2::DataFormatOptions;
    use gcloud_sdk::google::cloud::bigquery::v2::data_format_options::TimestampOutputFormat;
    let mut c = Ctx::new().await;
    let sql = "SELECT TIMESTAMP '2024-05-06 07:08:09.123456+00' AS ts";
    let rest_float = c
        .rest
        .post("/queries", json!({"query": sql, "useLegacySql": false}))
        .await;
    let rest_int = c
        .rest
        .post(
            "/queries",
            json!({"query": sql, "useLegacySql": false, "formatOptions": {"useInt64Timestamp": true}}),
        )
        .await;
    let cell = |r: &QueryResponse| row_json(&r.rows[0])["f"][0]["v"].clone();
    let with = |format: TimestampOutputFormat, int64: bool| QueryRequest {
        query: sql.into(),
        format_options: Some(DataFormatOptions {
            use_int64_timestamp: int64,
            timestamp_output_format: format.into(),
        }),
        ..Default::default()
    };
    let r = c.sql(sql).await;
    assert_eq!(cell(&r), rest_float["rows"][0]["f"][0]["v"]);
    let r = c
        .query(with(TimestampOutputFormat::Unspecified, true))
        .await
        .unwrap();
    assert_eq!(cell(&r), rest_int["rows"][0]["f"][0]["v"]);
    assert_eq!(cell(&r), "1714979289123456");
    let r = c
        .query(with(TimestampOutputFormat::Int64, false))
        .await
        .unwrap();
    assert_eq!(cell(&r), "1714979289123456");
    let r = c
        .query(with(TimestampOutputFormat::Float64, true))
        .await
        .unwrap();
    assert_eq!(cell(&r), rest_float["rows"][0]["f"][0]["v"]);
    let e = c
        .query(with(TimestampOutputFormat::Iso8601String, false))
        .await
        .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert_eq!(
        e.message(),
        "Unsupported by bigq-emulator: timestamp_output_format ISO8601_STRING"
    );

    let arrow_with = |compression: i32, picos: i32| QueryRequest {
        query: "SELECT 1 AS x".into(),
        query_results_format: QueryResultsFormat::Arrow.into(),
        results_format_serialization_options: Some(
            ResultsFormatSerializationOptions::ArrowSerializationOptions(
                ArrowSerializationOptions {
                    buffer_compression: compression,
                    picos_timestamp_precision: picos,
                },
            ),
        ),
        ..Default::default()
    };
    let e = c.query(arrow_with(9, 0)).await.unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert_eq!(e.message(), "Invalid buffer_compression 9");
    let e = c.query(arrow_with(0, 7)).await.unwrap_err();
    assert_eq!(e.message(), "Invalid picos_timestamp_precision 7");
    // NANOS only concerns TIMESTAMP_PICOS columns (arrow.proto): accepted.
    let r = c.query(arrow_with(2, 2)).await.unwrap();
    let b = arrow(&r);
    assert_eq!(b[0].column(0).as_primitive::<Int64Type>().value(0), 1);
    let e = c
        .query(QueryRequest {
            query: "SELECT 1".into(),
            query_results_format: 7,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(e.message(), "Invalid query_results_format 7");
}

#[tokio::test]
async fn a_repeated_request_id_answers_with_the_first_job() {
    let mut c = Ctx::new().await;
    c.dataset("ds").await;
    c.sql("CREATE TABLE ds.t (id INT64)").await;
    let insert = |request_id: &str, timeout_ms: u32| QueryRequest {
        query: "INSERT INTO ds.t (id) VALUES (1)".into(),
        request_id: request_id.into(),
        timeout_ms: Some(timeout_ms),
        ..Default::default()
    };
    let first = c.query(insert("req-1", 10_000)).await.unwrap();
    // job.proto: a retry (timeout_ms aside, the same request) gets the first job's result.
    let again = c.query(insert("req-1", 5_000)).await.unwrap();
    assert_eq!(first.job_reference, again.job_reference);
    assert_eq!(again.num_dml_affected_rows, Some(1));
    let count = c.sql("SELECT COUNT(*) AS n FROM ds.t").await;
    assert_eq!(row_json(&count.rows[0]), json!({"f": [{"v": "1"}]}));
    // Another request id, or another query under the same id, is a new job.
    let other = c.query(insert("req-2", 10_000)).await.unwrap();
    assert_ne!(other.job_reference, first.job_reference);
    let changed = c
        .query(QueryRequest {
            query: "INSERT INTO ds.t (id) VALUES (2)".into(),
            request_id: "req-1".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_ne!(changed.job_reference, first.job_reference);
    let count = c.sql("SELECT COUNT(*) AS n FROM ds.t").await;
    assert_eq!(row_json(&count.rows[0]), json!({"f": [{"v": "3"}]}));

    // Short query mode: a statement answered without a job is not run again either, even
    // when the retry asks for a job (as the bigquery crate's retries do).
    let short = |mode: JobCreationMode| QueryRequest {
        query: "INSERT INTO ds.t (id) VALUES (3)".into(),
        request_id: "req-3".into(),
        job_creation_mode: mode.into(),
        ..Default::default()
    };
    let first = c
        .query(short(JobCreationMode::JobCreationOptional))
        .await
        .unwrap();
    assert!(first.job_reference.is_none());
    assert_eq!(first.num_dml_affected_rows, Some(1));
    let again = c
        .query(short(JobCreationMode::JobCreationRequired))
        .await
        .unwrap();
    assert_eq!(again.num_dml_affected_rows, Some(1));
    let count = c.sql("SELECT COUNT(*) AS n FROM ds.t").await;
    assert_eq!(row_json(&count.rows[0]), json!({"f": [{"v": "4"}]}));
}

#[tokio::test]
async fn load_and_copy_jobs_are_refused_by_name() {
    let mut c = Ctx::new().await;
    let load = Job {
        configuration: Some(JobConfiguration {
            load: Some(Default::default()),
            ..Default::default()
        }),
        ..Default::default()
    };
    let e = c.insert_job(load).await.unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(
        e.message().contains("load jobs over gRPC"),
        "{}",
        e.message()
    );
    let copy = Job {
        configuration: Some(JobConfiguration {
            copy: Some(Default::default()),
            ..Default::default()
        }),
        ..Default::default()
    };
    let e = c.insert_job(copy).await.unwrap_err();
    assert!(
        e.message().contains("copy jobs over gRPC"),
        "{}",
        e.message()
    );
}
