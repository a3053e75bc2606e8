//! The API tables compiled into the binary match the fact files read from the
//! torch_npu wheels (`../shared/facts`), and the binary applies them as written.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

#[test]
#[ignore = "reads ../shared/facts, beside the development checkout only; .ci/run runs it with `cargo test -- --ignored`"]
fn embedded_tables_equal_the_fact_files() {
    let facts = Path::new(ROOT).join("../shared/facts");
    assert!(facts.is_dir(), "the fact files are expected at {} (shared/ beside the repository)", facts.display());
    for name in ["torch_npu_names.tsv", "torch_cuda_to_npu.tsv", "torch_npu_ops.tsv"] {
        let ours = read(&Path::new(ROOT).join("rules/data").join(name));
        let theirs = read(&facts.join(name));
        assert!(ours == theirs, "rules/data/{name} differs from ../shared/facts/{name}: copy it again");
    }
}

/// `(name, cells per version)` rows of the names table.
fn npu_names() -> Vec<(String, Vec<String>)> {
    read(&Path::new(ROOT).join("rules/data/torch_npu_names.tsv"))
        .lines()
        .filter(|l| !l.starts_with('#'))
        .skip(1)
        .map(|l| {
            let cells: Vec<String> = l.split('\t').map(str::to_string).collect();
            (cells[0].clone(), cells[1..].to_vec())
        })
        .collect()
}

/// Scans one generated file using every public name at `target`; returns (code, line) pairs.
fn scan_names(target: &str, names: &[String]) -> Vec<(String, String)> {
    let dir = common::temp_dir(&format!("facts-{target}"));
    let mut src = String::from("import torch\nimport torch_npu\n");
    for n in names {
        src.push_str(&format!("x = torch.npu.{n}\n"));
    }
    std::fs::write(dir.join("uses.py"), &src).unwrap();
    let run =
        common::npu_mem_in(&dir, &["scan", "uses.py", "--format", "json", "--fail-on", "never", "--target", target]);
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let line = f["line"].as_u64().unwrap() as usize;
            (f["code"].as_str().unwrap().to_string(), names[line - 3].clone())
        })
        .collect()
}

#[test]
fn every_name_is_judged_by_the_table_for_each_target() {
    let rows: Vec<(String, Vec<String>)> = npu_names().into_iter().filter(|(n, _)| !n.starts_with('_')).collect();
    let names: Vec<String> = rows.iter().map(|(n, _)| n.clone()).collect();
    for (column, target) in [(0, "2.1"), (1, "2.6"), (2, "2.14")] {
        let found = scan_names(target, &names);
        let flagged: BTreeSet<String> = found.iter().filter(|(c, _)| c == "API004").map(|(_, n)| n.clone()).collect();
        let missing: BTreeSet<String> =
            rows.iter().filter(|(_, cells)| cells[column] == "-").map(|(n, _)| n.clone()).collect();
        assert_eq!(flagged, missing, "API004 at target {target} must flag exactly the names absent from that column");
        assert!(!found.iter().any(|(c, _)| c == "API003"), "no real name is unknown: {found:?}");
    }
}

#[test]
fn set_memory_strategy_does_not_exist() {
    let dir = common::temp_dir("sms");
    let text = "import torch\nimport torch_npu\ntorch.npu.set_memory_strategy('auto')\ntorch.npu.set_devcie(0)\n";
    std::fs::write(dir.join("tune.py"), text).unwrap();
    let run = common::npu_mem_in(&dir, &["scan", "tune.py", "--format", "concise"]);
    let line =
        |n: &str| run.stdout.lines().find(|l| l.starts_with(&format!("tune.py:{n}:1: API003 [error]"))).unwrap_or("");
    // No real name is near set_memory_strategy: naming the nearest would mislead.
    assert!(
        line("3")
            .ends_with("`torch.npu.set_memory_strategy` does not exist in any torch_npu release (2.1, 2.6 or 2.14)."),
        "{}",
        run.stdout
    );
    // A typo is one or two edits from what was meant.
    assert!(line("4").ends_with("the closest real name is `torch.npu.set_device`."), "{}", run.stdout);
}

/// Every torch_npu operator that rules/data/torchvision_ops_on_npu.tsv names as a
/// counterpart (API011's advice) exists in every torch_npu version of the ops
/// table, so the advice holds for each `--target`.
#[test]
fn vision_op_counterparts_exist_in_every_target() {
    let ops = read(&Path::new(ROOT).join("rules/data/torch_npu_ops.tsv"));
    let present: BTreeSet<&str> = ops
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('\t').collect();
            (cells.len() == 5 && cells[2..].iter().all(|c| *c == "yes")).then_some(cells[0])
        })
        .collect();
    let vision = read(&Path::new(ROOT).join("rules/data/torchvision_ops_on_npu.tsv"));
    let mut named = 0;
    for row in vision.lines().filter(|l| !l.starts_with('#')).skip(1) {
        let cells: Vec<&str> = row.split('\t').collect();
        assert_eq!(cells.len(), 5, "row `{row}` should have 5 cells");
        let npu_op = cells[3];
        if npu_op != "-" {
            named += 1;
            assert!(
                present.contains(npu_op),
                "`{npu_op}` (for `{}`) is not present in all torch_npu versions",
                cells[0]
            );
            assert!(cells[4].contains(npu_op), "the remedy for `{}` should name `{npu_op}`", cells[0]);
        }
    }
    assert!(named >= 3, "expected the table to name torch_npu counterparts, found {named}");
}

/// The version columns of the operator-support tables, in order.
const NPU_VERSIONS: [&str; 3] = ["2.1.0.post17", "2.6.0.post5", "2.14.0"];

/// `(header, rows)` of a generated table under rules/data, split on tabs.
fn table(name: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let text = read(&Path::new(ROOT).join("rules/data").join(name));
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    let header: Vec<String> = lines.next().unwrap_or("").split('\t').map(str::to_string).collect();
    let rows: Vec<Vec<String>> = lines.map(|l| l.split('\t').map(str::to_string).collect()).collect();
    for row in &rows {
        assert_eq!(row.len(), header.len(), "{name}: row {row:?} does not match header {header:?}");
    }
    (header, rows)
}

/// Rows of a table by key (first column), with each version column's cell.
fn verdicts(name: &str) -> std::collections::BTreeMap<String, Vec<String>> {
    let (header, rows) = table(name);
    let columns: Vec<usize> = NPU_VERSIONS
        .iter()
        .map(|v| header.iter().position(|h| h == v).unwrap_or_else(|| panic!("{name} has no column {v}")))
        .collect();
    rows.into_iter().map(|r| (r[0].clone(), columns.iter().map(|&c| r[c].clone()).collect())).collect()
}

/// The aten table and its per-overload detail agree: a name is `kernel` only when
/// none of its overloads is an NPU-less functional call, `fallback` only when no
/// overload has an NPU kernel, and `-` exactly when no overload exists.
#[test]
fn aten_op_verdicts_agree_with_their_overloads() {
    let names = verdicts("aten_ops_on_npu.tsv");
    let overloads = verdicts("aten_overloads_on_npu.tsv");
    assert!(names.len() > 900, "expected the whole operator surface, found {} names", names.len());
    let vocabulary = ["kernel", "fallback", "partial", "composite", "implicit", "nondense", "-"];
    for (name, cells) in &names {
        for (column, cell) in cells.iter().enumerate() {
            assert!(vocabulary.contains(&cell.as_str()), "{name}: unknown verdict `{cell}`");
            let own: Vec<(&String, &String)> = overloads
                .iter()
                .filter(|(o, _)| o.split('.').next() == Some(name.as_str()))
                .map(|(o, v)| (o, &v[column]))
                .filter(|(_, v)| v.as_str() != "-")
                .collect();
            match cell.as_str() {
                "-" => {
                    assert!(own.is_empty(), "{name} is absent at {} but has overloads {own:?}", NPU_VERSIONS[column])
                }
                "fallback" => assert!(
                    own.iter().any(|(_, v)| *v == "fallback") && !own.iter().any(|(_, v)| *v == "kernel"),
                    "{name} falls back at {} but its overloads say {own:?}",
                    NPU_VERSIONS[column]
                ),
                "kernel" => assert!(
                    own.iter().any(|(_, v)| *v == "kernel") || own.iter().all(|(_, v)| *v != "fallback"),
                    "{name} has a kernel at {} but its overloads say {own:?}",
                    NPU_VERSIONS[column]
                ),
                _ => {}
            }
        }
    }
}

/// The operators issue 45 names, as the wheels decide them (each was checked by hand
/// against npu_native_functions_by_codegen.yaml and libtorch_npu.so).
#[test]
fn the_issue_operators_have_the_verdicts_read_from_the_wheels() {
    let names = verdicts("aten_ops_on_npu.tsv");
    let at = |op: &str| names.get(op).unwrap_or_else(|| panic!("{op} is missing from aten_ops_on_npu.tsv")).clone();
    for op in ["linalg_cholesky_ex", "_standard_gamma", "lgamma", "digamma", "heaviside", "mode", "_linalg_eigh"] {
        assert_eq!(at(op), ["fallback"; 3], "{op}");
    }
    for op in ["cdist", "grid_sampler_2d", "max_pool2d_with_indices", "topk", "sort", "unique_consecutive", "_fft_r2c"]
    {
        assert_eq!(at(op), ["kernel"; 3], "{op}");
    }
    // torch_npu 2.14 registers linalg_cholesky itself; 2.1 and 2.6 decompose it.
    assert_eq!(at("linalg_cholesky"), ["implicit", "implicit", "kernel"]);
}

/// Every operator the API table names is a row of the aten table, every verdict
/// cell is in the vocabulary, and a `fallback` API names the operators that fall back.
#[test]
fn api_rows_name_known_operators_and_their_fallbacks() {
    let names = verdicts("aten_ops_on_npu.tsv");
    let (header, rows) = table("torch_api_ops.tsv");
    assert_eq!(header[..3], ["api", "kind", "ops"]);
    let fallback_column = header.iter().position(|h| h == "fallback_ops").unwrap();
    for row in &rows {
        for op in row[2].split(' ') {
            assert!(names.contains_key(op), "{}: operator {op} is no row of aten_ops_on_npu.tsv", row[0]);
        }
        for cell in &row[3..6] {
            assert!(
                ["kernel", "fallback", "partial", "composite", "implicit", "-"].contains(&cell.as_str()),
                "{row:?}"
            );
        }
        if row[3..6].iter().any(|c| c == "fallback") {
            assert_ne!(row[fallback_column], "-", "{}: a fallback verdict must name its operators", row[0]);
        }
    }
    let find = |api: &str| rows.iter().find(|r| r[0] == api).unwrap_or_else(|| panic!("{api} is not listed"));
    assert_eq!(find("torch.linalg.cholesky")[3..6], ["fallback", "fallback", "kernel"]);
    assert_eq!(find("torch.nn.MaxPool2d")[3..6], ["kernel", "kernel", "kernel"]);
    assert!(find("torch.distributions.Gamma.rsample")[fallback_column].contains("_standard_gamma"));
}

/// The rule-facing fallback table is the API table's `fallback_ops` narrowed to
/// operators that fall back whatever the arguments: each cell's operators are
/// `fallback` in the aten table and named by `fallback_ops` at that version, and
/// the least certain verdicts (out= kernel registered, no registration string)
/// stay out.
#[test]
fn certain_fallbacks_narrow_the_api_table() {
    let names = verdicts("aten_ops_on_npu.tsv");
    let (api_header, api_rows) = table("torch_api_ops.tsv");
    let fallback_column = api_header.iter().position(|h| h == "fallback_ops").unwrap();
    let certain = verdicts("npu_cpu_fallbacks.tsv");
    assert!(!certain.is_empty());
    for (api, cells) in &certain {
        let row = api_rows.iter().find(|r| &r[0] == api).unwrap_or_else(|| panic!("{api} is no row of torch_api_ops"));
        for (i, cell) in cells.iter().enumerate().filter(|(_, c)| *c != "-") {
            let named = row[fallback_column]
                .split("; ")
                .find_map(|part| part.strip_prefix(&format!("{}: ", NPU_VERSIONS[i])))
                .unwrap_or_else(|| panic!("{api}: no fallback_ops at {}", NPU_VERSIONS[i]));
            for op in cell.split(' ') {
                assert!(named.split(' ').any(|n| n == op), "{api}: {op} is not in fallback_ops at {}", NPU_VERSIONS[i]);
                assert_eq!(names[op][i], "fallback", "{api}: {op} at {}", NPU_VERSIONS[i]);
            }
        }
    }
    assert_eq!(certain["torch.distributions.MultivariateNormal"], ["linalg_cholesky_ex", "linalg_cholesky_ex", "-"]);
    assert_eq!(certain["torch.lgamma"], ["lgamma"; 3]);
    for uncertain in ["Tensor.index_add_", "Tensor.cumsum_", "Tensor.bitwise_or_", "Tensor.scatter_", "torch.cumprod"] {
        assert!(!certain.contains_key(uncertain), "{uncertain} falls back only by the least certain verdict");
    }
}

/// The remaining tables have their documented shape.
#[test]
fn huawei_and_hccl_tables_have_their_columns() {
    let (header, rows) = table("unsupported_apis.tsv");
    assert_eq!(header[0], "api");
    assert!(rows.iter().any(|r| r[0] == "torch.nn.DataParallel"), "DataParallel is in Huawei's 2.1 list");
    let (header, rows) = table("op_dtype_limits.tsv");
    assert_eq!(header[..4], ["api", "list_2_6", "list_2_7", "list_2_8"]);
    assert!(!rows.is_empty());
    let hccl = verdicts("hccl_dtypes.tsv");
    assert_eq!(hccl["dtype:torch.bool"], ["HCCL_DATA_TYPE_UINT8"; 3]);
    assert!(!hccl["collective:allreduce"][0].contains("float64"), "allreduce refuses float64 at 2.1");
}
