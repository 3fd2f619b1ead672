//! GoogleSQL → DataFusion SQL, as rewrites of the parsed AST, one file per thing rewritten:
//! the tables a query reads (`tables`, `information_schema`, `unnest`, `pivot`), `s.*` of a
//! STRUCT (`struct_star`), the names of its result columns (`result_names`), query
//! parameters and script variables (`placeholders`), literals and type names (`literals`),
//! operators (`operators`) and subquery predicates outside filters (`subqueries`), with
//! BigQuery's rules for set operations and recursive CTEs checked (`set_operations`,
//! `recursive`), GROUP BY's grouping sets written out (`grouping`), NaN ordered and picked as
//! BigQuery does (`nan`), names respelled to the case of the names in scope (`name_case`),
//! named windows as the windows they name (`windows`); calls of BigQuery's functions are
//! rewritten as [`crate::sql::functions`] lists them. `query` walks a query and hands each
//! node to these. `range` rewrites the RANGE syntax in the text, before parsing,
//! `typed_arrays` the typed array literals, `table_name` the name `table`, `unpivot_labels`
//! UNPIVOT's literal aliases, `set_options` `ALTER TABLE .. SET OPTIONS`, and
//! `aggregate_functions` `CREATE TEMP AGGREGATE FUNCTION`.

pub(crate) mod aggregate_functions;
mod grouping;
mod information_schema;
mod lateral;
mod literals;
mod name_case;
mod nan;
mod operators;
mod pivot;
mod placeholders;
mod query;
pub(crate) mod range;
mod recursive;
mod result_names;
mod set_operations;
pub(crate) mod set_options;
mod struct_star;
mod subqueries;
pub(crate) mod table_name;
mod tables;
pub(crate) mod typed_arrays;
mod unnest;
pub(crate) mod unpivot_labels;
mod windows;

pub(crate) use self::lateral::LateralUnnest;
pub(crate) use self::name_case::respell;
pub(crate) use self::nan::NanOrder;
pub(crate) use self::operators::TypedOperators;
pub(crate) use self::pivot::{pivot, pivot_input};
pub(crate) use self::query::{rewrite_query, rewrite_statement};
pub(crate) use self::result_names::result_name;
pub(crate) use self::struct_star::{expand_struct_stars, struct_stars};
pub(crate) use self::unnest::{Element, anonymous_unnests, expand_struct_unnests, unnest_scopes};
