use super::*;

fn names(t: &str) -> Vec<(String, Option<String>)> {
    read(t).mentions.into_iter().map(|m| (m.name, m.value)).collect()
}

fn commands(t: &str) -> Vec<ShellCommand> {
    read(t).commands
}

fn command_texts(t: &str) -> Vec<(String, bool)> {
    commands(t).into_iter().map(|c| (c.text, c.guarded)).collect()
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
    let mention = &read("env F=3 cmd\n").mentions[0];
    assert_eq!((mention.range, mention.value_range), ((4, 5), Some((6, 7))));
}

#[test]
fn comments_start_a_word_outside_quotes() {
    let text = "a # one\necho $# ${#x} a#b '# no' \"# no\" \\# no $'it\\'s # no'\ncat <<EOT\ndon't\nEOT\nb;# two\n";
    let comments = read(text).comments;
    let starts: Vec<usize> =
        (0..text.len()).filter(|&i| comments.contain(i) && !comments.contain(i.wrapping_sub(1))).collect();
    assert_eq!(starts, [text.find("# one").unwrap(), text.find("# two").unwrap()]);
    assert_eq!(comments.blank(text), text.replace("# one", "     ").replace("# two", "     "));
    assert!(!comments.contain(text.len()));
}

/// [`comment_may_cover`] decides without parsing; it may say yes where no
/// comment is, never no where one may hold a name (a lone `\r` ends no
/// comment line).
#[test]
fn a_comment_needs_a_hash_before_it_on_its_line() {
    let texts = [
        "a # one\npython x.py\n",
        "a #one\rpython x.py\r\n# two\r\nb",
        "echo '#'; run x.sh\n",
        "x.sh\n",
        // Recovery starts this comment at the `\` of the line before.
        "echo \"\\\n # c\\",
    ];
    for text in texts {
        let comments = read(text).comments;
        let in_name = |at: usize| !matches!(text.as_bytes()[at], b'\\' | b' ' | b'\t' | b'\r' | b'\n');
        for at in (0..text.len()).filter(|&at| comments.contain(at) && in_name(at)) {
            assert!(comment_may_cover(text, at, at + 1), "{text:?} at {at}");
        }
    }
    let recovered = texts[4];
    let starts = read(recovered).comments.ranges().into_iter().map(|r| r.0).collect::<Vec<_>>();
    assert_eq!(starts, [recovered.find('\\').unwrap()], "the comment starts at the `\\`");
    let text = texts[0];
    let name = text.find("x.py").unwrap();
    assert!(!comment_may_cover(text, name, name + 6), "no `#` on the name's line");
    assert!(comment_may_cover(text, 0, name), "a `#` on the first line");
    assert!(comment_may_cover(texts[2], texts[2].find("x.sh").unwrap(), 20), "a quoted `#` may be one");
    assert!(!comment_may_cover(texts[3], 0, 99), "past the end");
}

#[test]
fn a_quoted_line_that_starts_with_a_hash_is_no_comment() {
    // Issue 47, item 11 (b): the scanner read quotes one line at a time.
    let text = "echo \"usage:\n# on 8 NPUs\"; python3 train_8p.py --device npu\n";
    let script = read(text);
    assert!(!script.comments.contain(text.find("train_8p").unwrap()));
    assert!(script.commands.iter().any(|c| c.text.starts_with("python3 train_8p.py")), "{:?}", script.commands);
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
        // A substitution inside double quotes runs too.
        ("nvidia-smi -L".into(), false),
        ("wc -l".into(), false),
        ("nvidia-smi".into(), false),
        ("python3 -u t.py".into(), false),
        ("python t.py".into(), false),
    ];
    assert_eq!(got, want);
}

#[test]
fn more_wrappers_and_statements_hold_commands() {
    let got = command_texts(
        "timeout 2h nice -n 5 python a.py > log 2>&1 &\nenv -u X Y=1 stdbuf -oL python b.py\nf() { ( cd x && python c.py ); }\ncase $1 in\n  t) python d.py | tee log ;;\nesac\nfor i in 1 2; do python e.py; done\nsudo -E python f.py\n",
    );
    let texts: Vec<&str> = got.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(
        texts,
        [
            "python a.py > log 2>&1",
            "python b.py",
            "cd x",
            "python c.py",
            "python d.py",
            "tee log",
            "python e.py",
            "python f.py"
        ]
    );
}

#[test]
fn commands_whose_failure_is_allowed_for_are_guarded() {
    let got = command_texts(
        "if command -v nvidia-smi >/dev/null; then\n  nvidia-smi\nfi\nfoo || true\n! bar\nbaz\na && b || c\nwhile read l; do d; done\n",
    );
    let guarded: Vec<&str> = got.iter().filter(|(_, g)| *g).map(|(t, _)| t.as_str()).collect();
    assert_eq!(guarded, ["command -v nvidia-smi >/dev/null", "nvidia-smi", "foo", "bar", "b", "read l"]);
    assert!(got.iter().any(|(t, g)| t == "baz" && !g));
    // Text that is not ASCII is cut on character boundaries.
    assert_eq!(command_texts("é; nvidia-smi"), [("é".to_string(), false), ("nvidia-smi".to_string(), false)]);
}

#[test]
fn what_the_parser_cannot_read_is_unreadable() {
    let script = read("'x; y");
    assert!(!script.unreadable.is_empty(), "{script:?}");
    let script = read("python3 t.py\nif [ -d x ]; then\n  python3 u.py\n");
    assert!(!script.unreadable.is_empty(), "a missing `fi`: {script:?}");
    assert!(script.commands.iter().any(|c| c.text == "python3 u.py"), "{script:?}");
    // A `#` in a part the parser could not read is not taken for a comment.
    let text = "echo ) # python3 v.py\n";
    let script = read(text);
    assert!(!script.unreadable.is_empty(), "{script:?}");
    assert!(!script.comments.contain(text.find("v.py").unwrap()));
}

#[test]
fn a_variable_appended_to_has_no_one_value() {
    let script = "CMD=\"python3 run.py \"\nCMD+=\"--do_train \"\n$CMD --local_rank=0\n";
    let run = commands(script).into_iter().find(|c| c.text.starts_with("$CMD")).unwrap();
    assert_eq!(run.expanded, None, "the appended options are not known: {run:?}");
    let looped = commands("for D in npu cuda; do\n  python t.py --device $D\ndone\nD=npu\n");
    assert_eq!(looped[0].expanded, None, "a loop variable takes several values");
}

#[test]
fn commands_read_variables_with_one_literal_value() {
    let cmds = commands(
        "export DEVICE=npu\nB=x\nB=y\nR=$HOME\npython t.py --device=$DEVICE --b ${B} --r $R --n ${DEVICE}_1 $UNSET '$DEVICE'\n",
    );
    let run = cmds.iter().find(|c| c.text.starts_with("python")).unwrap();
    assert_eq!(run.expanded.as_deref(), Some("python t.py --device=npu --b ${B} --r $R --n npu_1 $UNSET '$DEVICE'"));
    assert_eq!(run.words()[2], "--device=npu");
    // A command that reads no known variable keeps no second text.
    assert_eq!(commands("X=1\necho $Y\n").last().unwrap().expanded, None);
}

#[test]
fn command_substitutions_are_commands_inside_the_command() {
    let got = command_texts(
        "python3 t.py \\\n  --addr=$(hostname -I | awk '{print $1}') \\\n  --b=hccl; n=$((1+(2)))\nx=`nvidia-smi -L`\n",
    );
    let want: Vec<(String, bool)> = vec![
        ("python3 t.py \\\n  --addr=$(hostname -I | awk '{print $1}') \\\n  --b=hccl".into(), false),
        ("hostname -I".into(), false),
        ("awk '{print $1}'".into(), false),
        ("nvidia-smi -L".into(), false),
    ];
    assert_eq!(got, want);
}

#[test]
fn the_script_of_sh_c_is_read_too() {
    let text = "sh -c \"cd ../legacy; bash run.sh\"\nbash -lc 'nvidia-smi # query'\n";
    let script = read(text);
    let texts: Vec<&str> = script.commands.iter().map(|c| c.text.as_str()).collect();
    assert_eq!(
        texts,
        [
            "sh -c \"cd ../legacy; bash run.sh\"",
            "cd ../legacy",
            "bash run.sh",
            "bash -lc 'nvidia-smi # query'",
            "nvidia-smi"
        ]
    );
    let cd = &script.commands[1];
    assert_eq!(&text[cd.range.0..cd.range.1], "cd ../legacy");
    assert!(script.comments.contain(text.find("query").unwrap()));
}

/// A quote the text never closes (bash stops there): the command is
/// read, and its script is never cut inside a character (this panicked).
#[test]
fn an_unclosed_quote_of_sh_c_cuts_no_character() {
    for text in ["bash -c \"run é\n", "bash -c 'run é\n", "sh -c \"é", "sh -c \"nvidia-smi é"] {
        let script = read(text);
        assert!(script.commands.first().is_some_and(|c| c.text.starts_with(&text[..4])), "{text:?}");
        for c in &script.commands {
            assert!(text.get(c.range.0..c.range.1).is_some(), "{text:?}: {:?}", c.range);
        }
    }
}

#[test]
fn deeply_nested_substitutions_stop_nesting() {
    let deep = "echo $(".repeat(100_000) + "nvidia-smi" + &")".repeat(100_000);
    let got = commands(&deep);
    assert!(got.len() <= MAX_NESTING + 1, "{} commands", got.len());
    let deep = "sh -c '".to_string() + &"sh -c \\'".repeat(50) + "nvidia-smi";
    let _ = read(&deep);
}

#[test]
fn words_are_split_as_the_shell_splits_them() {
    assert_eq!(split_words("python a.py \\\r\n  --d 'x y'"), ["python", "a.py", "--d", "x y"]);
    assert_eq!(unquoted("'a'\"b\"c"), "abc");
}

#[test]
fn export_without_value_and_odd_input() {
    assert_eq!(names("export CUDA_LAUNCH_BLOCKING\n"), vec![("CUDA_LAUNCH_BLOCKING".into(), None)]);
    assert!(names("$ ${ '\"unterminated").is_empty());
    assert_eq!(names("echo $1 $@ ${#} ${X##*/}\n"), vec![("X".into(), None)]);
}

#[test]
fn a_trailing_backslash_and_empty_backquotes_are_read() {
    for t in ["python3 train.py --epochs 1 \\\n", "stamp=``\npython3 train.py --epochs 1\n"] {
        let parsed = crate::parse::parse_bash(t).expect("a tree");
        assert!(parsed.root_node().has_error(), "tree-sitter-bash stumbles on {t:?}");
        let script = read(t);
        assert!(script.unreadable.is_empty(), "{t:?}: {script:?}");
    }
    let texts: Vec<String> =
        commands("stamp=``\npython3 train.py --epochs 1 \\\n").iter().map(|c| c.words().join(" ")).collect();
    assert_eq!(texts, ["python3 train.py --epochs 1"]);
}

#[test]
fn positional_parameters_of_a_run_without_arguments_are_empty() {
    let text = "if [[ $# == 1 && $1 == x ]]; then opt=$1; fi\nfor p in $*; do echo \"$p\"; done\n\
                python t.py --data \"$1\" ${2} $opt \"$@\" x$10 ${1:-def} \\$1 '$1' ${#name}\n";
    assert_eq!(
        without_positional_parameters(text),
        "if [[ 0 == 1 && \"\" == x ]]; then opt=\"\"; fi\nfor p in \"\"; do echo \"$p\"; done\n\
         python t.py --data \"\" \"\" $opt \"\" x\"\"0 ${1:-def} \\$1 '$1' ${#name}\n"
    );
}
