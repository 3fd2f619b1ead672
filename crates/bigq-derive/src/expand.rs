//! The generated impls.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Generics};

use crate::attrs::{ContainerAttrs, FieldAttrs};

pub(crate) fn expand(input: &DeriveInput) -> syn::Result<TokenStream> {
    let container = ContainerAttrs::parse(&input.attrs)?;
    match &input.data {
        Data::Struct(s) => match &s.fields {
            Fields::Named(named) => record(input, &container, named.named.iter()),
            Fields::Unnamed(unnamed) if unnamed.unnamed.len() == 1 => {
                let inner = &unnamed.unnamed[0].ty;
                Ok(value_impl(
                    input,
                    quote!(<#inner as ::bigq::schema::ValueSchema>::value_schema(name)),
                    vec![quote!(#inner: ::bigq::schema::ValueSchema)],
                ))
            }
            _ => Err(syn::Error::new_spanned(
                &input.ident,
                "a BigQuery schema comes from a struct with named fields, a newtype or an \
                 enum of unit variants; serde reads a tuple struct by position, which has no \
                 column names",
            )),
        },
        Data::Enum(e) => {
            if let Some(v) = e.variants.iter().find(|v| !v.fields.is_empty()) {
                return Err(syn::Error::new_spanned(
                    v,
                    "only an enum of unit variants has a BigQuery type (STRING, by variant name)",
                ));
            }
            Ok(value_impl(
                input,
                quote!(::bigq::schema::TableFieldSchema::new(
                    name,
                    ::bigq::schema::FieldType::String
                )),
                Vec::new(),
            ))
        }
        Data::Union(_) => Err(syn::Error::new_spanned(
            &input.ident,
            "a union has no BigQuery schema",
        )),
    }
}

/// `Schema` and `ValueSchema` (a RECORD) for a struct with named fields.
fn record<'a>(
    input: &DeriveInput,
    container: &ContainerAttrs,
    fields: impl Iterator<Item = &'a syn::Field>,
) -> syn::Result<TokenStream> {
    let mut pushes = Vec::new();
    let mut bounds = Vec::new();
    for field in fields {
        let attrs = FieldAttrs::parse(&field.attrs)?;
        if attrs.skip {
            continue;
        }
        let ty = &field.ty;
        if attrs.flatten {
            bounds.push(quote!(#ty: ::bigq::schema::Schema));
            pushes.push(quote_spanned! {ty.span()=>
                fields.extend(<#ty as ::bigq::schema::Schema>::fields());
            });
            continue;
        }
        bounds.push(quote!(#ty: ::bigq::schema::ColumnSchema));
        let ident = field
            .ident
            .as_ref()
            .ok_or_else(|| syn::Error::new_spanned(field, "a named field without a name"))?;
        let rust_name = ident.to_string();
        let rust_name = rust_name.strip_prefix("r#").unwrap_or(&rust_name);
        let name = match (&attrs.rename, container.rename_all) {
            (Some(rename), _) => rename.clone(),
            (None, Some(rule)) => rule.apply_to_field(rust_name),
            (None, None) => rust_name.to_string(),
        };
        let sets = column_settings(&name, ty, &attrs);
        pushes.push(quote_spanned! {ty.span()=>
            fields.push({
                #[allow(unused_mut)]
                let mut column = <#ty as ::bigq::schema::ColumnSchema>::column_schema(#name);
                #(#sets)*
                column
            });
        });
    }
    let ident = &input.ident;
    let generics = with_bounds(&input.generics, &bounds);
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    let schema = quote! {
        impl #impl_generics ::bigq::schema::Schema for #ident #ty_generics #where_clause {
            fn fields() -> ::std::vec::Vec<::bigq::schema::TableFieldSchema> {
                #[allow(unused_mut)]
                let mut fields = ::std::vec::Vec::new();
                #(#pushes)*
                fields
            }
        }
    };
    let value = value_impl(
        input,
        quote!(::bigq::schema::TableFieldSchema::record(
            name,
            <Self as ::bigq::schema::Schema>::fields()
        )),
        bounds,
    );
    Ok(quote!(#schema #value))
}

/// The statements that apply a field's `#[bigq(..)]` attributes to `column`.
fn column_settings(name: &str, ty: &syn::Type, attrs: &FieldAttrs) -> Vec<TokenStream> {
    let mut sets = Vec::new();
    if let Some(t) = &attrs.field_type {
        sets.push(quote!(column.field_type = ::bigq::schema::FieldType::parse(#t);));
    }
    if let Some(mode) = &attrs.mode {
        let message = format!("`mode` cannot be set on the REPEATED column `{name}`");
        let mode = match mode.as_str() {
            "REQUIRED" => quote!(::bigq::schema::FieldMode::Required),
            _ => quote!(::bigq::schema::FieldMode::Nullable),
        };
        sets.push(quote! {
            const {
                assert!(
                    !matches!(
                        <#ty as ::bigq::schema::ColumnSchema>::MODE,
                        ::bigq::schema::FieldMode::Repeated
                    ),
                    #message
                )
            };
            column.mode = ::std::option::Option::Some(#mode);
        });
    }
    let text = |v: &Option<String>| {
        v.as_ref()
            .map(|s| quote!(::std::option::Option::Some(::std::string::String::from(#s))))
    };
    if let Some(d) = text(&attrs.description) {
        sets.push(quote!(column.description = #d;));
    }
    if let Some(d) = text(&attrs.default) {
        sets.push(quote!(column.default_value_expression = #d;));
    }
    if let Some(c) = text(&attrs.collation) {
        sets.push(quote!(column.collation = #c;));
    }
    if let Some(r) = &attrs.rounding_mode {
        sets.push(quote!(
            column.rounding_mode =
                ::std::option::Option::Some(::bigq::schema::RoundingMode::parse(#r));
        ));
    }
    let int = |v: Option<i64>| v.map(|n| quote!(::std::option::Option::Some(#n)));
    if let Some(p) = int(attrs.precision) {
        sets.push(quote!(column.precision = #p;));
    }
    if let Some(s) = int(attrs.scale) {
        sets.push(quote!(column.scale = #s;));
    }
    if let Some(m) = int(attrs.max_length) {
        sets.push(quote!(column.max_length = #m;));
    }
    sets
}

/// `ValueSchema` for the type, by `body` (which sees `name: &str`).
fn value_impl(input: &DeriveInput, body: TokenStream, bounds: Vec<TokenStream>) -> TokenStream {
    let ident = &input.ident;
    let generics = with_bounds(&input.generics, &bounds);
    let (impl_generics, ty_generics, where_clause) = generics.split_for_impl();
    quote! {
        impl #impl_generics ::bigq::schema::ValueSchema for #ident #ty_generics #where_clause {
            fn value_schema(name: &str) -> ::bigq::schema::TableFieldSchema {
                #body
            }
        }
    }
}

/// The generics with a bound per field type, when there are generics to bound.
fn with_bounds(generics: &Generics, bounds: &[TokenStream]) -> Generics {
    let mut generics = generics.clone();
    if generics.params.is_empty() {
        return generics;
    }
    let where_clause = generics.make_where_clause();
    for bound in bounds {
        if let Ok(predicate) = syn::parse2(bound.clone()) {
            where_clause.predicates.push(predicate);
        }
    }
    generics
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(input: DeriveInput) -> String {
        match expand(&input) {
            Ok(tokens) => panic!("expanded without an error: {tokens}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn bad_attributes_are_named() {
        let cases: [(DeriveInput, &str); 10] = [
            (
                syn::parse_quote!(
                    struct T {
                        #[bigq(colour = "red")]
                        a: i64,
                    }
                ),
                "unknown bigq attribute `colour`",
            ),
            (
                syn::parse_quote!(
                    struct T {
                        #[bigq(mode = "REPEATED")]
                        a: i64,
                    }
                ),
                "`mode` is NULLABLE or REQUIRED",
            ),
            (
                syn::parse_quote!(
                    struct T {
                        #[bigq(type = "RECORD")]
                        a: i64,
                    }
                ),
                "`RECORD` is not a BigQuery scalar type",
            ),
            (
                syn::parse_quote!(
                    struct T {
                        #[bigq(scale = 2)]
                        a: i64,
                    }
                ),
                "`scale` needs a `precision`",
            ),
            (
                syn::parse_quote!(
                    struct T {
                        #[bigq(precision = 4, scale = 9)]
                        a: i64,
                    }
                ),
                "`scale` (9) is larger than `precision` (4)",
            ),
            (
                syn::parse_quote!(
                    struct T {
                        #[bigq(max_length = 0)]
                        a: String,
                    }
                ),
                "`max_length` is at least 1",
            ),
            (
                syn::parse_quote!(
                    struct T {
                        #[bigq(rounding_mode = "UP")]
                        a: i64,
                    }
                ),
                "`rounding_mode` is ROUND_HALF_AWAY_FROM_ZERO or ROUND_HALF_EVEN",
            ),
            (
                syn::parse_quote!(
                    struct T {
                        #[bigq(collation = "fr")]
                        a: String,
                    }
                ),
                "`collation` is \"und:ci\"",
            ),
            (
                syn::parse_quote!(
                    struct T(i64, i64);
                ),
                "a BigQuery schema comes from a struct with named fields",
            ),
            (
                syn::parse_quote!(
                    enum E {
                        A,
                        B(i64),
                    }
                ),
                "only an enum of unit variants",
            ),
        ];
        for (input, want) in cases {
            let got = error(input);
            assert!(got.contains(want), "{got:?} does not say {want:?}");
        }
    }

    #[test]
    fn flatten_takes_no_column_attributes() {
        let got = error(syn::parse_quote!(
            struct T {
                #[serde(flatten)]
                #[bigq(description = "x")]
                inner: Inner,
            }
        ));
        assert!(got.contains("a flattened field is not a column"), "{got}");
    }

    #[test]
    fn serde_rename_all_must_be_a_known_rule() {
        let got = error(syn::parse_quote!(
            #[serde(rename_all = "Camel")]
            struct T {
                a: i64,
            }
        ));
        assert!(got.contains("unknown serde `rename_all` rule"), "{got}");
    }

    #[test]
    fn other_serde_attributes_are_left_to_serde() {
        let input: DeriveInput = syn::parse_quote!(
            #[serde(deny_unknown_fields, bound(deserialize = "T: Clone"))]
            struct T {
                #[serde(default, with = "m", rename(serialize = "out", deserialize = "in"))]
                a: i64,
            }
        );
        let tokens = expand(&input)
            .map_err(|e| e.to_string())
            .unwrap()
            .to_string();
        assert!(tokens.contains("column_schema (\"in\")"), "{tokens}");
    }
}
