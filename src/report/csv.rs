//! `--format csv`: one row per finding with the columns of the
//! `unsupported_api.csv` that Huawei's migration analysis tool writes (`File,
//! Start Line, End Line, OP, Tips`), so that the two can be read side by side
//! or by the same script.
//!
//! Every finding is a row, whatever its severity and whether it is advice:
//! the tool's list has no severity column either, and a reader who wants only
//! the alarms filters on the code. `OP` is the rule's code and name, then what
//! the finding names (the first `` `...` `` of its message, usually the API);
//! `Tips` is the message, then the fix the finding offers. In a notebook the
//! lines are those of the notebook file, and `Tips` names the cell. Fields are
//! quoted as RFC 4180 asks (only where needed), and records end in CRLF.

use super::Report;
use crate::finding::Finding;

/// The header, as Huawei's tool writes it.
pub const HEADER: [&str; 5] = ["File", "Start Line", "End Line", "OP", "Tips"];

/// Renders the CSV report.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    record(&mut out, &HEADER);
    for f in &report.outcome.findings {
        let (line, _, end_line, _) = f.region_in_file();
        record(&mut out, &[f.path.as_str(), &line.to_string(), &end_line.to_string(), &op(f), &tips(f)]);
    }
    out
}

/// `CODE name: subject`, the subject being what the message names first.
fn op(f: &Finding) -> String {
    match subject(&f.message) {
        Some(subject) => format!("{} {}: {subject}", f.code, f.name),
        None => format!("{} {}", f.code, f.name),
    }
}

/// The text of the first `` `...` `` span of a message, if it has one.
fn subject(message: &str) -> Option<&str> {
    let start = message.find('`')? + 1;
    let len = message[start..].find('`')?;
    Some(&message[start..start + len]).filter(|s| !s.is_empty())
}

/// The message, the cell of a notebook finding, and the fix it offers.
fn tips(f: &Finding) -> String {
    let mut tips = f.message.clone();
    if let Some(cell) = f.cell {
        tips.push_str(&format!(" (cell {cell}, line {})", f.line));
    }
    if let Some(fix) = &f.fix {
        let description = fix.description.trim_end_matches('.');
        tips.push_str(&format!(" Fix ({}): {description}.", fix.applicability.as_str()));
    }
    tips
}

/// Appends one record, each field quoted if it must be, and a CRLF.
fn record(out: &mut String, fields: &[&str]) {
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        push_field(out, field);
    }
    out.push_str("\r\n");
}

/// One field: as it is, or in double quotes with each quote doubled when it
/// holds a comma, a quote or a line break (RFC 4180, section 2). A field
/// with a leading or trailing space is quoted too, which the RFC allows, so
/// that readers that trim unquoted fields keep the spaces.
fn push_field(out: &mut String, field: &str) {
    let needs_quotes = field.contains([',', '"', '\r', '\n']) || field.starts_with(' ') || field.ends_with(' ');
    if !needs_quotes {
        out.push_str(field);
        return;
    }
    out.push('"');
    out.push_str(&field.replace('"', "\"\""));
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(fields: &[&str]) -> String {
        let mut out = String::new();
        record(&mut out, fields);
        out
    }

    #[test]
    fn plain_fields_stay_unquoted() {
        assert_eq!(line(&HEADER), "File,Start Line,End Line,OP,Tips\r\n");
        assert_eq!(line(&["a.py", "3", "4"]), "a.py,3,4\r\n");
    }

    #[test]
    fn commas_quotes_and_line_breaks_are_quoted() {
        assert_eq!(line(&["a, b"]), "\"a, b\"\r\n");
        assert_eq!(line(&["say \"hi\""]), "\"say \"\"hi\"\"\"\r\n");
        assert_eq!(line(&["one\ntwo", "x\ry"]), "\"one\ntwo\",\"x\ry\"\r\n");
        assert_eq!(line(&[" padded "]), "\" padded \"\r\n");
        assert_eq!(line(&["", "x"]), ",x\r\n");
    }

    #[test]
    fn the_subject_is_the_first_quoted_name() {
        assert_eq!(subject("`torch.lgamma(…)` runs `lgamma` on the CPU"), Some("torch.lgamma(…)"));
        assert_eq!(subject("no name here"), None);
        assert_eq!(subject("an open ` quote"), None);
        assert_eq!(subject("empty `` span"), None);
    }
}
