//! The `#[bigq(..)]` attributes, and the `#[serde(..)]` ones that decide a column's name or
//! whether a field is a column at all. Everything else in `#[serde(..)]` is left to serde.

use syn::meta::ParseNestedMeta;
use syn::{Attribute, LitInt, LitStr};

use crate::case::RenameRule;

/// The BigQuery types `#[bigq(type = "..")]` may name: the scalar ones (a RECORD comes from
/// a struct, a RANGE from `bigq::value::Range`).
const SCALAR_TYPES: &[&str] = &[
    "INT64",
    "INTEGER",
    "FLOAT64",
    "FLOAT",
    "NUMERIC",
    "DECIMAL",
    "BIGNUMERIC",
    "BIGDECIMAL",
    "BOOL",
    "BOOLEAN",
    "STRING",
    "BYTES",
    "DATE",
    "TIME",
    "DATETIME",
    "TIMESTAMP",
    "GEOGRAPHY",
    "JSON",
    "INTERVAL",
];

/// A container's attributes.
#[derive(Default)]
pub(crate) struct ContainerAttrs {
    /// serde's `rename_all` (its deserialize side).
    pub(crate) rename_all: Option<RenameRule>,
}

/// A field's attributes.
#[derive(Default)]
pub(crate) struct FieldAttrs {
    pub(crate) rename: Option<String>,
    pub(crate) skip: bool,
    pub(crate) flatten: bool,
    pub(crate) description: Option<String>,
    /// `NULLABLE` or `REQUIRED`.
    pub(crate) mode: Option<String>,
    pub(crate) field_type: Option<String>,
    pub(crate) precision: Option<i64>,
    pub(crate) scale: Option<i64>,
    pub(crate) max_length: Option<i64>,
    pub(crate) rounding_mode: Option<String>,
    pub(crate) default: Option<String>,
    pub(crate) collation: Option<String>,
}

impl ContainerAttrs {
    pub(crate) fn parse(attrs: &[Attribute]) -> syn::Result<ContainerAttrs> {
        let mut out = ContainerAttrs::default();
        for attr in attrs {
            if attr.path().is_ident("serde") {
                attr.parse_nested_meta(|meta| {
                    if meta.path.is_ident("rename_all") {
                        if let Some(lit) = deserialize_side(&meta)? {
                            let rule = RenameRule::parse(&lit.value()).ok_or_else(|| {
                                syn::Error::new(lit.span(), "unknown serde `rename_all` rule")
                            })?;
                            out.rename_all = Some(rule);
                        }
                        Ok(())
                    } else {
                        skip_value(&meta)
                    }
                })?;
            } else if attr.path().is_ident("bigq") {
                return Err(syn::Error::new_spanned(
                    attr,
                    "`#[bigq(..)]` goes on fields: a container takes none (use serde's `rename_all`)",
                ));
            }
        }
        Ok(out)
    }
}

impl FieldAttrs {
    pub(crate) fn parse(attrs: &[Attribute]) -> syn::Result<FieldAttrs> {
        let mut out = FieldAttrs::default();
        for attr in attrs {
            if attr.path().is_ident("serde") {
                attr.parse_nested_meta(|meta| out.serde(&meta))?;
            } else if attr.path().is_ident("bigq") {
                attr.parse_nested_meta(|meta| out.bigq(&meta))?;
            }
        }
        out.check(attrs)?;
        Ok(out)
    }

    fn serde(&mut self, meta: &ParseNestedMeta) -> syn::Result<()> {
        let path = &meta.path;
        if path.is_ident("rename") {
            // A bigq `rename` wins over serde's: it is the more specific of the two.
            if let Some(lit) = deserialize_side(meta)? {
                self.rename.get_or_insert(lit.value());
            }
        } else if path.is_ident("skip") || path.is_ident("skip_deserializing") {
            self.skip = true;
        } else if path.is_ident("flatten") {
            self.flatten = true;
        } else {
            skip_value(meta)?;
        }
        Ok(())
    }

    fn bigq(&mut self, meta: &ParseNestedMeta) -> syn::Result<()> {
        let path = &meta.path;
        let string = |meta: &ParseNestedMeta| -> syn::Result<LitStr> { meta.value()?.parse() };
        if path.is_ident("rename") {
            self.rename = Some(string(meta)?.value());
        } else if path.is_ident("skip") {
            self.skip = true;
        } else if path.is_ident("description") {
            self.description = Some(string(meta)?.value());
        } else if path.is_ident("mode") {
            let lit = string(meta)?;
            let mode = lit.value().to_ascii_uppercase();
            if mode != "NULLABLE" && mode != "REQUIRED" {
                return Err(syn::Error::new(
                    lit.span(),
                    "`mode` is NULLABLE or REQUIRED (a REPEATED column is a `Vec`)",
                ));
            }
            self.mode = Some(mode);
        } else if path.is_ident("type") {
            let lit = string(meta)?;
            let name = lit.value().to_ascii_uppercase();
            if !SCALAR_TYPES.contains(&name.as_str()) {
                return Err(syn::Error::new(
                    lit.span(),
                    format!(
                        "`{}` is not a BigQuery scalar type (a RECORD is a struct, a RANGE `bigq::value::Range`)",
                        lit.value()
                    ),
                ));
            }
            self.field_type = Some(name);
        } else if path.is_ident("precision") {
            self.precision = Some(positive(meta, "precision")?);
        } else if path.is_ident("scale") {
            let lit: LitInt = meta.value()?.parse()?;
            self.scale = Some(lit.base10_parse()?);
        } else if path.is_ident("max_length") {
            self.max_length = Some(positive(meta, "max_length")?);
        } else if path.is_ident("rounding_mode") {
            let lit = string(meta)?;
            let mode = lit.value();
            if mode != "ROUND_HALF_AWAY_FROM_ZERO" && mode != "ROUND_HALF_EVEN" {
                return Err(syn::Error::new(
                    lit.span(),
                    "`rounding_mode` is ROUND_HALF_AWAY_FROM_ZERO or ROUND_HALF_EVEN",
                ));
            }
            self.rounding_mode = Some(mode);
        } else if path.is_ident("default") {
            self.default = Some(string(meta)?.value());
        } else if path.is_ident("collation") {
            let lit = string(meta)?;
            let collation = lit.value();
            if collation != "und:ci" && !collation.is_empty() {
                return Err(syn::Error::new(
                    lit.span(),
                    "`collation` is \"und:ci\" (case-insensitive) or \"\" (binary)",
                ));
            }
            self.collation = Some(collation);
        } else {
            return Err(meta.error(format!(
                "unknown bigq attribute `{}`: expected rename, skip, description, mode, type, \
                 precision, scale, max_length, rounding_mode, default or collation",
                path_text(&meta.path)
            )));
        }
        Ok(())
    }

    /// The checks that need several attributes together.
    fn check(&self, attrs: &[Attribute]) -> syn::Result<()> {
        let at = || {
            attrs
                .iter()
                .find(|a| a.path().is_ident("bigq"))
                .or(attrs.first())
        };
        let error = |message: &str| match at() {
            Some(a) => syn::Error::new_spanned(a, message),
            None => syn::Error::new(proc_macro2::Span::call_site(), message),
        };
        match (self.precision, self.scale) {
            (None, Some(_)) => return Err(error("`scale` needs a `precision`")),
            (Some(p), Some(s)) if s > p => {
                return Err(error(&format!(
                    "`scale` ({s}) is larger than `precision` ({p})"
                )));
            }
            _ => {}
        }
        if self.flatten
            && (self.rename.is_some()
                || self.description.is_some()
                || self.mode.is_some()
                || self.field_type.is_some()
                || self.precision.is_some()
                || self.max_length.is_some()
                || self.rounding_mode.is_some()
                || self.default.is_some()
                || self.collation.is_some())
        {
            return Err(error(
                "a flattened field is not a column: its fields carry the column attributes",
            ));
        }
        Ok(())
    }
}

/// The deserialize side of `rename = ".."`, `rename(deserialize = "..")`; `None` for a
/// serialize-only rename.
fn deserialize_side(meta: &ParseNestedMeta) -> syn::Result<Option<LitStr>> {
    if meta.input.peek(syn::Token![=]) {
        return Ok(Some(meta.value()?.parse()?));
    }
    let mut out = None;
    meta.parse_nested_meta(|inner| {
        let lit: LitStr = inner.value()?.parse()?;
        if inner.path.is_ident("deserialize") {
            out = Some(lit);
        }
        Ok(())
    })?;
    Ok(out)
}

/// Consumes a serde attribute bigq has no use for: `key`, `key = lit`, `key(..)`.
fn skip_value(meta: &ParseNestedMeta) -> syn::Result<()> {
    if meta.input.peek(syn::Token![=]) {
        let _: syn::Lit = meta.value()?.parse()?;
    } else if meta.input.peek(syn::token::Paren) {
        meta.parse_nested_meta(|inner| skip_value(&inner))?;
    }
    Ok(())
}

fn positive(meta: &ParseNestedMeta, what: &str) -> syn::Result<i64> {
    let lit: LitInt = meta.value()?.parse()?;
    let n: i64 = lit.base10_parse()?;
    if n < 1 {
        return Err(syn::Error::new(
            lit.span(),
            format!("`{what}` is at least 1"),
        ));
    }
    Ok(n)
}

fn path_text(path: &syn::Path) -> String {
    path.segments
        .iter()
        .map(|s| s.ident.to_string())
        .collect::<Vec<_>>()
        .join("::")
}
