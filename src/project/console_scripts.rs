//! The commands a project installs, and the modules they run. A package's
//! `console_scripts` (setup.py, setup.cfg) or `[project.scripts]`
//! (pyproject.toml) turn `fairseq-train = fairseq_cli.train:cli_main` into
//! a command; launch scripts then start `fairseq-train`, never the file
//! `fairseq_cli/train.py`. Huawei's fairseq ports (Scaling-nmt, M2M-100,
//! Data2vec) train that way.

use std::collections::BTreeSet;
use std::path::Path;

/// One `name = module:function` declaration.
static DECLARATION: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r#"(?m)["']?([A-Za-z0-9][\w.-]*)["']?\s*=\s*["']?([A-Za-z_][\w.]*)\s*:\s*[A-Za-z_][\w.]*"#)
        .expect("a valid pattern")
});

/// The commands the packaging files in the project directory `dir` (as
/// displayed, `.` for the working directory) declare, each with the file
/// among `python` (display paths) whose module it runs; declarations whose
/// module is not a file of the project are left out.
pub(crate) fn of_project(dir: &str, python: &BTreeSet<String>) -> Vec<(String, String)> {
    let read = |name: &str| std::fs::read_to_string(Path::new(dir).join(name)).unwrap_or_default();
    let mut declared = Vec::new();
    // setup.py and setup.cfg: in the `console_scripts` list or section.
    for text in [read("setup.py"), read("setup.cfg")] {
        if let Some(at) = text.find("console_scripts") {
            declared.extend(declarations(section(&text[at..])));
        }
    }
    declared.extend(pyproject_scripts(&read("pyproject.toml")));
    declared.into_iter().filter_map(|(name, module)| Some((name, module_file(dir, &module, python)?))).collect()
}

/// `(command, module)` of each script pyproject.toml declares, in
/// `[project.scripts]` or Poetry's `[tool.poetry.scripts]`, read as TOML
/// (inline tables, dotted keys, spaced headers and multi-line strings
/// included). A file that is not TOML declares nothing: pip could not
/// install it either.
fn pyproject_scripts(text: &str) -> Vec<(String, String)> {
    let Ok(doc) = text.parse::<toml::Table>() else { return Vec::new() };
    let table =
        |path: &[&str]| path.iter().try_fold(&doc, |t, key| t.get(*key)?.as_table()).into_iter().flat_map(|t| t.iter());
    table(&["project", "scripts"])
        .chain(table(&["tool", "poetry", "scripts"]))
        .filter_map(|(name, target)| {
            // Poetry also allows `{ reference = "module:function", ... }`.
            let target = target.as_str().or_else(|| target.get("reference")?.as_str())?;
            let module = target.split(':').next()?.trim();
            Some((name.clone(), module.to_string()))
        })
        .collect()
}

/// The declarations up to the end of a list, a setup.cfg section or a TOML
/// table: a line that opens a section, or a `]` that a `,`, `)` or `}`
/// follows (the list's end, not an extra's `[gpu]` or the `]` of an
/// INI-style `[console_scripts]` header).
fn section(text: &str) -> &str {
    let closes_list = |at: &usize| {
        let next = text[at + 1..].trim_start().chars().next();
        next.is_none_or(|c| matches!(c, ',' | ')' | '}'))
    };
    let list_end = text.match_indices(']').map(|(at, _)| at).find(closes_list);
    let end = text.find("\n[").into_iter().chain(list_end).min().unwrap_or(text.len());
    &text[..end]
}

/// `(command, module)` of each declaration in `text`.
fn declarations(text: &str) -> Vec<(String, String)> {
    DECLARATION.captures_iter(text).map(|c| (c[1].to_string(), c[2].to_string())).collect()
}

/// The file of `module` in the project `dir`: `pkg/mod.py` or
/// `pkg/mod/__init__.py`, at the top or under `src/`.
fn module_file(dir: &str, module: &str, python: &BTreeSet<String>) -> Option<String> {
    let relative = module.replace('.', "/");
    let prefix = if dir == "." { String::new() } else { format!("{dir}/") };
    [format!("{relative}.py"), format!("{relative}/__init__.py")]
        .into_iter()
        .flat_map(|r| [format!("{prefix}{r}"), format!("{prefix}src/{r}")])
        .find(|candidate| python.contains(candidate))
}

/// Where `text`, a shell script, runs one of `commands` (as returned by
/// [`of_project`]): a simple command ([`crate::parse::shell::ShellCommand`], after
/// wrappers such as `nohup` and variable assignments) whose command word
/// is its name. The files those commands run.
pub(crate) fn started_in(text: &str, commands: &[(String, String)]) -> Vec<String> {
    if commands.is_empty() {
        return Vec::new();
    }
    let run = crate::parse::shell::read(text).commands;
    let words: BTreeSet<&str> = run.iter().filter_map(|c| c.text.split_whitespace().next()).collect();
    commands.iter().filter(|(name, _)| words.contains(name.as_str())).map(|(_, file)| file.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declarations_are_read_from_each_packaging_format() {
        let setup_py = "setup(\n  entry_points={\n    \"console_scripts\": [\n      \"fairseq-train = fairseq_cli.train:cli_main\",\n      'tool=pkg.tool:main',\n    ],\n  },\n  version='1.0',\n)\n";
        assert_eq!(
            declarations(section(&setup_py[setup_py.find("console_scripts").unwrap()..])),
            [("fairseq-train".into(), "fairseq_cli.train".into()), ("tool".into(), "pkg.tool".into())]
        );
        let extras = "\"console_scripts\": [\"prep = p.prep:main [gpu]\", \"go = p.go:main\"],\n";
        assert_eq!(declarations(section(extras)), [("prep".into(), "p.prep".into()), ("go".into(), "p.go".into())]);
        let ini =
            "entry_points=\"\"\"\n[console_scripts]\ntoy-train = toycli.cli:main\n[gui_scripts]\nv = a:b\n\"\"\",\n";
        let at = ini.find("console_scripts").unwrap();
        assert_eq!(declarations(section(&ini[at..])), [("toy-train".into(), "toycli.cli".into())]);
        let cfg = "[options.entry_points]\nconsole_scripts =\n    run-it = app.cli:main\n[flake8]\nx = a:b\n";
        assert_eq!(
            declarations(section(&cfg[cfg.find("console_scripts").unwrap()..])),
            [("run-it".into(), "app.cli".into())]
        );
    }

    #[test]
    fn pyproject_scripts_are_read_as_toml() {
        let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
        };
        let plain = "[project.scripts]\nyolo = \"ultralytics.cfg:entrypoint\"\n\n[tool.other]\nz = \"q:r\"\n";
        assert_eq!(pyproject_scripts(plain), pairs(&[("yolo", "ultralytics.cfg")]));
        // Forms a line scan missed: an inline table, dotted keys, a spaced
        // header, a multi-line string, a quoted key; and Poetry's table.
        let inline = "[project]\nname = \"x\"\nscripts = { go = \"app.go:main\" }\n";
        assert_eq!(pyproject_scripts(inline), pairs(&[("go", "app.go")]));
        let dotted = "[project]\nscripts.run = \"app.run:main\"\n";
        assert_eq!(pyproject_scripts(dotted), pairs(&[("run", "app.run")]));
        let spaced = "[ project.scripts ]\n\"my-tool\" = \"\"\"\npkg.tool:main\"\"\"\n";
        assert_eq!(pyproject_scripts(spaced), pairs(&[("my-tool", "pkg.tool")]));
        let poetry =
            "[tool.poetry.scripts]\nserve = \"srv.main:run\"\nref = { reference = \"r.m:f\", type = \"console\" }\n";
        assert_eq!(pyproject_scripts(poetry), pairs(&[("ref", "r.m"), ("serve", "srv.main")]));
        assert!(pyproject_scripts("[project.scripts\nbroken = ").is_empty(), "not TOML: nothing declared");
    }

    #[test]
    fn a_command_starts_its_module_only_where_a_command_starts() {
        let commands = vec![("fairseq-train".to_string(), "fairseq_cli/train.py".to_string())];
        let started = |text: &str| started_in(text, &commands).len();
        assert_eq!(started("nohup fairseq-train data-bin \\\n  --arch big > log 2>&1 &\n"), 1);
        assert_eq!(started("cd x && CUDA_VISIBLE_DEVICES=0 fairseq-train data\n"), 1);
        assert_eq!(started("echo use fairseq-train to train\n"), 0);
        assert_eq!(started("python3 train.py --tool fairseq-train\n"), 0);
    }
}
