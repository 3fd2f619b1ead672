"""Query parameters of every type through the official google-cloud-bigquery client, as it
sends them (FLOAT64 values as JSON numbers, RANGE with rangeElementType, ARRAY<STRUCT>),
and the types of the results it reads back.

Usage: params.py ENDPOINT PROJECT. Exits non-zero on the first failed check.
"""

import datetime
import decimal
import sys

from google.auth.credentials import AnonymousCredentials
from google.cloud import bigquery

endpoint, project = sys.argv[1], sys.argv[2]
client = bigquery.Client(
    project=project,
    credentials=AnonymousCredentials(),
    client_options={"api_endpoint": endpoint},
)


def one(sql, *params):
    job = client.query(sql, job_config=bigquery.QueryJobConfig(query_parameters=list(params)))
    rows = list(job.result())
    assert len(rows) == 1, rows
    return rows[0], {f.name: f.field_type for f in job.result().schema}


row, types = one(
    "SELECT @f AS f, @i AS i, @n AS n, @b AS b, @s AS s, @by AS by, @t AS t, @d AS d",
    bigquery.ScalarQueryParameter("f", "FLOAT64", 1.5),
    bigquery.ScalarQueryParameter("i", "INT64", 7),
    bigquery.ScalarQueryParameter("n", "NUMERIC", decimal.Decimal("1.25")),
    bigquery.ScalarQueryParameter(
        "b", "BIGNUMERIC", decimal.Decimal("123456789012345678901234567890.123")
    ),
    bigquery.ScalarQueryParameter("s", "STRING", "it's"),
    bigquery.ScalarQueryParameter("by", "BYTES", b"\x00\x01\x02"),
    bigquery.ScalarQueryParameter(
        "t", "TIMESTAMP", datetime.datetime(2024, 1, 2, 3, 4, 5, 678901, tzinfo=datetime.timezone.utc)
    ),
    bigquery.ScalarQueryParameter("d", "DATE", datetime.date(2024, 2, 29)),
)
assert row["f"] == 1.5 and row["i"] == 7, row
assert row["n"] == decimal.Decimal("1.25"), row
assert row["b"] == decimal.Decimal("123456789012345678901234567890.123"), row
assert row["s"] == "it's" and row["by"] == b"\x00\x01\x02", row
assert row["t"] == datetime.datetime(2024, 1, 2, 3, 4, 5, 678901, tzinfo=datetime.timezone.utc), row
assert row["d"] == datetime.date(2024, 2, 29), row
assert types == {
    "f": "FLOAT", "i": "INTEGER", "n": "NUMERIC", "b": "BIGNUMERIC", "s": "STRING",
    "by": "BYTES", "t": "TIMESTAMP", "d": "DATE",
}, types

# JSON and GEOGRAPHY parameters are typed JSON and GEOGRAPHY, not STRING.
row, types = one(
    "SELECT @j AS j, JSON_VALUE(@j, '$.a') AS a, @g AS g, ST_X(@g) AS x",
    bigquery.ScalarQueryParameter("j", "JSON", {"a": 1, "b": [True, None]}),
    bigquery.ScalarQueryParameter("g", "GEOGRAPHY", "POINT(1 2)"),
)
assert types == {"j": "JSON", "a": "STRING", "g": "GEOGRAPHY", "x": "FLOAT"}, types
assert row["j"] == {"a": 1, "b": [True, None]}, row
# ST_X reads the point back from its S2 form, as BigQuery does: 1 within rounding.
assert row["a"] == "1" and row["g"] == "POINT(1 2)" and abs(row["x"] - 1.0) < 1e-12, row

# RANGE parameters (rangeElementType), bounded and unbounded.
row, types = one(
    "SELECT @r AS r, RANGE_START(@r) AS s, RANGE_END(@u) IS NULL AS open_end, "
    "RANGE_CONTAINS(@r, DATE '2020-06-01') AS inside",
    bigquery.RangeQueryParameter(
        "DATE", start=datetime.date(2020, 1, 1), end=datetime.date(2020, 12, 31), name="r"
    ),
    bigquery.RangeQueryParameter("DATE", start=datetime.date(2020, 1, 1), name="u"),
)
assert types["r"] == "RANGE" and types["s"] == "DATE", types
assert row["s"] == datetime.date(2020, 1, 1) and row["open_end"] and row["inside"], row

# ARRAY<STRUCT> parameters.
row, types = one(
    "SELECT (SELECT SUM(x) FROM UNNEST(@a)) AS total, @a[OFFSET(1)].y AS second, "
    "ARRAY_LENGTH(@a) AS n",
    bigquery.ArrayQueryParameter(
        "a",
        "STRUCT",
        [
            bigquery.StructQueryParameter(
                None,
                bigquery.ScalarQueryParameter("x", "INT64", 1),
                bigquery.ScalarQueryParameter("y", "STRING", "a"),
            ),
            bigquery.StructQueryParameter(
                None,
                bigquery.ScalarQueryParameter("x", "INT64", 2),
                bigquery.ScalarQueryParameter("y", "STRING", "b"),
            ),
        ],
    ),
)
assert row["total"] == 3 and row["second"] == "b" and row["n"] == 2, row

# Positional parameters and NULLs of a type.
job = client.query(
    "SELECT ? + 1 AS a, ? IS NULL AS b",
    job_config=bigquery.QueryJobConfig(
        query_parameters=[
            bigquery.ScalarQueryParameter(None, "INT64", 41),
            bigquery.ScalarQueryParameter(None, "JSON", None),
        ]
    ),
)
rows = list(job.result())
assert rows[0]["a"] == 42 and rows[0]["b"] is True, rows

print("params: ok")
