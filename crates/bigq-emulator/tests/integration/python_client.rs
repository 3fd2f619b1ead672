//! The emulator driven by clients nobody here wrote: the official Python clients
//! (`google-cloud-bigquery`, `google-cloud-bigquery-storage` with pyarrow and pandas). Set
//! `BIGQ_PYTHON` to a Python that has them installed; without it these tests say so and pass.

use std::path::PathBuf;
use std::process::Command;

use bigq_emulator::Emulator;

fn python() -> Option<String> {
    match std::env::var("BIGQ_PYTHON") {
        Ok(p) if !p.is_empty() => Some(p),
        _ => {
            eprintln!("BIGQ_PYTHON is not set: skipping the Python client checks");
            None
        }
    }
}

async fn run(args: &[String]) -> std::process::Output {
    let args = args.to_vec();
    tokio::task::spawn_blocking(move || {
        Command::new(&args[0])
            .args(&args[1..])
            .output()
            .expect("run python")
    })
    .await
    .expect("join")
}

/// Runs `tests/python/<name>.py` with `args` and requires it to succeed and print
/// `<name>: ok`.
async fn run_script(py: String, name: &str, args: Vec<String>) {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/python/{name}.py"));
    let mut all = vec![py, script.display().to_string()];
    all.extend(args);
    let out = run(&all).await;
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains(&format!("{name}: ok")),
        "stdout: {stdout}\nstderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs `tests/python/<name>.py ENDPOINT PROJECT` against a fresh emulator of `project`.
async fn run_against_emulator(py: String, project: &str, name: &str) {
    let emu = Emulator::builder()
        .with_project(project)
        .start()
        .await
        .expect("start");
    run_script(
        py,
        name,
        vec![emu.rest_endpoint(), emu.project().to_string()],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn python_client_smoke() {
    let Some(py) = python() else { return };
    run_against_emulator(py, "smoke-project", "client_smoke").await;
}

/// Replays the recorded `sql/<suite>` fixtures with `check_recorded_sql.py` (`../shared/tools`
/// beside the repository) against a fresh emulator; returns the checker's output and its
/// JSON report.
async fn replay(py: String, suite: &str) -> (String, serde_json::Value) {
    let shared = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    let tool = shared.join("tools/check_recorded_sql.py");
    let fixtures = match std::env::var_os("BIGQ_RECORDINGS") {
        Some(d) => PathBuf::from(d),
        None => shared.join("bigquery-recordings"),
    }
    .join("sql")
    .join(suite);
    assert!(tool.is_file(), "no checker at {}", tool.display());
    let emu = Emulator::builder()
        .with_project("test-project")
        .start()
        .await
        .expect("start");
    let report = std::env::temp_dir().join(format!("bigq-emu-{suite}-{}.json", std::process::id()));
    let out = run(&[
        py,
        tool.display().to_string(),
        "--endpoint".into(),
        emu.rest_endpoint(),
        "--project".into(),
        emu.project().to_string(),
        "--fixtures".into(),
        fixtures.display().to_string(),
        "--json-out".into(),
        report.display().to_string(),
        "-q".into(),
    ])
    .await;
    let stdout = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let text = std::fs::read_to_string(&report).unwrap_or_default();
    let _ = std::fs::remove_file(&report);
    let json = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("no report from the checker ({e}):\n{stdout}"));
    (stdout, json)
}

/// Every recorded `sql/rest_crud` fixture matches BigQuery.
#[tokio::test(flavor = "multi_thread")]
async fn python_client_replays_rest_crud() {
    let Some(py) = python() else { return };
    let (stdout, _) = replay(py, "rest_crud").await;
    assert!(
        stdout.contains("pass rate: 100.0%"),
        "not every rest_crud fixture matches:\n{stdout}"
    );
}

/// The `sql/specialized_types` fixtures bigq-emulator matches (GEOGRAPHY text, GeoJSON,
/// type, points and distances on BigQuery's sphere; range interval literals, INTERVAL
/// results, JUSTIFY_* and MAKE_INTERVAL; DATE_DIFF; RANGE literals, columns, functions and
/// RANGE_SESSIONIZE (NULL ranges too); DATE ± INTERVAL as DATETIME; spherical predicates,
/// areas, centroids, WKB and GeoJSON input, GeoJSON output with the vertices S2 adds along
/// long edges; ST_SIMPLIFY, ST_INTERSECTION and ST_DIFFERENCE of polygons, ST_BUFFER of
/// points; PARSE_JSON): all 150 of them, a regression guard.
#[tokio::test(flavor = "multi_thread")]
async fn python_client_replays_specialized_types() {
    let Some(py) = python() else { return };
    still_passing(py, "specialized_types", SPECIALIZED_PASSING).await;
}

/// The `sql/api_configuration` fixtures bigq-emulator matches (job options: destination
/// tables, write dispositions, clustering and partitioning checks, schema update options,
/// labels, dry run, cache, priority, sessions and temporary tables, ...); a regression
/// guard, since legacy SQL and two DataFusion planning failures are not served yet.
#[tokio::test(flavor = "multi_thread")]
async fn python_client_replays_api_configuration() {
    let Some(py) = python() else { return };
    still_passing(py, "api_configuration", API_CONFIGURATION_PASSING).await;
}

/// Replays `suite` and fails naming every fixture of `expected` that no longer matches.
async fn still_passing(py: String, suite: &str, expected: &[&str]) {
    let (stdout, report) = replay(py, suite).await;
    let passed: std::collections::BTreeSet<&str> = report["fixtures"]
        .as_array()
        .expect("fixtures in the report")
        .iter()
        .filter(|f| f["outcome"] == "pass")
        .filter_map(|f| f["fixture"].as_str()?.rsplit('/').next())
        .collect();
    let missing: Vec<&str> = expected
        .iter()
        .copied()
        .filter(|f| !passed.contains(f))
        .collect();
    assert!(
        missing.is_empty(),
        "{suite} fixtures that matched before and no longer do: {missing:?}\n{stdout}"
    );
}

/// The specialized_types fixtures that match (all 150 on 2026-11-30).
const SPECIALIZED_PASSING: &[&str] = &[
    "date_diff_day",
    "date_diff_month",
    "date_diff_year",
    "error_range_sessionize_invalid_mode",
    "extract_day_from_interval",
    "extract_hour_from_interval",
    "extract_year_from_interval",
    "generate_range_array_date",
    "geography_column_basic",
    "geography_column_insert",
    "geography_column_select_filter",
    "interval_arith_add",
    "interval_arith_chain",
    "interval_arith_sub",
    "interval_compound_arith",
    "interval_day_to_second",
    "interval_extract_microsecond",
    "interval_neg_value",
    "interval_with_timestamp_add",
    "interval_year_to_month",
    "interval_zero",
    "justify_days_basic",
    "justify_hours_basic",
    "justify_interval_basic",
    "make_interval_basic",
    "numeric_in_geog_predicate",
    "range_array_aggregate",
    "range_constructor_basic",
    "range_contains_no",
    "range_contains_yes",
    "range_date_literal",
    "range_datetime_literal",
    "range_end_basic",
    "range_ends_with_inf",
    "range_equality_check",
    "range_intersect_basic",
    "range_intersects_empty",
    "range_overlaps_no",
    "range_overlaps_yes",
    "range_sessionize_basic",
    "range_sessionize_datetime_element",
    "range_sessionize_empty_input",
    "range_sessionize_grouped",
    "range_sessionize_meets_explicit",
    "range_sessionize_null_range",
    "range_sessionize_overlaps_option",
    "range_sessionize_overlaps_or_meets_alias",
    "range_sessionize_single_row",
    "range_sessionize_three_partition_cols",
    "range_sessionize_timestamp_element",
    "range_start_basic",
    "range_starts_with_inf",
    "range_timestamp_literal",
    "spheroidal_area_city_match",
    "spheroidal_area_neighborhood_match",
    "spheroidal_area_state_xfail",
    "spheroidal_buffer_neighborhood_match",
    "spheroidal_buffer_state_xfail",
    "spheroidal_buffer_street_match",
    "spheroidal_distance_city_match",
    "spheroidal_distance_metro_close_or_xfail",
    "spheroidal_distance_national_xfail",
    "spheroidal_distance_neighborhood_match",
    "spheroidal_distance_state_xfail",
    "spheroidal_distance_street_match",
    "spheroidal_high_latitude_distance",
    "spheroidal_length_city_match",
    "spheroidal_length_state_xfail",
    "st_area_continental",
    "st_asbinary_point",
    "st_asgeojson_empty_point",
    "st_asgeojson_geometrycollection",
    "st_asgeojson_in_parse_json_roundtrip",
    "st_asgeojson_linestring",
    "st_asgeojson_multilinestring",
    "st_asgeojson_multipoint",
    "st_asgeojson_multipolygon",
    "st_asgeojson_point",
    "st_asgeojson_polygon",
    "st_astext_point",
    "st_boundary_polygon",
    "st_buffer_continental",
    "st_centroid_polygon",
    "st_closestpoint_basic",
    "st_contains_no",
    "st_contains_yes",
    "st_convexhull_points",
    "st_coveredby_yes",
    "st_covers_yes",
    "st_difference_planar",
    "st_dimension_line",
    "st_dimension_point",
    "st_dimension_polygon",
    "st_disjoint_no",
    "st_disjoint_yes",
    "st_distance_continental",
    "st_dump_multipoint",
    "st_dwithin_no",
    "st_dwithin_yes",
    "st_endpoint_line",
    "st_envelope_polygon",
    "st_equals_basic",
    "st_geogfromgeojson_point",
    "st_geogfromtext_collection",
    "st_geogfromtext_linestring",
    "st_geogfromtext_multilinestring",
    "st_geogfromtext_multipoint",
    "st_geogfromtext_multipolygon",
    "st_geogfromtext_point",
    "st_geogfromtext_polygon",
    "st_geogfromwkb_point",
    "st_geogpoint",
    "st_geometrytype_linestring",
    "st_geometrytype_multipoint",
    "st_geometrytype_point",
    "st_geometrytype_polygon",
    "st_intersection_polygons",
    "st_intersects_no",
    "st_intersects_yes",
    "st_intersectsbox_no",
    "st_intersectsbox_yes",
    "st_isclosed_closed",
    "st_isclosed_line",
    "st_isempty_no",
    "st_isempty_yes",
    "st_isring_basic",
    "st_isring_line",
    "st_isvalid_polygon",
    "st_length_continental",
    "st_makeline_basic",
    "st_makepolygon_basic",
    "st_makepolygon_from_ring",
    "st_makepolygonoriented_basic",
    "st_maxdistance_basic",
    "st_npoints_line",
    "st_numpoints_polygon",
    "st_perimeter_continental",
    "st_pointn_first",
    "st_pointn_line",
    "st_simplify_planar",
    "st_snaptogrid_basic",
    "st_startpoint_line",
    "st_touches_no",
    "st_touches_yes",
    "st_union_agg_basic",
    "st_union_points",
    "st_within_no",
    "st_within_yes",
    "st_x_basic",
    "st_y_basic",
];

/// The official Storage Read client (`google-cloud-bigquery-storage`, with pyarrow and
/// pandas) reads tables and a query's destination table over gRPC, compressed or not,
/// and gets the rows `tabledata.list` gives; one of its calls is cut by the fault hook and
/// must resume.
#[tokio::test(flavor = "multi_thread")]
async fn python_storage_read_client() {
    let Some(py) = python() else { return };
    let emu = Emulator::builder()
        .with_project("read-project")
        .start()
        .await
        .expect("start");
    emu.faults().cut_next_read_rows(3_000);
    run_script(
        py,
        "storage_read",
        vec![
            emu.rest_endpoint(),
            emu.grpc_addr().to_string(),
            emu.project().to_string(),
        ],
    )
    .await;
    assert_eq!(emu.faults().read_rows_cut(), 1, "the armed cut never fired");
}

/// The official Storage Write client (`writer.AppendRowsStream`, protobuf rows with a
/// hand-made proto2 descriptor) writes into a PENDING stream and the default stream.
#[tokio::test(flavor = "multi_thread")]
async fn python_storage_write_client() {
    let Some(py) = python() else { return };
    let emu = Emulator::builder()
        .with_project("write-project")
        .start()
        .await
        .expect("start");
    run_script(
        py,
        "storage_write",
        vec![
            emu.rest_endpoint(),
            emu.grpc_addr().to_string(),
            emu.project().to_string(),
        ],
    )
    .await;
}

/// The api_configuration fixtures that match (60 of 63 on 2026-11-30).
const API_CONFIGURATION_PASSING: &[&str] = &[
    "cache_disabled_with_count_distinct",
    "create_never_missing_destination",
    "create_never_with_append",
    "create_never_with_truncate",
    "default_dataset_insert_unqualified",
    "default_dataset_join_partial_qualification",
    "default_dataset_select_table",
    "dest_clustering_fields_basic",
    "dest_clustering_fields_invalid_column",
    "dest_time_partitioning_basic",
    "dest_time_partitioning_invalid_field",
    "dml_delete_multi_row",
    "dml_delete_single_row",
    "dml_delete_with_where",
    "dml_insert_into_destination",
    "dml_insert_multi_row",
    "dml_insert_select",
    "dml_insert_single_row",
    "dml_insert_with_parameters",
    "dml_merge_basic",
    "dml_merge_when_matched",
    "dml_merge_when_not_matched",
    "dml_update_multi_row",
    "dml_update_single_row",
    "dml_update_with_where",
    "dry_run_aggregate",
    "dry_run_create_table",
    "dry_run_insert",
    "dry_run_invalid_function",
    "dry_run_select",
    "job_timeout_exceeded",
    "job_timeout_within_budget",
    "labels_metadata_echo",
    "labels_multiple_keys",
    "labels_unicode_values",
    "max_bytes_billed_exceeded",
    "max_bytes_billed_within_cap",
    "positional_array_int64",
    "positional_multi_param",
    "positional_null_bound_string",
    "positional_parameter_int64",
    "positional_struct_basic",
    "priority_batch",
    "priority_batch_dml",
    "schema_update_addition_with_append",
    "schema_update_addition_with_truncate",
    "schema_update_relaxation_rejected_without_option",
    "schema_update_relaxation_required_to_nullable",
    "session_declared_var_shared",
    "session_invalid_session_id",
    "session_temp_table_visible",
    "use_query_cache_disabled",
    "write_append_clustered_destination",
    "write_append_partitioned_destination",
    "write_append_schema_divergent",
    "write_append_schema_matching",
    "write_truncate_clustered_destination",
    "write_truncate_partitioned_destination",
    "write_truncate_schema_divergent",
    "write_truncate_schema_matching",
];

/// Routines through the official client (create / get / list / update / delete, called from
/// queries, made by DDL, JavaScript refused), a script with a temporary function, a loop and
/// an exception handler, and a transaction across a session's queries.
#[tokio::test(flavor = "multi_thread")]
async fn python_client_routines_scripts_and_transactions() {
    let Some(py) = python() else { return };
    run_against_emulator(py, "routine-project", "routines").await;
}

/// Query parameters of every type as the official client sends them (FLOAT64 as JSON
/// numbers, JSON, GEOGRAPHY, RANGE with `rangeElementType`, ARRAY<STRUCT>, positional),
/// read back with their types.
#[tokio::test(flavor = "multi_thread")]
async fn python_client_query_parameters() {
    let Some(py) = python() else { return };
    run_against_emulator(py, "param-project", "params").await;
}
