"""Read bigq-emulator's tables with the official google-cloud-bigquery-storage client.

Usage: storage_read.py REST_ENDPOINT GRPC_HOST_PORT PROJECT. The Rust test arms a fault
hook before running this, so one ReadRows call is cut and the client must resume.
Exits non-zero on the first failed check; prints "storage_read: ok" at the end.
"""

import sys

import grpc
import pyarrow as pa
from google.api_core import exceptions
from google.auth.credentials import AnonymousCredentials
from google.cloud import bigquery
from google.cloud.bigquery_storage_v1 import BigQueryReadClient, types
from google.cloud.bigquery_storage_v1.services.big_query_read.transports import (
    BigQueryReadGrpcTransport,
)

rest, grpc_host, project = sys.argv[1], sys.argv[2], sys.argv[3]
bq = bigquery.Client(
    project=project,
    credentials=AnonymousCredentials(),
    client_options={"api_endpoint": rest},
)
channel = grpc.insecure_channel(
    grpc_host, options=[("grpc.max_receive_message_length", -1)]
)
read = BigQueryReadClient(transport=BigQueryReadGrpcTransport(channel=channel))

bq.create_dataset(f"{project}.pyread")
bq.query_and_wait(
    f"""CREATE TABLE `{project}.pyread.t` AS SELECT
          n AS id,
          IF(MOD(n, 7) = 0, NULL, CONCAT('name ', CAST(n AS STRING))) AS name,
          n / 4 AS score,
          CAST(n AS NUMERIC) / 100 AS amount,
          DATE(TIMESTAMP_SECONDS(946684800 + MOD(n, 900) * 86400)) AS day,
          TIMESTAMP_SECONDS(1577836800 + n) AS ts,
          STRUCT(n * 2 AS a, IF(MOD(n, 4) = 0, NULL, 'x') AS b) AS st,
          GENERATE_ARRAY(1, MOD(n, 4)) AS arr
        FROM UNNEST(GENERATE_ARRAY(1, 30000)) AS n"""
)
table_path = f"projects/{project}/datasets/pyread/tables/t"

# The reference: the same rows over REST (tabledata.list), sorted by id.
listed = (
    bq.list_rows(f"{project}.pyread.t")
    .to_arrow(create_bqstorage_client=False)  # REST only, never Google
    .sort_by("id")
    .to_pylist()
)
assert len(listed) == 30000, len(listed)


def session(table, codec=None, max_streams=4, **options):
    ro = types.ReadSession.TableReadOptions(**options)
    if codec is not None:
        ro.arrow_serialization_options = types.ArrowSerializationOptions(
            buffer_compression=codec
        )
    return read.create_read_session(
        parent=f"projects/{project}",
        read_session=types.ReadSession(
            table=table, data_format=types.DataFormat.ARROW, read_options=ro
        ),
        max_stream_count=max_streams,
    )


codecs = [
    None,
    types.ArrowSerializationOptions.CompressionCodec.LZ4_FRAME,
    types.ArrowSerializationOptions.CompressionCodec.ZSTD,
]
for codec in codecs:
    s = session(table_path, codec)
    assert len(s.streams) == 4, s.streams
    # to_arrow with the session's schema and without it (schema from the first response).
    parts = [read.read_rows(st.name).to_arrow(s) for st in s.streams[:2]]
    parts += [read.read_rows(st.name).to_arrow() for st in s.streams[2:]]
    got = pa.concat_tables(parts).sort_by("id").to_pylist()
    assert got == listed, f"{codec}: rows differ"

# to_dataframe, one stream.
s = session(table_path, max_streams=1)
df = read.read_rows(s.streams[0].name).to_dataframe(s)
assert len(df) == 30000, len(df)
assert list(df.columns) == ["id", "name", "score", "amount", "day", "ts", "st", "arr"]
assert df["id"].sum() == 30000 * 30001 // 2
assert df.loc[df["id"] == 7, "name"].isna().all()
first = df.sort_values("id").iloc[2]
assert first["st"] == {"a": 6, "b": "x"}, first["st"]
assert list(first["arr"]) == [1, 2, 3], first["arr"]

# Projection and restriction.
s = session(
    table_path,
    max_streams=1,
    selected_fields=["id", "st.a"],
    row_restriction="id BETWEEN 10 AND 12",
)
got = read.read_rows(s.streams[0].name).to_arrow(s).sort_by("id").to_pylist()
assert got == [{"id": i, "st": {"a": 2 * i}} for i in (10, 11, 12)], got

# A query's destination table.
job = bq.query(f"SELECT id, name FROM `{project}.pyread.t` WHERE id <= 5")
job.result()
dest = job.destination
s = session(
    f"projects/{dest.project}/datasets/{dest.dataset_id}/tables/{dest.table_id}",
    max_streams=1,
)
got = read.read_rows(s.streams[0].name).to_arrow(s).sort_by("id").to_pylist()
assert [r["id"] for r in got] == [1, 2, 3, 4, 5], got

# Errors raise the exceptions BigQuery's statuses map to.
try:
    session(f"projects/{project}/datasets/pyread/tables/missing")
    raise AssertionError("no error for a missing table")
except exceptions.NotFound as e:
    assert "missing" in str(e), e
try:
    session(table_path, selected_fields=["nope"])
    raise AssertionError("no error for a missing field")
except exceptions.InvalidArgument as e:
    assert "nope" in str(e), e

print("storage_read: ok")
