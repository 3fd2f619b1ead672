"""bench-compare's Python contender: the official google-cloud-bigquery client with
google-cloud-bigquery-storage, pyarrow and pandas, run the way their docs show.

    python contender.py <scenario> [--job]

Reads BENCH_REST / BENCH_GRPC (an emulator on loopback, anonymous credentials; without
BENCH_REST it talks to BigQuery with Application Default Credentials), BENCH_PROJECT and
BENCH_DATASET, runs the scenario once and prints one JSON line: rows, wall_s, cpu_s,
peak_rss_kb, path (or {"error": ...}).
"""

import json
import os
import resource
import sys
import time

SQL = {
    "query_const": "SELECT 1 AS x",
    "query_1k": "SELECT n, CONCAT('row ', CAST(n AS STRING)) AS s "
    "FROM UNNEST(GENERATE_ARRAY(1, 1000)) AS n",
    "query_200k": "SELECT n AS id, CAST(n AS FLOAT64) / 3 AS x, "
    "CONCAT('name ', CAST(n AS STRING)) AS name, MOD(n, 2) = 0 AS flag "
    "FROM UNNEST(GENERATE_ARRAY(1, 200000)) AS n",
}


def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def clients():
    from google.cloud import bigquery

    project = os.environ["BENCH_PROJECT"]
    rest = os.environ.get("BENCH_REST")
    if not rest:
        from google.cloud import bigquery_storage

        return bigquery.Client(project=project), bigquery_storage.BigQueryReadClient()
    from google.api_core.client_options import ClientOptions
    from google.auth.credentials import AnonymousCredentials

    bq = bigquery.Client(
        project=project,
        credentials=AnonymousCredentials(),
        client_options=ClientOptions(api_endpoint=rest),
    )
    grpc_endpoint = os.environ.get("BENCH_GRPC")
    if not grpc_endpoint:
        return bq, None
    import grpc
    from google.cloud import bigquery_storage
    from google.cloud.bigquery_storage_v1.services.big_query_read.transports import (
        BigQueryReadGrpcTransport,
    )

    host = grpc_endpoint.split("://", 1)[-1]
    channel = grpc.insecure_channel(
        host,
        options=[
            ("grpc.max_receive_message_length", -1),
            ("grpc.max_send_message_length", -1),
        ],
    )
    read = bigquery_storage.BigQueryReadClient(
        transport=BigQueryReadGrpcTransport(channel=channel)
    )
    return bq, read


def run(scenario, job):
    from google.cloud import bigquery

    bq, read = clients()
    dataset = os.environ.get("BENCH_DATASET", "")
    config = bigquery.QueryJobConfig(use_query_cache=False)
    t, c = time.perf_counter(), cpu()
    if scenario in ("query_const", "query_1k", "query_200k_rows"):
        sql = SQL["query_200k" if scenario == "query_200k_rows" else scenario]
        if job:
            # query_and_wait with a job, as client.query() + result() would.
            result = bq.query(sql, job_config=config).result()
        else:
            result = bq.query_and_wait(sql, job_config=config)
        rows = list(result)
        path = "REST query_and_wait, rows" if not job else "REST jobs.insert + getQueryResults"
        if getattr(result, "job_id", None):
            path += ", job created"
        return len(rows), t, c, path
    if scenario == "query_200k_arrow":
        result = bq.query_and_wait(SQL["query_200k"], job_config=config)
        # Without a Storage endpoint, stay on REST pages (never Google's default endpoint).
        table = result.to_arrow(bqstorage_client=read, create_bqstorage_client=read is not None)
        path = "REST query_and_wait, to_arrow" + (
            " (Storage Read of the destination table)" if read else " (REST pages)"
        )
        return table.num_rows, t, c, path
    if scenario in ("scan_arrow", "scan_typed"):
        if read is None:
            raise RuntimeError("no Storage API endpoint (BENCH_GRPC)")
        table = bq.get_table(f"{bq.project}.{dataset}.scan")
        rows = bq.list_rows(table)
        if scenario == "scan_arrow":
            got = rows.to_arrow(bqstorage_client=read)
            return got.num_rows, t, c, "Storage Read, to_arrow"
        frame = rows.to_dataframe(bqstorage_client=read)
        return len(frame), t, c, "Storage Read, to_dataframe (pandas, typed columns)"
    raise ValueError(f"scenario {scenario!r} is not available in Python")


def main():
    scenario = sys.argv[1]
    job = "--job" in sys.argv[2:]
    try:
        rows, t, c, path = run(scenario, job)
        wall = time.perf_counter() - t
        out = {
            "rows": rows,
            "wall_s": wall,
            "cpu_s": cpu() - c,
            "peak_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
            "path": path,
        }
    except Exception as e:  # reported to the driver, which records the run as failed
        out = {"error": f"{type(e).__name__}: {e}"}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
