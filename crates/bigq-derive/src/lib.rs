//! `#[derive(bigq::Schema)]`: a BigQuery table schema from a Rust type.
//!
//! Use it through the `bigq` crate (`bigq::Schema`), which re-exports it; the generated code
//! names `::bigq`. The attributes are documented on `bigq::Schema`.
#![warn(missing_docs)]

use proc_macro::TokenStream;

mod attrs;
mod case;
mod expand;

/// Derives `bigq::schema::Schema` (a struct's columns, for `TableSchema::of::<T>()`) and
/// `bigq::schema::ValueSchema` (the struct as a RECORD column of another; a newtype as its
/// inner type; an enum of unit variants as a STRING).
///
/// Each field is a column of its type's BigQuery type and mode (`Option` NULLABLE, `Vec`
/// REPEATED, anything else REQUIRED), named as serde reads it: serde's `rename` (its
/// deserialize side), the container's `rename_all`, `skip` / `skip_deserializing` (no
/// column) and `flatten` (the inner type's columns inline) are honoured. The `bigq::schema`
/// module has the full mapping and an example.
///
/// Field attributes, `#[bigq(..)]`:
///
/// | attribute | sets |
/// |---|---|
/// | `rename = "name"` | the column name (over serde's) |
/// | `skip` | no column for this field |
/// | `description = ".."` | `description` |
/// | `mode = "NULLABLE"` / `"REQUIRED"` | `mode` (not on a `Vec`: a compile error) |
/// | `type = "JSON"` | the column type, for a scalar whose Rust type reads several (a `String` holding JSON or GEOGRAPHY, say) |
/// | `precision = 38`, `scale = 9` | NUMERIC / BIGNUMERIC parameters (`scale` needs `precision`, and is at most it) |
/// | `max_length = 64` | STRING / BYTES maximum length |
/// | `rounding_mode = "ROUND_HALF_EVEN"` | `roundingMode` (or `ROUND_HALF_AWAY_FROM_ZERO`) |
/// | `default = "CURRENT_TIMESTAMP()"` | `defaultValueExpression` |
/// | `collation = "und:ci"` | `collation` (`""` for binary) |
///
/// An unknown attribute or a value BigQuery does not accept is a compile error naming it.
#[proc_macro_derive(Schema, attributes(bigq))]
pub fn derive_schema(input: TokenStream) -> TokenStream {
    let input = syn::parse_macro_input!(input as syn::DeriveInput);
    expand::expand(&input)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}
