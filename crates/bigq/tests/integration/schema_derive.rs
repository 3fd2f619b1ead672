//! `#[derive(bigq::Schema)]`: the schema BigQuery would have for a type with every field
//! kind, named as serde reads the rows, and created as such on bigq-emulator.

use bigq::Schema;
use bigq::schema::{FieldMode, FieldType, RoundingMode, TableFieldSchema, TableSchema};
use bigq::value::{
    BigNumeric, Date, DateTime, Geography, Interval, Json, Numeric, Range, Time, Timestamp,
};
use serde::Deserialize;

#[derive(Deserialize, Schema)]
#[allow(dead_code)]
struct Address {
    street: String,
    zip: Option<String>,
}

#[derive(Deserialize, Schema)]
#[allow(dead_code)]
enum Status {
    Open,
    Shipped,
}

#[derive(Deserialize, Schema)]
#[allow(dead_code)]
struct OrderId(i64);

#[derive(Deserialize, Schema)]
#[allow(dead_code)]
struct Audit {
    created_by: String,
}

#[derive(Deserialize, Schema)]
#[serde(rename_all = "camelCase")]
#[allow(dead_code)]
struct Order {
    order_id: OrderId,
    #[bigq(description = "who ordered", max_length = 64, collation = "und:ci")]
    customer_name: String,
    #[bigq(precision = 12, scale = 2, rounding_mode = "ROUND_HALF_EVEN")]
    amount: Numeric,
    big: Option<BigNumeric>,
    ratio: f64,
    paid: bool,
    photo: Option<Vec<u8>>,
    day: Date,
    at: Time,
    local: DateTime,
    #[bigq(default = "CURRENT_TIMESTAMP()", mode = "NULLABLE")]
    created: Timestamp,
    wait: Option<Interval>,
    payload: Json,
    #[bigq(type = "JSON")]
    raw_payload: String,
    place: Geography,
    window: Range<Date>,
    tags: Vec<String>,
    status: Status,
    shipping: Address,
    previous: Vec<Address>,
    billing: Option<Address>,
    #[serde(rename = "SKU")]
    sku: String,
    #[bigq(rename = "qty")]
    quantity: i32,
    #[serde(skip)]
    cached: u64,
    #[bigq(skip)]
    ignored: Option<String>,
    #[serde(flatten)]
    audit: Audit,
}

fn col(name: &str, t: FieldType, mode: FieldMode) -> TableFieldSchema {
    TableFieldSchema::new(name, t).with_mode(mode)
}

#[test]
fn a_type_with_every_field_kind_has_the_schema_bigquery_would() {
    use FieldMode::{Nullable, Repeated, Required};
    let address = |name: &str, mode| {
        TableFieldSchema::record(
            name,
            vec![
                col("street", FieldType::String, Required),
                col("zip", FieldType::String, Nullable),
            ],
        )
        .with_mode(mode)
    };
    let mut customer =
        col("customerName", FieldType::String, Required).with_description("who ordered");
    customer.max_length = Some(64);
    customer.collation = Some("und:ci".into());
    let mut amount = col("amount", FieldType::Numeric, Required);
    amount.precision = Some(12);
    amount.scale = Some(2);
    amount.rounding_mode = Some(RoundingMode::HalfEven);
    let mut created = col("created", FieldType::Timestamp, Nullable);
    created.default_value_expression = Some("CURRENT_TIMESTAMP()".into());
    let want = TableSchema::new(vec![
        col("orderId", FieldType::Int64, Required),
        customer,
        amount,
        col("big", FieldType::BigNumeric, Nullable),
        col("ratio", FieldType::Float64, Required),
        col("paid", FieldType::Bool, Required),
        col("photo", FieldType::Bytes, Nullable),
        col("day", FieldType::Date, Required),
        col("at", FieldType::Time, Required),
        col("local", FieldType::DateTime, Required),
        created,
        col("wait", FieldType::Interval, Nullable),
        col("payload", FieldType::Json, Required),
        col("rawPayload", FieldType::Json, Required),
        col("place", FieldType::Geography, Required),
        TableFieldSchema::range("window", FieldType::Date).with_mode(Required),
        col("tags", FieldType::String, Repeated),
        col("status", FieldType::String, Required),
        address("shipping", Required),
        address("previous", Repeated),
        address("billing", Nullable),
        col("SKU", FieldType::String, Required),
        col("qty", FieldType::Int64, Required),
        col("created_by", FieldType::String, Required),
    ]);
    let got = TableSchema::of::<Order>();
    for (g, w) in got.fields.iter().zip(&want.fields) {
        assert_eq!(g, w, "column {}", w.name);
    }
    assert_eq!(got, want);
}

#[test]
fn the_derived_schema_reads_rows_serde_reads() {
    // The names in the schema are the names serde looks for: a JSON row keyed by the
    // schema's column names deserializes into the type.
    #[derive(Deserialize, Schema, Debug, PartialEq)]
    #[serde(rename_all = "SCREAMING_SNAKE_CASE")]
    struct Row {
        first_name: String,
        #[serde(rename(serialize = "out", deserialize = "years"))]
        age: Option<i64>,
    }
    let schema = TableSchema::of::<Row>();
    let names: Vec<&str> = schema.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["FIRST_NAME", "years"]);
    let row: Row = serde_json::from_value(serde_json::json!({names[0]: "Ada", names[1]: 36}))
        .expect("a row keyed by the schema's names");
    assert_eq!(
        row,
        Row {
            first_name: "Ada".into(),
            age: Some(36)
        }
    );
}

#[test]
fn generic_row_types_take_their_parameters_schema() {
    #[derive(Deserialize, Schema)]
    #[allow(dead_code)]
    struct Tagged<T> {
        value: T,
        tags: Vec<String>,
    }
    let schema = TableSchema::of::<Tagged<Option<Numeric>>>();
    assert_eq!(schema.fields[0].field_type, FieldType::Numeric);
    assert_eq!(schema.fields[0].mode(), FieldMode::Nullable);
}

#[test]
fn a_typed_filter_names_the_column_its_type_lacks() {
    use bigq::read::Filter;
    let f = Filter::col_of::<Order>("shipping.zip").expect("a nested column");
    assert_eq!(f.is_null().sql(), "`shipping`.`zip` IS NULL");
    assert!(Filter::col_of::<Order>("SKU").is_ok());
    for (name, column) in [
        ("shipping.city", "shipping.city"),
        ("previous.street", "previous.street"),
        ("cached", "cached"),
    ] {
        let e = Filter::col_of::<Order>(name).expect_err(name);
        assert!(
            e.to_string().contains(&format!("no column `{column}`")),
            "{e}"
        );
    }
}
