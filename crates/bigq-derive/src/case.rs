//! serde's `rename_all` rules, applied to field names as serde applies them, so a derived
//! schema names its columns as serde reads them.

/// A `rename_all` rule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RenameRule {
    Lower,
    Upper,
    Pascal,
    Camel,
    Snake,
    ScreamingSnake,
    Kebab,
    ScreamingKebab,
}

impl RenameRule {
    /// The rule of serde's name for it.
    pub(crate) fn parse(name: &str) -> Option<RenameRule> {
        Some(match name {
            "lowercase" => RenameRule::Lower,
            "UPPERCASE" => RenameRule::Upper,
            "PascalCase" => RenameRule::Pascal,
            "camelCase" => RenameRule::Camel,
            "snake_case" => RenameRule::Snake,
            "SCREAMING_SNAKE_CASE" => RenameRule::ScreamingSnake,
            "kebab-case" => RenameRule::Kebab,
            "SCREAMING-KEBAB-CASE" => RenameRule::ScreamingKebab,
            _ => return None,
        })
    }

    /// A struct field's name (snake_case by Rust convention) under this rule.
    pub(crate) fn apply_to_field(self, field: &str) -> String {
        match self {
            RenameRule::Lower | RenameRule::Snake => field.to_string(),
            RenameRule::Upper | RenameRule::ScreamingSnake => field.to_ascii_uppercase(),
            RenameRule::Pascal => {
                let mut out = String::with_capacity(field.len());
                let mut capitalize = true;
                for c in field.chars() {
                    if c == '_' {
                        capitalize = true;
                    } else if capitalize {
                        out.push(c.to_ascii_uppercase());
                        capitalize = false;
                    } else {
                        out.push(c);
                    }
                }
                out
            }
            RenameRule::Camel => {
                let pascal = RenameRule::Pascal.apply_to_field(field);
                let mut chars = pascal.chars();
                match chars.next() {
                    Some(first) => first.to_ascii_lowercase().to_string() + chars.as_str(),
                    None => pascal,
                }
            }
            RenameRule::Kebab => field.replace('_', "-"),
            RenameRule::ScreamingKebab => field.to_ascii_uppercase().replace('_', "-"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_rename_as_serde_does() {
        let cases = [
            ("camelCase", "order_id_v2", "orderIdV2"),
            ("PascalCase", "order_id", "OrderId"),
            ("SCREAMING_SNAKE_CASE", "order_id", "ORDER_ID"),
            ("kebab-case", "order_id", "order-id"),
            ("SCREAMING-KEBAB-CASE", "order_id", "ORDER-ID"),
            ("lowercase", "order_id", "order_id"),
            ("UPPERCASE", "order_id", "ORDER_ID"),
            ("snake_case", "order_id", "order_id"),
        ];
        for (rule, field, want) in cases {
            let rule = RenameRule::parse(rule).unwrap();
            assert_eq!(rule.apply_to_field(field), want, "{rule:?}");
        }
        assert_eq!(RenameRule::parse("Camel"), None);
    }
}
