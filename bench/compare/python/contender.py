"""bench-compare's Python contender: the official google-cloud-bigquery client with
google-cloud-bigquery-storage, pyarrow and pandas, run the way their docs show.

    python contender.py <scenario> [--job]

Reads BENCH_REST / BENCH_GRPC (an emulator on loopback, anonymous credentials; without
BENCH_REST it talks to BigQuery with Application Default Credentials), BENCH_PROJECT,
BENCH_DATASET and BENCH_SCAN_ROWS (rows a write scenario writes, default 1M), runs the
scenario once and prints one JSON line: rows, wall_s, cpu_s, peak_rss_kb, path (or
{"error": ...}, and then exits with status 1).
"""

import datetime
import decimal
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


def measured(rows, t, c, path):
    """Ends the timed part that started at wall clock `t` with `c` CPU seconds: the JSON
    line's fields."""
    return {
        "rows": rows,
        "wall_s": time.perf_counter() - t,
        "cpu_s": cpu() - c,
        "peak_rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,
        "path": path,
    }


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
    channel = emulator_channel()
    if channel is None:
        return bq, None
    from google.cloud import bigquery_storage
    from google.cloud.bigquery_storage_v1.services.big_query_read.transports import (
        BigQueryReadGrpcTransport,
    )

    read = bigquery_storage.BigQueryReadClient(
        transport=BigQueryReadGrpcTransport(channel=channel)
    )
    return bq, read


def emulator_channel():
    """A plaintext gRPC channel to the emulator's Storage API (BENCH_GRPC), without message
    size limits; None without BENCH_GRPC."""
    grpc_endpoint = os.environ.get("BENCH_GRPC")
    if not grpc_endpoint:
        return None
    import grpc

    host = grpc_endpoint.split("://", 1)[-1]
    return grpc.insecure_channel(
        host,
        options=[
            ("grpc.max_receive_message_length", -1),
            ("grpc.max_send_message_length", -1),
        ],
    )


def write_client():
    """The Storage Write client: on the emulator's gRPC port, or BigQuery's with ADC."""
    from google.cloud.bigquery_storage_v1 import BigQueryWriteClient
    from google.cloud.bigquery_storage_v1.services.big_query_write.transports import (
        BigQueryWriteGrpcTransport,
    )

    if not os.environ.get("BENCH_REST"):
        return BigQueryWriteClient()
    channel = emulator_channel()
    if channel is None:
        raise RuntimeError("no Storage API endpoint (BENCH_GRPC)")
    return BigQueryWriteClient(transport=BigQueryWriteGrpcTransport(channel=channel))


# --- The write scenarios -------------------------------------------------------------

# Rows the write scenarios write (bench-compare sets BENCH_SCAN_ROWS; 10k in a smoke run).
SCAN_ROWS = 1_000_000
# Rows per Arrow record batch in write_1m_arrow (about 5.5 MB of IPC), as the Rust
# contenders use (ARROW_WRITE_BATCH_ROWS in lib.rs).
ARROW_WRITE_BATCH_ROWS = 25_000
# Most bytes in one AppendRows request, as bigq packs them by default (10 MiB); the
# rows get this less room for the stream name and the writer schema.
MAX_REQUEST_BYTES = 10 * 1024 * 1024
ROWS_BUDGET = MAX_REQUEST_BYTES - 64 * 1024

UTC = datetime.timezone.utc
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=UTC)
EPOCH_DAY = datetime.date(1970, 1, 1).toordinal()
MICROSECOND = datetime.timedelta(microseconds=1)


def scan_rows():
    return int(os.environ.get("BENCH_SCAN_ROWS") or SCAN_ROWS)


def scan_row(n):
    """Row `n` (from 1) of the scan table as a Python user holds it (NUMERIC as Decimal,
    DATE as date, TIMESTAMP as an aware datetime, the STRUCT as a dict, NULL as None): the
    same values as ScanRow::generate in lib.rs and the harness's CREATE TABLE AS SELECT."""
    return {
        "id": n,
        "amount": n * 1.5,
        "name": f"name-{n}",
        "active": n % 2 == 0,
        "price": decimal.Decimal(n).scaleb(-2),
        "day": datetime.date.fromordinal(EPOCH_DAY + 18262 + n % 1000),
        "ts": EPOCH + datetime.timedelta(seconds=1_704_067_200 + n),
        "maybe_int": n * 7 if n % 5 else None,
        "maybe_float": n / 7 if n % 7 else None,
        "city": f"city-{n % 50}" if n % 3 else None,
        "flagged": n % 3 == 0 if n % 11 else None,
        "discount": decimal.Decimal(n % 10_000).scaleb(-3) if n % 13 else None,
        "shipped": datetime.date.fromordinal(EPOCH_DAY + 18779 + n % 365) if n % 17 else None,
        "seen": EPOCH + datetime.timedelta(seconds=1_735_689_600 + 60 * n) if n % 19 else None,
        "code": f"code-{n % 997}",
        "score": (n % 1000) / 10,
        "qty": (n * 13) % 100,
        "note": f"note for {n}" if n % 4 else None,
        "rec": {"a": n, "b": f"s{n}"},
        "arr": [n, n + 1, n + 2],
    }


def scan_row_class():
    """The scan table's row as a protobuf message class, from a hand-made proto2 descriptor
    (the Storage Write API reads rows as proto2): fields numbered in column order and named
    as the columns; NUMERIC as decimal text, DATE as int32 days since the epoch, TIMESTAMP
    as int64 microseconds, the STRUCT a nested message, the ARRAY a packed repeated int64
    (what bigq's encoder sends too). Returns the class and its DescriptorProto."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    F = descriptor_pb2.FieldDescriptorProto
    columns = [
        ("id", F.TYPE_INT64),
        ("amount", F.TYPE_DOUBLE),
        ("name", F.TYPE_STRING),
        ("active", F.TYPE_BOOL),
        ("price", F.TYPE_STRING),
        ("day", F.TYPE_INT32),
        ("ts", F.TYPE_INT64),
        ("maybe_int", F.TYPE_INT64),
        ("maybe_float", F.TYPE_DOUBLE),
        ("city", F.TYPE_STRING),
        ("flagged", F.TYPE_BOOL),
        ("discount", F.TYPE_STRING),
        ("shipped", F.TYPE_INT32),
        ("seen", F.TYPE_INT64),
        ("code", F.TYPE_STRING),
        ("score", F.TYPE_DOUBLE),
        ("qty", F.TYPE_INT64),
        ("note", F.TYPE_STRING),
    ]
    f = descriptor_pb2.FileDescriptorProto(
        name="scan_row.proto", package="bench", syntax="proto2"
    )
    row = f.message_type.add(name="ScanRow")
    rec = row.nested_type.add(name="Rec")
    rec.field.add(name="a", number=1, type=F.TYPE_INT64, label=F.LABEL_OPTIONAL)
    rec.field.add(name="b", number=2, type=F.TYPE_STRING, label=F.LABEL_OPTIONAL)
    for number, (name, kind) in enumerate(columns, start=1):
        row.field.add(name=name, number=number, type=kind, label=F.LABEL_OPTIONAL)
    row.field.add(
        name="rec",
        number=19,
        type=F.TYPE_MESSAGE,
        label=F.LABEL_OPTIONAL,
        type_name=".bench.ScanRow.Rec",
    )
    arr = row.field.add(name="arr", number=20, type=F.TYPE_INT64, label=F.LABEL_REPEATED)
    arr.options.packed = True
    pool = descriptor_pool.DescriptorPool()
    pool.Add(f)
    cls = message_factory.GetMessageClass(pool.FindMessageTypeByName("bench.ScanRow"))
    # The writer schema is the one self-contained message (its nested type inside it).
    descriptor = descriptor_pb2.DescriptorProto()
    cls.DESCRIPTOR.CopyToProto(descriptor)
    return cls, descriptor


def scan_arrow_schema():
    """The scan table's schema in Arrow as BigQuery maps its types (scan_arrow_schema() in
    lib.rs): NUMERIC Decimal128(38, 9), DATE date32, TIMESTAMP microseconds in UTC."""
    import pyarrow as pa

    ts, num = pa.timestamp("us", tz="UTC"), pa.decimal128(38, 9)
    return pa.schema(
        [
            ("id", pa.int64()),
            ("amount", pa.float64()),
            ("name", pa.string()),
            ("active", pa.bool_()),
            ("price", num),
            ("day", pa.date32()),
            ("ts", ts),
            ("maybe_int", pa.int64()),
            ("maybe_float", pa.float64()),
            ("city", pa.string()),
            ("flagged", pa.bool_()),
            ("discount", num),
            ("shipped", pa.date32()),
            ("seen", ts),
            ("code", pa.string()),
            ("score", pa.float64()),
            ("qty", pa.int64()),
            ("note", pa.string()),
            ("rec", pa.struct([("a", pa.int64()), ("b", pa.string())])),
            pa.field(
                "arr", pa.list_(pa.field("item", pa.int64(), nullable=False)), nullable=False
            ),
        ]
    )


def fresh_write_table(bq, dataset, name):
    """Makes `dataset.name` an empty table with the scan table's schema (the untimed set-up
    of a write scenario, as fresh_write_table in lib.rs does for the Rust contenders)."""
    from google.cloud import bigquery

    target = f"{bq.project}.{dataset}.{name}"
    schema = bq.get_table(f"{bq.project}.{dataset}.scan").schema
    bq.delete_table(target, not_found_ok=True)
    bq.create_table(bigquery.Table(target, schema=schema))
    return target


def check_written(bq, target, count):
    """Untimed: whether the table holds the `count` rows that were sent, by one query over
    row count, ids and columns of each wire type; raises if not."""
    sql = (
        "SELECT COUNT(*) AS n, COUNT(DISTINCT id) AS ids, SUM(qty) AS qty, "
        "SUM(rec.a) AS rec_a, SUM(ARRAY_LENGTH(arr)) AS arr, COUNT(discount) AS discount, "
        "SUM(CAST(price * 100 AS INT64)) AS price, SUM(UNIX_DATE(day)) AS day, "
        f"SUM(UNIX_SECONDS(ts)) AS ts, COUNT(seen) AS seen FROM `{target}`"
    )
    got = dict(next(iter(bq.query_and_wait(sql))).items())
    ns = range(1, count + 1)
    want = {
        "n": count,
        "ids": count,
        "qty": sum((n * 13) % 100 for n in ns),
        "rec_a": sum(ns),
        "arr": 3 * count,
        "discount": count - count // 13,
        "price": sum(ns),
        "day": sum(18262 + n % 1000 for n in ns),
        "ts": sum(1_704_067_200 + n for n in ns),
        "seen": count - count // 19,
    }
    if got != want:
        diff = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
        raise RuntimeError(f"{target} does not hold the rows sent (got, want): {diff}")


def write_objects(bq, dataset):
    """write_1m_objects: row dicts made before the clock; timed: each turned into a protobuf
    message and serialized, packed into AppendRows requests of at most 10 MiB, appended to
    the _default stream through AppendRowsStream, every response awaited."""
    from google.cloud.bigquery_storage_v1 import types, writer

    target = fresh_write_table(bq, dataset, "write_target_python")
    count = scan_rows()
    rows = [scan_row(n) for n in range(1, count + 1)]
    ScanRow, descriptor = scan_row_class()
    write = write_client()
    project, ds, table = target.split(".")
    template = types.AppendRowsRequest(
        write_stream=f"{write.table_path(project, ds, table)}/streams/_default",
        proto_rows=types.AppendRowsRequest.ProtoData(
            writer_schema=types.ProtoSchema(proto_descriptor=descriptor)
        ),
    )

    t, c = time.perf_counter(), cpu()
    stream = writer.AppendRowsStream(write, template)
    futures, sent = [], types.AppendRowsRequest.pb(template).ByteSize()

    def append(serialized):
        nonlocal sent
        # The request is built as the raw protobuf message and wrapped (proto-plus's
        # Message.pb() / wrap()): proto-plus's own constructors marshal every row of the
        # repeated bytes field one by one, 2.9 s of CPU per 1M rows against 0.05 s here
        # (encoding the rows takes about 7 s).
        raw = types.AppendRowsRequest.pb()(proto_rows={"rows": {"serialized_rows": serialized}})
        sent += raw.ByteSize()
        futures.append(stream.send(types.AppendRowsRequest.wrap(raw)))

    batch, size = [], 0
    for r in rows:
        price, day, ts = r["price"], r["day"], r["ts"]
        discount, shipped, seen = r["discount"], r["shipped"], r["seen"]
        message = ScanRow(
            id=r["id"],
            amount=r["amount"],
            name=r["name"],
            active=r["active"],
            price=str(price),
            day=day.toordinal() - EPOCH_DAY,
            ts=(ts - EPOCH) // MICROSECOND,
            maybe_int=r["maybe_int"],
            maybe_float=r["maybe_float"],
            city=r["city"],
            flagged=r["flagged"],
            discount=None if discount is None else str(discount),
            shipped=None if shipped is None else shipped.toordinal() - EPOCH_DAY,
            seen=None if seen is None else (seen - EPOCH) // MICROSECOND,
            code=r["code"],
            score=r["score"],
            qty=r["qty"],
            note=r["note"],
            rec=r["rec"],
            arr=r["arr"],
        )
        data = message.SerializeToString()
        # A row costs its bytes, a tag and a length of up to 3 bytes in ProtoRows.
        if size + len(data) + 4 > ROWS_BUDGET:
            append(batch)
            batch, size = [], 0
        batch.append(data)
        size += len(data) + 4
    if batch:
        append(batch)
    for f in futures:
        f.result()
    stream.close()
    path = (
        "Storage Write _default, protobuf rows (dicts -> hand-made proto2 descriptor), "
        f"AppendRowsStream, {len(futures)} requests, {sent / 1e6:.1f} MB"
    )
    out = measured(count, t, c, path)
    check_written(bq, target, count)
    return out


def write_arrow(bq, dataset):
    """write_1m_arrow: pyarrow record batches of 25,000 rows made before the clock; timed:
    their IPC serialization and one AppendRows request each (arrow_rows, the writer schema
    on the first) to the _default stream through AppendRowsStream, every response awaited."""
    import pyarrow as pa
    from google.cloud.bigquery_storage_v1 import types, writer

    target = fresh_write_table(bq, dataset, "write_target_python_arrow")
    count = scan_rows()
    schema = scan_arrow_schema()
    batches = []
    for first in range(1, count + 1, ARROW_WRITE_BATCH_ROWS):
        rows = [scan_row(n) for n in range(first, min(first + ARROW_WRITE_BATCH_ROWS, count + 1))]
        # Column by column (RecordBatch.from_pylist is several times slower).
        columns = [pa.array([r[f.name] for r in rows], type=f.type) for f in schema]
        batches.append(pa.RecordBatch.from_arrays(columns, schema=schema))
    write = write_client()
    project, ds, table = target.split(".")

    t, c = time.perf_counter(), cpu()
    # AppendRowsStream takes any AppendRowsRequest as the template for a connection's first
    # request (it merges the template into it), so arrow_rows goes through it as proto_rows
    # does: the writer schema in the template, the record batches in the requests.
    template = types.AppendRowsRequest(
        write_stream=f"{write.table_path(project, ds, table)}/streams/_default",
        arrow_rows=types.AppendRowsRequest.ArrowData(
            writer_schema=types.ArrowSchema(serialized_schema=schema.serialize().to_pybytes())
        ),
    )
    stream = writer.AppendRowsStream(write, template)
    futures, sent = [], types.AppendRowsRequest.pb(template).ByteSize()
    for b in batches:
        request = types.AppendRowsRequest(
            arrow_rows=types.AppendRowsRequest.ArrowData(
                rows=types.ArrowRecordBatch(serialized_record_batch=b.serialize().to_pybytes())
            )
        )
        sent += types.AppendRowsRequest.pb(request).ByteSize()
        futures.append(stream.send(request))
    for f in futures:
        f.result()
    stream.close()
    path = (
        "Storage Write _default, Arrow record batches (pyarrow IPC, arrow_rows), "
        f"AppendRowsStream, {len(futures)} requests, {sent / 1e6:.1f} MB"
    )
    out = measured(count, t, c, path)
    check_written(bq, target, count)
    return out


def run(scenario, job):
    from google.cloud import bigquery

    bq, read = clients()
    dataset = os.environ.get("BENCH_DATASET", "")
    # The write scenarios start their clock after their own set-up.
    if scenario == "write_1m_objects":
        return write_objects(bq, dataset)
    if scenario == "write_1m_arrow":
        return write_arrow(bq, dataset)
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
        return measured(len(rows), t, c, path)
    if scenario == "query_200k_arrow":
        result = bq.query_and_wait(SQL["query_200k"], job_config=config)
        # Without a Storage endpoint, stay on REST pages (never Google's default endpoint).
        table = result.to_arrow(bqstorage_client=read, create_bqstorage_client=read is not None)
        path = "REST query_and_wait, to_arrow" + (
            " (Storage Read of the destination table)" if read else " (REST pages)"
        )
        return measured(table.num_rows, t, c, path)
    if scenario in ("scan_arrow", "scan_typed"):
        if read is None:
            raise RuntimeError("no Storage API endpoint (BENCH_GRPC)")
        table = bq.get_table(f"{bq.project}.{dataset}.scan")
        rows = bq.list_rows(table)
        if scenario == "scan_arrow":
            got = rows.to_arrow(bqstorage_client=read)
            return measured(got.num_rows, t, c, "Storage Read, to_arrow")
        frame = rows.to_dataframe(bqstorage_client=read)
        return measured(len(frame), t, c, "Storage Read, to_dataframe (pandas, typed columns)")
    raise ValueError(f"scenario {scenario!r} is not available in Python")


def main():
    scenario = sys.argv[1]
    job = "--job" in sys.argv[2:]
    try:
        out = run(scenario, job)
    except Exception as e:  # reported to the driver, which records the run as failed
        print(json.dumps({"error": f"{type(e).__name__}: {e}"}))
        sys.exit(1)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
