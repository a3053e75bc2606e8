//! A user's TOML pack written out as the JSON that the pack schema is read
//! from. The built-in packs are embedded as JSON already (build.rs), and one
//! deserializer for both keeps the binary small. Every key and array item of
//! the JSON starts a line of its own, and the TOML position of each token is
//! kept, so that a schema error still names the pack's line and column.

use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// The 1-based line and column (in characters) of byte `offset` of `text`.
pub(super) fn line_and_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset.min(text.len())).unwrap_or(text);
    (before.matches('\n').count() + 1, before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1)
}

/// A pack as JSON, with the way back to its TOML positions.
pub(super) struct PackJson {
    /// The JSON text.
    pub(super) json: String,
    /// For each JSON line, `(column, TOML byte offset)` of the tokens that
    /// start there, in column order (columns count from 1, as serde_json's do).
    marks: Vec<Vec<(usize, usize)>>,
}

impl PackJson {
    /// Reads `toml`; an error is the TOML parser's own, with its position.
    pub(super) fn from_toml(toml: &str) -> Result<Self, toml::de::Error> {
        let document = DeTable::parse(toml)?;
        let mut out = PackJson { json: String::new(), marks: vec![Vec::new()] };
        out.table(document.get_ref(), document.span().start);
        Ok(out)
    }

    /// The TOML byte offset of what serde_json reports at `line` and
    /// `column`: the last token that starts on that line by the column's
    /// next character (serde_json places an error after a token it read,
    /// and just before a map or list it refuses).
    pub(super) fn toml_offset(&self, line: usize, column: usize) -> Option<usize> {
        let marks = self.marks.get(line.checked_sub(1)?)?;
        marks.iter().rev().find(|(c, _)| *c <= column + 1).or(marks.first()).map(|(_, offset)| *offset)
    }

    fn mark(&mut self, toml_offset: usize) {
        let line_start = self.json.rfind('\n').map_or(0, |i| i + 1);
        let column = self.json.len() - line_start + 1;
        if let Some(line) = self.marks.last_mut() {
            line.push((column, toml_offset));
        }
    }

    fn newline(&mut self) {
        self.json.push('\n');
        self.marks.push(Vec::new());
    }

    fn string(&mut self, s: &str) {
        // A string always serialises; the fallback is never taken.
        self.json.push_str(&serde_json::to_string(s).unwrap_or_default());
    }

    /// A value the pack schema cannot hold, as `{"kind": "text"}`.
    fn unreadable(&mut self, kind: &str, text: &str) {
        self.json.push('{');
        self.string(kind);
        self.json.push(':');
        self.string(text);
        self.json.push('}');
    }

    /// `{`, one line per key, and `}` on a line of its own that points at
    /// the table (where a missing field is reported).
    fn table(&mut self, table: &DeTable<'_>, at: usize) {
        self.json.push('{');
        for (i, (key, value)) in table.iter().enumerate() {
            if i > 0 {
                self.json.push(',');
            }
            self.newline();
            self.mark(key.span().start);
            self.string(key.get_ref());
            self.json.push(':');
            self.value(value);
        }
        self.newline();
        self.mark(at);
        self.json.push('}');
    }

    fn value(&mut self, value: &Spanned<DeValue<'_>>) {
        let at = value.span().start;
        self.mark(at);
        match value.get_ref() {
            DeValue::String(s) => self.string(s),
            DeValue::Boolean(b) => self.json.push_str(if *b { "true" } else { "false" }),
            // What JSON has no number for (an integer past 64 bits, inf,
            // nan) and dates, which no pack field is: an object, so that the
            // schema refuses it where it stands.
            DeValue::Integer(n) => match i64::from_str_radix(n.as_str(), n.radix()) {
                Ok(n) => self.json.push_str(&n.to_string()),
                Err(_) => self.unreadable("integer", &n.to_string()),
            },
            DeValue::Float(f) => match f.as_str().parse::<f64>().ok().filter(|f| f.is_finite()) {
                Some(f) => self.json.push_str(&format!("{f:?}")),
                None => self.unreadable("float", f.as_str()),
            },
            DeValue::Datetime(d) => self.unreadable("datetime", &d.to_string()),
            DeValue::Array(items) => {
                self.json.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.json.push(',');
                    }
                    self.newline();
                    self.value(item);
                }
                self.json.push(']');
            }
            DeValue::Table(table) => self.table(table, at),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{line_and_column, PackJson};

    /// Where the schema error of `toml` read as `T` lands in the TOML.
    fn error_at<T: serde::de::DeserializeOwned + std::fmt::Debug>(toml: &str) -> (usize, usize) {
        let pack = PackJson::from_toml(toml).expect("valid TOML");
        let error = serde_json::from_str::<T>(&pack.json).expect_err("a schema error");
        line_and_column(toml, pack.toml_offset(error.line(), error.column()).expect("a mark on the line"))
    }

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Rule {
        code: String,
        severity: Option<bool>,
        tags: Option<Vec<String>>,
        weight: Option<f64>,
    }

    #[derive(Debug, serde::Deserialize)]
    #[allow(dead_code)]
    struct Pack {
        rule: Vec<Rule>,
    }

    #[test]
    fn values_read_as_the_toml_says() {
        let toml = "[[rule]]\ncode = \"A\\\"1\"\nseverity = true\ntags = [\"x\", 'y']\nweight = 1_0\n";
        let pack: Pack = serde_json::from_str(&PackJson::from_toml(toml).expect("valid").json).expect("the schema");
        let rule = &pack.rule[0];
        assert_eq!((rule.code.as_str(), rule.severity, rule.weight), ("A\"1", Some(true), Some(10.0)));
        assert_eq!(rule.tags.as_deref(), Some(&["x".to_string(), "y".to_string()][..]));
    }

    #[test]
    fn a_schema_error_is_placed_at_its_toml_token() {
        // A value of the wrong type: at the value, not at its key.
        assert_eq!(error_at::<Pack>("[[rule]]\ncode = \"A\"\nseverity = \"loud\"\n"), (3, 12));
        // An unknown key: at the key.
        assert_eq!(error_at::<Pack>("[[rule]]\ncode = \"A\"\n  sevrity = true\n"), (3, 3));
        // An array item of the wrong type: at the item.
        assert_eq!(error_at::<Pack>("[[rule]]\ncode = \"A\"\ntags = [\"x\",\n  3]\n"), (4, 3));
        // A missing field: at the table that lacks it.
        assert_eq!(error_at::<Pack>("[[rule]]\nseverity = true\n").0, 1);
        // An integer out of range and a date: refused where they stand.
        assert_eq!(error_at::<Pack>("[[rule]]\ncode = 99999999999999999999\n"), (2, 8));
        assert_eq!(error_at::<Pack>("[[rule]]\ncode = 1979-05-27\n"), (2, 8));
    }

    #[test]
    fn invalid_toml_is_the_toml_parsers_error() {
        assert!(PackJson::from_toml("[[rule]\ncode = 1\n").is_err());
    }
}
