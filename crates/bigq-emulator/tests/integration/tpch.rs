//! The 22 TPC-H queries in BigQuery's dialect, run by the emulator over a small generated
//! TPC-H dataset and compared with the same queries run by SQLite (Python's `sqlite3`, in
//! SQLite's dialect) over the same rows: an independent engine as the reference.
//!
//! The data is generated here, deterministically (a few hundred rows per table, domains
//! narrowed so that most queries' predicates match rows). The queries are written once, with
//! macros for what the dialects spell differently: `@DATE(d)`, `@ADD(d, n, UNIT)`,
//! `@SUB(d, n, UNIT)` and `@YEAR(x)`. Fragments shaped as TPC-DS's queries (ROLLUP with
//! GROUPING(), ranking windows, several CTEs) run the same way. Python is `BIGQ_PYTHON`, else
//! `python3`; without one the test says so and passes.

use std::fmt::Write as _;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::common;

/// A small linear congruential generator: the same rows on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    /// In `lo..=hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.next() as usize % items.len()]
    }
}

/// A value of a generated row.
enum Cell {
    Int(i64),
    /// Cents, written as a decimal with two places.
    Money(i64),
    Text(String),
    Date(i64),
}

impl Cell {
    fn sql(&self, bigquery: bool) -> String {
        match self {
            Cell::Int(n) => n.to_string(),
            Cell::Money(c) => {
                let sign = if *c < 0 { "-" } else { "" };
                format!("{sign}{}.{:02}", c.abs() / 100, c.abs() % 100)
            }
            Cell::Text(s) => format!("'{}'", s.replace('\'', "''")),
            Cell::Date(d) if bigquery => format!("DATE '{}'", civil(*d)),
            Cell::Date(d) => format!("'{}'", civil(*d)),
        }
    }
}

/// Days since 1970-01-01 as `YYYY-MM-DD`.
fn civil(days: i64) -> String {
    // Howard Hinnant's civil_from_days.
    let z = days + 719468;
    let era = z.div_euclid(146097);
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    format!("{:04}-{m:02}-{d:02}", if m <= 2 { y + 1 } else { y })
}

/// Days since 1970-01-01 of a date.
fn days(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

struct Table {
    name: &'static str,
    /// `name TYPE` in BigQuery's types.
    columns: &'static [(&'static str, &'static str)],
    rows: Vec<Vec<Cell>>,
}

const NATIONS: [(&str, i64); 25] = [
    ("ALGERIA", 0),
    ("ARGENTINA", 1),
    ("BRAZIL", 1),
    ("CANADA", 1),
    ("EGYPT", 4),
    ("ETHIOPIA", 0),
    ("FRANCE", 3),
    ("GERMANY", 3),
    ("INDIA", 2),
    ("INDONESIA", 2),
    ("IRAN", 4),
    ("IRAQ", 4),
    ("JAPAN", 2),
    ("JORDAN", 4),
    ("KENYA", 0),
    ("MOROCCO", 0),
    ("MOZAMBIQUE", 0),
    ("PERU", 1),
    ("CHINA", 2),
    ("ROMANIA", 3),
    ("SAUDI ARABIA", 4),
    ("VIETNAM", 2),
    ("RUSSIA", 3),
    ("UNITED KINGDOM", 3),
    ("UNITED STATES", 1),
];

fn generate() -> Vec<Table> {
    let mut r = Rng(20240601);
    let words = [
        "furious",
        "quick",
        "special",
        "requests",
        "sleep",
        "carefully",
        "final",
        "ironic",
        "pending",
        "deposits",
        "Customer",
        "Complaints",
        "packages",
        "blithely",
    ];
    let comment = |r: &mut Rng| (0..4).map(|_| r.pick(&words)).collect::<Vec<_>>().join(" ");
    let regions = ["AFRICA", "AMERICA", "ASIA", "EUROPE", "MIDDLE EAST"];
    let region = Table {
        name: "region",
        columns: &[
            ("r_regionkey", "INT64"),
            ("r_name", "STRING"),
            ("r_comment", "STRING"),
        ],
        rows: regions
            .iter()
            .enumerate()
            .map(|(i, n)| {
                vec![
                    Cell::Int(i as i64),
                    Cell::Text(n.to_string()),
                    Cell::Text(comment(&mut r)),
                ]
            })
            .collect(),
    };
    let nation = Table {
        name: "nation",
        columns: &[
            ("n_nationkey", "INT64"),
            ("n_name", "STRING"),
            ("n_regionkey", "INT64"),
            ("n_comment", "STRING"),
        ],
        rows: NATIONS
            .iter()
            .enumerate()
            .map(|(i, (n, reg))| {
                vec![
                    Cell::Int(i as i64),
                    Cell::Text(n.to_string()),
                    Cell::Int(*reg),
                    Cell::Text(comment(&mut r)),
                ]
            })
            .collect(),
    };
    let phone = |r: &mut Rng, nation: i64| {
        format!(
            "{}-{}-{}-{}",
            nation + 10,
            r.range(100, 999),
            r.range(100, 999),
            r.range(1000, 9999)
        )
    };
    let (suppliers, customers, parts, orders_n) = (20, 60, 80, 300);
    let supplier = Table {
        name: "supplier",
        columns: &[
            ("s_suppkey", "INT64"),
            ("s_name", "STRING"),
            ("s_address", "STRING"),
            ("s_nationkey", "INT64"),
            ("s_phone", "STRING"),
            ("s_acctbal", "FLOAT64"),
            ("s_comment", "STRING"),
        ],
        rows: (1..=suppliers)
            .map(|k| {
                let n = r.range(0, 24);
                vec![
                    Cell::Int(k),
                    Cell::Text(format!("Supplier#{k:09}")),
                    Cell::Text(format!("addr{}", r.range(1, 999))),
                    Cell::Int(n),
                    Cell::Text(phone(&mut r, n)),
                    Cell::Money(r.range(-99999, 999999)),
                    Cell::Text(comment(&mut r)),
                ]
            })
            .collect(),
    };
    let segments = [
        "AUTOMOBILE",
        "BUILDING",
        "FURNITURE",
        "HOUSEHOLD",
        "MACHINERY",
    ];
    let customer = Table {
        name: "customer",
        columns: &[
            ("c_custkey", "INT64"),
            ("c_name", "STRING"),
            ("c_address", "STRING"),
            ("c_nationkey", "INT64"),
            ("c_phone", "STRING"),
            ("c_acctbal", "FLOAT64"),
            ("c_mktsegment", "STRING"),
            ("c_comment", "STRING"),
        ],
        rows: (1..=customers)
            .map(|k| {
                let n = r.range(0, 24);
                vec![
                    Cell::Int(k),
                    Cell::Text(format!("Customer#{k:09}")),
                    Cell::Text(format!("addr{}", r.range(1, 999))),
                    Cell::Int(n),
                    Cell::Text(phone(&mut r, n)),
                    Cell::Money(r.range(-99999, 999999)),
                    Cell::Text(r.pick(&segments).to_string()),
                    Cell::Text(comment(&mut r)),
                ]
            })
            .collect(),
    };
    let colors = [
        "forest",
        "green",
        "almond",
        "blue",
        "chocolate",
        "lime",
        "navy",
        "red",
    ];
    let types1 = ["STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO"];
    let types2 = ["ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED"];
    let types3 = ["TIN", "NICKEL", "BRASS", "STEEL", "COPPER"];
    let containers1 = ["SM", "LG", "MED", "JUMBO", "WRAP"];
    let containers2 = ["CASE", "BOX", "BAG", "JAR", "PKG", "PACK", "CAN", "DRUM"];
    let sizes = [1, 3, 5, 9, 10, 14, 15, 19, 23, 36, 45, 49];
    let mut retail = Vec::new();
    let part = Table {
        name: "part",
        columns: &[
            ("p_partkey", "INT64"),
            ("p_name", "STRING"),
            ("p_mfgr", "STRING"),
            ("p_brand", "STRING"),
            ("p_type", "STRING"),
            ("p_size", "INT64"),
            ("p_container", "STRING"),
            ("p_retailprice", "FLOAT64"),
            ("p_comment", "STRING"),
        ],
        rows: (1..=parts)
            .map(|k| {
                let m = r.range(1, 5);
                let price = 90000 + (k / 10) % 20001 + 100 * (k % 1000);
                retail.push(price);
                vec![
                    Cell::Int(k),
                    Cell::Text(format!("{} {}", r.pick(&colors), r.pick(&colors))),
                    Cell::Text(format!("Manufacturer#{m}")),
                    Cell::Text(format!("Brand#{m}{}", r.range(1, 5))),
                    Cell::Text(format!(
                        "{} {} {}",
                        r.pick(&types1),
                        r.pick(&types2),
                        r.pick(&types3)
                    )),
                    Cell::Int(sizes[r.next() as usize % sizes.len()]),
                    Cell::Text(format!("{} {}", r.pick(&containers1), r.pick(&containers2))),
                    Cell::Money(price),
                    Cell::Text(comment(&mut r)),
                ]
            })
            .collect(),
    };
    let mut partsupp_rows = Vec::new();
    for p in 1..=parts {
        for i in 0..4 {
            let s = (p + i * (suppliers / 4) + (p - 1) / suppliers) % suppliers + 1;
            partsupp_rows.push(vec![
                Cell::Int(p),
                Cell::Int(s),
                Cell::Int(r.range(1, 9999)),
                Cell::Money(r.range(100, 100000)),
                Cell::Text(comment(&mut r)),
            ]);
        }
    }
    let partsupp = Table {
        name: "partsupp",
        columns: &[
            ("ps_partkey", "INT64"),
            ("ps_suppkey", "INT64"),
            ("ps_availqty", "INT64"),
            ("ps_supplycost", "FLOAT64"),
            ("ps_comment", "STRING"),
        ],
        rows: partsupp_rows,
    };
    let priorities = ["1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW"];
    let instructs = [
        "DELIVER IN PERSON",
        "COLLECT COD",
        "NONE",
        "TAKE BACK RETURN",
    ];
    let modes = ["REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB"];
    let (start, end) = (days(1992, 1, 1), days(1998, 8, 2));
    let current = days(1995, 6, 17);
    let mut order_rows = Vec::new();
    let mut line_rows = Vec::new();
    for o in 1..=orders_n {
        let key = o * 4 - 3;
        // A third of the customers place no orders (TPC-H's rule), for Q13 and Q22.
        let cust = loop {
            let c = r.range(1, customers);
            if c % 3 != 0 {
                break c;
            }
        };
        let date = r.range(start, end - 151);
        let lines = r.range(1, 7);
        let mut total = 0i64;
        let mut statuses = Vec::new();
        for l in 1..=lines {
            let p = r.range(1, parts);
            let s = (p + r.range(0, 3) * (suppliers / 4) + (p - 1) / suppliers) % suppliers + 1;
            let qty = r.range(1, 50);
            let price = qty * retail[(p - 1) as usize];
            let discount = r.range(0, 10);
            let tax = r.range(0, 8);
            let ship = date + r.range(1, 121);
            let commit = date + r.range(30, 90);
            let receipt = ship + r.range(1, 30);
            let flag = if receipt <= current {
                if r.next().is_multiple_of(2) { "R" } else { "A" }
            } else {
                "N"
            };
            let status = if ship > current { "O" } else { "F" };
            statuses.push(status);
            total += price * (100 - discount) / 100 * (100 + tax) / 100;
            line_rows.push(vec![
                Cell::Int(key),
                Cell::Int(p),
                Cell::Int(s),
                Cell::Int(l),
                Cell::Int(qty),
                Cell::Money(price),
                Cell::Money(discount),
                Cell::Money(tax),
                Cell::Text(flag.to_string()),
                Cell::Text(status.to_string()),
                Cell::Date(ship),
                Cell::Date(commit),
                Cell::Date(receipt),
                Cell::Text(r.pick(&instructs).to_string()),
                Cell::Text(r.pick(&modes).to_string()),
                Cell::Text(comment(&mut r)),
            ]);
        }
        let status = if statuses.iter().all(|s| *s == "F") {
            "F"
        } else if statuses.iter().all(|s| *s == "O") {
            "O"
        } else {
            "P"
        };
        order_rows.push(vec![
            Cell::Int(key),
            Cell::Int(cust),
            Cell::Text(status.to_string()),
            Cell::Money(total),
            Cell::Date(date),
            Cell::Text(r.pick(&priorities).to_string()),
            Cell::Text(format!("Clerk#{:09}", r.range(1, 10))),
            Cell::Int(0),
            Cell::Text(comment(&mut r)),
        ]);
    }
    let orders = Table {
        name: "orders",
        columns: &[
            ("o_orderkey", "INT64"),
            ("o_custkey", "INT64"),
            ("o_orderstatus", "STRING"),
            ("o_totalprice", "FLOAT64"),
            ("o_orderdate", "DATE"),
            ("o_orderpriority", "STRING"),
            ("o_clerk", "STRING"),
            ("o_shippriority", "INT64"),
            ("o_comment", "STRING"),
        ],
        rows: order_rows,
    };
    let lineitem = Table {
        name: "lineitem",
        columns: &[
            ("l_orderkey", "INT64"),
            ("l_partkey", "INT64"),
            ("l_suppkey", "INT64"),
            ("l_linenumber", "INT64"),
            ("l_quantity", "INT64"),
            ("l_extendedprice", "FLOAT64"),
            ("l_discount", "FLOAT64"),
            ("l_tax", "FLOAT64"),
            ("l_returnflag", "STRING"),
            ("l_linestatus", "STRING"),
            ("l_shipdate", "DATE"),
            ("l_commitdate", "DATE"),
            ("l_receiptdate", "DATE"),
            ("l_shipinstruct", "STRING"),
            ("l_shipmode", "STRING"),
            ("l_comment", "STRING"),
        ],
        rows: line_rows,
    };
    vec![
        region, nation, supplier, customer, part, partsupp, orders, lineitem,
    ]
}

/// The table's CREATE TABLE and INSERT statements in one dialect.
fn statements(t: &Table, bigquery: bool) -> Vec<String> {
    let cols: Vec<String> = t
        .columns
        .iter()
        .map(|(n, ty)| {
            let ty = match (bigquery, *ty) {
                (true, ty) => ty,
                (false, "INT64") => "INTEGER",
                (false, "FLOAT64") => "REAL",
                (false, _) => "TEXT",
            };
            format!("{n} {ty}")
        })
        .collect();
    let prefix = if bigquery { "tpch." } else { "" };
    let mut out = vec![format!(
        "CREATE TABLE {prefix}{} ({})",
        t.name,
        cols.join(", ")
    )];
    for chunk in t.rows.chunks(250) {
        let mut sql = format!("INSERT INTO {prefix}{} VALUES ", t.name);
        for (i, row) in chunk.iter().enumerate() {
            if i > 0 {
                sql.push_str(", ");
            }
            let cells: Vec<String> = row.iter().map(|c| c.sql(bigquery)).collect();
            let _ = write!(sql, "({})", cells.join(", "));
        }
        out.push(sql);
    }
    out
}

/// A query with its macros expanded for one dialect.
fn dialect(sql: &str, bigquery: bool) -> String {
    let mut out = String::new();
    let mut rest = sql;
    while let Some(at) = rest.find('@') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let open = after.find('(').expect("macro (");
        let close = after.find(')').expect("macro )");
        let name = &after[..open];
        let args: Vec<&str> = after[open + 1..close].split(',').map(str::trim).collect();
        let unit = |u: &str| u.to_ascii_lowercase();
        out.push_str(&match (name, bigquery, args.as_slice()) {
            ("DATE", true, [d]) => format!("DATE '{d}'"),
            ("DATE", false, [d]) => format!("'{d}'"),
            ("ADD", true, [d, n, u]) => format!("DATE_ADD(DATE '{d}', INTERVAL {n} {u})"),
            ("ADD", false, [d, n, u]) => format!("date('{d}', '+{n} {}')", unit(u)),
            ("SUB", true, [d, n, u]) => format!("DATE_SUB(DATE '{d}', INTERVAL {n} {u})"),
            ("SUB", false, [d, n, u]) => format!("date('{d}', '-{n} {}')", unit(u)),
            ("YEAR", true, [x]) => format!("EXTRACT(YEAR FROM {x})"),
            ("YEAR", false, [x]) => format!("CAST(strftime('%Y', {x}) AS INTEGER)"),
            _ => panic!("unknown macro @{name}({})", args.join(", ")),
        });
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}

/// The 22 queries of TPC-H (its validation parameters), with the dialect macros.
const QUERIES: [(&str, &str); 22] = [
    (
        "q1",
        "SELECT l_returnflag, l_linestatus, SUM(l_quantity) AS sum_qty, SUM(l_extendedprice) AS sum_base_price, SUM(l_extendedprice * (1 - l_discount)) AS sum_disc_price, SUM(l_extendedprice * (1 - l_discount) * (1 + l_tax)) AS sum_charge, AVG(l_quantity) AS avg_qty, AVG(l_extendedprice) AS avg_price, AVG(l_discount) AS avg_disc, COUNT(*) AS count_order FROM lineitem WHERE l_shipdate <= @SUB(1998-12-01, 90, DAY) GROUP BY l_returnflag, l_linestatus ORDER BY l_returnflag, l_linestatus",
    ),
    (
        "q2",
        "SELECT s_acctbal, s_name, n_name, p_partkey, p_mfgr, s_address, s_phone, s_comment FROM part, supplier, partsupp, nation, region WHERE p_partkey = ps_partkey AND s_suppkey = ps_suppkey AND p_size = 15 AND p_type LIKE '%BRASS' AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey AND r_name = 'EUROPE' AND ps_supplycost = (SELECT MIN(ps_supplycost) FROM partsupp, supplier, nation, region WHERE p_partkey = ps_partkey AND s_suppkey = ps_suppkey AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey AND r_name = 'EUROPE') ORDER BY s_acctbal DESC, n_name, s_name, p_partkey LIMIT 100",
    ),
    (
        "q3",
        "SELECT l_orderkey, SUM(l_extendedprice * (1 - l_discount)) AS revenue, o_orderdate, o_shippriority FROM customer, orders, lineitem WHERE c_mktsegment = 'BUILDING' AND c_custkey = o_custkey AND l_orderkey = o_orderkey AND o_orderdate < @DATE(1995-03-15) AND l_shipdate > @DATE(1995-03-15) GROUP BY l_orderkey, o_orderdate, o_shippriority ORDER BY revenue DESC, o_orderdate LIMIT 10",
    ),
    (
        "q4",
        "SELECT o_orderpriority, COUNT(*) AS order_count FROM orders WHERE o_orderdate >= @DATE(1993-07-01) AND o_orderdate < @ADD(1993-07-01, 3, MONTH) AND EXISTS (SELECT * FROM lineitem WHERE l_orderkey = o_orderkey AND l_commitdate < l_receiptdate) GROUP BY o_orderpriority ORDER BY o_orderpriority",
    ),
    (
        "q5",
        "SELECT n_name, SUM(l_extendedprice * (1 - l_discount)) AS revenue FROM customer, orders, lineitem, supplier, nation, region WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey AND l_suppkey = s_suppkey AND c_nationkey = s_nationkey AND s_nationkey = n_nationkey AND n_regionkey = r_regionkey AND r_name = 'ASIA' AND o_orderdate >= @DATE(1994-01-01) AND o_orderdate < @ADD(1994-01-01, 1, YEAR) GROUP BY n_name ORDER BY revenue DESC",
    ),
    (
        "q6",
        "SELECT SUM(l_extendedprice * l_discount) AS revenue FROM lineitem WHERE l_shipdate >= @DATE(1994-01-01) AND l_shipdate < @ADD(1994-01-01, 1, YEAR) AND l_discount BETWEEN 0.06 - 0.01 AND 0.06 + 0.01 AND l_quantity < 24",
    ),
    (
        "q7",
        "SELECT supp_nation, cust_nation, l_year, SUM(volume) AS revenue FROM (SELECT n1.n_name AS supp_nation, n2.n_name AS cust_nation, @YEAR(l_shipdate) AS l_year, l_extendedprice * (1 - l_discount) AS volume FROM supplier, lineitem, orders, customer, nation n1, nation n2 WHERE s_suppkey = l_suppkey AND o_orderkey = l_orderkey AND c_custkey = o_custkey AND s_nationkey = n1.n_nationkey AND c_nationkey = n2.n_nationkey AND ((n1.n_name = 'FRANCE' AND n2.n_name = 'GERMANY') OR (n1.n_name = 'GERMANY' AND n2.n_name = 'FRANCE')) AND l_shipdate BETWEEN @DATE(1995-01-01) AND @DATE(1996-12-31)) AS shipping GROUP BY supp_nation, cust_nation, l_year ORDER BY supp_nation, cust_nation, l_year",
    ),
    (
        "q8",
        "SELECT o_year, SUM(CASE WHEN nation = 'BRAZIL' THEN volume ELSE 0 END) / SUM(volume) AS mkt_share FROM (SELECT @YEAR(o_orderdate) AS o_year, l_extendedprice * (1 - l_discount) AS volume, n2.n_name AS nation FROM part, supplier, lineitem, orders, customer, nation n1, nation n2, region WHERE p_partkey = l_partkey AND s_suppkey = l_suppkey AND l_orderkey = o_orderkey AND o_custkey = c_custkey AND c_nationkey = n1.n_nationkey AND n1.n_regionkey = r_regionkey AND r_name = 'AMERICA' AND s_nationkey = n2.n_nationkey AND o_orderdate BETWEEN @DATE(1995-01-01) AND @DATE(1996-12-31) AND p_type LIKE 'ECONOMY%') AS all_nations GROUP BY o_year ORDER BY o_year",
    ),
    (
        "q9",
        "SELECT nation, o_year, SUM(amount) AS sum_profit FROM (SELECT n_name AS nation, @YEAR(o_orderdate) AS o_year, l_extendedprice * (1 - l_discount) - ps_supplycost * l_quantity AS amount FROM part, supplier, lineitem, partsupp, orders, nation WHERE s_suppkey = l_suppkey AND ps_suppkey = l_suppkey AND ps_partkey = l_partkey AND p_partkey = l_partkey AND o_orderkey = l_orderkey AND s_nationkey = n_nationkey AND p_name LIKE '%green%') AS profit GROUP BY nation, o_year ORDER BY nation, o_year DESC",
    ),
    (
        "q10",
        "SELECT c_custkey, c_name, SUM(l_extendedprice * (1 - l_discount)) AS revenue, c_acctbal, n_name, c_address, c_phone, c_comment FROM customer, orders, lineitem, nation WHERE c_custkey = o_custkey AND l_orderkey = o_orderkey AND o_orderdate >= @DATE(1993-10-01) AND o_orderdate < @ADD(1993-10-01, 3, MONTH) AND l_returnflag = 'R' AND c_nationkey = n_nationkey GROUP BY c_custkey, c_name, c_acctbal, c_phone, n_name, c_address, c_comment ORDER BY revenue DESC LIMIT 20",
    ),
    (
        "q11",
        "SELECT ps_partkey, SUM(ps_supplycost * ps_availqty) AS value FROM partsupp, supplier, nation WHERE ps_suppkey = s_suppkey AND s_nationkey = n_nationkey AND n_name = 'GERMANY' GROUP BY ps_partkey HAVING SUM(ps_supplycost * ps_availqty) > (SELECT SUM(ps_supplycost * ps_availqty) * 0.0001 FROM partsupp, supplier, nation WHERE ps_suppkey = s_suppkey AND s_nationkey = n_nationkey AND n_name = 'GERMANY') ORDER BY value DESC",
    ),
    (
        "q12",
        "SELECT l_shipmode, SUM(CASE WHEN o_orderpriority = '1-URGENT' OR o_orderpriority = '2-HIGH' THEN 1 ELSE 0 END) AS high_line_count, SUM(CASE WHEN o_orderpriority <> '1-URGENT' AND o_orderpriority <> '2-HIGH' THEN 1 ELSE 0 END) AS low_line_count FROM orders, lineitem WHERE o_orderkey = l_orderkey AND l_shipmode IN ('MAIL', 'SHIP') AND l_commitdate < l_receiptdate AND l_shipdate < l_commitdate AND l_receiptdate >= @DATE(1994-01-01) AND l_receiptdate < @ADD(1994-01-01, 1, YEAR) GROUP BY l_shipmode ORDER BY l_shipmode",
    ),
    (
        "q13",
        "SELECT c_count, COUNT(*) AS custdist FROM (SELECT c_custkey, COUNT(o_orderkey) AS c_count FROM customer LEFT OUTER JOIN orders ON c_custkey = o_custkey AND o_comment NOT LIKE '%special%requests%' GROUP BY c_custkey) AS c_orders GROUP BY c_count ORDER BY custdist DESC, c_count DESC",
    ),
    (
        "q14",
        "SELECT 100.00 * SUM(CASE WHEN p_type LIKE 'PROMO%' THEN l_extendedprice * (1 - l_discount) ELSE 0 END) / SUM(l_extendedprice * (1 - l_discount)) AS promo_revenue FROM lineitem, part WHERE l_partkey = p_partkey AND l_shipdate >= @DATE(1995-09-01) AND l_shipdate < @ADD(1995-09-01, 1, MONTH)",
    ),
    (
        "q15",
        "WITH revenue0 AS (SELECT l_suppkey AS supplier_no, SUM(l_extendedprice * (1 - l_discount)) AS total_revenue FROM lineitem WHERE l_shipdate >= @DATE(1996-01-01) AND l_shipdate < @ADD(1996-01-01, 3, MONTH) GROUP BY l_suppkey) SELECT s_suppkey, s_name, s_address, s_phone, total_revenue FROM supplier, revenue0 WHERE s_suppkey = supplier_no AND total_revenue = (SELECT MAX(total_revenue) FROM revenue0) ORDER BY s_suppkey",
    ),
    (
        "q16",
        "SELECT p_brand, p_type, p_size, COUNT(DISTINCT ps_suppkey) AS supplier_cnt FROM partsupp, part WHERE p_partkey = ps_partkey AND p_brand <> 'Brand#45' AND p_type NOT LIKE 'MEDIUM POLISHED%' AND p_size IN (49, 14, 23, 45, 19, 3, 36, 9) AND ps_suppkey NOT IN (SELECT s_suppkey FROM supplier WHERE s_comment LIKE '%Customer%Complaints%') GROUP BY p_brand, p_type, p_size ORDER BY supplier_cnt DESC, p_brand, p_type, p_size",
    ),
    (
        "q17",
        "SELECT SUM(l_extendedprice) / 7.0 AS avg_yearly FROM lineitem, part WHERE p_partkey = l_partkey AND p_brand = 'Brand#23' AND p_container LIKE 'MED%' AND l_quantity < (SELECT 0.2 * AVG(l_quantity) FROM lineitem WHERE l_partkey = p_partkey)",
    ),
    (
        "q18",
        "SELECT c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice, SUM(l_quantity) AS total FROM customer, orders, lineitem WHERE o_orderkey IN (SELECT l_orderkey FROM lineitem GROUP BY l_orderkey HAVING SUM(l_quantity) > 200) AND c_custkey = o_custkey AND o_orderkey = l_orderkey GROUP BY c_name, c_custkey, o_orderkey, o_orderdate, o_totalprice ORDER BY o_totalprice DESC, o_orderdate LIMIT 100",
    ),
    (
        "q19",
        "SELECT SUM(l_extendedprice * (1 - l_discount)) AS revenue FROM lineitem, part WHERE (p_partkey = l_partkey AND p_brand = 'Brand#12' AND p_container IN ('SM CASE', 'SM BOX', 'SM PACK', 'SM PKG') AND l_quantity >= 1 AND l_quantity <= 1 + 10 AND p_size BETWEEN 1 AND 5 AND l_shipmode IN ('AIR', 'REG AIR') AND l_shipinstruct = 'DELIVER IN PERSON') OR (p_partkey = l_partkey AND p_brand = 'Brand#23' AND p_container IN ('MED BAG', 'MED BOX', 'MED PKG', 'MED PACK') AND l_quantity >= 10 AND l_quantity <= 10 + 10 AND p_size BETWEEN 1 AND 10 AND l_shipmode IN ('AIR', 'REG AIR') AND l_shipinstruct = 'DELIVER IN PERSON') OR (p_partkey = l_partkey AND p_brand = 'Brand#34' AND p_container IN ('LG CASE', 'LG BOX', 'LG PACK', 'LG PKG') AND l_quantity >= 20 AND l_quantity <= 20 + 10 AND p_size BETWEEN 1 AND 15 AND l_shipmode IN ('AIR', 'REG AIR') AND l_shipinstruct = 'DELIVER IN PERSON')",
    ),
    (
        "q20",
        "SELECT s_name, s_address FROM supplier, nation WHERE s_suppkey IN (SELECT ps_suppkey FROM partsupp WHERE ps_partkey IN (SELECT p_partkey FROM part WHERE p_name LIKE 'forest%') AND ps_availqty > (SELECT 0.5 * SUM(l_quantity) FROM lineitem WHERE l_partkey = ps_partkey AND l_suppkey = ps_suppkey AND l_shipdate >= @DATE(1994-01-01) AND l_shipdate < @ADD(1994-01-01, 1, YEAR))) AND s_nationkey = n_nationkey AND n_name = 'CANADA' ORDER BY s_name",
    ),
    (
        "q21",
        "SELECT s_name, COUNT(*) AS numwait FROM supplier, lineitem l1, orders, nation WHERE s_suppkey = l1.l_suppkey AND o_orderkey = l1.l_orderkey AND o_orderstatus = 'F' AND l1.l_receiptdate > l1.l_commitdate AND EXISTS (SELECT * FROM lineitem l2 WHERE l2.l_orderkey = l1.l_orderkey AND l2.l_suppkey <> l1.l_suppkey) AND NOT EXISTS (SELECT * FROM lineitem l3 WHERE l3.l_orderkey = l1.l_orderkey AND l3.l_suppkey <> l1.l_suppkey AND l3.l_receiptdate > l3.l_commitdate) AND s_nationkey = n_nationkey AND n_name = 'SAUDI ARABIA' GROUP BY s_name ORDER BY numwait DESC, s_name LIMIT 100",
    ),
    (
        "q22",
        "SELECT cntrycode, COUNT(*) AS numcust, SUM(c_acctbal) AS totacctbal FROM (SELECT SUBSTR(c_phone, 1, 2) AS cntrycode, c_acctbal FROM customer WHERE SUBSTR(c_phone, 1, 2) IN ('13', '31', '23', '29', '30', '18', '17') AND c_acctbal > (SELECT AVG(c_acctbal) FROM customer WHERE c_acctbal > 0.00 AND SUBSTR(c_phone, 1, 2) IN ('13', '31', '23', '29', '30', '18', '17')) AND NOT EXISTS (SELECT * FROM orders WHERE o_custkey = c_custkey)) AS custsale GROUP BY cntrycode ORDER BY cntrycode",
    ),
];

/// The join of sales the TPC-DS-shaped fragments aggregate: revenue by region and nation.
const SALES: &str = "FROM lineitem, orders, customer, nation, region WHERE l_orderkey = o_orderkey AND o_custkey = c_custkey AND c_nationkey = n_nationkey AND n_regionkey = r_regionkey";

/// Fragments shaped as TPC-DS's queries are (ROLLUP with GROUPING(), ranking windows,
/// several CTEs), over the same tables: each in BigQuery's dialect and in SQLite's, which has
/// no ROLLUP (its levels are written out as a UNION ALL).
fn ds_fragments() -> Vec<(&'static str, String, String)> {
    let rev = "SUM(l_extendedprice * (1 - l_discount))";
    vec![
        (
            "ds_rollup_grouping",
            format!("SELECT r_name, n_name, {rev} AS revenue, GROUPING(r_name) AS g_region, GROUPING(n_name) AS g_nation {SALES} GROUP BY ROLLUP(r_name, n_name)"),
            format!("SELECT r_name, n_name, {rev}, 0, 0 {SALES} GROUP BY r_name, n_name UNION ALL SELECT r_name, NULL, {rev}, 0, 1 {SALES} GROUP BY r_name UNION ALL SELECT NULL, NULL, {rev}, 1, 1 {SALES}"),
        ),
        (
            "ds_rollup_rank_within_parent",
            format!("SELECT {rev} AS revenue, r_name, n_name, GROUPING(r_name) + GROUPING(n_name) AS lochierarchy, RANK() OVER (PARTITION BY GROUPING(r_name) + GROUPING(n_name), CASE WHEN GROUPING(n_name) = 0 THEN r_name END ORDER BY {rev} DESC) AS rank_within_parent {SALES} GROUP BY ROLLUP(r_name, n_name)"),
            format!("WITH g AS (SELECT {rev} AS revenue, r_name, n_name, 0 AS lochierarchy, 0 AS gn {SALES} GROUP BY r_name, n_name UNION ALL SELECT {rev}, r_name, NULL, 1, 1 {SALES} GROUP BY r_name UNION ALL SELECT {rev}, NULL, NULL, 2, 1 {SALES}) SELECT revenue, r_name, n_name, lochierarchy, RANK() OVER (PARTITION BY lochierarchy, CASE WHEN gn = 0 THEN r_name END ORDER BY revenue DESC) FROM g"),
        ),
        (
            "ds_top_ranked_per_group",
            "SELECT p_brand, p_partkey, p_retailprice, rk FROM (SELECT p_brand, p_partkey, p_retailprice, RANK() OVER (PARTITION BY p_brand ORDER BY p_retailprice DESC) AS rk, DENSE_RANK() OVER (ORDER BY p_brand) AS brand_no FROM part) AS ranked WHERE rk <= 3 AND brand_no <= 10".to_string(),
            String::new(),
        ),
        (
            "ds_running_total",
            "SELECT o_custkey, o_orderkey, SUM(o_totalprice) OVER (PARTITION BY o_custkey ORDER BY o_orderdate, o_orderkey ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running, ROW_NUMBER() OVER (PARTITION BY o_custkey ORDER BY o_orderdate, o_orderkey) AS n FROM orders".to_string(),
            String::new(),
        ),
        (
            "ds_ctes_above_average",
            "WITH customer_total AS (SELECT o_custkey AS ck, SUM(o_totalprice) AS total FROM orders GROUP BY o_custkey), average AS (SELECT AVG(total) AS a FROM customer_total), big AS (SELECT ck, total FROM customer_total, average WHERE total > 1.2 * a) SELECT c_name, total, (SELECT COUNT(*) FROM big) AS how_many FROM big, customer WHERE ck = c_custkey ORDER BY c_name LIMIT 100".to_string(),
            String::new(),
        ),
    ]
}

/// Runs the statements and then the queries in SQLite; each query's rows or error.
fn sqlite(
    python: &str,
    setup: &[String],
    queries: &[String],
) -> Option<Vec<Result<Vec<Vec<Value>>, String>>> {
    const SCRIPT: &str = r#"
import json, sqlite3, sys
job = json.load(sys.stdin)
db = sqlite3.connect(":memory:")
# BigQuery's LIKE is case-sensitive; SQLite's is not unless told.
db.execute("PRAGMA case_sensitive_like = ON")
for s in job["setup"]:
    db.execute(s)
out = []
for q in job["queries"]:
    try:
        out.append({"rows": [list(r) for r in db.execute(q).fetchall()]})
    except Exception as e:
        out.append({"error": str(e)})
json.dump(out, sys.stdout)
"#;
    let mut child = match Command::new(python)
        .args(["-c", SCRIPT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("no Python ({python}: {e}): skipping the TPC-H comparison with SQLite");
            return None;
        }
    };
    let job = json!({"setup": setup, "queries": queries}).to_string();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(job.as_bytes()).expect("write the job");
    }
    let out = child.wait_with_output().expect("run python");
    assert!(
        out.status.success(),
        "sqlite: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results: Vec<Value> = serde_json::from_slice(&out.stdout).expect("sqlite's JSON");
    Some(
        results
            .into_iter()
            .map(|r| match r.get("rows") {
                Some(Value::Array(rows)) => Ok(rows
                    .iter()
                    .map(|row| row.as_array().cloned().unwrap_or_default())
                    .collect()),
                _ => Err(r["error"].to_string()),
            })
            .collect(),
    )
}

/// A cell as text, numbers as numbers (to compare within a tolerance).
#[derive(Debug, Clone)]
enum Norm {
    Null,
    Num(f64),
    Text(String),
}

fn norm(v: &Value) -> Norm {
    match v {
        Value::Null => Norm::Null,
        Value::Number(n) => Norm::Num(n.as_f64().unwrap_or(f64::NAN)),
        Value::String(s) => match s.parse::<f64>() {
            Ok(f) => Norm::Num(f),
            Err(_) => Norm::Text(s.clone()),
        },
        other => Norm::Text(other.to_string()),
    }
}

fn same(a: &Norm, b: &Norm) -> bool {
    match (a, b) {
        (Norm::Null, Norm::Null) => true,
        (Norm::Num(x), Norm::Num(y)) => (x - y).abs() <= 1e-6 * x.abs().max(y.abs()).max(1.0),
        (Norm::Text(x), Norm::Text(y)) => x == y,
        _ => false,
    }
}

/// Rows in an order both engines agree on: by their cells, numbers rounded.
fn sorted(rows: Vec<Vec<Norm>>) -> Vec<Vec<Norm>> {
    let key = |r: &Vec<Norm>| -> Vec<String> {
        r.iter()
            .map(|c| match c {
                Norm::Null => String::new(),
                Norm::Num(f) => format!("{:020.3}", f + 1e12),
                Norm::Text(s) => s.clone(),
            })
            .collect()
    };
    let mut rows = rows;
    rows.sort_by_key(key);
    rows
}

#[tokio::test]
async fn tpch_queries_and_tpcds_fragments_match_sqlite() {
    let python = std::env::var("BIGQ_PYTHON")
        .ok()
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| "python3".to_string());
    let tables = generate();
    let sqlite_setup: Vec<String> = tables.iter().flat_map(|t| statements(t, false)).collect();
    // Name, BigQuery's SQL, SQLite's.
    let mut queries: Vec<(&str, String, String)> = QUERIES
        .iter()
        .map(|(name, q)| (*name, dialect(q, true), dialect(q, false)))
        .collect();
    queries.extend(ds_fragments().into_iter().map(|(name, bq, lite)| {
        let lite = if lite.is_empty() { bq.clone() } else { lite };
        (name, bq, lite)
    }));
    let sqlite_queries: Vec<String> = queries.iter().map(|(_, _, q)| q.clone()).collect();
    let Some(expected) = sqlite(&python, &sqlite_setup, &sqlite_queries) else {
        return;
    };

    let emu = common::emulator().await;
    let rest = common::Rest::new(&emu);
    rest.dataset("tpch").await;
    for t in &tables {
        for s in statements(t, true) {
            rest.query(&s).await;
        }
    }
    let mut failures = Vec::new();
    let mut nonempty = 0;
    for ((name, sql, _), want) in queries.iter().zip(expected) {
        let v = rest
            .post(
                "/queries",
                json!({
                    "query": sql,
                    "useLegacySql": false,
                    "defaultDataset": {"projectId": "p", "datasetId": "tpch"},
                    "maxResults": 100000,
                    "timeoutMs": 120000,
                }),
            )
            .await;
        let want = match want {
            Ok(rows) => rows,
            Err(e) => panic!("{name}: SQLite failed: {e}"),
        };
        if let Some(err) = v.get("error") {
            failures.push(format!("{name}: {}", err["message"]));
            continue;
        }
        let got: Vec<Vec<Norm>> = v["rows"]
            .as_array()
            .map(|rows| {
                rows.iter()
                    .map(|r| {
                        r["f"]
                            .as_array()
                            .map(|cells| cells.iter().map(|c| norm(&c["v"])).collect())
                            .unwrap_or_default()
                    })
                    .collect()
            })
            .unwrap_or_default();
        let want: Vec<Vec<Norm>> = want.iter().map(|r| r.iter().map(norm).collect()).collect();
        if !want.is_empty() {
            nonempty += 1;
        }
        let (got, want) = (sorted(got), sorted(want));
        let equal = got.len() == want.len()
            && got
                .iter()
                .zip(&want)
                .all(|(g, w)| g.len() == w.len() && g.iter().zip(w).all(|(a, b)| same(a, b)));
        if !equal {
            failures.push(format!(
                "{name}: {} rows, SQLite {} rows\n  got  {:?}\n  want {:?}",
                got.len(),
                want.len(),
                got.iter().take(3).collect::<Vec<_>>(),
                want.iter().take(3).collect::<Vec<_>>()
            ));
        }
    }
    eprintln!(
        "TPC-H: {nonempty} of {} queries have rows in this dataset",
        queries.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // The dataset is made for the queries' predicates to match: most of them have rows.
    assert!(
        nonempty >= queries.len() - 3,
        "only {nonempty} queries have rows"
    );
}
