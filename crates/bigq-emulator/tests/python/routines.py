"""Routines, scripts, transactions and sessions through the official google-cloud-bigquery
client: create_routine / get / list / update / delete, routines called from queries, DDL
functions, a script with loops and an exception handler, and a transaction in a session.

Usage: routines.py ENDPOINT PROJECT. Exits non-zero on the first failed check.
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
client.create_dataset(f"{project}.fns")


def sql_type(kind):
    return bigquery.StandardSqlDataType(type_kind=getattr(bigquery.StandardSqlTypeNames, kind))


def arg(name, kind):
    return bigquery.RoutineArgument(name=name, data_type=sql_type(kind))


# A routine made through the API, then called.
routine = bigquery.Routine(
    f"{project}.fns.multiply",
    type_="SCALAR_FUNCTION",
    language="SQL",
    body="x * y",
    arguments=[arg("x", "INT64"), arg("y", "INT64")],
    return_type=sql_type("INT64"),
    description="multiplies",
)
made = client.create_routine(routine)
assert made.reference.routine_id == "multiply", made.reference
assert made.created is not None and made.etag, (made.created, made.etag)
got = client.get_routine(f"{project}.fns.multiply")
assert got.body == "x * y", got.body
assert [a.name for a in got.arguments] == ["x", "y"], got.arguments
assert got.return_type.type_kind == bigquery.StandardSqlTypeNames.INT64, got.return_type
assert got.description == "multiplies", got.description
rows = list(client.query_and_wait("SELECT fns.multiply(6, 7) AS p"))
assert rows[0]["p"] == 42, rows

# `routines.update` replaces the whole resource, so the client sends every field it keeps.
got.body = "x * y + 1"
client.update_routine(got, ["body", "arguments", "language", "type_", "return_type"])
rows = list(client.query_and_wait(f"SELECT `{project}.fns.multiply`(6, 7) AS p"))
assert rows[0]["p"] == 43, rows

try:
    client.create_routine(routine)
    raise AssertionError("a second create succeeded")
except exceptions.Conflict:
    pass

# A routine made by DDL is listed beside the first.
ddl = client.query(
    "CREATE FUNCTION fns.greet(name STRING) RETURNS STRING AS (CONCAT('Hello, ', name))"
)
ddl.result()
assert ddl.statement_type == "CREATE_FUNCTION", ddl.statement_type
assert ddl.ddl_operation_performed == "CREATE", ddl.ddl_operation_performed
assert ddl.ddl_target_routine.routine_id == "greet", ddl.ddl_target_routine
ids = sorted(r.reference.routine_id for r in client.list_routines(f"{project}.fns"))
assert ids == ["greet", "multiply"], ids
rows = list(client.query_and_wait("SELECT fns.greet('you') AS g"))
assert rows[0]["g"] == "Hello, you", rows
greet = client.get_routine(f"{project}.fns.greet")
assert greet.body == "CONCAT('Hello, ', name)", greet.body

# JavaScript routines are kept, and a call of one is refused by name.
js = bigquery.Routine(
    f"{project}.fns.js_upper",
    type_="SCALAR_FUNCTION",
    language="JAVASCRIPT",
    body="return x.toUpperCase();",
    arguments=[arg("x", "STRING")],
    return_type=sql_type("STRING"),
)
client.create_routine(js)
try:
    client.query_and_wait("SELECT fns.js_upper('a')")
    raise AssertionError("a JavaScript routine ran")
except exceptions.BadRequest as e:
    assert "JAVASCRIPT" in str(e), e

client.delete_routine(f"{project}.fns.multiply")
try:
    client.get_routine(f"{project}.fns.multiply")
    raise AssertionError("deleted routine still there")
except exceptions.NotFound:
    pass

# A script: a temporary function, a loop, and an exception handler.
rows = list(
    client.query_and_wait(
        """
        CREATE TEMP FUNCTION sq(x INT64) AS (x * x);
        DECLARE total INT64 DEFAULT 0;
        DECLARE i INT64 DEFAULT 0;
        WHILE i < 4 DO
          SET i = i + 1;
          SET total = total + sq(i);
        END WHILE;
        BEGIN
          SELECT ERROR('boom');
        EXCEPTION WHEN ERROR THEN
          SELECT total, @@error.message AS why;
        END;
        """
    )
)
assert rows[0]["total"] == 30 and "boom" in rows[0]["why"], rows

# Temporary functions and one SELECT are no script, as BigQuery counts them; anything more is.
job = client.query("CREATE TEMP FUNCTION Add(x INT64, y INT64) AS (x + y); SELECT Add(3, 4) AS s")
assert [r["s"] for r in job.result()] == [7], job
assert job.statement_type == "SELECT", job.statement_type
job = client.query("DECLARE x INT64 DEFAULT 1; SELECT x")
job.result()
assert job.statement_type == "SCRIPT", job.statement_type

# A transaction across the queries of a session, rolled back.
client.query_and_wait("CREATE TABLE fns.stock (item STRING, n INT64)")
client.query_and_wait("INSERT fns.stock VALUES ('a', 1)")
first = client.query(
    "BEGIN TRANSACTION",
    job_config=bigquery.QueryJobConfig(create_session=True),
)
first.result()
session_id = first.session_info.session_id
in_session = bigquery.QueryJobConfig(
    connection_properties=[bigquery.ConnectionProperty("session_id", session_id)]
)
client.query_and_wait("INSERT fns.stock VALUES ('b', 2)", job_config=in_session)
seen = list(client.query_and_wait("SELECT COUNT(*) AS c FROM fns.stock", job_config=in_session))
assert seen[0]["c"] == 2, seen
client.query_and_wait("ROLLBACK TRANSACTION", job_config=in_session)
after = list(client.query_and_wait("SELECT COUNT(*) AS c FROM fns.stock"))
assert after[0]["c"] == 1, after

client.delete_dataset(f"{project}.fns", delete_contents=True)
print("routines: ok")
