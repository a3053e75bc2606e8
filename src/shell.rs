//! Environment variables in shell scripts: assignments (`export X=v`,
//! `X=v cmd`, `env X=v cmd`) and reads (`$X`, `${X}`, `${X:-d}`).
//! Comments and single-quoted text are skipped; this is a scanner for launch
//! scripts, not a shell parser.

/// One mention of an environment variable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvMention {
    /// The variable name.
    pub name: String,
    /// Byte range of the name.
    pub range: (usize, usize),
    /// The assigned value, for assignments (quotes removed).
    pub value: Option<String>,
    /// Byte range of the value as written, for assignments.
    pub value_range: Option<(usize, usize)>,
}

fn is_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_name_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Every assignment and read of a variable in `text`, in order.
pub fn env_mentions(text: &str) -> Vec<EnvMention> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut in_double = false;
    while i < b.len() {
        let c = b[i];
        let word_start = i == 0 || matches!(b[i - 1], b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(' | b'`');
        match c {
            b'\\' => i += 2,
            b'\'' if !in_double => {
                i += 1;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
                i += 1;
            }
            b'"' => {
                in_double = !in_double;
                i += 1;
            }
            b'#' if !in_double && word_start => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'$' => {
                let (start, braced) = if b.get(i + 1) == Some(&b'{') { (i + 2, true) } else { (i + 1, false) };
                let end = name_end(b, start);
                if end > start
                    && (!braced || b.get(end).is_some_and(|x| matches!(x, b'}' | b':' | b'-' | b'=' | b'+' | b'?')))
                {
                    out.push(EnvMention {
                        name: text[start..end].to_string(),
                        range: (start, end),
                        value: None,
                        value_range: None,
                    });
                }
                i = end.max(i + 1);
            }
            _ if !in_double && word_start && is_name_start(c) => {
                let end = name_end(b, i);
                if b.get(end) == Some(&b'=') {
                    let (value, value_end) = read_value(text, end + 1);
                    out.push(EnvMention {
                        name: text[i..end].to_string(),
                        range: (i, end),
                        value: Some(value),
                        value_range: Some((end + 1, value_end)),
                    });
                    i = end + 1;
                } else if &text[i..end] == "export" || &text[i..end] == "unset" {
                    // `export X` without a value still names X for the environment.
                    let mut j = end;
                    while j < b.len() && matches!(b[j], b' ' | b'\t') {
                        j += 1;
                    }
                    let k = name_end(b, j);
                    if k > j && b.get(k) != Some(&b'=') && &text[i..end] == "export" {
                        out.push(EnvMention {
                            name: text[j..k].to_string(),
                            range: (j, k),
                            value: None,
                            value_range: None,
                        });
                    }
                    i = j.max(end);
                } else {
                    i = end;
                }
            }
            _ => i += 1,
        }
    }
    out
}

fn name_end(b: &[u8], start: usize) -> usize {
    if start >= b.len() || !is_name_start(b[start]) {
        return start;
    }
    let mut end = start;
    while end < b.len() && is_name_char(b[end]) {
        end += 1;
    }
    end
}

/// The value after `NAME=`, with one level of quotes removed, and where it ends.
fn read_value(text: &str, start: usize) -> (String, usize) {
    let b = text.as_bytes();
    let mut out = String::new();
    let mut i = start;
    let mut quote: Option<u8> = None;
    while i < b.len() {
        let c = b[i];
        match (quote, c) {
            (None, b' ' | b'\t' | b'\n' | b';' | b'&' | b'|') => break,
            (None, b'"' | b'\'') => quote = Some(c),
            (Some(q), _) if c == q => quote = None,
            _ => {
                let ch_len = text[i..].chars().next().map_or(1, char::len_utf8);
                out.push_str(&text[i..i + ch_len]);
                i += ch_len;
                continue;
            }
        }
        i += 1;
    }
    (out, i.min(b.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(t: &str) -> Vec<(String, Option<String>)> {
        env_mentions(t).into_iter().map(|m| (m.name, m.value)).collect()
    }

    #[test]
    fn assignments_reads_and_comments() {
        let got = names(
            "# CUDA_VISIBLE_DEVICES=9\nexport A=1\nB=\"x y\" python t.py --n ${C:-2}\necho '$D' \"$E\"\nenv F=3 cmd\n",
        );
        let want: Vec<(String, Option<String>)> = vec![
            ("A".into(), Some("1".into())),
            ("B".into(), Some("x y".into())),
            ("C".into(), None),
            ("E".into(), None),
            ("F".into(), Some("3".into())),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn export_without_value_and_odd_input() {
        assert_eq!(names("export CUDA_LAUNCH_BLOCKING\n"), vec![("CUDA_LAUNCH_BLOCKING".into(), None)]);
        assert!(names("$ ${ '\"unterminated").is_empty());
    }
}
