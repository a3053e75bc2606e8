//! Shell scripts as rules see them: environment variables, with their
//! assignments (`export X=v`, `X=v cmd`, `env X=v cmd`) and reads (`$X`,
//! `${X}`, `${X:-d}`), and simple commands (`nvidia-smi -L`,
//! `python -m torch.distributed.launch ...`).
//! Comments and single-quoted text are skipped; this is a scanner for launch
//! scripts, not a shell parser.

/// Where a shell text's comments are: each `#` that starts a word outside
/// quotes, to the end of its line (`$#`, `${#x}` and `a#b` start none).
/// Quotes are read one line at a time: an apostrophe in a heredoc's text
/// (`don't`) must not hide the comments of the lines after it.
#[derive(Debug, Clone, Default)]
pub struct Comments(Vec<std::ops::Range<usize>>);

impl Comments {
    /// Finds the comments of `text`.
    pub fn of(text: &str) -> Self {
        let b = text.as_bytes();
        let mut out = Vec::new();
        // The open quote, and whether a backslash escapes inside it.
        let mut quote: Option<(u8, bool)> = None;
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            match (quote, c) {
                (_, b'\n') => quote = None,
                // Outside quotes, in "..." and in $'...' a backslash escapes; in '...' nothing does.
                (None | Some((_, true)), b'\\') => i += 1,
                (Some((q, _)), c) if c == q => quote = None,
                (Some(_), _) => {}
                (None, b'\'') => quote = Some((c, i > 0 && b[i - 1] == b'$')),
                (None, b'"') => quote = Some((c, true)),
                (None, b'#') if i == 0 || matches!(b[i - 1], b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(') => {
                    let end = text[i..].find('\n').map_or(b.len(), |n| i + n);
                    out.push(i..end);
                    i = end;
                }
                _ => {}
            }
            i += 1;
        }
        Comments(out)
    }

    /// Whether byte `at` is inside a comment.
    pub fn contain(&self, at: usize) -> bool {
        let after = self.0.partition_point(|r| r.start <= at);
        after > 0 && self.0[after - 1].contains(&at)
    }

    /// `text` with every comment blanked out (same length, so byte offsets stay valid).
    pub fn blank(&self, text: &str) -> String {
        let mut out = text.to_string().into_bytes();
        for r in &self.0 {
            // A comment ends before a newline, and ASCII spaces keep the text UTF-8.
            out[r.clone()].fill(b' ');
        }
        String::from_utf8(out).unwrap_or_else(|_| text.to_string())
    }
}

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

/// One simple command of a shell script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellCommand {
    /// The command from its command word to its end, after leading
    /// assignments and wrappers (`env`, `sudo`, `exec`, `nohup`, `time`).
    pub text: String,
    /// Byte range of `text`.
    pub range: (usize, usize),
    /// The script allows for the command failing or missing: it tests the
    /// command (`if X`, `X || ...`, `! X`) or whether it exists
    /// (`command -v X`, `which X`, `type X`, `hash X`).
    pub guarded: bool,
    /// `text` with `$X` and `${X}` replaced by X's value, for the variables
    /// the script assigns exactly one literal value; None when none is read.
    pub expanded: Option<String>,
}

/// Words that run the next word as the command, or open a compound statement.
const PREFIXES: &[&str] = &["env", "sudo", "exec", "nohup", "time", "then", "do", "else", "{"];
/// Words that run a later word as the command after options of their own
/// (`taskset -c 0-23 python3 ...`, `numactl --cpunodebind=0 python ...`).
const PINNING: &[&str] = &["taskset", "numactl"];
/// Words whose command is tested, so its failure is expected.
const TESTS: &[&str] = &["if", "elif", "while", "until", "!"];
/// Commands that test whether their argument is an installed command.
const LOOKUPS: &[&str] = &["command", "which", "type", "hash"];

/// Every simple command in `text`, in order. Commands end at `;`, `&`, `|`,
/// `(`, `)`, a backquote and unescaped newlines; a comment ends a line. A
/// command substitution `$(...)` is a command of its own, and the command
/// around it goes on after it (`python t.py --addr=$(hostname -i) --x 1`).
pub fn commands(text: &str) -> Vec<ShellCommand> {
    let mut out = commands_within(text, 0);
    let values = literal_values(text);
    for cmd in &mut out {
        cmd.expanded = expand(&cmd.text, &values);
    }
    out
}

/// Command substitutions nested deeper than this are left as text: real
/// scripts nest a few levels, and the limit keeps the recursion shallow.
const MAX_NESTING: usize = 8;

/// The commands of `text`, a script or the inside of a substitution `depth` levels deep.
fn commands_within(text: &str, depth: usize) -> Vec<ShellCommand> {
    let b = text.as_bytes();
    // (start, end, separator before, separator after)
    let mut segments: Vec<(usize, usize, &str, &str)> = Vec::new();
    // The insides of command substitutions, read as scripts of their own.
    let mut substitutions: Vec<(usize, usize)> = Vec::new();
    let (mut start, mut before) = (0, "");
    let mut i = 0;
    let mut quote: Option<u8> = None;
    while i < b.len() {
        let c = b[i];
        if let Some(q) = quote {
            if c == b'\\' && q == b'"' {
                i += 1;
            } else if c == q {
                quote = None;
            }
            i += 1;
            continue;
        }
        let at_word = i == 0 || matches!(b[i - 1], b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(');
        let sep: Option<(&str, usize)> = match c {
            b'\\' => {
                i += 2;
                continue;
            }
            b'\'' | b'"' => {
                quote = Some(c);
                i += 1;
                continue;
            }
            b'#' if at_word => {
                let end = text[i..].find('\n').map_or(b.len(), |n| i + n);
                segments.push((start, i, before, "\n"));
                (start, before) = (end, "\n");
                i = end;
                continue;
            }
            b'|' if b.get(i + 1) == Some(&b'|') => Some(("||", 2)),
            b'&' if b.get(i + 1) == Some(&b'&') => Some(("&&", 2)),
            b'$' if b.get(i + 1) == Some(&b'(') => {
                let close = closing_paren(b, i + 1);
                // `$((...))` is arithmetic, not a command.
                if b.get(i + 2) != Some(&b'(') && depth < MAX_NESTING {
                    substitutions.push((i + 2, close));
                }
                i = close + 1;
                continue;
            }
            b';' | b'&' | b'|' | b'(' | b')' | b'`' | b'\n' => Some((&text[i..i + 1], 1)),
            _ => None,
        };
        match sep {
            Some((s, len)) => {
                segments.push((start, i, before, s));
                (start, before) = (i + len, s);
                i += len;
            }
            None => i += 1,
        }
    }
    segments.push((start, b.len(), before, ""));

    let mut out = Vec::new();
    let mut looked_up: Vec<&str> = Vec::new();
    for (start, end, before, after) in segments {
        let mut words = words_of(text, start, end);
        let mut guarded = before == "!" || after == "||";
        while let Some(&(w, _)) = words.first() {
            if PREFIXES.contains(&w) || is_assignment(w) {
                words.remove(0);
            } else if PINNING.contains(&w) {
                // Its options and their values (CPU lists, masks, node numbers) go with it.
                words.remove(0);
                while words.first().is_some_and(|(w, _)| is_pinning_argument(w)) {
                    words.remove(0);
                }
            } else if TESTS.contains(&w) {
                guarded = true;
                words.remove(0);
            } else {
                break;
            }
        }
        let Some(&(word, from)) = words.first() else { continue };
        if LOOKUPS.contains(&word) {
            looked_up.extend(words.iter().skip(1).map(|(w, _)| *w).filter(|w| !w.starts_with('-')));
        }
        let to = text[from..end].trim_end().len() + from;
        out.push(ShellCommand { text: text[from..to].to_string(), range: (from, to), guarded, expanded: None });
    }
    for cmd in &mut out {
        let word = cmd.text.split_whitespace().next().unwrap_or("");
        cmd.guarded |= looked_up.contains(&word);
    }
    for (from, to) in substitutions {
        out.extend(commands_within(&text[from..to], depth + 1).into_iter().map(|mut c| {
            c.range = (c.range.0 + from, c.range.1 + from);
            c
        }));
    }
    out.sort_by_key(|c| c.range.0);
    out
}

/// The index of the `)` that closes the `(` at `open` (or the end of `b`),
/// past nested parentheses and quoted text.
fn closing_paren(b: &[u8], open: usize) -> usize {
    let (mut depth, mut i, mut quote) = (0usize, open, None);
    while i < b.len() {
        match (quote, b[i]) {
            (_, b'\\') => i += 1,
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, c @ (b'\'' | b'"')) => quote = Some(c),
            (None, b'(') => depth += 1,
            (None, b')') => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
        i += 1;
    }
    b.len()
}

/// The variables `text` assigns, each with its value, where every
/// assignment gives the same literal value (no `$` or backquote in it).
fn literal_values(text: &str) -> std::collections::HashMap<String, String> {
    let mut values: std::collections::HashMap<String, Option<String>> = std::collections::HashMap::new();
    for m in env_mentions(text) {
        let Some(v) = m.value else { continue };
        let literal = (!v.contains(['$', '`'])).then_some(v);
        values
            .entry(m.name)
            .and_modify(|known| {
                if *known != literal {
                    *known = None;
                }
            })
            .or_insert(literal);
    }
    // `NAME+=more` appends: the value is no longer the one literal assigned.
    for (at, _) in text.match_indices("+=") {
        let b = text.as_bytes();
        let start = (0..at).rev().take_while(|&i| is_name_char(b[i])).last().unwrap_or(at);
        let word_start = start == 0 || matches!(b[start - 1], b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'(');
        if start < at && word_start && is_name_start(b[start]) {
            values.insert(text[start..at].to_string(), None);
        }
    }
    values.into_iter().filter_map(|(k, v)| Some((k, v?))).collect()
}

/// `command` with the reads of variables in `values` replaced by their
/// values (`$X`, `${X}`), or None if it reads none of them.
fn expand(command: &str, values: &std::collections::HashMap<String, String>) -> Option<String> {
    if values.is_empty() || !command.contains('$') {
        return None;
    }
    let b = command.as_bytes();
    let (mut out, mut copied, mut changed) = (String::new(), 0, false);
    for (i, _) in command.match_indices('$') {
        let braced = b.get(i + 1) == Some(&b'{');
        let start = i + 1 + usize::from(braced);
        let end = name_end(b, start);
        let closed = !braced || b.get(end) == Some(&b'}');
        if i < copied || end == start || !closed {
            continue;
        }
        if let Some(v) = values.get(&command[start..end]) {
            out.push_str(&command[copied..i]);
            out.push_str(v);
            copied = end + usize::from(braced);
            changed = true;
        }
    }
    changed.then(|| out + &command[copied..])
}

/// The unquoted words of `text[start..end]` with their offsets (quoted words are kept whole).
fn words_of(text: &str, start: usize, end: usize) -> Vec<(&str, usize)> {
    let mut words = Vec::new();
    let mut offset = start;
    for part in text[start..end].split([' ', '\t', '\n']) {
        if !part.is_empty() && part != "\\" {
            words.push((part, offset));
        }
        offset += part.len() + 1;
    }
    words
}

/// An option of `taskset`/`numactl` or its value: `-c`, `--membind=0`,
/// `0-23`, `0xff`, `$START-$END`.
fn is_pinning_argument(word: &str) -> bool {
    word.starts_with('-')
        || word.starts_with('$')
        || word.starts_with("0x")
        || word.chars().all(|c| c.is_ascii_digit() || matches!(c, ',' | '-'))
}

/// `NAME=value` as the first words of a command.
fn is_assignment(word: &str) -> bool {
    let b = word.as_bytes();
    let end = name_end(b, 0);
    end > 0 && b.get(end) == Some(&b'=')
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
    fn comments_start_a_word_outside_quotes() {
        let text = "a # one\necho $# ${#x} a#b '# no' \"# no\" \\# no $'it\\'s # no'\ncat <<EOT\ndon't\nEOT\nb;# two\n";
        let comments = Comments::of(text);
        let starts: Vec<usize> =
            (0..text.len()).filter(|&i| comments.contain(i) && !comments.contain(i.wrapping_sub(1))).collect();
        assert_eq!(starts, [text.find("# one").unwrap(), text.find("# two").unwrap()]);
        assert_eq!(comments.blank(text), text.replace("# one", "     ").replace("# two", "     "));
        assert!(!comments.contain(text.len()));
    }

    fn command_texts(t: &str) -> Vec<(String, bool)> {
        commands(t).into_iter().map(|c| (c.text, c.guarded)).collect()
    }

    #[test]
    fn commands_after_assignments_and_wrappers() {
        let got = command_texts(
            "#!/bin/bash\n# nvidia-smi in a comment\nexport A=1\nCUDA_VISIBLE_DEVICES=0 sudo python -m torch.distributed.launch \\\n  --nproc_per_node 8 train.py\necho \"$(nvidia-smi -L | wc -l)\"; nvidia-smi\nnohup taskset -c $S-$E python3 -u t.py &\nnumactl --cpunodebind=0 -m 0 python t.py\n",
        );
        let want: Vec<(String, bool)> = vec![
            ("export A=1".into(), false),
            ("python -m torch.distributed.launch \\\n  --nproc_per_node 8 train.py".into(), false),
            ("echo \"$(nvidia-smi -L | wc -l)\"".into(), false),
            ("nvidia-smi".into(), false),
            ("python3 -u t.py".into(), false),
            ("python t.py".into(), false),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn commands_whose_failure_is_allowed_for_are_guarded() {
        let got =
            command_texts("if command -v nvidia-smi >/dev/null; then\n  nvidia-smi\nfi\nfoo || true\n! bar\nbaz\n");
        let guarded: Vec<&str> = got.iter().filter(|(_, g)| *g).map(|(t, _)| t.as_str()).collect();
        assert_eq!(guarded, ["command -v nvidia-smi >/dev/null", "nvidia-smi", "foo", "bar"]);
        assert!(got.iter().any(|(t, g)| t == "baz" && !g));
        // An unterminated quote runs to the end; text that is not ASCII is cut on character boundaries.
        assert_eq!(command_texts("'x; y"), [("'x; y".to_string(), false)]);
        assert_eq!(command_texts("é; nvidia-smi"), [("é".to_string(), false), ("nvidia-smi".to_string(), false)]);
    }

    #[test]
    fn a_variable_appended_to_has_no_one_value() {
        let script = "CMD=\"python3 run.py \"\nCMD+=\"--do_train \"\n$CMD --local_rank=0\n";
        let run = commands(script).into_iter().find(|c| c.text.starts_with("$CMD")).unwrap();
        assert_eq!(run.expanded, None, "the appended options are not known: {run:?}");
    }

    #[test]
    fn commands_read_variables_with_one_literal_value() {
        let cmds = commands(
            "export DEVICE=npu\nB=x\nB=y\nR=$HOME\npython t.py --device=$DEVICE --b ${B} --r $R --n ${DEVICE}_1 $UNSET\n",
        );
        let run = cmds.iter().find(|c| c.text.starts_with("python")).unwrap();
        assert_eq!(run.expanded.as_deref(), Some("python t.py --device=npu --b ${B} --r $R --n npu_1 $UNSET"));
        // A command that reads no known variable keeps no second text.
        assert_eq!(commands("X=1\necho $Y\n").last().unwrap().expanded, None);
    }

    #[test]
    fn command_substitutions_are_commands_inside_the_command() {
        let got = command_texts(
            "python3 t.py \\\n  --addr=$(hostname -I | awk '{print $1}') \\\n  --b=hccl; n=$((1+(2)))\n$(nvidia-smi",
        );
        let want: Vec<(String, bool)> = vec![
            ("python3 t.py \\\n  --addr=$(hostname -I | awk '{print $1}') \\\n  --b=hccl".into(), false),
            ("hostname -I".into(), false),
            ("awk '{print $1}'".into(), false),
            // An unclosed substitution runs to the end; arithmetic is no command.
            ("$(nvidia-smi".into(), false),
            ("nvidia-smi".into(), false),
        ];
        assert_eq!(got, want);
    }

    #[test]
    fn deeply_nested_substitutions_stop_nesting() {
        let deep = "echo $(".repeat(100_000) + "nvidia-smi" + &")".repeat(100_000);
        let got = commands(&deep);
        assert!(got.len() <= MAX_NESTING + 1, "{} commands", got.len());
    }

    #[test]
    fn export_without_value_and_odd_input() {
        assert_eq!(names("export CUDA_LAUNCH_BLOCKING\n"), vec![("CUDA_LAUNCH_BLOCKING".into(), None)]);
        assert!(names("$ ${ '\"unterminated").is_empty());
    }
}
