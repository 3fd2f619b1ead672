"""Drive bigq-emulator with the official google-cloud-bigquery client.

Usage: client_smoke.py ENDPOINT PROJECT. Exits non-zero on the first failed check.
"""

import sys

from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import bigquery

endpoint, project = sys.argv[1], sys.argv[2]
client = bigquery.Client(
    project=project,
    credentials=AnonymousCredentials(),
    client_options={"api_endpoint": endpoint},
)

ds = client.create_dataset(f"{project}.smoke")
assert ds.dataset_id == "smoke", ds.dataset_id

table = bigquery.Table(
    f"{project}.smoke.people",
    schema=[
        bigquery.SchemaField("id", "INT64", mode="REQUIRED"),
        bigquery.SchemaField("name", "STRING"),
        bigquery.SchemaField("score", "NUMERIC"),
        bigquery.SchemaField("seen", "TIMESTAMP"),
    ],
)
client.create_table(table)

rows = [
    {"id": i, "name": f"n{i}", "score": f"{i}.25", "seen": "2024-01-01T00:00:00Z"}
    for i in range(1, 11)
]
errors = client.insert_rows_json(f"{project}.smoke.people", rows)
assert errors == [], errors
bad = client.insert_rows_json(
    f"{project}.smoke.people", [{"id": "x"}], skip_invalid_rows=True
)
assert bad and bad[0]["errors"][0]["reason"] == "invalid", bad

result = client.query_and_wait(
    "SELECT COUNT(*) AS n, SUM(score) AS s FROM smoke.people WHERE id > @min",
    job_config=bigquery.QueryJobConfig(
        query_parameters=[bigquery.ScalarQueryParameter("min", "INT64", 5)]
    ),
)
row = list(result)[0]
assert row["n"] == 5 and str(row["s"]) == "41.25", dict(row)

pages = client.list_rows(f"{project}.smoke.people", page_size=3)
seen = [r["id"] for r in pages]
assert sorted(seen) == list(range(1, 11)), seen
ts = next(iter(client.list_rows(f"{project}.smoke.people", max_results=1)))["seen"]
assert ts.year == 2024 and ts.tzinfo is not None, ts

try:
    client.query_and_wait("SELECT * FROM smoke.missing")
    raise AssertionError("query on a missing table succeeded")
except exceptions.NotFound as e:
    assert "smoke.missing" in str(e), e

try:
    client.query_and_wait("SELECT NOT_A_FUNCTION(1)")
    raise AssertionError("bad query succeeded")
except exceptions.BadRequest as e:
    assert e.errors[0]["reason"] == "invalidQuery", e.errors

dry = client.query(
    "SELECT id, name FROM smoke.people",
    job_config=bigquery.QueryJobConfig(dry_run=True),
)
assert [f.name for f in dry.schema] == ["id", "name"], dry.schema

job = client.query("SELECT n FROM UNNEST(GENERATE_ARRAY(1, 2500)) AS n")
assert sum(r["n"] for r in job.result(page_size=1000)) == 2500 * 2501 // 2

client.delete_dataset(f"{project}.smoke", delete_contents=True)
print("client_smoke: ok")
