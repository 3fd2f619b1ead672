"""Write into bigq-emulator with the official google-cloud-bigquery-storage writer.

Usage: storage_write.py REST_ENDPOINT GRPC_HOST_PORT PROJECT. Protobuf rows with a
hand-made proto2 descriptor (a nested message and a repeated field) go through
`writer.AppendRowsStream` to a PENDING stream (committed with BatchCommitWriteStreams) and
to the `_default` stream; the rows are then read back over REST. Prints
"storage_write: ok" at the end.
"""

import sys

import grpc
from google.auth.credentials import AnonymousCredentials
from google.cloud import bigquery
from google.cloud.bigquery_storage_v1 import BigQueryWriteClient, types, writer
from google.cloud.bigquery_storage_v1.services.big_query_write.transports import (
    BigQueryWriteGrpcTransport,
)
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

rest, grpc_host, project = sys.argv[1], sys.argv[2], sys.argv[3]
bq = bigquery.Client(
    project=project,
    credentials=AnonymousCredentials(),
    client_options={"api_endpoint": rest},
)
write = BigQueryWriteClient(
    transport=BigQueryWriteGrpcTransport(channel=grpc.insecure_channel(grpc_host))
)

bq.create_dataset(f"{project}.pywrite")
bq.query_and_wait(
    f"CREATE TABLE `{project}.pywrite.t` "
    "(id INT64 NOT NULL, name STRING, tags ARRAY<INT64>, st STRUCT<a INT64, b STRING>)"
)

# A hand-made proto2 descriptor: message Row { int64 id; string name; repeated int64
# tags; Inner st } with Inner { int64 a; string b } nested in it.
f = descriptor_pb2.FileDescriptorProto(name="row.proto", package="w", syntax="proto2")
row = f.message_type.add(name="Row")
inner = row.nested_type.add(name="Inner")
L, T = descriptor_pb2.FieldDescriptorProto, descriptor_pb2.FieldDescriptorProto
inner.field.add(name="a", number=1, type=T.TYPE_INT64, label=L.LABEL_OPTIONAL)
inner.field.add(name="b", number=2, type=T.TYPE_STRING, label=L.LABEL_OPTIONAL)
row.field.add(name="id", number=1, type=T.TYPE_INT64, label=L.LABEL_REQUIRED)
row.field.add(name="name", number=2, type=T.TYPE_STRING, label=L.LABEL_OPTIONAL)
row.field.add(name="tags", number=3, type=T.TYPE_INT64, label=L.LABEL_REPEATED)
row.field.add(
    name="st", number=4, type=T.TYPE_MESSAGE, label=L.LABEL_OPTIONAL, type_name=".w.Row.Inner"
)
pool = descriptor_pool.DescriptorPool()
pool.Add(f)
Row = message_factory.GetMessageClass(pool.FindMessageTypeByName("w.Row"))
proto_descriptor = descriptor_pb2.DescriptorProto()
Row.DESCRIPTOR.CopyToProto(proto_descriptor)


def rows(ids):
    out = []
    for i in ids:
        r = Row(id=i, name=f"n{i}", tags=list(range(i % 3)))
        r.st.a = i * 10
        r.st.b = "x"
        out.append(r.SerializeToString())
    return types.ProtoRows(serialized_rows=out)


def stream(name):
    template = types.AppendRowsRequest(
        write_stream=name,
        proto_rows=types.AppendRowsRequest.ProtoData(
            writer_schema=types.ProtoSchema(proto_descriptor=proto_descriptor)
        ),
    )
    return writer.AppendRowsStream(write, template)


def ids():
    return [r["id"] for r in bq.query_and_wait(f"SELECT id FROM `{project}.pywrite.t` ORDER BY id")]


parent = write.table_path(project, "pywrite", "t")

# PENDING: invisible until committed.
pending = write.create_write_stream(
    parent=parent, write_stream=types.WriteStream(type_=types.WriteStream.Type.PENDING)
)
s = stream(pending.name)
for offset, batch in [(0, [1, 2]), (2, [3])]:
    req = types.AppendRowsRequest(
        offset=offset, proto_rows=types.AppendRowsRequest.ProtoData(rows=rows(batch))
    )
    assert s.send(req).result().append_result.offset == offset
s.close()
assert ids() == [], ids()
assert write.finalize_write_stream(name=pending.name).row_count == 3
commit = write.batch_commit_write_streams(
    types.BatchCommitWriteStreamsRequest(parent=parent, write_streams=[pending.name])
)
assert not commit.stream_errors, commit
assert ids() == [1, 2, 3], ids()

# The default stream: visible at once.
s = stream(f"{parent}/streams/_default")
s.send(types.AppendRowsRequest(proto_rows=types.AppendRowsRequest.ProtoData(rows=rows([4, 5])))).result()
s.close()
assert ids() == [1, 2, 3, 4, 5], ids()

got = bq.query_and_wait(
    f"SELECT id, name, tags, st FROM `{project}.pywrite.t` WHERE id = 5"
)
got = [dict(r.items()) for r in got]
assert got == [{"id": 5, "name": "n5", "tags": [0, 1], "st": {"a": 50, "b": "x"}}], got

print("storage_write: ok")
